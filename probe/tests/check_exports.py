#!/usr/bin/env python3
"""libthreadmon.so exports only functions that libc also exports (the
interposed ones), and names that glibc implements twice are exported in
both versions, so that old-ABI callers reach their own implementation.
Its unwinder calls are bound to libgcc_s's versioned functions when an
unwind needs them (shim/unwind_abi.c), never dynamically: an unversioned
_Unwind_Resume binds to libunwind's copy, which breaks glibc's cancellation,
and libgcc_s loaded with the probe costs every exec of a traced tree.
zstd and protobuf-c are linked in with nothing of them dynamic, and no
library but libc is loaded with the probe."""
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


# Symbol prefix -> library the probe links in statically.
LINKED_IN = {'ZSTD_': 'libzstd', 'protobuf_c_': 'libprotobuf-c'}
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
            'pthread_cond_broadcast', 'pthread_cond_init']:
    for want in (f'{sym}@@GLIBC_2.3.2', f'{sym}@GLIBC_2.2.5'):
        if want not in ours:
            errors.append(f'missing {want}')
for want in ['pthread_setaffinity_np@@GLIBC_2.34', 'pthread_setaffinity_np@GLIBC_2.3.3',
             'sched_setaffinity@@GLIBC_2.3.4', 'sched_setaffinity@GLIBC_2.3.3',
             'pthread_mutex_lock', 'pthread_mutex_init', 'sem_init', 'pthread_create',
             '__libc_start_main',
             'swapcontext', 'getcontext', 'jump_fcontext', 'syscall']:
    if want not in ours:
        errors.append(f'missing {want}')
undefined = subprocess.run(['nm', '-D', '--undefined-only', '--with-symbol-versions', lib],
                           check=True, capture_output=True, text=True).stdout.split()
for sym in undefined:
    if sym.startswith(('_Unwind_', '__gcc_personality')) or '@GCC_' in sym:
        errors.append(f'refers to {sym}: libgcc_s would be loaded with the probe, and an '
                      'unversioned _Unwind_ name binds to libunwind (shim/unwind_abi.c)')
    # Linked in and hidden (meson.build): nothing of them may be left for
    # the program's own definitions to take.
    for prefix, name in LINKED_IN.items():
        if sym.startswith(prefix):
            errors.append(f'refers to {sym}: {name} must be linked in, hidden')
# Every library the probe needs is loaded into the program too, ahead of the
# program's own copy, and into every exec of a traced tree: only glibc.
dynamic = subprocess.run(['readelf', '-d', lib], check=True, capture_output=True, text=True).stdout
for line in dynamic.splitlines():
    if '(NEEDED)' in line:
        needed = line.split('[')[-1].rstrip(']')
        if needed != 'libc.so.6':
            errors.append(f'needs {needed}: a preloaded copy would replace the one the program ships')
for e in errors:
    print(f'{lib}: {e}', file=sys.stderr)
sys.exit(1 if errors else 0)
