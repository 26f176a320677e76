// The live path: listener, handshake, token, and damaged streams, over real
// loopback sockets.
#include <QLocalSocket>
#include <QSignalSpy>
#include <QSslCipher>
#include <QSslConfiguration>
#include <QSslPreSharedKeyAuthenticator>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>
#include <memory>

#include <dlfcn.h>
#include <link.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decodethread.h"
#include "framearena.h"
#include "linkpsk.h"
#include "listenaddress.h"
#include "probeconnection.h"
#include "probelistener.h"
#include "scratchtmpdir.h"
#include "sourcelines.h"
#include "synthscenarios.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"
#include "tokencheck.h"
#include "tmwire.h"

using tmnet::ProbeConnection;
using tmnet::ProbeListener;

namespace {

// Code of this binary a Stack's location points at.
__attribute__((noinline)) int oneFunction(int x) {
  asm volatile("" ::: "memory");
  return x * 5 + 2;
}

// Sends `bytes` to `listener` from a fresh client socket and waits until the
// server side either accepted or refused the session and then went quiet.
struct Outcome {
  QList<ProbeConnection *> accepted;
  QStringList refused;
  int frames = 0;
};

Outcome sendTo(ProbeListener *listener, const QByteArray &bytes, bool closeAfter = true) {
  Outcome out;
  auto c1 = QObject::connect(listener, &ProbeListener::sessionAccepted, listener,
                             [&out](ProbeConnection *c) {
                               out.accepted << c;
                               QObject::connect(c, &ProbeConnection::frameArrived, c,
                                                [&out](const QByteArray &) { ++out.frames; });
                             });
  auto c2 = QObject::connect(listener, &ProbeListener::sessionRefused, listener,
                             [&out](const QString &, const QString &why) { out.refused << why; });
  QTcpSocket client;
  client.connectToHost(QHostAddress::LocalHost, listener->port());
  if (!client.waitForConnected(5000)) qFatal("cannot connect to the listener");
  client.write(bytes);
  client.flush();
  (void)QTest::qWaitFor([&client] { return client.bytesToWrite() == 0; }, 5000);
  if (closeAfter) client.disconnectFromHost();
  // Let the server drain: it is done when the peer is closed and reported.
  (void)QTest::qWaitFor(
      [&out] {
        return !out.refused.isEmpty() ||
               (!out.accepted.isEmpty() &&
                out.accepted.first()->state() != ProbeConnection::State::Streaming);
      },
      5000);
  QObject::disconnect(c1);
  QObject::disconnect(c2);
  return out;
}

// The display's answer read back by a client: the body case (Welcome or
// Refusal), and a refusal's reason and text. body 0: nothing arrived.
struct Reply {
  int body = 0;
  int reason = 0;
  QString text;
};

Reply readReply(QTcpSocket *client, int timeoutMs = 5000) {
  QByteArray got;
  Reply reply;
  (void)QTest::qWaitFor(
      [&] {
        got += client->readAll();
        return got.size() >= TM_FRAME_PREFIX_BYTES &&
               got.size() >= TM_FRAME_PREFIX_BYTES + qFromLittleEndian<quint32>(got.constData());
      },
      timeoutMs);
  if (got.size() < TM_FRAME_PREFIX_BYTES) return reply;
  const quint32 len = qFromLittleEndian<quint32>(got.constData());
  Threadmon__Frame *f = threadmon__frame__unpack(
      nullptr, len, reinterpret_cast<const uint8_t *>(got.constData()) + TM_FRAME_PREFIX_BYTES);
  if (!f) return reply;
  reply.body = f->body_case;
  if (f->body_case == THREADMON__FRAME__BODY_REFUSAL) {
    reply.reason = f->refusal->reason;
    reply.text = QString::fromUtf8(f->refusal->text);
  }
  threadmon__frame__free_unpacked(f, nullptr);
  return reply;
}

// A client connected to `listener`, or a fatal error.
std::unique_ptr<QTcpSocket> connectTo(ProbeListener *listener) {
  auto client = std::make_unique<QTcpSocket>();
  client->connectToHost(QHostAddress::LocalHost, listener->port());
  if (!client->waitForConnected(5000)) qFatal("cannot connect to the listener");
  return client;
}

// A TLS client of the link with the key of `token` (what threadmon-relay
// does with OpenSSL), its handshake started.
std::unique_ptr<QSslSocket> tlsClient(ProbeListener *listener, const QByteArray &token) {
  auto client = std::make_unique<QSslSocket>();
  QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
  conf.setProtocol(QSsl::TlsV1_2);
  conf.setCiphers({QSslCipher(QStringLiteral("ECDHE-PSK-CHACHA20-POLY1305"))});
  conf.setPeerVerifyMode(QSslSocket::VerifyNone);
  client->setSslConfiguration(conf);
  const QByteArray psk = tmnet::linkPsk(token);
  QObject::connect(client.get(), &QSslSocket::preSharedKeyAuthenticationRequired, client.get(),
                   [psk](QSslPreSharedKeyAuthenticator *a) {
                     a->setIdentity("threadmon");
                     a->setPreSharedKey(psk);
                   });
  client->connectToHostEncrypted(QStringLiteral("127.0.0.1"), listener->port());
  return client;
}

bool closedByPeer(QTcpSocket *client, int timeoutMs = 5000) {
  return QTest::qWaitFor(
      [client] {
        client->readAll();
        return client->state() == QAbstractSocket::UnconnectedState;
      },
      timeoutMs);
}

}  // namespace

