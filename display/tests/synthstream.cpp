#include "synthstream.h"

#include <QFile>

#include "sessionmodel.h"
#include "tmwire.h"

namespace tmtest {

namespace {

char *str(const char *s) {
  return const_cast<char *>(s ? s : "");
}

// A message of a repeated field, from the record that says it.
void fill(Threadmon__LwpSample &s, const Lwp &l) {
  s.tid = l.tid;
  s.user_ns = l.user;
  s.system_ns = l.system;
  s.oncpu_ns = l.oncpu;
  s.runqueue_ns = l.runqueue;
  s.vol_ctxsw = l.vol;
  s.invol_ctxsw = l.invol;
  s.minflt = l.minflt;
  s.majflt = l.majflt;
  s.cpu = l.cpu;
  s.kstate = uint32_t(l.kstate);
  s.futex_addr = l.futex;
  s.asleep_syscall = l.asleep;
  s.asleep_kind = l.asleepKind;
  s.read_ns = uint64_t(l.readNs);
  s.n_folded_ns = l.folded.size();
  s.folded_ns = const_cast<uint64_t *>(l.folded.data());
  s.folded_changes = l.foldedChanges;
}
void fill(Threadmon__CpuSample &c, const Cpu &x) {
  c.cpu = x.cpu;
  c.user_ns = x.user;
  c.nice_ns = x.nice;
  c.system_ns = x.system;
  c.idle_ns = x.idle;
  c.iowait_ns = x.iowait;
  c.irq_ns = x.irq;
  c.softirq_ns = x.softirq;
  c.steal_ns = x.steal;
}
void fill(Threadmon__SyncStats &s, const Sync &x) {
  s.id = x.id;
  s.acquisitions = x.acquisitions;
  s.contentions = x.contentions;
  s.wait_ns = x.waitNs;
  s.max_wait_ns = x.maxWaitNs;
  s.hold_ns = x.holdNs;
  s.wait_samples = x.waitSamples;
  s.hold_samples = x.holdSamples;
}
void fill(Threadmon__SiteStats &s, const Site &x) {
  s.object_id = x.object;
  s.stack_id = x.stack;
  s.contentions = x.contentions;
  s.wait_ns = x.waitNs;
}
void fill(Threadmon__CodeLocation &c, const Location &x) {
  c.module_path = str(x.modulePath);
  c.address = x.address;
}

// A repeated message field: a message from each record, and the array of
// pointers to them that protobuf-c wants.
template <typename Msg>
class Repeated {
 public:
  template <typename Record>
  Repeated(const std::vector<Record> &records, const Msg &init) : msgs_(records.size(), init) {
    for (size_t i = 0; i < records.size(); i++) {
      fill(msgs_[i], records[i]);
      ptrs_.push_back(&msgs_[i]);
    }
  }
  size_t size() const { return ptrs_.size(); }
  Msg **data() { return ptrs_.data(); }

