// SPDX-License-Identifier: Apache-2.0
// Where calibrations are kept and when they hold (backends/cuda_common/src/user_memory/
// calibration_file.hpp): folders from the setting and the environment, the JSON round trip,
// stale keys, corrupt files, writing through a temporary file. No device needed (cuda_unit).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "user_memory/calibration_file.hpp"

namespace xfer::cuda::user_memory {
namespace {

namespace fs = std::filesystem;

class ScopedEnv {
  public:
    ScopedEnv(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) saved_ = old, had_ = true;
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (had_)
            ::setenv(name_, saved_.c_str(), 1);
        else
            ::unsetenv(name_);
    }

  private:
    const char *name_;
    std::string saved_;
    bool had_ = false;
};

CalibrationKey key() {
    CalibrationKey k = host_key("GPU-00000000-1111-2222-3333-444444444444", 13000, 13000);
    return k;
}

Calibration sample() {
    Calibration c;
    c.key = key();
    for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST}) {
        for (std::uint64_t b : {std::uint64_t{1} << 20, std::uint64_t{64} << 20}) {
            c.model.curve(Way::dma, d).add(b, double(b) / 55e9);
            c.model.curve(Way::driver, d).add(b, double(b) / 8e9);
            c.model.curve(Way::staged, d).add(b, double(b) / 45e9 + 1e-4);
        }
    }
    c.staged = true;
    c.model.register_cost = {2.5e-4, 3e-11};
    c.model.unregister_cost = {8e-5, 1.4e-11};
    c.model.fill_bytes_per_second = 7.2e9;
    c.model.track_seconds = 4e-7;
    c.measured_at = "2026-12-06T00:00:00Z";
    c.seconds = 0.9;
    return c;
}

fs::path fresh_dir(const char *name) {
    fs::path dir =
        fs::temp_directory_path() / (std::string("xfer-calibration-test-") + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    return dir;
}

TEST(CalibrationFile, PathFollowsTheSettingThenXdgCacheHomeThenHome) {
    const CalibrationKey k = key();
    std::string why;
    EXPECT_FALSE(calibration_path("off", k, &why).has_value());
    EXPECT_NE(std::string::npos, why.find("off"));
    EXPECT_EQ("/data/cal/calibration-" + k.gpu_uuid + ".json", calibration_path("/data/cal/", k, &why).value());
    {
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        EXPECT_EQ("/xdg/xfer/calibration-" + k.gpu_uuid + ".json", calibration_path("", k, &why).value());
    }
    {
        ScopedEnv xdg("XDG_CACHE_HOME", "relative"); // not absolute: ignored, as the XDG rules say
        ScopedEnv home("HOME", "/home/u");
        EXPECT_EQ("/home/u/.cache/xfer/calibration-" + k.gpu_uuid + ".json", calibration_path("", k, &why).value());
    }
    {
        ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
        ScopedEnv home("HOME", nullptr);
        EXPECT_FALSE(calibration_path("", k, &why).has_value());
        EXPECT_NE(std::string::npos, why.find("XFER_CALIBRATION"));
    }
}

TEST(CalibrationFile, RoundTripsThroughJson) {
    const Calibration c = sample();
    std::string why;
    const auto back = from_json(to_json(c), &why);
    ASSERT_TRUE(back.has_value()) << why;
    EXPECT_TRUE(back->staged);
    EXPECT_EQ("", back->key.difference(c.key));
    EXPECT_EQ(c.measured_at, back->measured_at);
    EXPECT_DOUBLE_EQ(c.seconds, back->seconds);
    for (int w = 0; w < kWays; ++w)
        for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST})
            EXPECT_DOUBLE_EQ(c.model.seconds(Way(w), d, 8 << 20), back->model.seconds(Way(w), d, 8 << 20));
    EXPECT_DOUBLE_EQ(c.model.registration_seconds(1 << 30), back->model.registration_seconds(1 << 30));
    EXPECT_DOUBLE_EQ(c.model.fill_bytes_per_second, back->model.fill_bytes_per_second);
    EXPECT_DOUBLE_EQ(c.model.track_seconds, back->model.track_seconds);
}

TEST(CalibrationFile, RefusesTextThatIsNotACompleteCalibration) {
    std::string why;
    EXPECT_FALSE(from_json("not json", &why).has_value());
    EXPECT_NE(std::string::npos, why.find("not a calibration"));
    std::string text = to_json(sample());
    EXPECT_FALSE(from_json(text.substr(0, text.size() / 2), &why).has_value());
    Calibration partial = sample();
    partial.model.fill_bytes_per_second = 0; // incomplete
    EXPECT_FALSE(from_json(to_json(partial), &why).has_value());
    EXPECT_NE(std::string::npos, why.find("incomplete"));
    partial = sample();
    partial.model.track_seconds = 0;
    EXPECT_FALSE(from_json(to_json(partial), &why).has_value());
    EXPECT_NE(std::string::npos, why.find("incomplete"));
    std::string other_format = to_json(sample());
    other_format.replace(other_format.find("\"format\": 2"), 11, "\"format\": 1"); // written before the tracking cost
    EXPECT_FALSE(from_json(other_format, &why).has_value());
    EXPECT_NE(std::string::npos, why.find("format 1"));
}

TEST(CalibrationFile, SaveMakesTheFolderAndLoadChecksTheKey) {
    const fs::path dir = fresh_dir("save");
    const CalibrationKey k = key();
    std::string why;
    const std::string path = calibration_path(dir.string() + "/a/b", k, &why).value();
    EXPECT_FALSE(load_calibration(path, k, &why).has_value());
    EXPECT_NE(std::string::npos, why.find("none kept"));
    ASSERT_TRUE(save_calibration(path, sample(), &why)) << why;
    for (const auto &e : fs::directory_iterator(fs::path(path).parent_path()))
        EXPECT_EQ(std::string::npos, e.path().string().find(".tmp.")) << "a temporary file was left: " << e.path();
    ASSERT_TRUE(load_calibration(path, k, &why).has_value()) << why;
    CalibrationKey newer = k;
    newer.driver_version = 13010;
    EXPECT_FALSE(load_calibration(path, newer, &why).has_value());
    EXPECT_NE(std::string::npos, why.find("stale (driver 13000 -> 13010)")) << why;
    CalibrationKey other_gpu = k;
    other_gpu.gpu_uuid = "GPU-ffffffff-1111-2222-3333-444444444444";
    EXPECT_FALSE(load_calibration(path, other_gpu, &why).has_value());
    EXPECT_NE(std::string::npos, why.find("GPU")) << why;
    CalibrationKey other_xfer = k;
    other_xfer.xfer_version = "9.9.9";
    EXPECT_FALSE(load_calibration(path, other_xfer, &why).has_value());
    std::ofstream(path) << "{ broken";
    EXPECT_FALSE(load_calibration(path, k, &why).has_value());
    EXPECT_NE(std::string::npos, why.find("not a calibration"));
    fs::remove_all(dir);
}

TEST(CalibrationFile, SaveFailsCleanlyWhereTheFolderCannotBeMade) {
    const fs::path dir = fresh_dir("blocked");
    fs::create_directories(dir);
    std::ofstream(dir / "file") << "x"; // a file where a folder would go
    std::string why;
    EXPECT_FALSE(save_calibration((dir / "file" / "calibration.json").string(), sample(), &why));
    EXPECT_NE(std::string::npos, why.find("cannot make folder")) << why;
    fs::remove_all(dir);
}

} // namespace
} // namespace xfer::cuda::user_memory
