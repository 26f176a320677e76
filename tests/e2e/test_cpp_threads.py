"""cpp_threads: std::mutex, std::shared_mutex and std::condition_variable map
to pthread objects with exact counts."""
import os

import tmtest
from tmtest import check

# As many busy workers as CPUs: one more would be oversubscribed (three
# CPU-bound workers on two CPUs wait about a quarter of their lives for one).
ARGS = ["--workers", str(os.cpu_count() or 2), "--iterations", "6000", "--items", "120"]


def test_cpp_threads():
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    tmtest.check_process(rec)
    t = rec.truth
    check(len(rec.program_threads()) == 1 + t["threads_created"],
          f"{len(rec.program_threads())} program threads, expected {1 + t['threads_created']}")
    names = sorted(str(x.get("name")) for x in rec.program_threads())
    check("cpp-producer" in names and "cpp-consumer" in names, f"thread names {names}")
    for kind, key in (("mutex", "mutexes"), ("rwlock", "rwlocks"), ("cond", "conds")):
        got = len(rec.objects(kind))
        check(got == t[key], f"{got} {kind} objects, expected {t[key]}")
    counts = sorted(o.get("acquisitions") for o in rec.objects("mutex"))
    check(t["counter_mutex_acquisitions"] in counts,
          f"no mutex with exactly {t['counter_mutex_acquisitions']} acquisitions: {counts}")
    rw = rec.objects("rwlock")
    if rw:
        expected = t["rwlock_exclusive"] + t["rwlock_shared"]
        check(rw[0].get("acquisitions") == expected,
              f"shared_mutex acquisitions {rw[0].get('acquisitions')}, expected {expected}")


def test_names_are_demangled():
    """C++ globals in an anonymous namespace read as in the source; the
    mangled name stays in symbol_raw."""
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    names = {o.get("symbol"): o for o in rec.objects()}
    for want in ("counter_mutex", "queue_mutex", "table_mutex", "queue_ready"):
        o = names.get(f"(anonymous namespace)::{want}")
        if check(o is not None, f"no object named (anonymous namespace)::{want}: {sorted(names)}"):
            check(o.get("symbol_raw") == f"_ZN12_GLOBAL__N_1{len(want)}{want}E",
                  f"{want}: symbol_raw {o.get('symbol_raw')!r}")
            check(o.get("symbol_offset") == 0, f"{want}: symbol_offset {o.get('symbol_offset')!r}")


def test_start_routines_name_the_program():
    """A std::thread starts in libstdc++ (execute_native_thread_routine):
    its start routine is the function it runs, or the lambda."""
    tmtest.require_report()
    rec = tmtest.recorded("cpp_threads", ARGS)
    routines = {t.get("name"): str(t.get("start_routine")) for t in rec.program_threads()}
    expected = {"cpp-consumer": "cpp_threads!(anonymous namespace)::consumer(long*)+0x0",
                "cpp-producer": "cpp_threads!main::{lambda()#1}+0x0"}
    for name, routine in expected.items():
        check(routines.get(name) == routine, f"{name}: start routine {routines.get(name)!r}, "
              f"expected {routine!r}")
    for name, routine in routines.items():
        if name.startswith("cpp-worker-"):
            check(routine.startswith("cpp_threads!(anonymous namespace)::worker("),
                  f"{name}: start routine {routine!r}, expected ...::worker(...)")
        check("libstdc++" not in routine, f"{name}: start routine {routine!r}")


def test_no_findings():
    """A well-behaved program: nothing to report above low severity."""
    tmtest.require_report()
    tmtest.check_clean(tmtest.recorded("cpp_threads", ARGS))


tmtest.main(globals())
