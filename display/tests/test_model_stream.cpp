#include "test_model_stream.h"

#include <unistd.h>

#include <QDir>
#include <QFile>
#include <cstdlib>
#include <set>

#include "sessionmodel.h"
#include "tmwire.h"

namespace tmtest {

void StreamBuilder::add(const Threadmon__Frame &f) {
  std::string buf(threadmon__frame__get_packed_size(&f), '\0');
  threadmon__frame__pack(&f, reinterpret_cast<uint8_t *>(&buf[0]));
  frames_.push_back(buf);
}

void StreamBuilder::hello(bool perfSwitch, uint32_t cpuCount, uint32_t version) {
  Threadmon__Hello h = THREADMON__HELLO__INIT;
  h.protocol_version = version;
  h.pid = 4242;
  h.ppid = 1;
  h.exe = const_cast<char *>(exe_);
  char *argv[] = {const_cast<char *>("workload"), const_cast<char *>("--threads=2")};
  h.argv = argv;
  h.n_argv = 2;
  h.cpu_count = cpuCount;
  h.tick_interval_ns = 10 * kMs;
  Threadmon__Source src[] = {THREADMON__SOURCE__SOURCE_INTERPOSE,
                             THREADMON__SOURCE__SOURCE_PROC_TASK,
                             THREADMON__SOURCE__SOURCE_PROC_STAT,
                             THREADMON__SOURCE__SOURCE_PERF_SWITCH};
  h.sources = outside_ ? src + 1 : src;
  h.n_sources = (perfSwitch ? 4 : 3) - (outside_ ? 1 : 0);
  if (!sources_.empty()) {
    h.sources = const_cast<Threadmon__Source *>(sources_.data());
    h.n_sources = sources_.size();
  }
  h.start_monotonic_ns = uint64_t(kT0);
  h.probe_tid = 4243;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_HELLO;
  f.hello = &h;
  add(f);
}

void StreamBuilder::threadStart(uint32_t tid, int64_t t, const char *name, const char *routine,
                                bool probe, bool isMain) {
  Threadmon__ThreadStart s = THREADMON__THREAD_START__INIT;
  s.tid = tid;
  s.time_ns = uint64_t(t);
  s.name = const_cast<char *>(name);
  s.start_routine = const_cast<char *>(routine);
  s.is_probe = probe;
  s.is_main = isMain;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_START;
  f.thread_start = &s;
  add(f);
}

void StreamBuilder::threadAttr(uint32_t tid, int64_t t, const char *name, int policy, int nice,
                               std::vector<uint64_t> affinity) {
  Threadmon__ThreadAttr a = THREADMON__THREAD_ATTR__INIT;
  a.tid = tid;
  a.time_ns = uint64_t(t);
  a.name = const_cast<char *>(name);
  a.policy = policy;
  a.nice = nice;
  a.n_affinity = affinity.size();
  a.affinity = affinity.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_ATTR;
  f.thread_attr = &a;
  add(f);
}

void StreamBuilder::threadEnd(uint32_t tid, int64_t t, uint64_t oncpuNs) {
  Threadmon__ThreadEnd e = THREADMON__THREAD_END__INIT;
  e.tid = tid;
  e.time_ns = uint64_t(t);
  e.oncpu_ns = oncpuNs;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_END;
  f.thread_end = &e;
  add(f);
}

void StreamBuilder::transition(uint32_t tid, int64_t t, Threadmon__ThreadState state,
                               uint32_t object, uint32_t holder, uint32_t releaser) {
  // Two-entry batches would test the delta arithmetic; base+0 keeps it explicit.
  Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
  int64_t delta = 0;
  tr.base_ns = uint64_t(t);
  tr.n_tid = tr.n_delta_ns = tr.n_state = tr.n_object_id = tr.n_holder_tid = tr.n_releaser_tid = 1;
  tr.tid = &tid;
  tr.delta_ns = &delta;
  tr.state = &state;
  tr.object_id = &object;
  tr.holder_tid = &holder;
  tr.releaser_tid = &releaser;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f.transitions = &tr;
  add(f);
}

void StreamBuilder::stack(uint32_t id, const std::vector<const char *> &frames) {
  Threadmon__Stack st = THREADMON__STACK__INIT;
  std::vector<char *> fr;
  for (const char *x : frames) fr.push_back(const_cast<char *>(x));
  st.id = id;
  st.n_frames = fr.size();
  st.frames = fr.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_STACK;
  f.stack = &st;
  add(f);
}

void StreamBuilder::cpuSwitch(uint32_t tid, int64_t t, uint32_t cpu, Threadmon__SwitchKind kind,
                              uint64_t lost, bool stopped) {
  Threadmon__CpuSwitches sw = THREADMON__CPU_SWITCHES__INIT;
  sw.lost = lost;
  sw.stopped = stopped;
  int64_t delta = 0;
  sw.base_ns = uint64_t(t);
  sw.n_tid = sw.n_delta_ns = sw.n_cpu = sw.n_kind = 1;
  sw.tid = &tid;
  sw.delta_ns = &delta;
  sw.cpu = &cpu;
  sw.kind = &kind;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SWITCHES;
  f.switches = &sw;
  add(f);
}

void StreamBuilder::userThread(uint32_t id, int64_t t, uint32_t creator, const char *function) {
  Threadmon__UserThread u = THREADMON__USER_THREAD__INIT;
  u.id = id;
  u.time_ns = uint64_t(t);
  u.creator_tid = creator;
  u.function = const_cast<char *>(function);
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_USER_THREAD;
  f.user_thread = &u;
  add(f);
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
  add(f);
}

void StreamBuilder::tick(int64_t t, const std::vector<Lwp> &lwps, const std::vector<Cpu> &cpus,
                         const std::vector<Sync> &sync, uint64_t framesDropped,
                         const std::vector<Site> &sites) {
  static uint64_t seq = 0;
  std::vector<Threadmon__LwpSample> ls(lwps.size());
  std::vector<Threadmon__LwpSample *> lp;
  for (size_t i = 0; i < lwps.size(); i++) {
    Threadmon__LwpSample s = THREADMON__LWP_SAMPLE__INIT;
    const Lwp &l = lwps[i];
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
    ls[i] = s;
    lp.push_back(&ls[i]);
  }
  std::vector<Threadmon__CpuSample> cs(cpus.size());
  std::vector<Threadmon__CpuSample *> cp;
  for (size_t i = 0; i < cpus.size(); i++) {
    Threadmon__CpuSample c = THREADMON__CPU_SAMPLE__INIT;
    const Cpu &x = cpus[i];
    c.cpu = x.cpu;
    c.user_ns = x.user;
    c.nice_ns = x.nice;
    c.system_ns = x.system;
    c.idle_ns = x.idle;
    c.iowait_ns = x.iowait;
    c.irq_ns = x.irq;
    c.softirq_ns = x.softirq;
    c.steal_ns = x.steal;
    cs[i] = c;
    cp.push_back(&cs[i]);
  }
  std::vector<Threadmon__SyncStats> ss(sync.size());
  std::vector<Threadmon__SyncStats *> sp;
  for (size_t i = 0; i < sync.size(); i++) {
    Threadmon__SyncStats s = THREADMON__SYNC_STATS__INIT;
    s.id = sync[i].id;
    s.acquisitions = sync[i].acquisitions;
    s.contentions = sync[i].contentions;
    s.wait_ns = sync[i].waitNs;
    s.max_wait_ns = sync[i].maxWaitNs;
    s.hold_ns = sync[i].holdNs;
    s.wait_samples = sync[i].waitSamples;
    ss[i] = s;
    sp.push_back(&ss[i]);
  }
  std::vector<Threadmon__SiteStats> st(sites.size());
  std::vector<Threadmon__SiteStats *> stp;
  for (size_t i = 0; i < sites.size(); i++) {
    Threadmon__SiteStats s = THREADMON__SITE_STATS__INIT;
    s.object_id = sites[i].object;
    s.stack_id = sites[i].stack;
    s.contentions = sites[i].contentions;
    s.wait_ns = sites[i].waitNs;
    st[i] = s;
    stp.push_back(&st[i]);
  }
  Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
  ps.frames_dropped = framesDropped;
  for (const Lwp &l : lwps) ps.events_folded += l.foldedChanges;
  Threadmon__Tick tk = THREADMON__TICK__INIT;
  tk.seq = ++seq;
  tk.time_ns = uint64_t(t);
  tk.n_lwps = lp.size();
  tk.lwps = lp.data();
  tk.n_cpus = cp.size();
  tk.cpus = cp.data();
  tk.n_sync = sp.size();
  tk.sync = sp.data();
  tk.probe = &ps;
  tk.n_sites = stp.size();
  tk.sites = stp.data();
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tk;
  add(f);
}

void StreamBuilder::syncObject(uint32_t id, Threadmon__SyncKind kind, uint64_t address,
                               const char *module, const char *symbol, const char *callSite,
                               const char *madeAt) {
  Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
  o.id = id;
  o.kind = kind;
  o.address = address;
  o.module = const_cast<char *>(module);
  o.symbol = const_cast<char *>(symbol);
  char *stack[] = {const_cast<char *>(callSite)};
  o.first_contention_stack = stack;
  o.n_first_contention_stack = callSite ? 1 : 0;
  o.made_at = const_cast<char *>(madeAt ? madeAt : "");
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &o;
  add(f);
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
  add(f);
}

QByteArray StreamBuilder::stream() const {
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode(header);
  QByteArray out(reinterpret_cast<const char *>(header), TM_HEADER_BYTES);
  for (const std::string &p : frames_) {
    uint8_t prefix[TM_FRAME_PREFIX_BYTES];
    tm_frame_prefix_encode(prefix, reinterpret_cast<const uint8_t *>(p.data()), uint32_t(p.size()));
    out.append(reinterpret_cast<const char *>(prefix), TM_FRAME_PREFIX_BYTES);
    out.append(p.data(), qsizetype(p.size()));
  }
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

StreamBuilder userThreadScenario() {
  auto at = [](int64_t ms) { return kT0 + ms * kMs; };
  StreamBuilder b;
  b.hello(true);
  b.threadStart(102, at(0), "main", "workload!main", false, true);
  b.threadStart(101, at(0), "worker", "workload!worker+0x10");
  b.userThread(1, at(0), 101, "workload!fiber+0x0");
  b.userThread(2, at(0), 101, "workload!other_fiber+0x0");
  b.cpuSwitch(101, at(0), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(102, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.userSwitch(101, at(10), 0, 1);
  b.cpuSwitch(101, at(20), 1, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
  b.userSwitch(101, at(30), 1, 2);
  b.cpuSwitch(101, at(40), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.transition(101, at(50), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7);
  b.cpuSwitch(101, at(50), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.userSwitch(101, at(60), 2, 1);
  b.transition(101, at(80), THREADMON__THREAD_STATE__STATE_RUNNING);
  b.cpuSwitch(101, at(80), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.userSwitch(101, at(90), 1, 0, THREADMON__USER_SWITCH_KIND__USER_DONE);
  b.transition(101, at(100), THREADMON__THREAD_STATE__STATE_EXITED);
  b.cpuSwitch(101, at(100), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.threadEnd(101, at(100));
  const uint64_t clock101[] = {0, 10, 20, 20, 20, 30, 30, 30, 30, 40, 50};
  for (int ms = 10; ms <= 120; ms += 10) {
    std::vector<Lwp> l{Lwp{102, 0, 0, 0, 0, 1, 0, 0, 0, 0, 'S'}};
    if (ms <= 100) l.push_back(Lwp{101, 0, 0, clock101[ms / 10] * kMs, 0, 0, 0, 0, 0, 0, 'R'});
    b.tick(at(ms), l);
  }
  b.goodbye(at(120), 0);
  return b;
}

namespace {
// Two LWPs, started at 0, on CPUs 0 and 1 throughout unless told otherwise.
void twoLwps(StreamBuilder &b, uint32_t cpus, int users) {
  b.hello(true, cpus);
  b.threadStart(100, kT0, "main", "workload!main", false, true);
  b.cpuSwitch(100, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.threadStart(101, kT0, "lwp-0", "workload!lwp_main");
  b.threadStart(102, kT0, "lwp-1", "workload!lwp_main");
  b.cpuSwitch(101, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(102, kT0, 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  for (int u = 1; u <= users; u++) b.userThread(uint32_t(u), kT0, 100, "workload!worker+0x0");
}
void endLwps(StreamBuilder &b, int64_t end) {
  for (uint32_t tid : {101u, 102u}) {
    b.transition(tid, end, THREADMON__THREAD_STATE__STATE_EXITED);
    b.cpuSwitch(tid, end, tid - 101, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.threadEnd(tid, end);
  }
  for (int64_t t = kT0 + 10 * kMs; t <= end; t += 10 * kMs) b.tick(t, {});
  b.goodbye(end, 0);
}
}  // namespace

StreamBuilder userSharingScenario(uint32_t cpus) {
  StreamBuilder b;
  twoLwps(b, cpus, 6);
  uint32_t last[2] = {0, 0};
  for (int slice = 0; slice < 60; slice++) {
    for (uint32_t l = 0; l < 2; l++) {
      const uint32_t u = 3 * l + 1 + uint32_t(slice % 3);
      b.userSwitch(101 + l, kT0 + slice * 10 * kMs, last[l], u);
      last[l] = u;
    }
  }
  for (uint32_t l = 0; l < 2; l++)
    b.userSwitch(101 + l, kT0 + 600 * kMs, last[l], 0, THREADMON__USER_SWITCH_KIND__USER_DONE);
  endLwps(b, kT0 + 600 * kMs);
  return b;
}

StreamBuilder userHandoffScenario() {
  StreamBuilder b;
  twoLwps(b, 2, 4);
  constexpr int64_t kUs = 1000;
  for (int period = 0; period < 2000; period++) {
    const int64_t t = kT0 + period * 100 * kUs;
    for (uint32_t l = 0; l < 2; l++) {
      const uint32_t tid = 101 + l, u = 2 * l + 1 + uint32_t(period % 2);
      if (period) {
        b.transition(tid, t, THREADMON__THREAD_STATE__STATE_RUNNING);
        b.cpuSwitch(tid, t, l, THREADMON__SWITCH_KIND__SWITCH_IN);
      }
      b.userSwitch(tid, t, 0, u);
      b.userSwitch(tid, t + 10 * kUs, u, 0);
      b.transition(tid, t + 10 * kUs, THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 9);
      b.cpuSwitch(tid, t + 10 * kUs, l, THREADMON__SWITCH_KIND__SWITCH_OUT);
    }
  }
  const int64_t end = kT0 + 200 * kMs;
  for (uint32_t l = 0; l < 2; l++) {
    b.transition(101 + l, end, THREADMON__THREAD_STATE__STATE_RUNNING);
    b.cpuSwitch(101 + l, end, l, THREADMON__SWITCH_KIND__SWITCH_IN);
    for (uint32_t u = 2 * l + 1; u <= 2 * l + 2; u++) {
      b.userSwitch(101 + l, end, 0, u);
      b.userSwitch(101 + l, end, u, 0, THREADMON__USER_SWITCH_KIND__USER_DONE);
    }
  }
  endLwps(b, end);
  return b;
}

ScratchTmpDir::ScratchTmpDir()
    : old_(qgetenv("TMPDIR")), hadOld_(qEnvironmentVariableIsSet("TMPDIR")) {
  path_ = QDir::temp().filePath(QStringLiteral("tm-scratch-XXXXXX"));
  QByteArray name = QFile::encodeName(path_);
  if (mkdtemp(name.data())) path_ = QFile::decodeName(name);
  qputenv("TMPDIR", name);
}

ScratchTmpDir::~ScratchTmpDir() {
  if (hadOld_)
    qputenv("TMPDIR", old_);
  else
    qunsetenv("TMPDIR");
  QDir(path_).removeRecursively();
}

int ScratchTmpDir::filesOpenInside() const {
  // readlink: a file whose name went (or never had one: O_TMPFILE) reads
  // "PATH (deleted)"; two descriptors on one file are one file.
  std::set<QByteArray> files;
  const QByteArray inside = QFile::encodeName(path_) + '/';
  for (int fd = 0; fd < 4096; fd++) {
    char target[4096];
    const QByteArray link = "/proc/self/fd/" + QByteArray::number(fd);
    const ssize_t len = readlink(link.constData(), target, sizeof target - 1);
    if (len > 0 && QByteArray(target, int(len)).startsWith(inside))
      files.insert(QByteArray(target, int(len)));
  }
  return int(files.size());
}

}  // namespace tmtest
