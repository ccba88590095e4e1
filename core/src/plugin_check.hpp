// SPDX-License-Identifier: Apache-2.0
// Opening a plugin file runs its code (library constructors, then its entry point) inside the
// calling process, where an abort, a crash or an exit() would end the application. So each
// file is first opened in a throw-away child process, xfer-plugin-check, started with
// posix_spawn: only a file that the child survives is opened in this process.
#pragma once

#include <string>

namespace xfer::core {

// The checker's file name; it lives in the default plugin folder (lib/xfer/ next to
// libxfer.so), where the core finds it.
inline constexpr const char *kPluginCheckName = "xfer-plugin-check";
// The checker's report: usage `xfer-plugin-check FILE FD`; once the plugin's entry point has
// returned it writes kPluginCheckSurvivedByte to FD and exits with kPluginCheckSurvived. A
// process that ends without writing it (abort, crash, exit) means the plugin's code ended it.
inline constexpr int kPluginCheckSurvived = 42;
inline constexpr char kPluginCheckSurvivedByte = 'Y';
// The descriptor number the core gives the checker for its report (or the next one).
inline constexpr int kPluginCheckReportFd = 3;
// The longest a checker may take (a constructor that never returns): then it is killed.
inline constexpr int kPluginCheckSeconds = 30;

// "" when `plugin` may be opened here: the checker reported that it survived it, or there is
// no checker to ask (no checker file in `checker_dir`, or XFER_PLUGIN_CHECK=0: the file is then
// opened directly). Else why not, naming the file, the checker and, where it can be collected,
// its signal or exit status. A check that cannot run or cannot report (no pipe, no process)
// refuses the file: only a report of survival lets it be opened here.
std::string check_plugin_in_child(const std::string &plugin, const std::string &checker_dir);

} // namespace xfer::core
