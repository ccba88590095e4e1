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
// The checker's exit status after the plugin's entry point returned (any other status, or a
// signal, means the plugin's code ended the process).
inline constexpr int kPluginCheckSurvived = 42;
// The longest a checker may take (a constructor that never returns): then it is killed.
inline constexpr int kPluginCheckSeconds = 30;

// "" when `plugin` may be opened here: the checker survived it, or there is no checker to ask
// (no checker file in `checker_dir`, or XFER_PLUGIN_CHECK=0: the file is then opened
// directly, as before this check existed). Else why not, naming the file, the signal or exit
// status and the checker.
std::string check_plugin_in_child(const std::string &plugin, const std::string &checker_dir);

} // namespace xfer::core
