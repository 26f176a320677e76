// Incremental derivation against a whole read, over real captures: a model
// fed a capture frame by frame and settled as it goes (what the live display
// does every 50 ms, and a streamed report per window) must end, after its
// final settle, exactly where a model fed it all at once and settled once
// does: each thread's intervals (state, start, end, CPU, object), its time
// per state and per CPU, and each object's waits. A dirty mark too narrow
// (ThreadTimeline::markDirty's callers) leaves an interval derived before
// a late record came as it was, and the live view tells another story.
//
// Captures: the fuzz corpus and regressions (THREADMON_FUZZ_REGRESSIONS),
// and any named by THREADMON_DERIVE_CAPTURES (files or folders of *.tmcap,
// separated by ':'): every recording tests/e2e makes (tmtest.Recording),
// or any capture by hand. Each is read
// twice stepped: settled after every frame (the strictest: every partial
// state a live read can be in), and every 50 ms of capture time (the live
// display's cadence); captures over 2 MB only the latter, unless
// THREADMON_DERIVE_EVERY_FRAME is set.
#include <QDir>
#include <QFile>
#include <QtTest>

#include "capturereader.h"
#include "framedecoder.h"
#include "sessionmodel.h"

using namespace tmon;

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kLiveSettleNs = 50 * kMs;  // SessionModel's settle cadence
constexpr qint64 kEveryFrameUpTo = 2 << 20;  // bytes of capture
constexpr int kMaxPerThread = 6;             // differences said per thread and kind
constexpr int kMaxLines = 200;               // in all

QStringList capturesIn(const QString &path) {
  QStringList out;
  const QFileInfo fi(path);
  if (fi.isFile()) return {fi.filePath()};
  for (const QFileInfo &f : QDir(path).entryInfoList({"*.tmcap"}, QDir::Files, QDir::Name))
    out << f.filePath();
  return out;
}

// Feeds path's frames to model one at a time, settling after a frame when
// settleEveryNs (0: after every frame) ns of capture time passed since the
// last settle, and once at the end, as CaptureReader::load reads it.
bool loadStepped(const QString &path, SessionModel *model, int64_t settleEveryNs) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return false;
  FrameDecoder dec(model);
  int64_t settledAt = INT64_MIN;
  // Called before each frame is applied: settling there settles after the
  // frame before it.
  dec.setFrameHook([&](const uint8_t *, uint32_t) {
    const int64_t now = model->latestNs();
    if (settleEveryNs == 0 || settledAt == INT64_MIN || now - settledAt >= settleEveryNs) {
      model->settleNow();
      settledAt = now;
    }
  });
  for (QByteArray buf; !dec.failed() && !(buf = file.read(1 << 20)).isEmpty();)
    dec.feed(buf.constData(), size_t(buf.size()));
  if (!dec.headerSeen()) return false;
  model->markEnded();
  model->settleNow();
  return true;
}

QString ms(int64_t t, int64_t origin) {
  return QString::number(double(t - origin) / double(kMs), 'f', 6) + " ms";
}

QString describe(const StateInterval *iv) {
  if (!iv) return QStringLiteral("(none)");
  QString s = QString::fromUtf8(finalStateKey(iv->state));
  if (iv->cpu >= 0) s += QStringLiteral(" cpu %1").arg(iv->cpu);
  if (iv->object) s += QStringLiteral(" object %1").arg(iv->object);
  return s;
}

bool sameValue(const StateInterval *a, const StateInterval *b) {
  if (!a || !b) return a == b;
  return a->state == b->state && a->cpu == b->cpu && a->object == b->object;
}

