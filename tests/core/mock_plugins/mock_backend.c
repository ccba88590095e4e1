/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A mock backend built as real shared libraries in several variants (see CMakeLists.txt),
 * so that every path of the core's plugin loader and dispatcher is tested without a GPU:
 *   MOCK_NAME            table name (must match the file name, unless MOCK_TABLE_NAME differs)
 *   MOCK_FULL            implement the optional entries too (else they stay NULL)
 *   MOCK_ABI_MAJOR/MINOR the ABI version the table claims
 *   MOCK_STRUCT_SIZE     the table size it claims
 *   MOCK_NO_ENTRY        export no entry point
 *   MOCK_PROBE_FAILS     probe fails with XFER_ERROR_NO_DEVICE and a reason
 *   MOCK_NULL_REQUIRED   leave the required context_create entry NULL
 *   MOCK_DEVICE_COUNT    devices probe reports
 *   MOCK_UNRESOLVED      probe calls a function no library defines (linked without --no-undefined)
 *   MOCK_REGISTER        with MOCK_FULL: the registration entries of plugin ABI 1.1 too
 *   MOCK_MARK_LOADED     its constructor sets XFER_MOCK_LOADED_<MOCK_NAME>=1 in the environment
 *   MOCK_ENDS_PROCESS    1: its constructor calls abort(); 2: its constructor calls exit(3);
 *                        3: its entry point raises SIGSEGV (the core must survive all three)
 *   MOCK_PEER            with MOCK_FULL: the peer-copy entries of plugin ABI 1.2 too (and NULL
 *                        registration entries unless MOCK_REGISTER)
 *   MOCK_PATHS           with MOCK_FULL: reports the path of every copy (plugin ABI 1.4): buffer
 *                        copies pinned_dma; raw copies below 4 MiB driver_pageable (below the
 *                        crossover), from 4 MiB two pieces, the first half staged and the second
 *                        half driver_pageable (no faster path: slow); registrations noted
 * Memory is plain host memory; work runs synchronously, which keeps stream order trivially.
 * xfer_mock_live_objects() and xfer_mock_calls() let tests check that the core releases
 * everything and validates arguments before it calls a backend.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xfer/xfer_backend.h>

#ifndef MOCK_NAME
#define MOCK_NAME "mock"
#endif
#ifndef MOCK_TABLE_NAME
#define MOCK_TABLE_NAME MOCK_NAME
#endif
#ifndef MOCK_ABI_MAJOR
#define MOCK_ABI_MAJOR XFER_BACKEND_ABI_MAJOR
#endif
#ifndef MOCK_ABI_MINOR
#define MOCK_ABI_MINOR XFER_BACKEND_ABI_MINOR
#endif
#ifndef MOCK_STRUCT_SIZE
#define MOCK_STRUCT_SIZE sizeof(xfer_backend_table)
#endif
#ifndef MOCK_DEVICE_COUNT
#define MOCK_DEVICE_COUNT 1
#endif

/* Anything larger is refused as out of memory without asking malloc (keeps sanitizers quiet). */
#define MOCK_MAX_BYTES ((size_t)1 << 40)

static const xfer_core_services *g_core;

#ifdef MOCK_MARK_LOADED
/* Runs when the file is opened (dlopen), before any entry point: the witness that the core
   opened it at all. */
__attribute__((constructor)) static void mark_loaded(void) { setenv("XFER_MOCK_LOADED_" MOCK_NAME, "1", 1); }
#endif
#if defined(MOCK_ENDS_PROCESS) && MOCK_ENDS_PROCESS == 1
__attribute__((constructor)) static void end_by_abort(void) { abort(); }
#elif defined(MOCK_ENDS_PROCESS) && MOCK_ENDS_PROCESS == 2
__attribute__((constructor)) static void end_by_exit(void) { exit(3); }
#endif
static atomic_long g_live;  /* contexts + buffers + streams + events alive */
static atomic_long g_calls; /* entries called */

XFER_BACKEND_EXPORT long xfer_mock_live_objects(void) { return atomic_load(&g_live); }
XFER_BACKEND_EXPORT long xfer_mock_calls(void) { return atomic_load(&g_calls); }

static void counted(void) { atomic_fetch_add(&g_calls, 1); }

typedef struct mock_ctx {
    int device;
    char params[512]; /* "name=value;..." as received, for tests to read via device_info */
    int fail_silently;
    int busy;
} mock_ctx;

