/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer_backend.h -- the plugin ABI that xfer backends implement.
 *
 * Applications include xfer.h only. A backend is a shared library that includes this header
 * (never a core header) and exports one C function, XFER_BACKEND_ENTRY_SYMBOL, returning a
 * pointer to a static xfer_backend_table.
 *
 * Versioning: the table carries the ABI major and minor version it was built against and its
 * own size. The core refuses (XFER_ERROR_BACKEND_ABI, naming the file and both versions) a
 * plugin whose major version differs from XFER_BACKEND_ABI_MAJOR or whose table is smaller
 * than XFER_BACKEND_TABLE_V1_SIZE. Entries are append-only: a newer core reads entries past
 * an older plugin's struct_size as NULL. A NULL optional entry means "not supported" and the
 * core answers XFER_ERROR_NOT_SUPPORTED for it; a NULL required entry refuses the plugin.
 *
 * Division of work: the core validates every handle and argument (NULL pointers, sizes,
 * bounds, flags, context ownership, event state) before calling a backend, so entries
 * receive only valid objects. Backends report failures by returning a status and calling
 * core->set_error() with a message that names the failing native call and its code; an
 * entry that fails leaves no partial state and leaks nothing. No C++ type and no exception
 * crosses this boundary. Every entry may be called from several threads at once. An entry
 * must not call xfer_* functions (the public API) on the thread that called it: the core
 * holds that thread's handle lookups and object gates for the whole entry call.
 *
 * Paths (ABI 1.4): every copy entry tags each piece it queues with the path it takes, through
 * core->take_path, before queuing it. Bytes the entry did not tag are counted by the core as
 * XFER_PATH_UNREPORTED, so a plugin built for an older ABI still has every byte counted.
 */
#ifndef XFER_XFER_BACKEND_H
#define XFER_XFER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "xfer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XFER_BACKEND_ABI_MAJOR 1
#define XFER_BACKEND_ABI_MINOR 8

/** Name of the one function every plugin exports (signature: xfer_backend_entry_fn). */
#define XFER_BACKEND_ENTRY_SYMBOL "xfer_backend_entry"

/** Plugins are files named XFER_BACKEND_FILE_PREFIX <name> XFER_BACKEND_FILE_SUFFIX in a
    plugin folder, e.g. libxfer-backend-pinned.so. */
#define XFER_BACKEND_FILE_PREFIX "libxfer-backend-"
#define XFER_BACKEND_FILE_SUFFIX ".so"

/** Services the core offers a plugin. Valid for the life of the process. */
typedef struct xfer_core_services {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    /** Sets the calling thread's xfer_last_error() message for the failure the entry is about
        to return. `message` is copied. */
    void (*set_error)(xfer_status status, const char *message);

    /* --- ABI 1.4: which path each copy takes. A plugin checks struct_size before calling them
           (an older core's struct ends before them: the plugin then reports nothing). --- */
    /** Says how `copies` pieces of a copy call, `bytes` in all and the largest `largest_piece`
        bytes, move: `path`, for `reason` (xfer.h: xfer_copy_path, xfer_path_reason). A copy
        entry (buffer_copy_async, memcpy_async, memcpy_batch_async, memcpy_peer_async,
        buffer_copy_peer_async) calls it on the thread that called the entry, once per path
        (and reason) its copy takes, for every byte the call moves, before it queues anything
        on that path; a call that finds a refusal after it queued pieces waits for them
        before returning, as for any failure part-way. Returns XFER_SUCCESS, or
        XFER_ERROR_SLOW_PATH with the message set when the context's slow-path policy refuses
        the path: the entry then returns that status. Outside a copy entry it does nothing. */
    xfer_status (*take_path)(xfer_copy_path path, xfer_path_reason reason, uint64_t copies, uint64_t bytes,
                             uint64_t largest_piece);
    /** Says that an entry page-locked (`unlocked` 0) or unlocked (1) a range of `bytes` bytes,
        taking `ns` nanoseconds of host time: xfer_register and xfer_unregister, and the
        registration cache's registrations, evictions and stale ranges. Called on the thread
        that called the entry; outside an entry it does nothing. */
    void (*note_registration)(int unlocked, uint64_t bytes, uint64_t ns);

    /* --- ABI 1.5 --- */
    /** 1 when the slow-path policy of the copy entry running on this thread would refuse `path`
        taken for `reason` with a largest piece of `largest_piece` bytes (take_path would return
        XFER_ERROR_SLOW_PATH), else 0; nothing is counted. An entry asks it before a step that
        changes state on the way to a path (the registration cache's cudaHostRegister), so that
        a refused copy leaves nothing behind; it then calls take_path for the refusal itself.
        Outside a copy entry: 0. */
    int (*path_refused)(xfer_copy_path path, xfer_path_reason reason, uint64_t largest_piece);

    /* --- ABI 1.8 --- */
    /** The effective `calibration` setting (config key `calibration`, XFER_CALIBRATION): "" (the
        user's cache folder), "off", or a folder where calibrations are kept. Meaningful inside
        context_create and context_calibrate, on the thread that called them; "" elsewhere. */
    const char *(*calibration_setting)(void);
} xfer_core_services;

