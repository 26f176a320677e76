#include "captureopen.h"

#include <QFileInfo>
#include <algorithm>

#include "capturetree.h"
#include "capturewindow.h"
#include "overviewbuild.h"
#include "seeksteps.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "viewwindow.h"

namespace {

// The part of a long capture that ends atSeconds after its start (its
// first kCaptureWindowNs when negative), or nothing (no windowNotice) when
// the capture fits in one window (which is then read whole: the same
// memory).
CaptureRead readWindow(const QString &path, double atSeconds, tmon::SessionModel *model,
                       const tmon::CaptureIdentity *knownOverview, const std::atomic<bool> *stop,
                       const CaptureBounds &bounds, const std::shared_ptr<KeptIndex> &kept) {
  CaptureRead read;
  SeekStep indexStep("index");
  tmon::CaptureIdentity file;
  const bool statted = tmon::CaptureIdentity::of(path, 0, &file);
  std::shared_ptr<KeptIndex> index;
  std::unique_lock<std::mutex> using_;
  if (kept && statted) {
    using_ = std::unique_lock<std::mutex>(kept->busy, std::try_to_lock);
    if (using_.owns_lock() && kept->file == file)
      index = kept;
    else if (using_.owns_lock())
      using_.unlock();
  }
  bool opened = true;
  if (!index) {
    index = std::make_shared<KeptIndex>();
    using_ = std::unique_lock<std::mutex>(index->busy);
    index->file = file;
    opened = index->cw.open(path);
  }
  tmon::CaptureWindow &cw = index->cw;
  const qint64 size = statted ? qint64(file.size) : QFileInfo(path).size();
  indexStep.done();
  if (!opened) {
    if (size > bounds.wholeUpToBytes) {  // too large to read whole: what made its windows fail
      read.refused = true;
      read.result.message = cw.error();
    }
    return read;
  }
  const bool large = size > (cw.plainFrames() ? bounds.plainWholeUpToBytes : bounds.wholeUpToBytes);
  const int64_t first = cw.firstNs(), last = cw.lastNs();
  // Past 2^62 ns (146 years of uptime) no probe wrote them, and the window's
  // arithmetic below would overflow.
  if (first < 0 || last > (int64_t(1) << 62)) {
    if (large) {
      read.refused = true;
      read.result.message = QObject::tr("its records' times are past any clock's: not read");
    }
    return read;
  }
  if (last - first <= kCaptureWindowNs && !large) return read;
  const int64_t end = last - first <= kCaptureWindowNs ? first + kCaptureWindowNs
                      : atSeconds < 0                  ? first + kCaptureWindowNs
                                      : std::clamp(first + int64_t(atSeconds * 1e9),
                                                   first + kCaptureWindowNs, last);
  const uint64_t bytes = cw.bytesOf(end - kCaptureWindowNs, end);
  if (large && bytes > bounds.maxWindowBytes) {
    read.refused = true;
    read.result.status = tmon::CaptureLoadResult::Unreadable;
    read.result.message =
        (cw.plainFrames()
             ? QObject::tr("%1 MB of plain frames fall in one %2 s window: more than the display "
                           "reads at once (threadmon report reads it a window at a time)")
             : QObject::tr(
                   "%1 MB of its records fall in one %2 s window: their times are damaged or "
                   "forged, so it is not read (threadmon report reads it a window at a time)"))
            .arg(double(bytes) / 1e6, 0, 'f', 0)
            .arg(double(kCaptureWindowNs) / 1e9, 0, 'f', 0);
    return read;
  }
  {
    SeekStep step("window read");
    read.result = cw.load(end - kCaptureWindowNs, end, model, stop);
  }
  if (stop && *stop) return read;
  read.shown = tmon::TimeRange{end - kCaptureWindowNs, end};
  // The whole run from the capture's Summary records (a few MB for an
  // hour), its cache, or else built in the background once the page shows.
  SeekStep overviewStep("overview");
  read.overview = OverviewBuild::find(path, cw, knownOverview, &index->session);
  overviewStep.done();
  if (statted) read.index = index;
  read.windowNotice =
      QObject::tr(
          "This capture is %1 min long, more than the display holds at once: showing %2 s of "
          "it, %3 s to %4 s. Open it with --at SECONDS for another part.")
          .arg(double(last - first) / 60e9, 0, 'f', 1)
          .arg(double(kCaptureWindowNs) / 1e9, 0, 'f', 0)
          .arg(double(end - kCaptureWindowNs - first) / 1e9, 0, 'f', 1)
          .arg(double(end - first) / 1e9, 0, 'f', 1);
  return read;
}

}  // namespace

