// C++20 synchronisation, all of it built on atomic waits (futexes) in
// libstdc++ rather than pthread objects: workers start together on a latch
// and an atomic::wait, take one of two slots of a counting_semaphore to
// compute, then meet at a barrier each round. Prints its truth.
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <semaphore>
#include <thread>
#include <vector>

namespace {

uint64_t spin(uint64_t x, int n) {
  for (int i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

}  // namespace

int main(int argc, char **argv) {
  const int workers = argc > 1 ? std::atoi(argv[1]) : 3;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 40;
  const int work = argc > 3 ? std::atoi(argv[3]) : 1000000;
  std::counting_semaphore<8> slots(2);
  std::barrier phase(workers);
  std::latch ready(workers);
  std::atomic<int> go{0};
  std::atomic<uint64_t> sum{0};
  {
    std::vector<std::jthread> ts;
    for (int w = 0; w < workers; w++)
      ts.emplace_back([&, w] {
        ready.count_down();
        go.wait(0);  // until main flips it
        uint64_t x = uint64_t(w) + 1;
        for (int r = 0; r < rounds; r++) {
          slots.acquire();  // at most two in here at once
          x = spin(x, work);
          slots.release();
          x = spin(x, work / 4);
          phase.arrive_and_wait();
        }
        sum += x;
      });
    ready.wait();
    go.store(1);
    go.notify_all();
  }  // jthreads join
  std::printf("{\"workers\": %d, \"rounds\": %d, \"sum\": %llu}\n", workers, rounds,
              static_cast<unsigned long long>(sum.load()));
  return 0;
}
