"""Thread names as the program gave them, even when it named a thread that
had already ended (late_names: pthread_setname_np answers ENOENT there, yet
the program meant the name; the capture used to keep the creator's name
about one time in four)."""
import tmtest
from tmtest import check


def test_names_given_after_the_end():
    tmtest.require_report()
    rec = tmtest.recorded("late_names", ["--threads", "12", "--gap-ms", "2"])
    tmtest.check_process(rec)
    for want in rec.truth["threads"]:
        got = rec.thread(want["tid"])
        if got:
            check(got.get("name") == want["name"],
                  f"thread {want['tid']} named {got.get('name')!r}, the program named it "
                  f"{want['name']!r} (pthread_setname_np returned {want['setname_rc']})")
    late = sum(1 for t in rec.truth["threads"] if t["setname_rc"] != 0)
    print(f"  {late} of {len(rec.truth['threads'])} named after they ended (ENOENT)")


tmtest.main(globals())
