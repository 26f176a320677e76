"""mutex_loop: the paper's finding. With rand() the threads queue on glibc's
hidden random() lock, which only futex sampling can see; with rand_r they
do not. Both runs report the same eight mutexes with exact acquisitions."""
import tmtest
from tmtest import Recording, check

# Little work around each lock, so random() dominates and its lock is hot;
# about a second, so that 10 ms futex sampling reliably sees threads wait.
ARGS = ["--threads", "4", "--mutexes", "8", "--iterations", "800000", "--hold-loops", "50",
        "--max-free-loops", "200"]


def hidden_random_lock(rec):
    """The internal lock object in libc whose symbol is random.c's `lock`."""
    return [o for o in rec.objects("internal")
            if "libc" in str(o.get("module", "")) and
            str(o.get("symbol", "")).split("+")[0] == "lock"]


def check_mutexes(rec):
    mutexes = rec.objects("mutex")
    check(len(mutexes) == rec.truth["mutexes"],
          f"{len(mutexes)} mutexes reported, expected {rec.truth['mutexes']}")
    total = sum(o.get("acquisitions") or 0 for o in mutexes)
    check(total == rec.truth["acquisitions"],
          f"mutex acquisitions sum to {total}, truth {rec.truth['acquisitions']}")
    check(all(str(o.get("symbol", "")).startswith("mutexes") for o in mutexes),
          f"mutex symbols {[o.get('symbol') for o in mutexes]}, expected mutexes+0x...")
    check(len(rec.program_threads()) == 1 + rec.truth["threads"],
          f"{len(rec.program_threads())} program threads, expected {1 + rec.truth['threads']}")


def test_rand_shows_hidden_lock():
    tmtest.require_report()
    rec = Recording("mutex_loop", ARGS + ["--rng", "rand"])
    tmtest.check_process(rec)
    check_mutexes(rec)
    found = hidden_random_lock(rec)
    check(len(found) == 1, "glibc's random() lock not reported as an internal lock; internal "
          f"objects: {[(o.get('module'), o.get('symbol')) for o in rec.objects('internal')]}")


def test_rand_r_has_no_hidden_lock():
    tmtest.require_report()
    rec = Recording("mutex_loop", ARGS + ["--rng", "rand_r"])
    tmtest.check_process(rec)
    check_mutexes(rec)
    check(not hidden_random_lock(rec), "rand_r run reports glibc's random() lock")


tmtest.main(globals())
