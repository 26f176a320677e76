"""The workloads themselves, without threadmon: each runs with small flags,
exits 0 and prints a truth line that is self-consistent. A wrong truth would
make every end-to-end comparison meaningless."""
import json
import subprocess

import tmtest
from tmtest import check, workload


def truth(name, *args):
    proc = subprocess.run([workload(name), *args], capture_output=True, text=True, timeout=60)
    check(proc.returncode == 0, f"{name} exited {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_spin_sleep_shares_add_up():
    t = truth("spin_sleep", "--threads", "2", "--spin-ms", "10", "--sleep-ms", "10",
              "--repeats", "5")
    for th in t["threads"]:
        check(th["cpu_s"] >= 0.05 - 0.002, f"spinner used {th['cpu_s']} s CPU, expected 0.05")
        check(th["on_cpu_pct"] + th["sleeping_pct"] <= 100.5,
              f"on_cpu + sleeping = {th['on_cpu_pct'] + th['sleeping_pct']} %")


def test_woken_wait_shares_add_up():
    t = truth("woken_wait", "--repeats", "10")["threads"][0]
    total = t["on_cpu_pct"] + t["runnable_pct"] + t["sleeping_pct"]
    # The rest is steal (the CPU clock stops) and the reads' own moments.
    check(95 <= total <= 100.5, f"on_cpu + runnable + sleeping = {total:.2f} %")
    # 0 is true too: a woken sleeper that preempts the hog at once waits
    # less than the microsecond the truth line prints (seen on a quiet CI).
    check(0 <= t["woken_s"] <= t["slept_s"], f"woken {t['woken_s']} s of {t['slept_s']} s asleep")
    check(t["woken_s"] <= t["runq_s"] + 1e-6, "woken waits exceed all run-queue time")


def test_mutex_hold_waits_are_real():
    t = truth("mutex_hold", "--waiters", "2", "--rounds", "8", "--hold-ms", "10")
    check(t["max_wait_s"] > 0.005, f"max wait {t['max_wait_s']} s: waiters never blocked")
    check(t["acquisitions"] == 8 + sum(w["acquisitions"] for w in t["waiters"]),
          "acquisitions do not add up")


def test_cond_wait_waits_for_signals():
    t = truth("cond_wait", "--delay-ms", "20", "--repeats", "3")
    check(t["wakeups"] == 3 and t["wait_s"] >= 0.055, f"cond_wait truth {t}")


def test_barrier_and_matrix_run():
    for name, args in (("barrier_fine", ["--iterations", "200"]),
                       ("barrier_coarse", ["--iterations", "5", "--pthread-barrier"])):
        t = truth(name, "--threads", "3", *args)
        check(len(t["workers"]) == 3, f"{name}: {len(t['workers'])} workers")
    t = truth("matrix_mult", "--size", "60", "--rounds", "2")
    check(t["checksum"] > 0 and len(t["workers"]) == 6, f"matrix_mult truth {t}")


def test_mutex_loop_rngs():
    for rng in ("rand", "rand_r"):
        t = truth("mutex_loop", "--threads", "4", "--iterations", "500", "--rng", rng)
        check(t["acquisitions"] == 4 * 500, f"mutex_loop {rng}: {t['acquisitions']} acquisitions")
    proc = subprocess.run([workload("mutex_loop"), "--rng", "erand48"], capture_output=True,
                          text=True, timeout=10)
    check(proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1,
          f"bad --rng: status {proc.returncode}, stderr {proc.stderr!r}")


def test_cpp_and_deadlock():
    t = truth("cpp_threads", "--workers", "2", "--iterations", "200", "--items", "5")
    check(t["counter_mutex_acquisitions"] == 400 and t["items_received"] == 5, f"cpp {t}")
    t = truth("deadlock", "--deadlock-ms", "100")
    check(t["second"]["timed_out"] and t["first"]["wait_s"] >= 0.095, f"deadlock {t}")
    check(0 <= t["formed_s"] < t["broken_s"] and t["broken_s"] - t["formed_s"] >= 0.095,
          f"deadlock formed {t['formed_s']} s, broken {t['broken_s']} s")


def test_futex_lock_waits_are_real():
    t = truth("futex_lock", "--workers", "3", "--rounds", "20")
    # The lock guards its counter: no update lost, and the workers did wait.
    check(t["updates"] == 3 * 20, f"futex_lock updates {t['updates']}, expected 60")
    check(t["waits"] > 0 and t["wait_s"] > 0, f"futex_lock never waited: {t}")
    check(sum(w["waits"] for w in t["workers"]) == t["waits"], "futex_lock waits do not add up")


def test_serialise_waits():
    t = truth("serialise", "--threads", "3", "--work-ms", "30", "--chunk-ms", "5")
    check(sum(w["acquisitions"] for w in t["workers"]) == 3 * 6, f"serialise acquisitions {t}")
    # Three threads, one lock held all the time: two of them always wait.
    check(t["blocked_share"] > 0.4, f"serialise blocked share {t['blocked_share']}")


def test_barrier_imbalance_waits():
    t = truth("barrier_imbalance", "--threads", "2", "--rounds", "4", "--work-ms", "5")
    heavy = [w for w in t["workers"] if w["heavy"]]
    light = [w for w in t["workers"] if not w["heavy"]]
    check(len(heavy) == 1 and light and heavy[0]["cpu_s"] >= 0.08 - 0.002,
          f"barrier_imbalance workers {t['workers']}")
    check(all(w["barrier_s"] > heavy[0]["barrier_s"] for w in light),
          f"light threads waited less than heavy-0: {t['workers']}")


def test_phases_serial_share():
    t = truth("phases", "--threads", "2", "--rounds", "3", "--parallel-ms", "5",
              "--serial-ms", "15")
    check(t["serial_s"] >= 0.045 - 0.002 and 0 < t["serial_pct"] <= 100, f"phases {t}")


def test_starved_modes():
    for how in ("idle", "read"):
        t = truth("starved", "--how", how, "--duration-ms", "300")
        s = t["starved"]
        check(s["lifetime_s"] >= 0.25 and s["on_cpu_pct"] < 0.5,
              f"starved --how {how}: starved-0 {s}")


tmtest.main(globals())
