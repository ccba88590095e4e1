// SPDX-License-Identifier: Apache-2.0
// Chrome Trace Event JSON structure written by the tracer.
#include <gtest/gtest.h>

#include "trace.hpp"

using namespace xfer::tool;

TEST(Tracer, ProcessesTracksAndCompleteEvents) {
    Tracer t;
    int pinned = t.add_process("xfer pinned (device 0)");
    int host = t.add_process("xfer host (device 0)");
    EXPECT_EQ(pinned, 1);
    EXPECT_EQ(host, 2);
    int s1 = t.track(pinned, "stream 1");
    int s2 = t.track(pinned, "stream 2");
    EXPECT_NE(s1, s2);
    EXPECT_EQ(t.track(pinned, "stream 1"), s1);
    EXPECT_EQ(t.track(host, "stream 1"), 1); // tids count per process
    t.add(pinned, s1, "h2d 1 MiB", "copy", 10.0, 25.5, {{"bytes", 1048576}});
    t.add(pinned, s2, "scale", "kernel", 12.0, -0.25, nullptr); // clock jitter: clamped to 0
    EXPECT_EQ(t.event_count(), 2u);

    nlohmann::json j = t.to_json();
    ASSERT_TRUE(j["traceEvents"].is_array());
    int metadata = 0, complete = 0;
    for (const auto &e : j["traceEvents"]) {
        for (const char *key : {"ph", "ts", "dur", "pid", "tid", "name"})
            EXPECT_TRUE(e.contains(key)) << key << " in " << e.dump();
        if (e["ph"] == "M") {
            ++metadata;
            EXPECT_TRUE(e["args"].contains("name"));
        } else {
            ASSERT_EQ(e["ph"], "X");
            ++complete;
            EXPECT_GE(e["dur"].get<double>(), 0.0);
        }
    }
    EXPECT_EQ(metadata, 2 + 3); // two processes, three tracks
    EXPECT_EQ(complete, 2);
    const auto &last = j["traceEvents"].back();
    EXPECT_EQ(last["name"], "scale");
    EXPECT_EQ(last["dur"], 0.0);
    EXPECT_EQ(j["displayTimeUnit"], "ms");
}

TEST(Tracer, UnwritableFileIsAnError) {
    Tracer t;
    EXPECT_THROW(t.write("/nonexistent-dir/trace.json"), std::runtime_error);
}
