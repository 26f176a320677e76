// tm-bench-display: how long each view of threadmon-display takes to render,
// and the longest the GUI thread is blocked, with thousands of threads and
// sync objects, replayed and live (docs/benchmarks.md, "Display at scale").
//
//   QT_QPA_PLATFORM=offscreen tm-bench-display [--threads N] [--objects M]
//       [--seconds S] [--open F.tmcap] [--write F.tmcap] [--no-live] [--views a,b]
//       [--live-paced [--speed X]] [--long-run MINUTES]
//
// Without --open it synthesises a stream (display/tests/synthscenarios.h: N
// threads, M mutexes, S seconds of 10 ms ticks). --write saves that stream as
// a capture and exits. Replay: opens the capture, shows the page at
// 1400x900, raises each view (its render: rebuild and paint) and seeks to
// the middle with it raised. Live: for each view, a live page with that view
// raised is fed the stream a tick's worth of bytes every 10 ms, as a socket
// would, while a heartbeat timer measures the longest GUI block.
// --live-paced: only a live session at the stream's own pace over TCP
// (display_live.h), the page as it opens or each of --views raised.
// --long-run: RSS over MINUTES of --threads busy threads (default 100)
// applied as fast as they go (display_longrun.h).
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollBar>
#include <QTimer>
#include <cstdio>
#include <functional>

#include "captureopen.h"
#include "display_live.h"
#include "display_longrun.h"
#include "framedecoder.h"
#include "guiblock.h"
#include "modelview.h"
#include "replaycontrols.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "synthscenarios.h"

