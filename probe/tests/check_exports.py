#!/usr/bin/env python3
"""libthreadmon.so exports only functions that libc also exports (the
interposed ones), and names that glibc implements twice are exported in
both versions, so that old-ABI callers reach their own implementation.
Its unwinder calls are libgcc_s's (versioned GCC_*): an unversioned
_Unwind_Resume binds to libunwind's copy, which breaks glibc's cancellation.
zstd is linked in with nothing of it dynamic."""
import subprocess
import sys

lib, libc = sys.argv[1], sys.argv[2]


def dynsyms(path):
    out = subprocess.run(['nm', '-D', '--defined-only', '--with-symbol-versions', path],
                         check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TWi':
            names.add(parts[2])
    return names


ours = dynsyms(lib)
theirs = dynsyms(libc)
libc_names = {s.split('@')[0] for s in theirs}
# Boost.Context's exported switch functions (wrap_fcontext.c): the one
# non-libc library whose functions the probe interposes.
other_names = {'make_fcontext', 'jump_fcontext', 'ontop_fcontext'}
errors = []
for sym in sorted(ours):
    name = sym.split('@')[0]
    if name not in libc_names and name not in other_names:
        errors.append(f'exports {sym}, which is not a libc function')
for sym in ['pthread_cond_wait', 'pthread_cond_timedwait', 'pthread_cond_signal',
            'pthread_cond_broadcast']:
    for want in (f'{sym}@@GLIBC_2.3.2', f'{sym}@GLIBC_2.2.5'):
        if want not in ours:
            errors.append(f'missing {want}')
for want in ['pthread_setaffinity_np@@GLIBC_2.34', 'pthread_setaffinity_np@GLIBC_2.3.3',
             'sched_setaffinity@@GLIBC_2.3.4', 'sched_setaffinity@GLIBC_2.3.3',
             'pthread_mutex_lock', 'pthread_create', '__libc_start_main',
             'swapcontext', 'getcontext', 'jump_fcontext']:
    if want not in ours:
        errors.append(f'missing {want}')
undefined = subprocess.run(['nm', '-D', '--undefined-only', '--with-symbol-versions', lib],
                           check=True, capture_output=True, text=True).stdout.split()
for sym in undefined:
    if sym.startswith('_Unwind_') and '@GCC_' not in sym:
        errors.append(f'calls {sym} unversioned: it would bind to libunwind, not libgcc_s')
    # zstd is linked in and hidden (meson.build): nothing of it may be left
    # for the program's own definitions to take.
    if sym.startswith('ZSTD_'):
        errors.append(f'refers to {sym}: zstd must be linked in, hidden')
dynamic = subprocess.run(['readelf', '-d', lib], check=True, capture_output=True, text=True).stdout
if 'libzstd' in dynamic:
    errors.append('needs libzstd.so: a preloaded copy would replace the one the program ships')
for e in errors:
    print(f'{lib}: {e}', file=sys.stderr)
sys.exit(1 if errors else 0)
