"""stdio_lock: threads that named themselves (pthread_setname_np, through
snprintf) and then share one FILE take turns on its lock, a hidden lock in
glibc. The finding names the function the program called, fprintf, and
the program's own function; stale return addresses the naming left on the
threads' stacks (vsnprintf, pthread_setname_np, wl_name_self) are no part
of any call site."""
import tmtest
from tmtest import check

ARGS = ["--lines", "400"]
STALE = ("pthread_setname_np", "vsnprintf", "wl_name_self")


def test_stdio_lock_is_reached_via_fprintf():
    tmtest.require_report()
    rec = tmtest.recorded("stdio_lock", ARGS)
    tmtest.check_process(rec)
    found = tmtest.findings(rec, "internal_lock")
    if not check(len(found) == 1, f"{len(found)} internal_lock findings: {tmtest.describe(found)}"):
        return
    f = found[0]
    ev = f.get("evidence", {})
    check(ev.get("program_function") == f"stdio_lock!{rec.truth['program_function']}",
          f"program_function {ev.get('program_function')!r}")
    check(ev.get("library_function") == "fprintf",
          f"library_function {ev.get('library_function')!r}, expected fprintf")
    tmtest.mentions(f.get("message"), "stdio_lock!writer", "via fprintf()")
    check(not any(s in f.get("message", "") for s in STALE), f"message {f.get('message')!r}")
    for o in rec.objects("internal"):
        for site in o.get("call_sites", []):
            frames = site.get("frames", [])
            stale = [fr for fr in frames if any(s in fr for s in STALE)]
            check(not stale, f"stale frames {stale} in call site {frames}")


tmtest.main(globals())
