#include "perfettoexport.h"

#include <QFileInfo>
#include <cstring>

#include "exportoutput.h"
#include "protoenc.h"

namespace tmon {

namespace {

// Field numbers of google/perfetto's protos/perfetto/trace.
enum : uint32_t { kTracePacket = 1 };  // Trace.packet
namespace packet {
enum : uint32_t {
  kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kTrackDescriptor = 60,
  kTaskState = 117, kProcessTree = 122
};
}
namespace track {  // TrackDescriptor
enum : uint32_t { kUuid = 1, kName = 2, kProcess = 3, kThread = 4, kParentUuid = 5, kCounter = 8 };
}
namespace proc {  // ProcessDescriptor
enum : uint32_t { kPid = 1, kCmdline = 2, kName = 6 };
}
namespace thr {  // ThreadDescriptor
enum : uint32_t { kPid = 1, kTid = 2, kName = 5 };
}
namespace counter_desc {  // CounterDescriptor
enum : uint32_t { kUnitName = 6 };
}
namespace event {  // TrackEvent
enum : uint32_t {
  kDebugAnnotations = 4, kType = 9, kTrackUuid = 11, kCategories = 22, kName = 23,
  kDoubleCounterValue = 44, kFlowIds = 47, kTerminatingFlowIds = 48
};
enum : uint64_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };
}
namespace annotation {  // DebugAnnotation
enum : uint32_t { kUintValue = 3, kStringValue = 6, kName = 10 };
}
namespace task {  // GenericKernelTaskStateEvent
enum : uint32_t { kCpu = 1, kComm = 2, kTid = 3, kState = 4 };
enum : int { kCreated = 1, kRunnable = 2, kRunning = 3, kSleep = 4, kUninterruptible = 5,
             kStopped = 6, kDead = 7 };
}
namespace tree {  // GenericKernelProcessTree
enum : uint32_t { kProcesses = 1, kThreads = 2 };
enum : uint32_t { kPid = 1, kPpid = 2, kCmdline = 3 };                      // .Process
enum : uint32_t { kTid = 1, kThreadPid = 2, kComm = 3, kIsMainThread = 4 };  // .Thread
}

constexpr uint32_t kSequence = 1;
constexpr uint64_t kThreadTrack = 1ull << 32, kCounterTrack = 2ull << 32, kCpuTrack = 3ull << 32,
                   kObjectTrack = 4ull << 32;
// A sync object's track of one waiter's waits (a waiter's waits on one
// object never overlap; several waiters' do): object id and tid (below
// 2^22, Linux's pid_max) under a tag of its own.
uint64_t objectWaiterTrack(uint32_t object, uint32_t tid) {
  return (5ull << 56) | (uint64_t(object & 0xffffffu) << 24) | (tid & 0xffffffu);
}

// A threadmon state as Linux's: on a CPU runs; runnable and stolen wait
// for one; a wait in the kernel for I/O is uninterruptible; every wait for
// another thread or a timer is an interruptible sleep.
int taskStateOf(FinalState s) {
  switch (s) {
    case FinalState::OnCpu: return task::kRunning;
    case FinalState::Runnable:
    case FinalState::Stolen: return task::kRunnable;
    case FinalState::IoWait: return task::kUninterruptible;
    case FinalState::Stopped: return task::kStopped;
    default: return task::kSleep;
  }
}

void annotate(ProtoEncoder *e, const char *name, const QByteArray &utf8) {
  if (utf8.isEmpty()) return;
  ProtoEncoder a;
  a.string(annotation::kName, QLatin1String(name));
  a.bytes(annotation::kStringValue, utf8);
  e->message(event::kDebugAnnotations, a);
}
void annotate(ProtoEncoder *e, const char *name, uint64_t value) {
  ProtoEncoder a;
  a.string(annotation::kName, QLatin1String(name));
  a.varint(annotation::kUintValue, value);
  e->message(event::kDebugAnnotations, a);
}

}  // namespace

