#include "userthreads.h"

#include <algorithm>

#include "symbolname.h"

namespace tmon {

namespace {
int64_t ns(uint64_t v) { return int64_t(v); }
QString str(const char *s) { return s ? QString::fromUtf8(s) : QString(); }
}  // namespace

int UserThreads::indexOf(uint32_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : it->second;
}

UserThreads::Entry *UserThreads::entryFor(uint32_t id, int64_t t, FrameCheck *check) {
  if (!id) return nullptr;
  auto it = index_.find(id);
  if (it != index_.end()) {
    Entry &e = entries_[size_t(it->second)];
    // First seen by a switch before its description (or without one): its
    // life starts at its first sight.
    if (t < e.info.createdNs) e.info.createdNs = t;
    return &e;
  }
  if (entries_.size() >= limits::kMaxUserThreads) {
    check->note(FrameCheck::ThreadsFull);
    return nullptr;
  }
  index_[id] = int(entries_.size());
  entries_.emplace_back();
  Entry &e = entries_.back();
  e.info.id = id;
  e.info.createdNs = t;
  return &e;
}

void UserThreads::applyUserThread(const Threadmon__UserThread &u, FrameCheck *check) {
  const bool knownTime = u.time_ns != 0;
  Entry *e = entryFor(u.id, knownTime ? ns(u.time_ns) : INT64_MAX, check);
  if (!e) return;
  if (u.creator_tid) e->info.creatorTid = u.creator_tid;
  if (u.function && *u.function) e->info.function = readableFrame(str(u.function));
  if (u.name && *u.name) e->info.name = str(u.name);
  if (u.context_address) e->info.contextAddress = u.context_address;
  if (u.stack_address) e->info.stackAddress = u.stack_address;
  if (u.stack_size) e->info.stackSize = u.stack_size;
}

void UserThreads::applySwitches(const Threadmon__UserSwitches &s, FrameCheck *check) {
  int64_t t = ns(s.base_ns);
  for (size_t i = 0; i < s.n_tid; i++) {
    t += s.delta_ns[i];
    const uint32_t tid = s.tid[i];
    const uint32_t from = i < s.n_from_id ? s.from_id[i] : 0;
    const uint32_t to = i < s.n_to_id ? s.to_id[i] : 0;
    const int kind = i < s.n_kind ? int(s.kind[i]) : THREADMON__USER_SWITCH_KIND__USER_SWITCH;
    if (kind == THREADMON__USER_SWITCH_KIND__USER_RETIRED) {
      // Its context was made anew: over, if nothing ended it before.
      if (Entry *e = entryFor(from, t, check); e && e->info.doneNs < 0) e->info.doneNs = t;
      continue;
    }
    // The LWP leaves whatever it ran (by the last switch seen on it: after
    // a lost event that may not be `from`).
    Open &o = open_[tid];
    if (o.id && t >= o.since) {
      int at = indexOf(o.id);
      if (at >= 0 && spanCount_ < limits::kMaxUserSpans) {
        entries_[size_t(at)].spans.push_back(UserSpan{o.since, t, tid});
        spanCount_++;
      }
    }
    if (kind == THREADMON__USER_SWITCH_KIND__USER_DONE) {
      if (Entry *e = entryFor(from, t, check)) e->info.doneNs = t;
    }
    if (kind == THREADMON__USER_SWITCH_KIND__USER_LOST) {
      // Until the LWP's next switch nobody is known to be on it: the span
      // closed above ends here, and no user thread is charged the gap.
      o.id = 0;
      o.since = t;
      continue;
    }
    o.id = entryFor(to, t, check) ? to : 0;
    o.since = t;
  }
}

std::vector<UserSpan> UserThreads::spans(int index, const TimeRange &r, int64_t openEnd) const {
  const Entry &e = entries_[size_t(index)];
  std::vector<UserSpan> out;
  auto add = [&](UserSpan s) {
    s.start = std::max(s.start, r.t0);
    s.end = std::min(s.end, r.t1);
    if (s.end > s.start) out.push_back(s);
  };
  for (const UserSpan &s : e.spans) add(s);
  for (const auto &[tid, o] : open_)
    if (o.id == e.info.id && openEnd > o.since) add(UserSpan{o.since, openEnd, tid});
  std::sort(out.begin(), out.end(),
            [](const UserSpan &a, const UserSpan &b) { return a.start < b.start; });
  return out;
}

size_t UserThreads::bytes() const {
  size_t b = sizeof(*this) + entries_.capacity() * sizeof(Entry) +
             index_.size() * (sizeof(uint32_t) + sizeof(int) + 16) +
             open_.size() * (sizeof(uint32_t) + sizeof(Open) + 16);
  for (const Entry &e : entries_) b += e.spans.capacity() * sizeof(UserSpan);
  return b;
}

}  // namespace tmon
