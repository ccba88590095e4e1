// SPDX-License-Identifier: Apache-2.0
// What only the host backend promises, on top of the contract suite (tests/contract): its
// device_memory parameter, its device description, and that a throwing host function is
// reported instead of ending the stream's worker thread.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <xfer/xfer.h>
#include <xfer_test/support.hpp>

namespace {

using xfer::test::EnvGuard;

// Sets XFER_HOST_DEVICE_MEMORY for one test; the core reads it at xfer_open.
struct ScopedDeviceMemory : EnvGuard {
    explicit ScopedDeviceMemory(const char *value) : EnvGuard("XFER_HOST_DEVICE_MEMORY", value) {}
};

TEST(HostBackend, DescribesItself) {
    int count = 0;
    ASSERT_XFER_OK(xfer_backend_count(&count));
    bool found = false;
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        ASSERT_XFER_OK(xfer_backend_get_info(i, &info));
        if (std::string(info.name) != "host") {
            continue;
        }
        found = true;
        EXPECT_EQ(info.available, 1) << info.reason;
        EXPECT_EQ(info.device_count, 1);
        EXPECT_EQ(info.device_kind, XFER_DEVICE_KIND_HOST);
        EXPECT_NE(std::string(info.description).find("emulated"), std::string::npos) << info.description;
        EXPECT_NE(std::string(info.path).find("libxfer-backend-host.so"), std::string::npos) << info.path;
    }
    ASSERT_TRUE(found) << "the host backend was not found on the plugin search path";

    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    xfer_context_info info{};
    EXPECT_XFER_OK(xfer_context_get_info(ctx, &info));
    EXPECT_EQ(info.caps, XFER_CAP_ASYNC_COPY);
    xfer_device_info dev{};
    EXPECT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_STREQ(dev.name, "host (emulated device)");
    EXPECT_EQ(dev.kind, XFER_DEVICE_KIND_HOST);
    EXPECT_EQ(dev.multiprocessors, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    EXPECT_EQ(dev.compute_major, 0);
    EXPECT_EQ(dev.unified_addressing, 1);
    EXPECT_XFER_OK(xfer_close(ctx));
}

TEST(HostBackend, DeclaresTheDeviceMemoryParameter) {
    int count = 0;
    ASSERT_XFER_OK(xfer_param_count(&count));
    bool found = false;
    for (int i = 0; i < count; ++i) {
        xfer_param_info p{};
        ASSERT_XFER_OK(xfer_param_get_info(i, &p));
        if (std::string(p.section) == "host" && std::string(p.name) == "device_memory") {
            found = true;
            EXPECT_STREQ(p.type, "size");
            EXPECT_STREQ(p.default_value, "0");
            EXPECT_STREQ(p.env, "XFER_HOST_DEVICE_MEMORY");
            EXPECT_GT(std::strlen(p.help), 0u);
        }
    }
    EXPECT_TRUE(found);
}

TEST(HostBackend, DeviceMemoryParameterCapsAllocations) {
    ScopedDeviceMemory limit("1MiB");
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    xfer_device_info dev{};
    ASSERT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.total_memory, 1u << 20);
    EXPECT_EQ(dev.free_memory, 1u << 20);

    xfer_buffer first = nullptr, second = nullptr, third = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx, 600 << 10, 0, &first));
    ASSERT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.free_memory, (1u << 20) - (600u << 10));

    EXPECT_EQ(xfer_alloc(ctx, 600 << 10, 0, &second), XFER_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(xfer_last_error()).find("device_memory"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(second, nullptr);
    ASSERT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.free_memory, (1u << 20) - (600u << 10)) << "a failed allocation must give back what it took";

    // Exactly the rest fits; freeing returns the capacity.
    ASSERT_XFER_OK(xfer_alloc(ctx, (1 << 20) - (600 << 10), 0, &third));
    EXPECT_XFER_OK(xfer_free(first));
    EXPECT_XFER_OK(xfer_alloc(ctx, 600 << 10, 0, &second));
    EXPECT_XFER_OK(xfer_free(second));
    EXPECT_XFER_OK(xfer_free(third));
    ASSERT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.free_memory, 1u << 20);
    EXPECT_XFER_OK(xfer_close(ctx));
}

