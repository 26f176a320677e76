/* The program function a std::thread runs (stdthread.h). */
#include "stdthread.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "segments.h"
#include "symbolize.h"

/* Words of the state after its vtable pointer searched for the function
 * pointer: the tuple's last element (libstdc++ lays a tuple out tail
 * first), so it follows up to 15 words of arguments. */
#define STATE_SCAN_WORDS 16

static bool safe_read(void *dst, uintptr_t src, size_t n) {
  struct iovec local = {dst, n}, remote = {(void *)src, n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static bool ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && memcmp(s + a - b, tail, b) == 0;
}

static size_t count(const char *s, const char *what) {
  size_t n = 0;
  for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

static bool in_libstdcxx(uintptr_t routine) {
  Dl_info info;
  if (!dladdr((void *)routine, &info) || !info.dli_fname) return false;
  const char *name = strrchr(info.dli_fname, '/');
  return strncmp(name ? name + 1 : info.dli_fname, "libstdc++.so", 12) == 0;
}

/* The function pointer F of a state whose callable is one: the first word
 * after the vtable pointer that points into code. Only when F is the one
 * function pointer type in the tuple and no argument is a std::function:
 * then no argument word before F points into code. */
static bool function_pointer(uintptr_t state, const char *run_symbol, char *out, size_t n) {
  if (!strstr(run_symbol, "St5tupleIJPF") || count(run_symbol, "PF") != 1 ||
      strstr(run_symbol, "St8function"))
    return false;
  uintptr_t words[STATE_SCAN_WORDS];
  if (!safe_read(words, state + sizeof(uintptr_t), sizeof words)) return false;
  for (int i = 0; i < STATE_SCAN_WORDS; i++) {
    if (!tm_in_segment(words[i], 1, PF_X)) continue;
    tm_symbol s;
    /* A function's first byte, or nothing we can name. */
    if (tm_symbolize(words[i], &s) < 0 || !ends_with(s.symbol, "+0x0")) return false;
    snprintf(out, n, "%s!%s", s.module, s.symbol);
    return true;
  }
  return false;
}

bool tm_std_thread_routine(uintptr_t routine, uintptr_t arg, char *out, size_t n) {
  if (!arg || arg % sizeof(uintptr_t) || !in_libstdcxx(routine)) return false;
  uintptr_t vptr, run;
  if (!safe_read(&vptr, arg, sizeof vptr)) return false;
  /* A vtable is read-only data of a module; _M_run follows the complete
   * and the deleting destructor in it. */
  if (vptr % sizeof(uintptr_t) || !tm_in_segment(vptr, 3 * sizeof(uintptr_t), PF_R) ||
      !safe_read(&run, vptr + 2 * sizeof(uintptr_t), sizeof run) || !tm_in_segment(run, 1, PF_X))
    return false;
  tm_symbol s;
  if (tm_symbolize(run, &s) < 0 || strncmp(s.symbol, "_ZNSt6thread11_State_impl", 25) != 0 ||
      !ends_with(s.symbol, "6_M_runEv+0x0"))
    return false;
  if (function_pointer(arg, s.symbol, out, n)) return true;
  snprintf(out, n, "%s!%s", s.module, s.symbol);
  return true;
}
