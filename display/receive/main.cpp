// threadmon-receive: a headless receiver for servers and CI (`threadmon
// receive`). It listens as the display does (display/net: TLS with the
// token's key, plain on loopback without one) and records every session
// into a capture of its own in the output directory, named by the probe's
// host, pid and start, created exclusively. SIGINT and SIGTERM finish every
// capture (index written: `threadmon report` reads it) and end it.
//
//   threadmon-receive --listen ADDR:PORT -o DIR    (token: THREADMON_TOKEN)
//
// It prints "listening ADDR:PORT" on stdout once listening, then
// "wrote PATH (N frames)" as each capture is finished.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSocketNotifier>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "capturewriter.h"
#include "listenaddress.h"
#include "probeconnection.h"
#include "probelistener.h"
#include "tokencheck.h"

namespace {

int signalPipe[2] = {-1, -1};

void onSignal(int sig) {
  const char c = static_cast<char>(sig);
  (void)!::write(signalPipe[1], &c, 1);
}

// A file name's part from what a peer sent: letters, digits, '.', '-', '_'.
QString namePart(const QString &text) {
  QString out;
  for (const QChar c : text.left(64))
    out += c.isLetterOrNumber() && c.unicode() < 128 ? c
           : (c == '.' || c == '-' || c == '_')      ? c
                                                     : QChar('_');
  return out.isEmpty() ? QStringLiteral("unknown") : out;
}

class Receiver {
 public:
  explicit Receiver(const QString &dir) : dir_(dir) {}

  void take(tmnet::ProbeConnection *conn) {
    writers_[conn] = nullptr;
    QObject::connect(conn, &tmnet::ProbeConnection::frameArrived, conn,
                     [this, conn](const QByteArray &payload) { frame(conn, payload); });
    QObject::connect(conn, &tmnet::ProbeConnection::closed, conn, [this, conn] {
      finish(conn);
      conn->deleteLater();
    });
  }

  void flushAll() {
    for (auto &[conn, w] : writers_)
      if (w) w->flush();
  }

  void finishAll() {
    while (!writers_.empty()) finish(writers_.begin()->first);
  }

 private:
  // The Hello names the capture; every checked frame goes to it as it came.
  void frame(tmnet::ProbeConnection *conn, const QByteArray &payload) {
    auto it = writers_.find(conn);
    if (it == writers_.end()) return;
    const auto *p = reinterpret_cast<const uint8_t *>(payload.constData());
    const auto len = static_cast<uint32_t>(payload.size());
    if (!it->second) {
      it->second = open(conn, p, len);
      if (!it->second) {
        writers_.erase(it);
        return;
      }
    }
    if (!it->second->writeFrame(p, len)) {
      std::fprintf(stderr, "threadmon-receive: %s\n", qPrintable(it->second->error()));
      it->second.reset();
      writers_.erase(it);
    }
  }

