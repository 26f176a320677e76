"""event_server: a server's listener in accept and event loop in epoll_wait
read as idle (waiting for events), not sleeping, as long as their own clocks
say (less the waits for a CPU after each wake-up, runnable), and raise no
finding; its clients' waits for answers read idle and their think time
sleeping; its workers' waits for their locks and for work (a condition with
nothing queued) are what their own clocks measured, and no finding either."""
import tmtest
from tmtest import check, near, state

IDLE_MIN = 90  # percent of their lives the listener and event loop must read idle


def roles(rec, name):
    return [t for t in rec.truth["threads"] if t["role"] == name]


def test_listener_and_event_loop_idle():
    tmtest.require_report()
    rec = tmtest.recorded("event_server", [])
    tmtest.check_process(rec)
    print(f"  {rec.truth['requests']} requests served")
    check(rec.truth["requests"] > 100, f"only {rec.truth['requests']} requests: no load")
    for role in ("listener", "evloop"):
        t = roles(rec, role)[0]
        got = rec.thread(t["tid"])
        if not got:
            continue
        truth = 100 * (t["waiting_s"] - t["woken_s"]) / t["lifetime_s"]
        idle, sleeping = state(got, "idle"), state(got, "sleeping")
        print(f"  {role}: sleeping {sleeping}%, on_cpu {state(got, 'on_cpu')}%, "
              f"runnable {state(got, 'runnable')}%; in the call by its clock "
              f"{100 * t['waiting_s'] / t['lifetime_s']:.1f}%, woken in it "
              f"{100 * t['woken_s'] / t['lifetime_s']:.1f}%")
        near(idle, truth, 3, f"{role} idle %")
        # A machine so busy that each wake-up waits long for a CPU leaves it
        # less idle than that by its own clock: the share is then untestable.
        if truth >= IDLE_MIN + 3:
            check(idle is not None and idle >= IDLE_MIN, f"{role} idle {idle}%, expected >= {IDLE_MIN}%")
        else:
            print(f"  note: {role} was idle only {truth:.1f}% by its own clock (a busy machine): "
                  f">= {IDLE_MIN}% not checked")
        check(sleeping is not None and sleeping < 3, f"{role} sleeping {sleeping}%: idle read as sleep")
        about = [f for f in tmtest.findings(rec) if t["tid"] in f.get("threads", [])]
        check(not about, f"findings about the idle {role}: {tmtest.describe(about)}")


def test_clients_idle_in_recv_and_asleep_in_think():
    """A client waits for its answer in recv (idle), outside any wrapper:
    only the sampler's reads of its syscall tell that wait's kind, and they
    are few (a tick that finds it back in its wrapped nanosleep, its think
    time, defers its read). Ticks no read before named take the next read
    that found it waiting for work: its first ticks read its recv as sleep
    before (82.5% against a truth of 79.4 in CI). Its think time is exact
    (the wrapper), however busy the machine: it was within 0.1 points of
    its clock in 12 clients at load 17."""
    tmtest.require_report()
    rec = tmtest.recorded("event_server", [])
    for t in roles(rec, "client"):
        got = rec.thread(t["tid"])
        if not got:
            continue
        life = t["lifetime_s"]
        near(state(got, "sleeping"), 100 * t["slept_s"] / life, 3,
             f"client {t['tid']} sleeping %")
        # Idle is the recv's time less its waits for a CPU after the answer
        # came (woken: schedstat's run_delay across the call), which read as
        # runnable; shared among a tick's sleeps by length (run_delay does
        # not say which sleep it ended), so within 3 points, 5 when others
        # kept the CPUs busy. The rest of a loaded client's time (preempted
        # in send, or reading its own clock) is runnable or on a CPU.
        points = 5 if tmtest.other_cpu_share(rec) > 0.25 else 3
        near(state(got, "idle"), 100 * (t["waiting_s"] - t["woken_s"]) / life, points,
             f"client {t['tid']} idle %")


def test_no_findings_about_idle_pool():
    """Workers waiting on the queue's condition with nothing queued, clients
    reading their answers: nothing a server's author would act on."""
    tmtest.require_report()
    rec = tmtest.recorded("event_server", [])
    tmtest.check_clean(rec)
    check(not tmtest.findings(rec, "never_runs"),
          f"never_runs: {tmtest.describe(tmtest.findings(rec, 'never_runs'))}")


def test_worker_lock_waits_match_their_clock():
    tmtest.require_report()
    rec = tmtest.recorded("event_server", [])
    for t in roles(rec, "worker"):
        got = rec.thread(t["tid"])
        if not got:
            continue
        near(state(got, "blocked_mutex"), 100 * t["mutex_s"] / t["lifetime_s"], 3,
             f"worker {t['tid']} blocked_mutex %")
        near(state(got, "blocked_cond"), 100 * t["cond_s"] / t["lifetime_s"], 3,
             f"worker {t['tid']} blocked_cond %")


tmtest.main(globals())
