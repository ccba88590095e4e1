// SPDX-License-Identifier: Apache-2.0
#include "interrupt.hpp"

#include <signal.h>

#include <atomic>
#include <cstdio>

#include "messages.hpp"
#include "output_file.hpp"

namespace xfer::tool {
namespace {

// Lock-free, so storing it is async-signal-safe; the signal may land on any thread (backend
// workers included), and the main thread reads it.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the interrupt flag must be safe to set in a signal handler");

extern "C" void on_interrupt(int signal) { g_signal.store(signal, std::memory_order_relaxed); }

const char *signal_name(int signal) {
    switch (signal) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    default:
        return "a signal";
    }
}

} // namespace

void install_interrupt_handlers() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    // SA_RESTART: reads, writes and waits go on instead of failing with EINTR (the loops poll
    // the flag anyway). SA_RESETHAND: a second signal is not caught, so it ends the process at
    // once when stopping cleanly takes longer than the user wants to wait.
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    for (int signal : {SIGINT, SIGTERM}) sigaction(signal, &action, nullptr);
}

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

void throw_if_interrupted() {
    if (const int signal = interrupt_signal()) throw Interrupted{signal};
}

int interrupted_exit_status(int signal) { return 128 + signal; }

int report_interrupted(int signal, const std::vector<const OutputFile *> &files, const std::string &on_stdout) {
    std::string what;
    auto add = [&](const std::string &part) { what += (what.empty() ? "" : "; ") + part; };
    for (const OutputFile *f : files) {
        if (!f) continue;
        if (f->in_place())
            add("the " + f->kind() + " written to '" + f->path() + "' is incomplete");
        else if (f->target_existed())
            add("the earlier " + f->kind() + " '" + f->path() + "' was kept");
        else
            add("no " + f->kind() + " was written to '" + f->path() + "'");
    }
    if (!on_stdout.empty()) add(on_stdout);
    std::fprintf(stderr, "%s: interrupted by %s before the end%s%s\n", message_prefix(), signal_name(signal),
                 what.empty() ? "" : "; ", what.c_str());
    std::fflush(stderr);
    return interrupted_exit_status(signal);
}

} // namespace xfer::tool
