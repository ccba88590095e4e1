// SPDX-License-Identifier: Apache-2.0
// Copies of user (malloc'd) memory on the GPU, decided from the machine's calibration: the
// calibration measured once and kept per GPU (a later open reuses it, a changed key measures
// again, `off` keeps nothing), the values derived from it, the per-copy choice (one-off copies
// staged, a range copied again page-locked in the background, a registration that pays at once
// made on first use), the pin budget (LRU eviction, RLIMIT_MEMLOCK), xfer_unregister of a range
// the cache page-locked, and the path override. Every copy's bytes are compared.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "test_support.hpp"
#include <xfer/xfer.h>
#include <xfer_test/env.hpp>

namespace xfer::test {
namespace {

namespace fs = std::filesystem;
constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Records {
    std::vector<xfer_copy_record> seen;
    static void observe(const xfer_copy_record *r, void *self) { static_cast<Records *>(self)->seen.push_back(*r); }
};

// A folder of calibrations of its own for each test (removed after), so that the first open of
// each test measures and nothing of the user's cache is read or written.
class GpuUserMemory : public ::testing::Test {
  protected:
    void SetUp() override {
        XFER_REQUIRE_CUDA_DEVICE();
        dir_ = fs::temp_directory_path() / ("xfer-gpu-user-memory-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        calibration_ = std::make_unique<EnvGuard>("XFER_CALIBRATION", dir_.string().c_str());
    }
    void TearDown() override {
        for (xfer_context c : contexts_) EXPECT_XFER_OK(xfer_close(c));
        for (void *d : device_) (void)cudaFree(d);
        calibration_.reset();
        fs::remove_all(dir_);
    }

    xfer_context open(const char *backend) {
        xfer_context c = nullptr;
        EXPECT_XFER_OK(xfer_open(backend, 0, &c));
        contexts_.push_back(c);
        return c;
    }
    void close(xfer_context c) {
        EXPECT_XFER_OK(xfer_close(c));
        contexts_.erase(std::find(contexts_.begin(), contexts_.end(), c));
    }
    void *device(std::size_t bytes) {
        void *d = nullptr;
        EXPECT_EQ(cudaSuccess, cudaMalloc(&d, bytes));
        device_.push_back(d);
        return d;
    }
    std::string kept_file() const {
        for (const auto &e : fs::directory_iterator(dir_))
            if (e.path().extension() == ".json") return e.path().string();
        return "";
    }
    static std::string read(const std::string &path) {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }
    static xfer_calibration_info calibrate(xfer_context c, unsigned flags) {
        xfer_calibration_info info{};
        info.struct_size = sizeof info;
        EXPECT_XFER_OK(xfer_calibrate(c, flags, &info));
        return info;
    }
    // The setting `name` of context c (value, source), asserting it exists.
    static std::pair<std::string, xfer_param_source> setting(xfer_context c, const std::string &name, bool *derived) {
        int count = 0;
        EXPECT_XFER_OK(xfer_context_setting_count(c, &count));
        for (int i = 0; i < count; ++i) {
            xfer_param_info info{};
            int d = 0;
            EXPECT_XFER_OK(xfer_context_get_setting(c, i, &info, &d));
            if (name == info.name) {
                *derived = d != 0;
                return {info.value, info.source};
            }
        }
        ADD_FAILURE() << "no setting " << name;
        return {"", XFER_PARAM_DEFAULT};
    }
    // Copies `host` to `dev` and back through xfer on `s`, comparing the bytes; the paths taken.
    std::vector<xfer_copy_record> round_trip(xfer_context c, xfer_stream s, Bytes &host, void *dev) {
        Records r;
        EXPECT_XFER_OK(xfer_set_copy_observer(c, &Records::observe, &r));
        EXPECT_XFER_OK(xfer_memcpy_async(c, dev, host.data(), host.size(), XFER_COPY_HOST_TO_DEVICE, s));
        EXPECT_XFER_OK(xfer_stream_synchronize(s));
        Bytes on_device(host.size());
        EXPECT_EQ(cudaSuccess, cudaMemcpy(on_device.data(), dev, host.size(), cudaMemcpyDeviceToHost));
        EXPECT_TRUE(on_device == host) << "the device holds other bytes after the copy";
        const Bytes sent = host;
        std::memset(host.data(), 0, host.size());
        EXPECT_XFER_OK(xfer_memcpy_async(c, host.data(), dev, host.size(), XFER_COPY_DEVICE_TO_HOST, s));
        EXPECT_XFER_OK(xfer_stream_synchronize(s));
        EXPECT_TRUE(host == sent) << "the host holds other bytes after the copy back";
        EXPECT_XFER_OK(xfer_set_copy_observer(c, nullptr, nullptr));
        return r.seen;
    }
    static xfer_registration_stats registrations(xfer_context c) {
        xfer_registration_stats st{};
        EXPECT_XFER_OK(xfer_registration_get_stats(c, &st));
        return st;
    }

    fs::path dir_;
    std::unique_ptr<EnvGuard> calibration_;
    std::vector<xfer_context> contexts_;
    std::vector<void *> device_;
};

TEST_F(GpuUserMemory, TheFirstOpenMeasuresOnceAndLaterOpensReuseIt) {
    xfer_context c = open("pageable");
    const std::string file = kept_file();
    ASSERT_FALSE(file.empty()) << "the first open of the GPU kept no calibration in " << dir_;
    const std::string first = read(file);
    EXPECT_NE(std::string::npos, first.find("\"staged\"")) << "the pageable backend measures its engine too";
    xfer_calibration_info info = calibrate(c, 0);
    EXPECT_EQ(first, read(file)) << "a calibration that holds is read, not measured again";
    EXPECT_EQ(1, info.measured) << "the open of this process measured it";
    EXPECT_EQ(file, std::string(info.file));
    EXPECT_GT(info.seconds, 0.0);
    std::printf("calibration took %.3f s (kept in %s)\n", info.seconds, info.file);
    close(c);
    // Another context, another backend: the same file, untouched.
    xfer_context d = open("pinned");
    EXPECT_EQ(first, read(file)) << "a later open measured again";
    // A forced measurement rewrites it; the new figures are kept.
    info = calibrate(d, XFER_CALIBRATE_FORCE);
    EXPECT_EQ(1, info.measured);
    EXPECT_NE(first, read(file));
    EXPECT_NE(std::string::npos, read(file).find("\"staged\"")) << "the pinned backend kept the engine's curves";
    close(d);
}

TEST_F(GpuUserMemory, AChangedDriverOrGpuMakesTheKeptCalibrationStale) {
    close(open("pinned"));
    const std::string file = kept_file();
    ASSERT_FALSE(file.empty());
    std::string text = read(file);
    const std::string field = "\"driver_version\": ";
    const std::size_t at = text.find(field);
    ASSERT_NE(std::string::npos, at);
    const std::size_t digits = text.find_first_not_of("0123456789", at + field.size()) - (at + field.size());
    const std::string driver = text.substr(at + field.size(), digits);
    text.replace(at + field.size(), digits, "7"); // as if measured under another driver
    std::ofstream(file) << text;
    xfer_context c = open("pinned");
    const std::string now = read(file);
    EXPECT_NE(std::string::npos, now.find(field + driver)) << "the stale calibration was used";
    EXPECT_EQ(std::string::npos, now.find(field + "7")) << "the stale calibration was kept";
    EXPECT_EQ(1, calibrate(c, 0).measured) << "the open of this process measured it again";
    EXPECT_EQ(now, read(file)) << "measured a third time";
}

TEST_F(GpuUserMemory, OffKeepsNothingAndLeavesTheDefaultsDeciding) {
    EnvGuard off("XFER_CALIBRATION", "off");
    xfer_context c = open("pageable");
    EXPECT_TRUE(!fs::exists(dir_) || fs::is_empty(dir_));
    bool derived = false;
    const auto staged_min = setting(c, "staged_min_bytes", &derived);
    EXPECT_TRUE(derived);
    EXPECT_EQ("16777216", staged_min.first);
    EXPECT_EQ(XFER_PARAM_DEFAULT, staged_min.second);
    const xfer_calibration_info info = calibrate(c, 0); // measured on request, not kept
    EXPECT_EQ(1, info.measured);
    EXPECT_STREQ("", info.file);
    EXPECT_NE(std::string::npos, std::string(info.json).find("\"dma\""));
}

TEST_F(GpuUserMemory, SettingsSayWhatCameFromTheCalibrationAndWhatTheUserSet) {
    EnvGuard user("XFER_PAGEABLE_STAGED_MIN_BYTES_TO_HOST", "1MiB");
    xfer_context c = open("pageable");
    bool derived = false;
    const auto to_device = setting(c, "staged_min_bytes", &derived);
    EXPECT_TRUE(derived);
    EXPECT_EQ(XFER_PARAM_CALIBRATION, to_device.second);
    EXPECT_GT(std::stoull(to_device.first), 0u);
    const auto to_host = setting(c, "staged_min_bytes_to_host", &derived);
    EXPECT_EQ("1048576", to_host.first);
    EXPECT_EQ(XFER_PARAM_ENV, to_host.second);
    EXPECT_EQ(XFER_PARAM_CALIBRATION, setting(c, "registration_min", &derived).second);
    const auto buffer_min = setting(c, "buffer_registration_min", &derived);
    EXPECT_EQ(XFER_PARAM_CALIBRATION, buffer_min.second);
    EXPECT_LE(std::stoull(buffer_min.first), std::stoull(setting(c, "registration_min", &derived).first))
        << "a buffer's view has no tracking to pay for";
    const auto pin_limit = setting(c, "pin_limit", &derived);
    EXPECT_FALSE(derived);
    EXPECT_EQ(XFER_PARAM_DEFAULT, pin_limit.second);
    EXPECT_EQ(XFER_PARAM_DEFAULT, setting(c, "chunk_size", &derived).second) << "not a calibrated value";
}

TEST_F(GpuUserMemory, OnPageableARangeCopiedAgainBecomesDmaWithoutAnyCopyWaiting) {
    xfer_context c = open("pageable");
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(c, &s));
    // First sight: the fastest way that page-locks nothing (staged), for this one-off copy.
    // Where this calibration found page-locking and a DMA faster than staging a size (a host that
    // stages slowly, or a noisy measurement: the rule for any first copy), the range was
    // page-locked at once; it is released and the next size tried.
    std::size_t n = 0;
    Bytes host;
    void *dev = nullptr;
    for (std::size_t size : {64 * kMiB, 256 * kMiB, 1024 * kMiB}) {
        host = random_bytes(size, fresh_seed());
        dev = device(size);
        Records first;
        ASSERT_XFER_OK(xfer_set_copy_observer(c, &Records::observe, &first));
        ASSERT_XFER_OK(xfer_memcpy_async(c, dev, host.data(), size, XFER_COPY_HOST_TO_DEVICE, s));
        ASSERT_XFER_OK(xfer_stream_synchronize(s));
        ASSERT_XFER_OK(xfer_set_copy_observer(c, nullptr, nullptr));
        ASSERT_EQ(1u, first.seen.size());
        if (first.seen[0].path == XFER_PATH_STAGED) {
            EXPECT_EQ(XFER_REASON_ONE_OFF, first.seen[0].reason);
            n = size;
            break;
        }
        EXPECT_EQ(XFER_PATH_NEW_REGISTRATION, first.seen[0].path) << size;
        EXPECT_EQ(XFER_REASON_MEASURED_FASTEST, first.seen[0].reason) << size;
        ASSERT_XFER_OK(xfer_unregister(c, host.data()));
    }
    ASSERT_NE(0u, n) << "no one-off copy up to 1 GiB was staged";
    EXPECT_EQ(0u, registrations(c).cache_ranges);
    // Copied again (back to the host counts: the same range): staged while the range is
    // page-locked in the background, as soon as the host time its copies spent staging exceeds
    // the registration's (the second or third copy on any machine calibrated so far).
    std::vector<xfer_copy_record> r;
    for (int k = 0; k < 3 && registrations(c).cache_ranges == 0; ++k) {
        r = round_trip(c, s, host, dev);
        ASSERT_EQ(2u, r.size());
        for (const xfer_copy_record &rec : r) {
            if (rec.path == XFER_PATH_CACHED_REGISTRATION) continue; // the registration was done before it
            EXPECT_EQ(XFER_PATH_STAGED, rec.path);
            EXPECT_TRUE(rec.reason == XFER_REASON_REUSE || rec.reason == XFER_REASON_ONE_OFF) << rec.reason;
        }
        for (int i = 0; i < 500 && registrations(c).cache_ranges == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(1u, registrations(c).cache_ranges) << "the range was never page-locked in the background";
    // From then on: DMAs over the registered range, both ways.
    for (int k = 0; k < 3; ++k) {
        r = round_trip(c, s, host, dev);
        ASSERT_EQ(2u, r.size());
        EXPECT_EQ(XFER_PATH_CACHED_REGISTRATION, r[0].path);
        EXPECT_EQ(XFER_PATH_CACHED_REGISTRATION, r[1].path);
    }
    xfer_context_stats st{};
    st.struct_size = sizeof st;
    ASSERT_XFER_OK(xfer_context_get_stats(c, &st));
    EXPECT_EQ(1u, st.registrations) << "the background registration is counted by the next copy";
    EXPECT_GE(st.registered_bytes, n) << "the range's pages, from the page its first byte is on";
    EXPECT_LE(st.registered_bytes, n + 4096);
    // xfer_unregister releases what the cache page-locked; the next copy is a first sight again.
    ASSERT_XFER_OK(xfer_unregister(c, host.data()));
    EXPECT_EQ(0u, registrations(c).cache_ranges);
    r = round_trip(c, s, host, dev);
    EXPECT_EQ(XFER_PATH_STAGED, r[0].path);
    EXPECT_EQ(XFER_REASON_ONE_OFF, r[0].reason);
}

TEST_F(GpuUserMemory, OnPageableABuffersHostViewCopiedAgainIsPageLockedAndReleasedWithIt) {
    xfer_context c = open("pageable");
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(c, &s));
    // From both crossovers up: staged until page-locked. The first copy (filling the device view)
    // page-locks nothing, unless this calibration found page-locking and a DMA faster than
    // staging the size (the rule for any first copy): that buffer goes and the next size is tried.
    bool derived = false;
    const std::size_t least = std::max<std::size_t>(std::stoull(setting(c, "buffer_registration_min", &derived).first),
                                                    std::stoull(setting(c, "staged_min_bytes", &derived).first));
    std::size_t n = 0;
    xfer_buffer b = nullptr;
    Bytes data;
    Records first;
    for (std::size_t size : {64 * kMiB, 256 * kMiB, 1024 * kMiB}) {
        if (size < least) continue;
        ASSERT_XFER_OK(xfer_alloc(c, size, 0, &b));
        data = random_bytes(size, fresh_seed());
        std::memcpy(xfer_host_ptr(b), data.data(), size);
        first.seen.clear();
        ASSERT_XFER_OK(xfer_set_copy_observer(c, &Records::observe, &first));
        ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, size, s));
        ASSERT_XFER_OK(xfer_stream_synchronize(s));
        ASSERT_XFER_OK(xfer_set_copy_observer(c, nullptr, nullptr));
        if (registrations(c).cache_ranges == 0) {
            n = size;
            break;
        }
        ASSERT_XFER_OK(xfer_free(b));
        b = nullptr;
        EXPECT_EQ(0u, registrations(c).cache_ranges) << "released with the buffer";
    }
    ASSERT_NE(0u, n) << "no first buffer copy up to 1 GiB page-locked nothing";
    // The second goes the unregistered way and asks for the registration in the background.
    ASSERT_XFER_OK(xfer_set_copy_observer(c, &Records::observe, &first));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, n, s));
    ASSERT_XFER_OK(xfer_stream_synchronize(s));
    ASSERT_XFER_OK(xfer_set_copy_observer(c, nullptr, nullptr));
    ASSERT_EQ(2u, first.seen.size());
    EXPECT_EQ(XFER_PATH_STAGED, first.seen[0].path);
    EXPECT_EQ(XFER_REASON_ONE_OFF, first.seen[0].reason);
    EXPECT_EQ(XFER_PATH_STAGED, first.seen[1].path);
    EXPECT_EQ(XFER_REASON_REUSE, first.seen[1].reason);
    for (int i = 0; i < 500 && registrations(c).cache_ranges == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(1u, registrations(c).cache_ranges) << "the view was never page-locked in the background";
    // From then on its copies are DMAs, both ways, every byte in place.
    std::memset(xfer_host_ptr(b), 0, n);
    Records later;
    ASSERT_XFER_OK(xfer_set_copy_observer(c, &Records::observe, &later));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, 0, n, s));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, n, s));
    ASSERT_XFER_OK(xfer_stream_synchronize(s));
    ASSERT_XFER_OK(xfer_set_copy_observer(c, nullptr, nullptr));
    ASSERT_EQ(2u, later.seen.size());
    EXPECT_EQ(XFER_PATH_CACHED_REGISTRATION, later.seen[0].path);
    EXPECT_EQ(XFER_PATH_CACHED_REGISTRATION, later.seen[1].path);
    EXPECT_EQ(0, std::memcmp(xfer_host_ptr(b), data.data(), n)) << "the copy back through the registration";
    // The buffer's release takes its registration with it.
    ASSERT_XFER_OK(xfer_free(b));
    EXPECT_EQ(0u, registrations(c).cache_ranges);
}

