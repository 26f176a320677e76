#include "overviewbuild.h"

#include <QFileInfo>
#include <QThread>
#include <algorithm>
#include <map>

#include "capturewindow.h"
#include "runsummary.h"
#include "summarizer.h"
#include "summarybuild.h"
#include "wholerunstrip.h"

namespace {

// The builds of the captures open, by absolute path: a capture reopened at
// another time (or in another tab) while its build runs takes it over.
std::map<QString, std::weak_ptr<OverviewBuild>> &builds() {
  static std::map<QString, std::weak_ptr<OverviewBuild>> all;
  return all;
}

}  // namespace

OverviewBuild::OverviewBuild(Found found)
    : summary_(std::move(found.summary)),
      id_(found.id),
      path_(found.key),
      source_(found.source),
      cacheNotice_(found.cacheNotice),
      run_(found.run) {}

OverviewBuild::~OverviewBuild() {
  build_.reset();  // stops the workers before what they post to goes
  if (saving_) saving_->wait();
  auto it = builds().find(path_);
  if (it != builds().end() && it->second.expired()) builds().erase(it);
}

OverviewBuild::Found OverviewBuild::find(const QString &path, const tmon::CaptureWindow &cw,
                                         const tmon::CaptureIdentity *known, Session *session) {
  Found f;
  const int64_t last = cw.lastNs();
  if (last <= cw.firstNs()) return f;
  Session own;
  Session &s = session ? *session : own;
  if (!s.read) {
    s.start = tmon::SummaryBuild::sessionStart(cw, &s.id);
    s.read = true;
  }
  const int64_t start = s.start;
  if (!tmon::CaptureIdentity::of(path, s.id, &f.id)) return f;
  f.ok = true;
  f.key = QFileInfo(path).absoluteFilePath();
  f.run = tmon::TimeRange{start, last};
  if (known && *known == f.id) return f;
  f.summary = std::make_shared<tmon::RunSummary>();
  tmon::RunSummary &sum = *f.summary;
  // The records reach the end: as the capture's writer summed it.
  const bool records = sum.read(cw);
  if (records && sum.endNs() >= last) {
    f.source = QStringLiteral("records");
    return f;
  }
  if (tmon::SummaryCache(path, f.id).load(&sum, &f.cacheNotice)) {
    f.source = QStringLiteral("cache");
    return f;
  }
  if (!f.cacheNotice.isEmpty()) qWarning("threadmon-display: %s", qPrintable(f.cacheNotice));
  f.source = QStringLiteral("detail");
  f.buildFrom = tmon::SummaryBuild::keepRecords(&sum, records, start, last);
  return f;
}

std::shared_ptr<OverviewBuild> OverviewBuild::of(const QString &path) {
  auto it = builds().find(QFileInfo(path).absoluteFilePath());
  return it == builds().end() ? nullptr : it->second.lock();
}

std::shared_ptr<OverviewBuild> OverviewBuild::forCapture(const QString &path, Found found) {
  if (!found.ok) return nullptr;
  if (auto same = builds()[found.key].lock(); same && same->id_ == found.id) return same;
  if (!found.summary) return nullptr;
  const QString key = found.key;
  const bool build = found.source == QStringLiteral("detail");
  const int64_t from = found.buildFrom;
  std::shared_ptr<OverviewBuild> o(new OverviewBuild(std::move(found)));
  builds()[key] = o;
  if (build) o->start(path, o->run_.t0, from, o->run_.t1);
  return o;
}

void OverviewBuild::start(const QString &path, int64_t start, int64_t from, int64_t last) {
  pending_ = tmon::SummaryBuild::plan(start, from, last, tmon::Summarizer::kChunkNs);
  chunks_ = pending_.size();
  clock_.start();
  if (pending_.empty()) return;
  // Parts come on the workers' threads; they are merged on this one, which
  // owns the summary the strip reads (a chunk's merge: about 1,000 cells).
  auto deliver = [this](tmon::SummaryBuild::Part part) {
    QMetaObject::invokeMethod(
        this,
        [this, part = std::move(part)] {
          tmon::SummaryBuild::merge(part, summary_.get());
          auto it = std::find_if(pending_.begin(), pending_.end(), [&](const tmon::TimeRange &r) {
            return r.t0 == part.span.t0 && r.t1 == part.span.t1;
          });
          if (it != pending_.end()) pending_.erase(it);
          emit chunkBuilt(part.span);
          if (pending_.empty()) finish();
        },
        Qt::QueuedConnection);
  };
  build_ = std::make_unique<tmon::SummaryBuild>(
      path, start, last, pending_, tmon::SummaryBuild::defaultWorkers(pending_.size()), deliver);
}

void OverviewBuild::finish() {
  // The summary is whole and no longer changes: written on a thread of its
  // own (packing and compressing an hour of 100 threads takes a few hundred
  // ms).
  const double seconds = double(clock_.elapsed()) / 1e3;
  std::shared_ptr<const tmon::RunSummary> sum = summary_;
  saving_.reset(QThread::create([sum, seconds, path = path_, id = id_, chunks = chunks_] {
    QString error;
    const QString cached = tmon::SummaryCache(path, id).save(*sum, &error);
    qInfo(
        "threadmon-display: whole-run overview of %s built from the detail in %.1f s (%zu "
        "chunks); %s",
        qPrintable(path), seconds, chunks,
        qPrintable(cached.isEmpty() ? QStringLiteral("not cached: ") + error
                                    : QStringLiteral("cached in ") + cached));
  }));
  saving_->start();
}

QString OverviewBuild::status() const {
  if (pending_.empty()) return QString();
  int64_t left = 0;
  for (const tmon::TimeRange &r : pending_) left += r.length();
  const int64_t total = std::max<int64_t>(run_.length(), 1);
  QString s = tr("Building the overview from the capture's detail: %1 of %2 s (%3%)")
                  .arg((total - left) / 1'000'000'000)
                  .arg(total / 1'000'000'000)
                  .arg(100 * (total - left) / total);
  if (!cacheNotice_.isEmpty()) s += QStringLiteral(" · ") + cacheNotice_;
  return s;
}

void OverviewBuild::attach(tmui::WholeRunStrip *strip) {
  strip->keep(shared_from_this());
  strip->shareDrawing(drawing_);
  if (pending_.empty()) return;
  strip->setBuilding(run_, pending_, status());
  connect(this, &OverviewBuild::chunkBuilt, strip,
          [this, strip](tmon::TimeRange chunk) { strip->chunkBuilt(chunk, status()); });
}