// Every host buffer takes its size twice from RAM (host view and emulated device view), so
// without a device_memory parameter the emulated device gets half the RAM: a buffer larger than
// half the RAM is refused (a capacity that counted one view would accept it).
TEST(HostBackend, DefaultCapacityCountsBothViews) {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    ASSERT_GT(pages, 0);
    ASSERT_GT(page, 0);
    const std::uint64_t ram = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    xfer_device_info dev{};
    ASSERT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.total_memory, ram / 2);
    EXPECT_LE(dev.free_memory, ram / 2);
    xfer_buffer b = nullptr;
    EXPECT_EQ(xfer_alloc(ctx, static_cast<std::size_t>(ram / 2 + 4096), 0, &b), XFER_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(xfer_last_error()).find("emulated device memory exhausted"), std::string::npos)
        << xfer_last_error();
    EXPECT_NE(std::string(xfer_last_error()).find("half the physical RAM, as device_memory is 0"), std::string::npos)
        << xfer_last_error();
    EXPECT_EQ(b, nullptr);
    EXPECT_XFER_OK(xfer_close(ctx));
}

// Contexts on one emulated device share its memory, as contexts on one GPU do: together they
// never allocate more than device_memory. (Before, each context had the whole capacity.)
TEST(HostBackend, ContextsOfOneDeviceShareItsCapacity) {
    ScopedDeviceMemory limit("1MiB");
    xfer_context first = nullptr, second = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &first));
    ASSERT_XFER_OK(xfer_open("host", 0, &second));
    xfer_buffer a = nullptr, b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(first, 600 << 10, 0, &a));
    xfer_device_info dev{};
    ASSERT_XFER_OK(xfer_device_get_info(second, &dev));
    EXPECT_EQ(dev.free_memory, (1u << 20) - (600u << 10)) << "the other context's buffer is on this device too";
    EXPECT_EQ(xfer_alloc(second, 600 << 10, 0, &b), XFER_ERROR_OUT_OF_MEMORY);
    const std::string message = xfer_last_error();
    EXPECT_NE(message.find("all its contexts together"), std::string::npos) << message;
    EXPECT_NE(message.find("set by the device_memory parameter"), std::string::npos) << message;
    EXPECT_EQ(b, nullptr);
    {
        // A context asking the open device for another capacity is refused, naming both.
        ScopedDeviceMemory other("2MiB");
        xfer_context third = nullptr;
        EXPECT_EQ(xfer_open("host", 0, &third), XFER_ERROR_CONFIG);
        const std::string why = xfer_last_error();
        EXPECT_NE(why.find("1048576"), std::string::npos) << why;
        EXPECT_NE(why.find("2097152"), std::string::npos) << why;
        EXPECT_EQ(third, nullptr);
    }
    // Closing the first context frees its buffer for the second.
    EXPECT_XFER_OK(xfer_close(first));
    EXPECT_XFER_OK(xfer_alloc(second, 600 << 10, 0, &b));
    EXPECT_XFER_OK(xfer_close(second));
    // With every context closed the device may be opened with another capacity.
    ScopedDeviceMemory other("2MiB");
    xfer_context again = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &again));
    ASSERT_XFER_OK(xfer_device_get_info(again, &dev));
    EXPECT_EQ(dev.total_memory, 2u << 20);
    EXPECT_XFER_OK(xfer_close(again));
}

// Holds a stream until released, so "work is still queued" does not depend on timing.
struct Gate {
    std::mutex mutex;
    std::condition_variable opened;
    bool open = false;

    static void wait_fn(void *self) {
        auto *gate = static_cast<Gate *>(self);
        std::unique_lock<std::mutex> lock(gate->mutex);
        gate->opened.wait_for(lock, std::chrono::seconds(30), [gate] { return gate->open; });
    }
    void release() {
        std::lock_guard<std::mutex> lock(mutex);
        open = true;
        opened.notify_all();
    }
};

