// pprof export: a capture's contended waits as Go's contention profiles are
// written (gzip'd perftools.profiles.Profile; sample types
// contentions/count and delay/nanoseconds, period type contentions/count),
// so that `go tool pprof`, Pyroscope, Parca and Grafana read it unchanged.
// Every sample is one lock, reached through one call stack (function, file
// and line per frame), by one thread; labels: lock, lock_kind, lock_addr,
// thread, thread_id. The holds profile has the locks' hold times instead
// (holds/count, hold/nanoseconds), by where each lock was first contended.
#ifndef THREADMON_PPROFEXPORT_H
#define THREADMON_PPROFEXPORT_H

#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "exportwalk.h"

namespace tmon {

class ExportOutput;

class PprofSink : public ExportSink {
 public:
  enum Profile { Waits, Holds };
  PprofSink(ExportOutput *out, Profile profile);
  ~PprofSink() override;
  void window(const SessionModel &m, const TimeRange &span, bool first, bool last) override;
  bool finish(QString *error) override;

  // What the profile holds, for the tool's closing line and the tests.
  uint64_t totalCount() const { return totalCount_; }
  uint64_t totalNs() const { return totalNs_; }
  size_t samples() const { return values_.size(); }

  // The serialized Profile, before gzip (tests).
  QByteArray profileBytes() const;

  // What window() does, in pieces, for a caller with its own figures (the
  // one pass of PprofPass): names gives the threads' and objects' names
  // and start routines. begin() first, then every thread and lock named,
  // then each lock's figures over [t0, t1], then finish().
  Profile profile() const { return profile_; }
  void begin(const SessionModel &names, int64_t t0);
  void setEnd(int64_t t1) { t1_ = t1; }
  void noteThread(const SessionModel &names, uint32_t tid);
  void noteLock(const SessionModel &names, const SyncObjectInfo &o);
  // waitedBy: the lock's waits' ns by waiter, iterated as the model's
  // order of waits fills it; d: the lock's counters (nullptr for a hidden
  // lock, whose sites are all it has).
  void addWaits(const SessionModel &names, const SyncObjectInfo &o,
                const std::unordered_map<uint32_t, double> &waitedBy, std::vector<CallSite> sites,
                const SyncDelta *d);
  // sites: the lock's call sites, needed when it has no first contention stack.
  void addHolds(const SessionModel &names, const SyncObjectInfo &o, const SyncDelta &d,
                const std::vector<CallSite> &sites);

 private:
  struct Values {
    uint64_t count = 0, ns = 0;
  };
  struct LockInfo {
    QString name, kind;
    uint64_t address = 0;
  };
  // A sample's key: object id, its stack (an index into stacks_), thread (0: none).
  using Key = std::tuple<uint32_t, size_t, uint32_t>;
  size_t internStack(const QStringList &frames);
  void add(uint32_t object, const QStringList &frames, uint32_t tid, Values v);

  ExportOutput *out_;
  Profile profile_;
  std::map<Key, Values> values_;
  std::vector<QStringList> stacks_;
  std::unordered_map<QString, size_t> stackIndex_;
  std::unordered_map<uint32_t, LockInfo> locks_;
  std::unordered_map<uint32_t, QString> threads_;
  int64_t t0_ = 0, t1_ = 0;
  uint64_t realtimeStart_ = 0;
  int64_t sessionStart_ = 0;
  QString exe_;
  uint64_t totalCount_ = 0, totalNs_ = 0;
};

}  // namespace tmon

#endif
