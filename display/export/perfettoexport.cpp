#include "perfettoexport.h"

#include <QFileInfo>
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "exportoutput.h"
#include "protoenc.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tmon {

namespace {

// Field numbers of google/perfetto's protos/perfetto/trace.
enum : uint32_t { kTracePacket = 1 };  // Trace.packet
namespace packet {
enum : uint32_t {
  kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
  kTrackDescriptor = 60, kTaskState = 117, kProcessTree = 122
};
enum : uint64_t { kIncrementalStateCleared = 1, kNeedsIncrementalState = 2 };  // SequenceFlags
}
namespace interned {  // InternedData; each entry's iid is field 1, its text field 2
enum : uint32_t {
  kEventCategories = 1, kEventNames = 2, kDebugAnnotationNames = 3,
  kDebugAnnotationStringValues = 29
};
enum : uint32_t { kIid = 1, kText = 2 };
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
  kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11,
  kCategories = 22, kName = 23, kDoubleCounterValue = 44, kFlowIds = 47, kTerminatingFlowIds = 48
};
enum : uint64_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };
}
namespace annotation {  // DebugAnnotation
enum : uint32_t { kNameIid = 1, kUintValue = 3, kStringValueIid = 17 };
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
constexpr int taskStateOf(FinalState s) {
  switch (s) {
    case FinalState::OnCpu: return task::kRunning;
    case FinalState::Runnable:
    case FinalState::Stolen: return task::kRunnable;
    case FinalState::IoWait: return task::kUninterruptible;
    case FinalState::Stopped: return task::kStopped;
    default: return task::kSleep;
  }
}

// The same by state, a table (a switch per interval was a fifth of the
// states' loop).
constexpr struct TaskStates {
  int8_t of[kFinalStateCount];
} kTaskStates = [] {
  TaskStates t{};
  for (int s = 0; s < kFinalStateCount; s++) t.of[s] = int8_t(taskStateOf(FinalState(s)));
  return t;
}();

// Interned names (InternedData, iids from 1 in each table): what every
// wait's events repeat is written once, at the start of the trace.
enum Category : uint64_t { kCatObject = 1, kCatWait, kCatWakeup };
enum AnnotationName : uint64_t { kArgObject = 1, kArgCallSite, kArgHolder, kArgReleaser };
// Event names: each state's label at 1 + its index, then "release".
uint64_t stateNameIid(FinalState s) { return 1 + uint64_t(s); }
constexpr uint64_t kReleaseNameIid = 1 + uint64_t(kFinalStateCount);
// Object names and call sites (debug annotation string values) by
// ExportObject::index: interned when first used.
uint64_t objectNameIid(const ExportObject &o) { return 1 + 2 * uint64_t(o.index); }
uint64_t callSiteIid(const ExportObject &o) { return 2 + 2 * uint64_t(o.index); }

void internedEntry(ProtoWriter *w, uint32_t table, uint64_t iid, const char *text, size_t n) {
  char *e = w->open(table);
  w->varint(interned::kIid, iid);
  w->bytes(interned::kText, text, n);
  w->close(e);
}

// Room for a packet's fields besides its names (the lengths' moves included).
constexpr size_t kPacketRoom = 192;

}  // namespace

void PerfettoSink::packet(uint32_t field, const ProtoEncoder &body, int64_t t) {
  ProtoWriter w{reserve(size_t(body.size()) + kPacketRoom)};
  char *pkt = w.open(kTracePacket);
  if (t >= 0) w.varint(packet::kTimestamp, uint64_t(t));
  w.varint(packet::kSequenceId, kSequence);
  w.bytes(field, body.bytes(), size_t(body.size()));
  w.close(pkt);
  commit(w.p);
}

