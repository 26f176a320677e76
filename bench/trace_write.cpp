// tm-bench-tracewrite: what the trace writers (Perfetto, Chrome JSON) cost
// alone, without the models that feed them. The capture is walked once as
// the export walks it, every TimelineSink callback recorded; then the
// callbacks are replayed into the format's sink, writing to standard output
// (send it to /dev/null), PASSES times.
//
//   tm-bench-tracewrite CAPTURE --format perfetto|chrome [--passes N (1)] > /dev/null
//
// Prints one JSON line on stderr: the callbacks, the bytes written per pass
// and the best pass's CPU. Instructions per pass: run it under
// `valgrind --tool=cachegrind --cache-sim=no` with 1 and 2 passes and take
// the difference. One pass's output is the export's, byte for byte.
#include <QCoreApplication>
#include <QFileInfo>
#include <cstdio>
#include <ctime>
#include <vector>

#include "chromeexport.h"
#include "exportoutput.h"
#include "exportwalk.h"
#include "perfettoexport.h"

using namespace tmon;

namespace {

// The process's CPU: the walk's threads are done when the replay runs.
double cpuSeconds() {
  return double(std::clock()) / CLOCKS_PER_SEC;
}

// Every callback, in order: its kind and its index in its kind's vector.
struct Recording {
  enum Kind { kThread, kState, kWait, kCpu, kCounter, kUserSpan, kThreadEnd };
  int64_t origin = 0;
  uint32_t pid = 0;
  SessionInfo info;
  int cpuCount = 0;
  std::vector<std::pair<Kind, uint32_t>> calls;
  std::vector<ExportThread> threads;
  std::vector<std::pair<uint32_t, StateInterval>> states;
  std::vector<ExportWait> waits;  // their objects are the recorder's
  struct Value {
    int which;
    int64_t t;
    double v;
  };
  std::vector<Value> values;  // CPUs' and counters'
  struct Span {
    uint32_t tid;
    QString name;
    int64_t start, end;
  };
  std::vector<Span> spans;
  std::vector<std::pair<uint32_t, int64_t>> ends;
};

class Recorder : public TimelineSink {
 public:
  explicit Recorder(Recording *r) : r_(r) {}
  bool finish(QString *) override { return true; }

 protected:
  void process(const SessionInfo &info, int cpuCount) override {
    r_->origin = origin();
    r_->pid = pid();
    r_->info = info;
    r_->cpuCount = cpuCount;
  }
  void thread(const ExportThread &t) override { add(Recording::kThread, r_->threads, t); }
  void state(uint32_t tid, const StateInterval &iv) override {
    add(Recording::kState, r_->states, {tid, iv});
  }
  void wait(const ExportWait &w) override { add(Recording::kWait, r_->waits, w); }
  void cpuBusy(int cpu, int64_t t, double percent) override {
    add(Recording::kCpu, r_->values, {cpu, t, percent});
  }
  void counter(int which, int64_t t, double value) override {
    add(Recording::kCounter, r_->values, {which, t, value});
  }
  void userSpan(uint32_t tid, const QString &name, int64_t start, int64_t end) override {
    add(Recording::kUserSpan, r_->spans, {tid, name, start, end});
  }
  void threadEnd(uint32_t tid, int64_t t) override {
    add(Recording::kThreadEnd, r_->ends, {tid, t});
  }
  void end() override {}

 private:
  template <typename T>
  void add(Recording::Kind k, std::vector<T> &v, T x) {
    r_->calls.emplace_back(k, uint32_t(v.size()));
    v.push_back(std::move(x));
  }
  Recording *r_;
};

// A format's sink, its callbacks called from the recording.
template <typename Sink>
class Replay : public Sink {
 public:
  using Sink::Sink;
  void run(const Recording &r) {
    this->startAt(r.origin, r.pid);
    this->process(r.info, r.cpuCount);
    for (const auto &[kind, i] : r.calls) {
      switch (kind) {
        case Recording::kThread:
          this->thread(r.threads[i]);
          break;
        case Recording::kState:
          this->state(r.states[i].first, r.states[i].second);
          break;
        case Recording::kWait:
          this->wait(r.waits[i]);
          break;
        case Recording::kCpu:
          this->cpuBusy(r.values[i].which, r.values[i].t, r.values[i].v);
          break;
        case Recording::kCounter:
          this->counter(r.values[i].which, r.values[i].t, r.values[i].v);
          break;
        case Recording::kUserSpan:
          this->userSpan(r.spans[i].tid, r.spans[i].name, r.spans[i].start, r.spans[i].end);
          break;
        case Recording::kThreadEnd:
          this->threadEnd(r.ends[i].first, r.ends[i].second);
          break;
      }
    }
    this->end();
  }
};

// Not inlined: callgrind --toggle-collect='*replayOnce*' counts the replay alone.
template <typename Sink>
[[gnu::noinline]] bool replayOnce(const Recording &r, double *cpu, uint64_t *bytes) {
  ExportOutput out;
  if (!out.open(QStringLiteral("-"), false, false)) return false;
  Replay<Sink> sink(&out);
  const double t0 = cpuSeconds();
  sink.run(r);
  QString error;
  const bool ok = sink.finish(&error);
  *cpu = cpuSeconds() - t0;
  *bytes = out.bytesIn();
  if (!ok) std::fprintf(stderr, "tm-bench-tracewrite: %s\n", qPrintable(error));
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  const QStringList args = app.arguments().mid(1);
  QString file, format;
  int passes = 1;
  for (int i = 0; i < args.size(); i++) {
    if (args[i] == "--format" && i + 1 < args.size())
      format = args[++i];
    else if (args[i] == "--passes" && i + 1 < args.size())
      passes = args[++i].toInt();
    else
      file = args[i];
  }
  if (file.isEmpty() || (format != "perfetto" && format != "chrome") || passes < 1) {
    std::fprintf(stderr,
                 "usage: tm-bench-tracewrite CAPTURE --format perfetto|chrome [--passes N] "
                 "> /dev/null\n");
    return 2;
  }
  Recording rec;
  Recorder recorder(&rec);
  QString error;
  const CaptureLoadResult res = exportCapture(file, &recorder, ExportOptions{}, &error);
  if (res.status == CaptureLoadResult::Unreadable) {
    std::fprintf(stderr, "tm-bench-tracewrite: %s: %s\n", qPrintable(file),
                 qPrintable(res.message));
    return 1;
  }
  double best = 1e9;
  uint64_t bytes = 0;
  for (int p = 0; p < passes; p++) {
    double cpu = 0;
    const bool ok = format == "perfetto" ? replayOnce<PerfettoSink>(rec, &cpu, &bytes)
                                         : replayOnce<ChromeSink>(rec, &cpu, &bytes);
    if (!ok) return 1;
    best = std::min(best, cpu);
  }
  const double mb = double(QFileInfo(file).size()) / 1e6;
  std::fprintf(stderr,
               "{\"format\": \"%s\", \"calls\": %zu, \"states\": %zu, \"waits\": %zu, "
               "\"bytes\": %llu, \"passes\": %d, \"best_cpu_s\": %.4f, "
               "\"capture_mb_per_cpu_s\": %.1f}\n",
               qPrintable(format), rec.calls.size(), rec.states.size(), rec.waits.size(),
               (unsigned long long)bytes, passes, best, mb / best);
  return 0;
}
