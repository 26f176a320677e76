// cpp20_sync: C++20 synchronisation that no pthread call shows (it waits in
// futexes from libstdc++'s atomic-wait code): a std::counting_semaphore
// consumer, a std::atomic::wait waiter and std::barrier partners. Each
// thread times its own waits; the truth line gives every thread's tid,
// role, lifetime and the share of it spent waiting.
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <latch>
#include <semaphore>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Truth {
  const char *role = "";
  pid_t tid = 0;
  double life = 0, waited = 0;
};

std::counting_semaphore<16> items(0);
std::atomic<int> go{0};

}  // namespace

int main() {
  constexpr int kRounds = 6;
  constexpr auto kStep = std::chrono::milliseconds(40);
  Truth truth[4];
  std::latch started(4);
  std::barrier partners(2);
  auto timed = [](Truth &t, auto &&wait) {
    auto w0 = Clock::now();
    wait();
    t.waited += seconds(Clock::now() - w0);
  };
  std::vector<std::thread> threads;
  threads.emplace_back([&] {  // takes what the main thread releases
    Truth &t = truth[0];
    t = {"semaphore", gettid()};
    auto t0 = Clock::now();
    started.count_down();
    for (int i = 0; i < kRounds; i++) timed(t, [] { items.acquire(); });
    t.life = seconds(Clock::now() - t0);
  });
  threads.emplace_back([&] {  // waits for a flag to change
    Truth &t = truth[1];
    t = {"atomic_wait", gettid()};
    auto t0 = Clock::now();
    started.count_down();
    timed(t, [] { go.wait(0); });
    t.life = seconds(Clock::now() - t0);
  });
  threads.emplace_back([&] {  // fast partner: waits at the barrier
    Truth &t = truth[2];
    t = {"barrier_fast", gettid()};
    auto t0 = Clock::now();
    started.count_down();
    for (int i = 0; i < kRounds; i++) timed(t, [&] { partners.arrive_and_wait(); });
    t.life = seconds(Clock::now() - t0);
  });
  threads.emplace_back([&] {  // slow partner: works (sleeps) before arriving
    Truth &t = truth[3];
    t = {"barrier_slow", gettid()};
    auto t0 = Clock::now();
    started.count_down();
    for (int i = 0; i < kRounds; i++) {
      std::this_thread::sleep_for(kStep);
      timed(t, [&] { partners.arrive_and_wait(); });
    }
    t.life = seconds(Clock::now() - t0);
  });
  started.wait();
  for (int i = 0; i < kRounds; i++) {
    std::this_thread::sleep_for(kStep);
    items.release();
  }
  go = 1;
  go.notify_all();
  for (auto &th : threads) th.join();
  std::printf("{\"workload\":\"cpp20_sync\",\"threads\":[");
  for (int i = 0; i < 4; i++)
    std::printf("%s{\"role\":\"%s\",\"tid\":%d,\"lifetime_s\":%.6f,\"wait_pct\":%.2f}", i ? "," : "",
                truth[i].role, int(truth[i].tid), truth[i].life,
                truth[i].life > 0 ? 100.0 * truth[i].waited / truth[i].life : 0.0);
  std::printf("]}\n");
}
