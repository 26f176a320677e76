#include "chromeexport.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "exportoutput.h"

namespace tmon {

using namespace chromenum;

namespace {
QByteArray quoted(const QString &s) {
  // A JSON string, escaped as QJsonDocument escapes it.
  QByteArray doc = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
  return doc.mid(1, doc.size() - 2);
}

// Events are written straight into the output's buffer (ExportOutput::
// reserve): the states and waits are millions of events, and building each
// in a string of its own and appending it was most of the CPU.
template <size_t N>
char *putLiteral(char *p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + N - 1;
}
// N bytes (a multiple of 16), Wide: 32 at a time, in the writers made for
// AVX2 one load and one store each (GCC copies a fixed size 16 bytes at a
// time even there); else as memcpy copies them (32-byte vectors outside
// AVX2 cost 140 M instructions more on half.tmcap).
typedef char Block32 __attribute__((vector_size(32), aligned(1), may_alias));
typedef char Block16 __attribute__((vector_size(16), aligned(1), may_alias));
template <size_t N, bool Wide>
[[gnu::always_inline]] inline void copyBlocks(char *to, const void *from) {
  static_assert(N % 16 == 0, "whole blocks");
  if (!Wide) {
    std::memcpy(to, from, N);
    return;
  }
  const char *f = static_cast<const char *>(from);
  for (size_t i = 0; i + 32 <= N; i += 32)
    *reinterpret_cast<Block32 *>(to + i) = *reinterpret_cast<const Block32 *>(f + i);
  if (N % 32)
    *reinterpret_cast<Block16 *>(to + N - 16) = *reinterpret_cast<const Block16 *>(f + N - 16);
}
// The writers made for AVX2, on x86-64 (-DTHREADMON_NO_AVX2: never;
// THREADMON_EXPORT_NO_AVX2 set: not in this run, for the tests to compare
// the two on such a CPU).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(THREADMON_NO_AVX2)
#define TM_AVX2 [[gnu::target("avx2")]]
bool haveAvx2() {
  return __builtin_cpu_supports("avx2") && !qEnvironmentVariableIsSet("THREADMON_EXPORT_NO_AVX2");
}
#else
#define TM_AVX2
bool haveAvx2() {
  return false;
}
#endif

// A flow's finish up to its id, padded to whole blocks.
constexpr char kFlowFinish[64] =
    ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":";
constexpr size_t kFlowFinishSize =
    sizeof ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":" - 1;

// The number tables' address made opaque, so that the compiler keeps it in
// a register (or loads it once), not making each table's again per time.
inline void hideTables(TensText *tens) {
  asm("" : "+r"(tens->tables));
}

char *putString(char *p, const std::string &s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// The longest key and label of a state (the prefixes' room is checked
// against them when compiled).
constexpr size_t kLongestKeyAndLabel = [] {
  size_t longest = 0;
#define TM_FINAL_STATE(name, key, shortLabel, label, rgb, wire, kind, column) \
  longest = std::max(longest, sizeof key + sizeof label - 2);
#include "states.def"
#undef TM_FINAL_STATE
  return longest;
}();
// '{"ph":"X","cat":"KEY","name":"LABEL","pid":PID,"tid":TID,"ts":', pid and
// tid of 10 digits at most.
constexpr size_t kLongestStatePrefix =
    sizeof "{\"ph\":\"X\",\"cat\":\"\",\"name\":\"\",\"pid\":,\"tid\":,\"ts\":" - 1 +
    kLongestKeyAndLabel + 20;
// The longest label (a wait's name).
constexpr size_t kLongestLabel = [] {
  size_t longest = 0;
#define TM_FINAL_STATE(name, key, shortLabel, label, rgb, wire, kind, column) \
  longest = std::max(longest, sizeof label - 1);
#include "states.def"
#undef TM_FINAL_STATE
  return longest;
}();
// '{"ph":"X","cat":"wait","name":"LABEL","pid":PID,"tid":TRACK,"ts":'.
constexpr size_t kLongestWaitStart =
    sizeof "{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"\",\"pid\":,\"tid\":,\"ts\":" - 1 +
    kLongestKeyAndLabel + 20;
// Room for a state event's times, its ",dur": and its arguments (copied as
// 64 bytes), past its prefix's copy.
constexpr size_t kStateRoom = 112 + 2 * 32 + 8 + 64;
// A wait's room but for its names: its head and tid, times, holder, its
// flow's two events (with their fixed-size copies' overshoot).
constexpr size_t kWaitRoom = 1024;
}  // namespace

template <size_t Room>
void ChromeSink::Piece<Room>::set(const std::string &s) {
  // Only texts known to fit (checked when compiled, or by their callers).
  size = uint32_t(std::min(s.size(), Room));
  std::memcpy(text, s.data(), size);
}

inline char *ChromeSink::begin(size_t n) {
  if (__builtin_expect(size_t(roomEnd_ - at_) < n + 64, 0)) moreRoom(n);
  return at_;
}

void ChromeSink::moreRoom(size_t n) {
  constexpr size_t kRoom = 64 << 10;
  const bool first = !at_;
  if (!first) out_->commit(at_);
  n = std::max(n + 64, kRoom);  // 64: the head
  at_ = out_->reserve(n);
  roomEnd_ = at_ + n;
  if (first) at_ = putLiteral(at_, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
}

void ChromeSink::FlowPiece::setFlowEnd(uint32_t pid, uint32_t tid) {
  char *p = putLiteral(putDecimal(putLiteral(flowEnd, ",\"pid\":"), pid), ",\"tid\":");
  flowEndSize = uint32_t(putLiteral(putDecimal(p, tid), ",\"ts\":") - flowEnd);
}

inline const ChromeSink::FlowPiece &ChromeSink::waitStart(FinalState s, uint32_t waiter) {
  return waitStarts_.get(uint64_t(s) << 32 | waiter, [this](uint64_t key, FlowPiece *w) {
    static_assert(kLongestWaitStart <= sizeof w->text, "a wait's start fits its piece");
    const auto state = FinalState(key >> 32);
    const uint32_t track = waitTrack(uint32_t(key));
    char *p = putLiteral(w->text, "{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"");
    p = putLiteral(putString(p, finalStateLabel(state)), "\",\"pid\":");
    p = putDecimal(putLiteral(putDecimal(p, pid()), ",\"tid\":"), track);
    w->size = uint32_t(putLiteral(p, ",\"ts\":") - w->text);
    w->setFlowEnd(pid(), track);
  });
}

inline const ChromeSink::FlowPiece &ChromeSink::release(uint32_t holder, uint32_t releaser) {
  return releases_.get(uint64_t(holder) << 32 | releaser, [this](uint64_t key, FlowPiece *r) {
    const uint32_t by = uint32_t(key >> 32), to = uint32_t(key);  // holder, releaser
    char *p = r->text;
    if (by) p = putDecimal(putLiteral(p, ",\"holder_tid\":"), by);
    p = putDecimal(putLiteral(p, ",\"released_by_tid\":"), to);
    p = putLiteral(p, "}},\n{\"ph\":\"s\",\"cat\":\"wakeup\",\"name\":\"released\",\"id\":");
    r->size = uint32_t(p - r->text);
    r->setFlowEnd(pid(), to);
  });
}

const ChromeSink::Names &ChromeSink::counterHead(bool cpu, int which) {
  // '{"ph":"C","name":NAME,"pid":PID,"ts":'
  std::vector<Names> &heads = cpu ? cpuHeads_ : counterHeads_;
  if (size_t(which) >= heads.size()) heads.resize(size_t(which) + 1);
  Names &h = heads[size_t(which)];
  if (h.text.empty()) {
    const QByteArray name = cpu ? "\"CPU " + QByteArray::number(which) + " busy %\""
                                : quoted(QLatin1String(counterName(which)));
    h.text = "{\"ph\":\"C\",\"name\":" + name.toStdString() + ",\"pid\":" + std::to_string(pid()) +
             ",\"ts\":";
    h.size = h.text.size();
  }
  return h;
}

const std::string &ChromeSink::quotedOnce(const QString &s) {
  auto it = quoted_.find(s);
  if (it == quoted_.end()) it = quoted_.insert(s, quoted(s).toStdString());
  return *it;
}

template <bool Wide>
[[gnu::always_inline]] inline char *ChromeSink::stateEnd(char *p, const StateInterval &iv,
                                                         TensText *tens, const Piece<28> *args) {
  const int64_t duration = iv.end - iv.start;
  // Most states have no CPU (asleep, runnable, blocked on an object): the
  // table by object first; half have no arguments at all (asleep,
  // runnable): their end after the duration's decimals, in the same copy.
  if (__builtin_expect(iv.cpu == -1, 1)) {
    if (!iv.object) return putEndedDuration(p, duration, *tens->tables);
    p = putDuration(p, duration, *tens->tables);
    if (__builtin_expect(iv.object < kBlockedArgs, 1)) {
      const Piece<28> &a = args[iv.object];
      copyBlocks<32, Wide>(p, &a);  // the text and its size, whole
      return p + a.size;
    }
  } else {
    p = putDuration(p, duration, *tens->tables);
    if (__builtin_expect(!iv.object && uint32_t(iv.cpu) < kCpuArgs, 1)) {
      const Piece<28> &a = args[kBlockedArgs + uint32_t(iv.cpu)];
      copyBlocks<32, Wide>(p, &a);
      return p + a.size;
    }
  }
  return otherArgs(p, iv.cpu, iv.object);
}

template <size_t Room>
void ChromeSink::makeArgs(int cpu, uint32_t object, Piece<Room> *made) {
  if (cpu < 0 && !object) return made->set("},\n");  // a CPU below -1: none, as -1
  std::string a = ",\"args\":{";
  if (cpu >= 0) a += "\"cpu\":" + std::to_string(cpu);
  if (object) a += std::string(cpu >= 0 ? "," : "") + "\"object_id\":" + std::to_string(object);
  made->set(a + "}},\n");
}

void ChromeSink::makeArgsTable() {
  argsTable_.resize(kBlockedArgs + kCpuArgs);
  for (uint32_t o = 0; o < kBlockedArgs; o++) makeArgs(-1, o, &argsTable_[o]);
  for (uint32_t c = 0; c < kCpuArgs; c++) makeArgs(int(c), 0, &argsTable_[kBlockedArgs + c]);
}

char *ChromeSink::otherArgs(char *p, int cpu, uint32_t object) {
  const Piece<60> &a =
      objectArgs_.get(uint64_t(uint32_t(cpu)) << 32 | object, [](uint64_t key, Piece<60> *made) {
        makeArgs(int(uint32_t(key >> 32)), uint32_t(key), made);
      });
  std::memcpy(p, &a, 64);
  return p + a.size;
}

namespace {
// 16 bytes from kUnitBytes + 16 - n: 1 at byte n - 1 (an id of n digits
// counted up); from kCarryBytes + 16 - n, -9 there and 1 before it (its
// last digit, a 9, carried).
constexpr char kUnitBytes[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
constexpr char kCarryBytes[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, -9};
}  // namespace

inline void ChromeSink::loadFlowIdCount(FlowId *id) const {
  id->size = flowIdSize_;
  std::memcpy(&id->unit, kUnitBytes + 16 - id->size, 16);
  std::memcpy(&id->carry, kCarryBytes + 16 - id->size, 16);
  id->untilCarry = uint32_t('9' - flowId_[id->size - 1]);
  id->tensLeft = id->size > 1 ? uint32_t('9' - flowId_[id->size - 2]) : 0;
}

ChromeSink::FlowId ChromeSink::flowIdNow() const {
  FlowId id;
  std::memcpy(&id.text, flowId_, 16);
  loadFlowIdCount(&id);
  return id;
}

void ChromeSink::keepFlowId(FlowId::Digits text) {
  std::memcpy(flowId_, &text, 16);
}

ChromeSink::FlowId::Digits ChromeSink::carriedFlowId(FlowId::Digits text) {
  keepFlowId(text);
  carryFlowId();
  std::memcpy(&text, flowId_, 16);
  return text;
}

inline void ChromeSink::nextFlowId(FlowId *id) {
  if (__builtin_expect(id->untilCarry != 0, 1)) {
    id->untilCarry--;
    id->text += id->unit;
  } else if (__builtin_expect(id->tensLeft != 0, 1)) {
    id->tensLeft--;
    id->untilCarry = 9;
    id->text += id->carry;
  } else {
    id->text = carriedFlowId(id->text);
    loadFlowIdCount(id);
  }
}

void ChromeSink::carryFlowId() {
  for (char *d = flowId_ + flowIdSize_;;) {
    if (d == flowId_) {  // 9...9 + 1: a digit more
      std::memmove(flowId_ + 1, flowId_, flowIdSize_++);
      flowId_[0] = '1';
      return;
    }
    if (*--d != '9') {
      ++*d;
      return;
    }
    *d = '0';
  }
}

inline const ChromeSink::Names &ChromeSink::objectNames(const ExportObject &o) {
  if (__builtin_expect(o.formatText != nullptr, 1))
    return *static_cast<const Names *>(o.formatText);
  return makeObjectNames(o);
}

const ChromeSink::Names &ChromeSink::makeObjectNames(const ExportObject &o) {
  Names &q = namesMade_.emplace_back();
  o.formatText = &q;
  q.text = ",\"args\":{\"object\":" + quoted(o.name).toStdString();
  if (!o.callSite.isEmpty()) q.text += ",\"call_site\":" + quoted(o.callSite).toStdString();
  q.size = q.text.size();
  q.text.resize(std::max(q.size, kNamesRoom), ' ');
  return q;
}

void ChromeSink::event(const QByteArray &json) {
  event(json.constData(), json.size());
}

void ChromeSink::event(const char *json, qsizetype n) {
  char *p = begin(size_t(n));
  if (n > 0) std::memcpy(p, json, size_t(n));
  done(putLiteral(p + n, ",\n"));
}

void ChromeSink::process(const SessionInfo &info, int) {
  const QByteArray pid = QByteArray::number(info.pid);
  QString name = QFileInfo(info.exe).fileName();
  if (name.isEmpty()) name = QStringLiteral("process %1").arg(info.pid);
  event("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + pid + ",\"args\":{\"name\":" +
        quoted(name) + "}}");
  event("{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":" + pid + ",\"args\":{\"labels\":" +
        quoted(info.argv.join(u' ')) + "}}");
}

void ChromeSink::thread(const ExportThread &t) {
  const QByteArray head = "{\"ph\":\"M\",\"pid\":" + QByteArray::number(pid()) + ",\"tid\":";
  QString name = t.name + (t.probe ? QStringLiteral(" [probe]") : QString());
  event(head + QByteArray::number(t.tid) + ",\"name\":\"thread_name\",\"args\":{\"name\":" +
        quoted(name) + "}}");
  // Its waits on a track of their own, sorted right under it.
  event(head + QByteArray::number(waitTrack(t.tid)) +
        ",\"name\":\"thread_name\",\"args\":{\"name\":" + quoted(name + QStringLiteral(" waits")) +
        "}}");
  event(head + QByteArray::number(t.tid) + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
        QByteArray::number(qlonglong(t.tid) * 2) + "}}");
  event(head + QByteArray::number(waitTrack(t.tid)) +
        ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
        QByteArray::number(qlonglong(t.tid) * 2 + 1) + "}}");
}

// The category is the state's key (on_cpu, blocked_mutex, ...): a filter.
template <size_t PrefixCopy, bool Wide>
[[gnu::always_inline]] inline char *ChromeSink::stateEvent(char *p, const StateInterval &iv,
                                                           TensText *tens, const Piece<28> *args) {
  const auto &prefix = statePrefixes_[size_t(iv.state)];
  copyBlocks<PrefixCopy, Wide>(p, prefix.text);
  p = putStart(p + prefix.size, iv.start, tens);
  return stateEnd<Wide>(p, iv, tens, args);
}

void ChromeSink::state(uint32_t tid, const StateInterval &iv) {
  states(tid, &iv, 1);
}

// Each state's head and the thread's tid, joined once for its events.
void ChromeSink::makeStatePrefixes(uint32_t tid) {
  static_assert(kLongestStatePrefix <= kPrefixRoom, "a state's prefix is copied whole");
  if (!prefixesMade_) {
    // Up to the tid, made once (the strings made for each thread were 0.4%
    // of an export).
    for (size_t s = 0; s < statePrefixes_.size(); s++) {
      statePrefixes_[s].set(std::string("{\"ph\":\"X\",\"cat\":\"") + finalStateKey(FinalState(s)) +
                            "\",\"name\":\"" + finalStateLabel(FinalState(s)) +
                            "\",\"pid\":" + std::to_string(pid()) + ",\"tid\":");
      stateHeadSizes_[s] = statePrefixes_[s].size;
    }
  }
  char tail[32];  // 'TID,"ts":'
  const uint32_t tailSize = uint32_t(putLiteral(putDecimal(tail, tid), ",\"ts\":") - tail);
  shortPrefixes_ = true;
  for (size_t s = 0; s < statePrefixes_.size(); s++) {
    auto &prefix = statePrefixes_[s];
    std::memcpy(prefix.text + stateHeadSizes_[s], tail, tailSize);
    prefix.size = stateHeadSizes_[s] + tailSize;
    shortPrefixes_ = shortPrefixes_ && prefix.size <= kShortPrefix;
  }
  if (argsTable_.empty()) makeArgsTable();
  prefixTid_ = tid;
  prefixesMade_ = true;
}

void ChromeSink::states(uint32_t tid, const StateInterval *runs, size_t n) {
  if (tid != prefixTid_ || !prefixesMade_) makeStatePrefixes(tid);
  if (wide_)
    statesWide(runs, n);
  else
    statesNarrow(runs, n);
}

// The same writers twice, for AVX2 and not (copyBlocks).
TM_AVX2 void ChromeSink::statesWide(const StateInterval *runs, size_t n) {
  if (shortPrefixes_)
    writeStates<kShortPrefix, true>(runs, n);
  else
    writeStates<kPrefixRoom, true>(runs, n);
}

void ChromeSink::statesNarrow(const StateInterval *runs, size_t n) {
  if (shortPrefixes_)
    writeStates<kShortPrefix, false>(runs, n);
  else
    writeStates<kPrefixRoom, false>(runs, n);
}

// A wait's start copied as 96 bytes when every one fits (a pid of up to 7
// digits, as Linux's are: the label and track fit the rest), else 112.
constexpr size_t kShortWaitStart = 96;
constexpr uint32_t kShortWaitStartPid = 9999999;
static_assert(sizeof "{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"\",\"pid\":,\"tid\":,\"ts\":" - 1 +
                      kLongestLabel + 7 + 10 <=
                  kShortWaitStart,
              "a wait's start with a pid of 7 digits fits 96 bytes");

TM_AVX2 void ChromeSink::waitsWide(const ExportWait *waits, size_t n) {
  if (pid() <= kShortWaitStartPid)
    writeWaits<true, kShortWaitStart>(waits, n);
  else
    writeWaits<true, sizeof FlowPiece::text>(waits, n);
}

void ChromeSink::waitsNarrow(const ExportWait *waits, size_t n) {
  if (pid() <= kShortWaitStartPid)
    writeWaits<false, kShortWaitStart>(waits, n);
  else
    writeWaits<false, sizeof FlowPiece::text>(waits, n);
}

template <size_t PrefixCopy, bool Wide>
[[gnu::always_inline]] inline void ChromeSink::writeStates(const StateInterval *runs, size_t n) {
  TensText tens = *tensNow();
  hideTables(&tens);
  const Piece<28> *const args = argsTable_.data();
  // Up to 32 events in one piece of the output: one reserve and commit
  // each, not one an event.
  constexpr size_t kBatch = 32;
  for (size_t i = 0; i < n;) {
    const size_t end = std::min(n, i + kBatch);
    char *p = begin((end - i) * (kPrefixRoom + kStateRoom));
    for (const StateInterval *r = runs + i, *e = runs + end; r != e; r++)
      p = stateEvent<PrefixCopy, Wide>(p, *r, &tens, args);
    i = end;
    done(p);
  }
  tens_ = tens;
}

void ChromeSink::wait(const ExportWait &w) {
  waitsInOrder(&w, 1);
}

void ChromeSink::waitsInOrder(const ExportWait *waits, size_t n) {
  if (wide_) return waitsWide(waits, n);
  waitsNarrow(waits, n);
}

template <bool Wide, size_t StartCopy>
[[gnu::always_inline]] inline void ChromeSink::writeWaits(const ExportWait *waits, size_t n) {
  // The output's room, the last time's tens and the flows' id in registers
  // over a batch of waits (a call per wait loaded and stored them).
  TensText tens = *tensNow();
  hideTables(&tens);
  FlowId id = flowIdNow();
  char *p = at_;
  // Room for up to 16 waits at a time (one check, not one a wait), more
  // for a wait's names longer than their room.
  constexpr size_t kBatch = 16, kRoom = kWaitRoom + kNamesRoom;
  for (const ExportWait *o = waits, *const oEnd = waits + n; o != oEnd;) {
    const ExportWait *const batchEnd = oEnd - o > ptrdiff_t(kBatch) ? o + kBatch : oEnd;
    at_ = p;
    p = begin(kBatch * kRoom);
    for (; o != batchEnd; o++) {
      const ExportWait &w = *o;
      const FlowPiece &start = waitStart(w.state, w.waiter);
      const Names &names = objectNames(*w.object);
      const size_t namesSize = names.size;
      // Names of up to 64 bytes (an object's name, no call site) copied
      // as 64, others as 96 bytes, or whole past their room.
      const bool shortNames = namesSize <= 64;
      if (__builtin_expect(!shortNames && namesSize > kNamesRoom, 0)) {
        at_ = p;
        p = begin(kBatch * kRoom + namesSize);
      }
      p = waitEvent<Wide, StartCopy>(p, w, start, names.text.data(), namesSize, shortNames, &tens,
                                     &id);
    }
  }
  at_ = p;
  tens_ = tens;
  keepFlowId(id.text);
}

template <bool Wide, size_t StartCopy>
[[gnu::always_inline]] inline char *ChromeSink::waitEvent(char *p, const ExportWait &w,
                                                          const FlowPiece &start, const char *names,
                                                          size_t namesSize, bool shortNames,
                                                          TensText *tens, FlowId *flowId) {
  copyBlocks<StartCopy, Wide>(p, start.text);
  p = putStart(p + start.size, w.start, tens);
  p = putDuration(p, w.end - w.start, *tens->tables);
  if (__builtin_expect(shortNames, 1))
    copyBlocks<64, Wide>(p, names);
  else if (namesSize <= kNamesRoom)
    copyBlocks<kNamesRoom, Wide>(p, names);
  else
    std::memcpy(p, names, namesSize);
  p += namesSize;
  if (__builtin_expect(!w.releaser || w.open || w.releaser == w.waiter, 0)) return waitEnd(p, w);
  // Who released it: from the releaser's state at the wait's end to the
  // wait. Both ends have the same id and time: formatted once, copied.
  const FlowPiece &release = this->release(w.holder, w.releaser);
  copyBlocks<sizeof release.text, Wide>(p, release.text);
  p += release.size;
  nextFlowId(flowId);
  std::memcpy(p, &flowId->text, 16);
  p += flowId->size;
  copyBlocks<sizeof release.flowEnd, Wide>(p, release.flowEnd);
  p += release.flowEndSize;
  char *const ts = p;
  // (Its tens not kept: the next wait starts before this one's end, mostly
  // in the tens this one started in.)
  TensText endTens = *tens;
  p = putClosedTime(p, w.end - 1, &endTens);
  const size_t tsSize = size_t(p - ts);
  copyBlocks<sizeof kFlowFinish, Wide>(p, kFlowFinish);
  p += kFlowFinishSize;
  std::memcpy(p, &flowId->text, 16);
  p += flowId->size;
  copyBlocks<sizeof start.flowEnd, Wide>(p, start.flowEnd);
  p += start.flowEndSize;
  copyBlocks<32, Wide>(p, ts);  // and the '},\n' after it
  return p + tsSize + 2;
}

char *ChromeSink::waitEnd(char *p, const ExportWait &w) const {
  if (w.holder) p = putDecimal(putLiteral(p, ",\"holder_tid\":"), w.holder);
  if (w.releaser) p = putDecimal(putLiteral(p, ",\"released_by_tid\":"), w.releaser);
  if (w.open) p = putLiteral(p, ",\"open\":true");
  return putLiteral(p, "}},\n");
}

void ChromeSink::userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) {
  // On the LWP's waits track: a user thread runs there between its LWP's waits.
  const std::string &name = quotedOnce(userThread);
  char *p = begin(name.size() + 256);
  p = putString(putLiteral(p, "{\"ph\":\"X\",\"cat\":\"user_thread\",\"name\":"), name);
  p = putDecimal(putLiteral(p, ",\"pid\":"), pid());
  p = putDecimal(putLiteral(p, ",\"tid\":"), userTrack(tid));
  p = putStart(putLiteral(p, ",\"ts\":"), start, tensNow());
  p = putDuration(p, end - start);
  done(putLiteral(p, "},\n"));
  if (userTracks_.contains(tid)) return;
  userTracks_.insert(tid);
  event("{\"ph\":\"M\",\"pid\":" + QByteArray::number(pid()) + ",\"tid\":" +
        QByteArray::number(userTrack(tid)) + ",\"name\":\"thread_name\",\"args\":{\"name\":\"LWP " +
        QByteArray::number(tid) + " user threads\"}}");
}

TensText *ChromeSink::tensNow() {
  if (__builtin_expect(tens_.origin != origin(), 0)) tens_ = TensText(origin());
  return &tens_;
}

void ChromeSink::counterEvent(const Names &head, int64_t t, const char *arg, size_t argSize,
                              double v) {
  char *p = putString(begin(head.size + 256), head.text);
  p = putTime(p, t, tensNow());
  std::memcpy(p, arg, argSize);
  p += argSize;
  // As QByteArray::number(v, 'g', 12) wrote it: 12 significant digits.
  p = std::to_chars(p, p + 40, v, std::chars_format::general, 12).ptr;
  done(putLiteral(p, "}},\n"));
}

void ChromeSink::cpuBusy(int cpu, int64_t t, double percent) {
  static const char arg[] = ",\"args\":{\"busy\":";
  counterEvent(counterHead(true, cpu), t, arg, sizeof arg - 1, percent);
}

void ChromeSink::counter(int which, int64_t t, double value) {
  static const char arg[] = ",\"args\":{\"value\":";
  counterEvent(counterHead(false, which), t, arg, sizeof arg - 1, value);
}

ChromeSink::ChromeSink(ExportOutput *out) : wide_(haveAvx2()), out_(out) {}

bool ChromeSink::finish(QString *error) {
  if (!at_)
    begin(0);  // an empty capture: still a whole document
  else
    at_ -= 2;  // the last event's separator
  out_->commit(at_);
  out_->write(QByteArrayLiteral("\n]}\n"));
  if (!out_->close()) {
    *error = out_->error();
    return false;
  }
  return true;
}

}  // namespace tmon
