// A C++20 std::barrier loop as users write it: three threads compute, then
// meet at the barrier each round; thread 0 has 8x the others' work, so they
// spend most of their life at the barrier. libstdc++ spins and calls
// sched_yield before its futex wait: a profiler must read that spin as the
// barrier wait. Prints its truth: each thread's tid and its time inside
// arrive_and_wait by its own clock.
#include <sys/syscall.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Work the compiler cannot remove.
long work(long n) {
  long x = 0;
  for (long i = 0; i < n; i++) x = x * 31 + i;
  return x;
}

struct Truth {
  long tid = 0;
  double barrierS = 0, lifeS = 0;
  long sink = 0;
};

}  // namespace

int main(int argc, char **argv) {
  const int threads = 3, rounds = argc > 1 ? std::atoi(argv[1]) : 60;
  const long unit = argc > 2 ? std::atol(argv[2]) : 1000000;
  std::barrier meet(threads);
  std::vector<Truth> truth(threads);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; i++)
    pool.emplace_back([&, i] {
      Truth &t = truth[size_t(i)];
      t.tid = syscall(SYS_gettid);
      const Clock::time_point start = Clock::now();
      for (int r = 0; r < rounds; r++) {
        t.sink += work(i == 0 ? unit * 8 : unit);
        const Clock::time_point arrived = Clock::now();
        meet.arrive_and_wait();
        t.barrierS += seconds(Clock::now() - arrived);
      }
      t.lifeS = seconds(Clock::now() - start);
    });
  for (std::thread &t : pool) t.join();
  std::printf("{\"rounds\": %d, \"threads\": [", rounds);
  for (int i = 0; i < threads; i++)
    std::printf("%s{\"tid\": %ld, \"barrier_s\": %.6f, \"life_s\": %.6f, \"sink\": %ld}",
                i ? ", " : "", truth[size_t(i)].tid, truth[size_t(i)].barrierS,
                truth[size_t(i)].lifeS, truth[size_t(i)].sink % 2);
  std::printf("]}\n");
  return 0;
}
