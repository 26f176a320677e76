// std::thread, std::mutex, std::shared_mutex and std::condition_variable
// from libstdc++ under the probe: they reach the wrappers (checked with
// dladdr on what this program and libstdc++ bind to) and behave exactly.
#include <dlfcn.h>
#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static bool from_probe(const char *symbol) {
  Dl_info info;
  void *addr = dlsym(RTLD_DEFAULT, symbol);
  return addr && dladdr(addr, &info) && std::strstr(info.dli_fname, "libthreadmon");
}

int main() {
  for (const char *s : {"pthread_create", "pthread_mutex_lock", "pthread_rwlock_rdlock",
                        "pthread_cond_wait", "pthread_cond_clockwait", "pthread_join"})
    CHECK(from_probe(s));

  std::mutex m;
  std::condition_variable cv;
  std::shared_mutex rw;
  long counter = 0, reads = 0;
  int stage = 0;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; w++) {
    workers.emplace_back([&] {
      for (int i = 0; i < 10000; i++) {
        std::lock_guard<std::mutex> g(m);
        counter++;
      }
      for (int i = 0; i < 2000; i++) {
        std::shared_lock<std::shared_mutex> r(rw);
        __atomic_fetch_add(&reads, 1, __ATOMIC_RELAXED);
      }
      {
        std::unique_lock<std::shared_mutex> wl(rw);
      }
      std::unique_lock<std::mutex> l(m);
      stage++;
      cv.notify_all();
      cv.wait(l, [&] { return stage >= 5; });
    });
  }
  {
    std::unique_lock<std::mutex> l(m);
    CHECK(cv.wait_for(l, std::chrono::seconds(10), [&] { return stage == 4; }));
    stage = 5;
    cv.notify_all();
    CHECK(!cv.wait_until(l, std::chrono::steady_clock::now() + std::chrono::milliseconds(5),
                         [] { return false; }));
  }
  for (auto &t : workers) t.join();
  CHECK(counter == 40000);
  CHECK(reads == 8000);
  return 0;
}