  std::unique_ptr<tmon::CaptureWriter> open(tmnet::ProbeConnection *conn, const uint8_t *p,
                                            uint32_t len) {
    QString host = conn->peer();
    quint64 startNs = 0;
    if (Threadmon__Frame *f = threadmon__frame__unpack(nullptr, len, p)) {
      if (f->body_case == THREADMON__FRAME__BODY_HELLO) {
        if (f->hello->host && f->hello->host[0]) host = QString::fromUtf8(f->hello->host);
        startNs = f->hello->start_realtime_ns;
      }
      threadmon__frame__free_unpacked(f, nullptr);
    }
    const QDateTime start = startNs ? QDateTime::fromMSecsSinceEpoch(qint64(startNs / 1000000),
                                                                     Qt::UTC)
                                    : QDateTime::currentDateTimeUtc();
    const QString base = QStringLiteral("%1-%2-%3")
                             .arg(namePart(host))
                             .arg(conn->pid())
                             .arg(start.toString(QStringLiteral("yyyyMMdd-HHmmss")));
    auto w = std::make_unique<tmon::CaptureWriter>();
    for (int n = 1; n < 100; ++n) {
      const QString path =
          dir_.filePath(n == 1 ? base + ".tmcap" : QStringLiteral("%1-%2.tmcap").arg(base).arg(n));
      // Exclusively: never over a file there, never through a link.
      const int fd = ::open(QFile::encodeName(path).constData(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) {
        std::fprintf(stderr, "threadmon-receive: %s: cannot create: %s\n", qPrintable(path),
                     std::strerror(errno));
        return nullptr;
      }
      const bool ok = w->openDescriptor(fd, path);
      ::close(fd);
      if (!ok) break;
      paths_[conn] = path;
      std::fprintf(stderr, "threadmon-receive: recording pid %u from %s to %s\n", conn->pid(),
                   qPrintable(conn->peer()), qPrintable(path));
      return w;
    }
    std::fprintf(stderr, "threadmon-receive: %s\n",
                 qPrintable(w->error().isEmpty() ? QStringLiteral("no free name for ") + base
                                                 : w->error()));
    return nullptr;
  }

  void finish(tmnet::ProbeConnection *conn) {
    auto it = writers_.find(conn);
    if (it == writers_.end()) return;
    std::unique_ptr<tmon::CaptureWriter> w = std::move(it->second);
    writers_.erase(it);
    if (!w) return;
    const uint64_t frames = w->framesWritten();
    if (!w->close()) {
      std::fprintf(stderr, "threadmon-receive: %s\n", qPrintable(w->error()));
      return;
    }
    if (conn->state() == tmnet::ProbeConnection::State::Failed)
      std::fprintf(stderr, "threadmon-receive: pid %u from %s: %s\n", conn->pid(),
                   qPrintable(conn->peer()), qPrintable(conn->error()));
    std::printf("wrote %s (%llu frames)\n", qPrintable(paths_[conn]),
                static_cast<unsigned long long>(frames));
    std::fflush(stdout);
    paths_.erase(conn);
  }

  QDir dir_;
  std::map<tmnet::ProbeConnection *, std::unique_ptr<tmon::CaptureWriter>> writers_;
  std::map<tmnet::ProbeConnection *, QString> paths_;
};

int usage(const char *why) {
  std::fprintf(stderr, "threadmon-receive: %s (usage: threadmon-receive --listen ADDR:PORT -o DIR; "
                       "the token in THREADMON_TOKEN)\n", why);
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("threadmon-receive"));
  QString listenText, outDir;
  const QStringList args = app.arguments();
  for (int i = 1; i < args.size(); ++i) {
    if (args[i] == "--listen" && i + 1 < args.size())
      listenText = args[++i];
    else if ((args[i] == "-o" || args[i] == "--output-dir") && i + 1 < args.size())
      outDir = args[++i];
    else
      return usage(qPrintable(QStringLiteral("unknown argument '%1'").arg(args[i])));
  }
  if (listenText.isEmpty() || outDir.isEmpty()) return usage("--listen and -o are needed");
  const QByteArray token = qgetenv("THREADMON_TOKEN");
  qunsetenv("THREADMON_TOKEN");
  QString error = tmnet::tokenProblem(token);
  tmnet::ListenAddress addr;
  // Plain TCP on loopback only: from the network, a token (and so TLS).
  if (error.isEmpty() && tmnet::parseListenAddress(listenText, &addr, &error) &&
      !addr.host.isLoopback() && token.isEmpty())
    error = QStringLiteral("listening on %1 takes probes from the network: give a token "
                           "(--token-file F), which makes every link TLS")
                .arg(addr.host.toString());
  if (!error.isEmpty()) return usage(qPrintable(error));
  if (!QDir().mkpath(outDir) || !QFileInfo(outDir).isDir())
    return usage(qPrintable(QStringLiteral("cannot create the directory %1").arg(outDir)));

  tmnet::ProbeListener listener(token);
  error = listener.listen(addr);
  if (!error.isEmpty()) {
    std::fprintf(stderr, "threadmon-receive: %s\n", qPrintable(error));
    return 1;
  }
  Receiver receiver(outDir);
  QObject::connect(&listener, &tmnet::ProbeListener::sessionAccepted, &listener,
                   [&receiver](tmnet::ProbeConnection *conn) { receiver.take(conn); });
  QTimer flushTimer;  // a receiver killed outright loses a second at most
  QObject::connect(&flushTimer, &QTimer::timeout, [&receiver] { receiver.flushAll(); });
  flushTimer.start(1000);

  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, signalPipe) != 0) return 1;
  QSocketNotifier signalNotifier(signalPipe[0], QSocketNotifier::Read);
  QObject::connect(&signalNotifier, &QSocketNotifier::activated, [&receiver, &app] {
    char c;
    (void)!::read(signalPipe[0], &c, 1);
    receiver.finishAll();
    app.quit();
  });
  struct sigaction sa = {};
  sa.sa_handler = onSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  std::fprintf(stderr, "threadmon-receive: listening on %s (%s), captures to %s\n",
               qPrintable(listener.addressText()),
               listener.encrypted() ? "TLS with the token's key" : "plain TCP, loopback",
               qPrintable(outDir));
  std::printf("listening %s\n", qPrintable(listener.addressText()));
  std::fflush(stdout);
  return app.exec();
}