TEST_F(GpuUserMemory, OnPinnedARegistrationThatPaysAtOnceIsMadeOnFirstUse) {
    xfer_context c = open("pinned");
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(c, &s));
    Bytes host = random_bytes(64 * kMiB, fresh_seed());
    void *dev = device(host.size());
    const std::vector<xfer_copy_record> r = round_trip(c, s, host, dev);
    ASSERT_EQ(2u, r.size());
    // 64 MiB: registering and a DMA beat the driver's pageable copy on any PCIe GPU measured.
    EXPECT_EQ(XFER_PATH_NEW_REGISTRATION, r[0].path);
    EXPECT_EQ(XFER_REASON_MEASURED_FASTEST, r[0].reason);
    EXPECT_EQ(0, r[0].slow) << "a path the calibration chose is not slow";
    EXPECT_EQ(XFER_PATH_CACHED_REGISTRATION, r[1].path);
}

TEST_F(GpuUserMemory, ThePinLimitEvictsTheLeastRecentlyUsedRange) {
    EnvGuard limit("XFER_PINNED_PIN_LIMIT", "96MiB");
    EnvGuard path("XFER_PINNED_PATH", "registered");
    xfer_context c = open("pinned");
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(c, &s));
    Bytes a = random_bytes(64 * kMiB, fresh_seed()), b = random_bytes(64 * kMiB, fresh_seed());
    void *dev = device(64 * kMiB);
    round_trip(c, s, a, dev);
    EXPECT_EQ(1u, registrations(c).cache_ranges);
    round_trip(c, s, b, dev); // a goes to make room
    xfer_registration_stats st = registrations(c);
    EXPECT_EQ(1u, st.cache_ranges);
    EXPECT_EQ(1u, st.cache_evictions);
    EXPECT_LE(st.cache_bytes, 96 * kMiB);
    EXPECT_EQ(96 * kMiB, st.cache_limit_bytes);
    const std::vector<xfer_copy_record> r = round_trip(c, s, a, dev); // and b for a again
    EXPECT_EQ(XFER_PATH_NEW_REGISTRATION, r[0].path);
    EXPECT_EQ(2u, registrations(c).cache_evictions);
}

