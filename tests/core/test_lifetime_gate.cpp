// SPDX-License-Identifier: Apache-2.0
// The lifetime gate of every object (lifetime_gate.hpp): calls enter and leave; closing waits
// for those inside and lets none in afterwards.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lifetime_gate.hpp"

using namespace xfer::core;

namespace {

TEST(LifetimeGate, EntersUntilClosedAndNeverAfter) {
    LifetimeGate gate;
    {
        GatePass a(gate), b(gate); // calls inside at once, also nested on one thread
        EXPECT_TRUE(a.inside());
        EXPECT_TRUE(b.inside());
    }
    gate.close(); // nobody inside: returns at once
    GatePass late(gate);
    EXPECT_FALSE(late.inside());
    EXPECT_FALSE(GatePass(gate).inside());
}

TEST(LifetimeGate, CloseWaitsForTheCallsInside) {
    LifetimeGate gate;
    std::atomic<bool> inside_done{false}, closed{false};
    auto pass = std::make_unique<GatePass>(gate);
    ASSERT_TRUE(pass->inside());
    std::thread closer([&] {
        gate.close();
        closed = true;
        EXPECT_TRUE(inside_done.load()) << "close returned while a call was inside";
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(closed.load());
    EXPECT_FALSE(GatePass(gate).inside()) << "a call entered a closing gate";
    inside_done = true;
    pass.reset(); // the last call leaves: the closer wakes
    closer.join();
    EXPECT_TRUE(closed.load());
}

TEST(LifetimeGate, MovedPassLeavesOnce) {
    LifetimeGate gate;
    GatePass outer;
    EXPECT_FALSE(outer.inside());
    {
        GatePass inner(gate);
        outer = std::move(inner);
    }
    EXPECT_TRUE(outer.inside());
    outer = GatePass();
    gate.close(); // would wait forever if the move had lost or doubled a leave
    SUCCEED();
}

TEST(LifetimeGate, ManyCallersAndOneCloserNeverOverlap) {
    for (int round = 0; round < 20; ++round) {
        LifetimeGate gate;
        std::atomic<bool> closed{false};
        std::atomic<int> inside_after_close{0};
        std::vector<std::thread> callers;
        for (int t = 0; t < 4; ++t) {
            callers.emplace_back([&] {
                for (int i = 0; i < 2000; ++i) {
                    GatePass pass(gate);
                    if (!pass.inside()) break;
                    if (closed.load()) ++inside_after_close;
                }
            });
        }
        gate.close();
        closed = true;
        for (auto &c : callers) c.join();
        EXPECT_EQ(0, inside_after_close.load()) << "round " << round;
    }
}

} // namespace