class TestNet : public QObject {
  Q_OBJECT
 private slots:
  void tokenCompare() {
    QVERIFY(tmnet::tokensEqual("s3cret", "s3cret"));
    QVERIFY(!tmnet::tokensEqual("s3cret", "s3creT"));
    QVERIFY(!tmnet::tokensEqual("s3cret", "s3cre"));
    QVERIFY(!tmnet::tokensEqual("s3cret", "s3cret!"));
    QVERIFY(!tmnet::tokensEqual("s3cret", ""));
    QVERIFY(tmnet::tokensEqual("", ""));
  }

  void blankTokenIsRefused() {
    QVERIFY(tmnet::tokenProblem("   ").contains("white space"));
    QVERIFY(tmnet::tokenProblem(" \t").contains("white space"));
    QVERIFY(tmnet::tokenProblem("").isEmpty());
    QVERIFY(tmnet::tokenProblem(" s3cret ").isEmpty());
  }

  void listenAddressParsing() {
    tmnet::ListenAddress a;
    QString err;
    QVERIFY(tmnet::parseListenAddress("0.0.0.0:9000", &a, &err));
    QCOMPARE(a.port, quint16(9000));
    QVERIFY(!a.host.isLoopback());
    QVERIFY(tmnet::parseListenAddress("[::1]:7411", &a, &err));
    QVERIFY(a.host.isLoopback());
    QVERIFY(tmnet::parseListenAddress("8000", &a, &err));
    QVERIFY(a.host.isLoopback());
    QVERIFY(!tmnet::parseListenAddress("host:99999", &a, &err));
    QVERIFY(err.contains("99999"));
    QVERIFY(!tmnet::parseListenAddress("not-an-ip:80", &a, &err));
  }

  void unixListenAddress() {
    tmnet::ListenAddress a;
    QString err;
    QVERIFY(tmnet::parseListenAddress("unix:/run/user/0/t/display.sock", &a, &err));
    QCOMPARE(a.unixPath, QStringLiteral("/run/user/0/t/display.sock"));
    QVERIFY(tmnet::checkListenPolicy(a, QByteArray(), false).isEmpty());
    QVERIFY(!tmnet::parseListenAddress("unix:relative.sock", &a, &err));
    QVERIFY(err.contains("absolute"));
    QVERIFY(!tmnet::parseListenAddress("unix:/" + QString(107, 'x'), &a, &err));
  }

