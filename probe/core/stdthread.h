/* What a std::thread runs. Every std::thread starts in libstdc++'s
 * execute_native_thread_routine with a std::thread::_State* argument, so
 * its start routine named nothing of the program ("libstdc++.so.6+0xd4490").
 * The state's vtable names the callable's type in its _M_run override
 * (std::thread::_State_impl<_Invoker<tuple<F, Args...>>>::_M_run: F is a
 * lambda, a functor or a function pointer); when F is a function pointer,
 * the function it points to is the name.
 *
 * The argument is the program's memory and may already be freed (a thread
 * that ended): every read goes through process_vm_readv (EFAULT, never a
 * fault), the vtable pointer must lie in a loaded module and its _M_run
 * slot in a module's code, and the symbol there must be a _State_impl's
 * _M_run. Sampler thread only (symbolize.h). */
#ifndef THREADMON_STDTHREAD_H
#define THREADMON_STDTHREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When routine is libstdc++'s and arg a live std::thread state: writes
 * "module!symbol+0x0" of the function it runs, or of the state's _M_run
 * (a lambda or functor), and returns true. */
bool tm_std_thread_routine(uintptr_t routine, uintptr_t arg, char *out, size_t n);

#endif
