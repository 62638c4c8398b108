// The slots a reproduction's claims share (sweep/slots.h), and sweeps taking turns in one directory.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "helpers.h"
#include "sweep/slots.h"
#include "sweep/sweep.h"

namespace nt::test {
namespace {

TEST(Slots, GrantedByPriorityThenInTheOrderAsked) {
  Slots slots(1);
  const auto first = slots.ask(5, 1);
  ASSERT_TRUE(slots.try_take(first));
  const auto later = slots.ask(3, 1), earlier = slots.ask(1, 1), also_earlier = slots.ask(1, 1);
  EXPECT_FALSE(slots.try_take(earlier));  // the slot is held
  slots.give_back(first);
  EXPECT_FALSE(slots.try_take(later));         // priority 1 is waiting
  EXPECT_FALSE(slots.try_take(also_earlier));  // asked after `earlier`
  EXPECT_TRUE(slots.try_take(earlier));
  slots.give_back(earlier);
  EXPECT_FALSE(slots.try_take(later));
  EXPECT_TRUE(slots.try_take(also_earlier));
  slots.give_back(also_earlier);
  EXPECT_TRUE(slots.try_take(later));
  slots.give_back(later);
}

TEST(Slots, ARequestForEverySlotHoldsBackThoseBehindIt) {
  Slots slots(2);
  const auto one = slots.ask(0, 1);
  ASSERT_TRUE(slots.try_take(one));
  const auto all = slots.ask(1, 2), behind = slots.ask(2, 1);
  EXPECT_FALSE(slots.try_take(all));
  EXPECT_FALSE(slots.try_take(behind));  // a slot is free, but the request for both is first
  slots.give_back(one);
  EXPECT_TRUE(slots.try_take(all));
  EXPECT_FALSE(slots.try_take(behind));
  slots.give_back(all);
  EXPECT_TRUE(slots.try_take(behind));
  slots.give_back(behind);
  // a cancelled request no longer holds anyone back
  const auto held = slots.ask(0, 1), gone = slots.ask(1, 2), next = slots.ask(2, 1);
  ASSERT_TRUE(slots.try_take(held));
  EXPECT_FALSE(slots.try_take(next));
  slots.cancel(gone);
  EXPECT_TRUE(slots.try_take(next));
  slots.give_back(next);
  slots.give_back(held);
  EXPECT_THROW(slots.ask(0, 3), std::logic_error);
}

TEST(Slots, NeverMoreHoldersThanSlotsAndEveryoneServed) {
  Slots slots(2);
  std::atomic<int> holding{0}, most{0}, served{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) {
        const SlotHold hold(&slots, t % 3, 1 + (t == 5));  // one thread asks for both slots
        EXPECT_TRUE(hold.granted());
        const int now = (holding += 1 + (t == 5));
        for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
        }
        std::this_thread::yield();
        holding -= 1 + (t == 5);
        ++served;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(served.load(), 8 * 20);
}

TEST(Slots, AStopWakesTheWaitingWhoGiveUp) {
  Slots slots(1);
  const auto held = slots.ask(0, 1);
  ASSERT_TRUE(slots.try_take(held));
  std::atomic<int> result{-1};
  std::thread waiting([&] { result = SlotHold(&slots, 1, 1).granted(); });
  slots.stop();
  waiting.join();
  EXPECT_EQ(result.load(), 0);
  EXPECT_TRUE(slots.stopped());
  EXPECT_FALSE(slots.try_take(slots.ask(0, 1)));
  slots.give_back(held);
}

TEST(Slots, CountsEachPrioritysHeldTime) {
  Slots slots(2);
  {
    const SlotHold both(&slots, 7, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(slots.busy_seconds(7), 2 * 0.020);  // two slots for at least 20 ms (a lower bound: no timing)
  EXPECT_EQ(slots.busy_seconds(3), 0.0);
  const SlotHold none(nullptr, 0, 1);  // without slots, nothing to hold
  EXPECT_TRUE(none.granted());
}

// Two claims' threads sweeping the same shared runs: the second waits for the first (the
// directory's flock would refuse it) and finds the jobs done, so they ran once, on one pool's slots.
TEST(Sweep, ThreadsSweepingOneDirectoryTakeTurns) {
  TempDir d;
  SweepSpec spec;
  spec.config = source_dir() + "/configs/smoke/mlp-none.json";
  spec.fixed = {"train.steps=50"};
  spec.axes = {parse_axis("seed=1,2")};
  spec.out = d / "shared";
  spec.replace_grid = true;
  Slots slots(2);
  std::vector<SweepJob> first, second;
  std::string errors;
  auto sweep = [&](std::vector<SweepJob>& jobs, int priority) {
    try {
      jobs = run_sweeps({spec}, 2, binary(), true, {&slots, priority}).front();
    } catch (const std::exception& e) {
      errors += e.what();
    }
  };
  std::thread a(sweep, std::ref(first), 0), b(sweep, std::ref(second), 1);
  a.join();
  b.join();
  EXPECT_EQ(errors, "");
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  for (const auto* jobs : {&first, &second})
    for (const SweepJob& j : *jobs) EXPECT_EQ(j.status, "completed") << j.dir;
  // exactly one of the two ran the jobs; the other held no slot
  EXPECT_TRUE((slots.busy_seconds(0) > 0) != (slots.busy_seconds(1) > 0))
      << slots.busy_seconds(0) << " " << slots.busy_seconds(1);
}

// Ctrl-C to a reproduction: every claim stops, the jobs running checkpoint, the process exits 130
// without a report or a result for the unfinished claim; the same command resumes and completes.
TEST(ReproduceCli, ASignalStopsTheClaimsExits130AndTheSameCommandResumes) {
  TempDir d;
  const std::string cmd = "reproduce C5 --quick --out " + d.str();
  // the signal once a job has started (within 60 s)
  const auto stopped = run_normtool(cmd + " >/dev/null 2>&1 & pid=$!; for i in $(seq 3000); do ls " + d.str() +
                                    "/mlp-batch-runs/*/seed-*/*/metrics.jsonl >/dev/null 2>&1 && break; sleep 0.02; "
                                    "done; kill -INT $pid; wait $pid");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.output;
  EXPECT_FALSE(std::filesystem::exists(d / "REPORT.md"));
  EXPECT_FALSE(std::filesystem::exists(d / "C5-batchnorm-train-vs-eval/result.json"));
  const auto again = run_normtool(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_json(d / "C5-batchnorm-train-vs-eval/result.json")["verdict"], "PASS");
}

}  // namespace
}  // namespace nt::test
