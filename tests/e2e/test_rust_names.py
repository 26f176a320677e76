"""rust_locks (legacy mangling) and rust_locks_v0 (v0 mangling): the names a
Rust program shows are readable. Its static Mutex, on a bare futex that std
waits on through glibc's syscall() (a futex object, seen at the call), is
named crate::SHARED_TOTAL; its call site goes through std's
Mutex::lock_contended; no mangled name or ::h<hash> is left. Skips when no
Rust compiler was found when the build was set up."""
import os
import re

import tmtest
from tmtest import check

# What a mangled Rust name still looks like: _ZN…E, _R…, or a ::h<hash> tail.
MANGLED = re.compile(r"(^|[!\s])(_ZN\w+E|_R[A-Z]\w+)|::h[0-9a-f]{16}\b")


def recorded(name):
    if not os.path.exists(tmtest.workload(name)):
        raise tmtest.Skip(f"{name} is not built: no Rust compiler (rustc) was found when the "
                          "build was set up (Debian: apt-get install rustc)")
    tmtest.require_report()
    return tmtest.recorded(name)


def check_names(name):
    rec = recorded(name)
    tmtest.check_process(rec)
    crate = name
    lock = [o for o in rec.objects("futex") if o.get("symbol") == rec.truth["lock_symbol"]]
    if not check(len(lock) == 1, f"{name}: no futex object named {rec.truth['lock_symbol']}: "
                 f"{[(o.get('kind'), o.get('symbol')) for o in rec.report.get('sync_objects', [])]}"):
        return
    lock = lock[0]
    raw = str(lock.get("symbol_raw"))
    check(raw.startswith(("_ZN", "_R")) and "SHARED_TOTAL" in raw,
          f"{name}: symbol_raw {raw!r}, expected the mangled name")
    frames = [f for site in lock.get("call_sites", []) for f in site.get("frames", [])]
    check(any(re.search(r"Mutex>?::lock_contended\+0x", f) for f in frames),
          f"{name}: no std Mutex::lock_contended frame in {frames[:6]}")
    check(any(f.startswith(f"{crate}!{crate}::work+0x") for f in frames),
          f"{name}: no {crate}::work frame in {frames[:6]}")
    shown = frames + [lock.get("symbol"), lock.get("call_site")] + \
        [t.get("start_routine", "") for t in rec.report["threads"]] + \
        [f.get("message", "") for f in rec.report.get("findings", [])]
    left = [s for s in shown if MANGLED.search(str(s))]
    check(not left, f"{name}: names still mangled: {left[:4]}")
    workers = sorted(t.get("name") for t in rec.program_threads() if not t.get("main"))
    check(workers == [f"rust-worker-{i}" for i in range(rec.truth["threads_created"])],
          f"{name}: threads {workers}")


def test_legacy_mangling():
    check_names("rust_locks")


def test_v0_mangling():
    check_names("rust_locks_v0")


tmtest.main(globals())
