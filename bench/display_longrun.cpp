#include "display_longrun.h"

#include <sys/resource.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <cstdio>
#include <memory>

#include "busy_capture.h"
#include "detailspool.h"
#include "framedecoder.h"
#include "guiblock.h"
#include "livesession.h"
#include "sessionmodel.h"
#include "sessionview.h"

namespace longrun {

namespace {

double rssMiB() {
  QFile f(QStringLiteral("/proc/self/statm"));
  if (!f.open(QIODevice::ReadOnly)) return 0;
  const QList<QByteArray> v = f.readAll().split(' ');
  return v.size() > 1 ? v[1].toDouble() * 4096 / 1048576 : 0;
}

// The most the process held at once (VmHWM), measured by the kernel.
double peakRssMiB() {
  QFile f(QStringLiteral("/proc/self/status"));
  if (!f.open(QIODevice::ReadOnly)) return 0;
  for (const QByteArray &line : f.readAll().split('\n'))
    if (line.startsWith("VmHWM:"))
      return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024;
  return 0;
}

double cpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int run(int threads, double minutes) {
  auto *model = new tmon::SessionModel;
  std::unique_ptr<tmui::SessionView> page(
      new tmui::SessionView(model, tmui::SessionView::Source::Live));
  scale::showPage(page.get());
  tmon::FrameDecoder decoder(model);
  // As a live session: the frames spooled to a capture, the model holding
  // LiveSession::kDetailNs of detail.
  DetailSpool spool;
  model->keepDetailFor(LiveSession::kDetailNs);
  decoder.setFrameHook([&spool](const uint8_t *p, uint32_t n) { spool.take(p, n); });
  busycap::Stream stream(threads);
  const QByteArray start = stream.start();
  decoder.feed(start.constData(), size_t(start.size()));
  std::printf("long run: %d busy threads, %.0f min of 10 ms ticks, fed as fast as applied\n",
              threads, minutes);
  std::printf("%8s %8s %8s %9s %9s %9s %10s %9s\n", "stream s", "wall s", "CPU s", "RSS MiB",
              "peak MiB", "model MiB", "stream MB", "spool MB");
  QElapsedTimer wall;
  wall.start();
  double bytes = double(start.size());
  // Every stream minute; every 10 s for runs of a few minutes (the slope).
  const double reportEvery = minutes < 5 ? 10 : 60;
  double nextReport = 0;
  while (stream.seconds() < minutes * 60) {
    for (int k = 0; k < 20; ++k) {  // a second of stream, then the views' turn
      const QByteArray tick = stream.next();
      bytes += double(tick.size());
      if (!decoder.feed(tick.constData(), size_t(tick.size()))) {
        std::fprintf(stderr, "stream: %s\n", qPrintable(decoder.error()));
        return 1;
      }
    }
    // As fast as applied: frames that arrive while a view reads the model
    // on its worker wait in the model (SessionModel::deferredCount) and are
    // applied a slice per event-loop turn; the next second of stream waits
    // for them, so that the memory measured is the model's, not a backlog.
    QApplication::processEvents();
    while (model->deferredCount() > 0)
      QApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
    if (stream.seconds() >= nextReport) {
      std::printf("%8.0f %8.1f %8.1f %9.0f %9.0f %9.1f %10.0f %9.0f\n", stream.seconds(),
                  double(wall.elapsed()) / 1e3, cpuSeconds(), rssMiB(), peakRssMiB(),
                  double(model->memoryBytes()) / 1048576, bytes / 1e6,
                  double(spool.bytesWritten()) / 1e6);
      std::fflush(stdout);
      nextReport += reportEvery;
    }
  }
  return 0;
}

}  // namespace longrun
