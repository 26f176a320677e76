#include "summaryrecord.h"

#include <algorithm>

#include "framecheck.h"
#include "threadmon.pb-c.h"

namespace tmon {

// Summary.state_ns is indexed by FinalState, so the order of states.def's
// TM_FINAL_STATE lines is wire format: these pin the states captures hold
// (a new state goes after Stolen).
static_assert(int(FinalState::OnCpu) == 0 && int(FinalState::Runnable) == 1 &&
                  int(FinalState::BlockedMutex) == 2 && int(FinalState::BlockedCond) == 3 &&
                  int(FinalState::BlockedRwlock) == 4 && int(FinalState::BlockedBarrier) == 5 &&
                  int(FinalState::BlockedSem) == 6 && int(FinalState::BlockedSpin) == 7 &&
                  int(FinalState::BlockedJoin) == 8 && int(FinalState::Sleeping) == 9 &&
                  int(FinalState::IoWait) == 10 && int(FinalState::Stopped) == 11 &&
                  int(FinalState::Stolen) == 12 && int(FinalState::BlockedFutex) == 13 &&
                      int(FinalState::Idle) == 14,
              "Summary.state_ns order (docs/format.md)");

void SummaryRecord::add(uint32_t tid, const StateTimes &st) {
  tids_.push_back(tid);
  states_.push_back(st);
}

std::vector<uint8_t> SummaryRecord::pack() const {
  std::vector<Threadmon__ThreadSummary> rows(tids_.size());
  std::vector<Threadmon__ThreadSummary *> ptrs(rows.size());
  std::vector<uint64_t> ns(rows.size() * kFinalStateCount);
  for (size_t i = 0; i < rows.size(); i++) {
    threadmon__thread_summary__init(&rows[i]);
    rows[i].tid = tids_[i];
    rows[i].lifetime_ns = uint64_t(std::max<int64_t>(0, states_[i].lifetimeNs));
    // Trailing zero states are left off (most threads use a few states).
    size_t n = kFinalStateCount;
    while (n > 0 && states_[i].ns[n - 1] <= 0) n--;
    uint64_t *to = ns.data() + i * kFinalStateCount;
    for (size_t k = 0; k < n; k++) to[k] = uint64_t(std::max<int64_t>(0, states_[i].ns[k]));
    rows[i].n_state_ns = n;
    rows[i].state_ns = to;
    ptrs[i] = &rows[i];
  }
  Threadmon__Summary sum;
  threadmon__summary__init(&sum);
  sum.start_ns = uint64_t(start_);
  sum.end_ns = uint64_t(end_);
  sum.n_threads = ptrs.size();
  sum.threads = ptrs.data();
  Threadmon__Frame f;
  threadmon__frame__init(&f);
  f.body_case = THREADMON__FRAME__BODY_SUMMARY;
  f.summary = &sum;
  std::vector<uint8_t> out(threadmon__frame__get_packed_size(&f));
  out.resize(threadmon__frame__pack(&f, out.data()));
  return out;
}

bool SummaryRecord::unpack(const uint8_t *payload, uint32_t len) {
  *this = SummaryRecord();
  Threadmon__Frame *f = threadmon__frame__unpack(nullptr, len, payload);
  if (!f) return false;
  const Threadmon__Summary *s =
      f->body_case == THREADMON__FRAME__BODY_SUMMARY ? f->summary : nullptr;
  const bool ok = s && s->end_ns > s->start_ns && s->end_ns <= limits::kMaxTimeNs &&
                  s->end_ns - s->start_ns <= uint64_t(kMaxBucketNs);
  if (ok) {
    start_ = int64_t(s->start_ns);
    end_ = int64_t(s->end_ns);
    const uint64_t width = s->end_ns - s->start_ns;
    const auto clamp = [&](uint64_t v) {
      if (v <= width) return int64_t(v);
      clamped_++;
      return int64_t(width);
    };
    tids_.reserve(s->n_threads);
    states_.reserve(s->n_threads);
    for (size_t i = 0; i < s->n_threads; i++) {
      const Threadmon__ThreadSummary *t = s->threads[i];
      StateTimes st;
      st.lifetimeNs = clamp(t->lifetime_ns);
      // States this reader does not know (a newer writer's) are dropped.
      const size_t n = std::min<size_t>(t->n_state_ns, kFinalStateCount);
      for (size_t k = 0; k < n; k++) st.ns[k] = clamp(t->state_ns[k]);
      add(t->tid, st);
    }
  }
  threadmon__frame__free_unpacked(f, nullptr);
  return ok;
}

}  // namespace tmon
