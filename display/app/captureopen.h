// Opening a .tmcap as a replay session page, for the window, drag-and-drop
// and --screenshot alike. Reading is split from making the page so that the
// window reads on a thread of its own (CaptureLoader) and the GUI thread
// only makes the page.
#ifndef THREADMON_APP_CAPTUREOPEN_H
#define THREADMON_APP_CAPTUREOPEN_H

#include <QString>
#include <any>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "capturereader.h"
#include "capturewindow.h"
#include "modeltypes.h"
#include "overviewbuild.h"
#include "views.h"

namespace tmon {
class SessionModel;
}
namespace tmui {
class SessionView;
}

// A capture longer than kCaptureWindowNs, whatever its size, is not read
// whole: the page shows kCaptureWindowNs of it through its index
// (CaptureWindow), ending at atSeconds after its start (from its start when
// negative), and says so. Memory follows the window, not the file.
constexpr int64_t kCaptureWindowNs = 10'000'000'000;

// A long capture's index and descriptions (CaptureWindow::open: 3-15 ms for
// the hour) and its session's start, read once and kept across its seeks
// while the file stays as it was (its size and modification time): one
// written since (a capture still growing) is opened again whole. One read
// uses it at a time (busy); a read that finds it busy (an abandoned seek
// still stopping) opens its own.
struct KeptIndex {
  std::mutex busy;
  tmon::CaptureIdentity file;  // when opened (sessionId 0)
  tmon::CaptureWindow cw;
  OverviewBuild::Session session;

  // What the views computed ahead for the windows read last
  // (CaptureLoader): a seek back to one of them shows it without
  // computing it again (the same file and window read give the same
  // model). A result for inputs a view no longer has (its width changed)
  // is computed again by the view, as any ahead's (ModelView::takeAhead).
  // Any thread.
  bool computedFor(const tmon::TimeRange &window, tmon::ViewKind kind, std::any *out) const;
  void keepComputed(const tmon::TimeRange &window, tmon::ViewKind kind, const std::any &result);
  static constexpr size_t kKeptWindows = 4;

 private:
  struct Computed {
    tmon::TimeRange window;
    std::vector<std::pair<tmon::ViewKind, std::any>> results;
  };
  mutable std::mutex computedLock_;
  std::deque<Computed> computed_;  // the newest window last, kKeptWindows at most
};

// What reading a capture gave, besides the model it filled.
struct CaptureRead {
  tmon::CaptureLoadResult result;
  QString windowNotice;  // empty when read whole
  OverviewBuild::Found overview;  // a long capture's whole run
  tmon::TimeRange shown{};
  bool refused = false;  // not read: its records' times cannot be trusted
  std::shared_ptr<KeptIndex> index;  // a long capture's, to give the next read
};

// Reads the capture into model, settled for its first paint. Any thread,
// provided nothing else touches the model meanwhile. knownOverview: the
// identity of the overview open for it (OverviewBuild::of), kept alive
// until the page is made, which takes it over unread. stop, when set, ends
// a long capture's read early (a seek a newer one abandoned): the model is
// then not worth showing. kept: what an earlier read of the capture gave
// (CaptureRead::index), used when the file has not changed since.
// The report's bounds (display/report/reportstream.h): a capture larger
// than a whole read should hold is read by windows even when its times
// claim a short span, and a window whose records pass maxWindowBytes (16 MiB
// per 5 s) is refused: forged or damaged times put the whole file in it. A
// probe's own captures stay far below (under 1 MB a second).
struct CaptureBounds {
  qint64 wholeUpToBytes = qint64(64) << 20;
  qint64 plainWholeUpToBytes = tmon::CaptureWindow::kPlainWholeUpToBytes;  // format 1
  uint64_t maxWindowBytes = uint64_t(32) << 20;
};
CaptureRead readCapture(const QString &path, double atSeconds, tmon::SessionModel *model,
                        const tmon::CaptureIdentity *knownOverview = nullptr,
                        const std::atomic<bool> *stop = nullptr,
                        const CaptureBounds &bounds = CaptureBounds{},
                        const std::shared_ptr<KeptIndex> &kept = nullptr);

// The page for what readCapture read, which takes the model; on the GUI
// thread. nullptr with *error set (and the model deleted) when nothing could
// be read. Damaged captures open, with a notice saying where they stop.
tmui::SessionView *pageForCapture(const QString &path, tmon::SessionModel *model,
                                  const CaptureRead &read, QString *error);
// The same for a page made before its model was filled (SessionView's
// BeforeFilled), whose model it reads now: nullptr (the page deleted) when
// nothing could be read.
tmui::SessionView *finishPage(const QString &path, tmui::SessionView *page, const CaptureRead &read,
                              QString *error);

// Both, on the calling thread.
tmui::SessionView *openCapture(const QString &path, QString *error, double atSeconds = -1);

#endif
