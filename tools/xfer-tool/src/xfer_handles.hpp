// Owning C++ wrappers of the xfer C handles, for the tool's own use.
//
// Why exceptions inside the tool: a workflow is a long sequence of API calls; throwing one
// XferError that names the failing call and carries xfer_last_error() keeps every workflow
// readable, and the runner turns it into a reported error and an exit status.
#pragma once

#include <xfer/xfer.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace xfer_tool {

class XferError : public std::runtime_error {
  public:
    XferError(xfer_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    xfer_status status() const { return status_; }

  private:
    xfer_status status_;
};

// Throws XferError("<call>: <STATUS>: <xfer_last_error()>") unless st is XFER_SUCCESS.
void check(xfer_status st, const char *call);

// "<call>: <STATUS>: <detail>" for reports.
std::string describe_failure(xfer_status st, const char *call);

class Context {
  public:
    // backend "" lets the library choose (XFER_BACKEND, the config file, or its default order);
    // device -1 likewise.
    Context(const std::string &backend, int device);
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    xfer_context get() const { return handle_; }
    const std::string &backend() const { return backend_; }
    int device() const { return device_; }
    xfer_device_kind device_kind() const { return kind_; }
    unsigned caps() const { return caps_; }
    xfer_device_info device_info() const;

  private:
    xfer_context handle_ = nullptr;
    std::string backend_;
    int device_ = 0;
    xfer_device_kind kind_ = XFER_DEVICE_KIND_HOST;
    unsigned caps_ = 0;
};

class Buffer {
  public:
    Buffer(const Context &ctx, std::size_t bytes, unsigned flags = XFER_ALLOC_DEFAULT);
    ~Buffer();
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;

    xfer_buffer get() const { return handle_; }
    std::size_t bytes() const { return bytes_; }
    template <class T = unsigned char> T *host() const { return static_cast<T *>(host_); }
    template <class T = unsigned char> T *device() const { return static_cast<T *>(device_); }

  private:
    xfer_buffer handle_ = nullptr;
    std::size_t bytes_ = 0;
    void *host_ = nullptr;
    void *device_ = nullptr;
};

class Stream {
  public:
    explicit Stream(const Context &ctx);
    ~Stream();
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;

    xfer_stream get() const { return handle_; }
    void synchronize() const;

  private:
    xfer_stream handle_ = nullptr;
};

class Event {
  public:
    explicit Event(const Context &ctx, unsigned flags = XFER_EVENT_DEFAULT);
    ~Event();
    Event(Event &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    Event(const Event &) = delete;
    Event &operator=(const Event &) = delete;
    Event &operator=(Event &&) = delete;

    xfer_event get() const { return handle_; }

  private:
    xfer_event handle_ = nullptr;
};

} // namespace xfer_tool