// The spans where two threads' intervals say different things, as lines.
QStringList intervalDifferences(const QString &who, const std::vector<StateInterval> &w,
                                const std::vector<StateInterval> &s, int64_t origin) {
  std::vector<int64_t> cuts;
  for (const auto *v : {&w, &s})
    for (const StateInterval &iv : *v) cuts.insert(cuts.end(), {iv.start, iv.end});
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  QStringList out;
  int spans = 0;
  size_t wi = 0, si = 0;
  auto at = [](const std::vector<StateInterval> &v, size_t &i, int64_t t) -> const StateInterval * {
    while (i < v.size() && v[i].end <= t) i++;
    return i < v.size() && v[i].start <= t ? &v[i] : nullptr;
  };
  // A difference runs on while both sides say the same as at its start.
  int64_t from = 0;
  const StateInterval *fw = nullptr, *fs = nullptr;
  bool open = false;
  auto close = [&](int64_t to) {
    if (open && spans++ < kMaxPerThread)
      out << QStringLiteral("%1 [%2, %3): whole %4, stepped %5")
                 .arg(who, ms(from, origin), ms(to, origin), describe(fw), describe(fs));
    open = false;
  };
  for (size_t k = 0; k + 1 < cuts.size(); k++) {
    const int64_t t = cuts[k];
    const StateInterval *a = at(w, wi, t), *b = at(s, si, t);
    if (open && sameValue(a, fw) && sameValue(b, fs)) continue;
    close(t);
    if (!sameValue(a, b)) {
      open = true;
      from = t;
      fw = a;
      fs = b;
    }
  }
  if (!cuts.empty()) close(cuts.back());
  if (spans > kMaxPerThread)
    out << QStringLiteral("%1: %2 more spans differ").arg(who).arg(spans - kMaxPerThread);
  return out;
}

QString describe(const WaitRecord &r, int64_t origin) {
  return QStringLiteral("[%1, %2) waiter %3 holder %4 releaser %5 %6%7 x%8")
      .arg(ms(r.start, origin), ms(r.end, origin))
      .arg(r.waiter)
      .arg(r.holder)
      .arg(r.releaser)
      .arg(QString::fromUtf8(finalStateKey(r.state)), r.open ? " open" : "")
      .arg(r.count);
}

bool operator==(const WaitRecord &a, const WaitRecord &b) {
  return a.start == b.start && a.end == b.end && a.waiter == b.waiter && a.object == b.object &&
         a.holder == b.holder && a.releaser == b.releaser && a.state == b.state &&
         a.open == b.open && a.count == b.count;
}

// Everything the two models say differently, one line each.
QStringList differences(const SessionModel &whole, const SessionModel &stepped) {
  QStringList out;
  const TimeRange r = whole.resolve(Window::wholeRun());
  const int64_t origin = whole.startNs();
  if (stepped.resolve(Window::wholeRun()).t1 != r.t1 || stepped.startNs() != origin)
    out << QStringLiteral("the run: whole [0, %1), stepped [%2, %3)")
               .arg(ms(r.t1, origin), ms(stepped.startNs(), origin),
                    ms(stepped.resolve(Window::wholeRun()).t1, origin));
  auto counts = [](const char *what, int a, int b) {
    return QStringLiteral("%1: whole %2, stepped %3").arg(what).arg(a).arg(b);
  };
  if (whole.threadCount() != stepped.threadCount())
    return out << counts("threads", whole.threadCount(), stepped.threadCount());
  std::vector<StateInterval> w, s;
  for (int i = 0; i < whole.threadCount(); i++) {
    const ThreadInfo &ti = whole.thread(i);
    const QString who = QStringLiteral("thread %1 (%2)").arg(ti.tid).arg(ti.name);
    if (stepped.thread(i).tid != ti.tid || stepped.thread(i).startNs != ti.startNs ||
        stepped.thread(i).endNs != ti.endNs) {
      out << QStringLiteral("%1: whole tid %2 [%3, %4], stepped tid %5 [%6, %7]")
                 .arg(who)
                 .arg(ti.tid)
                 .arg(ti.startNs)
                 .arg(ti.endNs)
                 .arg(stepped.thread(i).tid)
                 .arg(stepped.thread(i).startNs)
                 .arg(stepped.thread(i).endNs);
      continue;
    }
    whole.intervals(i, r, &w);
    stepped.intervals(i, r, &s);
    out += intervalDifferences(who, w, s, origin);
    const StateTimes a = whole.threadStates(i, r), b = stepped.threadStates(i, r);
    for (int k = 0; k < kFinalStateCount; k++)
      if (a.ns[size_t(k)] != b.ns[size_t(k)])
        out << QStringLiteral("%1: %2 whole %3 ns, stepped %4 ns")
                   .arg(who, QString::fromUtf8(finalStateKey(FinalState(k))))
                   .arg(a.ns[size_t(k)])
                   .arg(b.ns[size_t(k)]);
    if (a.lifetimeNs != b.lifetimeNs)
      out << QStringLiteral("%1: lifetime whole %2 ns, stepped %3 ns")
                 .arg(who)
                 .arg(a.lifetimeNs)
                 .arg(b.lifetimeNs);
    const std::vector<int64_t> ca = whole.threadCpuTimes(i, r), cb = stepped.threadCpuTimes(i, r);
    for (size_t c = 0; c < std::max(ca.size(), cb.size()); c++) {
      const int64_t x = c < ca.size() ? ca[c] : 0, y = c < cb.size() ? cb[c] : 0;
      if (x != y)
        out << QStringLiteral("%1: cpu %2 whole %3 ns, stepped %4 ns")
                   .arg(who)
                   .arg(c)
                   .arg(x)
                   .arg(y);
    }
  }
  if (whole.syncObjectCount() != stepped.syncObjectCount())
    return out << counts("objects", whole.syncObjectCount(), stepped.syncObjectCount());
  std::vector<WaitRecord> wa, wb;
  for (int i = 0; i < whole.syncObjectCount(); i++) {
    const uint32_t id = whole.syncObject(i).id;
    whole.waits(id, r, &wa);
    stepped.waits(id, r, &wb);
    int said = 0;
    for (size_t k = 0; k < std::max(wa.size(), wb.size()) && said < kMaxPerThread; k++) {
      if (k < wa.size() && k < wb.size() && wa[k] == wb[k]) continue;
      out << QStringLiteral("object %1 wait %2: whole %3, stepped %4")
                 .arg(id)
                 .arg(k)
                 .arg(k < wa.size() ? describe(wa[k], origin) : "(none)",
                      k < wb.size() ? describe(wb[k], origin) : "(none)");
      said++;
    }
  }
  if (out.size() > kMaxLines) {
    const qsizetype more = out.size() - kMaxLines;
    out = out.mid(0, kMaxLines);
    out << QStringLiteral("... and %1 more").arg(more);
  }
  return out;
}

}  // namespace

