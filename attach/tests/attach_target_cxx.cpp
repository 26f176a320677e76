// A C++20 program whose threads wait in the standard library's own futex
// waits (no pthread call): a std::counting_semaphore and a std::atomic
// wait. Prints the truth (target_truth.h) and sleeps until killed.
#include <pthread.h>

#include <atomic>
#include <semaphore>
#include <thread>

#include "target_truth.h"

static std::counting_semaphore<4> sem{0};
static std::atomic<int> flag{0};
static std::atomic<pid_t> sem_tid{0}, atomic_tid{0};

int main() {
  std::thread s([] {
    sem_tid = gettid();
    sem.acquire();
  });
  std::thread a([] {
    atomic_tid = gettid();
    flag.wait(0);
  });
  pthread_setname_np(s.native_handle(), "cxx-sem");
  pthread_setname_np(a.native_handle(), "cxx-atomic");
  while (!sem_tid || !atomic_tid) std::this_thread::yield();
  truth_wait_asleep(sem_tid);
  truth_wait_asleep(atomic_tid);
  printf("truth %d c++-semaphore %#lx %zu 0\n", (int)sem_tid, (unsigned long)&sem, sizeof sem);
  printf("truth %d c++-atomic-wait %#lx %zu 0\n", (int)atomic_tid, (unsigned long)&flag,
         sizeof flag);
  printf("ready\n");
  fflush(stdout);
  s.join();
  a.join();
}
