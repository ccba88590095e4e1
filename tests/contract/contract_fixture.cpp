// SPDX-License-Identifier: Apache-2.0
#include "contract_fixture.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace xfer::test::contract {

void ContractTest::SetUp() {
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &ctx_));
    ASSERT_XFER_OK(xfer_context_get_info(ctx_, &info_));
    ASSERT_XFER_OK(xfer_stream_create(ctx_, &stream_));
}

void ContractTest::TearDown() {
    for (auto &gate : gates_) {
        gate->open();
    }
    if (ctx_ != nullptr) {
        EXPECT_XFER_OK(xfer_close(ctx_));
        ctx_ = nullptr;
    }
}

xfer_buffer ContractTest::alloc(std::size_t bytes, unsigned flags) {
    xfer_buffer b = nullptr;
    const xfer_status st = xfer_alloc(ctx_, bytes, flags, &b);
    EXPECT_EQ(st, XFER_SUCCESS) << "xfer_alloc(" << bytes << " bytes, flags " << flags << "): " << xfer_last_error();
    return st == XFER_SUCCESS ? b : nullptr;
}

xfer_stream ContractTest::new_stream() {
    xfer_stream s = nullptr;
    const xfer_status st = xfer_stream_create(ctx_, &s);
    EXPECT_EQ(st, XFER_SUCCESS) << "xfer_stream_create: " << xfer_last_error();
    return st == XFER_SUCCESS ? s : nullptr;
}

xfer_event ContractTest::new_event(unsigned flags) {
    xfer_event e = nullptr;
    const xfer_status st = xfer_event_create(ctx_, flags, &e);
    EXPECT_EQ(st, XFER_SUCCESS) << "xfer_event_create: " << xfer_last_error();
    return st == XFER_SUCCESS ? e : nullptr;
}

HostGate &ContractTest::new_gate() {
    gates_.push_back(std::make_shared<HostGate>());
    return *gates_.back();
}

void ContractTest::write_host(xfer_buffer b, std::size_t offset, const Bytes &data) {
    std::memcpy(static_cast<unsigned char *>(xfer_host_ptr(b)) + offset, data.data(), data.size());
}

Bytes ContractTest::read_host(xfer_buffer b, std::size_t offset, std::size_t bytes) {
    const auto *host = static_cast<const unsigned char *>(xfer_host_ptr(b)) + offset;
    return Bytes(host, host + bytes);
}

::testing::AssertionResult ContractTest::write_device(xfer_buffer b, std::size_t offset, const Bytes &data,
                                                      xfer_stream s) {
    s = s != nullptr ? s : stream_;
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(b)) + offset;
    xfer_status st = xfer_memcpy_async(ctx_, device, data.data(), data.size(), XFER_COPY_HOST_TO_DEVICE, s);
    if (st == XFER_SUCCESS) {
        st = xfer_stream_synchronize(s);
    }
    if (st != XFER_SUCCESS) {
        return ::testing::AssertionFailure()
               << "writing the device view: " << xfer_status_string(st) << ": " << xfer_last_error();
    }
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult ContractTest::read_device(xfer_buffer b, std::size_t offset, std::size_t bytes, Bytes *out,
                                                     xfer_stream s) {
    s = s != nullptr ? s : stream_;
    // A separate host vector, not the buffer's host view: on backends with two views this
    // proves the bytes are in the device view itself.
    Bytes data(bytes);
    const auto *device = static_cast<const unsigned char *>(xfer_device_ptr(b)) + offset;
    xfer_status st = xfer_memcpy_async(ctx_, data.data(), device, bytes, XFER_COPY_DEVICE_TO_HOST, s);
    if (st == XFER_SUCCESS) {
        st = xfer_stream_synchronize(s);
    }
    if (st != XFER_SUCCESS) {
        return ::testing::AssertionFailure()
               << "reading the device view: " << xfer_status_string(st) << ": " << xfer_last_error();
    }
    *out = std::move(data);
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult ContractTest::round_trip(xfer_buffer b, const Bytes &data, xfer_stream s) {
    const std::size_t n = data.size();
    write_host(b, 0, data);
    xfer_status st = xfer_copy_async(b, XFER_TO_DEVICE, 0, n, s);
    if (st == XFER_SUCCESS) {
        st = xfer_stream_synchronize(s);
    }
    if (st != XFER_SUCCESS) {
        return ::testing::AssertionFailure()
               << "copy to device: " << xfer_status_string(st) << ": " << xfer_last_error();
    }
    Bytes on_device;
    if (auto read = read_device(b, 0, n, &on_device, s); !read) {
        return read;
    }
    if (auto same = same_bytes(data, on_device); !same) {
        return same << " (device view after the copy to device)";
    }
    if (!shared_view()) {
        // Every byte changes, so a copy back that moved nothing cannot pass.
        auto *host = static_cast<unsigned char *>(xfer_host_ptr(b));
        for (std::size_t i = 0; i < n; ++i) {
            host[i] = static_cast<unsigned char>(~data[i]);
        }
    }
    st = xfer_copy_async(b, XFER_TO_HOST, 0, n, s);
    if (st == XFER_SUCCESS) {
        st = xfer_stream_synchronize(s);
    }
    if (st != XFER_SUCCESS) {
        return ::testing::AssertionFailure() << "copy to host: " << xfer_status_string(st) << ": " << xfer_last_error();
    }
    if (auto same = same_bytes(data.data(), xfer_host_ptr(b), n); !same) {
        return same << " (host view after the copy back)";
    }
    return ::testing::AssertionSuccess();
}

namespace {
std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

// Puts a known message into xfer_last_error(), so a check can tell whether the call under
// test set its own (a successful call never clears the message).
std::string prime_last_error() {
    xfer_get_version(nullptr, nullptr, nullptr);
    return xfer_last_error();
}

::testing::AssertionResult message_mentions(const std::string &before, std::initializer_list<const char *> mentions) {
    const std::string message = xfer_last_error();
    if (message.empty()) {
        return ::testing::AssertionFailure() << "xfer_last_error() is empty";
    }
    if (message == before) {
        return ::testing::AssertionFailure() << "xfer_last_error() was not set by this call: '" << message << "'";
    }
    for (const char *word : mentions) {
        if (lower(message).find(lower(word)) == std::string::npos) {
            return ::testing::AssertionFailure()
                   << "xfer_last_error() '" << message << "' does not mention '" << word << "'";
        }
    }
    return ::testing::AssertionSuccess() << "'" << message << "'";
}
} // namespace

::testing::AssertionResult fails_with(const std::function<xfer_status()> &call, xfer_status expected,
                                      std::initializer_list<const char *> mentions) {
    const std::string before = prime_last_error();
    const xfer_status got = call();
    if (got != expected) {
        return ::testing::AssertionFailure()
               << "returned " << xfer_status_string(got) << ", expected " << xfer_status_string(expected)
               << " (last error: '" << xfer_last_error() << "')";
    }
    return message_mentions(before, mentions);
}

::testing::AssertionResult yields_null(const std::function<const void *()> &call,
                                       std::initializer_list<const char *> mentions) {
    const std::string before = prime_last_error();
    const void *got = call();
    if (got != nullptr) {
        return ::testing::AssertionFailure() << "returned " << got << ", expected NULL";
    }
    return message_mentions(before, mentions);
}

std::string backend_test_name(const ::testing::TestParamInfo<std::string> &info) {
    std::string name;
    for (char c : info.param) {
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    return name;
}

} // namespace xfer::test::contract
