#include "captureopen.h"

#include <QFileInfo>

#include <algorithm>
#include <memory>

#include "capturereader.h"
#include "capturewindow.h"
#include "overviewbuild.h"
#include "sessionmodel.h"
#include "sessionview.h"

namespace {

// The part of a long capture that ends atSeconds after its start (its
// first kCaptureWindowNs when negative), or nothing (*notice empty) when
// the capture has no records to seek to (format 1: read whole).
tmon::CaptureLoadResult loadWindow(const QString &path, double atSeconds, tmon::SessionModel *model,
                                   QString *notice, std::shared_ptr<OverviewBuild> *overview,
                                   tmon::TimeRange *shown) {
  tmon::CaptureWindow cw;
  if (!cw.open(path)) return tmon::CaptureLoadResult{};
  const int64_t first = cw.firstNs(), last = cw.lastNs();
  const int64_t end =
      atSeconds < 0 ? first + kCaptureWindowNs
                    : std::clamp(first + int64_t(atSeconds * 1e9), first + kCaptureWindowNs, last);
  const tmon::CaptureLoadResult r = cw.load(end - kCaptureWindowNs, end, model);
  *shown = tmon::TimeRange{end - kCaptureWindowNs, end};
  // The whole run from the capture's Summary records (a few MB for an
  // hour), its cache, or built in the background.
  *overview = OverviewBuild::forCapture(path, cw);
  *notice = QObject::tr("This capture is %1 min long, more than the display holds: showing %2 s of "
                        "it, %3 s to %4 s. Open it with --at SECONDS for another part.")
                .arg(double(last - first) / 60e9, 0, 'f', 1)
                .arg(double(kCaptureWindowNs) / 1e9, 0, 'f', 0)
                .arg(double(end - kCaptureWindowNs - first) / 1e9, 0, 'f', 1)
                .arg(double(end - first) / 1e9, 0, 'f', 1);
  return r;
}

}  // namespace

tmui::SessionView *openCapture(const QString &path, QString *error, double atSeconds) {
  auto *model = new tmon::SessionModel;
  QString windowed;
  tmon::CaptureLoadResult r;
  std::shared_ptr<OverviewBuild> overview;
  tmon::TimeRange shown{};
  if (QFileInfo(path).size() > kWindowedCaptureBytes)
    r = loadWindow(path, atSeconds, model, &windowed, &overview, &shown);
  if (windowed.isEmpty()) r = tmon::CaptureReader::load(path, model);
  if (r.status == tmon::CaptureLoadResult::Unreadable) {
    *error = QStringLiteral("%1: %2").arg(path, r.message);
    delete model;
    return nullptr;
  }
  model->settleNow();  // part of opening it, not of the first paint
  auto *page = new tmui::SessionView(model, tmui::SessionView::Source::Replay);
  page->setWindowFilePath(QFileInfo(path).absoluteFilePath());
  if (!windowed.isEmpty()) page->setNotice(windowed);
  if (overview) overview->attach(page->setWholeRun(overview->summary(), shown));
  if (r.status == tmon::CaptureLoadResult::Damaged)
    page->setNotice(QObject::tr("This capture is damaged: %1. Showing the %2 whole frames "
                                "before byte %3.")
                        .arg(r.message)
                        .arg(r.frames)
                        .arg(r.goodBytes));
  return page;
}
