// SPDX-License-Identifier: Apache-2.0
#include "contract_backends.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <xfer/xfer.h>

namespace xfer::test::contract {
namespace {

struct FoundBackend {
    std::string name;
    bool available = false;
    std::string reason;
};

std::vector<FoundBackend> find_backends() {
    std::vector<FoundBackend> found;
    int count = 0;
    if (xfer_backend_count(&count) != XFER_SUCCESS) {
        return found; // the selection test reports the error
    }
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        if (xfer_backend_get_info(i, &info) == XFER_SUCCESS) {
            found.push_back({info.name ? info.name : "", info.available != 0, info.reason ? info.reason : ""});
        }
    }
    return found;
}

bool context_has_async_copy(const std::string &backend) {
    xfer_context ctx = nullptr;
    if (xfer_open(backend.c_str(), 0, &ctx) != XFER_SUCCESS) {
        return false;
    }
    xfer_context_info info{};
    const bool async = xfer_context_get_info(ctx, &info) == XFER_SUCCESS && (info.caps & XFER_CAP_ASYNC_COPY) != 0;
    xfer_close(ctx);
    return async;
}

} // namespace

std::vector<std::string> requested_backends() {
    std::vector<std::string> names;
    const char *env = std::getenv("XFER_TEST_BACKENDS");
    if (env == nullptr) {
        return names;
    }
    std::stringstream list(env);
    std::string name;
    while (std::getline(list, name, ',')) {
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        if (!name.empty()) {
            names.push_back(name);
        }
    }
    return names;
}

const std::vector<std::string> &backends_under_test() {
    static const std::vector<std::string> selected = [] {
        const std::vector<std::string> requested = requested_backends();
        std::vector<std::string> names;
        for (const FoundBackend &b : find_backends()) {
            const bool wanted =
                requested.empty() || std::find(requested.begin(), requested.end(), b.name) != requested.end();
            if (b.available && wanted) {
                names.push_back(b.name);
            }
        }
        return names;
    }();
    return selected;
}

const std::vector<std::string> &async_copy_backends_under_test() {
    static const std::vector<std::string> selected = [] {
        std::vector<std::string> names;
        for (const std::string &name : backends_under_test()) {
            if (context_has_async_copy(name)) {
                names.push_back(name);
            }
        }
        return names;
    }();
    return selected;
}

std::string describe_found_backends() {
    std::ostringstream out;
    for (const FoundBackend &b : find_backends()) {
        out << "  " << b.name << (b.available ? " (available)" : " (unavailable: " + b.reason + ")") << "\n";
    }
    const std::string text = out.str();
    return text.empty() ? "  (no backend found on the plugin search path)\n" : text;
}

} // namespace xfer::test::contract