void PerfettoSink::packet(uint32_t field, const ProtoEncoder &body, int64_t t) {
  // Trace.packet's key and length, the packet's own fields, the body's key
  // and length, then the body: written in place in the output's buffer.
  constexpr uint64_t kTimestampKey = packet::kTimestamp << 3,
                     kSequenceKey = packet::kSequenceId << 3;
  const uint64_t n = uint64_t(body.size());
  const uint64_t inner =
      (t >= 0 ? ProtoEncoder::varintSize(kTimestampKey) + ProtoEncoder::varintSize(uint64_t(t))
              : 0) +
      ProtoEncoder::varintSize(kSequenceKey) + ProtoEncoder::varintSize(kSequence) +
      ProtoEncoder::lengthHeaderSize(field, n) + n;
  char *p = out_->reserve(n + 48);
  p = ProtoEncoder::putVarint(p, (kTracePacket << 3) | ProtoEncoder::kLength);
  p = ProtoEncoder::putVarint(p, inner);
  if (t >= 0) {
    p = ProtoEncoder::putVarint(p, kTimestampKey);
    p = ProtoEncoder::putVarint(p, uint64_t(t));
  }
  p = ProtoEncoder::putVarint(p, kSequenceKey);
  p = ProtoEncoder::putVarint(p, kSequence);
  p = ProtoEncoder::putVarint(p, (uint64_t(field) << 3) | ProtoEncoder::kLength);
  p = ProtoEncoder::putVarint(p, n);
  if (n) std::memcpy(p, body.bytes(), n);
  out_->commit(p + n);
}

void PerfettoSink::process(const SessionInfo &info, int cpuCount) {
  QString name = QFileInfo(info.exe).fileName();
  if (name.isEmpty()) name = QStringLiteral("process %1").arg(info.pid);
  ProtoEncoder pd;
  pd.varint(proc::kPid, info.pid);
  for (const QString &a : info.argv) pd.string(proc::kCmdline, a);
  pd.string(proc::kName, name);
  ProtoEncoder td;
  td.varint(track::kUuid, info.pid);
  td.message(track::kProcess, pd);
  packet(packet::kTrackDescriptor, td);
  // The process in the kernel's process tree, so the task states join it.
  ProtoEncoder proc;
  proc.varint(tree::kPid, info.pid);
  proc.varint(tree::kPpid, info.ppid);
  for (const QString &a : info.argv) proc.string(tree::kCmdline, a);
  ProtoEncoder pt;
  pt.message(tree::kProcesses, proc);
  packet(packet::kProcessTree, pt, std::max<int64_t>(0, origin()));
  for (int c = 0; c < cpuCount; c++)
    counterTrack(kCpuTrack | uint32_t(c), QStringLiteral("CPU %1 busy").arg(c), "%");
  for (int k = 0; k < kCounters; k++)
    counterTrack(kCounterTrack | uint32_t(k), QLatin1String(counterName(k)), "");
}

void PerfettoSink::counterTrack(uint64_t uuid, const QString &name, const char *unit) {
  ProtoEncoder cd;
  if (*unit) cd.string(counter_desc::kUnitName, QLatin1String(unit));
  ProtoEncoder td;
  td.varint(track::kUuid, uuid);
  td.varint(track::kParentUuid, pid());
  td.string(track::kName, name);
  td.message(track::kCounter, cd);
  packet(packet::kTrackDescriptor, td);
}

void PerfettoSink::thread(const ExportThread &t) {
  const QString name = t.name + (t.probe ? QStringLiteral(" [probe]") : QString());
  comm_.insert(t.tid, name);
  tasks_[t.tid].comm = name.toUtf8();
  ProtoEncoder thd;
  thd.varint(thr::kPid, pid());
  thd.varint(thr::kTid, t.tid);
  thd.string(thr::kName, name);
  ProtoEncoder td;
  td.varint(track::kUuid, kThreadTrack | t.tid);
  td.varint(track::kParentUuid, pid());
  td.message(track::kThread, thd);
  packet(packet::kTrackDescriptor, td);
  ProtoEncoder th;
  th.varint(tree::kTid, t.tid);
  th.varint(tree::kThreadPid, pid());
  th.string(tree::kComm, name);
  if (t.main) th.varint(tree::kIsMainThread, 1);
  ProtoEncoder pt;
  pt.message(tree::kThreads, th);
  packet(packet::kProcessTree, pt, std::max<int64_t>(0, origin()));
}