// A TracePacket of one TrackEvent at t: its header up to the event's
// fields (eventStart), then endEvent. The keys and the constant fields
// are written as bytes known beforehand (the varints of the field numbers
// below 16 and of values below 128 are one byte each).
namespace {
static_assert(packet::kTimestamp < 16 && packet::kSequenceId < 16 && packet::kSequenceFlags < 16 &&
                  packet::kTrackEvent < 16 && event::kType < 16 && event::kTrackUuid < 16 &&
                  event::kCategoryIids < 16 && event::kNameIid < 16 && kSequence < 128,
              "one-byte keys and values");
constexpr char key(uint32_t field, ProtoEncoder::WireType t) {
  return char((field << 3) | t);
}
// The low 28 bits of v seven to a byte (the varint's first four bytes
// without their continuation bits).
inline uint32_t spread28(uint64_t v) {
  uint64_t x = v & 0xfffffff;
  x = (x & 0x3fff) | ((x & 0xfffc000) << 2);
  x = (x & 0x007f007f) | ((x & 0x3f803f80) << 1);
  return uint32_t(x);
}
inline void store32(char *p, uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline void store64(char *p, uint64_t v) {
  std::memcpy(p, &v, 8);
}
// A TrackEvent packet's fields before its event: its time, sequence and
// flags.
inline ProtoBytes stampOf(int64_t t) {
  ProtoBytes e;
  e.b[0] = key(packet::kTimestamp, ProtoEncoder::kVarint);
  char *p = ProtoEncoder::putVarint(e.b + 1, uint64_t(t));
  const char fields[] = {key(packet::kSequenceId, ProtoEncoder::kVarint), char(kSequence),
                         key(packet::kSequenceFlags, ProtoEncoder::kVarint),
                         char(packet::kNeedsIncrementalState)};
  std::memcpy(p, fields, sizeof fields);
  e.n = size_t(p + sizeof fields - e.b);
  return e;
}
}  // namespace

// The same from the time's bits above its low 28 kept in stamps_: a
// wait's two times and the next wait's share them (they change every
// 0.27 s), so only the low four bytes of the varint are spread for each.
inline ProtoBytes PerfettoSink::stamp(int64_t t) {
  const uint64_t u = uint64_t(t);
  const uint64_t high = u >> 28;
  if (__builtin_expect(high == 0, 0)) return stampOf(t);  // a varint of 4 bytes or fewer
  if (__builtin_expect(high != stamps_.high, 0)) {
    const ProtoBytes tail = stampOf(int64_t(high));  // high's varint and the fields after
    stamps_.high = high;
    stamps_.tailSize = uint32_t(tail.n - 1);
    std::memcpy(stamps_.tail, tail.b + 1, sizeof stamps_.tail);
  }
  // The low 28 bits seven to a byte, each with its continuation bit.
  const uint32_t low = spread28(u) | 0x80808080u;
  ProtoBytes e;
  e.b[0] = key(packet::kTimestamp, ProtoEncoder::kVarint);
  std::memcpy(e.b + 1, &low, 4);
  std::memcpy(e.b + 5, stamps_.tail, sizeof stamps_.tail);
  e.n = 5 + stamps_.tailSize;
  return e;
}

inline char *PerfettoSink::eventStart(ProtoWriter *w, const ProtoBytes &stamp, char **pkt) {
  *pkt = w->open(kTracePacket);
  w->put(stamp);
  return w->open(packet::kTrackEvent);
}

inline void PerfettoSink::endEvent(ProtoWriter *w, char *event, char *pkt) {
  w->close(event);
  w->close(pkt);
}

void PerfettoSink::internStatic() {
  // The first packet: the sequence's interned state starts here.
  ProtoWriter w{reserve(16384)};
  char *pkt = w.open(kTracePacket);
  w.varint(packet::kSequenceId, kSequence);
  w.varint(packet::kSequenceFlags, packet::kIncrementalStateCleared);
  char *data = w.open(packet::kInternedData);
  static const char *const categories[] = {"object", "wait", "wakeup"};
  for (uint64_t i = 0; i < 3; i++)
    internedEntry(&w, interned::kEventCategories, i + 1, categories[i], strlen(categories[i]));
  for (int s = 0; s < kFinalStateCount; s++) {
    const char *label = finalStateLabel(FinalState(s));
    internedEntry(&w, interned::kEventNames, stateNameIid(FinalState(s)), label, strlen(label));
  }
  internedEntry(&w, interned::kEventNames, kReleaseNameIid, "release", 7);
  static const char *const args[] = {"object", "call_site", "holder_tid", "released_by_tid"};
  for (uint64_t i = 0; i < 4; i++)
    internedEntry(&w, interned::kDebugAnnotationNames, i + 1, args[i], strlen(args[i]));
  w.close(data);
  w.close(pkt);
  commit(w.p);
}

void PerfettoSink::process(const SessionInfo &info, int cpuCount) {
  internStatic();
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
  const QByteArray comm = name.toUtf8();
  ProtoEncoder fields;
  fields.bytes(task::kComm, comm);
  fields.varint(task::kTid, t.tid);
  Task &k = tasks_[t.tid];
  k.setCommTid(fields);
  lastTask_ = nullptr;  // looked up again
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

void PerfettoSink::Task::setCommTid(const ProtoEncoder &fields) {
  commTid.assign(fields.bytes(), size_t(fields.size()));
  for (int s = 0; s < 8; s++) {
    Event &e = events[s];
    e.size = 0;
    if (commTid.size() > kCommRoom) continue;
    const int state = s == 0 ? task::kRunning : s;
    char scratch[64];
    ProtoWriter w{scratch};
    char *length = w.open(packet::kTaskState);
    if (s == task::kRunning) w.varint(task::kCpu, 0);  // its CPU stored at kCpuAt
    w.encoded(commTid.data(), commTid.size());
    w.varint(task::kState, uint64_t(state));
    static_assert(sizeof e.bytes >= 3 + 2 + kCommRoom + 2, "an event of one-byte lengths");
    *length = char(w.p - length - 1);
    e.size = uint8_t(w.p - scratch);
    std::memcpy(e.bytes, scratch, e.size);
  }
}

inline void PerfettoSink::taskState(Task *k, int64_t t, int state, int cpu) {
  // The packet as longTaskState writes it: the time's fields (the varint's
  // bytes past its low 28 bits and the sequence id the stamps'), then the
  // event made for the thread and state. Every length one byte: the
  // time's fields (13 bytes at most) and the event (41) are below 128.
  const bool running = state == task::kRunning;
  const Task::Event &e = k->events[running && cpu < 0 ? 0 : state];
  if (__builtin_expect(!e.size || (running && cpu >= 0x80) || uint64_t(t) >> 28 != stamps_.high, 0))
    return otherTaskState(k, t, state, cpu);
  char *const pkt = reserve(kPacketRoom);
  pkt[0] = key(kTracePacket, ProtoEncoder::kLength);
  pkt[2] = key(packet::kTimestamp, ProtoEncoder::kVarint);
  store32(pkt + 3, spread28(uint64_t(t)) | 0x80808080u);
  std::memcpy(pkt + 7, stamps_.tail, sizeof stamps_.tail);
  char *const event = pkt + 7 + stamps_.tailSize - 2;  // not the flags
  std::memcpy(event, e.bytes, sizeof e.bytes);
  if (running && cpu >= 0) event[Task::Event::kCpuAt] = char(cpu);
  char *const end = event + e.size;
  pkt[1] = char(end - pkt - 2);
  commit(end);
  k->last = state;
}

void PerfettoSink::otherTaskState(Task *k, int64_t t, int state, int cpu) {
  if (uint64_t(t) >> 28) stamp(t);  // the stamps kept for the states after it
  longTaskState(k, t, state, cpu);
}

void PerfettoSink::longTaskState(Task *k, int64_t t, int state, int cpu) {
  ProtoWriter w{reserve(k->commTid.size() + kPacketRoom)};
  char *pkt = w.open(kTracePacket);
  w.varint(packet::kTimestamp, uint64_t(t));
  w.varint(packet::kSequenceId, kSequence);
  char *e = w.open(packet::kTaskState);
  if (state == task::kRunning && cpu >= 0) w.varint(task::kCpu, uint32_t(cpu));
  w.encoded(k->commTid.data(), k->commTid.size());
  w.varint(task::kState, uint64_t(state));
  w.close(e);
  w.close(pkt);
  commit(w.p);
  k->last = state;
}

PerfettoSink::Task &PerfettoSink::task(uint32_t tid) {
  lastTask_ = &tasks_[tid];
  lastTid_ = tid;
  if (lastTask_->commTid.empty()) {  // a thread never described: its tid alone
    ProtoEncoder fields;
    fields.varint(task::kTid, tid);
    lastTask_->setCommTid(fields);
  }
  return *lastTask_;
}

void PerfettoSink::state(uint32_t tid, const StateInterval &iv) {
  const int s = kTaskStates.of[size_t(iv.state)];
  // A thread's states come one after another: one lookup per thread. Most
  // calls (a run of the same Linux state: 2.1 of 2.5 million for
  // half.tmcap) end here, before any register is saved for a write.
  Task *k = tid == lastTid_ ? lastTask_ : nullptr;
  if (k && k->last == s && s != task::kRunning) return;
  stateChange(k ? k : &task(tid), iv, s);
}

namespace {
// The FinalStates that show as each Linux state, a bit each: a run of them
// after a state of that Linux state writes nothing (but RUNNING's, whose
// move to another CPU goes through RUNNABLE).
static_assert(kFinalStateCount <= 32 && task::kDead < 8, "a bit per state");
constexpr struct SameStates {
  uint32_t of[8];
} kSameStates = [] {
  SameStates t{};
  for (int s = 0; s < kFinalStateCount; s++)
    if (taskStateOf(FinalState(s)) != task::kRunning) t.of[taskStateOf(FinalState(s))] |= 1u << s;
  return t;
}();
}  // namespace

void PerfettoSink::states(uint32_t tid, const StateInterval *runs, size_t n) {
  Task *k = tid == lastTid_ && lastTask_ ? lastTask_ : &task(tid);
  uint32_t same = kSameStates.of[k->last];
  for (const StateInterval *run = runs, *const end = runs + n; run != end; run++) {
    const unsigned s = unsigned(run->state);
    if (same >> s & 1) continue;  // as state() does
    stateChange(k, *run, kTaskStates.of[s]);
    same = kSameStates.of[k->last];
  }
}

inline void PerfettoSink::stateChange(Task *k, const StateInterval &iv, int s) {
  if (k->last == s && s != task::kRunning) return;  // a run of the same Linux state
  if (k->last == task::kRunning && s == task::kRunning)
    taskState(k, iv.start, task::kRunnable, -1);  // moved to another CPU
  taskState(k, iv.start, s, iv.cpu);
}

void PerfettoSink::threadEnd(uint32_t tid, int64_t t) {
  taskState(&task(tid), t, task::kDead, -1);
}

inline PerfettoSink::TrackBytes &PerfettoSink::trackEntry(uint64_t uuid) {
  static_assert(kTrackCache == 1u << 12, "12 bits of hash");
  return tracks_[(uint32_t(uuid ^ (uuid >> 24)) * 2654435761u) >> 20];
}

inline const ProtoBytes &PerfettoSink::trackBytes(uint64_t uuid) {
  TrackBytes &c = trackEntry(uuid);
  if (c.uuid != uuid) {
    c.uuid = uuid;
    c.bytes = ProtoBytes::varint(uuid);
  }
  return c.bytes;
}

// A sync object as a track of its waits, a child track per waiter (named
// after it) under one named after the object.
inline ProtoBytes PerfettoSink::objectTrack(const ExportWait &w) {
  const uint64_t uuid = objectWaiterTrack(w.objectId, w.waiter);
  // Tracks used lately (described, when an object's), by a hash of their
  // uuid: most waits find theirs here, without the set's lookup.
  TrackBytes &c = trackEntry(uuid);
  if (__builtin_expect(c.uuid == uuid, 1)) return c.bytes;
  return newObjectTrack(w, uuid, &c);
}

ProtoBytes PerfettoSink::newObjectTrack(const ExportWait &w, uint64_t uuid, TrackBytes *entry) {
  TrackBytes &c = *entry;
  c.uuid = uuid;
  c.bytes = ProtoBytes::varint(uuid);
  if (!objectTracks_.insert(uuid).second) return c.bytes;
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
  return c.bytes;
}

// A wait's object and call site as debug annotations of interned names
// and values, encoded once per object; the first use interns the values.
const PerfettoSink::ObjectAnnotations &PerfettoSink::annotations(const ExportObject &o,
                                                                 ProtoWriter *w) {
  if (o.index >= annotations_.size()) annotations_.resize(o.index + 1);
  ObjectAnnotations &a = annotations_[o.index];
  if (a.made) return a;
  a.made = true;
  char *data = w->open(packet::kInternedData);
  internedEntry(w, interned::kDebugAnnotationStringValues, objectNameIid(o), o.nameUtf8.constData(),
                size_t(o.nameUtf8.size()));
  if (!o.callSiteUtf8.isEmpty())
    internedEntry(w, interned::kDebugAnnotationStringValues, callSiteIid(o),
                  o.callSiteUtf8.constData(), size_t(o.callSiteUtf8.size()));
  w->close(data);
  ProtoEncoder e, arg;
  arg.varint(annotation::kNameIid, kArgObject);
  arg.varint(annotation::kStringValueIid, objectNameIid(o));
  e.message(event::kDebugAnnotations, arg);
  a.objectSize = uint8_t(e.size());
  if (!o.callSiteUtf8.isEmpty()) {
    arg.clear();
    arg.varint(annotation::kNameIid, kArgCallSite);
    arg.varint(annotation::kStringValueIid, callSiteIid(o));
    e.message(event::kDebugAnnotations, arg);
  }
  static_assert(sizeof a.both >= 2 * 12, "two annotations of an iid below 2^35");
  std::memcpy(a.both, e.bytes(), size_t(e.size()));
  a.bothSize = uint8_t(e.size());
  return a;
}

namespace {
// A TrackEvent's type and track (its uuid encoded).
inline void sliceFields(ProtoWriter *w, uint64_t type, const ProtoBytes &track) {
  const char fields[] = {key(event::kType, ProtoEncoder::kVarint), char(type),
                         key(event::kTrackUuid, ProtoEncoder::kVarint), 0};
  w->raw(fields);
  w->put(track);
}
// ... and its interned category and name (iids below 128: one byte each).
inline void namedSlice(ProtoWriter *w, uint64_t type, const ProtoBytes &track, Category cat,
                       uint64_t name) {
  sliceFields(w, type, track);
  if (name < 0x80) {
    const char fields[] = {key(event::kCategoryIids, ProtoEncoder::kVarint), char(cat),
                           key(event::kNameIid, ProtoEncoder::kVarint), char(name), 0};
    w->raw(fields);
  } else {
    w->varint(event::kCategoryIids, cat);
    w->varint(event::kNameIid, name);
  }
}
// A DebugAnnotation of an interned name (below 128) and an integer: its
// key, length and two fields' keys and name before the integer.
constexpr size_t kUintArgValueAt = 5;
inline void uintArg(ProtoWriter *w, AnnotationName name, uint64_t v) {
  char *a = w->open(event::kDebugAnnotations);
  const char fields[] = {key(annotation::kNameIid, ProtoEncoder::kVarint), char(name),
                         key(annotation::kUintValue, ProtoEncoder::kVarint), 0};
  w->raw(fields);
  w->rawVarint(v);
  *a = char(w->p - a - 1);  // below 128
}
}  // namespace

void PerfettoSink::waitEncoded(const ExportWait &w) {
  // The object's track first: describing it writes packets of its own.
  const ProtoBytes on = w.objectId ? objectTrack(w) : ProtoBytes{};
  const ExportObject &o = *w.object;
  // All of the wait's packets in one piece of the output.
  ProtoWriter b{reserve(size_t(o.nameUtf8.size() + o.callSiteUtf8.size()) + 5 * kPacketRoom)};
  const ProtoBytes start = stamp(w.start), end = stamp(w.end);
  char *pkt, *ev;
  if (w.objectId) {
    // On the object's track: its waiters one under another.
    ev = eventStart(&b, start, &pkt);
    namedSlice(&b, event::kSliceBegin, on, kCatObject, stateNameIid(w.state));
    endEvent(&b, ev, pkt);
    ev = eventStart(&b, end, &pkt);
    sliceFields(&b, event::kSliceEnd, on);
    endEvent(&b, ev, pkt);
  }
  const ProtoBytes track = trackBytes(kThreadTrack | w.waiter);
  pkt = b.open(kTracePacket);
  b.put(start);
  if (o.index >= annotations_.size() || !annotations_[o.index].made)
    annotations(o, &b);  // interns them, in this packet
  ev = b.open(packet::kTrackEvent);
  const ObjectAnnotations &names = annotations_[o.index];
  namedSlice(&b, event::kSliceBegin, track, kCatWait, stateNameIid(w.state));
  std::memcpy(b.p, names.both, sizeof names.both);
  b.p += names.bothSize;
  if (w.holder) uintArg(&b, kArgHolder, w.holder);
  if (w.releaser) uintArg(&b, kArgReleaser, w.releaser);
  endEvent(&b, ev, pkt);
  const bool flow = w.releaser && !w.open && w.releaser != w.waiter;
  const uint64_t id = flow ? ++flows_ : 0;
  if (flow) {
    // The release: an instant on the releaser's track, flowing to the wait.
    ev = eventStart(&b, end, &pkt);
    namedSlice(&b, event::kInstant, trackBytes(kThreadTrack | w.releaser), kCatWakeup,
               kReleaseNameIid);
    std::memcpy(b.p, names.both, sizeof names.both);
    b.p += names.objectSize;
    b.fixed64(event::kFlowIds, id);
    endEvent(&b, ev, pkt);
  }
  ev = eventStart(&b, end, &pkt);
  sliceFields(&b, event::kSliceEnd, track);
  if (flow) b.fixed64(event::kTerminatingFlowIds, id);
  endEvent(&b, ev, pkt);
  commit(b.p);
}

namespace {
// A TracePacket of one TrackEvent, each shorter than 128 bytes: their keys
// and a byte each for their lengths around the packet's time fields;
// returns where the packet starts, for endShort.
static_assert(kTracePacket < 16, "one-byte key");
inline char *startShort(ProtoWriter *w, const ProtoBytes &stamp) {
  char *pkt = w->p;
  pkt[0] = key(kTracePacket, ProtoEncoder::kLength);
  std::memcpy(pkt + 2, stamp.b, 16);
  char *ev = pkt + 2 + stamp.n;
  ev[0] = key(packet::kTrackEvent, ProtoEncoder::kLength);
  w->p = ev + 2;
  return pkt;
}
inline void endShort(ProtoWriter *w, char *pkt, const ProtoBytes &stamp) {
  const size_t n = size_t(w->p - pkt) - 2;
  pkt[1] = char(n);
  pkt[3 + stamp.n] = char(n - stamp.n - 2);
}
// Fields copied whole from an array of N bytes, n of them kept.
template <size_t N>
inline void copied(ProtoWriter *w, const char (&fields)[N], size_t n) {
  std::memcpy(w->p, fields, N);
  w->p += n;
}
// Fields encoded into a scratch buffer, then into an array of their own
// when they fit: false when they do not.
template <size_t N>
bool keep(const ProtoWriter &scratch, const char *start, char (&into)[N], uint8_t *size) {
  const size_t n = size_t(scratch.p - start);
  if (n > N) return false;
  std::memcpy(into, start, n);
  *size = uint8_t(n);
  return true;
}
}  // namespace

inline const PerfettoSink::TidBytes &PerfettoSink::tidBytes(uint32_t tid) {
  TidBytes &b = tidBytes_[(tid * 2654435761u) >> 22];  // 1024 entries
  if (__builtin_expect(b.tid == tid && b.holderSize, 1)) return b;
  makeTidBytes(tid, &b);
  return b;
}

void PerfettoSink::makeTidBytes(uint32_t tid, TidBytes *e) {
  TidBytes &b = *e;
  b.tid = tid;
  b.track = ProtoBytes::varint(kThreadTrack | tid);
  char scratch[64];
  ProtoWriter x{scratch};
  uintArg(&x, kArgHolder, tid);
  keep(x, scratch, b.holder, &b.holderSize);  // 10 bytes at most: a tid is 32 bits
  x.p = scratch;
  uintArg(&x, kArgReleaser, tid);
  keep(x, scratch, b.releaser, &b.releaserSize);
}

inline PerfettoSink::WaitBytes *PerfettoSink::waitBytes(const ExportWait &w) {
  static_assert(kWaitCache == 1u << 11, "11 bits of hash");
  const uint32_t h =
      uint32_t(uintptr_t(w.object) >> 3) + (w.waiter << 6) + uint32_t(w.state);
  WaitBytes &b = waitBytes_[(h * 2654435761u) >> 21];
  if (__builtin_expect(b.object == w.object && b.waiter == w.waiter && b.state == w.state, 1))
    return &b;
  return makeWaitBytes(w, &b) ? &b : nullptr;
}

bool PerfettoSink::makeWaitBytes(const ExportWait &w, WaitBytes *b) {
  b->object = nullptr;
  const ExportObject &o = *w.object;
  if (o.index >= annotations_.size() || !annotations_[o.index].made) return false;
  const ObjectAnnotations &names = annotations_[o.index];
  // The object's track described first, as an encoded wait does.
  const ProtoBytes on = w.objectId ? objectTrack(w) : ProtoBytes{};
  char scratch[256];
  ProtoWriter x{scratch};
  b->objectBeginSize = b->objectEndSize = 0;
  if (w.objectId) {
    char *ev = x.open(packet::kTrackEvent);
    namedSlice(&x, event::kSliceBegin, on, kCatObject, stateNameIid(w.state));
    x.close(ev);
    if (!keep(x, scratch, b->objectBegin, &b->objectBeginSize)) return false;
    x.p = scratch;
    ev = x.open(packet::kTrackEvent);
    sliceFields(&x, event::kSliceEnd, on);
    x.close(ev);
    if (!keep(x, scratch, b->objectEnd, &b->objectEndSize)) return false;
  }
  const ProtoBytes track = trackBytes(kThreadTrack | w.waiter);
  x.p = scratch;
  namedSlice(&x, event::kSliceBegin, track, kCatWait, stateNameIid(w.state));
  x.encoded(names.both, names.bothSize);
  if (!keep(x, scratch, b->begin, &b->beginSize)) return false;
  x.p = scratch;
  sliceFields(&x, event::kSliceEnd, track);
  if (!keep(x, scratch, b->end, &b->endSize)) return false;
  // A release instant's category, name and object, as namedSlice and the
  // object's annotation write them after its track.
  static_assert(kReleaseNameIid < 0x80, "one-byte iid");
  x.p = scratch;
  const char named[] = {key(event::kCategoryIids, ProtoEncoder::kVarint), char(kCatWakeup),
                        key(event::kNameIid, ProtoEncoder::kVarint), char(kReleaseNameIid), 0};
  x.raw(named);
  x.encoded(names.both, names.objectSize);
  if (!keep(x, scratch, b->flow, &b->flowSize)) return false;
  b->image.high = kNoImage;
  b->object = w.object;
  b->waiter = w.waiter;
  b->state = w.state;
  return true;
}

// The packets as waitEncoded writes them: each field but the times, the
// holder, the releaser and the flow copied from t. Each packet is below
// 128 bytes: a time's fields (15 bytes at most), the longest fields kept
// (64) and two arguments of 11. at: where the bytes that vary from wait
// to wait went (the flow's, when flowId is not 0).
inline char *PerfettoSink::writeWait(char *out, const WaitBytes &t, const ExportWait &w,
                                     uint64_t flowId, WaitPlaces *at) {
  ProtoWriter b{out};
  const ProtoBytes start = stamp(w.start), end = stamp(w.end);
  // A stamp's time varint starts after its key, 3 bytes into its packet.
  if (t.objectBeginSize) {
    at->start[0] = b.p + 3;
    b.p[0] = key(kTracePacket, ProtoEncoder::kLength);
    b.p[1] = char(start.n + t.objectBeginSize);
    std::memcpy(b.p + 2, start.b, 16);
    b.p += 2 + start.n;
    copied(&b, t.objectBegin, t.objectBeginSize);
    at->end[0] = b.p + 3;
    b.p[0] = key(kTracePacket, ProtoEncoder::kLength);
    b.p[1] = char(end.n + t.objectEndSize);
    std::memcpy(b.p + 2, end.b, 16);
    b.p += 2 + end.n;
    copied(&b, t.objectEnd, t.objectEndSize);
  }
  at->start[1] = b.p + 3;
  char *pkt = startShort(&b, start);
  copied(&b, t.begin, t.beginSize);
  if (w.holder) {
    const TidBytes &h = tidBytes(w.holder);
    at->holderArg = b.p + kUintArgValueAt;
    copied(&b, h.holder, h.holderSize);
  }
  const TidBytes *releaser = w.releaser ? &tidBytes(w.releaser) : nullptr;
  if (releaser) {
    at->releaserArg = b.p + kUintArgValueAt;
    copied(&b, releaser->releaser, releaser->releaserSize);
  }
  endShort(&b, pkt, start);
  if (flowId) {
    // The release: an instant on the releaser's track, flowing to the wait.
    at->end[1] = b.p + 3;
    pkt = startShort(&b, end);
    sliceFields(&b, event::kInstant, releaser->track);
    at->releaserTrack = b.p - releaser->track.n;
    copied(&b, t.flow, t.flowSize);
    b.fixed64(event::kFlowIds, flowId);
    at->flowId[0] = b.p - 8;
    endShort(&b, pkt, end);
  }
  at->end[2] = b.p + 3;
  pkt = startShort(&b, end);
  copied(&b, t.end, t.endSize);
  if (flowId) {
    b.fixed64(event::kTerminatingFlowIds, flowId);
    at->flowId[1] = b.p - 8;
  }
  endShort(&b, pkt, end);
  return b.p;
}

namespace {
// A varint's length and the values of that length, for a varint patched
// by a store of four bytes (none longer).
struct VarintShape4 {
  int bytes;
  uint32_t from, span;  // span 0: longer than four bytes
};
inline VarintShape4 shapeOf(uint64_t v) {
  const int n = int(ProtoEncoder::varintSize(v));
  const uint32_t from = n == 1 ? 1 : 1u << (7 * (n - 1));  // 0: no holder, no releaser
  return {n, from, n <= 4 ? uint32_t((uint64_t(1) << (7 * n)) - from) : 0};
}
// The four bytes at p but for a varint of shape's length there: its
// continuation bits and the bytes after it.
inline uint32_t fillAround(const char *p, const VarintShape4 &shape) {
  uint32_t fill;
  std::memcpy(&fill, p, 4);
  fill &= uint32_t(uint64_t(0xffffffffu) << (8 * shape.bytes));
  return fill | uint32_t(0x808080u >> (8 * (4 - shape.bytes)));
}
}  // namespace

// The image of t's common wait, made by writeWait for w's times, holder
// and releaser: the places of the bytes that vary kept.
bool PerfettoSink::makeImage(const ExportWait &w, WaitBytes *t) {
  WaitImage &m = t->image;
  m.high = kNoImage;
  const uint64_t high = uint64_t(w.start) >> 28;
  // A time below 2^28 is a varint of its own length.
  const VarintShape4 highShape = shapeOf(high);
  const VarintShape4 holder = w.holder ? shapeOf(w.holder) : VarintShape4{0, 0, 1};
  const VarintShape4 releaser = shapeOf(w.releaser);
  if (high == 0 || !highShape.span || !holder.span || !releaser.span) return false;
  char scratch[5 * kPacketRoom];
  WaitPlaces at;
  const char *end = writeWait(scratch, *t, w, 1, &at);
  const size_t size = size_t(end - scratch);
  if (size > sizeof m.bytes) return false;
  std::memcpy(m.bytes, scratch, size);
  m.size = uint8_t(size);
  if (!t->objectBeginSize) at.start[0] = at.start[1], at.end[0] = at.end[1];
  const auto place = [&](const char *p) { return uint8_t(p - scratch); };
  for (int i = 0; i < 2; i++) m.startAt[i] = place(at.start[i]);
  for (int i = 0; i < 3; i++) m.endAt[i] = place(at.end[i]);
  for (int i = 0; i < 2; i++) m.flowIdAt[i] = place(at.flowId[i]);
  m.releaserTrackAt = place(at.releaserTrack);
  const auto varint = [&](const VarintShape4 &shape, const char *p, VarintPlace *v) {
    v->from = shape.from;
    v->span = shape.span;
    if (shape.bytes) v->at = place(p), v->fill = fillAround(p, shape);
  };
  varint(highShape, at.start[1] + 4, &m.highVarint);
  varint(holder, at.holderArg, &m.holder);
  varint(releaser, at.releaserArg, &m.releaser);
  m.high = high;
  return true;
}

// The image's times moved to another high part of the same varint length:
// its bytes in each packet's time.
void PerfettoSink::moveImage(WaitImage *m, uint64_t high) {
  const uint32_t bytes = spread28(high) | m->highVarint.fill;
  for (uint8_t at : m->startAt) store32(m->bytes + at + 4, bytes);
  for (uint8_t at : m->endAt) store32(m->bytes + at + 4, bytes);
  m->high = high;
}

namespace {
// A wait's start and end (their low 28 bits), releaser and holder (tids
// below 2^28), each spread seven bits to a byte, the times' with their
// continuation bits; four at once with SSE2 (one at a time they were a
// fifth of a wait's instructions).
struct Spread {
  uint32_t start, end, releaser, holder;
};
inline Spread spreadWait(const ExportWait &w) {
  static_assert(offsetof(ExportWait, start) == 0 && offsetof(ExportWait, end) == 8 &&
                    offsetof(ExportWait, waiter) == 16 && offsetof(ExportWait, holder) == 24 &&
                    offsetof(ExportWait, releaser) == 28,
                "the loads below");
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const __m128i times = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&w.start));
  const __m128i tids = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&w.waiter));
  // start, end (their low halves), releaser, holder
  __m128i x = _mm_castps_si128(
      _mm_shuffle_ps(_mm_castsi128_ps(times), _mm_castsi128_ps(tids), _MM_SHUFFLE(2, 3, 2, 0)));
  x = _mm_and_si128(x, _mm_set1_epi32(0xfffffff));
  x = _mm_or_si128(_mm_and_si128(x, _mm_set1_epi32(0x3fff)),
                   _mm_slli_epi32(_mm_and_si128(x, _mm_set1_epi32(0xfffc000)), 2));
  x = _mm_or_si128(_mm_and_si128(x, _mm_set1_epi32(0x007f007f)),
                   _mm_slli_epi32(_mm_and_si128(x, _mm_set1_epi32(0x3f803f80)), 1));
  x = _mm_or_si128(x, _mm_set_epi32(0, 0, int(0x80808080u), int(0x80808080u)));
  return {uint32_t(_mm_cvtsi128_si32(x)), uint32_t(_mm_cvtsi128_si32(_mm_shuffle_epi32(x, 1))),
          uint32_t(_mm_cvtsi128_si32(_mm_shuffle_epi32(x, 2))),
          uint32_t(_mm_cvtsi128_si32(_mm_shuffle_epi32(x, 3)))};
