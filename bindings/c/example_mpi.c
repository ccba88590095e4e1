/* SPDX-License-Identifier: Apache-2.0 */
/* An xfer buffer sent between two MPI ranks, its bytes checked on arrival.
 * Rank 0 fills its buffer's device view (host view, then xfer_copy to the device) and sends it
 * to rank 1, which receives it into its own buffer's device view and copies it back to check.
 * The device view goes to MPI directly when the MPI is CUDA-aware (MPIX_Query_cuda_support says
 * so at run time) and the backend's device memory is CUDA memory; otherwise (Debian's Open MPI,
 * or the host backend) it travels through the host view: D2H, MPI_Send, MPI_Recv, H2D.
 * MPI is not stream-ordered: each side synchronises its xfer copies before the MPI call.
 * The backend comes from XFER_BACKEND / XFER_CONFIG (xfer_open(NULL, -1, ...)).
 * Usage: mpirun -np 2 example_mpi [bytes]    Exit status 0 on every rank when the bytes arrived. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif

#include <xfer/xfer.h>

static int fail(int rank, const char *what, xfer_status st) {
    fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, xfer_status_string(st), xfer_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

static unsigned char pattern(size_t i) { return (unsigned char)(i * 131u + 7u); }

/* 1 when MPI may be handed CUDA device pointers. */
static int mpi_is_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

int main(int argc, char **argv) {
    int rank = 0, ranks = 0, device_path = 0;
    size_t bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)4 << 20;
    size_t i, bad = 0;
    xfer_context ctx;
    xfer_context_info info;
    xfer_buffer buf;
    unsigned char *host;
    xfer_status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks != 2) {
        if (rank == 0) fprintf(stderr, "example_mpi: run it on 2 ranks (mpirun -np 2), not %d\n", ranks);
        MPI_Finalize();
        return 2;
    }
    if ((st = xfer_open(NULL, -1, &ctx)) != XFER_SUCCESS) return fail(rank, "xfer_open", st);
    if ((st = xfer_context_get_info(ctx, &info)) != XFER_SUCCESS) return fail(rank, "xfer_context_get_info", st);
    if ((st = xfer_alloc(ctx, bytes, XFER_ALLOC_DEFAULT, &buf)) != XFER_SUCCESS) return fail(rank, "xfer_alloc", st);
    host = (unsigned char *)xfer_host_ptr(buf);
    /* Both ranks decide alike: the device view only where every rank can hand it to MPI. */
    device_path = info.device_kind == XFER_DEVICE_KIND_CUDA && mpi_is_cuda_aware();
    MPI_Allreduce(MPI_IN_PLACE, &device_path, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    if (rank == 0) {
        for (i = 0; i < bytes; ++i) host[i] = pattern(i);
        if ((st = xfer_copy(buf, XFER_TO_DEVICE, 0, bytes)) != XFER_SUCCESS) return fail(rank, "to device", st);
        if (!device_path) {
            /* The device view's bytes come back to the host view to travel. */
            if (!(info.caps & XFER_CAP_SHARED_VIEW)) memset(host, 0, bytes);
            if ((st = xfer_copy(buf, XFER_TO_HOST, 0, bytes)) != XFER_SUCCESS) return fail(rank, "to host", st);
        }
        MPI_Send(device_path ? xfer_device_ptr(buf) : host, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    } else {
        memset(host, 0, bytes);
        MPI_Recv(device_path ? xfer_device_ptr(buf) : host, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (!device_path) {
            if ((st = xfer_copy(buf, XFER_TO_DEVICE, 0, bytes)) != XFER_SUCCESS) return fail(rank, "to device", st);
            if (!(info.caps & XFER_CAP_SHARED_VIEW)) memset(host, 0, bytes);
        }
        if ((st = xfer_copy(buf, XFER_TO_HOST, 0, bytes)) != XFER_SUCCESS) return fail(rank, "to host", st);
        for (i = 0; i < bytes; ++i) bad += host[i] != pattern(i);
        printf("example_mpi: %zu bytes from rank 0 to rank 1 through the %s view on backend %s: %s\n", bytes,
               device_path ? "device" : "host", info.backend, bad == 0 ? "verified" : "CORRUPTED");
    }
    MPI_Bcast(&bad, sizeof bad, MPI_BYTE, 1, MPI_COMM_WORLD);
    xfer_free(buf);
    xfer_close(ctx);
    MPI_Finalize();
    return bad == 0 ? 0 : 1;
}
