#!/usr/bin/env python3
"""The probe's folders are layers: base <- core <- out <- sample <- life <-
shim (docs/architecture.md). A file may include headers of its own layer
and of those below it, never of one above; and each layer's static library
needs no symbol that only a layer above defines. Every C file and header
of the probe is in one of the layers.

Usage: check_layers.py PROBE_SOURCE_DIR [LIBTHREADMON_OBJECT_DIR]"""
import json
import pathlib
import re
import subprocess
import sys

LAYERS = ['base', 'core', 'out', 'sample', 'life', 'shim']

root = pathlib.Path(sys.argv[1])
objdir = sys.argv[2] if len(sys.argv) > 2 else None
errors = []
layer_of = {}  # header name -> layer index
files = []
for i, layer in enumerate(LAYERS):
    for f in sorted((root / layer).glob('*.[ch]')):
        files.append((i, f))
        if f.suffix == '.h':
            if f.name in layer_of:
                errors.append(f'{f.name} is in two layers')
            layer_of[f.name] = i
for f in sorted(root.glob('*.[ch]')):
    errors.append(f'{f.relative_to(root.parent)} is in no layer')
for d in sorted(p for p in root.iterdir() if p.is_dir()):
    if d.name not in LAYERS + ['tests']:
        errors.append(f'{d.relative_to(root.parent)}/ is not a layer (check_layers.py: LAYERS)')

include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
for i, f in files:
    for n, line in enumerate(f.read_text().splitlines(), 1):
        m = include.match(line)
        if not m:
            continue
        name = pathlib.PurePosixPath(m.group(1)).name
        if '/' in m.group(1):
            errors.append(f'{f.relative_to(root.parent)}:{n}: includes {m.group(1)} by a path: '
                          'the layers\' include directories say what it may see')
        if name in layer_of and layer_of[name] > i:
            errors.append(f'{f.relative_to(root.parent)}:{n}: {LAYERS[i]} includes {name} of '
                          f'{LAYERS[layer_of[name]]}, a layer above')


def symbols(obj):
    out = subprocess.run(['nm', obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRVWCG':
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U':
            undefined.add(parts[1])
    return defined, undefined


# The library's objects, named by meson after their folder (base_real.c.o):
# those the build makes now (compile_commands.json), not stale ones of
# files since moved or deleted.
if objdir:
    objdir = pathlib.Path(objdir).resolve()
    build_root = objdir.parent.parent
    commands = json.loads((build_root / 'compile_commands.json').read_text())
    made = {(build_root / c['output']).resolve() for c in commands if 'output' in c}
    objects = []
    for obj in sorted(o for o in objdir.glob('*.o') if o in made):
        layer = obj.name.split('_', 1)[0]
        if layer not in LAYERS:
            errors.append(f'{obj.name}: an object of no layer')
            continue
        objects.append((LAYERS.index(layer), obj.name, *symbols(obj)))
    owner = {}
    for i, _, defined, _ in objects:
        for sym in defined:
            owner[sym] = min(i, owner.get(sym, i))
    for i, name, _, undefined in objects:
        for sym in sorted(undefined):
            if sym in owner and owner[sym] > i:
                errors.append(f'{name} ({LAYERS[i]}) uses {sym}, defined in '
                              f'{LAYERS[owner[sym]]}, a layer above')
for e in errors:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