void PerfettoSink::taskState(Task *k, uint32_t tid, int64_t t, int state, int cpu) {
  ProtoEncoder e;
  if (state == task::kRunning && cpu >= 0) e.varint(task::kCpu, uint32_t(cpu));
  e.bytes(task::kComm, k->comm);
  e.varint(task::kTid, tid);
  e.varint(task::kState, uint64_t(state));
  packet(packet::kTaskState, e, t);
  k->last = state;
}

void PerfettoSink::state(uint32_t tid, const StateInterval &iv) {
  const int s = taskStateOf(iv.state);
  Task &k = tasks_[tid];
  if (k.last == s && s != task::kRunning) return;  // a run of the same Linux state
  if (k.last == task::kRunning && s == task::kRunning)
    taskState(&k, tid, iv.start, task::kRunnable, -1);  // moved to another CPU
  taskState(&k, tid, iv.start, s, iv.cpu);
}

void PerfettoSink::threadEnd(uint32_t tid, int64_t t) {
  taskState(&tasks_[tid], tid, t, task::kDead, -1);
}

// A sync object as a track of its waits, a child track per waiter (named
// after it) under one named after the object.
uint64_t PerfettoSink::objectTrack(const ExportWait &w) {
  const uint64_t uuid = objectWaiterTrack(w.objectId, w.waiter);
  if (!objectTracks_.insert(uuid).second) return uuid;
  const uint64_t parent = kObjectTrack | w.objectId;
  if (objectTracks_.insert(parent).second) {
    ProtoEncoder td;
    td.varint(track::kUuid, parent);
    td.varint(track::kParentUuid, pid());
    td.string(track::kName, w.object->name);
    packet(packet::kTrackDescriptor, td);
  }
  ProtoEncoder td;
  td.varint(track::kUuid, uuid);
  td.varint(track::kParentUuid, parent);
  td.string(track::kName, comm_.value(w.waiter, QString::number(w.waiter)));
  packet(packet::kTrackDescriptor, td);
  return uuid;
}

// A wait's object and call site annotations, encoded once per object.
const PerfettoSink::ObjectAnnotations &PerfettoSink::annotations(const ExportObject &o) {
  if (o.index >= annotations_.size()) annotations_.resize(o.index + 1);
  ObjectAnnotations &a = annotations_[o.index];
  if (!a.made) {
    a.made = true;
    ProtoEncoder e;
    annotate(&e, "object", o.nameUtf8);
    a.objectSize = size_t(e.size());
    annotate(&e, "call_site", o.callSiteUtf8);
    a.both.assign(e.bytes(), size_t(e.size()));
  }
  return a;
}

// A slice's category and name (its state's label) as encoded fields, by
// state: the same few for a million waits.
const std::string &PerfettoSink::sliceNames(bool onObject, FinalState s) {
  std::string &f = (onObject ? objectSliceNames_ : waitSliceNames_)[size_t(s)];
  if (f.empty()) {
    ProtoEncoder e;
    e.string(event::kCategories, QLatin1String(onObject ? "object" : "wait"));
    e.string(event::kName, QLatin1String(finalStateLabel(s)));
    f.assign(e.bytes(), size_t(e.size()));
  }
  return f;
}

