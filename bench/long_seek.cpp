// tm-bench-longseek: opening a long capture and seeking in it through its
// index, as the display's replay does for captures too long to hold
// (docs/benchmarks.md, "Long captures"). Times, in wall and this thread's
// CPU: CaptureWindow::open (the index and the descriptions), then for each
// of SEEKS positions spread over the run, loading the WINDOW seconds before
// it into a fresh model (with the warm-up) and what a page asks first: every
// thread's states over the window and its intervals; the CPU of the load
// and the settle apart, and the process's CPU (the read-ahead thread's
// too). One JSON line each.
// With --summary it takes the whole run's summary instead (RunSummary:
// states per thread and 1 s bucket) from the capture's Summary records, or
// builds it from the detail (a 30 s chunk at a time) when it has none or
// with --build, then asks what a whole-run timeline draws (every thread's
// states in each of 1,000 columns, and over the run), and times that.
// Peak RSS: run it under /usr/bin/time -v.
//
//   tm-bench-longseek CAPTURE [WINDOW_S (1)] [SEEKS (10)]
//   tm-bench-longseek CAPTURE --summary [--build]
#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "capturewindow.h"
#include "runsummary.h"
#include "sessionmodel.h"

namespace {

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: tm-bench-longseek CAPTURE [WINDOW_S] [SEEKS]\n");
    return 1;
  }
  const bool summary = argc > 2 && QByteArray(argv[2]) == "--summary";
  const double windowS = argc > 2 && !summary ? std::atof(argv[2]) : 1.0;
  const int seeks = argc > 3 ? std::atoi(argv[3]) : 10;
  QElapsedTimer wall;
  wall.start();
  double cpu = cpuSeconds();
  tmon::CaptureWindow cw;
  if (!cw.open(QString::fromLocal8Bit(argv[1]))) {
    std::fprintf(stderr, "tm-bench-longseek: %s\n", qPrintable(cw.error()));
    return 1;
  }
  std::printf("{\"open\":{\"wall_ms\":%lld,\"cpu_ms\":%.1f,\"records\":%zu,\"from_tail\":%s,"
              "\"description_bytes\":%zu,\"span_s\":%.1f}}\n",
              static_cast<long long>(wall.elapsed()), (cpuSeconds() - cpu) * 1e3, cw.records(),
              cw.indexFromTail() ? "true" : "false", cw.descriptionBytes(),
              double(cw.lastNs() - cw.firstNs()) / 1e9);
  if (summary) {
    wall.restart();
    cpu = cpuSeconds();
    tmon::RunSummary sum;
    const bool build = argc > 3 && QByteArray(argv[3]) == "--build";
    const bool read = !build && sum.read(cw);
    if (!read) sum.build(cw);
    const double readMs = (cpuSeconds() - cpu) * 1e3;
    // What the whole-run timeline draws: a column per 1/1000 of the run.
    constexpr int kColumns = 1000;
    int64_t drawn = 0;
    const int64_t span = sum.endNs() - sum.startNs();
    for (uint32_t tid : sum.tids()) {
      for (int c = 0; c < kColumns; c++) {
        const tmon::TimeRange r{sum.startNs() + span * c / kColumns,
                                sum.startNs() + span * (c + 1) / kColumns};
        drawn += sum.states(tid, r).lifetimeNs;
      }
      drawn -= sum.states(tid, tmon::TimeRange{sum.startNs(), sum.endNs()}).lifetimeNs;
    }
    std::printf("{\"summary\":{\"from\":\"%s\",\"wall_ms\":%lld,\"cpu_ms\":%.1f,"
                "\"read_cpu_ms\":%.1f,\"threads\":%zu,\"buckets\":%zu,\"bytes\":%zu,"
                "\"columns_minus_totals_ns\":%lld}}\n",
                read ? "records" : "detail", static_cast<long long>(wall.elapsed()),
                (cpuSeconds() - cpu) * 1e3, readMs, sum.tids().size(), sum.buckets(), sum.bytes(),
                static_cast<long long>(drawn));
    return 0;
  }
  const int64_t width = int64_t(windowS * 1e9);
  for (int k = 0; k < seeks; k++) {
    // Spread over the run, the last at its end.
    const int64_t at = cw.firstNs() + width +
                       (cw.lastNs() - cw.firstNs() - width) * (k + 1) / seeks;
    wall.restart();
    cpu = cpuSeconds();
    const double allCpu = processCpuSeconds();
    tmon::SessionModel model;
    const tmon::CaptureLoadResult r = cw.load(at - width, at, &model);
    const double loadMs = (cpuSeconds() - cpu) * 1e3;
    model.settleNow(2);  // as the display's seek does
    const double settleMs = (cpuSeconds() - cpu) * 1e3 - loadMs;
    const tmon::TimeRange window{at - width, at};
    size_t intervals = 0;
    for (int i = 0; i < model.threadCount(); i++) {
      model.threadStates(i, window);
      intervals += model.intervals(i, window).size();
    }
    std::printf("{\"seek_s\":%.1f,\"wall_ms\":%lld,\"cpu_ms\":%.1f,\"load_cpu_ms\":%.1f,"
                "\"settle_cpu_ms\":%.1f,\"all_cpu_ms\":%.1f,\"frames\":%llu,"
                "\"threads\":%d,\"intervals\":%zu,\"model_bytes\":%zu,\"status\":%d}\n",
                double(at - cw.firstNs()) / 1e9, static_cast<long long>(wall.elapsed()),
                (cpuSeconds() - cpu) * 1e3, loadMs, settleMs,
                (processCpuSeconds() - allCpu) * 1e3, static_cast<unsigned long long>(r.frames),
                model.threadCount(), intervals, model.memoryBytes(), int(r.status));
    std::fflush(stdout);
  }
  return 0;
}
