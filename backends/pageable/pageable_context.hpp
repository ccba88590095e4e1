// SPDX-License-Identifier: Apache-2.0
// The pageable backend's context: a CUDA context plus its staging engine, configured by the
// backend's declared parameters.
#pragma once

#include <cstddef>
#include <memory>

#include "staging_engine.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::pageable {

struct PageableContext : Context {
    std::unique_ptr<StagingEngine> engine; // nullptr when staging is off

    HostCopyHook *host_copy_hook() const noexcept override { return engine.get(); }
    // Reached only without an engine (staging = off): the parameter chose the driver.
    xfer_path_reason direct_pageable_reason(std::size_t /*bytes*/) const noexcept override {
        return XFER_REASON_CONFIGURED;
    }
    xfer_status close() noexcept override { return engine ? engine->close() : XFER_SUCCESS; }
};

// The declared parameters (name, type, default, help), for the plugin table. Each default is
// written here once, as text; make_context parses it like any other value.
extern const xfer_backend_param kParams[];
extern const std::size_t kParamCount;

// The backend's ContextFactory: a PageableContext with the effective values read and
// range-checked ("auto" values resolved from the machine); XFER_ERROR_CONFIG naming the bad
// one. Runs inside context_create's guarded().
xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out);

} // namespace xfer::cuda::pageable
