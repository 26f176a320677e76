"""SQLite from several threads (one shared connection in serialized mode,
and private ones): runs under the probe, and no false alarm. The lock that
SQLite takes for the shared connection, inside libsqlite3, may be reported:
the threads do take turns at it."""
import corpus
import tmtest
from corpus import check

WRITERS, READERS, SECONDS = 2, 2, 1.5


def test_sqlite_threads():
    exe = corpus.built("sqlite_threads")
    run = corpus.Run("sqlite", [exe, str(WRITERS), str(READERS), str(SECONDS)])
    check(run.run.returncode == 0 and run.truth.get("writes", 0) > 0 and run.truth.get("reads", 0) > 0,
          f"exit {run.run.returncode}, truth {run.truth}, stderr {run.run.stderr.strip()}")
    names = sorted(t["name"] for t in run.threads("sql-"))
    check(len(names) == WRITERS + READERS, f"threads {names}")
    objs = [o for o in run.report["sync_objects"] if o.get("contentions")]
    if objs:
        print(f"  top object: {objs[0]['kind']} {objs[0].get('module')} @ {objs[0].get('call_site')}")

    by_id = {o["id"]: o for o in run.report["sync_objects"]}

    def sqlite_lock(f):  # the shared connection's mutex, taken inside libsqlite3
        obj = by_id.get(f.get("evidence", {}).get("object"), {})
        frames = [fr for c in obj.get("call_sites", []) for fr in c.get("frames", [])]
        return f.get("kind") == "serialising_object" and any("libsqlite3" in fr for fr in frames)
    corpus.no_false_alarm(run, sqlite_lock)


tmtest.main(globals())