TEST(HostBackend, DeferredFreeGivesBackDeviceMemoryWhenQueuedWorkEnds) {
    ScopedDeviceMemory limit("1MiB");
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    xfer_stream s = nullptr;
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx, &s));
    ASSERT_XFER_OK(xfer_alloc(ctx, 1 << 20, 0, &b));
    Gate gate;
    EXPECT_XFER_OK(xfer_stream_launch_host_func(s, Gate::wait_fn, &gate));
    EXPECT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, 1 << 20, s));
    EXPECT_XFER_OK(xfer_free(b));
    // The queued copy still holds the memory: the device is full until the stream drains.
    xfer_device_info dev{};
    EXPECT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.free_memory, 0u);
    gate.release();
    ASSERT_XFER_OK(xfer_stream_synchronize(s));
    ASSERT_XFER_OK(xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.free_memory, 1u << 20);
    EXPECT_XFER_OK(xfer_close(ctx));
}

TEST(HostBackend, BadDeviceMemoryValueIsAConfigError) {
    ScopedDeviceMemory limit("lots");
    xfer_context ctx = nullptr;
    EXPECT_EQ(xfer_open("host", 0, &ctx), XFER_ERROR_CONFIG);
    EXPECT_NE(std::string(xfer_last_error()).find("XFER_HOST_DEVICE_MEMORY"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(ctx, nullptr);
}

void throw_from_host_fn(void *) { throw std::runtime_error("boom from a host function"); }

TEST(HostBackend, ThrowingHostFunctionIsReportedAndTheWorkerSurvives) {
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    xfer_stream s = nullptr;
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx, &s));
    ASSERT_XFER_OK(xfer_alloc(ctx, 4096, 0, &b));
    ASSERT_XFER_OK(xfer_stream_launch_host_func(s, throw_from_host_fn, nullptr));
    EXPECT_EQ(xfer_stream_synchronize(s), XFER_ERROR_BACKEND);
    EXPECT_NE(std::string(xfer_last_error()).find("boom from a host function"), std::string::npos) << xfer_last_error();
    // Reported once; the worker is alive and the stream works on.
    EXPECT_XFER_OK(xfer_stream_synchronize(s));
    auto *host = static_cast<unsigned char *>(xfer_host_ptr(b));
    for (int i = 0; i < 4096; ++i) {
        host[i] = static_cast<unsigned char>(i * 7 + 1);
    }
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, 4096, s));
    ASSERT_XFER_OK(xfer_stream_synchronize(s));
    EXPECT_EQ(std::memcmp(xfer_host_ptr(b), xfer_device_ptr(b), 4096), 0);
    // Reported by destroy too, when nobody synchronised in between.
    ASSERT_XFER_OK(xfer_stream_launch_host_func(s, throw_from_host_fn, nullptr));
    EXPECT_EQ(xfer_stream_destroy(s), XFER_ERROR_BACKEND);
    EXPECT_XFER_OK(xfer_close(ctx));
}

struct SelfWait {
    xfer_stream stream;
    xfer_status status = XFER_SUCCESS;
    std::string message;
};

void synchronize_own_stream(void *p) {
    auto *self = static_cast<SelfWait *>(p);
    self->status = xfer_stream_synchronize(self->stream);
    self->message = xfer_last_error();
}

TEST(HostBackend, HostFunctionWaitingForItsOwnStreamGetsAnErrorNotADeadlock) {
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    SelfWait self{};
    ASSERT_XFER_OK(xfer_stream_create(ctx, &self.stream));
    ASSERT_XFER_OK(xfer_stream_launch_host_func(self.stream, synchronize_own_stream, &self));
    ASSERT_XFER_OK(xfer_stream_synchronize(self.stream));
    EXPECT_EQ(self.status, XFER_ERROR_INVALID_STATE);
    EXPECT_NE(self.message.find("host function"), std::string::npos) << self.message;
    EXPECT_XFER_OK(xfer_close(ctx));
}

// A host function that destroys its own stream (forbidden) while another thread waits in
// xfer_stream_synchronize: the destroy is refused and nothing changes (the waiter must not
// deadlock, and the stream and its thread must not leak with INVALID_STATE).
struct SelfDestroy {
    xfer_stream stream = nullptr;
    xfer_status status = XFER_SUCCESS;
    std::string message;
};

