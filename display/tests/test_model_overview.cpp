// The whole-run summary of a capture written without Summary records (the
// probe's), built from its detail in the background (SummaryBuild): bucket
// for bucket what the records of the same frames say; a capture cut short
// summed up to its last whole block, records that stop at the cut kept and
// the rest built; and the summary cache, which a stale or damaged file
// never feeds.
#include <sys/stat.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <condition_variable>
#include <mutex>

#include "busy_capture.h"
#include "capturewindow.h"
#include "runsummary.h"
#include "summarybuild.h"
#include "summarycache.h"

using namespace tmon;

namespace {

constexpr int64_t kSec = 1'000'000'000;

QString writeCapture(const QTemporaryDir &dir, const char *name, int threads, int seconds,
                     bool summaries) {
  const QString path = dir.filePath(QString::fromLatin1(name));
  return busycap::writeFile(path, threads, uint64_t(seconds) * kSec, summaries) ? path : QString();
}

// Every thread's every bucket, to the nanosecond; up to `buckets` of them
// (all when 0).
void compareSummaries(const RunSummary &got, const RunSummary &want, size_t buckets = 0) {
  QCOMPARE(got.startNs(), want.startNs());
  QCOMPARE(got.tids(), want.tids());
  if (!buckets) {
    QCOMPARE(got.buckets(), want.buckets());
    buckets = want.buckets();
  }
  for (uint32_t tid : want.tids())
    for (size_t k = 0; k < buckets; k++) {
      const StateTimes a = got.bucket(tid, k), b = want.bucket(tid, k);
      QVERIFY2(a.ns == b.ns && a.lifetimeNs == b.lifetimeNs,
               qPrintable(QStringLiteral("thread %1 bucket %2: lifetime %3 against %4")
                              .arg(tid)
                              .arg(k)
                              .arg(a.lifetimeNs)
                              .arg(b.lifetimeNs)));
    }
}

// The build of [from, end) of the capture at path, on `workers` threads,
// merged into sum as the display merges it.
void buildInBackground(const QString &path, int64_t start, int64_t from, int64_t last, int workers,
                       RunSummary *sum) {
  std::mutex m;
  std::condition_variable cv;
  std::vector<SummaryBuild::Part> parts;
  bool done = false;
  const std::vector<TimeRange> chunks =
      SummaryBuild::plan(start, from, last, 10 * RunSummary::kBucketNs);
  {
    SummaryBuild b(
        path, start, last, chunks, workers,
        [&](SummaryBuild::Part p) {
          std::lock_guard<std::mutex> g(m);
          parts.push_back(std::move(p));
        },
        [&] {
          std::lock_guard<std::mutex> g(m);
          done = true;
          cv.notify_all();
        });
    std::unique_lock<std::mutex> g(m);
    QVERIFY(cv.wait_for(g, std::chrono::minutes(4), [&] { return done; }));
  }
  QCOMPARE(parts.size(), chunks.size());
  for (const SummaryBuild::Part &p : parts) SummaryBuild::merge(p, sum);
}

bool cutAt(const QString &path, qint64 bytes) {
  QFile f(path);
  return f.resize(bytes);
}

// The summary a capture's detail gives, and its identity (session 77).
bool summaryOf(const QString &capture, RunSummary *sum, CaptureIdentity *id) {
  CaptureWindow cw;
  return !capture.isEmpty() && cw.open(capture) && sum->build(cw) &&
         CaptureIdentity::of(capture, 77, id);
}

}  // namespace

class TestModelOverview : public QObject {
  Q_OBJECT

 private slots:
  // The same frames written with and without Summary records: the summary
  // built from the detail, sequentially and by two workers, is the records'.
  void builtFromTheDetailIsWhatTheRecordsSay() {
    QTemporaryDir dir;
    const QString with = writeCapture(dir, "with.tmcap", 6, 27, true);
    const QString plain = writeCapture(dir, "plain.tmcap", 6, 27, false);
    QVERIFY(!with.isEmpty() && !plain.isEmpty());
    CaptureWindow cwWith, cwPlain;
    QVERIFY(cwWith.open(with) && cwPlain.open(plain));
    QVERIFY(!cwPlain.hasSummaries());
    RunSummary records;
    QVERIFY(records.read(cwWith));
    QCOMPARE(records.buckets(), size_t(27));
    RunSummary sequential;
    QVERIFY(sequential.build(cwPlain));
    compareSummaries(sequential, records);
    const int64_t start = SummaryBuild::sessionStart(cwPlain);
    QCOMPARE(start, records.startNs());
    RunSummary parallel;
    const int64_t from = SummaryBuild::keepRecords(&parallel, false, start, cwPlain.lastNs());
    QCOMPARE(from, start);
    buildInBackground(plain, start, from, cwPlain.lastNs(), 2, &parallel);
    compareSummaries(parallel, records);
    // Not a summary of nothing: the workers wait about half of the time.
    int64_t blocked = 0;
    for (uint32_t tid : records.tids())
      blocked += parallel.states(tid, TimeRange{start, parallel.endNs()})
                     .ns[size_t(FinalState::BlockedMutex)];
    QVERIFY(blocked > 27 * kSec);
  }

