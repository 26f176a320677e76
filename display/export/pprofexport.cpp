#include "pprofexport.h"

#include <QFileInfo>
#include <algorithm>
#include <cmath>

#include "exportoutput.h"
#include "findings_util.h"

using tmon::findings_detail::objectName;
using tmon::findings_detail::threadName;
#include "protoenc.h"
#include "sessionmodel.h"
#include "symbolname.h"

namespace tmon {

namespace {

// perftools.profiles field numbers (github.com/google/pprof, proto/profile.proto).
namespace profile {
enum : uint32_t {
  kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5, kStringTable = 6,
  kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11, kPeriod = 12, kComment = 13,
  kDefaultSampleType = 14
};
}
namespace value_type {
enum : uint32_t { kType = 1, kUnit = 2 };
}
namespace sample {
enum : uint32_t { kLocationId = 1, kValue = 2, kLabel = 3 };
}
namespace label {
enum : uint32_t { kKey = 1, kStr = 2, kNum = 3 };
}
namespace mapping {
enum : uint32_t { kId = 1, kFilename = 5, kHasFunctions = 7, kHasFilenames = 8, kHasLineNumbers = 9 };
}
namespace location {
enum : uint32_t { kId = 1, kMappingId = 2, kAddress = 3, kLine = 4 };
}
namespace line {
enum : uint32_t { kFunctionId = 1, kLine = 2 };
}
namespace function {
enum : uint32_t { kId = 1, kName = 2, kSystemName = 3, kFilename = 4 };
}

// The profile's string table: index 0 is "".
class Strings {
 public:
  Strings() { id(QString()); }
  int64_t id(const QString &s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    const int64_t n = int64_t(list_.size());
    index_.emplace(s, n);
    list_.push_back(s);
    return n;
  }
  const std::vector<QString> &list() const { return list_; }

