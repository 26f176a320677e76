// Perfetto export (.pftrace: a Trace, a stream of TracePackets).
//
// Thread states go in as GenericKernelTaskStateEvent (Perfetto v51 and
// later), the packet Perfetto documents for tools that see thread states
// without a kernel trace: trace_processor turns them into its own
// thread_state and sched tables, so the UI draws each thread's state track
// and the CPU tracks, and every query written for a kernel trace works. A
// track event per state would have given slices named "Blocked: mutex",
// which none of Perfetto's thread-state tooling reads. That packet has no
// field for the object a thread waits on, so the waits are track events on
// the thread's own track as well (slices named by their state, with the
// object, call site, holder and releaser as arguments), and who released
// each wait is a flow from an instant on the releaser's track to the
// waiter's slice. Each sync object is a track too, its waits on a child
// track per waiter. The user threads (M:N) an LWP ran are slices on a
// child track of the LWP's. Counter tracks: each CPU's busy share and the probe's
// figures per tick. One packet sequence: its first packet clears the
// sequence's interned state and interns the event names, categories and
// annotation names; a sync object's name and call site are interned by the
// packet of its first wait, so that a million waits carry small ids
// (trace_processor resolves them; the file was 317 MB for 30 s of 100 busy
// threads, 226 MB interned). The packets are written straight into the
// output's buffer (ProtoWriter): no message is built and copied.
// Field numbers: google/perfetto protos/perfetto/trace/ (trace_packet.proto,
// interned_data/interned_data.proto, track_event/*.proto, generic_kernel/*.proto).
#ifndef THREADMON_PERFETTOEXPORT_H
#define THREADMON_PERFETTOEXPORT_H

#include <QHash>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "exporttimeline.h"
#include "protoenc.h"

namespace tmon {

class ExportOutput;

class PerfettoSink : public TimelineSink {
 public:
  explicit PerfettoSink(ExportOutput *out) : out_(out) {}
  bool finish(QString *error) override;

 protected:
  void process(const SessionInfo &info, int cpuCount) override;
  void thread(const ExportThread &t) override;
  void state(uint32_t tid, const StateInterval &iv) override;
  void states(uint32_t tid, const StateInterval *runs, size_t n) override;
  void wait(const ExportWait &w) override;
  void waitsInOrder(const ExportWait *waits, size_t n) override;
  void cpuBusy(int cpu, int64_t t, double percent) override;
  void counter(int which, int64_t t, double value) override;
  void userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) override;
  void threadEnd(uint32_t tid, int64_t t) override;
  void end() override {}

