// Nothing may throw across the plugin ABI: every entry runs its body inside guarded().
#pragma once

#include <exception>
#include <new>

#include "services.hpp"

namespace xfer::cuda {

template <class Body>
xfer_status guarded(const char *entry, Body &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return fail(XFER_ERROR_OUT_OF_MEMORY, "%s: out of host memory for bookkeeping", entry);
    } catch (const std::exception &e) {
        return fail(XFER_ERROR_INTERNAL, "%s: unexpected exception: %s", entry, e.what());
    } catch (...) {
        return fail(XFER_ERROR_INTERNAL, "%s: unexpected non-standard exception", entry);
    }
}

}  // namespace xfer::cuda
