// tm-bench-livefold CAPTURE [RUNS] [--sums]: a live session's fold without
// the display around it. The capture's frames are unpacked first; then,
// timed on this thread's CPU clock, each is applied to a fresh SessionModel
// as a live connection applies them, deriving every 5 ticks (50 ms of stream
// at 100 ticks/s, SessionModel::settleEvery). The GUI thread's share of
// --live-paced, less the views and the wait for a CPU, so it moves far less
// between runs on a shared machine. --sums prints a hash of every thread's
// intervals and state totals every 50 ticks and at the end: a change to the
// fold must leave them as they were (docs/benchmarks.md, "Live display at
// the stream's pace").
#include <QCoreApplication>
#include <QFile>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "framedecoder.h"
#include "sessionmodel.h"
#include "threadmon.pb-c.h"

namespace {

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

uint64_t sums(tmon::SessionModel &m) {
  m.settleNow();
  uint64_t h = 1469598103934665603ull;
  const tmon::TimeRange all{m.startNs(), m.latestNs()};
  for (int i = 0; i < m.threadCount(); i++) {
    for (const tmon::StateInterval &iv : m.intervals(i, all)) {
      const int64_t v[] = {iv.start, iv.end, int64_t(iv.state), int64_t(iv.object), iv.cpu};
      h = fnv(h, v, sizeof(v));
    }
    const tmon::StateTimes s = m.threadStates(i, all);
    h = fnv(h, s.ns.data(), sizeof(s.ns[0]) * s.ns.size());
  }
  return h;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: tm-bench-livefold CAPTURE [RUNS] [--sums]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const bool withSums = argc > 3 && std::strcmp(argv[3], "--sums") == 0;
  QFile f(QString::fromLocal8Bit(argv[1]));
  if (!f.open(QIODevice::ReadOnly)) {
    std::fprintf(stderr, "tm-bench-livefold: cannot open %s\n", argv[1]);
    return 1;
  }
  const QByteArray bytes = f.readAll();
  std::vector<QByteArray> payloads;
  tmon::SessionModel scratch;
  tmon::FrameDecoder decoder(&scratch);
  decoder.setFrameHook([&](const uint8_t *p, uint32_t n) {
    payloads.emplace_back(reinterpret_cast<const char *>(p), qsizetype(n));
  });
  decoder.feed(bytes.constData(), size_t(bytes.size()));
  for (int run = 0; run < runs; run++) {
    std::vector<Threadmon__Frame *> frames;
    for (const QByteArray &p : payloads)
      frames.push_back(threadmon__frame__unpack(nullptr, size_t(p.size()),
                                                reinterpret_cast<const uint8_t *>(p.constData())));
    tmon::SessionModel m;
    const double t0 = threadCpuMs();
    double settleMs = 0, sumsMs = 0;
    int ticks = 0;
    for (Threadmon__Frame *fr : frames) {
      if (!fr) continue;
      m.apply(*fr);
      if (fr->body_case != THREADMON__FRAME__BODY_TICK) continue;
      ++ticks;
      if (withSums && ticks % 50 == 0) {
        const double s = threadCpuMs();
        std::printf("sums at tick %d: %016llx\n", ticks, static_cast<unsigned long long>(sums(m)));
        sumsMs += threadCpuMs() - s;
      }
      if (ticks % 5 == 0) {
        const double s = threadCpuMs();
        m.settleNow();
        settleMs += threadCpuMs() - s;
      }
    }
    const double s = threadCpuMs();
    m.settleNow();
    settleMs += threadCpuMs() - s;
    const double foldMs = threadCpuMs() - t0 - sumsMs;
    if (withSums)
      std::printf("sums at the end: %016llx\n", static_cast<unsigned long long>(sums(m)));
    std::printf("fold %.0f ms of CPU (deriving %.0f), %zu frames, %d ticks\n", foldMs, settleMs,
                frames.size(), ticks);
    for (Threadmon__Frame *fr : frames)
      if (fr) threadmon__frame__free_unpacked(fr, nullptr);
  }
  return 0;
}