#else
  return {spread28(uint64_t(w.start)) | 0x80808080u, spread28(uint64_t(w.end)) | 0x80808080u,
          spread28(w.releaser), spread28(w.holder)};
#endif
}
}  // namespace

// The image's bytes with the times, the holder's and releaser's tids and
// the flow's id stored at their places.
[[gnu::always_inline]] inline void PerfettoSink::waitImaged(const ExportWait &w,
                                                            const WaitImage &m) {
  char *p = reserve(sizeof m.bytes);
#pragma GCC unroll 16
  for (size_t i = 0; i < sizeof m.bytes; i += 16) std::memcpy(p + i, m.bytes + i, 16);
  const Spread v = spreadWait(w);
  const uint64_t id = ++flows_;
  store32(p + m.startAt[0], v.start);
  store32(p + m.startAt[1], v.start);
  store32(p + m.endAt[0], v.end);
  store32(p + m.endAt[1], v.end);
  store32(p + m.endAt[2], v.end);
  if (w.holder) store32(p + m.holder.at, v.holder | m.holder.fill);
  store32(p + m.releaser.at, v.releaser | m.releaser.fill);
  store32(p + m.releaserTrackAt, v.releaser | 0x80808080u);  // its varint's fifth byte kept
  store64(p + m.flowIdAt[0], id);
  store64(p + m.flowIdAt[1], id);
  commit(p + m.size);
}

