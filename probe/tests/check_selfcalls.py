#!/usr/bin/env python3
"""No code in libthreadmon.so calls a name that libthreadmon.so exports.

Such a call goes through the PLT (or the GOT) and binds to the first
definition in the process: the probe's own wrapper, or another preloaded
library's. The probe's code then counts its own waits as the program's,
re-enters its wrappers (real.c calling _exit re-entered tm_real_init while
it was still resolving, and the process spun for ever), or runs someone
else's. The probe uses tm_real.* or the raw system call instead; a wrapper
that needs another wrapper's work calls the static function behind it.

Usage: check_selfcalls.py LIBTHREADMON"""
import re
import subprocess
import sys


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


lib = sys.argv[1]
exported = set()
for line in run('nm', '-D', '--defined-only', lib).splitlines():
    parts = line.split()
    if len(parts) == 3:
        exported.add(parts[2].split('@')[0])
if not exported:
    sys.exit(f'{lib}: exports nothing: not the probe?')

errors = []
# Calls and tail calls through the PLT, named by the function they are in.
where = '?'
call = re.compile(r'\s(?:call|jmp)q?\s+[0-9a-f]+ <([^>@]+)@plt>')
label = re.compile(r'^[0-9a-f]+ <([^>]+)>:$')
for line in run('objdump', '-d', '--no-show-raw-insn', lib).splitlines():
    m = label.match(line)
    if m:
        where = m.group(1)
        continue
    m = call.search(line)
    if m and m.group(1) in exported and not where.endswith('@plt'):
        errors.append(f'{where} calls {m.group(1)} through the PLT')
# Relocations that bind to one of our names: a PLT slot, or a GOT entry
# (-fno-plt calls, address taken).
for line in run('readelf', '-rW', lib).splitlines():
    parts = line.split()
    if len(parts) >= 5 and ('JUMP_SLOT' in parts[2] or 'GLOB_DAT' in parts[2]):
        name = parts[4].split('@')[0]
        if name in exported:
            errors.append(f'has a {parts[2]} relocation for its own export {name}')
for e in errors:
    print(f'{lib}: {e}', file=sys.stderr)
sys.exit(1 if errors else 0)