void destroy_own_stream(void *p) {
    auto *self = static_cast<SelfDestroy *>(p);
    self->status = xfer_stream_destroy(self->stream);
    self->message = xfer_last_error();
}

TEST(HostBackend, HostFunctionDestroyingItsOwnStreamIsRefusedWithoutHangOrLeak) {
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 0, &ctx));
    SelfDestroy self;
    ASSERT_XFER_OK(xfer_stream_create(ctx, &self.stream));
    Gate gate;
    ASSERT_XFER_OK(xfer_stream_launch_host_func(self.stream, Gate::wait_fn, &gate));
    ASSERT_XFER_OK(xfer_stream_launch_host_func(self.stream, destroy_own_stream, &self));
    xfer_status waited = XFER_ERROR_INTERNAL;
    std::thread waiter([&] { waited = xfer_stream_synchronize(self.stream); });
    gate.release();
    waiter.join();
    EXPECT_EQ(waited, XFER_SUCCESS);
    EXPECT_EQ(self.status, XFER_ERROR_INVALID_STATE);
    EXPECT_NE(self.message.find("host function"), std::string::npos) << self.message;
    // Still a live stream: it works, and destroying it from the program succeeds.
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx, 4096, 0, &b));
    std::memset(xfer_host_ptr(b), 0x5a, 4096);
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, 4096, self.stream));
    ASSERT_XFER_OK(xfer_stream_synchronize(self.stream));
    EXPECT_EQ(std::memcmp(xfer_host_ptr(b), xfer_device_ptr(b), 4096), 0);
    EXPECT_XFER_OK(xfer_stream_destroy(self.stream));
    EXPECT_XFER_OK(xfer_close(ctx));
}

// Sets XFER_HOST_DEVICES for one test; the core reads it at every enumeration and xfer_open.
struct ScopedDevices : EnvGuard {
    explicit ScopedDevices(const char *value) : EnvGuard("XFER_HOST_DEVICES", value) {}
};

int host_device_count() {
    int count = 0;
    EXPECT_XFER_OK(xfer_backend_count(&count));
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        EXPECT_XFER_OK(xfer_backend_get_info(i, &info));
        if (std::string(info.name) == "host") return info.device_count;
    }
    return -1;
}

TEST(HostBackend, DevicesParameterSetsTheDeviceCount) {
    EXPECT_EQ(host_device_count(), 1); // the declared default
    ScopedDevices devices("4");
    EXPECT_EQ(host_device_count(), 4);
    xfer_context last = nullptr;
    ASSERT_XFER_OK(xfer_open("host", 3, &last));
    xfer_device_info dev{};
    EXPECT_XFER_OK(xfer_device_get_info(last, &dev));
    EXPECT_EQ(dev.ordinal, 3);
    EXPECT_XFER_OK(xfer_close(last));
    xfer_context none = nullptr;
    EXPECT_EQ(xfer_open("host", 4, &none), XFER_ERROR_NO_DEVICE);
    EXPECT_NE(std::string(xfer_last_error()).find("4 device(s)"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(none, nullptr);
}

TEST(HostBackend, DevicesBelowOneIsAConfigurationError) {
    for (const char *bad : {"0", "-2"}) {
        ScopedDevices devices(bad);
        xfer_context ctx = nullptr;
        EXPECT_EQ(xfer_open("host", 0, &ctx), XFER_ERROR_CONFIG) << bad;
        const std::string m = xfer_last_error();
        EXPECT_NE(m.find("devices"), std::string::npos) << m;
        EXPECT_NE(m.find(std::string("'") + bad + "'"), std::string::npos) << m;
        EXPECT_EQ(ctx, nullptr);
    }
    // Not an int at all: the core's own type check names the variable.
    ScopedDevices devices("two");
    xfer_context ctx = nullptr;
    EXPECT_EQ(xfer_open("host", 0, &ctx), XFER_ERROR_CONFIG);
    EXPECT_NE(std::string(xfer_last_error()).find("XFER_HOST_DEVICES"), std::string::npos) << xfer_last_error();
}

} // namespace
