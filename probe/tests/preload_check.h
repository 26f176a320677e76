/* For programs run under LD_PRELOAD=libthreadmon.so: make sure the calls
 * under test really reach the probe, not libc directly. */
#ifndef PRELOAD_CHECK_H
#define PRELOAD_CHECK_H

#include <dlfcn.h>
#include <string.h>

#include "tm_check.h"

/* Built with -DTM_BARE the tests also run without the probe, to check the
 * tests themselves against plain glibc. */
#ifdef TM_BARE
#define CHECK_INTERPOSED(fn) ((void)(fn))
#else
#define CHECK_INTERPOSED(fn)                                          \
  do {                                                                \
    Dl_info info_;                                                    \
    void *addr_;                                                      \
    void (*fn_)(void) = (void (*)(void))(fn);                         \
    memcpy(&addr_, &fn_, sizeof addr_);                               \
    CHECK(dladdr(addr_, &info_) != 0 && info_.dli_fname != NULL);     \
    CHECK(strstr(info_.dli_fname, "libthreadmon") != NULL);           \
  } while (0)
#endif

#endif
