"""cond_wait: the sleeper is blocked on the condition for the time it measured."""
import tmtest
from tmtest import check, near, state

ARGS = ["--delay-ms", "120", "--repeats", "6"]


def test_cond_wait():
    tmtest.require_report()
    rec = tmtest.recorded("cond_wait", ARGS)
    tmtest.check_process(rec)
    truth = rec.truth
    check(len(rec.program_threads()) == 3, f"{len(rec.program_threads())} program threads, "
          "expected 3 (main, sleeper, signaller)")
    sleeper = rec.thread(truth["sleeper_tid"])
    if sleeper:
        check(sleeper.get("name") == "sleeper", f"sleeper named {sleeper.get('name')!r}")
        near(state(sleeper, "blocked_cond"), truth["blocked_cond_pct"], 5, "sleeper blocked_cond %")
    kinds = sorted(tmtest.kind_of(o) for o in rec.objects())
    check(kinds == ["cond", "mutex"], f"sync objects {kinds}, expected one cond and one mutex")
    conds = rec.objects("cond")
    if conds:
        check(str(conds[0].get("symbol", "")).startswith("ready"),
              f"cond symbol {conds[0].get('symbol')!r}, expected 'ready'")
        near(conds[0].get("wait_s"), truth["wait_s"], 0.1 * truth["wait_s"], "cond wait s")


def test_no_findings():
    """A well-behaved program: nothing to report above low severity."""
    tmtest.require_report()
    tmtest.check_clean(tmtest.recorded("cond_wait", ARGS))


tmtest.main(globals())
