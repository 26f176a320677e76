// What a std::thread runs (stdthread.h): the state libstdc++ hands to
// pthread_create, caught here by defining pthread_create in the test,
// names the plain function a thread runs, or the state's _M_run for a
// lambda; anything else given as the argument (null, unaligned, unmapped,
// a fake vtable, a freed state) gives false and no fault.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

extern "C" {
#include "stdthread.h"
#include "tm_check.h"
}

namespace {

std::atomic<uintptr_t> last_routine, last_arg;
std::atomic<bool> release;

using create_fn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

void wait_release() {
  while (!release.load()) usleep(1000);
}

bool routine_of(uintptr_t routine, uintptr_t arg, char *out) {
  return tm_std_thread_routine(routine, arg, out, 512);
}

bool ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && memcmp(s + a - b, tail, b) == 0;
}

}  // namespace

// Not static: the plain function a thread runs, found by name.
void stdthread_plain_function(int *seen) {
  *seen = 1;
  wait_release();
}

extern "C" int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*routine)(void *),
                              void *arg) {
  static create_fn real = reinterpret_cast<create_fn>(dlsym(RTLD_NEXT, "pthread_create"));
  uintptr_t r;
  std::memcpy(&r, &routine, sizeof r);
  last_routine = r;
  last_arg = reinterpret_cast<uintptr_t>(arg);
  return real(th, attr, routine, arg);
}

int main() {
  char out[512];
  int seen = 0;

  // A function pointer with an argument: the function itself.
  std::thread plain(stdthread_plain_function, &seen);
  const uintptr_t routine = last_routine, plain_arg = last_arg;
  CHECK(routine_of(routine, plain_arg, out));
  CHECK(strstr(out, "!_Z24stdthread_plain_functionPi+0x0") != nullptr);

  // A lambda: the state's _M_run, whose name holds the lambda's type.
  std::thread lambda([] { wait_release(); });
  CHECK(routine_of(last_routine, last_arg, out));
  CHECK(strstr(out, "!_ZNSt6thread11_State_implI") != nullptr);
  CHECK(strstr(out, "Z4mainEUlvE_") != nullptr);
  CHECK(ends_with(out, "6_M_runEv+0x0"));

  // Not libstdc++'s routine: nothing to read.
  uintptr_t own;
  void (*fn)(int *) = stdthread_plain_function;
  std::memcpy(&own, &fn, sizeof own);
  CHECK(!routine_of(own, plain_arg, out));

  // Arguments that are no state.
  CHECK(!routine_of(routine, 0, out));
  CHECK(!routine_of(routine, plain_arg + 1, out));
  void *page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(page != MAP_FAILED);
  munmap(page, 4096);
  CHECK(!routine_of(routine, reinterpret_cast<uintptr_t>(page), out));
  uintptr_t fake[4] = {reinterpret_cast<uintptr_t>(&fake[1]), 0, 0, 0};  // vtable on the stack
  CHECK(!routine_of(routine, reinterpret_cast<uintptr_t>(fake), out));
  static const char text[32] = "not a vtable at all, only text";
  fake[0] = reinterpret_cast<uintptr_t>(text);  // read-only data, but no _M_run in it
  CHECK(!routine_of(routine, reinterpret_cast<uintptr_t>(fake), out));
  fake[0] = UINTPTR_MAX - 7;
  CHECK(!routine_of(routine, reinterpret_cast<uintptr_t>(fake), out));

  release = true;
  plain.join();
  lambda.join();
  CHECK(seen == 1);
  // The state was freed when the thread ended: its words are the
  // allocator's now, and must not pass for a state.
  CHECK(!routine_of(routine, plain_arg, out));
  puts("stdthread: ok");
  return 0;
}
