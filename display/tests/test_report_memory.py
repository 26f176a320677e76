"""threadmon-report's memory does not grow with the capture's length.

Writes 0.5 and 2.5 minutes of 20 busy threads (tm-bench-longcap), reports
each streamed (--stream, 5 s windows) and the longer one read whole, and
compares the peak RSS of the report processes (wait4): streamed, five times
the capture may cost at most 1.4 times the memory; read whole, it costs
more than twice (which shows the measurement sees growth at all). The
longer one reported as a user would (no option: it is far under 64 MiB on
disk, but longer than a window) must cost less than half its whole read.
"""

import os
import subprocess
import sys
import tempfile

LONGCAP, REPORT = sys.argv[1], sys.argv[2]


def peak_rss(args):
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen([REPORT, "--json"] + args, stdout=null)
        _, status, usage = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"FAIL threadmon-report {' '.join(args)}: exit status {code}")
    return usage.ru_maxrss * 1024


def main():
    with tempfile.TemporaryDirectory() as d:
        short, long_ = os.path.join(d, "short.tmcap"), os.path.join(d, "long.tmcap")
        for minutes, path in ((0.5, short), (2.5, long_)):
            subprocess.run([LONGCAP, str(minutes), "20", path], check=True,
                           stdout=subprocess.DEVNULL)
        s_short = peak_rss(["--window", "5", short])
        s_long = peak_rss(["--window", "5", long_])
        whole_short = peak_rss(["--whole", short])
        whole_long = peak_rss(["--whole", long_])
        default_long = peak_rss([long_])
        long_bytes = os.path.getsize(long_)
    mb = 1e6
    print(f"streamed: {s_short / mb:.0f} MB for 0.5 min, {s_long / mb:.0f} MB for 2.5 min; "
          f"whole: {whole_short / mb:.0f} MB, {whole_long / mb:.0f} MB; "
          f"2.5 min ({long_bytes / mb:.0f} MB on disk) by default: {default_long / mb:.0f} MB")
    failed = False
    if default_long > 0.5 * whole_long:
        print("FAIL the report read a capture longer than a window whole by default")
        failed = True
    if s_long > 1.4 * s_short:
        print("FAIL streamed report grew with the capture's length")
        failed = True
    if whole_long < 2 * whole_short:
        print("FAIL a whole read did not grow: the measurement shows nothing")
        failed = True
    sys.exit(1 if failed else 0)


main()