TEST_F(GpuUserMemory, RlimitMemlockBelowTheRangeFallsBackWithTheReason) {
    rlimit saved{};
    ASSERT_EQ(0, ::getrlimit(RLIMIT_MEMLOCK, &saved));
    rlimit low = saved;
    low.rlim_cur = 16 * kMiB; // the soft limit: raised back below
    ASSERT_EQ(0, ::setrlimit(RLIMIT_MEMLOCK, &low));
    xfer_context c = open("pageable"); // the budget is read when the context opens
    ASSERT_EQ(0, ::setrlimit(RLIMIT_MEMLOCK, &saved));
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(c, &s));
    Bytes host = random_bytes(64 * kMiB, fresh_seed());
    void *dev = device(host.size());
    round_trip(c, s, host, dev);
    const std::vector<xfer_copy_record> r = round_trip(c, s, host, dev);
    ASSERT_EQ(2u, r.size());
    EXPECT_EQ(XFER_PATH_STAGED, r[0].path);
    EXPECT_EQ(XFER_REASON_CACHE_FULL, r[0].reason) << "64 MiB cannot be page-locked under a 16 MiB RLIMIT_MEMLOCK";
    EXPECT_EQ(0u, registrations(c).cache_ranges);
    EXPECT_EQ(16 * kMiB, registrations(c).cache_limit_bytes);
}