  // The same stream over a Unix socket, from this user: accepted whole. The
  // socket is the owner's only, and a name already taken is refused, not
  // replaced.
  void unixSocketCarriesAWholeStream() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("display.sock"));
    tmnet::ListenAddress addr;
    addr.unixPath = path;
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen(addr).isEmpty());
    QCOMPARE(listener.addressText(), "unix:" + path);
    struct stat st {};
    QVERIFY(lstat(path.toLocal8Bit().constData(), &st) == 0);
    QVERIFY(S_ISSOCK(st.st_mode));
    QCOMPARE(st.st_mode & 077, 0u);
    ProbeListener second(QByteArray{});
    QVERIFY(second.listen(addr).contains("cannot listen on unix:"));

    QList<ProbeConnection *> accepted;
    connect(&listener, &ProbeListener::sessionAccepted, this,
            [&accepted](ProbeConnection *c) { accepted << c; });
    synth::Workload w;
    const QByteArray bytes = synth::stream(w);
    QLocalSocket client;
    client.connectToServer(path);
    QVERIFY(client.waitForConnected(5000));
    client.write(bytes);
    QVERIFY(QTest::qWaitFor([&client] {
      client.flush();
      return client.bytesToWrite() == 0;
    }, 5000));
    client.disconnectFromServer();
    QVERIFY(QTest::qWaitFor([&accepted] {
      return !accepted.isEmpty() && accepted.first()->state() != ProbeConnection::State::Streaming;
    }, 5000));
    QCOMPARE(accepted.first()->state(), ProbeConnection::State::Ended);
    QCOMPARE(accepted.first()->pid(), w.pid);
    QCOMPARE(accepted.first()->bytesReceived(), quint64(bytes.size()));
    QVERIFY2(accepted.first()->peer().startsWith("unix:pid "), qPrintable(accepted.first()->peer()));
  }

  // A peer of another user (the socket's mode opened to let it reach the
  // check) is refused in one line before anything it sent is read.
  void unixSocketRefusesAnotherUser() {
    if (geteuid() != 0) {  // QSKIP's variadic form warns under -pedantic
      QTest::qSkip("needs root to connect as another user", __FILE__, __LINE__);
      return;
    }
    QTemporaryDir dir;
    QVERIFY(chmod(dir.path().toLocal8Bit().constData(), 0755) == 0);
    const QString path = dir.filePath(QStringLiteral("display.sock"));
    tmnet::ListenAddress addr;
    addr.unixPath = path;
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen(addr).isEmpty());
    QVERIFY(chmod(path.toLocal8Bit().constData(), 0777) == 0);
    int accepted = 0;
    QStringList refused;
    connect(&listener, &ProbeListener::sessionAccepted, this, [&accepted] { ++accepted; });
    connect(&listener, &ProbeListener::sessionRefused, this,
            [&refused](const QString &peer, const QString &why) { refused << peer + ": " + why; });
    const QByteArray stream = synth::stream(synth::Workload{});
    const QByteArray where = path.toLocal8Bit();
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
      struct sockaddr_un a = {};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, where.constData(), sizeof a.sun_path - 1);
      const int s = socket(AF_UNIX, SOCK_STREAM, 0);
      if (s < 0 || ::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) _exit(4);
      (void)!write(s, stream.constData(), size_t(stream.size()));
      char c;
      (void)!read(s, &c, 1);  // until the display closes it
      _exit(0);
    }
    QVERIFY(QTest::qWaitFor([&refused] { return !refused.isEmpty(); }, 5000));
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    QCOMPARE(accepted, 0);
    QCOMPARE(refused.size(), 1);
    QVERIFY2(refused.first().contains("runs as uid 65534"), qPrintable(refused.first()));
  }

  void nonLoopbackNeedsTokenOrInsecure() {
    tmnet::ListenAddress any;
    QString err;
    QVERIFY(tmnet::parseListenAddress(":7411", &any, &err));
    QVERIFY(tmnet::checkListenPolicy(any, QByteArray(), false).contains("--token"));
    QVERIFY(tmnet::checkListenPolicy(any, "t0k", false).isEmpty());
    QVERIFY(tmnet::checkListenPolicy(any, QByteArray(), true).isEmpty());
    tmnet::ListenAddress local;
    QVERIFY(tmnet::checkListenPolicy(local, QByteArray(), false).isEmpty());
  }

  // Frames unpacked into one arena are the frames sent (packed again, the
  // same bytes), Ticks of 1,000 threads included, and stay whole while any
  // of them is held after the arena's own handle is gone.
  void framesUnpackedIntoAnArenaAreTheFramesSent() {
    synth::Workload w;
    w.workers = 1000;
    w.seconds = 0.1;
    const QByteArray bytes = synth::stream(w);
    tm_decoder dec;
    tm_decoder_init(&dec);
    QCOMPARE(tm_decoder_feed(&dec, bytes.constData(), size_t(bytes.size())), 0);
    std::vector<QByteArray> payloads;
    tmon::FrameBatch frames;
    auto arena = std::make_shared<tmon::FrameArena>();
    const uint8_t *payload = nullptr;
    uint32_t len = 0;
    size_t biggestTick = 0;
    while (tm_decoder_next(&dec, &payload, &len) == TM_DECODE_FRAME) {
      payloads.emplace_back(reinterpret_cast<const char *>(payload), qsizetype(len));
      frames.push_back(tmon::FrameArena::shared(arena, payload, len));
      QVERIFY(frames.back());
      if (frames.back()->body_case == THREADMON__FRAME__BODY_TICK)
        biggestTick = std::max(biggestTick, frames.back()->tick->n_lwps);
    }
    tm_decoder_free(&dec);
    QVERIFY(frames.size() > 1000);  // the ThreadStarts and 10 ticks' frames
    QCOMPARE(biggestTick, size_t(1000));  // every worker sampled
    const uint8_t bad[] = {0x0a, 0x7f, 0x01};  // a field longer than the frame
    QVERIFY(!tmon::FrameArena::shared(arena, bad, sizeof bad));
    arena.reset();
    frames.erase(frames.begin(), frames.begin() + ptrdiff_t(frames.size() / 2));
    payloads.erase(payloads.begin(), payloads.begin() + ptrdiff_t(payloads.size() / 2));
    for (size_t k = 0; k < frames.size(); ++k) {
      QByteArray again(qsizetype(threadmon__frame__get_packed_size(frames[k].get())), '\0');
      threadmon__frame__pack(frames[k].get(), reinterpret_cast<uint8_t *>(again.data()));
      QCOMPARE(again, payloads[k]);
    }
  }

  // The decoder thread reads the debug information of the modules a
  // Stack's locations name before handing the frame on, so that the fold
  // on the GUI thread finds it read (libc's takes 0.1 s or more).
  void decoderThreadReadsTheDebugInformationOfStacks() {
    Dl_info info;
    link_map *lm = nullptr;
    void *fn = reinterpret_cast<void *>(&oneFunction);
    QVERIFY(dladdr1(fn, &info, reinterpret_cast<void **>(&lm), RTLD_DL_LINKMAP) && lm);
    const QByteArray path = QCoreApplication::applicationFilePath().toUtf8();
    const tmon::CodeLocation where{QString::fromUtf8(path),
                                   reinterpret_cast<uintptr_t>(fn) - lm->l_addr, QByteArray()};
    QVERIFY(!tmon::sourceLinesRead(where));

    tmtest::StreamBuilder b;
    b.hello(false);
    b.stack(2, {"test-net!oneFunction+0x0"}, {{path.constData(), where.address}});

    int stacks = 0;
    bool readBeforeHandedOn = false;
    tmnet::DecodeThread decoder([&](tmnet::DecodeThread::Output &out) {
      for (const tmon::OwnedFrame &frame : out.frames)
        if (frame->body_case == THREADMON__FRAME__BODY_STACK) {
          readBeforeHandedOn = tmon::sourceLinesRead(where);
          stacks++;
        }
    });
    decoder.feed(b.stream());
    decoder.finish();
    QTRY_COMPARE(stacks, 1);
    QVERIFY(readBeforeHandedOn);
    QVERIFY(tmon::sourceLine(where).startsWith(QLatin1String("test_net.cpp:")));
  }

  void acceptsAWholeStream() {
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    synth::Workload w;
    const QByteArray bytes = synth::stream(w);
    const Outcome out = sendTo(&listener, bytes);
    QCOMPARE(out.accepted.size(), 1);
    ProbeConnection *c = out.accepted.first();
    QCOMPARE(c->state(), ProbeConnection::State::Ended);
    QCOMPARE(c->pid(), w.pid);
    QCOMPARE(c->bytesReceived(), quint64(bytes.size()));
    QVERIFY(out.frames > 200);  // 2 s of 10 ms ticks plus transitions
    QCOMPARE(quint64(out.frames), c->framesReceived());
  }

  void wrongTokenIsRefusedRightTokenAccepted() {
    ProbeListener listener("correct-horse", nullptr, ProbeListener::Link::PlainForTests);
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    synth::Workload w;
    w.token = "wrong-horse";
    Outcome out = sendTo(&listener, synth::stream(w));
    QCOMPARE(out.accepted.size(), 0);
    QCOMPARE(out.refused.size(), 1);
    QVERIFY2(out.refused.first().contains("wrong token"), qPrintable(out.refused.first()));
    w.token = "correct-horse";
    out = sendTo(&listener, synth::stream(w));
    QCOMPARE(out.accepted.size(), 1);
    QCOMPARE(out.refused.size(), 0);
  }

  void malformedFrameClosesTheSession() {
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    // A correctly framed payload that is not a protobuf message.
    const QByteArray bad = tmtest::framed(QByteArray("\xff\xff\xff\xff\xff", 5));
    const Outcome out =
        sendTo(&listener, tmtest::header() + synth::helloFrame(7, QByteArray{}) + bad, false);
    QCOMPARE(out.accepted.size(), 1);
    QCOMPARE(out.accepted.first()->state(), ProbeConnection::State::Failed);
    QVERIFY2(out.accepted.first()->error().contains("malformed frame"),
             qPrintable(out.accepted.first()->error()));
  }

  void badChecksumClosesTheSession() {
    ProbeConnection c(nullptr, QByteArray{});
    QByteArray frame = synth::helloFrame(7, QByteArray{});
    frame[frame.size() - 1] = static_cast<char>(frame[frame.size() - 1] ^ 0x40);
    c.consume(tmtest::header() + frame);
    QCOMPARE(c.state(), ProbeConnection::State::Failed);
    QVERIFY2(c.error().contains("checksum"), qPrintable(c.error()));
  }

  void oversizedFrameClosesTheSession() {
    ProbeConnection c(nullptr, QByteArray{});
    QByteArray huge("\x00\x00\x00\x02\x00\x00\x00\x00", 8);  // 32 MiB announced
    c.consume(tmtest::header() + synth::helloFrame(7, QByteArray{}) + huge);
    QCOMPARE(c.state(), ProbeConnection::State::Failed);
    QVERIFY2(c.error().contains("16 MiB"), qPrintable(c.error()));
  }

  void wrongFormatVersionIsRefused() {
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    const Outcome out =
        sendTo(&listener, tmtest::header(3) + synth::helloFrame(7, QByteArray{}), false);
    QCOMPARE(out.accepted.size(), 0);
    QVERIFY2(out.refused.value(0).contains("unsupported format version 3"),
             qPrintable(out.refused.value(0)));
  }

  void wrongProtocolVersionIsRefused() {
    ProbeConnection c(nullptr, QByteArray{});
    QSignalSpy accepted(&c, &ProbeConnection::accepted);
    c.consume(tmtest::header() + synth::helloFrame(7, QByteArray{}, 9));
    QCOMPARE(accepted.size(), 0);
    QVERIFY2(c.error().contains("protocol version 9"), qPrintable(c.error()));
  }

  void firstFrameMustBeHello() {
    ProbeConnection c(nullptr, QByteArray{});
    synth::Workload w;
    QByteArray s = synth::stream(w);
    const QByteArray hello = synth::helloFrame(w.pid, QByteArray{});
    s.remove(16, hello.size());  // drop the Hello, keep the rest
    c.consume(s);
    QVERIFY2(c.error().contains("not a Hello"), qPrintable(c.error()));
  }

  void streamCutInsideAFrame() {
    ProbeConnection c(nullptr, QByteArray{});
    QSignalSpy frames(&c, &ProbeConnection::frameArrived);
    const QByteArray s = synth::stream(synth::Workload{});
    c.consume(s.left(s.size() / 2));
    c.finish();
    QVERIFY(frames.size() > 10);
    QCOMPARE(c.state(), ProbeConnection::State::Failed);
    QVERIFY2(c.error().contains("cut inside a frame"), qPrintable(c.error()));
  }

  void probeIsWelcomedAndStrangerIsToldWhy() {
    ProbeListener listener("correct-horse", nullptr, ProbeListener::Link::PlainForTests);
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    auto good = connectTo(&listener);
    good->write(tmtest::header() + synth::helloFrame(1, "correct-horse"));
    QCOMPARE(readReply(good.get()).body, int(THREADMON__FRAME__BODY_WELCOME));
    auto bad = connectTo(&listener);
    bad->write(tmtest::header() + synth::helloFrame(2, "wrong-horse"));
    const Reply r = readReply(bad.get());
    QCOMPARE(r.body, int(THREADMON__FRAME__BODY_REFUSAL));
    QCOMPARE(r.reason, int(THREADMON__REFUSAL_REASON__REFUSED_TOKEN));
    QCOMPARE(r.text, QStringLiteral("wrong token"));
    QVERIFY(closedByPeer(bad.get()));
  }

  // A connection writes nothing to disk, before its Hello passes or after
  // (a live session spools its frames compressed: DetailSpool).
  void nothingIsSpooledByTheConnection() {
    tmtest::ScratchTmpDir tmp;
    ProbeConnection c(nullptr, "t0k");
    const QByteArray hello = synth::helloFrame(7, "t0k");
    c.consume(tmtest::header() + hello.left(hello.size() - 1));
    QVERIFY(!c.wasAccepted());
    QCOMPARE(tmp.filesOpenInside(), 0);
    c.consume(hello.right(1) + synth::noticeFrame(1, "after the hello"));
    QVERIFY(c.wasAccepted());
    QCOMPARE(tmp.filesOpenInside(), 0);
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden), QStringList());
  }

  void oversizedHelloIsRefusedAtItsPrefix() {
    ProbeListener listener("t0k", nullptr, ProbeListener::Link::PlainForTests);
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    QSignalSpy refused(&listener, &ProbeListener::sessionRefused);
    auto client = connectTo(&listener);
    // 16 MiB announced; only the prefix and a few bytes are ever sent.
    client->write(tmtest::header() + QByteArray("\x00\x00\x00\x01\x00\x00\x00\x00", 8) +
                  QByteArray(100, 'x'));
    const Reply r = readReply(client.get());
    QCOMPARE(r.reason, int(THREADMON__REFUSAL_REASON__REFUSED_HELLO));
    QVERIFY2(r.text.contains("64 KiB"), qPrintable(r.text));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, 5000);
  }

  void slowHelloIsRefusedAtTheDeadline() {
    ProbeListener listener("t0k", nullptr, ProbeListener::Link::PlainForTests);
    listener.setHandshakeLimits(ProbeListener::kMaxPending, 300);
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    auto client = connectTo(&listener);
    client->write(tmtest::header() + synth::helloFrame(7, "t0k").left(10));
    QElapsedTimer t;
    t.start();
    const Reply r = readReply(client.get());
    QCOMPARE(r.reason, int(THREADMON__REFUSAL_REASON__REFUSED_TIMEOUT));
    QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
    QVERIFY(closedByPeer(client.get()));
    QTRY_COMPARE_WITH_TIMEOUT(listener.pendingCount(), 0, 3000);
  }

  void idleStrangersCannotKeepAProbeOut() {
    ProbeListener listener("t0k", nullptr, ProbeListener::Link::PlainForTests);
    listener.setHandshakeLimits(4, 60000);
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    std::vector<std::unique_ptr<QTcpSocket>> idle;
    for (int i = 0; i < 12; ++i) idle.push_back(connectTo(&listener));
    QTRY_VERIFY_WITH_TIMEOUT(listener.pendingCount() == 4, 5000);
    // The oldest were told why they were closed.
    QCOMPARE(readReply(idle.front().get()).reason, int(THREADMON__REFUSAL_REASON__REFUSED_BUSY));
    QVERIFY(closedByPeer(idle.front().get()));
    // A probe arriving now evicts the oldest stranger and gets in.
    ProbeConnection *session = nullptr;
    int frames = 0;
    connect(&listener, &ProbeListener::sessionAccepted, this, [&](ProbeConnection *c) {
      session = c;
      connect(c, &ProbeConnection::frameArrived, c, [&frames] { ++frames; });
    });
    synth::Workload w;
    w.token = "t0k";
    auto probe = connectTo(&listener);
    probe->write(synth::stream(w));
    QCOMPARE(readReply(probe.get()).body, int(THREADMON__FRAME__BODY_WELCOME));
    QTRY_VERIFY_WITH_TIMEOUT(session && frames > 200, 5000);
    QVERIFY(listener.pendingCount() <= 4);
  }

  // The key against OpenSSL's HKDF: `openssl kdf -keylen 32 -kdfopt
  // digest:SHA256 -kdfopt key:abc -kdfopt info:"threadmon link psk v1" HKDF`
  // (threadmon-relay derives it so).
  void linkKeyIsOpenSslsHkdf() {
    QCOMPARE(tmnet::linkPsk("abc").toHex(),
             QByteArray("7c3d72eb814dadf58f5d6f490e3c3329912e68622c60f4ab509ab3aa4179f8f5"));
    QVERIFY(tmnet::linkPsk("").isEmpty());
  }

  void tlsLinkWithTheTokensKeyIsAccepted() {
    if (!tmnet::linkTlsAvailable()) {
      QTest::qSkip("no TLS backend with PSK", __FILE__, __LINE__);
      return;
    }
    ProbeListener listener("correct-horse");
    QVERIFY(listener.encrypted());
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    ProbeConnection *session = nullptr;
    int frames = 0;
    connect(&listener, &ProbeListener::sessionAccepted, this, [&](ProbeConnection *c) {
      session = c;
      connect(c, &ProbeConnection::frameArrived, c, [&frames] { ++frames; });
    });
    auto client = tlsClient(&listener, "correct-horse");
    // Both ends in this thread: wait with the event loop running.
    QTRY_VERIFY_WITH_TIMEOUT(client->isEncrypted(), 5000);
    QCOMPARE(client->sessionCipher().name(), QStringLiteral("ECDHE-PSK-CHACHA20-POLY1305"));
    synth::Workload w;  // no token in the Hello: the key proved it
    client->write(synth::stream(w));
    QCOMPARE(readReply(client.get()).body, int(THREADMON__FRAME__BODY_WELCOME));
    QTRY_VERIFY_WITH_TIMEOUT(session && frames > 200, 5000);
    QVERIFY(session->authenticated());
  }

  void tlsWrongKeyIsRefusedAndTheNextWaits() {
    if (!tmnet::linkTlsAvailable()) {
      QTest::qSkip("no TLS backend with PSK", __FILE__, __LINE__);
      return;
    }
    ProbeListener listener("correct-horse");
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    QSignalSpy refused(&listener, &ProbeListener::sessionRefused);
    QCOMPARE(listener.handshakeDelayFor("127.0.0.1"), 0);
    for (int i = 1; i <= 3; ++i) {
      auto client = tlsClient(&listener, "wrong-horse");
      QTRY_COMPARE_WITH_TIMEOUT(refused.size(), i, 5000);
      QVERIFY(!client->isEncrypted());
      QVERIFY2(refused.last().at(1).toString().contains("TLS handshake failed"),
               qPrintable(refused.last().at(1).toString()));
    }
    // 100 ms after one failure, doubling: 400 ms after three.
    QCOMPARE(listener.handshakeDelayFor("127.0.0.1"), 4 * ProbeListener::kFirstDelayMs);
    QCOMPARE(listener.handshakeDelayFor("10.0.0.1"), 0);
  }

  void plainProbeToTlsListenerIsToldWhy() {
    ProbeListener listener("correct-horse");
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    auto plain = connectTo(&listener);
    plain->write(tmtest::header() + synth::helloFrame(1, "correct-horse"));
    const Reply r = readReply(plain.get());
    QCOMPARE(r.reason, int(THREADMON__REFUSAL_REASON__REFUSED_TOKEN));
    QVERIFY2(r.text.contains("encrypted links only"), qPrintable(r.text));
    QVERIFY(closedByPeer(plain.get()));
  }

  // Compressed blocks (format 2) never reach a live decoder: a few KiB of
  // them could inflate to gigabytes of empty frames.
  void liveStreamOfCompressedBlocksIsRefused() {
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    auto client = connectTo(&listener);
    client->write(tmtest::header(TM_FORMAT_MAJOR_BLOCKS) + synth::helloFrame(1, QByteArray{}));
    const Reply r = readReply(client.get());
    QCOMPARE(r.reason, int(THREADMON__REFUSAL_REASON__REFUSED_PROTOCOL));
    QVERIFY2(r.text.contains("format 1"), qPrintable(r.text));
  }

  void severalProbesAtOnce() {
    ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    QList<ProbeConnection *> sessions;
    connect(&listener, &ProbeListener::sessionAccepted, this,
            [&sessions](ProbeConnection *c) { sessions << c; });
    QTcpSocket a, b;
    for (QTcpSocket *s : {&a, &b}) {
      s->connectToHost(QHostAddress::LocalHost, listener.port());
      QVERIFY(s->waitForConnected(5000));
    }
    a.write(tmtest::header() + synth::helloFrame(100, QByteArray{}));
    b.write(tmtest::header() + synth::helloFrame(200, QByteArray{}));
    QTRY_COMPARE_WITH_TIMEOUT(sessions.size(), 2, 5000);
    QSet<quint32> pids{sessions[0]->pid(), sessions[1]->pid()};
    QCOMPARE(pids, (QSet<quint32>{100, 200}));
  }
};

QTEST_GUILESS_MAIN(TestNet)
#include "test_net.moc"