class TestModelDerive : public QObject {
  Q_OBJECT

 private slots:
  void steppedMatchesWhole_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<qint64>("settleEveryNs");
    // Run by meson: the corpus too; by tests/e2e (a recording's check), only
    // the captures named.
    QStringList paths;
    if (qEnvironmentVariableIsSet("THREADMON_FUZZ_REGRESSIONS")) {
      const QString regressions = qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS");
      paths = capturesIn(regressions + "/../corpus");
      QVERIFY2(paths.size() > 20, qPrintable(regressions));
      paths += capturesIn(regressions);
    }
    const QString named = qEnvironmentVariable("THREADMON_DERIVE_CAPTURES");
    for (const QString &p : named.split(':', Qt::SkipEmptyParts)) paths += capturesIn(p);
    const bool everyFrame = qEnvironmentVariableIsSet("THREADMON_DERIVE_EVERY_FRAME");
    for (const QString &p : paths) {
      const QString name = QFileInfo(p).dir().dirName() + '/' + QFileInfo(p).fileName();
      if (everyFrame || QFileInfo(p).size() <= kEveryFrameUpTo)
        QTest::newRow(qPrintable(name + " every frame")) << p << qint64(0);
      QTest::newRow(qPrintable(name + " every 50 ms")) << p << qint64(kLiveSettleNs);
    }
  }

  void steppedMatchesWhole() {
    QFETCH(QString, path);
    QFETCH(qint64, settleEveryNs);
    SessionModel whole;
    if (CaptureReader::load(path, &whole).status == CaptureLoadResult::Unreadable) return;
    whole.settleNow();
    SessionModel stepped;
    QVERIFY(loadStepped(path, &stepped, settleEveryNs));
    const QStringList d = differences(whole, stepped);
    QVERIFY2(d.isEmpty(), qPrintable(QString::number(d.size()) + " differences:\n" + d.join('\n')));
  }
};

QTEST_GUILESS_MAIN(TestModelDerive)
#include "test_model_derive.moc"
