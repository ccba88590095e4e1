// SPDX-License-Identifier: Apache-2.0
#include "messages.hpp"

#include <string>

namespace xfer::tool {
namespace {

std::string &prefix() {
    static std::string text = "xfer-tool";
    return text;
}

} // namespace

const char *message_prefix() { return prefix().c_str(); }

void set_message_rank(int rank) { prefix() = "xfer-tool[rank " + std::to_string(rank) + "]"; }

} // namespace xfer::tool
