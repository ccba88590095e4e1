// SPDX-License-Identifier: Apache-2.0
// The pageable backend's context: a CUDA context plus its staging engine, configured by the
// backend's declared parameters and derived values.
#pragma once

#include <cstddef>
#include <memory>

#include "staging_engine.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::pageable {

struct PageableContext : Context {
    std::unique_ptr<StagingEngine> engine;

    HostCopyHook *host_copy_hook() const noexcept override { return engine.get(); }
    xfer_status close() noexcept override { return engine ? engine->close() : XFER_SUCCESS; }
};

// The declared parameters and derived values (name, type, default, help), for the plugin table.
// Each default is written here once, as text; make_context parses it like any other value.
extern const xfer_backend_param kParams[];
extern const std::size_t kParamCount;
extern const xfer_backend_param kDerived[];
extern const std::size_t kDerivedCount;

// The backend's ContextFactory: a PageableContext with the effective values read and
// range-checked ("auto" values resolved from the machine); XFER_ERROR_CONFIG naming the bad
// one. Runs inside context_create's guarded().
xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out);

} // namespace xfer::cuda::pageable
