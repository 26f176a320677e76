// tm-bench-display --long-run MINUTES: a live page fed MINUTES of N busy
// threads (display/tests/busy_capture.h) as fast as the model applies them, printing every
// stream minute the process's RSS and peak RSS (VmHWM), the model's own
// count of its bytes and the CPU time so far: how memory grows over an hour
// of a live session. Each second of stream waits until the model applied
// the one before (no backlog measured as the model's memory).
#ifndef THREADMON_BENCH_DISPLAY_LONGRUN_H
#define THREADMON_BENCH_DISPLAY_LONGRUN_H

namespace longrun {

// Returns the process exit status.
int run(int threads, double minutes);

}  // namespace longrun

#endif
