"""threadmon-report on a capture over 64 MiB whose index or block headers
were forged: bounded memory and time, exit status 2, one line saying what
was wrong, and the numbers of the intact capture where its data is intact.

Writes 2.3 minutes of 100 busy threads (tm-bench-longcap, about 73 MB, 6 s
of CPU), forges it each way forge_capture.py knows (index shuffled, empty,
past the end, times backwards or centuries on; a block's length word, raw
size or frame count too large, its times far or backwards, with good
checksums), and reports each as a user would (no option; some --stream too),
measuring peak RSS and CPU time (wait4). Before this test, an empty index
or a forged time made the report read 73 MB whole (770 MB) with exit 0 and
no word, or refuse --stream; a lying length word lost frames silently.

    test_report_forged.py LONGCAP REPORT FORGE [--all | KIND...]

Without KINDs it runs one forgery of each way main's reader failed
(SUITE: each run costs 6 s of CPU, and the suite has 30 minutes on two
cores); --all runs every forgery
(docs/benchmarks.md, "Forged long captures", has the figures).
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading

LONGCAP, REPORT, FORGE = sys.argv[1:4]
ONLY = sys.argv[4:]
MIB = 1 << 20
RSS_CEILING = 400 * MIB
CPU_CEILING_S = 40  # the intact capture takes 5-6 s
WALL_LIMIT_S = 300  # a hang, on a machine shared by many builds

# kind: (the line's words, whether the data is intact: same numbers)
FORGERIES = {
    "index-shuffled": ("its index is damaged (record 0 at byte", True),
    "index-empty": ("its index is damaged (it lists no record from byte 16 to byte", True),
    "index-past-end": ("is outside the file's records): read by a scan", True),
    "index-times-backwards": ("begins before the one before it): read by a scan", True),
    "index-times-far": ("is more than 78 hours after the first): read by a scan", True),
    "index-times-late": ("ends more than 24 hours after the one before it): read by a scan",
                         True),
    "block-len-huge": ("a record's length word runs past byte", False),
    "block-raw-huge": ("block does not decompress", False),
    "block-frames-huge": ("cut short (no index at its end)", True),
    "block-times-far": ("1 block headers' times out of order or far", True),
    "block-times-late": ("1 block headers' times out of order or far", True),
    "block-times-unknown": ("fall in one window (their times are too few to cut windows by)",
                            False),
    "block-times-backwards": ("1 block headers' times out of order or far", True),
}
# One forgery of each way a581326's reader failed (exit 0 with no word,
# 750 MiB, refused by --stream, or waits lost): an index refused, a time
# past the others, a lying length word, a header's times backwards, all
# times unknown. The other forgeries gave one line already then.
SUITE = ("index-empty", "index-times-late", "block-len-huge", "block-times-backwards",
         "block-times-unknown")
STREAM_TOO = ("index-empty", "index-times-far", "block-times-far", "block-len-huge")
NUMBERS = ("threads", "sync_objects", "wait_matrix", "cpus", "user_threads")


def limit_memory():
    # A reader gone wrong must not take the machine: 6 GiB of address space.
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


def report(args, out_path):
    """exit status, stderr lines, peak RSS bytes, CPU seconds."""
    with open(out_path, "wb") as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([REPORT, "--json"] + args, stdout=out, stderr=err,
                             preexec_fn=limit_memory)
        hang = threading.Timer(WALL_LIMIT_S, p.kill)
        hang.start()
        _, status, usage = os.wait4(p.pid, 0)
        hang.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().decode(errors="replace").splitlines()
    return p.returncode, lines, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def numbers(path):
    with open(path) as f:
        j = json.load(f)
    return {k: j.get(k) for k in NUMBERS}


def main():
    failed = []
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good.tmcap")
        subprocess.run([LONGCAP, "2.3", "100", good], check=True, stdout=subprocess.DEVNULL)
        size = os.path.getsize(good)
        if size <= 64 * MIB:
            sys.exit(f"FAIL the capture is {size} bytes, not over 64 MiB")
        code, lines, rss, cpu = report([good], os.path.join(d, "good.json"))
        print(f"intact: {size / 1e6:.0f} MB, exit {code}, {rss / MIB:.0f} MiB, {cpu:.1f} s CPU")
        if code != 0 or lines:
            sys.exit(f"FAIL the intact capture: exit {code}, {lines}")
        want = numbers(os.path.join(d, "good.json"))
        for kind, (words, intact) in FORGERIES.items():
            if kind not in (ONLY or SUITE) and ONLY != ["--all"]:
                continue
            forged = os.path.join(d, kind + ".tmcap")
            subprocess.run([sys.executable, FORGE, good, forged, kind], check=True)
            # --stream where it once read differently from the default (it
            # refused them); elsewhere both read the same way (a capture over
            # 64 MiB is always streamed), and each run costs 6 s of CPU.
            for mode in ([], ["--stream"]) if kind in STREAM_TOO else ([],):
                out = os.path.join(d, "out.json")
                code, lines, rss, cpu = report(mode + [forged], out)
                name = f"{kind} {' '.join(mode) or '(default)'}"
                print(f"{name}: exit {code}, {rss / MIB:.0f} MiB, {cpu:.1f} s CPU; {lines}")
                why = []
                if code != 2:
                    why.append(f"exit {code}, not 2")
                if len(lines) != 1 or words not in lines[0]:
                    why.append(f"not one line with {words!r}")
                if rss > RSS_CEILING:
                    why.append(f"{rss / MIB:.0f} MiB > {RSS_CEILING / MIB:.0f}")
                if cpu > CPU_CEILING_S:
                    why.append(f"{cpu:.0f} s of CPU > {CPU_CEILING_S}")
                if code == 2 and intact and numbers(out) != want:
                    why.append("numbers differ from the intact capture's")
                if why:
                    failed.append(f"{name}: {'; '.join(why)}")
            os.unlink(forged)
    for f in failed:
        print("FAIL", f)
    sys.exit(1 if failed else 0)


main()
