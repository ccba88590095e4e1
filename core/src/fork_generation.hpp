// SPDX-License-Identifier: Apache-2.0
// fork(): what a child process may do (the rules are in xfer.h, "fork()").
//
// The core counts forks (with pthread_atfork: fork_support.cpp). Contexts and plugins remember
// the count they were made at; one made before the fork that produced this process is
// inherited, and using it gets XFER_ERROR_INVALID_STATE instead of a hang on worker threads or
// CUDA state that do not exist in the child. This header is only the count: the handlers that
// hold the core's locks across fork() sit above everything they lock, in fork_support.cpp.
#pragma once

#include <atomic>
#include <cstdint>

namespace xfer::core {

// Counted by the pthread_atfork child handler (fork_support.cpp; defined in fork_generation.cpp);
// read inline, since every API call compares its context's generation with it.
extern std::atomic<std::uint64_t> g_fork_generation;

// How many forks lie between the process that loaded libxfer.so and this one (0 in the parent).
inline std::uint64_t fork_generation() noexcept { return g_fork_generation.load(std::memory_order_acquire); }

} // namespace xfer::core