  // Cut short mid-block, without its index: the scan finds the whole
  // blocks, and the build sums every thread up to the last of them, each
  // bucket before the last chunk as the uncut capture's records say.
  void aCaptureCutShortIsSummedToItsLastWholeBlock() {
    QTemporaryDir dir;
    const QString with = writeCapture(dir, "with.tmcap", 4, 33, true);
    const QString plain = writeCapture(dir, "plain.tmcap", 4, 33, false);
    QVERIFY(!with.isEmpty() && !plain.isEmpty());
    QVERIFY(busycap::dropIndex(plain));
    QVERIFY(cutAt(plain, QFileInfo(plain).size() * 2 / 3 + 1234));
    CaptureWindow cw, cwWith;
    QVERIFY(cw.open(plain) && cwWith.open(with));
    QVERIFY(!cw.indexFromTail());
    RunSummary records;
    QVERIFY(records.read(cwWith));
    const int64_t start = SummaryBuild::sessionStart(cw), last = cw.lastNs();
    QVERIFY(last > start + 15 * kSec && last < start + 25 * kSec);
    RunSummary built;
    buildInBackground(plain, start, SummaryBuild::keepRecords(&built, false, start, last), last, 2,
                      &built);
    // Up to the last whole block: its bucket is the last one, and every
    // thread lived through the second before it.
    const size_t lastBucket = size_t((last - 1 - start) / kSec);
    QCOMPARE(built.buckets(), lastBucket + 1);
    for (uint32_t tid : records.tids())
      QCOMPARE(built.bucket(tid, lastBucket - 1).lifetimeNs, kSec);
    // The last chunk ends at the cut (the capture's end there); those before
    // are the records'.
    compareSummaries(built, records, size_t((last - start) / (10 * kSec)) * 10);
  }

  // Records that stop at the cut are kept to their last whole chunk and the
  // rest is built: the same as building it all from the detail.
  void recordsCutShortAreKeptAndTheRestBuilt() {
    QTemporaryDir dir;
    const QString with = writeCapture(dir, "with.tmcap", 4, 44, true);
    QVERIFY(!with.isEmpty() && busycap::dropIndex(with));
    QVERIFY(cutAt(with, QFileInfo(with).size() * 3 / 4));
    CaptureWindow cw;
    QVERIFY(cw.open(with));
    const int64_t start = SummaryBuild::sessionStart(cw), last = cw.lastNs();
    RunSummary resumed;
    QVERIFY(resumed.read(cw));
    QVERIFY(resumed.endNs() < last);
    const int64_t from = SummaryBuild::keepRecords(&resumed, true, start, last);
    QVERIFY(from > start && from < last);
    QCOMPARE((from - start) % (10 * kSec), int64_t(0));
    buildInBackground(with, start, from, last, 1, &resumed);
    RunSummary whole;
    QVERIFY(whole.build(cw));
    compareSummaries(resumed, whole);
  }

