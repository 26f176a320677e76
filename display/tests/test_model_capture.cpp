// Capture I/O and bad input: writer -> reader round trip, the decoder's
// arena, truncation, corrupt bytes, malformed protobuf, wrong versions, not
// a capture.
#include <QTemporaryDir>
#include <QtTest>

#include "capturereader.h"
#include "capturewriter.h"
#include "framedecoder.h"
#include "sessionmodel.h"
#include "synthstream.h"
#include "tmblock.h"
#include "tmwire.h"

using namespace tmon;
using namespace tmtest;

namespace {

StreamBuilder smallSession() {
  StreamBuilder b;
  b.hello(true);
  b.threadStart(11, kT0, "main", "app!main", false, true);
  b.cpuSwitch(11, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  for (int k = 1; k <= 5; k++) b.tick(kT0 + k * 10 * kMs, {Lwp{11, 0, 0, uint64_t(k) * 10 * kMs, 0}});
  b.cpuSwitch(11, kT0 + 30 * kMs, 0, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
  b.goodbye(kT0 + 50 * kMs, 0);
  return b;
}

bool writeBytes(const QString &path, const QByteArray &bytes) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

}  // namespace

class TestModelCapture : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString path(const char *name) { return dir_.filePath(QString::fromLatin1(name)); }

 private slots:
  void writerAndReaderRoundTrip() {
    StreamBuilder b = smallSession();
    // Record "live": decode the stream and let the hook write what arrives.
    SessionModel live;
    CaptureWriter w;
    QVERIFY2(w.open(path("rec.tmcap")), qPrintable(w.error()));
    FrameDecoder dec(&live);
    dec.setFrameHook([&w](const uint8_t *p, uint32_t n) { w.writeFrame(p, n); });
    QByteArray s = b.stream();
    for (int i = 0; i < s.size(); i += 7) dec.feed(s.constData() + i, size_t(std::min(7, int(s.size()) - i)));
    QVERIFY(w.close());
    QCOMPARE(w.framesWritten(), uint64_t(b.frames().size()));
    // Exactly the frames received, in format 2's blocks, then the index.
    QFile f(path("rec.tmcap"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray written = f.readAll();
    QCOMPARE(int(written[8]), TM_FORMAT_MAJOR_BLOCKS);
    tm_decoder d;
    tm_decoder_init(&d);
    tm_decoder_feed(&d, written.constData(), size_t(written.size()));
    const uint8_t *payload = nullptr;
    uint32_t n = 0;
    for (const std::string &frame : b.frames()) {
      QCOMPARE(int(tm_decoder_next(&d, &payload, &n)), int(TM_DECODE_FRAME));
      QVERIFY(std::string(reinterpret_cast<const char *>(payload), n) == frame);
    }
    QCOMPARE(int(tm_decoder_next(&d, &payload, &n)), int(TM_DECODE_NEED_MORE));
    QCOMPARE(tm_decoder_pending(&d), size_t(0));
    QCOMPARE(d.blocks, uint64_t(s.size() >= int(TM_BLOCK_MIN_RAW)));  // compressed when it pays
    tm_decoder_free(&d);
    tm_index index;
    int fromTail = 0;
    char err[128];
    QVERIFY(tm_capture_index(f.handle(), uint64_t(written.size()), &index, &fromTail, err,
                             sizeof err) == 0);
    QVERIFY(fromTail);
    QCOMPARE(index.n, size_t(1));  // one small session, one block
    QCOMPARE(index.e[0].frames, uint32_t(b.frames().size()));
    tm_index_free(&index);

    SessionModel m;
    CaptureLoadResult r = CaptureReader::load(path("rec.tmcap"), &m);
    QCOMPARE(int(r.status), int(CaptureLoadResult::Complete));
    QVERIFY(r.message.isEmpty());
    QCOMPARE(r.frames, uint64_t(b.frames().size()));
    TimeRange whole = m.resolve(Window::wholeRun());
    StateTimes st = m.threadStates(m.indexOfTid(11), whole);
    QCOMPARE(st.ns[size_t(FinalState::OnCpu)], 30 * kMs);
    QCOMPARE(st.ns[size_t(FinalState::Runnable)], 20 * kMs);
    StateTimes lv = live.threadStates(live.indexOfTid(11), whole);
    QCOMPARE(lv.ns[size_t(FinalState::OnCpu)], 30 * kMs);
  }

  void arenaReadsLargeFramesThenSmallOnesAlike() {
    // FrameDecoder unpacks into blocks it reuses from frame to frame
    // (FrameArena): a tick of 3,000 samples fills several blocks, a small
    // frame after it reuses the first, and a large one again grows them;
    // each must read as protobuf-c's own allocation reads it.
    StreamBuilder b;
    b.hello(false);
    const int kThreads = 3000;
    for (int k = 1; k <= 4; k++) {
      std::vector<Lwp> lwps;
      const int n = k == 2 ? 1 : kThreads;
      for (int i = 0; i < n; i++) {
        const uint64_t on = uint64_t(k) * kMs + uint64_t(i);
        lwps.push_back(Lwp{uint32_t(100 + i), on, uint64_t(i), on, uint64_t(k * i), uint64_t(k)});
      }
      b.tick(kT0 + k * 10 * kMs, lwps);
      b.transition(100, kT0 + k * 10 * kMs + kMs, THREADMON__THREAD_STATE__STATE_SLEEPING);
      b.transition(100, kT0 + k * 10 * kMs + 2 * kMs, THREADMON__THREAD_STATE__STATE_RUNNING);
    }
    SessionModel viaArena, viaMalloc;
    FrameDecoder dec(&viaArena);
    const QByteArray s = b.stream();
    QVERIFY(dec.feed(s.constData(), size_t(s.size())));
    QCOMPARE(dec.framesRead(), uint64_t(b.frames().size()));
    b.applyTo(&viaMalloc);
    QCOMPARE(viaArena.threadCount(), kThreads);
    QCOMPARE(viaArena.threadCount(), viaMalloc.threadCount());
    const TimeRange all{kT0, kT0 + 50 * kMs};
    for (int i = 0; i < kThreads; i++) {
      const uint32_t tid = uint32_t(100 + i);
      const int a = viaArena.indexOfTid(tid), m = viaMalloc.indexOfTid(tid);
      QVERIFY(a >= 0 && m >= 0);
      QCOMPARE(viaArena.lwpSampleCount(a), viaMalloc.lwpSampleCount(m));
      const LwpDelta x = viaArena.lwpDelta(a, all), y = viaMalloc.lwpDelta(m, all);
      QCOMPARE(x.oncpuNs, y.oncpuNs);
      QCOMPARE(x.systemNs, y.systemNs);
      QCOMPARE(x.runqueueNs, y.runqueueNs);
      QCOMPARE(x.volCtxsw, y.volCtxsw);
      QCOMPARE(viaArena.threadStates(a, all).ns, viaMalloc.threadStates(m, all).ns);
    }
    QCOMPARE(viaArena.lwpSampleCount(viaArena.indexOfTid(100)), size_t(4));
    QCOMPARE(viaArena.lwpSampleCount(viaArena.indexOfTid(101)), size_t(3));
  }

  void truncatedFileLoadsUpToTheDamage() {
    StreamBuilder b = smallSession();
    QByteArray s = b.stream();
    std::vector<uint64_t> off = b.frameOffsets();
    // Cut in the middle of frame 6 (0-based): 6 whole frames survive.
    QByteArray cut = s.left(qsizetype(off[6] + 5));
    QVERIFY(writeBytes(path("cut.tmcap"), cut));
    SessionModel m;
    CaptureLoadResult r = CaptureReader::load(path("cut.tmcap"), &m);
    QCOMPARE(int(r.status), int(CaptureLoadResult::Damaged));
    QCOMPARE(r.frames, uint64_t(6));
    QCOMPARE(r.goodBytes, off[6]);
    QCOMPARE(r.message, QStringLiteral("truncated at byte %1 after 6 frames; reporting what was read")
                            .arg(off[6]));
    QVERIFY(!m.hasError());
    QVERIFY(m.info().ended);
    QVERIFY(!m.info().goodbyeSeen);
    QCOMPARE(m.latestNs(), kT0 + 30 * kMs);  // the last tick that arrived
    QVERIFY(m.indexOfTid(11) >= 0);
  }

  void corruptByteStopsWithAnError() {
    StreamBuilder b = smallSession();
    QByteArray s = b.stream();
    std::vector<uint64_t> off = b.frameOffsets();
    s[qsizetype(off[4] + TM_FRAME_PREFIX_BYTES + 1)] =
        char(s[qsizetype(off[4] + TM_FRAME_PREFIX_BYTES + 1)] ^ 0x40);
    QVERIFY(writeBytes(path("bad.tmcap"), s));
    SessionModel m;
    CaptureLoadResult r = CaptureReader::load(path("bad.tmcap"), &m);
    QCOMPARE(int(r.status), int(CaptureLoadResult::Damaged));
    QCOMPARE(r.frames, uint64_t(4));
    QVERIFY2(r.message.contains(QStringLiteral("checksum mismatch at byte %1").arg(off[4])),
             qPrintable(r.message));
    QVERIFY(m.hasError());
    QCOMPARE(m.framesApplied(), uint64_t(4));
  }

  void malformedProtobufIsASessionError() {
    StreamBuilder b;
    b.hello(true);
    b.rawPayload(std::string("\x22\xff\xff\xff\xff\x0f garbage", 15));  // length past the end
    b.tick(kT0 + 10 * kMs, {});
    SessionModel m;
    FrameDecoder dec(&m);
    QByteArray s = b.stream();
    QVERIFY(!dec.feed(s.constData(), size_t(s.size())));
    QVERIFY(m.hasError());
    QVERIFY2(m.errorText().startsWith(QStringLiteral("malformed protobuf frame at byte %1")
                                          .arg(b.frameOffsets()[1])),
             qPrintable(m.errorText()));
    QCOMPARE(m.framesApplied(), uint64_t(1));
    QVERIFY(m.info().helloSeen);
  }

  void wrongVersionsAreRefused() {
    // Format major 3 in the header: nothing is read.
    StreamBuilder b = smallSession();
    QByteArray s = b.stream();
    s[8] = 3;
    QVERIFY(writeBytes(path("v3.tmcap"), s));
    SessionModel m;
    CaptureLoadResult r = CaptureReader::load(path("v3.tmcap"), &m);
    QCOMPARE(int(r.status), int(CaptureLoadResult::Unreadable));
    QVERIFY2(r.message.contains("unsupported format version 3.0"), qPrintable(r.message));
    QVERIFY(m.hasError());
    // Protocol version 9 in Hello: the session goes into its error state.
    StreamBuilder p;
    p.hello(true, 2, 9);
    p.threadStart(5, kT0, "x", "y");
    SessionModel m2;
    FrameDecoder dec(&m2);
    QByteArray s2 = p.stream();
    QVERIFY(!dec.feed(s2.constData(), size_t(s2.size())));
    QCOMPARE(m2.errorText(), QStringLiteral("unsupported protocol version 9 (this display speaks 1)"));
    QCOMPARE(m2.threadCount(), 0);
  }

  void oversizedFrameIsRefused() {
    StreamBuilder b;
    b.hello(true);
    QByteArray s = b.stream();
    const char huge[8] = {0, 0, 0, 0x10, 0, 0, 0, 0};  // 256 MiB length
    s.append(huge, 8);
    SessionModel m;
    FrameDecoder dec(&m);
    QVERIFY(!dec.feed(s.constData(), size_t(s.size())));
    QVERIFY2(m.errorText().contains("16 MiB limit"), qPrintable(m.errorText()));
  }

  void notACaptureIsUnreadable() {
    QVERIFY(writeBytes(path("text.tmcap"), QByteArray("hello world, not a capture\n")));
    SessionModel m;
    CaptureLoadResult r = CaptureReader::load(path("text.tmcap"), &m);
    QCOMPARE(int(r.status), int(CaptureLoadResult::Unreadable));
    QVERIFY2(r.message.contains("bad magic"), qPrintable(r.message));
    SessionModel m2;
    CaptureLoadResult r2 = CaptureReader::load(path("missing.tmcap"), &m2);
    QCOMPARE(int(r2.status), int(CaptureLoadResult::Unreadable));
    QVERIFY(r2.message.startsWith("cannot open"));
  }
};

QTEST_GUILESS_MAIN(TestModelCapture)
#include "test_model_capture.moc"
