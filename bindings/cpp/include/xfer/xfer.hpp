// SPDX-License-Identifier: Apache-2.0
//
// xfer.hpp -- header-only C++ layer over the C API in <xfer/xfer.h> (C++17; std::span views
// under C++20).
//
//  - Owning, move-only handles: xfer::Context, Buffer, Stream, Event, Registration. The
//    destructor releases the C handle (xfer_close / xfer_free / xfer_stream_destroy /
//    xfer_event_destroy / xfer_unregister), which waits for queued work that uses it (the C
//    contract: releasing is deferred in stream order). A moved-from object holds no handle; its
//    destructor does nothing.
//  - An object made from a Context keeps that context open: a Buffer, Stream, Event or
//    Registration holds a share of it, and the context is closed (xfer_close) when the Context
//    object and the last of them are gone, each object's own handle released before. So a
//    Buffer, and the pointers and spans it hands out, stays valid after the Context variable it
//    was made from went out of scope, and objects may be returned from the function that opened
//    their context. Context::close() gives up the Context object's share.
//  - Every failing call throws xfer::Error, which carries the xfer_status and the message
//    "<C function>: <STATUS>: <xfer_last_error()>". Destructors never throw (a failure while
//    releasing is ignored: the C library releases the handle anyway).
//  - Host views as spans tied to the buffer: Buffer::host_span<T>() (std::span<T> in C++20,
//    xfer::span<T> in C++17 with the same data()/size()/begin()/end()/operator[]).
//  - The machine's calibration and the values a context uses: Context::calibrate(force)
//    (xfer_calibrate) and Context::settings() (parameters and derived values, with sources).
//  - Registered user memory: Context::register_memory(ptr, bytes) or (container) returns an
//    xfer::Registration, a move-only guard that unregisters (xfer_unregister) on destruction;
//    Context::registration_stats() is xfer_registration_get_stats.
//  - Which path each copy took: Context::stats() / reset_stats() (xfer_context_get_stats, its
//    struct_size set), Context::set_copy_observer(std::function) (kept by the context for as
//    long as the C library may call it; an exception it throws is caught before it reaches the
//    C library and handed back by take_observer_exception()), set_slow_path() / slow_path()
//    (strict mode: XFER_SLOW_PATH_REFUSE makes a slow copy throw Error with
//    XFER_ERROR_SLOW_PATH), and path_name() / reason_name() / is_slow_path().
//  - Sharing buffers with other processes: Buffer::export_buffer() (a buffer allocated with
//    XFER_ALLOC_SHAREABLE) returns an xfer::Export, a move-only owner of the export's
//    descriptors that closes them (xfer_export_close) on destruction; Export::send(socket) /
//    Export::receive(socket) carry it over a Unix-domain socket; Context::import_buffer(export)
//    returns a Buffer over the same memory. Context::set_memory_observer(std::function) hears of
//    every buffer and range the context makes and releases (kept and guarded like the copy
//    observer; its exceptions are handed back by take_memory_observer_exception()).
//  - Thread-safety: as the C API (every call may come from any thread); one C++ object is not
//    meant to be moved or destroyed while another thread uses it. The shares of a context are
//    counted atomically (std::shared_ptr), so objects of one context may be destroyed on
//    different threads: whichever goes last closes the context, on its thread. That last owner
//    must not go inside a host function of one of the context's streams (xfer_close refuses
//    there with XFER_ERROR_INVALID_STATE, and the destructor cannot report it).
//  - get() returns the C handle, so C++ and C calls mix freely; release a handle only through
//    its C++ object (a C xfer_free(buf.get()) would leave the object holding a dead handle).
//
// Example (complete program in bindings/cpp/example_roundtrip.cpp, built and run by the tests):
//
//     xfer::Context ctx("host", 0);
//     xfer::Buffer buf(ctx, 1 << 20);
//     xfer::Stream s(ctx);
//     auto host = buf.host_span<float>();
//     std::fill(host.begin(), host.end(), 1.5f);
//     buf.copy_async(XFER_TO_DEVICE, s);
//     buf.copy_async(XFER_TO_HOST, s);
//     s.synchronize();
#ifndef XFER_XFER_HPP
#define XFER_XFER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <xfer/xfer.h>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
#endif

namespace xfer {

/// A failed xfer call: the status and "<call>: <STATUS>: <detail from xfer_last_error()>".
class Error : public std::runtime_error {
  public:
    Error(xfer_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    xfer_status status() const noexcept { return status_; }

  private:
    xfer_status status_;
};

/// "<call>: <STATUS>: <xfer_last_error()>" (the detail once, even when it already names the call).
inline std::string describe_failure(xfer_status st, const char *call) {
    std::string message = std::string(call) + ": " + xfer_status_string(st);
    const char *last = xfer_last_error();
    std::string detail = last ? last : "";
    const std::string prefix = std::string(call) + ": ";
    if (detail.rfind(prefix, 0) == 0) detail = detail.substr(prefix.size());
    if (!detail.empty()) message += ": " + detail;
    return message;
}

/// Throws Error unless st is XFER_SUCCESS.
inline void check(xfer_status st, const char *call) {
    if (st != XFER_SUCCESS) throw Error(st, describe_failure(st, call));
}

#if __cplusplus >= 202002L && __has_include(<span>)
template <class T>
using span = std::span<T>;
#else
/// The part of std::span a host view needs, for C++17 users.
template <class T>
class span {
  public:
    span() = default;
    span(T *data, std::size_t size) : data_(data), size_(size) {}
    T *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    bool empty() const noexcept { return size_ == 0; }
    T *begin() const noexcept { return data_; }
    T *end() const noexcept { return data_ + size_; }
    T &operator[](std::size_t i) const { return data_[i]; }