void PerfettoSink::wait(const ExportWait &w) {
  if (w.objectId) {
    // On the object's track: its waiters one under another.
    const uint64_t on = objectTrack(w);
    const std::string &names = sliceNames(true, w.state);
    ProtoEncoder b;
    b.varint(event::kType, event::kSliceBegin);
    b.varint(event::kTrackUuid, on);
    b.encoded(names.data(), names.size());
    packet(packet::kTrackEvent, b, w.start);
    ProtoEncoder e;
    e.varint(event::kType, event::kSliceEnd);
    e.varint(event::kTrackUuid, on);
    packet(packet::kTrackEvent, e, w.end);
  }
  const uint64_t trackUuid = kThreadTrack | w.waiter;
  const std::string &sliceNamed = sliceNames(false, w.state);
  const ObjectAnnotations &names = annotations(*w.object);
  ProtoEncoder b;
  b.varint(event::kType, event::kSliceBegin);
  b.varint(event::kTrackUuid, trackUuid);
  b.encoded(sliceNamed.data(), sliceNamed.size());
  b.encoded(names.both.data(), names.both.size());
  if (w.holder) annotate(&b, "holder_tid", w.holder);
  if (w.releaser) annotate(&b, "released_by_tid", w.releaser);
  packet(packet::kTrackEvent, b, w.start);
  const bool flow = w.releaser && !w.open && w.releaser != w.waiter;
  const uint64_t id = flow ? ++flows_ : 0;
  if (flow) {
    // The release: an instant on the releaser's track, flowing to the wait.
    static const std::string released = [] {
      ProtoEncoder e;
      e.string(event::kCategories, QLatin1String("wakeup"));
      e.string(event::kName, QLatin1String("release"));
      return std::string(e.bytes(), size_t(e.size()));
    }();
    ProtoEncoder r;
    r.varint(event::kType, event::kInstant);
    r.varint(event::kTrackUuid, kThreadTrack | w.releaser);
    r.encoded(released.data(), released.size());
    r.encoded(names.both.data(), names.objectSize);
    r.fixed64(event::kFlowIds, id);
    packet(packet::kTrackEvent, r, w.end);
  }
  ProtoEncoder e;
  e.varint(event::kType, event::kSliceEnd);
  e.varint(event::kTrackUuid, trackUuid);
  if (flow) e.fixed64(event::kTerminatingFlowIds, id);
  packet(packet::kTrackEvent, e, w.end);
}

void PerfettoSink::counterValue(uint64_t trackUuid, int64_t t, double value) {
  ProtoEncoder e;
  e.varint(event::kType, event::kCounter);
  e.varint(event::kTrackUuid, trackUuid);
  uint64_t bits;
  static_assert(sizeof bits == sizeof value, "a double is 64 bits");
  std::memcpy(&bits, &value, sizeof bits);
  e.fixed64(event::kDoubleCounterValue, bits);
  packet(packet::kTrackEvent, e, t);
}

void PerfettoSink::userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) {
  const uint64_t uuid = (6ull << 56) | tid;
  if (objectTracks_.insert(uuid).second) {
    ProtoEncoder td;
    td.varint(track::kUuid, uuid);
    td.varint(track::kParentUuid, kThreadTrack | tid);
    td.string(track::kName, QStringLiteral("user threads on %1").arg(comm_.value(tid)));
    packet(packet::kTrackDescriptor, td);
  }
  ProtoEncoder b;
  b.varint(event::kType, event::kSliceBegin);
  b.varint(event::kTrackUuid, uuid);
  b.string(event::kCategories, QLatin1String("user_thread"));
  b.string(event::kName, userThread);
  packet(packet::kTrackEvent, b, start);
  ProtoEncoder e;
  e.varint(event::kType, event::kSliceEnd);
  e.varint(event::kTrackUuid, uuid);
  packet(packet::kTrackEvent, e, end);
}

void PerfettoSink::cpuBusy(int cpu, int64_t t, double percent) {
  counterValue(kCpuTrack | uint32_t(cpu), t, percent);
}

void PerfettoSink::counter(int which, int64_t t, double value) {
  counterValue(kCounterTrack | uint32_t(which), t, value);
}

bool PerfettoSink::finish(QString *error) {
  if (!out_->close()) {
    *error = out_->error();
    return false;
  }
  return true;
}

}  // namespace tmon
