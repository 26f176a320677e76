// Chrome JSON export (Trace Event Format, the JSON object form): process
// and thread names as metadata ("M"), each thread's states as complete
// events ("X", category the state's report key: "on_cpu", "blocked_mutex"), waits with their object and call site
// ("X", category "wait", on a track of their own per thread so they never
// overlap the states), who released a wait as a flow ("s"/"f", category
// "wakeup"), counters ("C") per CPU and for the probe's figures. Times in
// microseconds from the session's start, with nanosecond decimals.
#ifndef THREADMON_CHROMEEXPORT_H
#define THREADMON_CHROMEEXPORT_H

#include <QHash>
#include <QSet>
#include <array>
#include <deque>
#include <string>

#include "chromenumbers.h"
#include "exporttimeline.h"
#include "textcache.h"

namespace tmon {

class ExportOutput;

class ChromeSink : public TimelineSink {
 public:
  explicit ChromeSink(ExportOutput *out);
  bool finish(QString *error) override;

  // The second track per thread that carries its waits: a pseudo-tid above
  // any Linux tid (pid_max is at most 2^22) and below 2^31, since readers
  // take tids as 32-bit signed integers.
  static uint32_t waitTrack(uint32_t tid) { return tid | 0x40000000u; }
  // The user threads (M:N) an LWP ran, on a track of their own.
  static uint32_t userTrack(uint32_t tid) { return tid | 0x20000000u; }

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
  void threadEnd(uint32_t, int64_t) override {}
  void end() override {}

 private:
  // A text every event of a kind carries, made once and copied as Room
  // bytes (padding included: one fixed-size copy) unless it is longer.
  template <size_t Room>
  struct Piece {
    char text[Room] = {};
    uint32_t size = 0;  // 0: not made yet
    void set(const std::string &s);
  };
  // The same for texts of any length (names): padded to kNamesRoom.
  static constexpr size_t kNamesRoom = 96;
  struct Names {
    std::string text;
    size_t size = 0;
  };

  void event(const char *json, qsizetype n);
  void event(const QByteArray &json);
  // An event's room (n bytes) in the output: the event is written there
  // and its separator after it, ',\n' (the last one taken back by
  // finish(): a separator is part of texts copied anyway, a state's
  // arguments, where one before each event was a store of its own), then
  // done() says where it ends.
  char *begin(size_t n);
  void done(char *end) { at_ = end; }
  // The output's room the events are written into (ExportOutput::reserve),
  // taken 64 KiB at a time and committed when used up and at the end: a
  // reserve and a commit per event were a twentieth of a wait's
  // instructions. The document's head is written into the first.
  char *at_ = nullptr, *roomEnd_ = nullptr;
  [[gnu::noinline]] void moreRoom(size_t n);

  // A state's event up to its time, '{"ph":"X","cat":KEY,"name":LABEL,
  // "pid":PID,"tid":TID,"ts":', by state, for the thread states() writes
  // (made again when the thread is not the last call's).
  static constexpr size_t kPrefixRoom = 112;
  std::array<Piece<kPrefixRoom + 12>, kFinalStateCount> statePrefixes_;
  std::array<uint32_t, kFinalStateCount> stateHeadSizes_{};  // up to the tid
  uint32_t prefixTid_ = 0;
  bool prefixesMade_ = false;
  // The thread's prefixes all fit kShortPrefix bytes (pid and tid of up
  // to 18 digits between them): copied as that many, 16 bytes less an event.
  static constexpr size_t kShortPrefix = 96;
  bool shortPrefixes_ = false;
  void makeStatePrefixes(uint32_t tid);
  template <size_t PrefixCopy, bool Wide>
  [[gnu::always_inline]] void writeStates(const StateInterval *runs, size_t n);
  // The writers compiled for AVX2 (its 32-byte copies, half the loads and
  // stores of the texts copied), chosen once, and for any other CPU.
  const bool wide_;
  void statesWide(const StateInterval *runs, size_t n);
  void statesNarrow(const StateInterval *runs, size_t n);
  // (StartCopy: the bytes of a wait's start copied, all of its text.)
  template <bool Wide, size_t StartCopy>
  [[gnu::always_inline]] void writeWaits(const ExportWait *waits, size_t n);
  void waitsWide(const ExportWait *waits, size_t n);
  void waitsNarrow(const ExportWait *waits, size_t n);
  // A state's end after its duration: its CPU and object as arguments,
  // ',"args":{"cpu":C,"object_id":O}},\n', or '},\n'. Those without a CPU (a
  // blocked state's, or none) by object id below kBlockedArgs (of 3 digits
  // at most: the text fits 28 bytes), then those without an object by CPU
  // (0 to 255), in one table made at the first states(): an index where a
  // hash and checks were a tenth of a blocked state's instructions.
  static constexpr uint32_t kBlockedArgs = 1000, kCpuArgs = 256;
  std::vector<Piece<28>> argsTable_;
  void makeArgsTable();
  // Others, by both. (Key 0, CPU 0 without an object, is argsTable_'s.)
  TextCache<Piece<60>, 0> objectArgs_;
  // A state's duration and arguments written at p: where they end.
  template <bool Wide>
  [[gnu::always_inline]] char *stateEnd(char *p, const StateInterval &iv, chromenum::TensText *tens,
                                        const Piece<28> *args);
  [[gnu::noinline]] char *otherArgs(char *p, int cpu, uint32_t object);
  template <size_t Room>
  static void makeArgs(int cpu, uint32_t object, Piece<Room> *made);
  // A state's event written at p: where it ends.
  template <size_t PrefixCopy, bool Wide>
  [[gnu::always_inline]] char *stateEvent(char *p, const StateInterval &iv,
                                          chromenum::TensText *tens, const Piece<28> *args);

