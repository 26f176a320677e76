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
#include <string>

#include "exporttimeline.h"

namespace tmon {

class ExportOutput;

class ChromeSink : public TimelineSink {
 public:
  explicit ChromeSink(ExportOutput *out) : out_(out) {}
  bool finish(QString *error) override;

  // A prefix every event of a kind starts with, made once: its text,
  // padded so that it is copied in one fixed-size piece, and its length.
  struct Head {
    std::string text;
    size_t size = 0;
  };
  // A tid (or a track's pseudo-tid) as every event writes it, 'TID,"ts":',
  // after the pid as a flow's ends write them, ',"pid":PID,"tid":', in a
  // table by a hash of the tid (a thread's events are millions, its
  // digits the same each time).
  struct TidText {
    uint32_t tid = 0;
    uint32_t size = 0;    // of the whole text; 0: empty
    uint32_t from = 0;    // where 'TID,"ts":' starts
    uint32_t digits = 0;  // the tid's alone
    char text[48];        // 40 at most
  };
  // A time's digits above its last four of microseconds (its tens of
  // milliseconds), as the last time written had them: a thread's events
  // come in time order, and these change every few of them.
  struct TensText {
    uint32_t tens = UINT32_MAX;
    uint32_t size = 0;
    uint64_t text = 0;
    void set(uint32_t t);  // t below 10^4
  };

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
  void cpuBusy(int cpu, int64_t t, double percent) override;
  void counter(int which, int64_t t, double value) override;
  void userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) override;
  void threadEnd(uint32_t, int64_t) override {}
  void end() override {}

 private:
  void event(const char *json, qsizetype n);
  void event(const QByteArray &json);
  // An event's room (n bytes and the separator) in the output, after the
  // separator: the event is written there and committed (ExportOutput).
  char *begin(size_t n);
  char *first(char *p);  // the document's head, before its first event
  // A state's (cat null) or a wait's event up to its tid.
  const Head &eventHead(bool wait, FinalState s);
  void makeHead(Head *h, bool wait, FinalState s);
  // The counters' events up to their times, by CPU and by counter.
  const Head &counterHead(bool cpu, int which);
  void counterEvent(const Head &head, int64_t t, const char *arg, size_t argSize, double v);
  const std::string &quotedOnce(const QString &s);
  QHash<QString, std::string> quoted_;  // user threads' names, as JSON strings
  // A wait's object name and call site as its arguments start,
  // ',"args":{"object":NAME,"call_site":SITE', by ExportObject::index: made
  // once, not for each of a million waits, padded as a Head is.
  struct QuotedObject {
    bool made = false;
    Head args;
  };
  const QuotedObject &quotedNames(const ExportObject &o);
  [[gnu::noinline]] const QuotedObject &makeQuotedNames(const ExportObject &o);
  std::vector<QuotedObject> quotedObjects_;
  std::array<Head, kFinalStateCount> stateHeads_, waitHeads_;
  std::vector<Head> cpuHeads_, counterHeads_;
  const TidText &tidText(uint32_t tid);
  [[gnu::noinline]] void makeTidText(uint32_t tid, TidText *t);
  // A state's event written at at (kEventRoom bytes): where it ends.
  char *stateEvent(char *at, const StateInterval &iv);
  // A state event's text up to its time, '{"ph":"X",...,"tid":TID,"ts":',
  // by state, for the thread states() writes (made when the thread is not
  // the last call's), copied as kPrefixRoom bytes when it fits (padded).
  struct StatePrefix {
    std::string text;
    size_t size = 0;
  };
  static constexpr size_t kPrefixRoom = 112;
  std::array<StatePrefix, kFinalStateCount> statePrefixes_;
  uint32_t prefixTid_ = 0;
  bool prefixesMade_ = false;
  void makeStatePrefixes(uint32_t tid);
  TensText tens_;
  std::vector<TidText> tidTexts_ = std::vector<TidText>(4096);
  // A state's end after its duration, its CPU and object as arguments
  // ',"args":{"cpu":C,"object_id":O}}', by a hash of the two: a window's
  // states have a few pairs, formatted once (their digits were a tenth of
  // the state events' instructions).
  struct ArgsText {
    uint64_t key = 0;
    uint32_t size = 0;  // 0: empty
    char text[64];
  };
  const ArgsText &stateArgs(int cpu, uint32_t object);
  std::vector<ArgsText> argsTexts_ = std::vector<ArgsText>(256);
  // The last flow's id in decimal, counted up in its text (a million ids
  // formatted were 4% of the Chrome writer's instructions).
  char flowId_[32] = {'0'};
  uint32_t flowIdSize_ = 1;
  void nextFlowId();
  [[gnu::noinline]] void carryFlowId();  // its last digit a 9
  QSet<uint32_t> userTracks_;
  ExportOutput *out_;
  bool any_ = false;
  bool opened_ = false;
};

}  // namespace tmon

#endif