 private:
  std::vector<Msg> msgs_;
  std::vector<Msg *> ptrs_;
};

}  // namespace

QByteArray header(uint16_t formatMajor) {
  uint8_t h[TM_HEADER_BYTES];
  tm_header_encode_major(h, formatMajor);
  return QByteArray(reinterpret_cast<const char *>(h), TM_HEADER_BYTES);
}

QByteArray framed(const QByteArray &payload) {
  uint8_t prefix[TM_FRAME_PREFIX_BYTES];
  tm_frame_prefix_encode(prefix, reinterpret_cast<const uint8_t *>(payload.constData()),
                         uint32_t(payload.size()));
  return QByteArray(reinterpret_cast<const char *>(prefix), TM_FRAME_PREFIX_BYTES) + payload;
}

StreamBuilder::Sink intoModel(tmon::SessionModel *model) {
  return [model](Threadmon__Frame &f) {
    model->apply(f);
    return true;
  };
}

StreamBuilder::Sink intoBytes(QByteArray *out) {
  return [out](Threadmon__Frame &f) {
    const size_t n = threadmon__frame__get_packed_size(&f);
    const qsizetype at = out->size();
    out->resize(at + qsizetype(TM_FRAME_PREFIX_BYTES + n));
    auto *p = reinterpret_cast<uint8_t *>(out->data()) + at;
    threadmon__frame__pack(&f, p + TM_FRAME_PREFIX_BYTES);
    tm_frame_prefix_encode(p, p + TM_FRAME_PREFIX_BYTES, uint32_t(n));
    return true;
  };
}

void StreamBuilder::frame(Threadmon__Frame &f) {
  if (sink_) {
    ok_ = ok_ && sink_(f);
    return;
  }
  std::string buf(threadmon__frame__get_packed_size(&f), '\0');
  threadmon__frame__pack(&f, reinterpret_cast<uint8_t *>(&buf[0]));
  frames_.push_back(std::move(buf));
}

void StreamBuilder::hello(const Hello &in) {
  Threadmon__Hello h = THREADMON__HELLO__INIT;
  h.protocol_version = in.protocolVersion;
  h.probe_version = str(in.probeVersion);
  h.pid = in.pid;
  h.ppid = in.ppid;
  h.exe = str(in.exe);
  h.argv = const_cast<char **>(in.argv.data());
  h.n_argv = in.argv.size();
  h.host = str(in.host);
  h.kernel = str(in.kernel);
  h.cpu_count = in.cpuCount;
  h.tick_interval_ns = uint64_t(in.tickNs);
  h.sources = const_cast<Threadmon__Source *>(in.sources.data());
  h.n_sources = in.sources.size();
  QByteArray token = in.token;
  h.token = token.data();
  h.start_monotonic_ns = uint64_t(in.startNs);
  h.start_realtime_ns = in.startRealtimeNs;
  h.probe_tid = in.probeTid;
  h.session_id = in.sessionId;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_HELLO;
  f.hello = &h;
  frame(f);
}

void StreamBuilder::hello(bool perfSwitch, uint32_t cpuCount, uint32_t version) {
  Hello h;
  h.protocolVersion = version;
  h.exe = exe_;
  h.cpuCount = cpuCount;
  if (!perfSwitch) h.sources.pop_back();
  if (outside_) h.sources.erase(h.sources.begin());
  if (!sources_.empty()) h.sources = sources_;
  hello(h);
}

void StreamBuilder::threadStart(uint32_t tid, int64_t t, const char *name, const char *routine,
                                bool probe, bool isMain, uint32_t creator) {
  Threadmon__ThreadStart s = THREADMON__THREAD_START__INIT;
  s.tid = tid;
  s.time_ns = uint64_t(t);
  s.creator_tid = creator;
  s.name = str(name);
  s.start_routine = str(routine);
  s.is_probe = probe;
  s.is_main = isMain;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_START;
  f.thread_start = &s;
  frame(f);
}

void StreamBuilder::threadAttr(uint32_t tid, int64_t t, const char *name, int policy, int nice,
                               std::vector<uint64_t> affinity) {
  Threadmon__ThreadAttr a = THREADMON__THREAD_ATTR__INIT;
  a.tid = tid;
  a.time_ns = uint64_t(t);
  a.name = str(name);
  a.policy = policy;
  a.nice = nice;
  a.n_affinity = affinity.size();
  a.affinity = affinity.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_ATTR;
  f.thread_attr = &a;
  frame(f);
}

void StreamBuilder::threadEnd(uint32_t tid, int64_t t, uint64_t oncpuNs, uint64_t yields) {
  Threadmon__ThreadEnd e = THREADMON__THREAD_END__INIT;
  e.tid = tid;
  e.time_ns = uint64_t(t);
  e.oncpu_ns = oncpuNs;
  e.yields = yields;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_END;
  f.thread_end = &e;
  frame(f);
}

void StreamBuilder::syncObject(uint32_t id, Threadmon__SyncKind kind, uint64_t address,
                               const char *module, const char *symbol, const char *callSite,
                               const char *madeAt, int64_t firstSeen) {
  Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
  o.id = id;
  o.kind = kind;
  o.address = address;
  o.module = str(module);
  o.symbol = str(symbol);
  o.first_seen_ns = uint64_t(firstSeen);
  char *stack[] = {str(callSite)};
  o.first_contention_stack = stack;
  o.n_first_contention_stack = callSite ? 1 : 0;
  o.made_at = str(madeAt);
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &o;
  frame(f);
}

void StreamBuilder::stack(uint32_t id, const std::vector<const char *> &frames,
                          const std::vector<Location> &locations) {
  Repeated<Threadmon__CodeLocation> locs(locations, THREADMON__CODE_LOCATION__INIT);
  Threadmon__Stack st = THREADMON__STACK__INIT;
  st.id = id;
  st.n_frames = frames.size();
  st.frames = const_cast<char **>(frames.data());
  st.n_locations = locs.size();
  st.locations = locs.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_STACK;
  f.stack = &st;
  frame(f);
}

void StreamBuilder::transition(uint32_t tid, int64_t t, Threadmon__ThreadState state,
                               uint32_t object, uint32_t holder, uint32_t releaser) {
  transitions(t, {Transition{t, tid, state, object, holder, releaser}});
}

void StreamBuilder::transitions(int64_t base, const std::vector<Transition> &batch,
                                bool releasersShort) {
  if (batch.empty()) return;
  const size_t n = batch.size();
  std::vector<uint32_t> tid(n), object(n), holder(n), releaser(n);
  std::vector<int64_t> delta(n);
  std::vector<Threadmon__ThreadState> state(n);
  int64_t prev = base;
  for (size_t i = 0; i < n; i++) {
    const Transition &e = batch[i];
    tid[i] = e.tid;
    delta[i] = e.t - prev;  // each entry after the one before it
    prev = e.t;
    state[i] = e.state;
    object[i] = e.object;
    holder[i] = e.holder;
    releaser[i] = e.releaser;
  }
  Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
  tr.base_ns = uint64_t(base);
  tr.n_tid = tr.n_delta_ns = tr.n_state = tr.n_object_id = tr.n_holder_tid = tr.n_releaser_tid = n;
  if (releasersShort) tr.n_releaser_tid--;
  tr.tid = tid.data();
  tr.delta_ns = delta.data();
  tr.state = state.data();
  tr.object_id = object.data();
  tr.holder_tid = holder.data();
  tr.releaser_tid = releaser.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f.transitions = &tr;
  frame(f);
}

void StreamBuilder::cpuSwitch(uint32_t tid, int64_t t, uint32_t cpu, Threadmon__SwitchKind kind,
                              uint64_t lost, bool stopped) {
  cpuSwitches(t, {Switch{t, tid, cpu, kind}}, lost, stopped);
}

void StreamBuilder::cpuSwitches(int64_t base, const std::vector<Switch> &batch, uint64_t lost,
                                bool stopped) {
  if (batch.empty()) return;
  const size_t n = batch.size();
  std::vector<uint32_t> tid(n), cpu(n);
  std::vector<int64_t> delta(n);
  std::vector<Threadmon__SwitchKind> kind(n);
  int64_t prev = base;
  for (size_t i = 0; i < n; i++) {
    tid[i] = batch[i].tid;
    delta[i] = batch[i].t - prev;
    prev = batch[i].t;
    cpu[i] = batch[i].cpu;
    kind[i] = batch[i].kind;
  }
  Threadmon__CpuSwitches sw = THREADMON__CPU_SWITCHES__INIT;
  sw.base_ns = uint64_t(base);
  sw.n_tid = sw.n_delta_ns = sw.n_cpu = sw.n_kind = n;
  sw.tid = tid.data();
  sw.delta_ns = delta.data();
  sw.cpu = cpu.data();
  sw.kind = kind.data();
  sw.lost = lost;
  sw.stopped = stopped;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SWITCHES;
  f.switches = &sw;
  frame(f);
}

void StreamBuilder::userThread(uint32_t id, int64_t t, uint32_t creator, const char *function) {
  Threadmon__UserThread u = THREADMON__USER_THREAD__INIT;
  u.id = id;
  u.time_ns = uint64_t(t);
  u.creator_tid = creator;
  u.function = str(function);
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_USER_THREAD;
  f.user_thread = &u;
  frame(f);
}

void StreamBuilder::userSwitch(uint32_t tid, int64_t t, uint32_t from, uint32_t to,
                               Threadmon__UserSwitchKind kind) {
  Threadmon__UserSwitches us = THREADMON__USER_SWITCHES__INIT;
  int64_t delta = 0;
  us.base_ns = uint64_t(t);
  us.n_tid = us.n_delta_ns = us.n_from_id = us.n_to_id = us.n_kind = 1;
  us.tid = &tid;
  us.delta_ns = &delta;
  us.from_id = &from;
  us.to_id = &to;
  us.kind = &kind;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_USER_SWITCHES;
  f.user_switches = &us;
  frame(f);
}

void StreamBuilder::tick(const Tick &in) {
  Repeated<Threadmon__LwpSample> lwps(in.lwps, THREADMON__LWP_SAMPLE__INIT);
  Repeated<Threadmon__CpuSample> cpus(in.cpus, THREADMON__CPU_SAMPLE__INIT);
  Repeated<Threadmon__SyncStats> sync(in.sync, THREADMON__SYNC_STATS__INIT);
  Repeated<Threadmon__SiteStats> sites(in.sites, THREADMON__SITE_STATS__INIT);
  Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
  for (const Lwp &l : in.lwps) ps.events_folded += l.foldedChanges;
  ps.frames_dropped = in.framesDropped;
  ps.sampler_cpu_ns = in.samplerCpuNs;
  ps.threads_tracked = in.threadsTracked;
  Threadmon__Tick tk = THREADMON__TICK__INIT;
  tk.seq = ++seq_;
  tk.time_ns = uint64_t(in.t);
  tk.n_lwps = lwps.size();
  tk.lwps = lwps.data();
  tk.n_cpus = cpus.size();
  tk.cpus = cpus.data();
  tk.n_sync = sync.size();
  tk.sync = sync.data();
  tk.probe = &ps;
  tk.n_sites = sites.size();
  tk.sites = sites.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tk;
  frame(f);
}

void StreamBuilder::tick(int64_t t, const std::vector<Lwp> &lwps, const std::vector<Cpu> &cpus,
                         const std::vector<Sync> &sync, uint64_t framesDropped,
                         const std::vector<Site> &sites) {
  Tick tk;
  tk.t = t;
  tk.lwps = lwps;
  tk.cpus = cpus;
  tk.sync = sync;
  tk.sites = sites;
  tk.framesDropped = framesDropped;
  tick(tk);
}

void StreamBuilder::notice(int64_t t, const char *text) {
  Threadmon__Notice n = THREADMON__NOTICE__INIT;
  n.time_ns = uint64_t(t);
  n.text = str(text);
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_NOTICE;
  f.notice = &n;
  frame(f);
}

void StreamBuilder::exec(int64_t t, const char *exe, std::vector<const char *> argv) {
  Threadmon__Exec e = THREADMON__EXEC__INIT;
  e.time_ns = uint64_t(t);
  e.exe = str(exe);
  std::vector<char *> args;
  for (const char *a : argv) args.push_back(str(a));
  e.n_argv = args.size();
  e.argv = args.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_EXEC;
  f.exec = &e;
  frame(f);
}

void StreamBuilder::goodbye(int64_t t, int exitStatus, uint64_t eventsDropped) {
  Threadmon__Goodbye g = THREADMON__GOODBYE__INIT;
  g.events_dropped = eventsDropped;
  g.time_ns = uint64_t(t);
  g.reason = outside_ ? THREADMON__END_REASON__END_DETACH : THREADMON__END_REASON__END_EXIT;
  g.exit_status = exitStatus;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_GOODBYE;
  f.goodbye = &g;
  frame(f);
}

QByteArray StreamBuilder::stream() const {
  QByteArray out = header();
  for (const std::string &p : frames_)
    out += framed(QByteArray::fromRawData(p.data(), qsizetype(p.size())));
  return out;
}

std::vector<uint64_t> StreamBuilder::frameOffsets() const {
  std::vector<uint64_t> off;
  uint64_t at = TM_HEADER_BYTES;
  for (const std::string &p : frames_) {
    off.push_back(at);
    at += TM_FRAME_PREFIX_BYTES + p.size();
  }
  return off;
}

void StreamBuilder::applyTo(tmon::SessionModel *model) const {
  for (const std::string &p : frames_)
    model->applyPayload(reinterpret_cast<const uint8_t *>(p.data()), p.size());
}

bool StreamBuilder::writeFile(const QString &path) const {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  QByteArray s = stream();
  return f.write(s) == s.size();
}

}  // namespace tmtest
