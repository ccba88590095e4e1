/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer.h -- the public C API of xfer (v1).
 *
 * xfer moves data between host (CPU) memory and device (GPU) memory through a
 * memory-strategy backend chosen at run time: host (no GPU), pageable, pinned
 * (page-locked), managed (unified) or zero-copy (mapped).
 *
 * Conventions that hold for every function below unless its comment says otherwise:
 *  - Every function returns an xfer_status. XFER_SUCCESS is 0.
 *  - Output arguments come last and are written only on success.
 *  - On failure, xfer_last_error() on the same thread returns a message that says
 *    what was wrong (and, for a backend failure, which native call failed and its code).
 *  - Sizes and offsets are in bytes, times in milliseconds.
 *  - Nothing in the library aborts, exits or lets a C++ exception escape, and it prints
 *    nothing but the copy log a user asks for (XFER_LOG=copies, slow_path = warn).
 *  - Handles are opaque. Passing a freed, never-created or wrong-kind handle returns
 *    XFER_ERROR_INVALID_HANDLE (never a crash): the core validates every handle in a
 *    table with generation counters before it reaches a backend.
 *  - Thread-safety: every function may be called from any thread at the same time.
 *    Handles may be shared between threads. Destroying a handle while another thread
 *    still uses it is safe for the library (the other call either completes or gets
 *    XFER_ERROR_INVALID_HANDLE) but is a logic error in the program.
 *
 * The asynchronous-copy contract (streams):
 *  - Work queued on one stream runs in the order it was queued (stream order),
 *    on every backend, the pageable one included.
 *  - An *_async call returns without waiting for the copy. Its source and destination
 *    must stay alive and unmodified until an event recorded after it, or a stream
 *    synchronisation, reports that it is done. This holds for pageable (ordinary) host
 *    memory exactly as for page-locked memory. A copy of pageable memory that the staging
 *    engine takes returns at once (the stream waits for the engine; with the pageable
 *    backend's staging = sync, once the host memory was read or written); one that the
 *    driver takes (cudaMemcpyAsync of pageable memory) may wait for the stream, and to the
 *    host always does. Which way a copy goes: "calibration and derived values" below.
 *  - Pageable host memory and host functions: a copy reading pageable memory sees what host
 *    functions queued earlier on the same stream through xfer_stream_launch_host_func (and
 *    earlier copies to the host) wrote into it. Host functions launched directly on the
 *    native stream are invisible to xfer: queue them through xfer to keep this promise.
 *  - Staged copies and other threads' CUDA calls: no thread of xfer's that a staged copy
 *    waits for makes a CUDA call, so a CUDA call of another thread that waits for the whole
 *    device (a kernel's first launch under lazy module loading, cudaFree, cudaFreeHost)
 *    cannot hold a staged copy up (backends/pageable/README.md says how).
 *  - Releasing with work still queued (the one rule for every backend): xfer_free,
 *    xfer_stream_destroy and xfer_close never release memory or a stream that queued work
 *    still uses -- buffer copies and raw copies (xfer_memcpy_async, xfer_memcpy_batch_async)
 *    that read or write a buffer's host or device view alike. The release happens once that
 *    work is done: host defers it (the call returns at once; the memory goes when the last
 *    queued copy that uses it has run), the CUDA backends wait for the device first
 *    (cudaDeviceSynchronize / cudaStreamSynchronize). The handle is invalid as soon as the
 *    call returns. Memory the caller owns (not a buffer's view) is the caller's to keep alive.
 *
 * The calling thread's CUDA binding is the caller's: every function leaves the thread's current
 * CUDA context (and with it the runtime's current device) as it found it, on every path,
 * failures included. CUDA backends make their device's primary context current for the call
 * only (cuCtxPushCurrent, then cuCtxPopCurrent) when another context, or none, is current; a
 * thread whose current context already is that primary context (after cudaSetDevice of the
 * context's device, or any runtime call on it) pays nothing for this.
 *
 * Stream capture (CUDA graphs): a copy queued on a stream that is capturing a graph is either
 * recorded into the graph, so that each replay moves the bytes as they are then, or refused
 * with XFER_ERROR_NOT_SUPPORTED before the stream is touched, so that the application's
 * capture stays valid. Captured: copies between device memory and page-locked host memory
 * (pinned buffers, ranges registered with xfer_register, cudaHostAlloc memory), by single raw
 * copies, buffer copies of the pinned backend, and batches (queued whole on the copy engine
 * while capturing, never packed); zerocopy buffer copies (nothing to move: the graph's kernels
 * reach the memory). Refused: anything that involves pageable host memory (the pageable
 * backend's buffer copies, raw copies and batch entries of it on every backend, the pinned
 * backend's registration cache), and the managed backend's buffer copies (a prefetch
 * invalidates a capture). Register pageable memory to capture its copies.
 *
 * Impossible sizes: a size larger than PTRDIFF_MAX (no object can be that large), a range
 * whose end wraps around the address space, and batch sizes that add up past PTRDIFF_MAX are
 * refused by the core with XFER_ERROR_INVALID_SIZE before anything is queued or allocated.
 *
 * fork(): a child process may not use anything it inherited. Every call with a context, or an
 * object of a context, opened before the fork() returns XFER_ERROR_INVALID_STATE in the
 * child (never a hang: the worker threads and device state stay in the parent), and
 * xfer_close of such a context leaves it alone. The child may open contexts of its own on
 * backends that survive fork (host); a CUDA backend that was loaded before the fork reports
 * itself unavailable in the child (CUDA cannot be used after fork(): exec a new program or use
 * posix_spawn instead). Forking while other threads are inside xfer is safe: the library holds
 * its own locks across fork(). The parent is unaffected.
 *
 * Device faults (CUDA backends): a fault that leaves the device's CUDA context unusable (a
 * kernel that accessed an illegal address, a failed device-side assert, ...) is returned once
 * as XFER_ERROR_BACKEND with the CUDA message, by the call that first sees it (usually a
 * synchronisation). From then on every call on a context of that device returns
 * XFER_ERROR_BACKEND_UNAVAILABLE naming the fault, without waiting; xfer_close still releases
 * the handles. Contexts of other devices and other backends keep working; the device can be
 * used again only by a new process (CUDA keeps such errors for the life of the process).
 * Out-of-memory is not such a fault: XFER_ERROR_OUT_OF_MEMORY, and the context goes on.
 *
 * Compiles as C99 (-std=c99 -pedantic) and as C++.
 */
#ifndef XFER_XFER_H
#define XFER_XFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define XFER_API __attribute__((visibility("default")))
#else
#define XFER_API
#endif

/* ---------------------------------------------------------------- version */

/** Version of this header. The library's own version comes from xfer_get_version(). */
#define XFER_VERSION_MAJOR 1
#define XFER_VERSION_MINOR 0
#define XFER_VERSION_PATCH 0

/* ------------------------------------------------------------------ types */

/** Status of every call. Pinned to 32 bits; values never change once released. */
typedef enum xfer_status {
    XFER_SUCCESS = 0,
    /** A required pointer argument is NULL, or an enum/flags value is not one the API defines. */
    XFER_ERROR_INVALID_ARGUMENT = 1,
    /** A handle is NULL, freed, never created, of the wrong kind, or belongs to another context. */
    XFER_ERROR_INVALID_HANDLE = 2,
    /** A size is zero where bytes must move or be allocated, or a size computation overflows. */
    XFER_ERROR_INVALID_SIZE = 3,
    /** offset + bytes lies past the end of the buffer. */
    XFER_ERROR_OUT_OF_BOUNDS = 4,
    /** Host or device memory could not be allocated; the context stays usable. */
    XFER_ERROR_OUT_OF_MEMORY = 5,
    /** Queued work has not finished yet (xfer_stream_query, xfer_event_query, xfer_event_elapsed_ms). */
    XFER_ERROR_NOT_READY = 6,
    /** The backend does not implement this operation (its plugin table entry is NULL). */
    XFER_ERROR_NOT_SUPPORTED = 7,
    /** The backend found no usable device (no GPU, no driver, or the device index is out of range). */
    XFER_ERROR_NO_DEVICE = 8,
    /** No backend of that name was found on the plugin search path. */
    XFER_ERROR_BACKEND_NOT_FOUND = 9,
    /** The backend's plugin was found but cannot be used here (it failed to load or its probe failed). */
    XFER_ERROR_BACKEND_UNAVAILABLE = 10,
    /** The plugin was built for another plugin ABI major version, or its table is too small. */
    XFER_ERROR_BACKEND_ABI = 11,
    /** The configuration (file or environment) is malformed, names an unknown key, or has a bad value. */
    XFER_ERROR_CONFIG = 12,
    /** A native call of the backend failed (e.g. a CUDA runtime error); the message names it. */
    XFER_ERROR_BACKEND = 13,
    /** An operation was asked of an object in a state that forbids it (e.g. elapsed time of an
        event that was never recorded, or an event created without timing). */
    XFER_ERROR_INVALID_STATE = 14,
    /** A bug in xfer itself (an internal invariant broke, or an unexpected exception was caught). */
    XFER_ERROR_INTERNAL = 15,
    /** The copy would take a slow path (xfer_path_is_slow) and the context's slow-path policy is
        XFER_SLOW_PATH_REFUSE; the message names the path and why it was taken. Nothing was queued
        (and no range was registered for it). */
    XFER_ERROR_SLOW_PATH = 16,
    XFER_STATUS_FORCE_INT32 = 0x7fffffff
} xfer_status;

/** Direction of a buffer copy. */
typedef enum xfer_direction {
    XFER_TO_DEVICE = 1, /**< host view -> device view (H2D) */
    XFER_TO_HOST = 2,   /**< device view -> host view (D2H) */
    XFER_DIRECTION_FORCE_INT32 = 0x7fffffff
} xfer_direction;

/** Kind of a raw copy between user pointers (same meaning as cudaMemcpyKind). */
typedef enum xfer_copy_kind {
    XFER_COPY_HOST_TO_HOST = 0,
    XFER_COPY_HOST_TO_DEVICE = 1,
    XFER_COPY_DEVICE_TO_HOST = 2,
    XFER_COPY_DEVICE_TO_DEVICE = 3,
    /** Let the backend infer the direction from the pointers (unified virtual addressing). */
    XFER_COPY_DEFAULT = 4,
    XFER_COPY_KIND_FORCE_INT32 = 0x7fffffff
} xfer_copy_kind;

/** What the backend's "device" is: decides which kernels a tool or user runs on device views. */
typedef enum xfer_device_kind {
    XFER_DEVICE_KIND_HOST = 0, /**< an emulated device in host memory (the host backend) */
    XFER_DEVICE_KIND_CUDA = 1, /**< a CUDA GPU; device pointers are CUDA device pointers */
    XFER_DEVICE_KIND_FORCE_INT32 = 0x7fffffff
} xfer_device_kind;

/** Flags for xfer_alloc (bitwise OR). Unknown bits give XFER_ERROR_INVALID_ARGUMENT.
    Hints a backend cannot use are accepted and ignored. */
#define XFER_ALLOC_DEFAULT 0u
/** managed: cudaMemAdvise(cudaMemAdviseSetReadMostly). */
#define XFER_ALLOC_READ_MOSTLY 0x1u
/** managed: cudaMemAdvise(cudaMemAdviseSetPreferredLocation, the device). */
#define XFER_ALLOC_PREFER_DEVICE 0x2u
/** managed: cudaMemAdvise(cudaMemAdviseSetPreferredLocation, the host). Exclusive with PREFER_DEVICE. */
#define XFER_ALLOC_PREFER_HOST 0x4u
/** The buffer can be exported to another process of this machine (xfer_buffer_export) and
    handed to communication libraries that register memory (NCCL, UCX, MPI). host: both views
    are shared memory (one memfd). pinned, pageable: the host view is a memfd (page-locked with
    cudaHostRegister on pinned) and the device view a CUDA virtual-memory allocation
    (cuMemCreate with a POSIX file descriptor handle, the fabric handle too where the driver
    grants it, GPUDirect RDMA capable where the device supports it, the recommended
    granularity: the rules NCCL's zero-copy registration asks for); xfer_buffer_get_share_info
    says what was granted. A backend that cannot export (managed, zerocopy) answers
    XFER_ERROR_NOT_SUPPORTED and allocates nothing. */
#define XFER_ALLOC_SHAREABLE 0x8u

/** Flags for xfer_event_create. */
#define XFER_EVENT_DEFAULT 0u
/** No timestamp is taken (cudaEventDisableTiming): cheaper; xfer_event_elapsed_ms then
    returns XFER_ERROR_INVALID_STATE. */
#define XFER_EVENT_DISABLE_TIMING 0x1u

/** Capability bits in xfer_context_info.caps. */
/** The host view and the device view are the same memory (managed, zero-copy): a device
    kernel may work on the host view's memory directly. */
#define XFER_CAP_SHARED_VIEW 0x1u
/** Buffer copies are truly asynchronous with respect to the host (DMA from page-locked memory). */
#define XFER_CAP_ASYNC_COPY 0x2u
/** Buffer copies move no bytes (zero-copy): they only keep stream order. */
#define XFER_CAP_NO_COPY 0x4u
/** Buffer copies migrate pages (managed memory prefetch) instead of copying between two allocations. */
#define XFER_CAP_MIGRATES 0x8u

typedef struct xfer_context_s *xfer_context; /**< one backend bound to one device */
typedef struct xfer_buffer_s *xfer_buffer;   /**< one logical array with a host and a device view */
typedef struct xfer_stream_s *xfer_stream;   /**< an in-order queue of work */
typedef struct xfer_event_s *xfer_event;     /**< a marker in a stream: completion and time */

/** One backend as found on the plugin search path. Strings live as long as the process. */
typedef struct xfer_backend_info {
    const char *name;        /**< e.g. "pinned" */
    const char *description; /**< one line; "" when the plugin could not be loaded */
    const char *path;        /**< the plugin file */
    int available;           /**< 1: xfer_open can use it; 0: see reason */
    const char *reason;      /**< why it is unavailable ("" when available) */
    int device_count;        /**< devices the backend can open (0 when unavailable) */
    xfer_device_kind device_kind;
    unsigned abi_major; /**< plugin ABI the plugin was built for (0 if it did not load) */
    unsigned abi_minor;
} xfer_backend_info;

/** Properties of the device a context is bound to. Fields a backend cannot know are 0 / "". */
typedef struct xfer_device_info {
    char name[256]; /**< e.g. "NVIDIA H200", or "host (emulated)" */
    int ordinal;    /**< device index as given to xfer_open */
    xfer_device_kind kind;
    uint64_t total_memory; /**< bytes */
    uint64_t free_memory;  /**< bytes, at the time of the call */
    int compute_major;     /**< CUDA compute capability, 0 for host */
    int compute_minor;
    int multiprocessors;           /**< SM count (host: hardware threads) */
    int pcie_generation;           /**< current PCIe link generation, 0 if unknown */
    int pcie_width;                /**< current PCIe link width (lanes), 0 if unknown */
    char pci_bus_id[32];           /**< e.g. "0000:1b:00.0", "" if none */
    int async_engine_count;        /**< copy engines (cudaDevAttrAsyncEngineCount) */
    int concurrent_managed_access; /**< cudaDevAttrConcurrentManagedAccess */
    int can_map_host_memory;       /**< cudaDevAttrCanMapHostMemory */
    int unified_addressing;        /**< cudaDevAttrUnifiedAddressing */
    int driver_version;            /**< cudaDriverGetVersion, e.g. 13000; 0 for host */
    int runtime_version;           /**< cudaRuntimeGetVersion */
} xfer_device_info;

/** What a context is. Strings live as long as the context. */
typedef struct xfer_context_info {
    const char *backend; /**< backend name */
    int device;          /**< device index */
    xfer_device_kind device_kind;
    unsigned caps; /**< XFER_CAP_* bits */
} xfer_context_info;

/** Where a configuration value came from. */
typedef enum xfer_param_source {
    XFER_PARAM_DEFAULT = 0,     /**< the backend's declared default */
    XFER_PARAM_FILE = 1,        /**< the XFER_CONFIG file */
    XFER_PARAM_ENV = 2,         /**< an environment variable */
    XFER_PARAM_CALIBRATION = 3, /**< derived from this machine's calibration (xfer_calibrate) */
    XFER_PARAM_SOURCE_FORCE_INT32 = 0x7fffffff
} xfer_param_source;

/** One configuration parameter with its effective value. Strings live until the next call
    of xfer_param_info on the same thread (copy them to keep them). */
typedef struct xfer_param_info {
    const char *section; /**< "" for top-level keys (backend, device, plugin_path), else the backend name */
    const char *name;    /**< key in the file, e.g. "chunk_size" */
    const char *env;     /**< environment variable that overrides it, e.g. "XFER_PAGEABLE_CHUNK_SIZE" */
    const char *type;    /**< "int", "size" (bytes, accepts KiB/MiB/GiB/KB/MB/GB), "bool", "string" */
    const char *value;   /**< effective value as text (sizes in bytes) */
    const char *default_value;
    const char *help;
    xfer_param_source source;
} xfer_param_info;

/** Host function queued on a stream (see xfer_stream_launch_host_func). */
typedef void (*xfer_host_fn)(void *user_data);

/* ------------------------------------------------------ version and errors */

/** Library version (the one loaded at run time). Returns XFER_ERROR_INVALID_ARGUMENT if any
    pointer is NULL. Thread-safe. */
XFER_API xfer_status xfer_get_version(int *major, int *minor, int *patch);

/** A constant English name for a status, e.g. "XFER_ERROR_OUT_OF_BOUNDS". Never NULL
    ("XFER_ERROR_UNKNOWN_STATUS" for values not defined). Thread-safe. */
XFER_API const char *xfer_status_string(xfer_status st);

/** Detail of the last failure on the calling thread: what was wrong, and for backend
    failures the native call and its code (e.g. "cudaMalloc(268435456 bytes): out of memory
    (cudaErrorMemoryAllocation=2)"). "" if no call on this thread has failed yet. A successful
    call does not clear it. The string is valid until the next failing call on this thread. */
XFER_API const char *xfer_last_error(void);

/* ---------------------------------------------------------------- backends */

/** Number of backends found on the plugin search path (available or not), every one of them
    whatever XFER_BACKEND or the configuration's `backend` names (those only choose what
    xfer_open(NULL, ...) opens; a name that matches no backend is xfer_open's
    XFER_ERROR_BACKEND_NOT_FOUND), searched now:
    XFER_PLUGIN_PATH (colon-separated), then the configuration's plugin_path, then lib/xfer/
    next to libxfer.so (resolved to an absolute path once, when libxfer.so is loaded). The
    current directory is never searched. Plugins found are loaded once (every symbol bound at
    load: RTLD_NOW) and stay loaded. A plugin file that another user could replace is listed
    unavailable with the reason and never opened, unless XFER_PLUGIN_ALLOW_UNSAFE=1: the file,
    its folder or any folder above it owned by a user other than root and this process's
    (effective) user, or writable by its group or by others (a folder above with the sticky
    bit, as /tmp, excepted), and a symbolic link to a file outside the folder searched.
    Before a file is opened in this process it is opened in a check process
    (lib/xfer/xfer-plugin-check, started with posix_spawn, ~10 ms per file, once per process),
    which reports through a pipe once the file's constructors and entry point have returned:
    a file whose check process ends without that report (abort, crash, exit) or runs for more
    than 30 s is listed unavailable with the signal or exit status where it can be collected,
    and never opened here, whatever the application does with SIGCHLD; so is a file whose check
    cannot be started. XFER_PLUGIN_CHECK=0 skips the check, as does a missing checker file.
    A file with the name of a backend in lib/xfer/ (a built-in one) found in another folder is
    listed unavailable, saying so, and never opened: the built-in one is used (listed after it),
    unless XFER_PLUGIN_OVERRIDE=1, which lets the first file of a name win.
    XFER_PLUGIN_PATH, XFER_CONFIG, XFER_PLUGIN_ALLOW_UNSAFE, XFER_PLUGIN_CHECK and
    XFER_PLUGIN_OVERRIDE are ignored in set-user-ID and
    set-group-ID programs (secure_getenv). The XFER_CONFIG file must be a regular file of at
    most 1 MiB without NUL bytes, else XFER_ERROR_CONFIG. Returns XFER_ERROR_INVALID_ARGUMENT (count NULL), XFER_ERROR_CONFIG
    (the XFER_CONFIG file is malformed). Thread-safe. */
XFER_API xfer_status xfer_backend_count(int *count);

/** Information on backend `index` (0 <= index < xfer_backend_count), in search order.
    Returns XFER_ERROR_INVALID_ARGUMENT (info NULL, or index out of range), XFER_ERROR_CONFIG.
    Thread-safe. */
XFER_API xfer_status xfer_backend_get_info(int index, xfer_backend_info *info);

/** Configuration parameter `index` of the effective configuration: the top-level keys,
    then the declared parameters of every backend found (as xfer_backend_count), with value
    and source. Returns
    XFER_ERROR_INVALID_ARGUMENT (info NULL or index out of range) and XFER_ERROR_CONFIG
    (the configuration is invalid; xfer_last_error names the key and line). Thread-safe. */
XFER_API xfer_status xfer_param_count(int *count);
XFER_API xfer_status xfer_param_get_info(int index, xfer_param_info *info);

/* ---------------------------------------------------------------- contexts */

/** Opens a context: `backend` bound to device `device`.
    backend: a backend name ("host", "pageable", "pinned", "managed", "zerocopy"), or NULL
      to take it from the environment (XFER_BACKEND) or the XFER_CONFIG file's `backend`
      key, or, when neither names one, the first available of pinned, pageable, managed,
      zerocopy, host.
    device: device index >= 0, or -1 to take it from XFER_DEVICE / the file's `device`
      key (0 when neither sets it).
    Backend parameters come from the XFER_CONFIG file's [backend] section overridden by
    XFER_<BACKEND>_<PARAM> environment variables, read at this call.
    When a backend is named (here, by XFER_BACKEND or by the file), only that backend's
    plugin file is opened: the other plugins on the search path run no code (their
    constructors included), and the file's sections for them are checked by name only.
    Returns XFER_ERROR_INVALID_ARGUMENT (ctx NULL, device < -1),
    XFER_ERROR_BACKEND_NOT_FOUND (no plugin of that name), XFER_ERROR_BACKEND_UNAVAILABLE
    (plugin failed to load or probe; message says why), XFER_ERROR_BACKEND_ABI,
    XFER_ERROR_NO_DEVICE (no such device), XFER_ERROR_CONFIG, XFER_ERROR_OUT_OF_MEMORY,
    XFER_ERROR_BACKEND (a native call failed). CUDA backends: cudaSetDevice +
    cudaFree(0) to create the primary context. Thread-safe. */
XFER_API xfer_status xfer_open(const char *backend, int device, xfer_context *ctx);

/** Closes a context: synchronises its streams, then frees every buffer, stream and event
    it still owns (their handles become invalid). Returns XFER_ERROR_INVALID_HANDLE,
    XFER_ERROR_BACKEND (a native call failed while releasing; the handle is closed anyway).
    Thread-safe; do not use the context's objects from other threads meanwhile. */
XFER_API xfer_status xfer_close(xfer_context ctx);

/** Describes a context. Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT (info NULL). */
XFER_API xfer_status xfer_context_get_info(xfer_context ctx, xfer_context_info *info);

/** Describes the context's device (cudaGetDeviceProperties, cudaMemGetInfo, cudaDeviceGetAttribute).
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_device_get_info(xfer_context ctx, xfer_device_info *info);

/* ------------------------------------------ calibration and derived values */

/*
 * Copies of user (pageable) host memory choose their path per copy from measurements of this
 * machine, not from knobs: the driver's copy, the pageable backend's staging engine, or
 * page-locking the range (cudaHostRegister) when the range is copied again and the registration
 * pays back. The measurements (a calibration: the DMA rate from page-locked memory, the
 * driver's pageable copy and the staging engine per size and direction, what a registration
 * costs per call and per byte, one thread's fill rate) are taken once per GPU, in about a
 * second, the first time a CUDA backend opens that GPU, and kept in a file (the `calibration`
 * key, XFER_CALIBRATION: a folder, "" for $XDG_CACHE_HOME/xfer or ~/.cache/xfer, or "off")
 * named by the GPU's UUID. The file holds while the GPU, the driver, xfer's version and the
 * host's CPU are unchanged; a change makes the next open measure again. With "off", or where
 * measuring fails, the backends' declared defaults decide.
 *
 * A backend's values split in two: the parameters a user owns (limits such as pin_limit and
 * host_threads, and `path`, an override that forces one path), and the values the backend
 * derives (crossovers, chunk and slot sizes, ...) from the calibration or its declared
 * defaults. A derived value may still be set like a parameter (config key, environment
 * variable): experts and tests pin one that way. xfer_context_get_setting lists both kinds for
 * an open context with where each value came from.
 */

/** xfer_calibrate: measure even when a calibration that still holds is kept. */
#define XFER_CALIBRATE_FORCE 0x1u

/** What xfer_calibrate did. Size-prefixed: set struct_size = sizeof(xfer_calibration_info); fields
    are appended. Strings stay valid until the calling thread's next xfer_calibrate. */
typedef struct xfer_calibration_info {
    size_t struct_size; /**< in: sizeof(xfer_calibration_info) as the caller was built */
    int measured;       /**< 1: measured by this process (this call, or the first open of a context of
                             this GPU, which measures); 0: one kept by an earlier process still held */
    double seconds;     /**< how long the measuring took (of the kept one, when read) */
    const char *file;   /**< where it is kept; "" with calibration = off (measured, not kept) */
    const char *json;   /**< the calibration as JSON: key (GPU UUID, driver, runtime, xfer version, CPU),
                             curves [[bytes, seconds], ...] per way (dma, driver, staged) and direction
                             (to_device, to_host), register / unregister cost (call_seconds,
                             byte_seconds), fill_bytes_per_second */
} xfer_calibration_info;

/** Calibrates ctx's device: reads the kept calibration if it still holds, else (or with
    XFER_CALIBRATE_FORCE) measures now (about a second; the device should be otherwise idle) and
    keeps it for every later context of this GPU. ctx itself keeps the derived values it opened
    with; contexts opened afterwards derive theirs from the new calibration. flags:
    XFER_CALIBRATE_* bits. Returns XFER_ERROR_INVALID_HANDLE (ctx), XFER_ERROR_INVALID_ARGUMENT
    (info NULL, info->struct_size too small, unknown flag bits), XFER_ERROR_NOT_SUPPORTED (the
    backend has nothing to calibrate: host), XFER_ERROR_OUT_OF_MEMORY (no room for the
    measuring buffers), XFER_ERROR_BACKEND (a CUDA call failed, or the file could not be
    written; the message names which). Thread-safe; other work on the device meanwhile skews
    the measurement. CUDA calls: cudaHostAlloc, cudaMalloc, cudaMemcpyAsync, cudaHostRegister,
    cudaHostUnregister, and the staging engine's copies on the pageable backend. */
XFER_API xfer_status xfer_calibrate(xfer_context ctx, unsigned flags, xfer_calibration_info *info);

/** Number of values ctx uses: its backend's parameters, then the values the backend derives.
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT (count NULL). Thread-safe. */
XFER_API xfer_status xfer_context_setting_count(xfer_context ctx, int *count);

/** Value `index` (0 <= index < xfer_context_setting_count) that ctx uses, with where it came
    from: a parameter's as xfer_param_get_info gives it (XFER_PARAM_DEFAULT, _FILE, _ENV); a
    derived value's XFER_PARAM_CALIBRATION (this machine's calibration), XFER_PARAM_DEFAULT (the
    declared default: no calibration, or the value does not depend on one), or _FILE / _ENV (set
    by the user). *derived (may be NULL) is 1 for a derived value, 0 for a parameter. Strings
    live until the calling thread's next xfer_context_get_setting or xfer_param_get_info.
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT (info NULL, index out of
    range). Thread-safe. */
XFER_API xfer_status xfer_context_get_setting(xfer_context ctx, int index, xfer_param_info *info, int *derived);

/* ----------------------------------------------------------------- buffers */

/** Allocates a buffer of `bytes` bytes with a host view and a device view laid out by the
    backend (see DESIGN.md: pageable = page-aligned host memory + cudaMalloc; pinned =
    cudaHostAlloc + cudaMalloc; managed = one cudaMallocManaged pointer; zero-copy =
    cudaHostAlloc(cudaHostAllocMapped) + cudaHostGetDevicePointer; host = two host allocations).
    Contents are uninitialised. flags: XFER_ALLOC_* bits.
    Returns XFER_ERROR_INVALID_HANDLE (ctx), XFER_ERROR_INVALID_ARGUMENT (buf NULL, unknown
    flag bits, PREFER_DEVICE together with PREFER_HOST), XFER_ERROR_INVALID_SIZE (bytes 0, or
    bytes > PTRDIFF_MAX), host: each buffer takes its size twice from RAM (host view and emulated
    device view), so its device holds half the RAM unless device_memory sets it,
    XFER_ERROR_OUT_OF_MEMORY (host or device allocation failed; nothing is leaked and the
    context stays usable), XFER_ERROR_BACKEND. Thread-safe. */
XFER_API xfer_status xfer_alloc(xfer_context ctx, size_t bytes, unsigned flags, xfer_buffer *buf);

/** Frees a buffer. Queued work that uses it (buffer copies and raw copies of its views) is
    never disturbed: see "Releasing with work still queued" above (host: deferred in stream
    order; CUDA backends: cudaDeviceSynchronize, then cudaFree / cudaFreeHost).
    Returns XFER_ERROR_INVALID_HANDLE (NULL, already freed, not a buffer),
    XFER_ERROR_BACKEND (the handle is freed anyway). Thread-safe. */
XFER_API xfer_status xfer_free(xfer_buffer buf);

/** Host view (CPU-addressable) and device view (pointer for device kernels) of a buffer, and
    its size in bytes. Return NULL / 0 for an invalid handle (and set xfer_last_error).
    On managed the two views are the same pointer; on zero-copy the device view maps the same
    memory. Thread-safe. */
XFER_API void *xfer_host_ptr(xfer_buffer buf);
XFER_API void *xfer_device_ptr(xfer_buffer buf);
XFER_API size_t xfer_buffer_size(xfer_buffer buf);

/** Queues a copy of bytes [offset, offset+bytes) of a buffer from its host view to its
    device view (XFER_TO_DEVICE) or back (XFER_TO_HOST) on stream `s`, and returns without
    waiting. Ordered after earlier work on `s`. The host view range must not be read or
    written by the host until the copy is known complete (event or stream synchronisation).
    Per backend: host = memcpy on the stream's worker thread; pinned = cudaMemcpyAsync (queued
    through the driver's cuMemcpyHtoDAsync / cuMemcpyDtoHAsync, which cost less host time a
    call; errors are the runtime's: a refused copy is handed to cudaMemcpyAsync);
    pageable = the path the copy policy chooses for the host view's pageable memory: the
    staging engine (host threads fill page-locked slots that the stream copies, in stream
    order: cuStreamBatchMemOp waits and writes, cudaMemcpyAsync; backends/pageable/README.md),
    cudaMemcpyAsync, or a DMA once the range is page-locked; managed = cudaMemPrefetchAsync
    to the device / to the host;
    zerocopy = nothing moves, only stream order is kept.
    Returns XFER_ERROR_INVALID_HANDLE (buf or s invalid, or from different contexts),
    XFER_ERROR_INVALID_ARGUMENT (dir not XFER_TO_DEVICE / XFER_TO_HOST),
    XFER_ERROR_INVALID_SIZE (bytes 0, or offset + bytes overflows),
    XFER_ERROR_OUT_OF_BOUNDS (offset + bytes > buffer size), XFER_ERROR_BACKEND.
    Thread-safe. */
XFER_API xfer_status xfer_copy_async(xfer_buffer buf, xfer_direction dir, size_t offset, size_t bytes, xfer_stream s);

/** xfer_copy_async on an internal stream of the buffer's context, then waits for it.
    Not ordered with respect to work on user streams: synchronise those first.
    Returns the statuses of xfer_copy_async (s aside). Thread-safe. */
XFER_API xfer_status xfer_copy(xfer_buffer buf, xfer_direction dir, size_t offset, size_t bytes);

/* ------------------------------------------------------------- raw copies */

/** Queues a copy of `bytes` bytes from `src` to `dst` (any pointers the backend can reach:
    host pointers, or device pointers of this context's device) on stream `s`, and returns
    without waiting. Maps to cudaMemcpyAsync on CUDA backends (queued through the driver's
    cuMemcpyHtoDAsync / cuMemcpyDtoHAsync / cuMemcpyDtoDAsync / cuMemcpyAsync, whose host time
    a call is lower; a copy the driver refuses is handed to cudaMemcpyAsync, so statuses and
    messages are the runtime's); host: memcpy on the stream's worker.
    CUDA backends look each pointer up (what memory it is decides the path and checks `kind`):
    a pointer inside a buffer of the context's backend is answered from what xfer recorded at
    xfer_alloc, without a driver call; any other pointer costs one cudaPointerGetAttributes.
    The copy is issued with the explicit cudaMemcpyKind the pointers
    imply, cudaMemcpyDefault for managed and mapped (zero-copy) memory.
    A copy between pageable host memory and device memory takes the path this machine's
    calibration says is fastest for it (see "calibration and derived values"): the driver's
    copy, the pageable backend's staging engine, or the registration cache (the host range
    page-locked with cudaHostRegister, now or in the background once the range is copied again,
    then copied as DMA; parameter pin_limit bounds what it page-locks, least recently used
    ranges are unregistered; xfer_registration_get_stats). Each copy's path and reason reach
    the copy observer and the context's statistics.
    Both ranges must stay unmodified until the copy is done; memory the caller owns must stay
    alive until then, while a buffer's views may be freed meanwhile (the release waits for
    the copy: see "Releasing with work still queued" above).
    Returns XFER_ERROR_INVALID_HANDLE (ctx or s invalid or foreign), XFER_ERROR_INVALID_ARGUMENT
    (dst or src NULL, kind unknown, [dst, dst + bytes) and [src, src + bytes) overlap: refused
    on every backend, nothing queued), XFER_ERROR_INVALID_SIZE (bytes 0, bytes > PTRDIFF_MAX, or
    dst or src + bytes wraps around the address space), XFER_ERROR_BACKEND
    (e.g. cudaErrorInvalidValue for a kind that does not match the pointers). Thread-safe. */
XFER_API xfer_status xfer_memcpy_async(xfer_context ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind kind,
                                       xfer_stream s);

/** Queues `count` copies (dsts[i] <- srcs[i], sizes[i] bytes), all of one kind, on stream `s`
    as one batch. CUDA backends pack the small copies between host and device memory (each at
    most the backend parameter batch_pack_max bytes): per group, one DMA through the context's
    staging slots plus one gather/scatter kernel (for page-locked host memory the kernel reads
    or writes it directly, without staging). Pageable sources of copies to the device are
    gathered during the call (as cudaMemcpyAsync reads pageable memory at call time) unless
    earlier work on `s` may still write host memory: then in stream order; pageable
    destinations are written in stream order (cuda_common/src/batch.hpp says how). The general
    rule holds all the same: sources stay unmodified until the batch is done. Batches of one context from several threads are gathered one
    after another. A copy that starts
    in page-locked memory registered elsewhere (another context, cudaHostRegister) and runs
    past the registration goes in pieces, as xfer_memcpy_async copies it. The other copies go
    to the copy engine: cudaMemcpyBatchAsync where the runtime has it, else one
    cudaMemcpyAsync each.
    The copies of a batch may run in any order relative to each other; the batch as a whole is
    ordered after earlier work on `s`. Arrays are read during the call only.
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT (an array NULL, an entry NULL
    or an entry whose two ranges overlap (message gives its index), kind unknown), XFER_ERROR_INVALID_SIZE (count 0, a size 0 or an
    impossible entry as for xfer_memcpy_async: message gives its index; sizes adding up past
    PTRDIFF_MAX), XFER_ERROR_BACKEND. Releasing a buffer whose views a queued batch uses
    follows "Releasing with work still queued" above. Nothing is queued when it fails validation.
    Thread-safe. */
XFER_API xfer_status xfer_memcpy_batch_async(xfer_context ctx, void *const *dsts, const void *const *srcs,
                                             const size_t *sizes, size_t count, xfer_copy_kind kind, xfer_stream s);

/* --------------------------------------------------- registered user memory */

/** Flags for xfer_register (bitwise OR). Unknown bits give XFER_ERROR_INVALID_ARGUMENT. */
#define XFER_REGISTER_DEFAULT 0u
/** The device only reads the range (host-to-device copies): CUDA backends pass
    cudaHostRegisterReadOnly where the device supports it (cudaDevAttrHostRegisterReadOnlySupported),
    which also allows memory the process mapped read-only; elsewhere the flag is accepted and
    the range is registered read-write. */
#define XFER_REGISTER_READ_ONLY 0x1u

/** Page-locks (registers) `bytes` bytes of ordinary host memory at `ptr` that the caller
    allocated (malloc, new, a NumPy or Fortran array) for the context's device, so that copies
    from and to it run as DMA at page-locked speed (xfer_memcpy_async, and the kernels of
    xfer_memcpy_batch_async read it directly). The memory stays the caller's: keep it alive
    until xfer_unregister (or xfer_close, which unregisters what is left).
    Registration is slow (the driver pins every page: tens of milliseconds per GiB) and pinned
    memory is taken from the machine, so register long-lived buffers once, not per copy.
    ptr: any address (it need not be page-aligned); bytes > 0.
    CUDA backends: cudaHostRegister(ptr, bytes, cudaHostRegisterPortable [| ReadOnly]); a range
    larger than the driver takes in one call is registered in pieces, and if one piece fails
    the pieces already registered are unregistered again (nothing stays registered).
    host backend: bookkeeping only (the same checks and statuses, nothing is page-locked).
    Returns XFER_ERROR_INVALID_HANDLE (ctx), XFER_ERROR_INVALID_ARGUMENT (ptr NULL, unknown flag
    bits), XFER_ERROR_INVALID_SIZE (bytes 0, or ptr + bytes overflows the address space),
    XFER_ERROR_INVALID_STATE (the range overlaps one already registered with this context, or
    memory that is already page-locked: cudaHostAlloc memory or a cudaHostRegister made outside
    xfer; the message says which), XFER_ERROR_OUT_OF_MEMORY (the system refused to lock that
    much memory, e.g. RLIMIT_MEMLOCK), XFER_ERROR_NOT_SUPPORTED (the backend or device cannot
    register host memory: cudaDevAttrHostRegisterSupported is 0), XFER_ERROR_BACKEND.
    Nothing is registered when it fails. Thread-safe. */
XFER_API xfer_status xfer_register(xfer_context ctx, void *ptr, size_t bytes, unsigned flags);

/** Unregisters a range registered with xfer_register on this context; `ptr` is the address
    given there. Waits for the context's queued work first (cudaDeviceSynchronize), since a
    queued DMA may still read or write the range; then cudaHostUnregister (each piece).
    Returns XFER_ERROR_INVALID_HANDLE (ctx), XFER_ERROR_INVALID_ARGUMENT (ptr NULL, or not the
    start of a range registered with this context), XFER_ERROR_NOT_SUPPORTED, XFER_ERROR_BACKEND
    (the range is forgotten anyway), XFER_ERROR_INVALID_STATE (called from a host function,
    which would wait for its own stream). host backend: waits for the work queued so far on
    every stream of the context, then forgets the range. Thread-safe. */
XFER_API xfer_status xfer_unregister(xfer_context ctx, void *ptr);

/** What a context has registered: explicitly (xfer_register) and through its automatic
    registration cache (the pinned backend registers unregistered user memory that
    xfer_memcpy_async copies, once per range; see backends/pinned/README.md). */
typedef struct xfer_registration_stats {
    uint64_t registered_ranges; /**< ranges registered with xfer_register and not yet unregistered */
    uint64_t registered_bytes;  /**< their bytes */
    uint64_t cache_hits;        /**< copies served from a cached registration */
    uint64_t cache_misses;      /**< copies whose range was not cached (registered now, or copied without) */
    uint64_t cache_evictions;   /**< cached ranges unregistered to stay under the byte limit, or found stale */
    uint64_t cache_ranges;      /**< ranges the cache holds now */
    uint64_t cache_bytes;       /**< bytes the cache holds page-locked now */
    uint64_t cache_limit_bytes; /**< the cache's byte limit (0: no cache on this backend) */
} xfer_registration_stats;

/** Fills `stats` for the context (all counters since xfer_open). Backends without a cache
    report zeros for the cache_* fields. Returns XFER_ERROR_INVALID_HANDLE (ctx),
    XFER_ERROR_INVALID_ARGUMENT (stats NULL), XFER_ERROR_NOT_SUPPORTED. Thread-safe. */
XFER_API xfer_status xfer_registration_get_stats(xfer_context ctx, xfer_registration_stats *stats);

/* ----------------------------------------------------------------- streams */

/** Creates a stream (CUDA: cudaStreamCreateWithFlags(cudaStreamNonBlocking); host: a queue
    served by its own worker thread). Returns XFER_ERROR_INVALID_HANDLE,
    XFER_ERROR_INVALID_ARGUMENT (s NULL), XFER_ERROR_OUT_OF_MEMORY, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_stream_create(xfer_context ctx, xfer_stream *s);

/** Waits for the stream's queued work, then destroys it (cudaStreamSynchronize +
    cudaStreamDestroy). Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_stream_destroy(xfer_stream s);

/** Blocks until all work queued on the stream is done (cudaStreamSynchronize).
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND (an earlier asynchronous failure
    surfaces here). */
XFER_API xfer_status xfer_stream_synchronize(xfer_stream s);

/** XFER_SUCCESS if all queued work is done, XFER_ERROR_NOT_READY if not (cudaStreamQuery);
    XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND. Never blocks. */
XFER_API xfer_status xfer_stream_query(xfer_stream s);

/** Makes future work on `s` wait until event `e` completes (cudaStreamWaitEvent). Waiting on
    an event never recorded is a no-op (as in CUDA). `e` and `s` must belong to the same
    context. Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_stream_wait_event(xfer_stream s, xfer_event e);

/** Queues a host function on the stream (cudaLaunchHostFunc): it runs once earlier work is
    done, and later work waits for it to return. It must not call xfer or CUDA functions; the
    calls that could wait for the stream running it (xfer_stream_synchronize,
    xfer_stream_destroy, xfer_event_synchronize, xfer_copy, xfer_free, xfer_close) return
    XFER_ERROR_INVALID_STATE there and change nothing, instead of deadlocking.
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT (fn NULL), XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_stream_launch_host_func(xfer_stream s, xfer_host_fn fn, void *user_data);

/** The backend's own stream object, for launching kernels on it: a cudaStream_t for CUDA
    backends; for host, an opaque pointer that only identifies the stream. NULL for an
    invalid handle (sets xfer_last_error). Valid until xfer_stream_destroy. Thread-safe. */
XFER_API void *xfer_stream_native(xfer_stream s);

/** Wraps a stream the application owns as an xfer_stream of `ctx`, so that xfer's work queues
    on it in stream order with the application's own work (its kernels, a framework's copies),
    under the same contract as on a stream xfer created: every function that takes an
    xfer_stream accepts it, pageable staging included.
    native: on CUDA backends a cudaStream_t of ctx's device -- one the application created
      (cudaStreamCreate*, torch.cuda.Stream, cupy.cuda.Stream), cudaStreamLegacy (or NULL,
      which means the same: the legacy default stream) or cudaStreamPerThread (the per-thread
      default stream of whichever thread queues the work: queue from one thread).
    The native stream must stay alive until xfer_stream_destroy of the wrapper, which waits for
    the work queued on it so far (cudaStreamSynchronize: the application's work too) and never
    destroys the native stream; xfer_close does the same for wrappers left open.
    xfer_stream_native of the wrapper returns `native` (cudaStreamLegacy for NULL).
    host backend: XFER_ERROR_NOT_SUPPORTED (its streams are worker threads; there is no native
    stream to wrap).
    Returns XFER_ERROR_INVALID_HANDLE (ctx), XFER_ERROR_INVALID_ARGUMENT (s NULL),
    XFER_ERROR_INVALID_STATE (`native` already is a live stream of this context, wrapped or
    created by xfer: one xfer_stream per native stream and context), XFER_ERROR_NOT_SUPPORTED,
    XFER_ERROR_INVALID_ARGUMENT (a stream of another device than ctx's), XFER_ERROR_BACKEND
    (cudaStreamGetDevice refused the handle). Thread-safe. */
XFER_API xfer_status xfer_stream_wrap(xfer_context ctx, void *native, xfer_stream *s);

/* ------------------------------------------------------------------ events */

/** Creates an event (cudaEventCreateWithFlags; XFER_EVENT_DISABLE_TIMING -> cudaEventDisableTiming).
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_INVALID_ARGUMENT (e NULL, unknown flags),
    XFER_ERROR_OUT_OF_MEMORY, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_event_create(xfer_context ctx, unsigned flags, xfer_event *e);

/** Destroys an event (cudaEventDestroy); work that waits on it is unaffected. Returns without
    waiting for threads blocked in xfer_event_synchronize on it: they return when the work
    before the record completes, and the native event is destroyed when the last of them has
    left (so destroying never deadlocks with a waiter whose work the destroying thread would
    let run later). Calls that start after it get XFER_ERROR_INVALID_HANDLE.
    Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_event_destroy(xfer_event e);

/** Records the event at the current end of stream `s` (cudaEventRecord); re-recording moves it.
    Returns XFER_ERROR_INVALID_HANDLE (either handle, or different contexts), XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_event_record(xfer_event e, xfer_stream s);

/** Blocks until the work before the event's last record is done (cudaEventSynchronize).
    An event never recorded completes at once. Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_event_synchronize(xfer_event e);

/** XFER_SUCCESS if the event has completed (or was never recorded), XFER_ERROR_NOT_READY if
    not (cudaEventQuery). Returns XFER_ERROR_INVALID_HANDLE, XFER_ERROR_BACKEND. Never blocks. */
XFER_API xfer_status xfer_event_query(xfer_event e);

/** Milliseconds between two completed events (cudaEventElapsedTime; resolution about 0.5 us).
    Returns XFER_ERROR_INVALID_HANDLE (either handle, or different contexts),
    XFER_ERROR_INVALID_ARGUMENT (ms NULL), XFER_ERROR_INVALID_STATE (an event was never
    recorded or was created with XFER_EVENT_DISABLE_TIMING), XFER_ERROR_NOT_READY (an event
    has not completed yet), XFER_ERROR_BACKEND. */
XFER_API xfer_status xfer_event_elapsed_ms(xfer_event start, xfer_event end, float *ms);

/** The backend's own event object, for the application's own calls: a cudaEvent_t on CUDA
    backends (e.g. cudaStreamWaitEvent(app_stream, native, 0) to order the application's work
    after xfer's); for host, an opaque pointer that only identifies the event. NULL for an
    invalid handle (sets xfer_last_error). Valid until xfer_event_destroy. Thread-safe. */
XFER_API void *xfer_event_native(xfer_event e);

/* ------------------------------------------------ which path each copy took */

/*
 * Every copy call says how its bytes moved. A backend tags each copy it queues (a buffer copy,
 * a raw copy, each entry of a batch) with exactly one path; a copy that goes in pieces (a
 * staged copy's head through the driver, a copy straddling a registration) tags each piece
 * with its own. The tags reach three places, all per context:
 *  - statistics (xfer_context_get_stats): per path, the copies, bytes and host time. Always on:
 *    a call reads the clock twice and adds to counters only its own thread writes;
 *  - a copy observer (xfer_set_copy_observer), or the built-in log of XFER_LOG=copies: one
 *    record per path a call used, after the call queued its copies;
 *  - the slow-path policy (xfer_context_set_slow_path, config key slow_path): a copy whose path
 *    is slow (xfer_path_is_slow) is allowed, reported, or refused before anything is queued.
 */

/** How the bytes of one copy (or one piece of it) move. Values never change once released;
    new paths are appended. */
typedef enum xfer_copy_path {
    /** The backend did not say (a plugin built for plugin ABI 1.3 or older). */
    XFER_PATH_UNREPORTED = 0,
    /** The CPU copies the bytes (memcpy): the host backend, and host-to-host copies. */
    XFER_PATH_HOST_MEMCPY = 1,
    /** A copy-engine DMA to or from page-locked memory: pinned buffers, ranges registered with
        xfer_register, cudaHostAlloc memory. The fastest host<->device path. */
    XFER_PATH_PINNED_DMA = 2,
    /** A DMA over user memory that the registration cache had page-locked by an earlier copy. */
    XFER_PATH_CACHED_REGISTRATION = 3,
    /** User memory page-locked by this call (cudaHostRegister, kept in the registration cache),
        then a DMA: the registration costs more than one copy and pays off on reuse. */
    XFER_PATH_NEW_REGISTRATION = 4,
    /** cudaMemcpyAsync of pageable memory: the driver stages it through its own small buffers on
        one thread (a fraction of a DMA's rate: docs/performance.md) and may wait for the stream. */
    XFER_PATH_DRIVER_PAGEABLE = 5,
    /** The pageable backend's staging engine: host threads copy through a page-locked arena while
        the copy engine moves the chunks; the call returns once queued (staging = async). */
    XFER_PATH_STAGED = 6,
    /** The staging engine with staging = sync: the call returns once the user's memory was read
        (to the device) or written (to the host). */
    XFER_PATH_STAGED_SYNC = 7,
    /** Small copies of a batch packed together: gathered into a page-locked slot, one DMA, then
        scattered on the device by a kernel (or the reverse to the host). */
    XFER_PATH_PACKED = 8,
    /** Device memory to device memory of one device (the copy engine). */
    XFER_PATH_DEVICE_COPY = 9,
    /** Device memory of one device to another's (cudaMemcpyPeerAsync). */
    XFER_PATH_PEER = 10,
    /** Managed memory migrated to where it is wanted (cudaMemPrefetchAsync). */
    XFER_PATH_MANAGED_MIGRATE = 11,
    /** Managed memory moved to the host through a device or page-locked slot (the managed
        backend's to_host = dma and staged methods). */
    XFER_PATH_MANAGED_STAGED = 12,
    /** The driver copies managed memory (cudaMemcpyAsync on a managed pointer), faulting or
        migrating pages as it goes. */
    XFER_PATH_MANAGED_COPY = 13,
    /** Zero-copy: nothing moves; the device reaches the (mapped) host memory over the bus when it
        uses it. */
    XFER_PATH_MAPPED = 14,
    XFER_PATH_COUNT = 15, /**< number of paths of this version of xfer.h */
    XFER_COPY_PATH_FORCE_INT32 = 0x7fffffff
} xfer_copy_path;

/** Why a copy took its path. */
typedef enum xfer_path_reason {
    /** The path of this memory: nothing else applies (a pinned buffer's DMA, device memory, ...). */
    XFER_REASON_MEMORY = 0,
    /** Smaller than the size from which a faster path is measured (the pageable backend's
        staged_min_bytes, registration_min, batch_pack_max): the path taken is the fastest one
        for this size. */
    XFER_REASON_BELOW_CROSSOVER = 1,
    /** The backend has no faster path for this memory (e.g. pageable memory on the managed or
        zerocopy backend): register it, or use the pageable or pinned backend. */
    XFER_REASON_NO_FASTER_PATH = 2,
    /** The first copy of a range: the registration cache page-locks it for the copies to come
        (without a calibration, the pinned backend's rule for every copy from registration_min). */
    XFER_REASON_FIRST_USE = 3,
    /** A range already in the registration cache. */
    XFER_REASON_CACHE_HIT = 4,
    /** Page-locking the range would exceed pin_limit (or RLIMIT_MEMLOCK) even with every other
        range of the registration cache unregistered. */
    XFER_REASON_CACHE_FULL = 5,
    /** cudaHostRegister refused the range (a file mapping, memory the driver cannot lock, ...),
        or this process cannot prove a registered range's pages (/proc/self/pagemap). */
    XFER_REASON_REGISTRATION_FAILED = 6,
    /** A parameter chose it (path = driver, staged or registered; staging = sync; pin_limit = 0;
        to_host = ...). */
    XFER_REASON_CONFIGURED = 7,
    /** The copy runs past the end of a registration made elsewhere: the unregistered part goes
        on its own. */
    XFER_REASON_SPLIT = 8,
    /** By this machine's calibration (xfer_calibrate), the fastest way that page-locks nothing:
        the range was not copied before, or not often enough for a registration to pay back. */
    XFER_REASON_ONE_OFF = 9,
    /** The range is copied again and, by the calibration, its registration pays back: this copy
        page-locks it (XFER_PATH_NEW_REGISTRATION), or it is being page-locked in the background
        while this copy takes the staging engine or the driver. */
    XFER_REASON_REUSE = 10,
    /** By the calibration, page-locking the range and copying it as DMA is faster than any other
        way even for this one copy. */
    XFER_REASON_MEASURED_FASTEST = 11,
    XFER_REASON_COUNT = 12, /**< number of reasons of this version of xfer.h */
    XFER_PATH_REASON_FORCE_INT32 = 0x7fffffff
} xfer_path_reason;

/** Copies smaller than this never count as slow: below it every path costs about the same. */
#define XFER_SLOW_PATH_MIN_BYTES ((uint64_t)1 << 20)

/** The name of a path ("pinned_dma", "staged", ...: the names xfer-tool and the log print), or
    "unknown" for a value that is not an xfer_copy_path. Never NULL; static storage. */
XFER_API const char *xfer_copy_path_name(xfer_copy_path path);
/** The name of a reason ("below_crossover", "cache_full", ...), or "unknown". Never NULL. */
XFER_API const char *xfer_path_reason_name(xfer_path_reason reason);
/** What counts as slow, written once: 1 when `bytes` (one piece) taking `path` for `reason` is
    slow, else 0. Slow: the driver's pageable copy and a new registration, for at least
    XFER_SLOW_PATH_MIN_BYTES, unless the reason says the path is the fastest one measured for
    the copy (XFER_REASON_BELOW_CROSSOVER, XFER_REASON_ONE_OFF, XFER_REASON_REUSE,
    XFER_REASON_MEASURED_FASTEST). Pure; thread-safe. */
XFER_API int xfer_path_is_slow(xfer_copy_path path, xfer_path_reason reason, uint64_t bytes);

/** Per path, what a context's copies did. */
typedef struct xfer_path_stats {
    uint64_t copies;  /**< copies, batch entries and pieces that took the path */
    uint64_t bytes;   /**< their bytes */
    uint64_t host_ns; /**< host time inside the calls that queued them, nanoseconds (a call whose
                           bytes took several paths shares its time among them by bytes) */
} xfer_path_stats;

/** The layout version of xfer_context_stats this xfer.h describes. */
#define XFER_CONTEXT_STATS_VERSION 1u

/** A context's statistics since xfer_open (or xfer_context_reset_stats). Size-prefixed: set
    struct_size = sizeof(xfer_context_stats) before the call; a library newer than the caller's
    header fills only the fields that fit, an older one only the fields it knows (version and
    path_count say what was filled). Fields are appended, never moved. */
typedef struct xfer_context_stats {
    size_t struct_size;     /**< in: sizeof(xfer_context_stats) as the caller was built */
    uint32_t version;       /**< out: XFER_CONTEXT_STATS_VERSION of the library */
    uint32_t path_count;    /**< out: entries of paths[] filled (the library's XFER_PATH_COUNT, or
                                 fewer when struct_size is smaller) */
    uint64_t calls;         /**< copy calls that queued work (xfer_copy, xfer_copy_async,
                                 xfer_memcpy_async, xfer_memcpy_batch_async, the peer copies) */
    uint64_t slow_copies;   /**< pieces that took a slow path and were queued (policy allow or warn) */
    uint64_t refused_calls; /**< calls refused with XFER_ERROR_SLOW_PATH (policy refuse) */
    uint64_t registrations; /**< ranges page-locked: xfer_register and the registration cache */
    uint64_t registered_bytes;
    uint64_t registration_ns; /**< host time of those registrations, nanoseconds */
    uint64_t unregistrations; /**< ranges unlocked: xfer_unregister, cache evictions, stale ranges */
    uint64_t unregistered_bytes;
    uint64_t unregistration_ns;             /**< host time of those, nanoseconds */
    xfer_path_stats paths[XFER_PATH_COUNT]; /**< indexed by xfer_copy_path; kept last so it grows */
} xfer_context_stats;

/** Fills `stats` (see xfer_context_stats for struct_size). Counters of copies that run while it
    reads may or may not be included; each copy is counted whole, with all its counters, once
    it returns. Returns XFER_ERROR_INVALID_HANDLE (ctx), XFER_ERROR_INVALID_ARGUMENT (stats
    NULL, or struct_size smaller than offsetof(xfer_context_stats, calls)). Thread-safe; never
    calls the backend. */
XFER_API xfer_status xfer_context_get_stats(xfer_context ctx, xfer_context_stats *stats);

/** Sets every counter of xfer_context_get_stats to 0. Copies running meanwhile may be counted
    before or after the reset. Returns XFER_ERROR_INVALID_HANDLE. Thread-safe. */
XFER_API xfer_status xfer_context_reset_stats(xfer_context ctx);

/** One record per path a copy call used. Valid only during the observer's call. */
typedef struct xfer_copy_record {
    size_t struct_size;   /**< sizeof(xfer_copy_record) of the library; fields are appended */
    xfer_context ctx;     /**< the context the copy is counted in (a peer copy: the stream's) */
    xfer_stream stream;   /**< the stream it was queued on; NULL for xfer_copy (its own stream) */
    const char *function; /**< the entry point, e.g. "xfer_memcpy_async" (static storage) */
    xfer_copy_path path;
    xfer_path_reason reason;
    xfer_copy_kind kind; /**< the direction (a buffer copy: HOST_TO_DEVICE or DEVICE_TO_HOST) */
    int slow;            /**< xfer_path_is_slow(path, reason, piece bytes) for a piece */
    uint64_t copies;     /**< copies, entries or pieces of the call on this path */
    uint64_t bytes;      /**< their bytes */
    uint64_t host_ns;    /**< this path's share (by bytes) of the call's host time, ns */
    uint64_t call_bytes; /**< all bytes of the call, on every path */
} xfer_copy_record;

/** Receives copy records. Runs on the thread that made the copy call, inside it, after the
    copies were queued. It may call xfer functions, except those that release the context,
    buffer or stream of the copy (they would wait for the call that runs the observer). */
typedef void (*xfer_copy_observer_fn)(const xfer_copy_record *record, void *user_data);

/** Installs `fn` (with `user_data`, handed back on each call) as ctx's copy observer, replacing
    the previous one or the XFER_LOG=copies log; fn NULL removes it. Calls already running may
    still report to the observer they found. With no observer the cost of a copy is one branch.
    Returns XFER_ERROR_INVALID_HANDLE. Thread-safe. */
XFER_API xfer_status xfer_set_copy_observer(xfer_context ctx, xfer_copy_observer_fn fn, void *user_data);

/** What a context does with a copy that would take a slow path (xfer_path_is_slow). */
typedef enum xfer_slow_path {
    XFER_SLOW_PATH_ALLOW = 0,  /**< copy it (counted in slow_copies) */
    XFER_SLOW_PATH_WARN = 1,   /**< copy it and report it: to the observer with slow = 1, or, with
                                    no observer installed, as a line in the copy log (stderr, or
                                    XFER_LOG_FILE) */
    XFER_SLOW_PATH_REFUSE = 2, /**< queue (and register) nothing and return XFER_ERROR_SLOW_PATH */
    XFER_SLOW_PATH_FORCE_INT32 = 0x7fffffff
} xfer_slow_path;

/** Sets ctx's slow-path policy (its default: the config key slow_path, XFER_SLOW_PATH, read at
    xfer_open: allow | warn | refuse, default allow). Returns XFER_ERROR_INVALID_HANDLE,
    XFER_ERROR_INVALID_ARGUMENT (policy not an xfer_slow_path). Thread-safe; calls already
    running keep the policy they found. */
XFER_API xfer_status xfer_context_set_slow_path(xfer_context ctx, xfer_slow_path policy);
/** Sets *policy to ctx's slow-path policy. Returns XFER_ERROR_INVALID_HANDLE,
    XFER_ERROR_INVALID_ARGUMENT (policy NULL). Thread-safe. */
XFER_API xfer_status xfer_context_get_slow_path(xfer_context ctx, xfer_slow_path *policy);

/* ------------------------------------------------- peer copies (several devices) */

/*
 * Copies between the device memory of two contexts bound to different devices of one backend
 * (GPU to GPU), e.g. a context on device 0 and one on device 1, both opened with "pinned".
 *
 * Which path the bytes take: CUDA backends call cudaMemcpyPeerAsync. The first peer copy
 * between a pair of devices enables peer access both ways (cudaDeviceEnablePeerAccess, once
 * per pair and process) where cudaDeviceCanAccessPeer allows it; the copy then runs directly
 * over NVLink or PCIe peer-to-peer. Where it does not allow it, cudaMemcpyPeerAsync stages the
 * copy through host memory (the driver's own page-locked staging), correct but slower;
 * xfer_device_can_access_peer tells the two cases apart. Host backend: the emulated devices
 * (parameter `devices`, XFER_HOST_DEVICES) all live in host RAM; a peer copy is a memcpy on the
 * stream's worker thread and every pair reports direct access.
 *
 * The stream `s` must belong to one of the two contexts. Its device's copy engine does the
 * work and the copy is ordered after earlier work on `s` only: work queued on the other
 * device that writes the source, or reads the destination, must be ordered with an event
 * (xfer_event_record on that device's stream, then xfer_stream_wait_event(s, ...) with an
 * event of s's context recorded after it, or a synchronisation).
 *
 * Both contexts must stay open, and both ranges alive and unmodified, until the copy is
 * done; xfer_free of a buffer that a queued peer copy uses waits for it (CUDA backends also
 * wait for the peer device's queued work), as for xfer_copy_async.
 *
 * Bad input is refused before anything is queued and leaves all state intact: a context of
 * another backend, a stream of a third context, two contexts on the same device (use
 * xfer_memcpy_async with XFER_COPY_DEVICE_TO_DEVICE there), a closed context.
 */

/** Queues a copy of `bytes` bytes from `src`, device memory of src_ctx's device, to `dst`,
    device memory of dst_ctx's device, on stream `s` (of dst_ctx or src_ctx), and returns
    without waiting. Maps to cudaMemcpyPeerAsync(dst, dst device, src, src device, bytes, s)
    on CUDA backends (cudaMemcpyAsync with cudaMemcpyDefault where a pointer is managed or
    mapped host memory, as the device views of managed and zerocopy are); host: memcpy on the
    stream's worker thread.
    Returns XFER_ERROR_INVALID_HANDLE (dst_ctx, src_ctx or s invalid or closed; the two
    contexts of different backends; s of neither context), XFER_ERROR_INVALID_ARGUMENT (dst or
    src NULL; both contexts on the same device; the two ranges overlap), XFER_ERROR_INVALID_SIZE
    (bytes 0, bytes > PTRDIFF_MAX, a range wrapping around the address space),
    XFER_ERROR_NOT_SUPPORTED (the backend has no peer copies, e.g. a plugin built for plugin
    ABI 1.0 or 1.1), XFER_ERROR_BACKEND (a native call failed, e.g. a pointer that is not memory of
    its context's device: cudaErrorInvalidValue). Thread-safe. */
XFER_API xfer_status xfer_memcpy_peer_async(xfer_context dst_ctx, void *dst, xfer_context src_ctx, const void *src,
                                            size_t bytes, xfer_stream s);

/** Queues a copy of bytes [src_offset, src_offset + bytes) of `src`'s device view to
    [dst_offset, dst_offset + bytes) of `dst`'s device view, the buffers belonging to contexts
    on different devices of one backend, on stream `s` (of either buffer's context); returns
    without waiting. The host views are not touched. Maps to cudaMemcpyPeerAsync between the
    device views on CUDA backends; host: memcpy on the stream's worker, which keeps both
    buffers' memory alive until it has run (xfer_free is deferred in stream order).
    Returns XFER_ERROR_INVALID_HANDLE (a buffer or s invalid or freed, its context closed; the
    buffers' contexts of different backends; s of neither context), XFER_ERROR_INVALID_ARGUMENT
    (both buffers' contexts on the same device), XFER_ERROR_INVALID_SIZE (bytes 0, or an
    offset + bytes overflows), XFER_ERROR_OUT_OF_BOUNDS (dst_offset + bytes or src_offset +
    bytes past the end of its buffer; the message names which), XFER_ERROR_NOT_SUPPORTED,
    XFER_ERROR_BACKEND. Thread-safe. */
XFER_API xfer_status xfer_copy_peer_async(xfer_buffer dst, size_t dst_offset, xfer_buffer src, size_t src_offset,
                                          size_t bytes, xfer_stream s);

/** Sets *can_access to 1 when ctx's device can read and write peer's device memory directly
    (peer copies between them then go device to device without host staging), 0 when peer
    copies between them are staged through host memory. Maps to cudaDeviceCanAccessPeer(ctx
    device, peer device); host: always 1. Does not enable anything.
    Returns XFER_ERROR_INVALID_HANDLE (ctx or peer invalid or closed, or of different
    backends), XFER_ERROR_INVALID_ARGUMENT (can_access NULL; both on the same device),
    XFER_ERROR_NOT_SUPPORTED, XFER_ERROR_BACKEND. Thread-safe. */
XFER_API xfer_status xfer_device_can_access_peer(xfer_context ctx, xfer_context peer, int *can_access);

/* --------------------------------------- sharing buffers with other processes and libraries */

/*
 * A buffer allocated with XFER_ALLOC_SHAREABLE can be exported: xfer_buffer_export describes it
 * as a blob (versioned, size-prefixed, checksummed) and the file descriptors its memory lives in.
 * Another process of the same machine receives both (xfer_export_send / xfer_export_receive
 * pass them over a Unix-domain socket, the descriptors as SCM_RIGHTS) and xfer_buffer_import
 * gives it an xfer_buffer over the same memory, both views where the strategy has them, on a
 * context of the same backend.
 *
 * Lifetime: the memory lives while any process maps it. The exporter may free its buffer while
 * importers hold theirs (they keep the memory); an importer that dies leaves the others as they
 * were; each process frees its own xfer_buffer. The blob and descriptors are a description,
 * not a credential: whoever holds the descriptors can map the memory, so pass them only to
 * processes that may.
 */

#define XFER_EXPORT_VERSION 1
/** At most this many descriptors describe one buffer. */
#define XFER_EXPORT_MAX_FDS 4
/** The blob's capacity in bytes. */
#define XFER_EXPORT_BLOB_BYTES 256

/** A buffer's export. Set struct_size = sizeof(xfer_export) before xfer_buffer_export or
    xfer_export_receive fill it. The descriptors are the holder's to pass on and to close
    (xfer_export_close); unused entries of fds are -1. */
typedef struct xfer_export {
    size_t struct_size;
    uint32_t version;                           /**< XFER_EXPORT_VERSION */
    uint32_t fd_count;                          /**< descriptors in fds */
    int fds[XFER_EXPORT_MAX_FDS];               /**< the memory's file descriptors (close-on-exec) */
    uint32_t blob_bytes;                        /**< bytes of blob in use */
    unsigned char blob[XFER_EXPORT_BLOB_BYTES]; /**< the description: opaque, checked at import */
} xfer_export;

/** Describes `buf` for another process: fills *out with the blob and new descriptors of its
    memory (dup'ed: out owns them). host: one memfd holding both views (sealed: its size cannot
    change under a mapping). pinned, pageable: two, the host view's sealed memfd and the device
    view's allocation (cuMemExportToShareableHandle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    the blob also names the GPU (its UUID). The buffer stays the caller's, unchanged.
    Returns XFER_ERROR_INVALID_HANDLE (buf invalid or freed), XFER_ERROR_INVALID_ARGUMENT (out
    NULL, or out->struct_size smaller than sizeof(xfer_export)), XFER_ERROR_INVALID_STATE
    (buf was allocated without XFER_ALLOC_SHAREABLE), XFER_ERROR_NOT_SUPPORTED (the backend
    cannot export), XFER_ERROR_BACKEND (dup or the driver failed; the message names the call).
    On failure *out holds no descriptor. Thread-safe. */
XFER_API xfer_status xfer_buffer_export(xfer_buffer buf, xfer_export *out);

/** Makes *out an xfer_buffer of ctx over the memory `in` describes (an export of another
    process, or of this one). `in`'s descriptors stay the caller's (close them afterwards: the
    buffer keeps its own). The buffer is freed with xfer_free like any other; its size is the
    exported buffer's. Copies and kernels on it see the exporter's bytes and the exporter sees
    theirs (order between processes is the applications' to keep, e.g. by synchronising a stream
    before signalling the other process).
    Returns XFER_ERROR_INVALID_HANDLE (ctx invalid or closed), XFER_ERROR_INVALID_ARGUMENT (in or
    out NULL; in->struct_size too small; a blob that is not an xfer export, of another version,
    truncated, corrupted (checksum) or made by another backend; fd_count not what the blob says;
    a descriptor that is not memory of the described size, or whose size is not sealed; CUDA:
    a device descriptor the driver does not take as an allocation (cuMemImportFromShareableHandle),
    or an export of another GPU than ctx's; the message says which), XFER_ERROR_OUT_OF_MEMORY
    (no room to map it, or host: the emulated device is full), XFER_ERROR_NOT_SUPPORTED (the
    backend cannot import), XFER_ERROR_BACKEND. CUDA backends map the device view with
    cuMemImportFromShareableHandle + cuMemAddressReserve + cuMemMap + cuMemSetAccess (read-write
    for ctx's device) and page-lock the host view as the exporter's backend does. Nothing is
    created on failure. Thread-safe. */
XFER_API xfer_status xfer_buffer_import(xfer_context ctx, const xfer_export *in, xfer_buffer *out);

/** Sends an export over a connected Unix-domain socket (SOCK_STREAM or SOCK_SEQPACKET): one
    message with the blob and the descriptors as SCM_RIGHTS (sendmsg). The caller keeps its
    descriptors. Returns XFER_ERROR_INVALID_ARGUMENT (in NULL or not a filled export; socket
    negative), XFER_ERROR_BACKEND (sendmsg failed or the peer went away; the message has errno).
    Thread-safe (one message per call; do not interleave sends on one socket from two threads). */
XFER_API xfer_status xfer_export_send(int socket, const xfer_export *in);

/** Receives an export sent by xfer_export_send: fills *out (struct_size set by the caller) with
    the blob and new descriptors (close-on-exec), which out owns. Blocks until one arrives.
    Returns XFER_ERROR_INVALID_ARGUMENT (out NULL or too small; socket negative; a message that
    is not an export, or whose descriptors were cut off), XFER_ERROR_BACKEND (recvmsg failed, or
    the peer closed the socket first). On failure *out holds no descriptor. Thread-safe as
    xfer_export_send. */
XFER_API xfer_status xfer_export_receive(int socket, xfer_export *out);

/** Closes an export's fd_count descriptors and marks them closed (-1, fd_count 0); NULL, or a
    struct_size smaller than sizeof(xfer_export), is ignored. Never fails. Thread-safe
    for distinct exports. */
XFER_API void xfer_export_close(xfer_export *exp);

/** Handle types of xfer_share_info.handle_types. */
#define XFER_SHARE_HANDLE_MEMFD 0x1u    /**< host memory in a sealed memfd */
#define XFER_SHARE_HANDLE_POSIX_FD 0x2u /**< device view: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR */
#define XFER_SHARE_HANDLE_FABRIC 0x4u   /**< device view: CU_MEM_HANDLE_TYPE_FABRIC (across nodes) */

/** What a buffer's memory is, for the libraries it is handed to. Strings are static. */
typedef struct xfer_share_info {
    size_t struct_size;             /**< set to sizeof(xfer_share_info) before the call */
    unsigned handle_types;          /**< XFER_SHARE_HANDLE_* its memory can be shared by (0: none) */
    int rdma_capable;               /**< 1: the device view was made GPUDirect RDMA capable */
    size_t granularity;             /**< the device view's allocation granularity (0: not cuMemCreate) */
    size_t device_view_bytes;       /**< bytes mapped at the device view (size rounded up to it) */
    const char *host_memory_kind;   /**< MPI memory kind of the host view: "system", "cuda:host", "cuda:managed" */
    const char *device_memory_kind; /**< MPI memory kind of the device view: "cuda:device", "cuda:host", ... */
    int host_dlpack_device_type; /**< DLPack DLDeviceType of the host view (kDLCPU 1, kDLCUDAHost 3, kDLCUDAManaged 13) */
    int host_dlpack_device_id;   /**< DLPack device id of the host view */
    int device_dlpack_device_type; /**< DLPack DLDeviceType of the device view (kDLCUDA 2, ...; host backend: kDLCPU) */
    int device_dlpack_device_id;   /**< DLPack device id of the device view (the CUDA ordinal) */
} xfer_share_info;

/** Describes the memory of `buf` (any buffer, shareable or not): how it can be shared, and the
    memory kind and DLPack device of each view, as MPI 4.1's memory kinds and DLPack name them.
    Answered from what xfer recorded at allocation: no CUDA call.
    Returns XFER_ERROR_INVALID_HANDLE (buf invalid or freed), XFER_ERROR_INVALID_ARGUMENT (info
    NULL, or info->struct_size smaller than sizeof(xfer_share_info)), XFER_ERROR_NOT_SUPPORTED
    (a plugin built before this query). Thread-safe. */
XFER_API xfer_status xfer_buffer_get_share_info(xfer_buffer buf, xfer_share_info *info);

/** What a memory observer is told. */
typedef enum xfer_memory_event_kind {
    XFER_MEMORY_ALLOCATED = 1,     /**< after xfer_alloc or xfer_buffer_import made a buffer */
    XFER_MEMORY_RELEASING = 2,     /**< before xfer_free or xfer_close releases a buffer: its
                                       memory is still there; drop what refers to it now */
    XFER_MEMORY_REGISTERED = 3,    /**< after xfer_register page-locked a range */
    XFER_MEMORY_UNREGISTERING = 4, /**< before xfer_unregister releases a range */
    XFER_MEMORY_EVENT_FORCE_INT32 = 0x7fffffff
} xfer_memory_event_kind;

/** One event. For a range (REGISTERED, UNREGISTERING) buffer and device_ptr are NULL. */
typedef struct xfer_memory_event {
    size_t struct_size; /**< sizeof(xfer_memory_event) as the library was built */
    xfer_context ctx;
    xfer_memory_event_kind event;
    xfer_buffer buffer; /**< the buffer, or NULL for a registered range */
    void *host_ptr;     /**< the host view or the range */
    void *device_ptr;   /**< the device view (the same as host_ptr where XFER_CAP_SHARED_VIEW) */
    size_t bytes;
    int imported; /**< 1 for a buffer made by xfer_buffer_import */
} xfer_memory_event;

typedef void (*xfer_memory_observer_fn)(const xfer_memory_event *event, void *user_data);

/** Installs `fn` as ctx's memory observer (NULL removes it): it is called on the thread that
    allocates, imports, frees, registers or unregisters, for each buffer and range of ctx, so a
    library with a registration cache of its own (an MPI, NCCL, UCX, NIXL) registers xfer's
    memory once and drops it before xfer releases it. xfer_close tells RELEASING for every buffer
    it releases. The observer must not free, close or unregister on ctx itself; it may copy and
    query. Returns XFER_ERROR_INVALID_HANDLE (ctx invalid or closed). Thread-safe: an event in
    flight on another thread may still reach the observer that was replaced. */
XFER_API xfer_status xfer_set_memory_observer(xfer_context ctx, xfer_memory_observer_fn fn, void *user_data);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XFER_XFER_H */