  // A wait's text up to one of its numbers, made once per key, and the
  // end of its flow it names, ',"pid":PID,"tid":TID,"ts":'.
  struct FlowPiece {
    char text[112];
    char flowEnd[48];
    uint32_t size, flowEndSize;
    void setFlowEnd(uint32_t pid, uint32_t tid);
  };
  // By state and waiter: the wait's event up to its time,
  // '{"ph":"X","cat":"wait","name":LABEL,"pid":PID,"tid":TRACK,"ts":', and
  // the waiter's track as its flow's end.
  TextCache<FlowPiece, ~uint64_t(0)> waitStarts_;  // (a state is below 2^8)
  const FlowPiece &waitStart(FinalState s, uint32_t waiter);
  // By holder and releaser: a released wait's end and its flow's start up
  // to its id, ',"holder_tid":HOLDER,"released_by_tid":RELEASER}},\n
  // {"ph":"s",...,"id":', and the releaser as the flow's start.
  TextCache<FlowPiece, 0> releases_;  // (a wait released by no one has no flow)
  const FlowPiece &release(uint32_t holder, uint32_t releaser);
  // A wait's object name and call site as its arguments start,
  // ',"args":{"object":NAME,"call_site":SITE', as ExportObject::formatText.
  std::deque<Names> namesMade_;
  const Names &objectNames(const ExportObject &o);
  [[gnu::noinline]] const Names &makeObjectNames(const ExportObject &o);
  // A wait without a flow (open, or released by no one else) after its names.
  [[gnu::noinline]] char *waitEnd(char *p, const ExportWait &w) const;

  // The counters' events up to their times, by CPU and by counter.
  std::vector<Names> cpuHeads_, counterHeads_;
  const Names &counterHead(bool cpu, int which);
  void counterEvent(const Names &head, int64_t t, const char *arg, size_t argSize, double v);
  const std::string &quotedOnce(const QString &s);
  QHash<QString, std::string> quoted_;  // user threads' names, as JSON strings
  QSet<uint32_t> userTracks_;

  chromenum::TensText tens_;  // the last time's (a local while events are written)
  chromenum::TensText *tensNow();  // tens_, for the session's origin
  // The last flow's id in decimal, counted up in its text (a million ids
  // formatted were 4% of the Chrome writer's instructions): 16 digits at
  // most, a wait each.
  char flowId_[32] = {'0'};
  uint32_t flowIdSize_ = 1;
  [[gnu::noinline]] void carryFlowId();  // its last digit a 9
  // The same in registers while a window's waits are written: its text,
  // counted up by adding unit (1 in its last digit's byte) untilCarry
  // times, then carry (its last digit 9 to 0, the one before it up by 1)
  // tensLeft times, then by carryFlowId.
  struct FlowId {
    typedef char Digits __attribute__((vector_size(16)));
    Digits text, unit, carry;
    uint32_t size, untilCarry, tensLeft;
  };
  FlowId flowIdNow() const;
  void keepFlowId(FlowId::Digits text);
  // (Its text by value, its count read from the members: with its
  // address taken, the id was kept on the stack.)
  [[gnu::noinline]] FlowId::Digits carriedFlowId(FlowId::Digits text);
  void loadFlowIdCount(FlowId *id) const;
  void nextFlowId(FlowId *id);
  // A wait's events written at p (room made for them): where they end.
  // (The names' size and whether they fit 64 bytes read once: stores
  // through p may alias them, and they were read again.)
  template <bool Wide, size_t StartCopy>
  [[gnu::always_inline]] char *waitEvent(char *p, const ExportWait &w, const FlowPiece &start,
                                         const char *names, size_t namesSize, bool shortNames,
                                         chromenum::TensText *tens, FlowId *flowId);
  ExportOutput *out_;
};

}  // namespace tmon

#endif