namespace {

using scale::anyBusy;
using scale::kKinds;
using scale::measure;
using scale::showPage;
using scale::Step;

void replay(const QString &path, const QStringList &views) {
  QElapsedTimer t;
  t.start();
  QString error;
  std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
  if (!page) {
    std::fprintf(stderr, "%s\n", qPrintable(error));
    std::exit(1);
  }
  const double loadMs = double(t.nsecsElapsed()) / 1e6;
  const Step shown = measure(page.get(), [&] { showPage(page.get()); });
  std::printf("replay: %d threads, %d sync objects, %.1f s; load %.0f ms, first show ready in "
              "%.0f ms, longest GUI block %.0f ms (%.0f ms CPU)\n",
              page->model()->threadCount(), page->model()->syncObjectCount(),
              page->model()->durationSeconds(), loadMs, shown.readyMs, shown.longestMs,
              shown.cpuMs);
  std::printf("ms; ready: until the view shows its result; block: longest GUI block, wall/CPU\n");
  std::printf("%-9s %7s %9s %11s %9s %11s %9s %11s\n", "view", "rebuild", "raise", "block",
              "seek", "block", "scroll", "block");
  const double duration = page->model()->durationSeconds();
  if (qEnvironmentVariableIsSet("TM_BENCH_DEBUG"))
    for (tmui::ViewKind k : kKinds)
      std::printf("%s visible %d raised %d showing %d rebuild %.1f ms\n",
                  qPrintable(tmui::viewKindName(k)), page->view(k)->isVisible(),
                  page->isViewRaised(k), page->view(k)->showing(), page->view(k)->lastRebuildMs());
  for (tmui::ViewKind k : kKinds) {
    const QString name = tmui::viewKindName(k);
    if (!views.isEmpty() && !views.contains(name)) continue;
    const Step raise = measure(page.get(), [&] { page->showView(k); });
    const Step seek = measure(page.get(), [&] { page->replay()->seek(duration / 2); });
    for (int i = qEnvironmentVariableIntValue("TM_BENCH_SEEKS"); i > 0; --i)  // for profiling
      measure(page.get(), [&] { page->replay()->seek(duration * (i % 2 ? 0.3 : 0.6)); });
    measure(page.get(), [&] { page->replay()->seek(duration); });
    // Scrolling to the middle of whatever the view lists.
    Step scroll;
    for (auto *bar : page->view(k)->findChildren<QScrollBar *>())
      if (bar->orientation() == Qt::Vertical && bar->maximum() > 0 && bar->isVisible()) {
        const Step s = measure(page.get(), [&] { bar->setValue(bar->maximum() / 2); });
        scroll = Step{std::max(scroll.readyMs, s.readyMs), std::max(scroll.longestMs, s.longestMs),
                      std::max(scroll.cpuMs, s.cpuMs)};
        bar->setValue(0);
      }
    // The rebuild alone, on the GUI thread (of a view that works in the
    // background: the part that shows the result).
    measure(page.get(), [&] { page->view(k)->refreshNow(); });
    auto block = [](const Step &s) {
      return QStringLiteral("%1/%2").arg(s.longestMs, 0, 'f', 0).arg(s.cpuMs, 0, 'f', 0);
    };
    std::printf("%-9s %7.1f %9.0f %11s %9.0f %11s %9.0f %11s\n", qPrintable(name),
                page->view(k)->lastRebuildMs(), raise.readyMs, qPrintable(block(raise)),
                seek.readyMs, qPrintable(block(seek)), scroll.readyMs, qPrintable(block(scroll)));
    if (k == tmui::ViewKind::Timeline)
      for (const auto &[what, s] : scale::timelineSteps(page.get()))
        std::printf("  timeline %-8s ready %6.0f ms, block %s ms\n", qPrintable(what), s.readyMs,
                    qPrintable(block(s)));
    std::fflush(stdout);
  }
}

void live(const QByteArray &stream, double seconds, const QStringList &views) {
  // Bytes per 10 ms step: the stream spread evenly over its ticks.
  const int steps = std::max(1, int(seconds * 100));
  const qsizetype chunk = stream.size() / steps + 1;
  std::printf("live: %.1f MB in %d steps of 10 ms\n", double(stream.size()) / 1e6, steps);
  std::printf("%-10s %14s %12s %12s %10s\n", "view", "block wall/CPU", "feed max ms", "wall s",
              "behind ms");
  for (tmui::ViewKind k : kKinds) {
    const QString name = tmui::viewKindName(k);
    if (!views.isEmpty() && !views.contains(name)) continue;
    auto *model = new tmon::SessionModel;
    std::unique_ptr<tmui::SessionView> page(
        new tmui::SessionView(model, tmui::SessionView::Source::Live));
    // As LiveSession does: each checked frame's payload to applyPayload
    // (which waits while a view reads the model on its worker thread).
    tmon::FrameDecoder decoder(nullptr);
    decoder.setFrameHook([model](const uint8_t *payload, uint32_t len) { model->applyPayload(payload, len); });
    showPage(page.get());
    page->showView(k);
    QApplication::processEvents();
    scale::GuiBlockMeter meter;
    QElapsedTimer wall;
    wall.start();
    meter.start();
    qsizetype at = 0;
    double feedMax = 0;
    QTimer feed;
    feed.setTimerType(Qt::PreciseTimer);
    feed.setInterval(10);
    QObject::connect(&feed, &QTimer::timeout, [&] {
      QElapsedTimer f;
      f.start();
      const qsizetype n = std::min(chunk, stream.size() - at);
      decoder.feed(stream.constData() + at, size_t(n));
      at += n;
      feedMax = std::max(feedMax, double(f.nsecsElapsed()) / 1e6);
      if (at >= stream.size()) feed.stop();
    });
    feed.start();
    while (feed.isActive()) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    // Until every frame is in and every view has shown it: how far behind it fell.
    QElapsedTimer tail;
    tail.start();
    do {
      QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    } while (anyBusy(page.get()) || tail.elapsed() < 200);
    meter.stop();
    std::printf("%-10s %14s %12.1f %12.1f %10.0f\n", qPrintable(name),
                qPrintable(QStringLiteral("%1/%2").arg(meter.longestMs(), 0, 'f', 0)
                               .arg(meter.longestCpuMs(), 0, 'f', 0)),
                feedMax, double(wall.elapsed()) / 1e3, std::max(0.0, double(tail.elapsed()) - 200));
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  synth::Workload w;
  w.workers = 10000;
  w.extraObjects = 10000;
  w.seconds = 1.0;
  QString open, write;
  QStringList views;
  bool doLive = true, paced = false;
  double longRunMinutes = 0;
  livebench::Options pacing;
  const QStringList args = app.arguments();
  for (int i = 1; i < args.size(); ++i) {
    const QString &a = args[i];
    const QString next = i + 1 < args.size() ? args[i + 1] : QString();
    if (a == QLatin1String("--threads")) w.workers = std::max(1, next.toInt() - 2), ++i;
    else if (a == QLatin1String("--objects")) w.extraObjects = std::max(0, next.toInt() - 3), ++i;
    else if (a == QLatin1String("--seconds")) w.seconds = next.toDouble(), ++i;
    else if (a == QLatin1String("--open")) open = next, ++i;
    else if (a == QLatin1String("--write")) write = next, ++i;
    else if (a == QLatin1String("--views")) views = next.split(','), ++i;
    else if (a == QLatin1String("--no-live")) doLive = false;
    else if (a == QLatin1String("--live-paced")) paced = true;
    else if (a == QLatin1String("--speed")) pacing.speed = std::max(0.01, next.toDouble()), ++i;
    else if (a == QLatin1String("--long-run")) longRunMinutes = next.toDouble(), ++i;
    else {
      std::fprintf(stderr,
                   "usage: tm-bench-display [--threads N] [--objects M] [--seconds S] "
                   "[--open F.tmcap] [--write F.tmcap] [--no-live] [--views threads,sync,...] "
                   "[--live-paced [--speed X]] [--long-run MINUTES]\n");
      return 2;
    }
  }
  if (longRunMinutes > 0)
    return longrun::run(args.contains(QLatin1String("--threads")) ? w.workers + 2 : 100,
                        longRunMinutes);
  QByteArray stream;
  if (open.isEmpty()) {
    QElapsedTimer t;
    t.start();
    stream = synth::stream(w);
    std::printf("synthesised %d threads, %d sync objects, %.1f s: %.1f MB in %.1f s\n",
                synth::threadCount(w), synth::kObjectCount + w.extraObjects, w.seconds,
                double(stream.size()) / 1e6, double(t.elapsed()) / 1e3);
    open = write.isEmpty() ? QStringLiteral("/tmp/tm-bench-display-%1.tmcap")
                                 .arg(QCoreApplication::applicationPid())
                           : write;
    QFile f(open);
    if (!f.open(QIODevice::WriteOnly) || f.write(stream) != stream.size()) {
      std::fprintf(stderr, "cannot write %s\n", qPrintable(open));
      return 1;
    }
    f.close();
    if (!write.isEmpty()) return 0;
  } else {
    QFile f(open);
    if (!f.open(QIODevice::ReadOnly)) {
      std::fprintf(stderr, "cannot read %s\n", qPrintable(open));
      return 1;
    }
    stream = f.readAll();
  }
  if (paced) {
    pacing.views = views;
    const int status = livebench::runPaced(stream, pacing);
    if (write.isEmpty() && !args.contains(QLatin1String("--open"))) QFile::remove(open);
    return status;
  }
  replay(open, views);
  if (doLive) live(stream, w.seconds, views);
  if (write.isEmpty() && !args.contains(QLatin1String("--open"))) QFile::remove(open);
  return 0;
}
