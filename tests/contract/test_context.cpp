// SPDX-License-Identifier: Apache-2.0
// Contexts, device information, versions and status names.
#include <cstring>
#include <string>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class Context : public ContractTest {};

const unsigned kKnownCaps = XFER_CAP_SHARED_VIEW | XFER_CAP_ASYNC_COPY | XFER_CAP_NO_COPY | XFER_CAP_MIGRATES;

TEST_P(Context, InfoNamesTheBackendAndDevice) {
    EXPECT_EQ(std::string(info_.backend), backend());
    EXPECT_EQ(info_.device, 0);
    EXPECT_EQ(info_.caps & ~kKnownCaps, 0u) << "caps has bits the API does not define: " << info_.caps;
    int count = 0;
    ASSERT_XFER_OK(xfer_backend_count(&count));
    bool found = false;
    for (int i = 0; i < count; ++i) {
        xfer_backend_info b{};
        ASSERT_XFER_OK(xfer_backend_get_info(i, &b));
        if (backend() == b.name) {
            found = true;
            EXPECT_EQ(info_.device_kind, b.device_kind);
        }
    }
    EXPECT_TRUE(found);
}

TEST_P(Context, DeviceInfoIsSane) {
    xfer_device_info dev{};
    ASSERT_XFER_OK(xfer_device_get_info(ctx_, &dev));
    EXPECT_GT(std::strlen(dev.name), 0u);
    EXPECT_LT(std::strlen(dev.name), sizeof dev.name);
    EXPECT_EQ(dev.ordinal, 0);
    EXPECT_EQ(dev.kind, info_.device_kind);
    EXPECT_GT(dev.total_memory, 0u);
    EXPECT_LE(dev.free_memory, dev.total_memory);
    EXPECT_GT(dev.multiprocessors, 0);
    if (dev.kind == XFER_DEVICE_KIND_CUDA) {
        EXPECT_GT(dev.compute_major, 0);
        EXPECT_GT(dev.runtime_version, 0);
    }
}

TEST_P(Context, TwoContextsOnOneBackendAreIndependent) {
    xfer_context other = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &other));
    xfer_stream other_stream = nullptr;
    xfer_buffer other_buf = nullptr;
    EXPECT_XFER_OK(xfer_stream_create(other, &other_stream));
    EXPECT_XFER_OK(xfer_alloc(other, 4096, XFER_ALLOC_DEFAULT, &other_buf));
    xfer_buffer mine = alloc(4096);
    ASSERT_NE(mine, nullptr);
    EXPECT_TRUE(round_trip(mine, random_bytes(4096, 11), stream_));
    // Closing one context must leave the other working.
    EXPECT_XFER_OK(xfer_close(other));
    EXPECT_TRUE(round_trip(mine, random_bytes(4096, 12), stream_));
}

TEST_P(Context, VersionMatchesTheHeader) {
    int major = -1, minor = -1, patch = -1;
    ASSERT_XFER_OK(xfer_get_version(&major, &minor, &patch));
    EXPECT_EQ(major, XFER_VERSION_MAJOR);
    EXPECT_GE(minor, 0);
    EXPECT_GE(patch, 0);
}

TEST_P(Context, StatusStringsNameTheStatus) {
    EXPECT_STREQ(xfer_status_string(XFER_SUCCESS), "XFER_SUCCESS");
    EXPECT_STREQ(xfer_status_string(XFER_ERROR_OUT_OF_BOUNDS), "XFER_ERROR_OUT_OF_BOUNDS");
    EXPECT_STREQ(xfer_status_string(XFER_ERROR_INTERNAL), "XFER_ERROR_INTERNAL");
    EXPECT_STREQ(xfer_status_string(static_cast<xfer_status>(12345)), "XFER_ERROR_UNKNOWN_STATUS");
}

XFER_CONTRACT_SUITE(Context);

} // namespace
} // namespace xfer::test::contract
