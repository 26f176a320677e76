"""threadmon export, each format opened by its real reader: pprof by
`go tool pprof`, Chrome JSON by python's json, Perfetto by the trace protos
the `perfetto` PyPI package ships (in a virtual environment made here).
Every figure is checked against `threadmon report --json` of the same
capture. Skips a reader that is not on this machine, with the reason."""
import collections
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "e2e"))
import tmtest  # noqa: E402
from tmtest import check, near  # noqa: E402

EXPORT = os.path.join(tmtest.BUILD, "display", "export", "threadmon-export")
HOLD_ARGS = ["--waiters", "2", "--rounds", "20"]
LOOP_ARGS = ["--threads", "2", "--iterations", "200000", "--rng", "rand"]


def require_export():
    tmtest.require_report()
    if not os.path.exists(EXPORT):
        raise tmtest.Skip(f"{EXPORT} not built")


def export(rec, fmt, *extra):
    out = os.path.join(tmtest.Temp.dir(), f"{os.path.basename(rec.capture)}.{fmt}{len(extra)}")
    proc = subprocess.run([EXPORT, "--format", fmt, "-o", out, *extra, rec.capture],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise tmtest.Failed(f"threadmon-export --format {fmt} exited {proc.returncode}: "
                            f"{proc.stderr.strip()}")
    return out


def go_tool():
    # Debian's golang-go first: its pprof is built; a newer Go builds its
    # pprof into the build cache at first use (minutes).
    for go in ("/usr/lib/go/bin/go", shutil.which("go"), "/usr/local/go/bin/go"):
        if go and os.path.exists(go):
            return go
    raise tmtest.Skip("no Go toolchain (Debian's golang-go) for go tool pprof")


def pprof(profile, *args):
    proc = subprocess.run([go_tool(), "tool", "pprof", *args, profile], capture_output=True,
                          text=True, timeout=240)
    if proc.returncode != 0:
        raise tmtest.Failed(f"go tool pprof {' '.join(args)} refused the profile: "
                            f"{proc.stderr.strip()}")
    return proc.stdout


def raw_samples(text):
    """The samples of `go tool pprof -raw`: (values, location ids, labels)."""
    samples, cur = [], None
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Samples:")) + 2
    for line in lines[start:]:
        if line.startswith("Locations"):
            break
        m = re.match(r"\s+(\d+)\s+(\d+):((?: \d+)*)\s*$", line)
        if m:
            cur = {"values": (int(m[1]), int(m[2])), "locs": m[3].split(), "labels": {}}
            samples.append(cur)
        elif cur is not None:
            for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                cur["labels"][k] = v
    return samples


def report_waits(rec):
    """Contentions and wait ns over every lock, as the report gives them by
    call site (the profile's samples are call sites). For a pthread lock
    they are its waits; for a sampled hidden lock the object's own figure is
    an estimate from ticks and its site's is the probe's counter, and the
    two can differ (0.025 s against 0.135 s in one run): the export follows
    the sites."""
    count = sum(o.get("contentions") or 0 for o in rec.report["sync_objects"])
    ns = 0
    for o in rec.report["sync_objects"]:
        sites = o.get("call_sites") or []
        waited = sum(s.get("wait_s") or 0 for s in sites) if sites else o.get("wait_s") or 0
        ns += round(waited * 1e9)
    return count, ns


def check_totals(rec, samples, what):
    count, ns = report_waits(rec)
    got_count = sum(s["values"][0] for s in samples)
    got_ns = sum(s["values"][1] for s in samples)
    check(got_count == count, f"{what}: {got_count} contentions in the profile, report {count}")
    # The report rounds seconds to the nanosecond per lock.
    near(got_ns / 1e9, ns / 1e9, 1e-6 * max(1, len(rec.report["sync_objects"])),
         f"{what}: delay s in the profile vs the report's waits")


def test_pprof_mutex_hold():
    require_export()
    rec = tmtest.recorded("mutex_hold", HOLD_ARGS)
    out = export(rec, "pprof")
    with open(out, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "the profile is gzip framed")
    raw = pprof(out, "-raw")
    check("contentions/count delay/nanoseconds" in raw, "sample types of Go's contention profiles")
    check(re.search(r"PeriodType: contentions count", raw) is not None, "period type contentions count")
    samples = raw_samples(raw)
    check_totals(rec, samples, "mutex_hold")
    # Per waiter: its wait on big_lock as the report's waiters table has it.
    lock = rec.objects("mutex")[0]
    for w in lock.get("waiters", []):
        got = sum(s["values"][1] for s in samples if s["labels"].get("thread_id") == str(w["tid"]))
        near(got / 1e9, w["wait_s"], 0.01 * w["wait_s"] + 1e-6, f"thread {w['tid']} delay s")
    check(all("big_lock" in s["labels"].get("lock", "") and s["labels"].get("lock_kind") == "mutex"
              for s in samples), f"every sample labelled with big_lock: {samples}")
    check(re.search(r"timed_lock mutex_hold\.c:\d+", raw) is not None,
          "frames carry function, file and line (timed_lock mutex_hold.c:N)")
    top = pprof(out, "-top", "-sample_index=delay").splitlines()
    first = next((l for l in top if re.match(r"\s+[\d.]+\w*s\s+[\d.]+%", l)), "")
    check(first.split()[-1:] == ["timed_lock"], f"top function timed_lock, got {first!r}")

    holds = export(rec, "pprof", "--profile", "holds")
    hsamples = raw_samples(pprof(holds, "-raw"))
    near(sum(s["values"][1] for s in hsamples) / 1e9, lock["hold_s"], 1e-6, "hold s in the holds profile")
    check(sum(s["values"][0] for s in hsamples) == lock["acquisitions"],
          "acquisitions in the holds profile")


def test_pprof_mutex_loop():
    require_export()
    rec = tmtest.recorded("mutex_loop", LOOP_ARGS)
    out = export(rec, "pprof")
    raw = pprof(out, "-raw")
    check_totals(rec, raw_samples(raw), "mutex_loop")
    if report_waits(rec)[1] == 0:
        raise tmtest.Skip("the loopers never waited (a machine too loaded for them to run at "
                          "once): the profile is rightly empty, no stack to look for")
    top = pprof(out, "-top", "-cum", "-sample_index=delay")
    check(re.search(r"\bwork$", top, re.M) is not None, f"mutex_loop's work() in -top:\n{top}")


def test_bad_input_one_line():
    """Not a capture, a cut one, an existing output: one clear line each,
    nothing written over, a cut capture exported up to its cut (exit 2)."""
    require_export()
    d = tmtest.Temp.dir()
    bad = os.path.join(d, "bad.tmcap")
    with open(bad, "w") as f:
        f.write("not a capture\n")
    out = os.path.join(d, "bad.json")
    p = subprocess.run([EXPORT, "--format", "chrome", "-o", out, bad], capture_output=True, text=True)
    check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "bad.tmcap" in p.stderr,
          f"not a capture: exit 1 and one line, got {p.returncode} {p.stderr!r}")
    check(not os.path.exists(out), "nothing left behind for an unreadable capture")
    # A forged index whose times span centuries, read a window at a time:
    # its windows' list once outgrew the memory (std::bad_alloc, abort). The
    # readers now refuse such an index and scan the records, keeping only
    # times that agree: what is whole is exported, and the damage is said.
    far = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz",
                       "regressions", "index-times-far.tmcap")
    out = os.path.join(d, "far.pb.gz")
    p = subprocess.run([EXPORT, "--format", "pprof", "--stream", "-o", out, far],
                       capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and lines and "index-times-far.tmcap" in lines[0]
          and "wrote" not in lines[0] and os.path.exists(out),
          f"times spanning centuries: the whole records exported, the damage said first, "
          f"exit 2; got {p.returncode} {p.stderr!r}")
    rec = tmtest.recorded("mutex_loop", LOOP_ARGS)
    taken = os.path.join(d, "taken.json")
    with open(taken, "w") as f:
        f.write("keep me")
    p = subprocess.run([EXPORT, "--format", "chrome", "-o", taken, rec.capture], capture_output=True,
                       text=True)
    check(p.returncode == 1 and "exists" in p.stderr and open(taken).read() == "keep me",
          f"an existing output is refused and kept: {p.stderr!r}")
    # A pipe named by -o (as /dev/null would be) is written into, --force or
    # not: unlinking it first once left root's /dev/null a regular file.
    fifo = os.path.join(d, "sink.fifo")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(len(open(fifo, "rb").read())))
    reader.start()
    p = subprocess.run([EXPORT, "--format", "chrome", "--force", "-o", fifo, rec.capture],
                       capture_output=True, text=True, timeout=60)
    reader.join(60)
    check(p.returncode == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode) and got and got[0] > 1000,
          f"a pipe named by -o --force is written into and kept: exit {p.returncode}, "
          f"{got} bytes read, {p.stderr!r}")
    # An export that fails removes what it created, never a sink it wrote
    # into (main: an unreadable capture exported to /dev/null by root
    # removed the device; the next redirect made a plain file of it).
    garbage = os.path.join(d, "garbage.tmcap")
    with open(garbage, "wb") as g:
        g.write(b"not a capture at all\n" * 64)
    reader = threading.Thread(target=lambda: open(fifo, "rb").read())
    reader.start()
    p = subprocess.run([EXPORT, "--format", "chrome", "-o", fifo, garbage],
                       capture_output=True, text=True, timeout=60)
    reader.join(60)
    check(p.returncode == 1 and os.path.exists(fifo) and stat.S_ISFIFO(os.lstat(fifo).st_mode),
          f"a pipe named by -o is kept when the export fails: exit {p.returncode}, {p.stderr!r}")
    made = os.path.join(d, "failed.json")
    p = subprocess.run([EXPORT, "--format", "chrome", "-o", made, garbage],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and not os.path.exists(made),
          f"a file the failed export made is removed: exit {p.returncode}, {p.stderr!r}")
    if os.geteuid() == 0:  # a pipe another user planted at the name would read the export
        planted = os.path.join(d, "planted.fifo")
        os.mkfifo(planted, 0o666)
        os.chown(planted, 65534, 65534)
        p = subprocess.run([EXPORT, "--format", "chrome", "-o", planted, rec.capture],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 1 and "another user's pipe" in p.stderr,
              f"another user's pipe at -o is refused, not opened: {p.returncode} {p.stderr!r}")
    sock = os.path.join(d, "s.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(sock)
    p = subprocess.run([EXPORT, "--format", "chrome", "--force", "-o", sock, rec.capture],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "not a regular file" in p.stderr
          and stat.S_ISSOCK(os.lstat(sock).st_mode),
          f"a socket at -o --force is refused in one line and kept: {p.returncode} {p.stderr!r}")
    listener.close()
    # Cut in half, plain frames (format 1): a compressed block cut is lost
    # whole, and a run this short may write all its frames in one block.
    plain = tmtest.Recording("mutex_loop", LOOP_ARGS,
                             env=dict(os.environ, THREADMON_COMPRESS="0"))
    cut = os.path.join(d, "cut.tmcap")
    with open(plain.capture, "rb") as f, open(cut, "wb") as g:
        data = f.read()
        g.write(data[:len(data) // 2])
    out = os.path.join(d, "cut.json")
    p = subprocess.run([EXPORT, "--format", "chrome", "-o", out, cut], capture_output=True, text=True)
    check(p.returncode == 2 and "cut.tmcap" in p.stderr, f"a cut capture: exit 2, said: {p.stderr!r}")
    if check(os.path.exists(out), "a cut capture is exported up to its cut"):
        with open(out) as f:
            check(len(json.load(f)["traceEvents"]) > 10, "its export is whole JSON with events")


# --- Chrome JSON ---

def chrome(rec):
    with open(export(rec, "chrome")) as f:
        doc = json.load(f)  # must be valid JSON
    return doc["traceEvents"]


def check_state_sums(rec, per_thread, what):
    """Per thread and state, the export's time against the report's %."""
    for t in rec.report["threads"]:
        life = t["lifetime_s"]
        for key, pct in t["states"].items():
            got = per_thread.get(t["tid"], {}).get(key, 0) / 1e9
            near(got, pct / 100 * life, 0.01 * life + 0.002, f"{what}: {t['name']} ({t['tid']}) {key} s")


def test_chrome_mutex_hold():
    require_export()
    rec = tmtest.recorded("mutex_hold", HOLD_ARGS)
    events = chrome(rec)
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    for t in rec.program_threads():
        check(names.get(t["tid"], "").startswith(t["name"]),
              f"thread {t['tid']} named {names.get(t['tid'])!r}, report {t['name']!r}")
    sums = collections.defaultdict(lambda: collections.defaultdict(float))
    for e in events:
        if e.get("ph") == "X" and e["cat"] != "wait":
            sums[e["tid"]][e["cat"]] += e["dur"] * 1000
    check_state_sums(rec, sums, "chrome")
    waits = [e for e in events if e.get("ph") == "X" and e["cat"] == "wait"]
    lock = rec.objects("mutex")[0]
    total = sum(e["dur"] for e in waits) / 1e6
    near(total, lock["wait_s"], 0.001 * lock["wait_s"] + 1e-5, "chrome: waits' total s")
    check(all("big_lock" in e["args"]["object"] for e in waits), "every wait names big_lock")
    holder = rec.truth["holder_tid"]
    flows = [e for e in events if e.get("ph") == "s" and e["tid"] == holder]
    check(len(flows) >= len(waits) // 2,
          f"{len(flows)} wakeup flows from the holder for {len(waits)} waits")
    # Flow ids count up from 1 in the file's order (the writer counts them
    # up in their text), each ending once.
    starts = [e["id"] for e in events if e.get("ph") == "s"]
    ends = [e["id"] for e in events if e.get("ph") == "f"]
    check(starts == list(range(1, len(starts) + 1)) and sorted(ends) == starts,
          f"flow ids {starts[:12]}... ends {sorted(ends)[:12]}...")
    counters = {e["name"] for e in events if e.get("ph") == "C"}
    check("CPU 0 busy %" in counters, f"per-CPU counters: {sorted(counters)}")


def test_chrome_without_avx2():
    """The writers made for AVX2 and those for any CPU
    (THREADMON_EXPORT_NO_AVX2) write the same bytes: states with and
    without arguments, waits with flows, a thread's prefixes made again."""
    require_export()
    rec = tmtest.recorded("mutex_hold", HOLD_ARGS)
    outs = []
    for i, no_avx2 in enumerate((False, True)):
        env = dict(os.environ)
        env.pop("THREADMON_EXPORT_NO_AVX2", None)
        if no_avx2:
            env["THREADMON_EXPORT_NO_AVX2"] = "1"
        out = os.path.join(tmtest.Temp.dir(), f"{os.path.basename(rec.capture)}.avx2-{i}.json")
        proc = subprocess.run([EXPORT, "--format", "chrome", "-o", out, rec.capture],
                              capture_output=True, text=True, timeout=60, env=env)
        check(proc.returncode == 0, f"threadmon-export exited {proc.returncode}: {proc.stderr}")
        with open(out, "rb") as f:
            outs.append(f.read())
    events = json.loads(outs[0])["traceEvents"]
    check(any(e.get("cat") == "wait" for e in events) and any(e.get("ph") == "f" for e in events),
          "the capture has waits and flows to write")
    check(outs[0] == outs[1], f"{len(outs[0])} bytes with AVX2, {len(outs[1])} without; "
          f"first difference at {next((i for i, (a, b) in enumerate(zip(*outs)) if a != b), None)}")


def test_chrome_windows_join():
    """A capture exported a window at a time (1 s windows) gives the same
    per-thread states and waits as read whole: runs cut by a window's edge
    are joined again."""
    require_export()
    rec = tmtest.recorded("mutex_hold", ["--waiters", "2", "--rounds", "100"])
    sums = []
    for extra in (["--whole"], ["--stream", "--window", "1"]):
        with open(export(rec, "chrome", *extra)) as f:
            events = json.load(f)["traceEvents"]
        per = collections.Counter()
        for e in events:
            if e.get("ph") == "X":
                per[(e["tid"], e["cat"])] += e["dur"]
        sums.append((per, sum(1 for e in events if e.get("ph") == "X" and e["cat"] == "wait")))
    whole, windows = sums
    check(whole[1] == windows[1], f"{windows[1]} waits in 1 s windows, {whole[1]} read whole")
    # A thread blocked across an edge for longer than the warm-up is carried
    # over the asleep head of the next window; what the kernel's view shows
    # inside that head besides sleep (a few ms on a CPU, as the streamed
    # report also reads it) stays: 1% of the thread's time.
    life = collections.Counter()
    for (tid, cat), us in whole[0].items():
        if cat != "wait":
            life[tid] += us
    for key in set(whole[0]) | set(windows[0]):
        near(windows[0][key] / 1e6, whole[0][key] / 1e6, 0.002 + 0.01 * life[key[0]] / 1e6,
             f"windows vs whole: {key} s")


def test_chrome_user_threads():
    """mn_matrix: its user threads (M:N) on the LWPs that ran them, each
    one's time on LWPs as the report has it."""
    require_export()
    rec = tmtest.recorded("mn_matrix", ["--rounds", "10"])
    spans = collections.Counter()
    for e in chrome(rec):
        if e.get("cat") == "user_thread":
            spans[int(re.search(r"user thread (\d+)\)$", e["name"])[1])] += e["dur"] / 1e6
    users = rec.report["user_threads"]
    check(len(spans) == len(users), f"{len(spans)} user threads exported, report {len(users)}")
    for u in users:
        near(spans.get(u["id"], 0), u["on_lwp_s"], 0.01 * u["lifetime_s"] + 0.001,
             f"user thread {u['id']} on LWPs s")


# --- Perfetto ---

_venv = None


def perfetto_protos():
    """perfetto_trace_pb2 from the perfetto wheel, in a venv made once."""
    global _venv
    if _venv is None:
        d = os.path.join(tmtest.Temp.dir(), "venv")
        py = os.path.join(d, "bin", "python")
        cached = os.environ.get("THREADMON_PERFETTO_VENV")
        if cached and os.path.exists(os.path.join(cached, "bin", "python")):
            py = os.path.join(cached, "bin", "python")
        else:
            made = subprocess.run([sys.executable, "-m", "venv", d], capture_output=True, text=True)
            if made.returncode != 0:
                raise tmtest.Skip(f"python3 -m venv failed (python3-venv): {made.stderr.strip()[-200:]}")
            pip = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                  "perfetto", "protobuf"], capture_output=True, text=True,
                                 timeout=300)
            if pip.returncode != 0:
                raise tmtest.Skip(f"pip install perfetto protobuf failed (offline?): "
                                  f"{pip.stderr.strip()[-200:]}")
        _venv = py
    return _venv


DECODE = r"""
import collections, json, sys
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
t = pb.Trace()
t.ParseFromString(open(sys.argv[1], "rb").read())
S = pb.GenericKernelTaskStateEvent
out = {"threads": {}, "states": collections.defaultdict(list), "slices": [], "flows": 0,
       "counters": {}, "counter_values": 0, "process": None}
open_slices = {}
# Interned names and values (what trace_processor does with InternedData):
# the first packet must clear the sequence's state before any is used.
interned = {"event_names": {}, "event_categories": {}, "debug_annotation_names": {},
            "debug_annotation_string_values": {}}
cleared = False
for p in t.packet:
    if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
        cleared = True
        for table in interned.values():
            table.clear()
    if p.HasField("interned_data"):
        assert cleared, "interned data before the sequence's state was cleared"
        for table, names in interned.items():
            for entry in getattr(p.interned_data, table):
                names[entry.iid] = entry.str.decode() if table.endswith("values") else entry.name
    if p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
        assert cleared, "a packet needs interned state that no packet cleared"
    if p.HasField("track_descriptor"):
        d = p.track_descriptor
        if d.HasField("thread"):
            out["threads"][d.thread.tid] = d.thread.thread_name
        elif d.HasField("process"):
            out["process"] = d.process.process_name
        elif d.HasField("counter"):
            out["counters"][d.uuid] = d.name
        else:
            out.setdefault("named", {})[d.uuid] = [d.name, d.parent_uuid]
    elif p.HasField("generic_kernel_task_state_event"):
        e = p.generic_kernel_task_state_event
        out["states"][e.tid].append((p.timestamp, S.TaskStateEnum.Name(e.state), e.cpu))
    elif p.HasField("track_event"):
        e = p.track_event
        if e.type == e.TYPE_SLICE_BEGIN:
            args = {}
            for a in e.debug_annotations:
                name = interned["debug_annotation_names"][a.name_iid] if a.name_iid else a.name
                args[name] = (interned["debug_annotation_string_values"][a.string_value_iid]
                              if a.string_value_iid else a.string_value or a.uint_value)
            name = interned["event_names"][e.name_iid] if e.name_iid else e.name
            cats = [interned["event_categories"][c] for c in e.category_iids] + list(e.categories)
            out.setdefault("categories", collections.Counter())[",".join(cats)] += 1
            open_slices[e.track_uuid] = (p.timestamp, name, args)
        elif e.type == e.TYPE_SLICE_END:
            b = open_slices.pop(e.track_uuid)
            out["slices"].append({"tid": e.track_uuid & 0xffffffff, "track": e.track_uuid,
                                  "start": b[0],
                                  "dur": p.timestamp - b[0], "name": b[1], "args": b[2],
                                  "flow_in": len(e.terminating_flow_ids)})
        elif e.type == e.TYPE_INSTANT:
            out["flows"] += len(e.flow_ids)
            out.setdefault("instants", collections.Counter())[
                interned["event_names"][e.name_iid] if e.name_iid else e.name] += 1
        elif e.type == e.TYPE_COUNTER:
            out["counter_values"] += 1
print(json.dumps(out))
"""


def decode_perfetto(path):
    proc = subprocess.run([perfetto_protos(), "-c", DECODE, path], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise tmtest.Failed(f"perfetto's protos refused the trace: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


# Linux task states for the report's states.
LINUX = {"on_cpu": "TASK_STATE_RUNNING", "runnable": "TASK_STATE_RUNNABLE",
         "stolen": "TASK_STATE_RUNNABLE", "io_wait": "TASK_STATE_UNINTERRUPTIBLE_SLEEP",
         "stopped": "TASK_STATE_STOPPED"}


def test_perfetto_mutex_hold():
    require_export()
    rec = tmtest.recorded("mutex_hold", HOLD_ARGS)
    got = decode_perfetto(export(rec, "perfetto"))
    check(got["process"] == "mutex_hold", f"process named {got['process']!r}")
    for t in rec.program_threads():
        check(got["threads"].get(str(t["tid"]), "").startswith(t["name"]),
              f"thread {t['tid']} named {got['threads'].get(str(t['tid']))!r}, report {t['name']!r}")
    for t in rec.report["threads"]:
        if t["lifetime_s"] < 0.05:
            continue
        seq = got["states"].get(str(t["tid"]), [])
        if not t["main"] and not t["probe"]:  # joined before the end
            check(seq and seq[-1][1] == "TASK_STATE_DEAD",
                  f"thread {t['tid']}'s states end with its death: {seq[-1:]}")
        run = [s for a, b in zip(seq, seq[1:]) for s in [(a[1], b[0] - a[0])]]
        check(all(not (a[1] == b[1] == "TASK_STATE_RUNNING") for a, b in zip(seq, seq[1:])),
              f"thread {t['tid']}: never RUNNING twice in a row")
        sums = collections.Counter()
        for state, dur in run:
            sums[state] += dur
        want = collections.Counter()
        for key, pct in t["states"].items():
            want[LINUX.get(key, "TASK_STATE_INTERRUPTIBLE_SLEEP")] += pct / 100 * t["lifetime_s"]
        for state, s in want.items():
            near(sums[state] / 1e9, s, 0.01 * t["lifetime_s"] + 0.002,
                 f"perfetto: {t['name']} ({t['tid']}) {state} s")
    lock = rec.objects("mutex")[0]
    waits = [s for s in got["slices"] if s["args"].get("object", "").endswith("big_lock")]
    near(sum(s["dur"] for s in waits) / 1e9, lock["wait_s"], 0.001 * lock["wait_s"] + 1e-5,
         "perfetto: big_lock's waits as slices, s")
    # big_lock as a track of its own, a child track per waiter.
    named = got.get("named", {})
    lock_track = [int(u) for u, (n, _) in named.items() if n.endswith("big_lock")]
    on_lock = [s for s in got["slices"] if str(s["track"]) in named
               and named[str(s["track"])][1] in lock_track]
    check(len(lock_track) == 1, f"one track named after big_lock: {named}")
    near(sum(s["dur"] for s in on_lock) / 1e9, lock["wait_s"], 0.001 * lock["wait_s"] + 1e-5,
         "perfetto: waits on big_lock's own tracks, s")
    check(all("timed_lock" in s["args"].get("call_site", "") for s in waits),
          "waits annotated with their call site")
    # Names, categories and annotations interned: each resolves to its text.
    check(all(s["name"].startswith("Blocked") for s in waits),
          f"waits named by their state: {sorted({s['name'] for s in waits})}")
    check(got["categories"]["wait"] >= len(waits) and got["categories"]["object"] >= len(on_lock),
          f"slices' categories {got['categories']}")
    check(got["instants"]["release"] == got["flows"], f"release instants {got['instants']}")
    check(got["flows"] >= len(waits) // 2 and sum(s["flow_in"] for s in waits) == got["flows"],
          f"{got['flows']} wakeup flows for {len(waits)} waits")
    check(any(n == "CPU 0 busy" for n in got["counters"].values()) and got["counter_values"] > 10,
          f"counter tracks {sorted(got['counters'].values())}, {got['counter_values']} values")


tmtest.main(globals())