  private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};
#endif

/// The loaded library's version (xfer_get_version).
struct Version {
    int major, minor, patch;
};
inline Version version() {
    Version v{};
    check(xfer_get_version(&v.major, &v.minor, &v.patch), "xfer_get_version");
    return v;
}

/// Every backend on the plugin search path, available or not (xfer_backend_count/_get_info).
inline std::vector<xfer_backend_info> backends() {
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    std::vector<xfer_backend_info> out(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
        check(xfer_backend_get_info(i, &out[static_cast<std::size_t>(i)]), "xfer_backend_get_info");
    return out;
}

/// One configuration parameter, copied (the C strings live only until the next call).
struct Param {
    std::string section, name, env, type, value, default_value, help;
    xfer_param_source source;
};
/// The effective configuration (xfer_param_count/_get_info).
inline std::vector<Param> params() {
    int count = 0;
    check(xfer_param_count(&count), "xfer_param_count");
    std::vector<Param> out;
    for (int i = 0; i < count; ++i) {
        xfer_param_info p{};
        check(xfer_param_get_info(i, &p), "xfer_param_get_info");
        out.push_back({p.section, p.name, p.env, p.type, p.value, p.default_value, p.help, p.source});
    }
    return out;
}

/// A value an open context uses (xfer_context_get_setting): a parameter (derived false) or a
/// value the backend derives from the calibration or its defaults (derived true); source says
/// where its value came from (XFER_PARAM_CALIBRATION for a measured one).
struct Setting : Param {
    bool derived = false;
};

/// What xfer_calibrate did, copied: measured by this process (this call, or the first open of
/// a context of the GPU; else one kept by an earlier process still held), how long the measuring took, the file it is kept in ("" when not kept) and the calibration as JSON.
struct Calibration {
    bool measured = false;
    double seconds = 0.0;
    std::string file, json;
};

/// "host_memcpy", "pinned_dma", ... (xfer_copy_path_name): the names xfer-tool and the copy
/// log print; "unknown" for a value that is no xfer_copy_path. Static storage, never nullptr.
inline const char *path_name(xfer_copy_path path) noexcept { return xfer_copy_path_name(path); }
/// "memory", "below_crossover", "cache_full", ... (xfer_path_reason_name); "unknown" otherwise.
inline const char *reason_name(xfer_path_reason reason) noexcept { return xfer_path_reason_name(reason); }
/// Whether `bytes` (one piece) taking `path` for `reason` counts as slow (xfer_path_is_slow).
inline bool is_slow_path(xfer_copy_path path, xfer_path_reason reason, std::uint64_t bytes) noexcept {
    return xfer_path_is_slow(path, reason, bytes) != 0;
}

/// Receives one record per path a copy call used (see xfer_set_copy_observer): on the thread
/// that made the call, inside it, possibly on several threads at once. The record is valid only
/// during the call.
using CopyObserver = std::function<void(const xfer_copy_record &)>;

/// Receives one event per buffer and range of a context made or about to be released (see
/// xfer_set_memory_observer): on the thread that allocates, imports, frees, registers or
/// unregisters, inside that call. The event is valid only during the call.
using MemoryObserver = std::function<void(const xfer_memory_event &)>;

namespace detail {
// The *_query calls: XFER_SUCCESS -> true, XFER_ERROR_NOT_READY -> false, anything else throws.
inline bool ready(xfer_status st, const char *call) {
    if (st == XFER_ERROR_NOT_READY) return false;
    check(st, call);
    return true;
}

// The *_native calls answer NULL instead of a status. An object of this layer that holds a
// handle also holds its context open, so NULL then comes from the backend (it does not
// implement the call, or has no native object: the message says which).
inline void *native_or_throw(void *native, bool holds_handle, const char *call) {
    if (native) return native;
    const xfer_status st = holds_handle ? XFER_ERROR_BACKEND : XFER_ERROR_INVALID_HANDLE;
    throw Error(st, describe_failure(st, call));
}

// A context's C handle, closed (xfer_close) when the last share of it goes: the Context object
// and every Buffer, Stream, Event and Registration made from it hold one. It also holds the
// copy observer and the memory observer: a call through any of those objects may reach them, so
// they live as long as the C handle, and the C library is handed this object (whose address
// never changes) as user_data.
class ContextHandle {
  public:
    explicit ContextHandle(xfer_context h) noexcept : h_(h) {}
    ~ContextHandle() {
        if (h_) (void)close(); // destructors cannot report: see the header
    }
    ContextHandle(const ContextHandle &) = delete;
    ContextHandle &operator=(const ContextHandle &) = delete;
    xfer_context get() const noexcept { return h_; }

    // The copy observer goes first, so that nothing the closing does can reach it. The memory
    // observer stays: xfer_close tells it of what the closing releases (buffers and ranges made
    // through the C API on get()), and it outlives the call as a member of this object.
    xfer_status close() noexcept {
        const xfer_context h = std::exchange(h_, nullptr);
        if (observed_.load()) (void)xfer_set_copy_observer(h, nullptr, nullptr);
        return xfer_close(h);
    }

    // An empty fn removes the observer (and with it the XFER_LOG=copies log, as in C).
    void set_observer(CopyObserver fn) {
        std::lock_guard<std::mutex> setting(setting_); // one change at a time: C and observer_ agree
        std::shared_ptr<const CopyObserver> next;
        if (fn) next = std::make_shared<const CopyObserver>(std::move(fn));
        std::shared_ptr<const CopyObserver> previous; // destroyed after the lock is let go
        if (!next) {
            // Off in C first: calls that start later no longer come here at all.
            check(xfer_set_copy_observer(h_, nullptr, nullptr), "xfer_set_copy_observer");
            observed_ = false;
            std::lock_guard<std::mutex> lock(mutex_);
            previous = std::exchange(observer_, nullptr);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            previous = std::exchange(observer_, next);
        }
        const xfer_status st = xfer_set_copy_observer(h_, &ContextHandle::observe, this);
        if (st != XFER_SUCCESS) {
            std::lock_guard<std::mutex> lock(mutex_);
            observer_ = previous;
        } else {
            observed_ = true;
        }
        check(st, "xfer_set_copy_observer");
    }

    std::exception_ptr take_exception() {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::exchange(exception_, nullptr);
    }

    // An empty fn removes the memory observer. As set_observer: C and memory_observer_ agree
    // after each change, and a failed one leaves the previous observer in place.
    void set_memory_observer(MemoryObserver fn) {
        std::lock_guard<std::mutex> setting(setting_);
        std::shared_ptr<const MemoryObserver> next;
        if (fn) next = std::make_shared<const MemoryObserver>(std::move(fn));
        std::shared_ptr<const MemoryObserver> previous; // destroyed after the lock is let go
        if (!next) {
            check(xfer_set_memory_observer(h_, nullptr, nullptr), "xfer_set_memory_observer");
            std::lock_guard<std::mutex> lock(mutex_);
            previous = std::exchange(memory_observer_, nullptr);
            return;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            previous = std::exchange(memory_observer_, next);
        }
        const xfer_status st = xfer_set_memory_observer(h_, &ContextHandle::observe_memory, this);
        if (st != XFER_SUCCESS) {
            std::lock_guard<std::mutex> lock(mutex_);
            memory_observer_ = previous;
        }
        check(st, "xfer_set_memory_observer");
    }

    std::exception_ptr take_memory_exception() {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::exchange(memory_exception_, nullptr);
    }

  private:
    // The C library's observer. A call may still arrive after the observer was replaced or
    // removed (a copy that found it before): it then runs whichever observer is current, or
    // none. The observer runs outside the lock, holding its own reference, so it may copy,
    // read the statistics or replace itself.
    static void observe(const xfer_copy_record *record, void *self) noexcept {
        auto *me = static_cast<ContextHandle *>(self);
        try {
            std::shared_ptr<const CopyObserver> fn;
            {
                std::lock_guard<std::mutex> lock(me->mutex_);
                fn = me->observer_;
            }
            if (fn && record) (*fn)(*record);
        } catch (...) {
            // An exception must not unwind through the C library: keep it for the program.
            try {
                std::lock_guard<std::mutex> lock(me->mutex_);
                me->exception_ = std::current_exception();
            } catch (...) { // the lock failed: the exception is lost, the copy goes on
            }
        }
    }

    // The C library's memory observer, as observe: an event may arrive after a replacement
    // (it then runs the observer now current), and the observer runs outside the lock, so it
    // may copy or replace itself; it must not release anything of this context.
    static void observe_memory(const xfer_memory_event *event, void *self) noexcept {
        auto *me = static_cast<ContextHandle *>(self);
        try {
            std::shared_ptr<const MemoryObserver> fn;
            {
                std::lock_guard<std::mutex> lock(me->mutex_);
                fn = me->memory_observer_;
            }
            if (fn && event) (*fn)(*event);
        } catch (...) {
            // An exception must not unwind through the C library (the allocation or release
            // it interrupted would be left half done): keep it for the program.
            try {
                std::lock_guard<std::mutex> lock(me->mutex_);
                me->memory_exception_ = std::current_exception();
            } catch (...) { // the lock failed: the exception is lost, the call goes on
            }
        }
    }

    xfer_context h_;
    std::mutex setting_; // held through set_observer and set_memory_observer
    std::mutex mutex_;   // guards the observers and their exceptions, taken by every observed call
    std::shared_ptr<const CopyObserver> observer_;
    std::exception_ptr exception_;
    std::shared_ptr<const MemoryObserver> memory_observer_;
    std::exception_ptr memory_exception_;
    std::atomic<bool> observed_{false}; // set_observer installed ours in C
};
using SharedContext = std::shared_ptr<ContextHandle>;

// Move-only ownership of one C handle of a context's object; Release is the C function that
// frees it. The share of the context is let go after the handle, so that the context, when
// this was its last owner, closes with nothing of it left.
template <class Handle, xfer_status (*Release)(Handle)>
class Owner {
  public:
    Owner() = default;
    Owner(SharedContext ctx, Handle h) noexcept : ctx_(std::move(ctx)), h_(h) {}
    ~Owner() { reset(); }
    Owner(Owner &&o) noexcept : ctx_(std::move(o.ctx_)), h_(std::exchange(o.h_, nullptr)) {}
    Owner &operator=(Owner &&o) noexcept {
        if (this != &o) {
            reset(); // this object's own handle first, while its context is still held
            ctx_ = std::move(o.ctx_);
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    Owner(const Owner &) = delete;
    Owner &operator=(const Owner &) = delete;
    Handle get() const noexcept { return h_; }
    void reset() noexcept {
        if (h_) (void)Release(std::exchange(h_, nullptr)); // destructors cannot report: see the header
        ctx_.reset();
    }

  private:
    SharedContext ctx_;
    Handle h_ = nullptr;
};
} // namespace detail

class Buffer;
class Stream;
class Event;
class Registration;

/// A buffer's export (xfer_export): the blob that describes it and the file descriptors its
/// memory lives in, which this object owns. Made by Buffer::export_buffer() or
/// Export::receive(); read by Context::import_buffer() and send(), which leave the descriptors
/// here. Move-only, so that each descriptor has one owner: the destructor (or close()) closes
/// them (xfer_export_close). A moved-from or closed Export is empty (no descriptor, no blob);
/// importing or sending it throws Error with XFER_ERROR_INVALID_ARGUMENT. Whoever holds the
/// descriptors can map the memory: send them only to processes that may.
class Export {
  public:
    /// An empty export.
    Export() noexcept { clear(); }
    ~Export() { xfer_export_close(&e_); }
    Export(Export &&o) noexcept : e_(o.e_) { o.clear(); }
    /// Closes this object's descriptors, then takes o's.
    Export &operator=(Export &&o) noexcept {
        if (this != &o) {
            xfer_export_close(&e_);
            e_ = o.e_;
            o.clear();
        }
        return *this;
    }
    Export(const Export &) = delete;
    Export &operator=(const Export &) = delete;

    /// The C struct, for C calls that leave the descriptors with their caller (xfer_buffer_import,
    /// xfer_export_send). They stay owned by this object: do not close them.
    const xfer_export &get() const noexcept { return e_; }
    /// true while it holds an export (not moved from, not closed).
    bool empty() const noexcept { return e_.blob_bytes == 0 && e_.fd_count == 0; }
    explicit operator bool() const noexcept { return !empty(); }
    /// How many descriptors it holds (host backend: 1).
    std::size_t fd_count() const noexcept { return e_.fd_count; }
    /// Closes the descriptors now and forgets the blob; does nothing when empty.
    void close() noexcept {
        xfer_export_close(&e_);
        clear();
    }

    /// Sends the export over a connected Unix-domain socket (xfer_export_send: the blob and the
    /// descriptors as SCM_RIGHTS); this object keeps its descriptors. Throws Error:
    /// XFER_ERROR_INVALID_ARGUMENT (empty; socket negative), XFER_ERROR_BACKEND (sendmsg
    /// failed or the peer went away).
    void send(int socket) const { check(xfer_export_send(socket, &e_), "xfer_export_send"); }
    /// Receives an export sent by send() (xfer_export_receive; blocks until one arrives); the
    /// returned object owns the new descriptors. Throws Error: XFER_ERROR_INVALID_ARGUMENT (a
    /// message that is not an export; socket negative), XFER_ERROR_BACKEND (recvmsg failed, or
    /// the peer closed the socket first). On failure no descriptor is left open.
    static Export receive(int socket) {
        Export e;
        check(xfer_export_receive(socket, &e.e_), "xfer_export_receive");
        return e;
    }

  private:
    friend class Buffer;
    void clear() noexcept {
        e_ = xfer_export{};
        e_.struct_size = sizeof e_;
        for (int &fd : e_.fds) fd = -1;
    }
    xfer_export e_;
};

/// One backend bound to one device (xfer_open / xfer_close). Move-only. The objects made from
/// it (Buffer, Stream, Event, Registration) keep the context open after this object is gone.
class Context {
  public:
    /// Opens `backend` on `device` (xfer_open); backend "" and device -1: from XFER_BACKEND /
    /// XFER_DEVICE / XFER_CONFIG. Throws Error with xfer_open's status (e.g.
    /// XFER_ERROR_BACKEND_NOT_FOUND) or xfer_context_get_info's.
    explicit Context(const std::string &backend = "", int device = -1) {
        xfer_context h = nullptr;
        check(xfer_open(backend.empty() ? nullptr : backend.c_str(), device, &h), "xfer_open");
        try {
            handle_ = std::make_shared<detail::ContextHandle>(h);
        } catch (...) {
            (void)xfer_close(h);
            throw;
        }
        xfer_context_info info{};
        check(xfer_context_get_info(h, &info), "xfer_context_get_info"); // handle_ closes it if this throws
        backend_ = info.backend ? info.backend : backend;
        device_ = info.device;
        kind_ = info.device_kind;
        caps_ = info.caps;
    }
    Context(Context &&) noexcept = default;
    /// Gives up the share of the context held now (closing it if that was the last), takes o's.
    Context &operator=(Context &&) noexcept = default;
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    /// The C handle; nullptr once closed or moved from.
    xfer_context get() const noexcept { return handle_ ? handle_->get() : nullptr; }
    const std::string &backend() const noexcept { return backend_; }
    int device() const noexcept { return device_; }
    xfer_device_kind device_kind() const noexcept { return kind_; }
    /// XFER_CAP_* bits.
    unsigned caps() const noexcept { return caps_; }

    /// xfer_device_get_info.
    xfer_device_info device_info() const {
        xfer_device_info info{};
        check(xfer_device_get_info(get(), &info), "xfer_device_get_info");
        return info;
    }

    /// Raw copy between any pointers this context reaches (xfer_memcpy_async).
    inline void memcpy_async(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind, const Stream &s) const;
    /// Many raw copies as one batch (xfer_memcpy_batch_async); the vectors are read during the call.
    inline void memcpy_batch_async(const std::vector<void *> &dsts, const std::vector<const void *> &srcs,
                                   const std::vector<std::size_t> &sizes, xfer_copy_kind kind, const Stream &s) const;

    /// Page-locks `bytes` bytes of host memory the caller owns at `ptr` (xfer_register; flags:
    /// XFER_REGISTER_*). The memory must outlive the returned Registration, which unregisters it.
    [[nodiscard]] inline Registration register_memory(void *ptr, std::size_t bytes,
                                                      unsigned flags = XFER_REGISTER_DEFAULT) const;
    /// The whole of a contiguous container (std::vector, std::array, span, C array), from
    /// std::data / std::size.
    template <class C, class = decltype(std::data(std::declval<C &>())),
              class = decltype(std::size(std::declval<C &>()))>
    [[nodiscard]] Registration register_memory(C &container, unsigned flags = XFER_REGISTER_DEFAULT) const;
    /// What the context has registered, explicitly and through its registration cache
    /// (xfer_registration_get_stats).
    xfer_registration_stats registration_stats() const {
        xfer_registration_stats stats{};
        check(xfer_registration_get_stats(get(), &stats), "xfer_registration_get_stats");
        return stats;
    }

    /// The values the context uses, its backend's parameters then the values it derives
    /// (xfer_context_setting_count / xfer_context_get_setting). Throws Error.
    std::vector<Setting> settings() const {
        int count = 0;
        check(xfer_context_setting_count(get(), &count), "xfer_context_setting_count");
        std::vector<Setting> out;
        for (int i = 0; i < count; ++i) {
            xfer_param_info p{};
            int derived = 0;
            check(xfer_context_get_setting(get(), i, &p, &derived), "xfer_context_get_setting");
            Setting s;
            static_cast<Param &>(s) =
                Param{p.section, p.name, p.env, p.type, p.value, p.default_value, p.help, p.source};
            s.derived = derived != 0;
            out.push_back(std::move(s));
        }
        return out;
    }
    /// Calibrates the context's device (xfer_calibrate; `force`: XFER_CALIBRATE_FORCE, measure
    /// even when a kept calibration holds). Throws Error (XFER_ERROR_NOT_SUPPORTED on host).
    Calibration calibrate(bool force = false) const {
        xfer_calibration_info info{};
        info.struct_size = sizeof info;
        check(xfer_calibrate(get(), force ? XFER_CALIBRATE_FORCE : 0u, &info), "xfer_calibrate");
        return Calibration{info.measured != 0, info.seconds, info.file != nullptr ? info.file : "",
                           info.json != nullptr ? info.json : ""};
    }

    /// Gives up this object's share of the context; get() is nullptr afterwards. When it was
    /// the last share (no Buffer, Stream, Event or Registration of the context is left), closes
    /// the context now (xfer_close) and returns true, throwing Error for a failure that the
    /// destructor would ignore (XFER_ERROR_BACKEND; the handle is released either way, the C
    /// contract). Otherwise returns false: the context stays open for those objects and is
    /// closed when the last of them is destroyed. Throws XFER_ERROR_INVALID_HANDLE when this
    /// object holds no context (closed before, or moved from).
    bool close() {
        if (!handle_)
            throw Error(XFER_ERROR_INVALID_HANDLE, "xfer::Context::close: XFER_ERROR_INVALID_HANDLE: this object "
                                                   "holds no context (closed before, or moved from)");
        detail::SharedContext mine = std::move(handle_);
        // Another share can only come from an object that holds one already, so a count of 1
        // cannot grow behind this test; a larger one may shrink meanwhile, and then the last
        // object to go closes the context, as it would have anyway.
        if (mine.use_count() > 1) return false;
        check(mine->close(), "xfer_close");
        return true;
    }

    /// What the context's copies did since it was opened or reset_stats()
    /// (xfer_context_get_stats, struct_size set): per path (paths[XFER_PATH_*]) the copies,
    /// bytes and host time; calls, slow_copies, refused_calls; the registrations. Throws Error
    /// (XFER_ERROR_INVALID_HANDLE when this object holds no context).
    xfer_context_stats stats() const {
        xfer_context_stats stats{};
        stats.struct_size = sizeof stats;
        check(xfer_context_get_stats(get(), &stats), "xfer_context_get_stats");
        return stats;
    }
    /// Sets every counter of stats() to 0 (xfer_context_reset_stats).
    void reset_stats() const { check(xfer_context_reset_stats(get()), "xfer_context_reset_stats"); }

    /// Installs `fn` as the copy observer (xfer_set_copy_observer), replacing the previous one
    /// or the XFER_LOG=copies log; an empty function removes it. The context keeps `fn` while
    /// its C handle may call it, so Buffers and Streams that outlive this object still report to
    /// it. `fn` runs inside the copy call, on the caller's thread and possibly on several threads
    /// at once; it may make copies and read the statistics, not release the copy's context,
    /// buffer or stream. An exception it throws is caught (it would otherwise unwind through the
    /// C library): the copy is unaffected, that record is lost, and take_observer_exception()
    /// returns the latest one. Throws Error (XFER_ERROR_INVALID_HANDLE when this object holds no
    /// context).
    void set_copy_observer(CopyObserver fn) { held("xfer::Context::set_copy_observer").set_observer(std::move(fn)); }
    /// The latest exception the copy observer threw since the last call (nullptr: none), for
    /// std::rethrow_exception; clears it.
    std::exception_ptr take_observer_exception() {
        return held("xfer::Context::take_observer_exception").take_exception();
    }

    /// A Buffer of this context over the memory `e` describes (xfer_buffer_import): an export of
    /// a buffer of another process, or of this one, made by a context of the same backend. Both
    /// see each other's bytes; the import keeps the memory after the exporter freed its buffer.
    /// `e` keeps its descriptors (the buffer holds its own). Throws Error:
    /// XFER_ERROR_INVALID_ARGUMENT (`e` empty, not an export, of another backend, corrupted;
    /// the message says which), XFER_ERROR_INVALID_HANDLE (this object holds no context),
    /// XFER_ERROR_NOT_SUPPORTED (the backend cannot import), XFER_ERROR_OUT_OF_MEMORY.
    inline Buffer import_buffer(const Export &e) const;

    /// Installs `fn` as the memory observer (xfer_set_memory_observer), replacing the previous
    /// one; an empty function removes it. It is told of every buffer the context allocates or
    /// imports (XFER_MEMORY_ALLOCATED), every buffer it is about to release (XFER_MEMORY_RELEASING,
    /// the memory still there), and every range registered (XFER_MEMORY_REGISTERED) and about to
    /// be unregistered (XFER_MEMORY_UNREGISTERING), on the thread that does it, inside the call.
    /// The context keeps `fn` as it keeps the copy observer, also through its closing (which
    /// tells RELEASING for what it releases). `fn` may copy, query and replace itself; it must
    /// not release a buffer or range of this context, nor the context itself. An exception it
    /// throws is caught (it would otherwise unwind through the C library): the call it
    /// interrupted goes on, and take_memory_observer_exception() returns the latest one.
    /// Throws Error (XFER_ERROR_INVALID_HANDLE when this object holds no context).
    void set_memory_observer(MemoryObserver fn) {
        held("xfer::Context::set_memory_observer").set_memory_observer(std::move(fn));
    }
    /// The latest exception the memory observer threw since the last call (nullptr: none), for
    /// std::rethrow_exception; clears it.
    std::exception_ptr take_memory_observer_exception() {
        return held("xfer::Context::take_memory_observer_exception").take_memory_exception();
    }

    /// Strict mode (xfer_context_set_slow_path): XFER_SLOW_PATH_ALLOW copies everything,
    /// XFER_SLOW_PATH_WARN reports slow copies (to the observer, else the copy log),
    /// XFER_SLOW_PATH_REFUSE makes a copy that would take a slow path (is_slow_path) throw Error
    /// with XFER_ERROR_SLOW_PATH, nothing queued. Throws Error (XFER_ERROR_INVALID_ARGUMENT for a
    /// value that is no xfer_slow_path).
    void set_slow_path(xfer_slow_path policy) const {
        check(xfer_context_set_slow_path(get(), policy), "xfer_context_set_slow_path");
    }
    /// The policy in force (xfer_context_get_slow_path): the config key slow_path / XFER_SLOW_PATH
    /// at open, or what set_slow_path set.
    xfer_slow_path slow_path() const {
        xfer_slow_path policy = XFER_SLOW_PATH_ALLOW;
        check(xfer_context_get_slow_path(get(), &policy), "xfer_context_get_slow_path");
        return policy;
    }

  private:
    friend class Buffer;
    friend class Stream;
    friend class Event;
    friend class Registration;
    const detail::SharedContext &share() const noexcept { return handle_; }
    detail::ContextHandle &held(const char *call) const {
        if (!handle_)
            throw Error(XFER_ERROR_INVALID_HANDLE, std::string(call) +
                                                       ": XFER_ERROR_INVALID_HANDLE: this object holds no context "
                                                       "(closed before, or moved from)");
        return *handle_;
    }

    detail::SharedContext handle_;
    std::string backend_;
    int device_ = 0;
    xfer_device_kind kind_ = XFER_DEVICE_KIND_HOST;
    unsigned caps_ = 0;
};

/// A host range registered with a context (xfer_register), unregistered (xfer_unregister,
/// which waits for the context's queued work first) by the destructor or unregister().
/// Move-only. It keeps its context open until it is unregistered; the memory itself is the
/// caller's and must outlive the registration.
class Registration {
  public:
    Registration() = default;
    /// xfer_register(ctx, ptr, bytes, flags); throws Error with its status (e.g.
    /// XFER_ERROR_INVALID_STATE for a range that overlaps one already registered).
    Registration(const Context &ctx, void *ptr, std::size_t bytes, unsigned flags = XFER_REGISTER_DEFAULT) {
        check(xfer_register(ctx.get(), ptr, bytes, flags), "xfer_register");
        ctx_ = ctx.share();
        ptr_ = ptr;
        bytes_ = bytes;
    }
    ~Registration() { reset(); }
    Registration(Registration &&o) noexcept
        : ctx_(std::move(o.ctx_)), ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    Registration &operator=(Registration &&o) noexcept {
        if (this != &o) {
            reset();
            ctx_ = std::move(o.ctx_);
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    Registration(const Registration &) = delete;
    Registration &operator=(const Registration &) = delete;

    /// Start of the range (the address given to xfer_register); nullptr once unregistered.
    void *ptr() const noexcept { return ptr_; }
    /// Length of the range in bytes; 0 once unregistered.
    std::size_t bytes() const noexcept { return bytes_; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }

    /// Unregisters now, reporting a failure that the destructor would ignore; the range is
    /// forgotten, and the share of the context let go, either way (the C contract). Does
    /// nothing when already unregistered.
    void unregister() {
        if (!ptr_) return;
        void *p = std::exchange(ptr_, nullptr);
        bytes_ = 0;
        detail::SharedContext ctx = std::move(ctx_); // let go at return, after the call
        check(xfer_unregister(ctx->get(), p), "xfer_unregister");
    }

  private:
    void reset() noexcept {
        if (ptr_) (void)xfer_unregister(ctx_->get(), ptr_); // destructors cannot report: see the header
        ptr_ = nullptr;
        bytes_ = 0;
        ctx_.reset(); // after the range: the context may close here
    }
    detail::SharedContext ctx_;
    void *ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

inline Registration Context::register_memory(void *ptr, std::size_t bytes, unsigned flags) const {
    return Registration(*this, ptr, bytes, flags);
}

template <class C, class, class>
Registration Context::register_memory(C &container, unsigned flags) const {
    auto *data = std::data(container);
    using T = std::remove_pointer_t<decltype(data)>;
    return Registration(*this, const_cast<std::remove_cv_t<T> *>(data), std::size(container) * sizeof(T), flags);
}

/// An in-order queue of work (xfer_stream_create / xfer_stream_destroy); keeps its context open.
class Stream {
  public:
    /// xfer_stream_create; throws Error with its status.
    explicit Stream(const Context &ctx) {
        xfer_stream h = nullptr;
        check(xfer_stream_create(ctx.get(), &h), "xfer_stream_create");
        h_ = Owner(ctx.share(), h);
    }

    /// A stream the program owns, wrapped so that xfer's work queues on it in order with the
    /// program's own (xfer_stream_wrap): on CUDA backends `native` is a cudaStream_t of ctx's
    /// device (nullptr: the legacy default stream). The native stream must stay alive until the
    /// returned Stream is destroyed; destroying it waits for the work queued on the native
    /// stream so far and never destroys that. Throws Error: XFER_ERROR_NOT_SUPPORTED on the
    /// host backend (it has no native streams), XFER_ERROR_INVALID_STATE (`native` already is a
    /// stream of this context), XFER_ERROR_INVALID_ARGUMENT (a stream of another device),
    /// XFER_ERROR_INVALID_HANDLE (ctx closed or moved from), XFER_ERROR_BACKEND.
    static Stream wrap(const Context &ctx, void *native) {
        xfer_stream h = nullptr;
        check(xfer_stream_wrap(ctx.get(), native, &h), "xfer_stream_wrap");
        return Stream(Owner(ctx.share(), h));
    }

    xfer_stream get() const noexcept { return h_.get(); }
    /// Blocks until all queued work is done (xfer_stream_synchronize).
    void synchronize() const { check(xfer_stream_synchronize(get()), "xfer_stream_synchronize"); }
    /// true when all queued work is done (xfer_stream_query; never blocks).
    bool query() const { return detail::ready(xfer_stream_query(get()), "xfer_stream_query"); }
    /// Later work on this stream waits for `e` (xfer_stream_wait_event).
    inline void wait(const Event &e) const;
    /// Queues fn(user_data) after earlier work (xfer_stream_launch_host_func).
    void launch_host_func(xfer_host_fn fn, void *user_data) const {
        check(xfer_stream_launch_host_func(get(), fn, user_data), "xfer_stream_launch_host_func");
    }
    /// The backend's stream (xfer_stream_native): cudaStream_t on CUDA backends (the wrapped
    /// one for a wrapped stream), an opaque identifier on host; valid while this object lives.
    /// Throws Error: XFER_ERROR_INVALID_HANDLE when this object holds no stream (moved from),
    /// XFER_ERROR_BACKEND when the backend has none (the message says why).
    void *native() const {
        return detail::native_or_throw(xfer_stream_native(get()), get() != nullptr, "xfer_stream_native");
    }

  private:
    using Owner = detail::Owner<xfer_stream, xfer_stream_destroy>;
    explicit Stream(Owner h) noexcept : h_(std::move(h)) {}
    Owner h_;
};

/// A marker in a stream (xfer_event_create / xfer_event_destroy); keeps its context open.
class Event {
  public:
    /// xfer_event_create; flags: XFER_EVENT_*. Throws Error with its status.
    explicit Event(const Context &ctx, unsigned flags = XFER_EVENT_DEFAULT) {
        xfer_event h = nullptr;
        check(xfer_event_create(ctx.get(), flags, &h), "xfer_event_create");
        h_ = Owner(ctx.share(), h);
    }
    xfer_event get() const noexcept { return h_.get(); }
    void record(const Stream &s) const { check(xfer_event_record(get(), s.get()), "xfer_event_record"); }
    void synchronize() const { check(xfer_event_synchronize(get()), "xfer_event_synchronize"); }
    /// true when the event has completed (or was never recorded); never blocks.
    bool query() const { return detail::ready(xfer_event_query(get()), "xfer_event_query"); }
    /// Milliseconds from `start` to `end` (xfer_event_elapsed_ms).
    static float elapsed_ms(const Event &start, const Event &end) {
        float ms = 0;
        check(xfer_event_elapsed_ms(start.get(), end.get(), &ms), "xfer_event_elapsed_ms");
        return ms;
    }
    /// The backend's event (xfer_event_native), for the program's own calls: cudaEvent_t on
    /// CUDA backends (e.g. cudaStreamWaitEvent(app_stream, native, 0)), an opaque identifier on
    /// host; valid while this object lives. Throws Error: XFER_ERROR_INVALID_HANDLE when this
    /// object holds no event (moved from), XFER_ERROR_BACKEND when the backend has none (the
    /// message says why).
    void *native() const {
        return detail::native_or_throw(xfer_event_native(get()), get() != nullptr, "xfer_event_native");
    }

  private:
    using Owner = detail::Owner<xfer_event, xfer_event_destroy>;
    Owner h_;
};

/// One logical array with a host view and a device view (xfer_alloc / xfer_free); keeps its
/// context open, so its views stay valid for as long as the Buffer lives.
class Buffer {
  public:
    /// xfer_alloc of `bytes` bytes (flags: XFER_ALLOC_*); throws Error with its status (e.g.
    /// XFER_ERROR_INVALID_SIZE for 0 bytes, XFER_ERROR_OUT_OF_MEMORY).
    Buffer(const Context &ctx, std::size_t bytes, unsigned flags = XFER_ALLOC_DEFAULT) : bytes_(bytes) {
        xfer_buffer h = nullptr;
        check(xfer_alloc(ctx.get(), bytes, flags, &h), "xfer_alloc");
        h_ = Owner(ctx.share(), h);
        host_ = xfer_host_ptr(h);
        device_ = xfer_device_ptr(h);
        if (!host_ || !device_)
            throw Error(XFER_ERROR_INTERNAL, describe_failure(XFER_ERROR_INTERNAL, "xfer_host_ptr/xfer_device_ptr"));
    }
    Buffer(Buffer &&o) noexcept
        : h_(std::move(o.h_)), bytes_(std::exchange(o.bytes_, 0)), host_(std::exchange(o.host_, nullptr)),
          device_(std::exchange(o.device_, nullptr)) {}
    Buffer &operator=(Buffer &&o) noexcept {
        if (this != &o) {
            h_ = std::move(o.h_); // frees this buffer first
            bytes_ = std::exchange(o.bytes_, 0);
            host_ = std::exchange(o.host_, nullptr);
            device_ = std::exchange(o.device_, nullptr);
        }
        return *this;
    }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;

    xfer_buffer get() const noexcept { return h_.get(); }
    /// Size in bytes; 0 once moved from.
    std::size_t bytes() const noexcept { return bytes_; }
    /// Host view (CPU memory) and device view (for device kernels) as typed pointers; valid
    /// while the buffer lives, nullptr once moved from.
    template <class T = unsigned char>
    T *host() const noexcept {
        return static_cast<T *>(host_);
    }
    template <class T = unsigned char>
    T *device() const noexcept {
        return static_cast<T *>(device_);
    }
    /// The host view as bytes() / sizeof(T) elements of T; valid while the buffer lives.
    template <class T = unsigned char>
    span<T> host_span() const noexcept {
        return span<T>(static_cast<T *>(host_), bytes_ / sizeof(T));
    }

    /// Queues a copy of [offset, offset+bytes) between the views on `s` (xfer_copy_async).
    void copy_async(xfer_direction dir, std::size_t offset, std::size_t bytes, const Stream &s) const {
        check(xfer_copy_async(get(), dir, offset, bytes, s.get()), "xfer_copy_async");
    }
    /// The whole buffer.
    void copy_async(xfer_direction dir, const Stream &s) const { copy_async(dir, 0, bytes_, s); }
    /// Copies and waits, on the context's internal stream (xfer_copy).
    void copy(xfer_direction dir, std::size_t offset, std::size_t bytes) const {
        check(xfer_copy(get(), dir, offset, bytes), "xfer_copy");
    }
    void copy(xfer_direction dir) const { copy(dir, 0, bytes_); }

    /// Describes this buffer for another process, or another context of this one
    /// (xfer_buffer_export): the returned Export owns new descriptors of its memory; the buffer
    /// stays as it is. Throws Error: XFER_ERROR_INVALID_STATE (allocated without
    /// XFER_ALLOC_SHAREABLE), XFER_ERROR_INVALID_HANDLE (moved from), XFER_ERROR_NOT_SUPPORTED
    /// (the backend cannot export), XFER_ERROR_BACKEND.
    Export export_buffer() const {
        Export e;
        check(xfer_buffer_export(get(), &e.e_), "xfer_buffer_export");
        return e;
    }

  private:
    friend class Context;
    using Owner = detail::Owner<xfer_buffer, xfer_free>;
    // Adopts `h`, a buffer of ctx made by the C library (xfer_buffer_import).
    Buffer(detail::SharedContext ctx, xfer_buffer h) : h_(std::move(ctx), h), bytes_(xfer_buffer_size(h)) {
        host_ = xfer_host_ptr(h);
        device_ = xfer_device_ptr(h);
        if (!host_ || !device_)
            throw Error(XFER_ERROR_INTERNAL, describe_failure(XFER_ERROR_INTERNAL, "xfer_host_ptr/xfer_device_ptr"));
    }
    Owner h_;
    std::size_t bytes_ = 0;
    void *host_ = nullptr;
    void *device_ = nullptr;
};

inline Buffer Context::import_buffer(const Export &e) const {
    xfer_buffer h = nullptr;
    check(xfer_buffer_import(get(), &e.get(), &h), "xfer_buffer_import");
    return Buffer(handle_, h); // frees h if it throws
}

inline void Context::memcpy_async(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind,
                                  const Stream &s) const {
    check(xfer_memcpy_async(get(), dst, src, bytes, kind, s.get()), "xfer_memcpy_async");
}

inline void Context::memcpy_batch_async(const std::vector<void *> &dsts, const std::vector<const void *> &srcs,
                                        const std::vector<std::size_t> &sizes, xfer_copy_kind kind,
                                        const Stream &s) const {
    if (dsts.size() != srcs.size() || dsts.size() != sizes.size())
        throw Error(XFER_ERROR_INVALID_ARGUMENT,
                    "xfer::Context::memcpy_batch_async: dsts, srcs and sizes differ in length");
    check(xfer_memcpy_batch_async(get(), dsts.data(), srcs.data(), sizes.data(), dsts.size(), kind, s.get()),
          "xfer_memcpy_batch_async");
}

inline void Stream::wait(const Event &e) const {
    check(xfer_stream_wait_event(get(), e.get()), "xfer_stream_wait_event");
}

} // namespace xfer

#endif // XFER_XFER_HPP
