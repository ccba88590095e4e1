// SPDX-License-Identifier: Apache-2.0
#include "backend_choice.hpp"

#include <cstdlib>

#include "xfer_handles.hpp"

namespace xfer::tool {
namespace {

// xfer.h (xfer_open): the order tried when nothing names a backend.
const char *const kPreferred[] = {"pinned", "pageable", "managed", "zerocopy", "host"};
const char *const kPreferredText = "pinned, pageable, managed, zerocopy, host";

// The entry xfer_open would use for `name`: an available one (a built-in backend listed after
// a shadowing file of the same name), else the first listed; null when none has the name.
const xfer_backend_info *find(const std::vector<xfer_backend_info> &found, const std::string &name) {
    const xfer_backend_info *first = nullptr;
    for (const xfer_backend_info &b : found) {
        if (name != b.name) continue;
        if (b.available) return &b;
        if (!first) first = &b;
    }
    return first;
}

std::string join(const std::vector<std::string> &names) {
    std::string text;
    for (const std::string &n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
}

// Why the preferred backends before the chosen one were passed over: "pinned, pageable:
// unavailable: REASON; managed: not found". Names with the same reason share it.
std::string passed_over(const std::vector<xfer_backend_info> &found, const std::vector<std::string> &names) {
    std::vector<std::pair<std::string, std::vector<std::string>>> groups; // reason -> names
    for (const std::string &name : names) {
        const xfer_backend_info *b = find(found, name);
        const std::string why = b ? std::string("unavailable: ") + b->reason : "not found";
        auto it = groups.begin();
        while (it != groups.end() && it->first != why) ++it;
        if (it == groups.end()) it = groups.insert(groups.end(), {why, {}});
        it->second.push_back(name);
    }
    std::string text;
    for (const auto &[why, who] : groups) text += (text.empty() ? "" : "; ") + join(who) + ": " + why;
    return text;
}

std::string named_by(const NamedBackend &named) {
    if (named.source == XFER_PARAM_ENV) return "named by XFER_BACKEND";
    if (named.config_file.empty()) return "named by the configuration file's backend key";
    return "named by the backend key of the configuration file " + named.config_file;
}

} // namespace

BackendChoice choose_backend(const std::vector<xfer_backend_info> &found, const NamedBackend &named) {
    BackendChoice choice;
    if (!named.value.empty()) {
        choice.name = named.value;
        choice.reason = named_by(named);
        const xfer_backend_info *b = find(found, named.value);
        choice.opens = b && b->available;
        if (!b)
            choice.reason += ", but no backend of that name was found";
        else if (!b->available)
            choice.reason += std::string(", but it is unavailable: ") + b->reason;
        return choice;
    }
    std::vector<std::string> before; // the preferred backends passed over
    for (const char *name : kPreferred) {
        const xfer_backend_info *b = find(found, name);
        if (!b || !b->available) {
            before.emplace_back(name);
            continue;
        }
        choice.name = name;
        choice.opens = true;
        if (b->device_kind == XFER_DEVICE_KIND_HOST && !before.empty())
            choice.reason = "no GPU backend is available (" + passed_over(found, before) + ")";
        else
            choice.reason = std::string("the first available of ") + kPreferredText +
                            (before.empty() ? "" : " (" + passed_over(found, before) + ")");
        return choice;
    }
    choice.reason = std::string("none of ") + kPreferredText + " is available (" + passed_over(found, before) + ")";
    return choice;
}

BackendChoice default_backend() {
    NamedBackend named;
    for (const xfer::Param &p : xfer::params())
        if (p.section.empty() && p.name == "backend") {
            named.value = p.value;
            named.source = p.source;
        }
    if (const char *file = std::getenv("XFER_CONFIG")) named.config_file = file;
    return choose_backend(xfer::backends(), named);
}

} // namespace xfer::tool
