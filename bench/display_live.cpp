#include "display_live.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <thread>
#include <vector>

#include "guiblock.h"
#include "livesession.h"
#include "modelview.h"
#include "probeconnection.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "threadmon.pb-c.h"
#include "tmwire.h"

namespace livebench {

namespace {

int64_t nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t processCpuNs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto ns = [](const timeval &tv) { return int64_t(tv.tv_sec) * 1000000000 + tv.tv_usec * 1000; };
  return ns(ru.ru_utime) + ns(ru.ru_stime);
}

// VmRSS and VmHWM of this process, in MiB.
std::pair<double, double> rssMiB() {
  QFile f(QStringLiteral("/proc/self/status"));
  double rss = 0, hwm = 0;
  if (!f.open(QIODevice::ReadOnly)) return {0, 0};
  for (const QByteArray &line : f.readAll().split('\n')) {
    const QList<QByteArray> parts = line.simplified().split(' ');
    if (parts.size() < 2) continue;
    if (parts[0] == "VmRSS:") rss = parts[1].toDouble() / 1024;
    if (parts[0] == "VmHWM:") hwm = parts[1].toDouble() / 1024;
  }
  return {rss, hwm};
}

// The stream as a probe sends it over TCP: format 1, frames in batches of
// one tick (the frames before each Tick, and the Tick), at the tick's time.
struct Batch {
  QByteArray bytes;
  int64_t timeNs = 0;
  uint64_t framesAfter = 0;  // frames sent once this batch is
};

QByteArray framedPayload(const uint8_t *payload, uint32_t len) {
  uint8_t prefix[TM_FRAME_PREFIX_BYTES];
  tm_frame_prefix_encode(prefix, payload, len);
  return QByteArray(reinterpret_cast<const char *>(prefix), TM_FRAME_PREFIX_BYTES) +
         QByteArray(reinterpret_cast<const char *>(payload), qsizetype(len));
}

bool splitIntoTicks(const QByteArray &stream, std::vector<Batch> *out, QByteArray *header) {
  uint8_t h[TM_HEADER_BYTES];
  tm_header_encode(h);
  *header = QByteArray(reinterpret_cast<const char *>(h), TM_HEADER_BYTES);
  tm_decoder dec;
  tm_decoder_init(&dec);
  tm_decoder_feed(&dec, stream.constData(), size_t(stream.size()));
  Batch cur;
  uint64_t frames = 0;
  int64_t lastTick = 0;
  for (;;) {
    const uint8_t *payload = nullptr;
    uint32_t len = 0;
    const tm_decode_status st = tm_decoder_next(&dec, &payload, &len);
    if (st != TM_DECODE_FRAME) {
      if (st == TM_DECODE_ERROR) std::fprintf(stderr, "stream: %s\n", tm_decoder_error(&dec));
      break;
    }
    cur.bytes += framedPayload(payload, len);
    ++frames;
    Threadmon__Frame *f = threadmon__frame__unpack(nullptr, len, payload);
    if (f && f->body_case == THREADMON__FRAME__BODY_TICK) {
      cur.timeNs = lastTick = int64_t(f->tick->time_ns);
      cur.framesAfter = frames;
      out->push_back(std::move(cur));
      cur = Batch();
    }
    if (f) threadmon__frame__free_unpacked(f, nullptr);
  }
  tm_decoder_free(&dec);
  if (!cur.bytes.isEmpty()) {
    cur.timeNs = lastTick;
    cur.framesAfter = frames;
    out->push_back(std::move(cur));
  }
  return !out->empty();
}

// Plays the batches to 127.0.0.1:port at their times (scaled by speed),
// writing when each went out into sentNs. Its own CPU time in cpuNs.
class Sender {
 public:
  Sender(const QByteArray &header, const std::vector<Batch> &batches, double speed)
      : sentNs(batches.size(), 0), header_(header), batches_(batches), speed_(speed) {}
  void start(quint16 port) {
    thread_ = std::thread([this, port] { run(port); });
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // sentNs[i] is written before sent passes i (and read only below it).
  std::vector<int64_t> sentNs;
  std::atomic<size_t> sent{0};
  std::atomic<bool> done{false};
  int64_t cpuNs = 0;

 private:
  void run(quint16 port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
      std::perror("sender: connect");
      done = true;
      return;
    }
    auto writeAll = [fd](const QByteArray &b) {
      for (qsizetype at = 0; at < b.size();) {
        const ssize_t n = ::write(fd, b.constData() + at, size_t(b.size() - at));
        if (n <= 0) return false;
        at += n;
      }
      return true;
    };
    writeAll(header_);
    const int64_t start = nowNs(), t0 = batches_.front().timeNs;
    for (size_t i = 0; i < batches_.size(); ++i) {
      const int64_t due = start + int64_t(double(batches_[i].timeNs - t0) / speed_);
      for (int64_t now = nowNs(); now < due; now = nowNs()) {
        const timespec ts{0, long(due - now)};
        nanosleep(&ts, nullptr);
      }
      sentNs[i] = nowNs();
      if (!writeAll(batches_[i].bytes)) break;
      sent = i + 1;
    }
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    cpuNs = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    done = true;
    ::shutdown(fd, SHUT_WR);
    char sink[4096];
    while (::read(fd, sink, sizeof sink) > 0) {  // the display's Welcome, then its close
    }
    ::close(fd);
  }
  QByteArray header_;
  const std::vector<Batch> &batches_;
  double speed_;
  std::thread thread_;
};

struct Lags {
  std::vector<double> ms;  // per presentation: the oldest frame it newly showed
  double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
  double percentile(double p) const {
    if (ms.empty()) return 0;
    std::vector<double> v = ms;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
  }
};

void runOnce(const QByteArray &header, const std::vector<Batch> &batches, const Options &o,
             const QString &raise) {
  QTcpServer server;
  if (!server.listen(QHostAddress::LocalHost, 0)) {
    std::fprintf(stderr, "cannot listen: %s\n", qPrintable(server.errorString()));
    std::exit(1);
  }
  std::unique_ptr<tmui::SessionView> page;
  Sender sender(header, batches, o.speed);
  // The batch holding frame number n (1-based) and when it went out.
  auto arrivalNs = [&](uint64_t n) {
    auto it = std::lower_bound(batches.begin(), batches.end(), n,
                               [](const Batch &b, uint64_t x) { return b.framesAfter < x; });
    const size_t i = std::min(size_t(it - batches.begin()), batches.size() - 1);
    return i < sender.sent.load() ? sender.sentNs[i] : int64_t(0);
  };
  Lags lags;
  std::vector<uint64_t> shownBefore(tmon::kViewCount, 0);
  // Per view: refreshes presented, their CPU time (ms) and the longest.
  struct Refreshes {
    int count = 0;
    double cpuMs = 0, longestMs = 0;
  };
  std::vector<Refreshes> refreshes(tmon::kViewCount);
  auto openPage = [&](tmnet::ProbeConnection *connection) {
    auto *live = new LiveSession(connection);
    page.reset(live->page());
    scale::showPage(page.get());
    tmui::ViewKind kind;
    if (!raise.isEmpty() && tmon::parseViewKind(raise, &kind)) page->showView(kind);
    for (const tmon::ViewInfo &info : tmon::kViews) {
      tmui::ModelView *v = page->view(info.kind);
      QObject::connect(v, &tmui::ModelView::presented, [&, v, info] {
        Refreshes &rf = refreshes[size_t(info.kind)];
        rf.count++;
        rf.cpuMs += v->lastCostMs();
        rf.longestMs = std::max(rf.longestMs, v->lastCostMs());
        const uint64_t shown = v->shownFrames(), before = shownBefore[size_t(info.kind)];
        if (!v->showing() || shown <= before) return;
        shownBefore[size_t(info.kind)] = shown;
        const int64_t arrived = arrivalNs(before + 1);
        if (arrived > 0) lags.ms.push_back(double(nowNs() - arrived) / 1e6);
      });
    }
  };
  QObject::connect(&server, &QTcpServer::newConnection, [&] {
    auto *connection = new tmnet::ProbeConnection(server.nextPendingConnection(), QByteArray());
    // As ProbeListener does: a session once the Hello passed.
    QObject::connect(connection, &tmnet::ProbeConnection::accepted,
                     [&, connection] { openPage(connection); });
  });
  scale::GuiBlockMeter meter(5);  // not 0: it would keep the GUI thread busy itself
  const int64_t gui0 = scale::GuiBlockMeter::threadCpuNs(), proc0 = processCpuNs(), wall0 = nowNs();
  sender.start(server.serverPort());
  meter.start();
  // The backlog: frames sent but not yet applied, sampled every 100 ms.
  uint64_t maxBacklog = 0;
  QTimer sample;
  QObject::connect(&sample, &QTimer::timeout, [&] {
    const size_t s = sender.sent;
    if (!page || s == 0) return;
    const uint64_t applied = page->model()->framesApplied();
    maxBacklog = std::max(
        maxBacklog, batches[s - 1].framesAfter - std::min(applied, batches[s - 1].framesAfter));
  });
  sample.start(100);
  // processEvents(flags, ms) would not wait (it drops WaitForMoreEvents):
  // a busy loop that the GUI thread's CPU time would count. The timers
  // above wake this one.
  while (!sender.done) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
  const int64_t lastSent = nowNs();
  // Until every view on screen shows the last frame (or 60 s).
  const uint64_t total = batches.back().framesAfter;
  auto caughtUp = [&] {
    if (!page || page->model()->framesApplied() < total) return false;
    for (const tmon::ViewInfo &info : tmon::kViews) {
      tmui::ModelView *v = page->view(info.kind);
      if (v->showing() && (v->shownFrames() < total || v->busy())) return false;
    }
    return true;
  };
  while (!caughtUp() && nowNs() - lastSent < 60'000'000'000)
    QApplication::processEvents(QEventLoop::WaitForMoreEvents);
  const double behindMs = double(nowNs() - lastSent) / 1e6;
  meter.stop();
  sample.stop();
  sender.join();
  const double wallS = double(nowNs() - wall0) / 1e9;
  const double streamS = double(batches.back().timeNs - batches.front().timeNs) / 1e9 / o.speed;
  const double guiCpu = double(scale::GuiBlockMeter::threadCpuNs() - gui0) / 1e9;
  const double procCpu = double(processCpuNs() - proc0 - sender.cpuNs) / 1e9;
  const auto [rss, hwm] = rssMiB();
  // Of the stream's own duration: the share of a core the session costs
  // while it keeps up (wall time on a loaded machine says little).
  std::printf("%-9s %6.1f %7.1f %7.1f %6.0f %6.0f %6.0f %7.0f %8llu %6.0f/%-4.0f %6.0f %6.0f\n",
              raise.isEmpty() ? "page" : qPrintable(raise), wallS, 100 * guiCpu / streamS,
              100 * procCpu / streamS, lags.percentile(0.5), lags.percentile(0.95), lags.max(),
              behindMs, static_cast<unsigned long long>(maxBacklog), meter.longestMs(),
              meter.longestCpuMs(), rss, hwm);
  for (const tmon::ViewInfo &info : tmon::kViews) {
    const Refreshes &rf = refreshes[size_t(info.kind)];
    if (rf.count == 0) continue;
    std::printf("  %-12s %4d refreshes, CPU %6.1f ms each (longest %6.1f), %5.1f%% of a core\n",
                info.name, rf.count, rf.cpuMs / rf.count, rf.longestMs, 100 * rf.cpuMs / 1e3 / streamS);
  }
  std::fflush(stdout);
  page.reset();
}

}  // namespace

int runPaced(const QByteArray &stream, const Options &o) {
  std::vector<Batch> batches;
  QByteArray header;
  if (!splitIntoTicks(stream, &batches, &header)) {
    std::fprintf(stderr, "no frames in the stream\n");
    return 1;
  }
  const double seconds = double(batches.back().timeNs - batches.front().timeNs) / 1e9 / o.speed;
  std::printf("live, paced: %.1f MB, %zu ticks over %.1f s (speed %.2gx), loopback TCP\n",
              double(stream.size()) / 1e6, batches.size(), seconds, o.speed);
  std::printf(
      "CPU %%: CPU time over the stream's duration (GUI thread; process without the "
      "sender); lag ms: frame arrival to every view on screen showing it; backlog: frames "
      "sent, not yet applied (most); block: longest GUI block, wall/CPU\n");
  std::printf("%-9s %6s %7s %7s %6s %6s %6s %7s %8s %11s %6s %6s\n", "raised", "wall s", "GUI %",
              "proc %", "lag50", "lag95", "lagmax", "behind", "backlog", "block ms", "RSS", "HWM");
  if (o.views.isEmpty()) runOnce(header, batches, o, QString());
  for (const QString &v : o.views) runOnce(header, batches, o, v);
  return 0;
}

}  // namespace livebench
