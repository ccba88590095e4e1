// SPDX-License-Identifier: Apache-2.0
// Which backends the contract suite runs on: every backend the API reports available,
// narrowed by XFER_TEST_BACKENDS=a,b when it is set.
#pragma once

#include <string>
#include <vector>

namespace xfer::test::contract {

// Names of the backends under test, in search order. Computed once.
const std::vector<std::string> &backends_under_test();

// The subset of backends_under_test() whose context reports XFER_CAP_ASYNC_COPY.
const std::vector<std::string> &async_copy_backends_under_test();

// Every backend on the plugin search path, available or not: "name (available)" or
// "name (unavailable: reason)". For failure messages.
std::string describe_found_backends();

// Names listed in XFER_TEST_BACKENDS (empty when it is unset).
std::vector<std::string> requested_backends();

} // namespace xfer::test::contract
