#!/usr/bin/env python3
"""A wait crossing window edges, exported a window at a time, is the wait the
whole read gives: its start, its end and who released it.

deadlock.c's two threads wait 2.6 s for each other's lock: with 1 s windows
each wait crosses two edges, one of them more than the windows' 1 s warm-up
after it began (the window's model never sees that wait begin). With
--segment 1 each window is a model of its own (an edge between segments);
with the default 10 s segment the 1 s windows are read into one model, and
every event (states, counters, waits, flows) is the whole read's.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "tests", "e2e"))
import tmtest  # noqa: E402
from tmtest import check  # noqa: E402

EXPORT = os.path.join(tmtest.BUILD, "display", "export", "threadmon-export")


def require_export():
    tmtest.require_report()
    if not os.path.exists(EXPORT):
        raise tmtest.Skip(f"{EXPORT} not built")


def chrome_lines(capture, *mode, waits_only=True):
    """The export's wait and wake-up events (every event: waits_only=False),
    sorted (one event a line)."""
    out = os.path.join(tmtest.Temp.dir(), f"edges{len(mode)}{'-'.join(mode)}.json")
    proc = subprocess.run([EXPORT, "--format", "chrome", "--force", "-o", out, *mode, capture],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise tmtest.Failed(f"threadmon-export {' '.join(mode)} exited {proc.returncode}: "
                            f"{proc.stderr.strip()}")
    with open(out, encoding="utf-8") as f:
        return sorted(l.rstrip(",\n") for l in f
                      if not waits_only or '"cat":"wait"' in l or '"cat":"wakeup"' in l)


def differences(whole, streamed):
    only_whole = [l for l in whole if l not in set(streamed)]
    only_streamed = [l for l in streamed if l not in set(whole)]
    return only_whole, only_streamed


def test_waits_across_window_edges():
    require_export()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])
    whole = chrome_lines(rec.capture, "--whole")
    streamed = chrome_lines(rec.capture, "--window", "1", "--segment", "1")
    long_waits = [l for l in whole if '"ph":"X"' in l and '!lock_' in l and
                  float(l.split('"dur":')[1].split(",")[0]) > 2.0e6]
    check(len(long_waits) == 2, f"the whole read's waits over 2 s: {long_waits}")
    only_whole, only_streamed = differences(whole, streamed)
    check(not only_whole and not only_streamed,
          "1 s windows and the whole read give other waits:\n  whole: " +
          "\n  whole: ".join(only_whole[:6]) + "\n  windows: " +
          "\n  windows: ".join(only_streamed[:6]))


def test_windows_of_one_segment_are_the_whole_read():
    # A window read alone (main before segments) split the waiting main
    # thread's join at the last edge, and showed its worker's CPU time as
    # stolen after each edge (its samples' baseline in the window before):
    # 14 of the whole read's events differed, 31 of the windows'.
    require_export()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])
    whole = chrome_lines(rec.capture, "--whole", waits_only=False)
    streamed = chrome_lines(rec.capture, "--window", "1", waits_only=False)
    check(len(whole) > 50, f"the whole read gave {len(whole)} events")
    only_whole, only_streamed = differences(whole, streamed)
    check(not only_whole and not only_streamed,
          f"1 s windows of one segment differ from the whole read ({len(only_whole)} and "
          f"{len(only_streamed)} lines):\n  whole: " + "\n  whole: ".join(only_whole[:6]) +
          "\n  windows: " + "\n  windows: ".join(only_streamed[:6]))


def test_join_across_segment_edges():
    # deadlock.c's main thread joins its two workers for the whole run: a
    # segment that began after the join showed its kernel view (asleep, on a
    # CPU) until the join ended, and the join was cut at the last edge.
    require_export()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])
    whole = [l for l in chrome_lines(rec.capture, "--whole", waits_only=False)
             if '"cat":"blocked_join"' in l]
    streamed = [l for l in chrome_lines(rec.capture, "--window", "1", "--segment", "1",
                                        waits_only=False) if '"cat":"blocked_join"' in l]
    check(whole and max(float(l.split('"dur":')[1].split(",")[0].rstrip("}")) for l in whole) > 2.0e6,
          f"the whole read's joins: {whole}")
    check(whole == streamed, "1 s segments and the whole read give other joins:\n  whole: " +
          "\n  whole: ".join(whole) + "\n  windows: " + "\n  windows: ".join(streamed))


def test_segments_of_one_window_are_the_whole_read():
    # Each 1 s window a segment of its own: a segment is read three ticks
    # past its end, as the streamed report reads (Sequence::readPast), so
    # that the probe's own switch records, which come with the tick after,
    # are in its model. Read one record past, the probe's thread read 8.5 of
    # 95 us on a CPU at the 2 s edge's last ticks (20 events differed).
    require_export()
    rec = tmtest.recorded("deadlock", ["--deadlock-ms", "2600"])
    whole = chrome_lines(rec.capture, "--whole", waits_only=False)
    streamed = chrome_lines(rec.capture, "--window", "1", "--segment", "1", waits_only=False)
    check(len(whole) > 50, f"the whole read gave {len(whole)} events")
    only_whole, only_streamed = differences(whole, streamed)
    check(not only_whole and not only_streamed,
          f"1 s segments differ from the whole read ({len(only_whole)} and "
          f"{len(only_streamed)} lines):\n  whole: " + "\n  whole: ".join(only_whole[:6]) +
          "\n  windows: " + "\n  windows: ".join(only_streamed[:6]))


if __name__ == "__main__":
    tmtest.main(globals())
