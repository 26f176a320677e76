// OverviewBuild: the whole-run overview of a long capture opened in the
// display (captureopen.h). It comes from the capture's Summary records when
// they reach its end; else from the summary cache (SummaryCache) when one
// of this capture is found; else it is built from the detail in the
// background (SummaryBuild: worker threads, a chunk at a time, the records'
// part kept when a capture cut short has some), the strip filling in as
// chunks are done, and cached once whole. One build serves every page of
// the capture: a click on the strip reopens the capture at another time in
// a new page, which takes the build over as it stands.
#ifndef THREADMON_APP_OVERVIEWBUILD_H
#define THREADMON_APP_OVERVIEWBUILD_H

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "modeltypes.h"
#include "summarycache.h"
#include "wholerunstrip.h"

namespace tmon {
class CaptureWindow;
class RunSummary;
class SummaryBuild;
}  // namespace tmon

class QThread;

class OverviewBuild : public QObject, public std::enable_shared_from_this<OverviewBuild> {
  Q_OBJECT
 public:
  // What an overview of the capture starts from, read on any thread (the
  // display's reader thread): its Summary records (0.4 s for an hour's) or
  // its cache. ok is false when the capture has no span to summarise.
  struct Found {
    bool ok = false;
    QString key;  // the capture's absolute path
    tmon::CaptureIdentity id;
    std::shared_ptr<tmon::RunSummary> summary;
    tmon::TimeRange run{};
    int64_t buildFrom = 0;  // where building from the detail starts
    QString source, cacheNotice;
  };
  // known: the identity of the build open for this capture (of()), taken
  // over by forCapture(): its summary is not read again (a seek in an hour
  // would read 3,600 records, 0.4 s, to throw them away).
  // session: where the capture's session starts and its id (a load of
  // its first record), read once for a capture kept open across seeks
  // (captureopen.h, KeptIndex): given with read set, not loaded again.
  struct Session {
    bool read = false;
    int64_t start = 0;
    uint64_t id = 0;
  };
  static Found find(const QString &path, const tmon::CaptureWindow &cw,
                    const tmon::CaptureIdentity *known = nullptr, Session *session = nullptr);
  // On the GUI thread: the build of the capture at path open now, if any.
  static std::shared_ptr<OverviewBuild> of(const QString &path);
  tmon::CaptureIdentity identity() const { return id_; }
  // On the GUI thread: the build of this capture already under way, else
  // one from what find() read, its build started when it needs one. Null
  // when !found.ok, or when find() skipped the known build's summary and
  // that build is gone.
  static std::shared_ptr<OverviewBuild> forCapture(const QString &path, Found found);
  ~OverviewBuild() override;

  std::shared_ptr<const tmon::RunSummary> summary() const { return summary_; }
  // Where it came from: "records", "cache", "detail" (being built or built).
  QString source() const { return source_; }
  bool building() const { return !pending_.empty(); }
  // The line the strip shows while it builds (empty once done).
  QString status() const;
  // Keeps strip up to date, and this alive while strip is.
  void attach(tmui::WholeRunStrip *strip);

 signals:
  void chunkBuilt(tmon::TimeRange chunk);

 private:
  explicit OverviewBuild(Found found);
  void start(const QString &path, int64_t start, int64_t from, int64_t last);
  void finish();

  std::shared_ptr<tmon::RunSummary> summary_;
  tmon::CaptureIdentity id_;
  QString path_, source_, cacheNotice_;
  tmon::TimeRange run_{};
  std::vector<tmon::TimeRange> pending_;
  size_t chunks_ = 0;
  QElapsedTimer clock_;
  std::unique_ptr<tmon::SummaryBuild> build_;
  std::unique_ptr<QThread> saving_;  // the cache written off the GUI thread
  // The strip as the last page drew it: a seek's page shows it unpainted.
  std::shared_ptr<tmui::WholeRunStrip::Drawing> drawing_ =
      std::make_shared<tmui::WholeRunStrip::Drawing>();
};

#endif
