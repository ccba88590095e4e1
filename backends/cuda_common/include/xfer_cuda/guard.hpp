// SPDX-License-Identifier: Apache-2.0
// Nothing may throw across the plugin ABI: every entry runs its body inside guarded(), or
// inside on_device() when it works on a context.
#pragma once

#include <exception>
#include <new>

#include "context.hpp"
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

// guarded(), with the context's device bound first (see activate) and the context handed to
// `body`, which takes a `const Context &`.
template <class Body>
xfer_status on_device(const char *entry, void *ctx, Body &&body) noexcept {
    return guarded(entry, [&] {
        const Context &c = as_context(ctx);
        if (auto st = activate(c)) {
            return st;
        }
        return body(c);
    });
}

}  // namespace xfer::cuda