/** A parameter a backend declares (and, from ABI 1.8, a value it derives: the table's
    `derived`). The core maps it to the config-file key "[<backend>] <name>" and the
    environment variable XFER_<BACKEND>_<NAME> (upper case). */
typedef struct xfer_backend_param {
    const char *name;          /**< lower_case, e.g. "chunk_size" */
    const char *type;          /**< "int", "size", "bool" or "string" */
    const char *default_value; /**< as text, e.g. "8MiB" */
    const char *help;          /**< one line */
} xfer_backend_param;

/** An effective parameter value handed to context_create. Sizes arrive as decimal bytes,
    bools as "0"/"1", ints as decimal; already validated against the declared type. */
typedef struct xfer_backend_param_value {
    const char *name;
    const char *value;
} xfer_backend_param_value;

/** The function table. Object pointers (ctx, buf, stream, event) are the backend's own. */
typedef struct xfer_backend_table {
    uint32_t abi_major;      /**< XFER_BACKEND_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;      /**< XFER_BACKEND_ABI_MINOR the plugin was built with */
    size_t struct_size;      /**< sizeof(xfer_backend_table) as the plugin was built */
    const char *name;        /**< must equal the <name> of the plugin's file name */
    const char *description; /**< one line for `xfer-tool list` */
    xfer_device_kind device_kind;
    unsigned caps; /**< XFER_CAP_* bits */
    const xfer_backend_param *params;
    size_t param_count;

    /* --- required --- */
    /** Can the backend run here? On success sets *device_count (>= 1). On failure returns
        XFER_ERROR_NO_DEVICE or XFER_ERROR_BACKEND_UNAVAILABLE with set_error saying why
        (e.g. "cudaGetDeviceCount: no CUDA-capable device is detected (cudaErrorNoDevice=100)").
        Cheap and repeatable. */
    xfer_status (*probe)(int *device_count);
    /** Binds to `device` (already checked 0 <= device < count) with the effective parameters. */
    xfer_status (*context_create)(int device, const xfer_backend_param_value *params, size_t param_count, void **ctx);
    /** Called after the core destroyed every stream, event and buffer of the context. */
    xfer_status (*context_destroy)(void *ctx);
    /** bytes > 0; flags validated (XFER_ALLOC_* only, not both PREFER bits). On failure nothing
        is allocated. Sets the two views (the same pointer where XFER_CAP_SHARED_VIEW). */
    xfer_status (*buffer_alloc)(void *ctx, size_t bytes, unsigned flags, void **buf, void **host_view,
                                void **device_view);
    /** Must not release memory that queued work still uses: wait for it, or defer the release
        in stream order. */
    xfer_status (*buffer_free)(void *ctx, void *buf);
    xfer_status (*stream_create)(void *ctx, void **stream);
    /** Waits for queued work before destroying. */
    xfer_status (*stream_destroy)(void *ctx, void *stream);
    xfer_status (*stream_synchronize)(void *ctx, void *stream);

    /* --- optional (NULL: the core answers XFER_ERROR_NOT_SUPPORTED) --- */
    xfer_status (*device_info)(void *ctx, xfer_device_info *info);
    /** dir valid; bytes > 0; offset + bytes within the buffer (checked by the core). */
    xfer_status (*buffer_copy_async)(void *ctx, void *buf, xfer_direction dir, size_t offset, size_t bytes,
                                     void *stream);
    xfer_status (*memcpy_async)(void *ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind kind, void *stream);
    /** count > 0, every pointer non-NULL, every size > 0 (checked by the core). */
    xfer_status (*memcpy_batch_async)(void *ctx, void *const *dsts, const void *const *srcs, const size_t *sizes,
                                      size_t count, xfer_copy_kind kind, void *stream);
    /** XFER_SUCCESS or XFER_ERROR_NOT_READY (no set_error needed for NOT_READY). */
    xfer_status (*stream_query)(void *ctx, void *stream);
    xfer_status (*stream_wait_event)(void *ctx, void *stream, void *event);
    xfer_status (*stream_launch_host_func)(void *ctx, void *stream, xfer_host_fn fn, void *user_data);
    /** The native stream object (cudaStream_t); never NULL for a valid stream. */
    void *(*stream_native)(void *ctx, void *stream);
    /** flags validated (XFER_EVENT_* only). */
    xfer_status (*event_create)(void *ctx, unsigned flags, void **event);
    xfer_status (*event_destroy)(void *ctx, void *event);
    xfer_status (*event_record)(void *ctx, void *event, void *stream);
    xfer_status (*event_synchronize)(void *ctx, void *event);
    /** XFER_SUCCESS or XFER_ERROR_NOT_READY. */
    xfer_status (*event_query)(void *ctx, void *event);
    /** Both events recorded with timing (checked by the core); XFER_ERROR_NOT_READY if either
        has not completed. */
    xfer_status (*event_elapsed_ms)(void *ctx, void *start, void *end, float *ms);

    /* --- ABI 1.1: registration (optional; a 1.0 plugin's table ends before them) --- */
    /** xfer_register: ptr non-NULL, bytes > 0, ptr + bytes does not overflow, flags
        XFER_REGISTER_* only (checked by the core). */
    xfer_status (*register_memory)(void *ctx, void *ptr, size_t bytes, unsigned flags);
    /** xfer_unregister: ptr non-NULL (checked by the core); INVALID_ARGUMENT if it is not the
        start of a range this context registered. */
    xfer_status (*unregister_memory)(void *ctx, void *ptr);
    /** xfer_registration_get_stats: stats non-NULL (checked by the core). */
    xfer_status (*registration_stats)(void *ctx, xfer_registration_stats *stats);

    /* --- ABI 1.2: several devices and peer copies (optional; a 1.0 or 1.1 plugin's table ends
           before them) --- */
    /** probe with the backend's effective parameters (as context_create gets them), for a
        backend whose device count is a parameter (host: `devices`). When set, the core calls
        it after probe and its answer wins. XFER_ERROR_CONFIG (with set_error naming the
        parameter) makes the backend unavailable with that status and reason. */
    xfer_status (*probe_params)(const xfer_backend_param_value *params, size_t param_count, int *device_count);
    /** *can_access = 1 when ctx's device can access peer's memory directly, else 0. ctx and peer
        are contexts of this backend on different devices (checked by the core). */
    xfer_status (*device_can_access_peer)(void *ctx, void *peer, int *can_access);
    /** dst in dst_ctx's device memory, src in src_ctx's, different devices, bytes > 0; `stream`
        belongs to `stream_ctx`, which is dst_ctx or src_ctx (all checked by the core). */
    xfer_status (*memcpy_peer_async)(void *dst_ctx, void *dst, void *src_ctx, const void *src, size_t bytes,
                                     void *stream_ctx, void *stream);
    /** Device view to device view of two buffers of contexts on different devices; offsets and
        bytes within both buffers (checked by the core). Must keep both buffers' memory alive
        until the copy has run, as buffer_copy_async does. */
    xfer_status (*buffer_copy_peer_async)(void *dst_ctx, void *dst_buf, size_t dst_offset, void *src_ctx, void *src_buf,
                                          size_t src_offset, size_t bytes, void *stream_ctx, void *stream);

    /* --- ABI 1.3: the application's own streams and events (optional; an older plugin's
           table ends before them) --- */
    /** xfer_stream_wrap: sets *stream to a stream object over `native`, a stream the
        application owns, that every entry taking a stream accepts as one from stream_create.
        The core makes sure one native stream has one live stream object per context. */
    xfer_status (*stream_wrap)(void *ctx, void *native, void **stream);
    /** Releases a stream object made by stream_wrap: waits for queued work as stream_destroy
        does, and never destroys the native stream. Set whenever stream_wrap is. */
    xfer_status (*stream_unwrap)(void *ctx, void *stream);
    /** The native event object (cudaEvent_t); never NULL for a valid event. */
    void *(*event_native)(void *ctx, void *event);

    /* --- ABI 1.6: buffers shared with other processes (optional, set together; without them
           the core refuses XFER_ALLOC_SHAREABLE, xfer_buffer_export and xfer_buffer_import with
           XFER_ERROR_NOT_SUPPORTED) --- */
    /** Describes `buf` for another process: writes at most *payload_bytes bytes of the
        backend's description to `payload` and at most *fd_count new descriptors (the caller's
        to close) to `fds`, and sets both counts to what it wrote. A buffer allocated without
        XFER_ALLOC_SHAREABLE: XFER_ERROR_INVALID_STATE. */
    xfer_status (*buffer_export)(void *ctx, void *buf, void *payload, size_t *payload_bytes, int *fds,
                                 size_t *fd_count);
    /** Makes a buffer of `bytes` over the memory an export describes (payload and fds as
        buffer_export wrote them, in another process; fds are borrowed: the backend keeps
        duplicates of what it needs). Checks the payload and the descriptors: a mismatch is
        XFER_ERROR_INVALID_ARGUMENT with a message saying what. Sets the views as buffer_alloc
        does; buffer_free releases it. */
    xfer_status (*buffer_import)(void *ctx, const void *payload, size_t payload_bytes, const int *fds, size_t fd_count,
                                 size_t bytes, void **buf, void **host_view, void **device_view);

    /* --- ABI 1.7 (optional: without it xfer_buffer_get_share_info answers
           XFER_ERROR_NOT_SUPPORTED) --- */
    /** Fills every field of *info but struct_size (the core zeroed it and set struct_size). */
    xfer_status (*buffer_share_info)(void *ctx, void *buf, xfer_share_info *info);

    /* --- ABI 1.8: values the backend derives, and the calibration of the machine (optional;
           without them a context has no derived values and xfer_calibrate answers
           XFER_ERROR_NOT_SUPPORTED) --- */
    /** Values the backend derives itself, from its calibration or its declared defaults
        (declared as parameters are). A user may still set one, as a parameter (file or
        environment): context_create then receives it among its parameter values. It receives
        no derived value the user did not set. */
    const xfer_backend_param *derived;
    size_t derived_count;
    /** The value ctx uses for derived[index] (text as a parameter's, sizes in bytes; *value
        points to storage valid until this thread's next call of the entry), and *calibrated = 1
        when it came from the calibration, 0 when from the default or the user. */
    xfer_status (*context_derived_value)(void *ctx, size_t index, const char **value, int *calibrated);
    /** xfer_calibrate: flags validated (XFER_CALIBRATE_* only); info->struct_size set. Fills
        info's other fields; its strings point to storage valid until this thread's next call
        of the entry (the core copies them). */
    xfer_status (*context_calibrate)(void *ctx, unsigned flags, xfer_calibration_info *info);
} xfer_backend_table;

/** Smallest table a v1 core accepts: every entry of ABI 1.0. */
#define XFER_BACKEND_TABLE_V1_SIZE (offsetof(xfer_backend_table, event_elapsed_ms) + sizeof(void *))

/** The entry point's type. Called once per process, after the plugin is loaded; returns NULL
    only if the plugin cannot describe itself at all. Must not call CUDA or start threads:
    that waits for probe/context_create. */
typedef const xfer_backend_table *(*xfer_backend_entry_fn)(const xfer_core_services *core);

#if defined(__GNUC__)
#define XFER_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define XFER_BACKEND_EXPORT
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XFER_XFER_BACKEND_H */
