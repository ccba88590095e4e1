// SPDX-License-Identifier: Apache-2.0
// Stopping cleanly on SIGINT (Ctrl-C) and SIGTERM. The handler only records the signal (the
// one thing that is async-signal-safe to do there); the measurement loops poll it between
// measurements and unwind with Interrupted, so every temporary output file is removed on the
// way out and the files at the -o / --trace paths stay as they were. A second signal ends the
// process at once (the handler is reset after the first).
#pragma once

#include <string>
#include <vector>

namespace xfer::tool {

class OutputFile;

// Thrown where a loop notices the signal. Deliberately not a std::exception: the runners'
// catch (const std::exception &) turns failures into a reported error and goes on with the
// next workflow or target, which an interrupt must not do.
struct Interrupted {
    int signal;
};

// Installs the handler for SIGINT and SIGTERM (the commands that measure or write files call
// it first; the others keep the default, which ends them at once).
void install_interrupt_handlers();

// The signal received (SIGINT, SIGTERM), 0 while none was.
int interrupt_signal();

// Throws Interrupted when a signal was received: the polling point of every loop.
void throw_if_interrupted();

// The exit status after an interrupt: 128 + the signal (130 for SIGINT, 143 for SIGTERM), as a
// shell reports a process the signal ended.
int interrupted_exit_status(int signal);

// Prints the one line an interrupted command leaves on stderr ("xfer-tool: interrupted by
// SIGTERM; the earlier report 'r.json' was kept") and returns interrupted_exit_status().
// `files` are the outputs the command would have written (null entries are skipped);
// `on_stdout` names a report that went to stdout and stops short ("" for none).
int report_interrupted(int signal, const std::vector<const OutputFile *> &files, const std::string &on_stdout = "");

} // namespace xfer::tool