  // The cache gives back what was saved; a cache of another capture (size,
  // time or session), a damaged or a cut one is refused with one line.
  void theCacheIsUsedOnlyWhenItIsThisCapturesAndWhole() {
    QTemporaryDir dir;
    const QString plain = writeCapture(dir, "plain.tmcap", 5, 14, false);
    RunSummary sum;
    CaptureIdentity id;
    QVERIFY(summaryOf(plain, &sum, &id));
    QCOMPARE(id.size, uint64_t(QFileInfo(plain).size()));
    const SummaryCache cache(plain, id);
    QString error;
    QCOMPARE(cache.save(sum, &error), plain + QStringLiteral(".tmsum"));
    RunSummary back;
    QString notice;
    QVERIFY(cache.load(&back, &notice));
    QVERIFY(notice.isEmpty());
    compareSummaries(back, sum);

    CaptureIdentity grown = id, touched = id, another = id;
    grown.size++;
    touched.mtimeNs++;
    another.sessionId++;
    for (const CaptureIdentity &o : {grown, touched, another}) {
      RunSummary none;
      QVERIFY(!SummaryCache(plain, o).load(&none, &notice));
      QVERIFY2(notice.contains(QLatin1String("stale")), qPrintable(notice));
      QVERIFY(!notice.contains(QLatin1Char('\n')));
      QCOMPARE(none.buckets(), size_t(0));
    }

    QFile f(cache.sidecarPath());
    QVERIFY(f.open(QIODevice::ReadWrite));
    const QByteArray good = f.readAll();
    QByteArray bad = good;
    bad[bad.size() / 2] = char(bad[bad.size() / 2] ^ 0x10);
    QVERIFY(f.seek(0) && f.write(bad) == bad.size());
    f.close();
    QVERIFY(!cache.load(&back, &notice));
    QVERIFY2(notice.contains(QLatin1String("damaged")), qPrintable(notice));
    QVERIFY(cutAt(cache.sidecarPath(), good.size() - 9));
    QVERIFY(!cache.load(&back, &notice));
    QVERIFY2(notice.contains(QLatin1String("damaged")), qPrintable(notice));
    QVERIFY(cutAt(cache.sidecarPath(), 10));
    QVERIFY(!cache.load(&back, &notice));
    QVERIFY(!notice.isEmpty());

    // Where the sidecar cannot go: the user's cache, named by the identity.
    qputenv("XDG_CACHE_HOME", dir.filePath(QStringLiteral("cache")).toLocal8Bit());
    QVERIFY(cache.userCachePath().startsWith(dir.filePath(QStringLiteral("cache/threadmon/"))));
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("cache/threadmon"))));
    QVERIFY(SummaryCache::writeFile(cache.userCachePath(), id, sum, &error));
    QVERIFY(QFile::remove(cache.sidecarPath()));
    RunSummary user;
    QVERIFY(cache.load(&user, &notice));
    compareSummaries(user, sum);
  }

  // A neighbour who can write beside a capture (a shared directory) plants
  // at its sidecar's name: a FIFO (its open waited for a writer for ever,
  // and the display with it), a link, or a cache of their own with the
  // capture's identity (size, time and session are all visible to them).
  // Each is refused at once with one line; the user's own cache is read.
  void aPlantedSidecarIsRefused() {
    QTemporaryDir dir;
    const QString plain = writeCapture(dir, "plain.tmcap", 5, 14, false);
    RunSummary sum;
    CaptureIdentity id;
    QVERIFY(summaryOf(plain, &sum, &id));
    const SummaryCache cache(plain, id);
    const QByteArray sidecar = QFile::encodeName(cache.sidecarPath());
    QString error, notice;
    RunSummary none;

    QCOMPARE(mkfifo(sidecar.constData(), 0644), 0);
    QElapsedTimer took;
    took.start();
    QVERIFY(!cache.load(&none, &notice));
    QVERIFY(took.elapsed() < 5000);
    QVERIFY2(notice.contains(QLatin1String("not a regular file")), qPrintable(notice));
    QVERIFY(QFile::remove(cache.sidecarPath()));

    const QString elsewhere = dir.filePath(QStringLiteral("elsewhere.tmsum"));
    QVERIFY(SummaryCache::writeFile(elsewhere, id, sum, &error));
    QVERIFY(QFile::link(elsewhere, cache.sidecarPath()));
    QVERIFY(!cache.load(&none, &notice));
    QVERIFY2(!notice.isEmpty() && !notice.contains(QLatin1Char('\n')), qPrintable(notice));
    QVERIFY(QFile::remove(cache.sidecarPath()));

    QVERIFY(SummaryCache::writeFile(cache.sidecarPath(), id, sum, &error));
    RunSummary own;
    QVERIFY(cache.load(&own, &notice));
    compareSummaries(own, sum);
    if (geteuid() == 0) {  // a neighbour's file: only root can make one here
      QCOMPARE(chown(sidecar.constData(), 65534, 65534), 0);
      QVERIFY(!cache.load(&none, &notice));
      QVERIFY2(notice.contains(QLatin1String("another user (uid 65534)")), qPrintable(notice));
    }
  }
};

QTEST_GUILESS_MAIN(TestModelOverview)
#include "test_model_overview.moc"