 private:
  std::unordered_map<QString, int64_t> index_;
  std::vector<QString> list_;
};

// Shares total out in proportion to weights, whole units, exactly (the
// largest remainders get the units rounding left over).
std::vector<uint64_t> shareOut(uint64_t total, const std::vector<double> &weights) {
  std::vector<uint64_t> out(weights.size(), 0);
  double sum = 0;
  for (double w : weights) sum += w;
  if (weights.empty() || sum <= 0) return out;
  std::vector<std::pair<double, size_t>> rest;
  uint64_t given = 0;
  for (size_t k = 0; k < weights.size(); k++) {
    const double exact = double(total) * weights[k] / sum;
    out[k] = uint64_t(std::floor(exact));
    given += out[k];
    rest.emplace_back(exact - double(out[k]), k);
  }
  std::sort(rest.begin(), rest.end(), [](auto &a, auto &b) { return a.first > b.first; });
  for (size_t k = 0; given < total && k < rest.size(); k++, given++) out[rest[k].second]++;
  return out;
}

QString functionOf(const QString &routine) { return splitFrame(routine).function; }

}  // namespace

PprofSink::PprofSink(ExportOutput *out, Profile profile) : out_(out), profile_(profile) {}
PprofSink::~PprofSink() = default;

size_t PprofSink::internStack(const QStringList &frames) {
  const QString key = frames.join(QChar(0));
  auto it = stackIndex_.find(key);
  if (it != stackIndex_.end()) return it->second;
  stacks_.push_back(frames);
  stackIndex_.emplace(key, stacks_.size() - 1);
  return stacks_.size() - 1;
}

void PprofSink::add(uint32_t object, const QStringList &frames, uint32_t tid, Values v) {
  if (!v.count && !v.ns) return;
  Values &to = values_[Key{object, internStack(frames), tid}];
  to.count += v.count;
  to.ns += v.ns;
  totalCount_ += v.count;
  totalNs_ += v.ns;
}

void PprofSink::begin(const SessionModel &m, int64_t t0) {
  t0_ = t0;
  sessionStart_ = m.startNs();
  realtimeStart_ = m.info().startRealtimeNs;
  exe_ = m.info().exe;
}

void PprofSink::noteThread(const SessionModel &names, uint32_t tid) {
  threads_[tid] = threadName(names, tid);
}

void PprofSink::noteLock(const SessionModel &names, const SyncObjectInfo &o) {
  LockInfo &l = locks_[o.id];
  l.name = objectName(names, o.id);
  l.kind = syncKindName(o.kind);
  l.address = o.address;
}

void PprofSink::window(const SessionModel &m, const TimeRange &span, bool first, bool) {
  if (first) begin(m, span.t0);
  t1_ = span.t1;
  for (int i = 0; i < m.threadCount(); i++) noteThread(m, m.thread(i).tid);
  for (int i = 0; i < m.syncObjectCount(); i++) noteLock(m, m.syncObject(i));
  for (int i = 0; i < m.syncObjectCount(); i++) {
    const SyncObjectInfo &o = m.syncObject(i);
    if (profile_ == Holds) {
      if (!isHeldKind(o.kind)) continue;
      addHolds(
          m, o, m.syncDelta(i, span),
          o.firstContentionStack.isEmpty() ? m.callSites(o.id, span) : std::vector<CallSite>());
      continue;
    }
    const bool internal = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
    std::unordered_map<uint32_t, double> waitedBy;
    if (internal) {
      for (const InternalWaiter &w : m.internalWaiters(o.id, span))
        waitedBy[w.tid] += double(w.waitNs + w.kernelNs);
    } else {
      for (const WaitRecord &w : m.waits(o.id, span)) waitedBy[w.waiter] += double(w.end - w.start);
    }
    SyncDelta d;
    if (!internal) d = m.syncDelta(i, span);
    addWaits(m, o, waitedBy, m.callSites(o.id, span), internal ? nullptr : &d);
  }
}

// The probe counts a call site's contentions and wait per lock, not per
// thread; the waits it timed say which thread waited how long on the lock.
// A site's figures go to the threads that waited on the lock and run the
// function the stack passes through (their start routine), in proportion
// to their waits on it; to all its waiters when none does.
void PprofSink::addWaits(const SessionModel &names, const SyncObjectInfo &o,
                         const std::unordered_map<uint32_t, double> &waitedBy,
                         std::vector<CallSite> sites, const SyncDelta *d) {
  Values siteSum;
  for (const CallSite &c : sites) {
    siteSum.count += c.contentions;
    siteSum.ns += c.waitNs;
  }
  if (d) {
    // What no site accounts for (a wait the probe could not unwind):
    // one sample at the lock's first contention, else the lock itself.
    Values rest{d->contentions > siteSum.count ? d->contentions - siteSum.count : 0,
                d->waitNs > siteSum.ns ? d->waitNs - siteSum.ns : 0};
    if (rest.count || rest.ns) {
      CallSite c;
      c.frames =
          o.firstContentionStack.isEmpty()
              ? QStringList{QStringLiteral("[no call stack] %1").arg(objectName(names, o.id))}
              : o.firstContentionStack;
      c.contentions = rest.count;
      c.waitNs = rest.ns;
      sites.push_back(c);
    }
  }
  for (const CallSite &c : sites) {
    QStringList functions;
    for (const QString &f : c.frames) functions << splitFrame(f).function;
    std::vector<uint32_t> tids;
    std::vector<double> weights;
    for (const auto &kv : waitedBy) {
      const int t = names.indexOfTid(kv.first);
      const QString routine = t >= 0 ? functionOf(names.thread(t).startRoutine) : QString();
      if (!routine.isEmpty() && functions.contains(routine)) {
        tids.push_back(kv.first);
        weights.push_back(kv.second);
      }
    }
    if (tids.empty())
      for (const auto &kv : waitedBy) {
        tids.push_back(kv.first);
        weights.push_back(kv.second);
      }
    if (tids.empty()) {
      add(o.id, c.frames, 0, Values{c.contentions, c.waitNs});
      continue;
    }
    const std::vector<uint64_t> counts = shareOut(c.contentions, weights);
    const std::vector<uint64_t> ns = shareOut(c.waitNs, weights);
    for (size_t k = 0; k < tids.size(); k++) add(o.id, c.frames, tids[k], Values{counts[k], ns[k]});
  }
}

// Holds: each lock's acquisitions and estimated hold time, at the stack of
// its first contention (the probe times holds per lock, not per site).
void PprofSink::addHolds(const SessionModel &names, const SyncObjectInfo &o, const SyncDelta &d,
                         const std::vector<CallSite> &sites) {
  QStringList frames = o.firstContentionStack;
  if (frames.isEmpty()) {
    const CallSite *site = busiestUnwound(sites);
    frames = site ? site->frames
             : sites.empty()
                 ? QStringList{QStringLiteral("[never contended] %1").arg(objectName(names, o.id))}
                 : sites.front().frames;
  }
  add(o.id, frames, 0, Values{d.acquisitions, d.holdNs});
}

QByteArray PprofSink::profileBytes() const {
  Strings strings;
  ProtoEncoder p;
  auto valueType = [&](uint32_t field, const char *type, const char *unit) {
    ProtoEncoder v;
    v.int64(value_type::kType, strings.id(QLatin1String(type)));
    v.int64(value_type::kUnit, strings.id(QLatin1String(unit)));
    p.message(field, v);
  };
  const bool waits = profile_ == Waits;
  valueType(profile::kSampleType, waits ? "contentions" : "holds", "count");
  valueType(profile::kSampleType, waits ? "delay" : "hold", "nanoseconds");

  // Mappings by module, functions by name and file, locations by frame.
  std::unordered_map<QString, uint64_t> mappings, functions, locations;
  ProtoEncoder tables;
  auto mappingId = [&](const QString &module) {
    auto it = mappings.find(module);
    if (it != mappings.end()) return it->second;
    const uint64_t id = mappings.size() + 1;
    mappings.emplace(module, id);
    ProtoEncoder e;
    e.varint(mapping::kId, id);
    e.int64(mapping::kFilename, strings.id(module));
    // Symbolized here: pprof must not look for the binaries.
    e.varint(mapping::kHasFunctions, 1);
    e.varint(mapping::kHasFilenames, 1);
    e.varint(mapping::kHasLineNumbers, 1);
    tables.message(profile::kMapping, e);
    return id;
  };
  auto locationId = [&](const QString &frame) {
    auto it = locations.find(frame);
    if (it != locations.end()) return it->second;
    const FrameParts parts = splitFrame(frame);
    QString file = parts.location.section(QLatin1String(" in "), 0, 0);
    int64_t lineNo = 0;
    const int colon = file.lastIndexOf(u':');
    if (colon > 0) {
      bool ok = false;
      lineNo = file.mid(colon + 1).toLongLong(&ok);
      if (ok)
        file.truncate(colon);
      else
        lineNo = 0;
    }
    const QString name = parts.function.isEmpty() ? frame : parts.function;
    const QString fkey = name + QChar(0) + file;
    uint64_t fid;
    auto fit = functions.find(fkey);
    if (fit != functions.end()) {
      fid = fit->second;
    } else {
      fid = functions.size() + 1;
      functions.emplace(fkey, fid);
      ProtoEncoder f;
      f.varint(function::kId, fid);
      f.int64(function::kName, strings.id(name));
      f.int64(function::kSystemName, strings.id(name));
      f.int64(function::kFilename, strings.id(file));
      tables.message(profile::kFunction, f);
    }
    const uint64_t id = locations.size() + 1;
    locations.emplace(frame, id);
    ProtoEncoder l;
    l.varint(location::kId, id);
    if (!parts.module.isEmpty()) l.varint(location::kMappingId, mappingId(parts.module));
    bool ok = false;
    const uint64_t offset = parts.offset.toULongLong(&ok, 16);
    if (ok) l.varint(location::kAddress, offset);
    ProtoEncoder ln;
    ln.varint(line::kFunctionId, fid);
    if (lineNo > 0) ln.int64(line::kLine, lineNo);
    l.message(location::kLine, ln);
    tables.message(profile::kLocation, l);
    return id;
  };
  auto strLabel = [&](ProtoEncoder *s, const char *key, const QString &value) {
    if (value.isEmpty()) return;
    ProtoEncoder l;
    l.int64(label::kKey, strings.id(QLatin1String(key)));
    l.int64(label::kStr, strings.id(value));
    s->message(sample::kLabel, l);
  };
  auto numLabel = [&](ProtoEncoder *s, const char *key, int64_t value) {
    ProtoEncoder l;
    l.int64(label::kKey, strings.id(QLatin1String(key)));
    l.int64(label::kNum, value);
    s->message(sample::kLabel, l);
  };
  for (const auto &kv : values_) {
    const auto &[object, stack, tid] = kv.first;
    std::vector<uint64_t> ids;
    for (const QString &f : stacks_[stack]) ids.push_back(locationId(f));
    ProtoEncoder s;
    s.packed(sample::kLocationId, ids);
    s.packed(sample::kValue, std::vector<uint64_t>{kv.second.count, kv.second.ns});
    auto lk = locks_.find(object);
    if (lk != locks_.end()) {
      strLabel(&s, "lock", lk->second.name);
      strLabel(&s, "lock_kind", lk->second.kind);
      strLabel(&s, "lock_addr", QStringLiteral("0x%1").arg(lk->second.address, 0, 16));
    }
    if (tid) {
      auto th = threads_.find(tid);
      strLabel(&s, "thread", th != threads_.end() ? th->second : QString::number(tid));
      numLabel(&s, "thread_id", tid);
    }
    p.message(profile::kSample, s);
  }
  QByteArray out = p.data() + tables.data();
  ProtoEncoder tail;
  // Time of the export's start on the wall clock.
  if (realtimeStart_) tail.int64(profile::kTimeNanos, int64_t(realtimeStart_) + (t0_ - sessionStart_));
  tail.int64(profile::kDurationNanos, std::max<int64_t>(0, t1_ - t0_));
  ProtoEncoder period;
  period.int64(value_type::kType, strings.id(QLatin1String(waits ? "contentions" : "holds")));
  period.int64(value_type::kUnit, strings.id(QLatin1String("count")));
  tail.message(profile::kPeriodType, period);
  tail.int64(profile::kPeriod, 1);
  tail.int64(profile::kComment,
             strings.id(QStringLiteral("threadmon export of %1").arg(QFileInfo(exe_).fileName())));
  tail.int64(profile::kDefaultSampleType, strings.id(QLatin1String(waits ? "delay" : "hold")));
  // The string table last: every id above is in it now.
  for (const QString &s : strings.list()) tail.string(profile::kStringTable, s);
  return out + tail.data();
}

bool PprofSink::finish(QString *error) {
  out_->write(profileBytes());
  if (!out_->close()) {
    *error = out_->error();
    return false;
  }
  return true;
}

}  // namespace tmon