typedef struct mock_buf {
    size_t bytes;
    unsigned char *host;
    unsigned char *dev;
} mock_buf;

typedef struct mock_event {
    unsigned flags;
    double ms; /* host clock at record time */
} mock_event;

#ifdef MOCK_UNRESOLVED
void xfer_mock_function_nobody_defines(void);
#endif

static xfer_status mock_probe(int *device_count) {
    counted();
#ifdef MOCK_UNRESOLVED
    xfer_mock_function_nobody_defines();
#endif
#ifdef MOCK_PROBE_FAILS
    (void)device_count;
    g_core->set_error(XFER_ERROR_NO_DEVICE, "mock '" MOCK_NAME "': no device (simulated probe failure)");
    return XFER_ERROR_NO_DEVICE;
#else
    *device_count = MOCK_DEVICE_COUNT;
    return XFER_SUCCESS;
#endif
}

static int param_is_true(const xfer_backend_param_value *params, size_t count, const char *name) {
    for (size_t i = 0; i < count; ++i) {
        if (strcmp(params[i].name, name) == 0) return strcmp(params[i].value, "1") == 0;
    }
    return 0;
}

static xfer_status mock_context_create(int device, const xfer_backend_param_value *params, size_t param_count,
                                       void **ctx) {
    counted();
    mock_ctx *c = calloc(1, sizeof *c);
    if (c == NULL) {
        g_core->set_error(XFER_ERROR_OUT_OF_MEMORY, "mock: calloc(context) failed");
        return XFER_ERROR_OUT_OF_MEMORY;
    }
    c->device = device;
    size_t used = 0;
    for (size_t i = 0; i < param_count && used < sizeof c->params; ++i) {
        int n = snprintf(c->params + used, sizeof c->params - used, "%s%s=%s", i ? ";" : "", params[i].name,
                         params[i].value);
        if (n > 0) used += (size_t)n;
    }
    c->fail_silently = param_is_true(params, param_count, "fail_silently");
    c->busy = param_is_true(params, param_count, "busy");
    atomic_fetch_add(&g_live, 1);
    *ctx = c;
    return XFER_SUCCESS;
}

static xfer_status mock_context_destroy(void *ctx) {
    counted();
    free(ctx);
    atomic_fetch_sub(&g_live, 1);
    return XFER_SUCCESS;
}

static xfer_status mock_buffer_alloc(void *ctx, size_t bytes, unsigned flags, void **buf, void **host_view,
                                     void **device_view) {
    counted();
    (void)flags;
    mock_ctx *c = ctx;
    if (c->fail_silently) return XFER_ERROR_BACKEND; /* deliberately without set_error */
    if (bytes > MOCK_MAX_BYTES) {
        char text[128];
        snprintf(text, sizeof text, "mock: malloc(%zu bytes) failed: out of memory", bytes);
        g_core->set_error(XFER_ERROR_OUT_OF_MEMORY, text);
        return XFER_ERROR_OUT_OF_MEMORY;
    }
    mock_buf *b = calloc(1, sizeof *b);
    unsigned char *host = malloc(bytes);
    unsigned char *dev = malloc(bytes);
    if (b == NULL || host == NULL || dev == NULL) {
        free(b);
        free(host);
        free(dev);
        g_core->set_error(XFER_ERROR_OUT_OF_MEMORY, "mock: malloc failed");
        return XFER_ERROR_OUT_OF_MEMORY;
    }
    b->bytes = bytes;
    b->host = host;
    b->dev = dev;
    atomic_fetch_add(&g_live, 1);
    *buf = b;
    *host_view = host;
    *device_view = dev;
    return XFER_SUCCESS;
}

static xfer_status mock_buffer_free(void *ctx, void *buf) {
    counted();
    (void)ctx;
    mock_buf *b = buf;
    free(b->host);
    free(b->dev);
    free(b);
    atomic_fetch_sub(&g_live, 1);
    return XFER_SUCCESS;
}

static xfer_status mock_stream_create(void *ctx, void **stream) {
    counted();
    (void)ctx;
    void *s = malloc(16);
    if (s == NULL) {
        g_core->set_error(XFER_ERROR_OUT_OF_MEMORY, "mock: malloc(stream) failed");
        return XFER_ERROR_OUT_OF_MEMORY;
    }
    atomic_fetch_add(&g_live, 1);
    *stream = s;
    return XFER_SUCCESS;
}

static xfer_status mock_stream_destroy(void *ctx, void *stream) {
    counted();
    (void)ctx;
    free(stream);
    atomic_fetch_sub(&g_live, 1);
    return XFER_SUCCESS;
}

