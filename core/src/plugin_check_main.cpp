// SPDX-License-Identifier: Apache-2.0
// xfer-plugin-check FILE FD: opens one plugin file the way the core does (every symbol bound at
// load), calls its entry point with stand-in core services, writes its verdict to FD and exits
// with kPluginCheckSurvived. The core starts it before opening a file itself (plugin_check.hpp):
// if the plugin's constructors or entry point abort, crash or exit, only this process ends.
// Whether the table is usable is not judged here: the core says that, with its messages.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "plugin_check.hpp"
#include <xfer/xfer_backend.h>

namespace {

void ignore_error(xfer_status, const char *) {}

} // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PLUGIN_FILE REPORT_FD\n", argv[0]);
        return 2;
    }
    const int report = std::atoi(argv[2]);
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) { // else the core reports the loader's message when it opens it
        using Entry = const xfer_backend_table *(*)(const xfer_core_services *);
        auto entry = reinterpret_cast<Entry>(dlsym(library, XFER_BACKEND_ENTRY_SYMBOL));
        if (entry != nullptr) {
            const xfer_core_services services = {sizeof(xfer_core_services),
                                                 XFER_BACKEND_ABI_MAJOR,
                                                 XFER_BACKEND_ABI_MINOR,
                                                 &ignore_error,
                                                 nullptr,
                                                 nullptr,
                                                 nullptr,
                                                 nullptr};
            (void)entry(&services);
        }
    }
    const char survived = xfer::core::kPluginCheckSurvivedByte;
    if (::write(report, &survived, 1) != 1) return 2;
    // Straight out: the verdict is given, and nothing of the plugin's may run after it.
    ::_exit(xfer::core::kPluginCheckSurvived);
}
