/* SPDX-License-Identifier: Apache-2.0 */
/* xfer buffers handed to NCCL, their bytes checked on arrival.
 * Two XFER_ALLOC_SHAREABLE buffers: their device views are cuMemCreate memory with a POSIX file
 * descriptor handle at the recommended granularity, what ncclCommRegister registers zero-copy.
 * One process, one GPU (a communicator of one rank: NCCL puts one rank on a GPU), NCCL's calls
 * queued on an xfer stream (xfer_stream_native): the source filled through its host view and
 * xfer_copy'd to the device, ncclSend / ncclRecv from its device view to the other buffer's,
 * then an in-place ncclAllReduce (a sum over one rank leaves the bytes as they are), the result
 * copied back through xfer and compared.
 * The backend comes from XFER_BACKEND / XFER_CONFIG (pinned or pageable: the ones that export).
 * Usage: example_nccl [bytes]    Exit status 0 and "verified" when every byte arrived. */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

static int xfer_failed(const char *what, xfer_status st) {
    fprintf(stderr, "example_nccl: %s: %s: %s\n", what, xfer_status_string(st), xfer_last_error());
    return 1;
}

static int nccl_failed(const char *what, ncclResult_t r) {
    fprintf(stderr, "example_nccl: %s: %s\n", what, ncclGetErrorString(r));
    return 1;
}

static unsigned char pattern(size_t i) { return (unsigned char)(i * 131u + 7u); }

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)32 << 20;
    size_t i, bad = 0;
    int device = 0;
    xfer_context ctx;
    xfer_context_info info;
    xfer_buffer src, dst;
    xfer_stream stream;
    xfer_share_info share;
    ncclComm_t comm;
    void *src_handle = NULL, *dst_handle = NULL;
    cudaStream_t native;
    unsigned char *host;
    xfer_status st;
    ncclResult_t r;

    if ((st = xfer_open(NULL, -1, &ctx)) != XFER_SUCCESS) return xfer_failed("xfer_open", st);
    if ((st = xfer_context_get_info(ctx, &info)) != XFER_SUCCESS) return xfer_failed("xfer_context_get_info", st);
    device = info.device;
    if ((st = xfer_alloc(ctx, bytes, XFER_ALLOC_SHAREABLE, &src)) != XFER_SUCCESS) return xfer_failed("xfer_alloc", st);
    if ((st = xfer_alloc(ctx, bytes, XFER_ALLOC_SHAREABLE, &dst)) != XFER_SUCCESS) return xfer_failed("xfer_alloc", st);
    memset(&share, 0, sizeof share);
    share.struct_size = sizeof share;
    if ((st = xfer_buffer_get_share_info(src, &share)) != XFER_SUCCESS)
        return xfer_failed("xfer_buffer_get_share_info", st);
    printf("backend %s, device %d: device view %s, handles 0x%x, granularity %zu, RDMA capable %d\n", info.backend,
           device, share.device_memory_kind, share.handle_types, share.granularity, share.rdma_capable);
    if ((st = xfer_stream_create(ctx, &stream)) != XFER_SUCCESS) return xfer_failed("xfer_stream_create", st);
    native = (cudaStream_t)xfer_stream_native(stream);

    if ((r = ncclCommInitAll(&comm, 1, &device)) != ncclSuccess) return nccl_failed("ncclCommInitAll", r);
    if ((r = ncclCommRegister(comm, xfer_device_ptr(src), bytes, &src_handle)) != ncclSuccess)
        return nccl_failed("ncclCommRegister(source)", r);
    if ((r = ncclCommRegister(comm, xfer_device_ptr(dst), bytes, &dst_handle)) != ncclSuccess)
        return nccl_failed("ncclCommRegister(destination)", r);

    host = (unsigned char *)xfer_host_ptr(src);
    for (i = 0; i < bytes; ++i) host[i] = pattern(i);
    if ((st = xfer_copy_async(src, XFER_TO_DEVICE, 0, bytes, stream)) != XFER_SUCCESS)
        return xfer_failed("xfer_copy_async", st);
    /* Stream order joins them: NCCL's work waits for xfer's copy, xfer's copy back for NCCL's. */
    if ((r = ncclGroupStart()) != ncclSuccess) return nccl_failed("ncclGroupStart", r);
    if ((r = ncclSend(xfer_device_ptr(src), bytes, ncclUint8, 0, comm, native)) != ncclSuccess)
        return nccl_failed("ncclSend", r);
    if ((r = ncclRecv(xfer_device_ptr(dst), bytes, ncclUint8, 0, comm, native)) != ncclSuccess)
        return nccl_failed("ncclRecv", r);
    if ((r = ncclGroupEnd()) != ncclSuccess) return nccl_failed("ncclGroupEnd", r);
    if ((r = ncclAllReduce(xfer_device_ptr(dst), xfer_device_ptr(dst), bytes, ncclUint8, ncclSum, comm, native)) !=
        ncclSuccess)
        return nccl_failed("ncclAllReduce", r);
    memset(xfer_host_ptr(dst), 0, bytes);
    if ((st = xfer_copy_async(dst, XFER_TO_HOST, 0, bytes, stream)) != XFER_SUCCESS)
        return xfer_failed("xfer_copy_async", st);
    if ((st = xfer_stream_synchronize(stream)) != XFER_SUCCESS) return xfer_failed("xfer_stream_synchronize", st);
    host = (unsigned char *)xfer_host_ptr(dst);
    for (i = 0; i < bytes; ++i) bad += host[i] != pattern(i);

    if ((r = ncclCommDeregister(comm, src_handle)) != ncclSuccess) return nccl_failed("ncclCommDeregister", r);
    if ((r = ncclCommDeregister(comm, dst_handle)) != ncclSuccess) return nccl_failed("ncclCommDeregister", r);
    if ((r = ncclCommDestroy(comm)) != ncclSuccess) return nccl_failed("ncclCommDestroy", r);
    if ((st = xfer_close(ctx)) != XFER_SUCCESS) return xfer_failed("xfer_close", st);
    if (bad != 0) {
        fprintf(stderr, "example_nccl: %zu of %zu bytes differ after ncclSend/ncclRecv and ncclAllReduce\n", bad,
                bytes);
        return 1;
    }
    printf("example_nccl: %zu bytes verified (xfer_copy, ncclSend/ncclRecv, ncclAllReduce, xfer_copy)\n", bytes);
    return 0;
}
