/* The two unwinder entry points that code built with -fexceptions refers
 * to, bound to libgcc_s's versioned functions only when an unwind first
 * reaches them, so that the library does not need libgcc_s at load.
 *
 * Why: every process of a traced tree loads the probe, and most of them
 * (a shell's /bin/true) never unwind; libgcc_s costs each exec four
 * mappings, its relocations and its constructor's CPUIDs (traps to the
 * hypervisor on a VM: docs/benchmarks.md, "The cost of an exec").
 *
 * Why it is safe: an unwind through our frames is a cancellation,
 * pthread_exit or a C++ exception, and each loads libgcc_s before the
 * first frame is unwound (glibc's cancellation opens it; libstdc++ links
 * it), so the dlopen below finds it loaded. It must be libgcc_s's
 * _Unwind_Resume@GCC_3.0, never the first one in the process: libunwind
 * exports one too, and a cancelled thread crashed in start_thread when
 * that one ran (probe/tests/check_exports.py keeps the library from
 * binding these names dynamically at all). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "real.h"

/* The unwinder's ABI (the Itanium C++ ABI's, as <unwind.h> spells it; that
 * name is core/unwind.h's here): the exception and the context pass through
 * untouched, the action is an int, the class 64 bits, the answer an int. */
typedef void (*resume_fn)(void *exception);
typedef int (*personality_fn)(int version, int actions, uint64_t cls, void *exception,
                              void *context);

static _Atomic(resume_fn) real_resume;
static _Atomic(personality_fn) real_personality;

/* slot: a function pointer, filled from the symbol without a cast. */
static void libgcc_s_function(void *slot, const char *name, const char *version) {
  void *lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libgcc_s.so.1", RTLD_NOW);
  void *fn = lib ? dlvsym(lib, name, version) : NULL;
  if (!fn) {
    static const char line[] = "threadmon: cannot unwind this thread without libgcc_s.so.1\n";
    tm_real_missing(line, sizeof line - 1);
  }
  memcpy(slot, &fn, sizeof fn);
}

__attribute__((visibility("hidden"), noreturn)) void _Unwind_Resume(void *exception);
__attribute__((visibility("hidden"))) int __gcc_personality_v0(int version, int actions,
                                                               uint64_t cls, void *exception,
                                                               void *context);

void _Unwind_Resume(void *exception) {
  resume_fn resume = atomic_load_explicit(&real_resume, memory_order_acquire);
  if (!resume) {
    libgcc_s_function(&resume, "_Unwind_Resume", "GCC_3.0");
    atomic_store_explicit(&real_resume, resume, memory_order_release);
  }
  resume(exception);
  __builtin_unreachable();
}

int __gcc_personality_v0(int version, int actions, uint64_t cls, void *exception,
                         void *context) {
  personality_fn personality = atomic_load_explicit(&real_personality, memory_order_acquire);
  if (!personality) {
    libgcc_s_function(&personality, "__gcc_personality_v0", "GCC_3.3.1");
    atomic_store_explicit(&real_personality, personality, memory_order_release);
  }
  return personality(version, actions, cls, exception, context);
}
