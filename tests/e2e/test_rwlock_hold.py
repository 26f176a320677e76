"""rwlock_hold: a read-mostly rwlock's counts and its write holds. Readers
hold it together; its hold time is the time held for writing, estimated
from the writers' timed holds alone (weighted by all acquisitions, readers'
included, it read 784 s of write hold in a 0.6 s run: 9,400 times the
truth, and an "invariant broken" on every report of the program)."""
import tmtest
from tmtest import check, near

ARGS = ["--readers", "2", "--writes", "400", "--hold-ms", "0.2", "--gap-ms", "0.5"]


def test_write_holds():
    tmtest.require_report()
    rec = tmtest.recorded("rwlock_hold", ARGS)  # report_json fails on an invariant broken
    tmtest.check_process(rec)
    truth = rec.truth
    lock = tmtest.object_by_symbol(rec, truth["lock_symbol"])
    if not lock:
        return
    check(tmtest.kind_of(lock) == "rwlock", f"table_lock is a {tmtest.kind_of(lock)}")
    check(lock.get("acquisitions") == truth["reads"] + truth["writes"],
          f"acquisitions {lock.get('acquisitions')}, truth {truth['reads']} reads + "
          f"{truth['writes']} writes")
    # Past 256 writes the holds are sampled (about 1 in 8): an estimate.
    samples = lock.get("hold_samples") or 0
    check(256 <= samples < truth["writes"], f"{samples} write holds timed of {truth['writes']}")
    near(lock.get("hold_s"), truth["write_hold_s"], 0.2 * truth["write_hold_s"],
         "table_lock hold s (its write holds)")


tmtest.main(globals())
