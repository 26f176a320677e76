/* A test shim, preloaded ahead of libthreadmon.so: its dlsym answers NULL
 * for the name in TM_TEST_HIDE_SYMBOL when asked for the next definition,
 * as an older libc without that function would (check_missing_real.py).
 * Every other RTLD_NEXT lookup is answered from libc, which is where the
 * probe's real functions live; other handles pass through. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);

void *dlsym(void *handle, const char *name) {
  static dlsym_fn real;
  if (!real) {
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (!p) abort();
    memcpy(&real, &p, sizeof p); /* object -> function pointer without a cast */
  }
  if (handle != RTLD_NEXT) return real(handle, name);
  const char *hide = getenv("TM_TEST_HIDE_SYMBOL");
  if (hide && strcmp(hide, name) == 0) return NULL;
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return libc ? real(libc, name) : NULL;
}