namespace {
bool sameWindow(const tmon::TimeRange &a, const tmon::TimeRange &b) {
  return a.t0 == b.t0 && a.t1 == b.t1;
}
}  // namespace

bool KeptIndex::computedFor(const tmon::TimeRange &window, tmon::ViewKind kind,
                            std::any *out) const {
  const std::lock_guard<std::mutex> hold(computedLock_);
  for (const Computed &c : computed_)
    if (sameWindow(c.window, window))
      for (const auto &[k, result] : c.results)
        if (k == kind) {
          *out = result;
          return true;
        }
  return false;
}

void KeptIndex::keepComputed(const tmon::TimeRange &window, tmon::ViewKind kind,
                             const std::any &result) {
  const std::lock_guard<std::mutex> hold(computedLock_);
  auto it = std::find_if(computed_.begin(), computed_.end(),
                         [&](const Computed &c) { return sameWindow(c.window, window); });
  if (it == computed_.end()) {
    computed_.push_back(Computed{window, {}});
    if (computed_.size() > kKeptWindows) computed_.pop_front();
    it = computed_.end() - 1;
  }
  for (auto &[k, kept] : it->results)
    if (k == kind) {
      kept = result;
      return;
    }
  it->results.emplace_back(kind, result);
}

CaptureRead readCapture(const QString &path, double atSeconds, tmon::SessionModel *model,
                        const tmon::CaptureIdentity *knownOverview, const std::atomic<bool> *stop,
                        const CaptureBounds &bounds, const std::shared_ptr<KeptIndex> &kept) {
  CaptureRead read = readWindow(path, atSeconds, model, knownOverview, stop, bounds, kept);
  if (stop && *stop) return read;  // abandoned: nobody shows it
  if (read.windowNotice.isEmpty() && !read.refused)
    read.result = tmon::CaptureReader::load(path, model);
  if (read.result.status != tmon::CaptureLoadResult::Unreadable) {
    SeekStep step("settle");
    model->settleNow(2);
  }  // part of opening it, not of the first paint; on two cores
  return read;
}

namespace {
bool readNothing(const QString &path, const CaptureRead &read, QString *error) {
  if (read.result.status != tmon::CaptureLoadResult::Unreadable) return false;
  *error = QStringLiteral("%1: %2").arg(path, read.result.message);
  return true;
}
}  // namespace

tmui::SessionView *pageForCapture(const QString &path, tmon::SessionModel *model,
                                  const CaptureRead &read, QString *error) {
  if (readNothing(path, read, error)) {
    delete model;
    return nullptr;
  }
  using tmui::SessionView;
  return finishPage(
      path, new SessionView(model, SessionView::Source::Replay, SessionView::BeforeFilled{}), read,
      error);
}

tmui::SessionView *finishPage(const QString &path, tmui::SessionView *page, const CaptureRead &read,
                              QString *error) {
  if (readNothing(path, read, error)) {
    delete page;
    return nullptr;
  }
  const tmon::CaptureLoadResult &r = read.result;
  page->modelFilled();
  page->setWindowFilePath(QFileInfo(path).absoluteFilePath());
  if (!read.windowNotice.isEmpty()) {
    page->setNotice(read.windowNotice);
    // The views show the part read, not the whole run around it, empty.
    page->viewWindow()->setRange(read.shown);
  }
  if (auto overview = OverviewBuild::forCapture(path, read.overview))
    overview->attach(page->setWholeRun(overview->summary(), read.shown));
  if (r.status == tmon::CaptureLoadResult::Damaged)
    page->setNotice(QObject::tr("This capture is damaged: %1. Showing the %2 whole frames "
                                "before byte %3.")
                        .arg(r.message)
                        .arg(r.frames)
                        .arg(r.goodBytes));
  return page;
}

tmui::SessionView *openCapture(const QString &given, QString *error, double atSeconds) {
  // A process tree's capture: the program's own (the first process's).
  const QString path = tmon::CaptureTree::mainCapture(given);
  auto *model = new tmon::SessionModel;
  const CaptureRead read = readCapture(path, atSeconds, model);
  return pageForCapture(path, model, read, error);
}