static xfer_status mock_stream_synchronize(void *ctx, void *stream) {
    counted();
    (void)ctx;
    (void)stream;
    return XFER_SUCCESS;
}

#ifdef MOCK_FULL
static xfer_status not_ready_if_busy(void *ctx) {
    return ((mock_ctx *)ctx)->busy ? XFER_ERROR_NOT_READY : XFER_SUCCESS;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static xfer_status mock_device_info(void *ctx, xfer_device_info *info) {
    counted();
    mock_ctx *c = ctx;
    snprintf(info->name, sizeof info->name, "%s", c->params);
    info->ordinal = c->device;
    info->kind = XFER_DEVICE_KIND_HOST;
    info->multiprocessors = 1;
    return XFER_SUCCESS;
}

#ifdef MOCK_PATHS
#define MOCK_SPLIT_BYTES ((size_t)4 << 20)
/* A copy of exactly this size "registers" its range on first use, as the pinned backend's
   registration cache does: it asks path_refused before the registration, so a refused copy
   registers nothing. */
#define MOCK_REGISTER_ON_USE_BYTES (((size_t)3 << 20) + 1)
/* Every piece is taken before anything is copied: a refusal leaves the destination untouched. */
static xfer_status mock_take_raw_paths(size_t bytes) {
    if (bytes == MOCK_REGISTER_ON_USE_BYTES &&
        g_core->struct_size >= offsetof(xfer_core_services, path_refused) + sizeof g_core->path_refused) {
        if (g_core->path_refused(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, bytes)) {
            return g_core->take_path(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, 1, bytes, bytes);
        }
        g_core->note_registration(0, bytes, 2000);
        return g_core->take_path(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, 1, bytes, bytes);
    }
    if (bytes < MOCK_SPLIT_BYTES) {
        return g_core->take_path(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_BELOW_CROSSOVER, 1, bytes, bytes);
    }
    const size_t head = bytes / 2;
    xfer_status st = g_core->take_path(XFER_PATH_STAGED, XFER_REASON_MEMORY, 1, head, head);
    if (st != XFER_SUCCESS) return st;
    return g_core->take_path(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, 1, bytes - head, bytes - head);
}
#endif

static xfer_status mock_buffer_copy_async(void *ctx, void *buf, xfer_direction dir, size_t offset, size_t bytes,
                                          void *stream) {
    counted();
#ifdef MOCK_PATHS
    xfer_status taken = g_core->take_path(XFER_PATH_PINNED_DMA, XFER_REASON_MEMORY, 1, bytes, bytes);
    if (taken != XFER_SUCCESS) return taken;
#endif
    (void)ctx;
    (void)stream;
    mock_buf *b = buf;
    if (dir == XFER_TO_DEVICE)
        memcpy(b->dev + offset, b->host + offset, bytes);
    else
        memcpy(b->host + offset, b->dev + offset, bytes);
    return XFER_SUCCESS;
}

static xfer_status mock_memcpy_async(void *ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind kind,
                                     void *stream) {
    counted();
#ifdef MOCK_PATHS
    xfer_status taken = mock_take_raw_paths(bytes);
    if (taken != XFER_SUCCESS) return taken;
#endif
    (void)kind;
    (void)stream;
    memmove(dst, src, bytes);
    /* Reads the context after the copy: an ASan run catches a call that outlived its context
       (the core lets xfer_memcpy_async hold only its stream's gate: core/src/objects.hpp). */
    volatile int device = ((const mock_ctx *)ctx)->device;
    (void)device;
    return XFER_SUCCESS;
}

static xfer_status mock_stream_query(void *ctx, void *stream) {
    counted();
    (void)stream;
    return not_ready_if_busy(ctx);
}

static xfer_status mock_stream_wait_event(void *ctx, void *stream, void *event) {
    counted();
    (void)ctx;
    (void)stream;
    (void)event;
    return XFER_SUCCESS;
}

static xfer_status mock_stream_launch_host_func(void *ctx, void *stream, xfer_host_fn fn, void *user_data) {
    counted();
    (void)ctx;
    (void)stream;
    fn(user_data);
    return XFER_SUCCESS;
}

static void *mock_stream_native(void *ctx, void *stream) {
    counted();
    (void)ctx;
    return stream;
}

#ifdef MOCK_WRAP
/* A wrapped stream's object is the application's pointer itself: unwrapping must never free
   it (an ASan run catches a core that destroys it instead), and it counts as a live object. */
static xfer_status mock_stream_wrap(void *ctx, void *native, void **stream) {
    counted();
    (void)ctx;
    atomic_fetch_add(&g_live, 1);
    *stream = native != NULL ? native : (void *)0x1;
    return XFER_SUCCESS;
}

static xfer_status mock_stream_unwrap(void *ctx, void *stream) {
    counted();
    (void)ctx;
    (void)stream;
    atomic_fetch_sub(&g_live, 1);
    return XFER_SUCCESS;
}

static void *mock_event_native(void *ctx, void *event) {
    counted();
    (void)ctx;
    return event;
}
#endif /* MOCK_WRAP */

static xfer_status mock_event_create(void *ctx, unsigned flags, void **event) {
    counted();
    (void)ctx;
    mock_event *e = calloc(1, sizeof *e);
    if (e == NULL) {
        g_core->set_error(XFER_ERROR_OUT_OF_MEMORY, "mock: calloc(event) failed");
        return XFER_ERROR_OUT_OF_MEMORY;
    }
    e->flags = flags;
    atomic_fetch_add(&g_live, 1);
    *event = e;
    return XFER_SUCCESS;
}

static xfer_status mock_event_destroy(void *ctx, void *event) {
    counted();
    (void)ctx;
    free(event);
    atomic_fetch_sub(&g_live, 1);
    return XFER_SUCCESS;
}

static xfer_status mock_event_record(void *ctx, void *event, void *stream) {
    counted();
    (void)ctx;
    (void)stream;
    ((mock_event *)event)->ms = now_ms();
    return XFER_SUCCESS;
}

static xfer_status mock_event_synchronize(void *ctx, void *event) {
    counted();
    (void)ctx;
    (void)event;
    return XFER_SUCCESS;
}

static xfer_status mock_event_query(void *ctx, void *event) {
    counted();
    (void)event;
    return not_ready_if_busy(ctx);
}

static xfer_status mock_event_elapsed_ms(void *ctx, void *start, void *end, float *ms) {
    counted();
    xfer_status st = not_ready_if_busy(ctx);
    if (st != XFER_SUCCESS) return st;
    *ms = (float)(((mock_event *)end)->ms - ((mock_event *)start)->ms);
    return XFER_SUCCESS;
}

#ifdef MOCK_REGISTER
/* Registration entries (plugin ABI 1.1): bookkeeping of one range count, nothing is mapped. */
static atomic_long g_registered_ranges;

static xfer_status mock_register_memory(void *ctx, void *ptr, size_t bytes, unsigned flags) {
    counted();
    (void)ctx;
    (void)ptr;
    (void)bytes;
    (void)flags;
    atomic_fetch_add(&g_registered_ranges, 1);
#ifdef MOCK_PATHS
    g_core->note_registration(0, bytes, 1000); /* a fixed "host time" the test can check */
#endif
    return XFER_SUCCESS;
}

static xfer_status mock_unregister_memory(void *ctx, void *ptr) {
    counted();
    (void)ctx;
    (void)ptr;
    atomic_fetch_sub(&g_registered_ranges, 1);
#ifdef MOCK_PATHS
    g_core->note_registration(1, 4096, 500);
#endif
    return XFER_SUCCESS;
}

static xfer_status mock_registration_stats(void *ctx, xfer_registration_stats *stats) {
    counted();
    (void)ctx;
    memset(stats, 0, sizeof *stats);
    stats->registered_ranges = (uint64_t)atomic_load(&g_registered_ranges);
    return XFER_SUCCESS;
}
#endif /* MOCK_REGISTER */

#ifdef MOCK_PEER
/* Peer entries (plugin ABI 1.2). The simulated topology: devices of equal parity reach each
   other directly, others only through the host. The device of the context whose stream the
   core passed is remembered for the tests. */
static atomic_long g_last_peer_stream_device = -1;
XFER_BACKEND_EXPORT long xfer_mock_last_peer_stream_device(void) { return atomic_load(&g_last_peer_stream_device); }

static xfer_status mock_device_can_access_peer(void *ctx, void *peer, int *can_access) {
    counted();
    *can_access = ((mock_ctx *)ctx)->device % 2 == ((mock_ctx *)peer)->device % 2;
    return XFER_SUCCESS;
}

static xfer_status mock_memcpy_peer_async(void *dst_ctx, void *dst, void *src_ctx, const void *src, size_t bytes,
                                          void *stream_ctx, void *stream) {
    counted();
    (void)dst_ctx;
    (void)src_ctx;
    (void)stream;
    atomic_store(&g_last_peer_stream_device, ((mock_ctx *)stream_ctx)->device);
    memmove(dst, src, bytes);
    return XFER_SUCCESS;
}

static xfer_status mock_buffer_copy_peer_async(void *dst_ctx, void *dst_buf, size_t dst_offset, void *src_ctx,
                                               void *src_buf, size_t src_offset, size_t bytes, void *stream_ctx,
                                               void *stream) {
    counted();
    (void)dst_ctx;
    (void)src_ctx;
    (void)stream;
    atomic_store(&g_last_peer_stream_device, ((mock_ctx *)stream_ctx)->device);
    memmove(((mock_buf *)dst_buf)->dev + dst_offset, ((mock_buf *)src_buf)->dev + src_offset, bytes);
    return XFER_SUCCESS;
}
#endif /* MOCK_PEER */

static const xfer_backend_param g_params[] = {
    {"chunk_size", "size", "8MiB", "bytes per staging chunk (mock: only echoed back)"},
    {"threads", "int", "2", "worker threads (mock: only echoed back)"},
    {"verbose", "bool", "off", "chatty mode (mock: only echoed back)"},
    {"label", "string", "plain", "free text (mock: only echoed back)"},
    {"fail_silently", "bool", "false", "buffer_alloc fails without calling set_error"},
    {"busy", "bool", "false", "queries and elapsed time answer XFER_ERROR_NOT_READY"},
};
#endif /* MOCK_FULL */

static const xfer_backend_table g_table = {
    MOCK_ABI_MAJOR,
    MOCK_ABI_MINOR,
    MOCK_STRUCT_SIZE,
    MOCK_TABLE_NAME,
    "mock backend for the core's tests (" MOCK_NAME ")",
    XFER_DEVICE_KIND_HOST,
#ifdef MOCK_FULL
    XFER_CAP_ASYNC_COPY,
    g_params,
    sizeof g_params / sizeof g_params[0],
#else
    0,
    NULL,
    0,
#endif
    mock_probe,
#ifdef MOCK_NULL_REQUIRED
    NULL,
#else
    mock_context_create,
#endif
    mock_context_destroy,
    mock_buffer_alloc,
    mock_buffer_free,
    mock_stream_create,
    mock_stream_destroy,
    mock_stream_synchronize,
#ifdef MOCK_FULL
    mock_device_info,
    mock_buffer_copy_async,
    mock_memcpy_async,
    NULL, /* memcpy_batch_async: the core falls back to one memcpy_async per entry */
    mock_stream_query,
    mock_stream_wait_event,
    mock_stream_launch_host_func,
    mock_stream_native,
    mock_event_create,
    mock_event_destroy,
    mock_event_record,
    mock_event_synchronize,
    mock_event_query,
    mock_event_elapsed_ms,
#else
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
#endif
#if defined(MOCK_REGISTER)
    mock_register_memory,
    mock_unregister_memory,
    mock_registration_stats,
#elif defined(MOCK_PEER)
    NULL,
    NULL,
    NULL, /* register_memory, unregister_memory, registration_stats */
#endif
#ifdef MOCK_PEER
    NULL, /* probe_params: the device count is MOCK_DEVICE_COUNT */
    mock_device_can_access_peer,
    mock_memcpy_peer_async,
    mock_buffer_copy_peer_async,
#endif
#ifdef MOCK_WRAP
#if !defined(MOCK_REGISTER) && !defined(MOCK_PEER)
    NULL,
    NULL,
    NULL, /* register_memory, unregister_memory, registration_stats */
#endif
#ifndef MOCK_PEER
    NULL,
    NULL,
    NULL,
    NULL, /* probe_params, device_can_access_peer, memcpy_peer_async, buffer_copy_peer_async */
#endif
    mock_stream_wrap,
    mock_stream_unwrap,
    mock_event_native,
#endif
};

#ifdef MOCK_NO_ENTRY
/* Something else is exported, so the file is a valid plugin-looking library without the entry. */
XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry_misspelled(const xfer_core_services *core) {
    g_core = core;
    return &g_table;
}
#else
XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
#if defined(MOCK_ENDS_PROCESS) && MOCK_ENDS_PROCESS == 3
    raise(SIGSEGV);
#endif
    g_core = core;
    return &g_table;
}
#endif
