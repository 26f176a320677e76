"""Thread names as the program gave them, even when it named a thread that
had already ended (late_names: pthread_setname_np answers ENOENT there, yet
the program meant the name; the capture used to keep the creator's name
about one time in four)."""
import tmtest
from tmtest import check


def check_names(rec):
    for want in rec.truth["threads"]:
        got = rec.thread(want["tid"])
        if got:
            check(got.get("name") == want["name"],
                  f"thread {want['tid']} named {got.get('name')!r}, the program named it "
                  f"{want['name']!r} (pthread_setname_np returned {want['setname_rc']})")


def test_names_given_after_the_end():
    tmtest.require_report()
    rec = tmtest.recorded("late_names", ["--threads", "12", "--gap-ms", "2"])
    tmtest.check_process(rec)
    check_names(rec)
    late = sum(1 for t in rec.truth["threads"] if t["setname_rc"] != 0)
    print(f"  {late} of {len(rec.truth['threads'])} named after they ended (ENOENT)")


def test_names_set_by_prctl():
    """Rust's std before 1.64 names a thread from inside it with
    prctl(PR_SET_NAME), as the thread starts: a name the capture must keep
    (Debian's rustc 1.63 left every worker of the Rust corpus program with
    the process's name)."""
    tmtest.require_report()
    rec = tmtest.recorded("late_names", ["--threads", "12", "--gap-ms", "2", "--prctl", "1"])
    tmtest.check_process(rec)
    check_names(rec)


tmtest.main(globals())
