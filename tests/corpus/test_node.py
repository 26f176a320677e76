"""Node.js: libuv's thread pool (crypto.pbkdf2 runs there) and V8's own
threads. More pool threads than CPUs is oversubscribed, naming the pool's
threads and no other; a pool of one thread per CPU raises nothing. The
event loop waits in epoll (idle), V8's platform workers wait all their
lives on a condition (they had no work): neither is a finding."""
import os
import re

import corpus
import tmtest
from corpus import check

# libuv's pool thread: its static `worker`, named where node links libuv in
# (nodesource's builds: node!worker+0x0); Debian's node links the stripped
# libuv.so.1, where it is an offset (libuv.so.1+0xad10).
POOL = re.compile(r"!worker\+0x|^libuv\.so[0-9.]*\+0x")
JOBS, ROUNDS = 8, 1000000


def record(pool_size):
    node = corpus.tool("node", "/usr/bin")
    env = dict(os.environ, UV_THREADPOOL_SIZE=str(pool_size))
    run = corpus.Run("node", [node, corpus.source("uv_pool.js"), str(JOBS), str(ROUNDS)],
                     env=env)
    t = run.truth
    check(run.run.returncode == 0 and t.get("jobs") == JOBS,
          f"node exited {run.run.returncode}: {run.run.stderr[-400:]}")
    threads = run.threads()
    pool = [x for x in threads if POOL.search(str(x.get("start_routine") or ""))]
    check(len(pool) == pool_size, f"{len(pool)} libuv pool threads (start routine ...!worker), "
          f"UV_THREADPOOL_SIZE {pool_size}: {[x.get('start_routine') for x in threads]}")
    for x in pool:
        s = x["states"]
        busy = s.get("on_cpu", 0) + s.get("runnable", 0)
        check(busy >= 60, f"pool thread {x['tid']}: on a CPU or runnable {busy:.0f}% of its life, "
              f"it hashed for nearly all of it ({s})")
    main = next((x for x in threads if x["tid"] == t.get("main_tid")), None)
    if check(main is not None, f"no main thread {t.get('main_tid')}"):
        idle = main["states"].get("idle", 0)
        check(idle >= 50, f"the event loop idle {idle:.0f}% (waiting in epoll for the pool)")
    platform = [x for x in threads if "PlatformWorker" in str(x.get("start_routine") or "")]
    for x in platform:
        cond = x["states"].get("blocked_cond", 0)
        check(cond >= 90, f"V8 platform worker {x['tid']}: blocked_cond {cond:.0f}%")
    quiet = {x["tid"] for x in threads if x not in pool and x is not main}
    for f in run.findings():
        named = quiet & set(f.get("threads", []))
        check(not named, f"{f['kind']} names threads that did no work: {sorted(named)}")
    return run, pool


def test_pool_larger_than_the_cpus():
    cpus = os.cpu_count() or 2
    size = max(4, 2 * cpus)
    run, pool = record(size)
    f = corpus.only(run, "oversubscribed")
    if f:
        check(set(x["tid"] for x in pool) <= set(f.get("threads", [])),
              f"oversubscribed names {f.get('threads')}, the pool is {[x['tid'] for x in pool]}")
    corpus.no_false_alarm(run)


def test_pool_of_one_thread_per_cpu():
    run, _ = record(os.cpu_count() or 2)
    corpus.no_false_alarm(run)


tmtest.main(globals())