namespace {
// The wait is of the common shape: released by another thread, whose
// instant flows to it, both times in one 2^28 ns.
inline bool commonShape(const ExportWait &w) {
  return w.releaser && !w.open && w.releaser != w.waiter &&
         uint64_t(w.start) >> 28 == uint64_t(w.end) >> 28;
}
}  // namespace

[[gnu::always_inline]] inline void PerfettoSink::waitInline(const ExportWait &w) {
  // Most waits (all but a hundredth of half.tmcap's) are of the common
  // shape and fit their object, waiter and state's image.
  // (commonShape: a releaser of 0 is outside every image's tids.)
  WaitBytes *t = waitBytes(w);
  if (__builtin_expect(t != nullptr, 1)) {
    const WaitImage &m = t->image;
    const uint64_t high = uint64_t(w.start) >> 28;
    if (__builtin_expect(!w.open && w.releaser != w.waiter && uint64_t(w.end) >> 28 == high &&
                             m.high == high && w.releaser - m.releaser.from < m.releaser.span &&
                             w.holder - m.holder.from < m.holder.span,
                         1))
      return waitImaged(w, m);
  }
  waitOther(w, t);
}

void PerfettoSink::wait(const ExportWait &w) { waitInline(w); }

void PerfettoSink::waitsInOrder(const ExportWait *waits, size_t n) {
  for (size_t i = 0; i < n; i++) waitInline(waits[i]);
}

