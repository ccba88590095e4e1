#include "xfer_handles.hpp"

namespace xfer_tool {

std::string describe_failure(xfer_status st, const char *call)
{
    std::string message = std::string(call) + ": " + xfer_status_string(st);
    std::string detail = xfer_last_error() ? xfer_last_error() : "";
    // The library's message often names the call already: say it once.
    const std::string prefix = std::string(call) + ": ";
    if (detail.rfind(prefix, 0) == 0)
        detail = detail.substr(prefix.size());
    if (!detail.empty())
        message += ": " + detail;
    return message;
}

void check(xfer_status st, const char *call)
{
    if (st != XFER_SUCCESS)
        throw XferError(st, describe_failure(st, call));
}

Context::Context(const std::string &backend, int device)
{
    check(xfer_open(backend.empty() ? nullptr : backend.c_str(), device, &handle_), "xfer_open");
    xfer_context_info info{};
    xfer_status st = xfer_context_get_info(handle_, &info);
    if (st != XFER_SUCCESS) {
        std::string message = describe_failure(st, "xfer_context_get_info");
        xfer_close(handle_);
        throw XferError(st, message);
    }
    backend_ = info.backend ? info.backend : backend;
    device_ = info.device;
    kind_ = info.device_kind;
    caps_ = info.caps;
}

Context::~Context()
{
    // Destructors cannot report; close's own failure leaves nothing the tool could act on.
    if (handle_)
        xfer_close(handle_);
}

xfer_device_info Context::device_info() const
{
    xfer_device_info info{};
    check(xfer_device_get_info(handle_, &info), "xfer_device_get_info");
    return info;
}

Buffer::Buffer(const Context &ctx, std::size_t bytes, unsigned flags) : bytes_(bytes)
{
    check(xfer_alloc(ctx.get(), bytes, flags, &handle_), "xfer_alloc");
    host_ = xfer_host_ptr(handle_);
    device_ = xfer_device_ptr(handle_);
    if (!host_ || !device_) {
        std::string message = "xfer_host_ptr/xfer_device_ptr returned NULL for a new buffer: " +
                              std::string(xfer_last_error());
        xfer_free(handle_);
        throw XferError(XFER_ERROR_INTERNAL, message);
    }
}

Buffer::~Buffer()
{
    if (handle_)
        xfer_free(handle_);
}

Stream::Stream(const Context &ctx)
{
    check(xfer_stream_create(ctx.get(), &handle_), "xfer_stream_create");
}

Stream::~Stream()
{
    if (handle_)
        xfer_stream_destroy(handle_);
}

void Stream::synchronize() const
{
    check(xfer_stream_synchronize(handle_), "xfer_stream_synchronize");
}

Event::Event(const Context &ctx, unsigned flags)
{
    check(xfer_event_create(ctx.get(), flags, &handle_), "xfer_event_create");
}

Event::~Event()
{
    if (handle_)
        xfer_event_destroy(handle_);
}

} // namespace xfer_tool