TEST_F(GpuUserMemory, ThePathOverrideForcesEveryCopy) {
    {
        EnvGuard path("XFER_PAGEABLE_PATH", "driver");
        xfer_context c = open("pageable");
        xfer_stream s = nullptr;
        ASSERT_XFER_OK(xfer_stream_create(c, &s));
        Bytes host = random_bytes(64 * kMiB, fresh_seed());
        void *dev = device(host.size());
        for (int k = 0; k < 3; ++k) {
            const std::vector<xfer_copy_record> r = round_trip(c, s, host, dev);
            ASSERT_EQ(2u, r.size());
            EXPECT_EQ(XFER_PATH_DRIVER_PAGEABLE, r[0].path);
            EXPECT_EQ(XFER_REASON_CONFIGURED, r[0].reason);
        }
        EXPECT_EQ(0u, registrations(c).cache_ranges);
    }
    {
        EnvGuard path("XFER_PAGEABLE_PATH", "registered");
        xfer_context c = open("pageable");
        xfer_stream s = nullptr;
        ASSERT_XFER_OK(xfer_stream_create(c, &s));
        Bytes host = random_bytes(4 * kMiB, fresh_seed());
        void *dev = device(host.size());
        const std::vector<xfer_copy_record> r = round_trip(c, s, host, dev);
        ASSERT_EQ(2u, r.size());
        EXPECT_EQ(XFER_PATH_NEW_REGISTRATION, r[0].path);
        EXPECT_EQ(XFER_REASON_CONFIGURED, r[0].reason);
        EXPECT_EQ(XFER_PATH_CACHED_REGISTRATION, r[1].path);
    }
}

} // namespace
} // namespace xfer::test