 private:
  void counterValue(uint64_t trackUuid, int64_t t, double value);
  ProtoBytes objectTrack(const ExportWait &w);  // its uuid encoded
  struct TrackBytes;
  // Its entry in tracks_ missed: entry made uuid's, the track described.
  [[gnu::noinline]] ProtoBytes newObjectTrack(const ExportWait &w, uint64_t uuid,
                                              TrackBytes *entry);
  // A TracePacket of one field (and its time, when t >= 0).
  void packet(uint32_t field, const ProtoEncoder &body, int64_t t = -1);
  // The event names, categories and annotation names, interned in the
  // first packet (which starts the sequence's interned state).
  void internStatic();
  // A TracePacket of one TrackEvent at t, written in the output's buffer:
  // eventStart returns where the event's fields start, endEvent closes it
  // (the caller commits).
  char *eventStart(ProtoWriter *w, const ProtoBytes &stamp, char **pkt);
  // A TrackEvent packet's fields before its event: its time, sequence
  // and flags. The varint's bytes from the fifth on (those of the time's
  // bits above 28) and the fields after it are kept from the last time.
  ProtoBytes stamp(int64_t t);
  struct Stamps {
    uint64_t high = ~0ull;  // ~0: none (a time below 2^28 is encoded whole)
    uint32_t tailSize = 0;
    char tail[16];  // copied whole
  };
  Stamps stamps_;
  void endEvent(ProtoWriter *w, char *event, char *pkt);
  // A thread's name and tid as its task states carry them (encoded once),
  // and the last task state sent (RUNNING twice in a row is an error to
  // Perfetto: a move to another CPU goes through RUNNABLE).
  struct Task {
    static constexpr size_t kCommRoom = 32;
    std::string commTid;
    int last = 0;
    // Its task state events whole, by state (RUNNING's with a CPU below
    // 128, stored at kCpuAt; 0: RUNNING's without one), when the name and
    // tid are kCommRoom bytes at most (size 0: not made).
    struct Event {
      static constexpr size_t kCpuAt = 4;
      uint8_t size = 0;
      char bytes[47];  // copied whole
    };
    Event events[8];
    void setCommTid(const ProtoEncoder &fields);
  };
  Task &task(uint32_t tid);
  void taskState(Task *k, int64_t t, int state, int cpu);
  // The same for a name longer than kCommRoom, field by field.
  [[gnu::noinline]] void longTaskState(Task *k, int64_t t, int state, int cpu);
  // Times below 2^28, names longer than kCommRoom, CPUs above 127.
  [[gnu::noinline]] void otherTaskState(Task *k, int64_t t, int state, int cpu);
  void stateChange(Task *k, const StateInterval &iv, int linuxState);
  uint32_t lastTid_ = 0;  // a thread's states come in a row: its Task kept
  Task *lastTask_ = nullptr;
  void counterTrack(uint64_t uuid, const QString &name, const char *unit);
  // The DebugAnnotation fields of a wait's object name and call site (their
  // values interned), by ExportObject::index: the object's first
  // (objectSize bytes), then both. The first call adds the InternedData
  // field of the values to the packet w writes.
  struct ObjectAnnotations {
    bool made = false;
    uint8_t objectSize = 0, bothSize = 0;
    char both[32];  // copied whole
  };
  const ObjectAnnotations &annotations(const ExportObject &o, ProtoWriter *w);
  std::vector<ObjectAnnotations> annotations_;
  ExportOutput *out_;
  // The output's room the packets are written in, reserved from out_ a
  // span at a time and committed when the span runs out or the export
  // ends: a wait's reserve and commit in out_ were a tenth of its
  // instructions.
  char *reserve(size_t n) {
    if (__builtin_expect(size_t(end_ - at_) < n, 0)) refill(n);
    return at_;
  }
  void commit(char *end) { at_ = end; }
  [[gnu::noinline]] void refill(size_t n);
  static constexpr size_t kSpan = 16384;
  char *at_ = nullptr, *end_ = nullptr;
  QHash<uint32_t, QString> comm_;             // thread names, by tid
  std::unordered_map<uint32_t, Task> tasks_;  // by tid
  // object, object x waiter and user-thread tracks described
  std::unordered_set<uint64_t> objectTracks_;
  // Tracks' uuids encoded, by a hash of the uuid (uuid 0: none): the
  // threads' and the object tracks described.
  struct TrackBytes {
    uint64_t uuid = 0;
    ProtoBytes bytes;
  };
  static constexpr size_t kTrackCache = 4096;
  std::vector<TrackBytes> tracks_ = std::vector<TrackBytes>(kTrackCache);
  static constexpr uint64_t kNoImage = ~0ull;  // above any time's high bits
  // A varint of a wait's image that its copies store four bytes at (from
  // \c at): the values of the length the image was made for (a holder's
  // 0 when none), and the four bytes' bits but the value's (its
  // continuation bits, the fields after it).
  struct VarintPlace {
    uint32_t from = 0, span = 0, fill = 0;
    uint8_t at = 0;
  };
  // A wait's five packets as writeWait wrote them for one wait, and where
  // the bytes that vary from wait to wait are: see WaitBytes::image.
  struct WaitImage {
    uint64_t high = kNoImage;  // the times' bits above their low 28
    // The high bits' varint (at 4 into each time's), the holder's and
    // the releaser's tids in their arguments.
    VarintPlace highVarint, holder, releaser;
    uint8_t size = 0;
    // Offsets of the times' varints, per packet (the object track's
    // packets, when it has none, repeat the waiter's), of the releaser's
    // track's uuid and of the flow's ids.
    uint8_t startAt[2], endAt[3], releaserTrackAt, flowIdAt[2];
    char bytes[192];  // copied whole (half.tmcap's are 183 bytes)
  };
  // A wait's packets but for their times and its holder, releaser and
  // flow, encoded once per object, waiter and state (half.tmcap's million
  // waits have a few hundred): the object track's begin and end events
  // (from their TrackEvent key on), the waiter's begin event's fixed fields
  // and its end event's. Kept by a hash of the three: one missed is made
  // again, no packet written twice (the tracks were described when first
  // made). Encoding the fields of five packets per wait was 570
  // instructions a wait; copying them, about 200.
  struct alignas(64) WaitBytes {           // 512 bytes: its index a shift
    const ExportObject *object = nullptr;  // none: empty
    uint32_t waiter = 0;
    FinalState state = FinalState::Sleeping;
    uint8_t objectBeginSize = 0, objectEndSize = 0;  // 0: no object track
    uint8_t beginSize = 0, endSize = 0, flowSize = 0;
    char objectBegin[32], objectEnd[32];  // copied whole
    char begin[64], end[16];
    char flow[32];  // a release instant's fields after its track: name and object
    // The whole wait, for most waits: released by another thread (a
    // flow), both times in one 2^28 ns, a holder and releaser whose tids'
    // varints are as long as the image's. Copying one image and storing
    // the varying bytes at their places took half the instructions of
    // copying the pieces above and counting the packets' lengths.
    WaitImage image;
  };
  // A thread's fields as a wait's packets carry them (its track's uuid,
  // and the holder's and releaser's arguments of its tid), by a hash of
  // the tid.
  struct TidBytes {
    uint32_t tid = 0;
    uint8_t holderSize = 0, releaserSize = 0;  // 0: empty
    ProtoBytes track;
    char holder[16], releaser[16];  // copied whole
  };
  std::vector<TidBytes> tidBytes_ = std::vector<TidBytes>(1024);
  const TidBytes &tidBytes(uint32_t tid);
  [[gnu::noinline]] void makeTidBytes(uint32_t tid, TidBytes *b);
  static constexpr size_t kWaitCache = 2048;
  std::vector<WaitBytes> waitBytes_ = std::vector<WaitBytes>(kWaitCache);
  // Its entry, made when missed (describing the object's track then); null
  // when the wait is the first of its object (whose packet interns the
  // object's names) or its fields are too long to be copied whole.
  WaitBytes *waitBytes(const ExportWait &w);
  [[gnu::noinline]] bool makeWaitBytes(const ExportWait &w, WaitBytes *b);
  [[gnu::noinline]] void waitEncoded(const ExportWait &w);  // every field encoded
  // Where writeWait put the bytes that vary from wait to wait.
  struct WaitPlaces {
    char *start[2] = {}, *end[3] = {};  // the times' varints, per packet
    char *holderArg = nullptr, *releaserArg = nullptr, *releaserTrack = nullptr, *flowId[2] = {};
  };
  char *writeWait(char *out, const WaitBytes &t, const ExportWait &w, uint64_t flowId,
                  WaitPlaces *at);
  [[gnu::noinline]] bool makeImage(const ExportWait &w, WaitBytes *t);  // false: none fits
  static void moveImage(WaitImage *m, uint64_t high);  // to times of another high part
  void waitImaged(const ExportWait &w, const WaitImage &m);
  void waitInline(const ExportWait &w);  // wait()'s body
  // A wait not written from its image as it stands.
  [[gnu::noinline]] void waitOther(const ExportWait &w, WaitBytes *t);
  TrackBytes &trackEntry(uint64_t uuid);
  const ProtoBytes &trackBytes(uint64_t uuid);
  uint64_t flows_ = 0;
};

}  // namespace tmon

#endif