void PerfettoSink::waitOther(const ExportWait &w, WaitBytes *t) {
  if (!t) return waitEncoded(w);
  if (commonShape(w)) {
    WaitImage &m = t->image;
    const uint64_t high = uint64_t(w.start) >> 28;
    const bool tidsFit =
        w.releaser - m.releaser.from < m.releaser.span && w.holder - m.holder.from < m.holder.span;
    if (m.high != kNoImage && tidsFit && high - m.highVarint.from < m.highVarint.span) {
      moveImage(&m, high);
      return waitImaged(w, m);
    }
    if (makeImage(w, t)) return waitImaged(w, m);
  }
  const bool flow = w.releaser && !w.open && w.releaser != w.waiter;
  WaitPlaces at;
  commit(writeWait(reserve(5 * kPacketRoom), *t, w, flow ? ++flows_ : 0, &at));
}

void PerfettoSink::counterValue(uint64_t trackUuid, int64_t t, double value) {
  uint64_t bits;
  static_assert(sizeof bits == sizeof value, "a double is 64 bits");
  std::memcpy(&bits, &value, sizeof bits);
  ProtoWriter e{reserve(kPacketRoom)};
  char *pkt, *ev = eventStart(&e, stamp(t), &pkt);
  sliceFields(&e, event::kCounter, ProtoBytes::varint(trackUuid));
  e.fixed64(event::kDoubleCounterValue, bits);
  endEvent(&e, ev, pkt);
  commit(e.p);
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

void PerfettoSink::refill(size_t n) {
  if (at_) out_->commit(at_);
  const size_t span = std::max(n, kSpan);
  at_ = out_->reserve(span);
  end_ = at_ + span;
}

bool PerfettoSink::finish(QString *error) {
  if (at_) out_->commit(at_);
  at_ = end_ = nullptr;
  if (!out_->close()) {
    *error = out_->error();
    return false;
  }
  return true;
}

}  // namespace tmon
