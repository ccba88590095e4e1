// SPDX-License-Identifier: Apache-2.0
// Everything tests/support offers: status assertions, test data, environment guards.
#pragma once

#include "xfer_test/bytes.hpp"
#include "xfer_test/env.hpp"
#include "xfer_test/status.hpp"
