// The column frames (display/model/columnframe.h) read as protobuf-c reads
// them: every frame of the fuzz corpus's captures, each of them damaged a
// byte at a time, and the forms the one-pass reader must leave to
// protobuf-c (a field twice, an unpacked column, an unknown field, a varint
// of 11 bytes) unpacked both ways and compared field for field.
#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QtTest>

#include "columnframecheck.h"
#include "framedecoder.h"

using namespace tmon;

namespace {

// Every frame payload of the captures in the fuzz corpus.
std::vector<QByteArray> corpusFrames() {
  std::vector<QByteArray> frames;
  const QDir dir(qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS") + QStringLiteral("/../corpus"));
  for (const QString &name : dir.entryList({QStringLiteral("*.tmcap")}, QDir::Files)) {
    QFile f(dir.filePath(name));
    if (!f.open(QIODevice::ReadOnly)) continue;
    const QByteArray bytes = f.readAll();
    FrameDecoder dec(nullptr);
    dec.setFrameHook([&frames](const uint8_t *p, uint32_t n) {
      frames.emplace_back(reinterpret_cast<const char *>(p), qsizetype(n));
    });
    dec.feed(bytes.constData(), size_t(bytes.size()));
  }
  return frames;
}

ColumnCheck check(FrameArena *arena, const QByteArray &b) {
  return checkColumnFrame(arena, reinterpret_cast<const uint8_t *>(b.constData()),
                          size_t(b.size()));
}

QByteArray varint(uint64_t v) {
  QByteArray b;
  while (v >= 0x80) {
    b.append(char((v & 0x7f) | 0x80));
    v >>= 7;
  }
  b.append(char(v));
  return b;
}

// A length-delimited field (field < 16).
QByteArray lengthField(unsigned field, const QByteArray &body) {
  return char((field << 3) | 2) + varint(uint64_t(body.size())) + body;
}

QByteArray transitionsFrame(const QByteArray &body) {
  return lengthField(8, body);
}

// A plain Transitions body of three changes.
QByteArray plainBody() {
  QByteArray b = char((1 << 3) | 0) + varint(123456789);
  b += lengthField(2, varint(7) + varint(300) + varint(70000));
  b += lengthField(3, varint(2) + varint(1) + varint(uint64_t(-1)));  // zigzag: 1, -1, huge
  b += lengthField(4, varint(1) + varint(3) + varint(4));
  b += lengthField(5, varint(0) + varint(9) + varint(0));
  b += lengthField(6, varint(0) + varint(300) + varint(0));
  b += lengthField(7, varint(0) + varint(0) + varint(7));
  return b;
}

}  // namespace

class TestColumnFrame : public QObject {
  Q_OBJECT

 private slots:
  void corpusFramesReadAlike() {
    const std::vector<QByteArray> frames = corpusFrames();
    QVERIFY2(frames.size() > 1000, "the fuzz corpus's captures are read");
    FrameArena arena;
    size_t columns = 0, missed = 0;
    for (const QByteArray &f : frames) {
      const ColumnCheck c = check(&arena, f);
      QVERIFY(c != ColumnCheck::Differ);
      columns += c == ColumnCheck::Same;
      // Every batch of transitions or switches the writers made is read
      // by the one-pass path.
      if (c == ColumnCheck::NotColumns) {
        Threadmon__Frame *u = threadmon__frame__unpack(
            nullptr, size_t(f.size()), reinterpret_cast<const uint8_t *>(f.constData()));
        QVERIFY(u);
        const Threadmon__Frame__BodyCase body = u->body_case;
        threadmon__frame__free_unpacked(u, nullptr);
        missed += body == THREADMON__FRAME__BODY_TRANSITIONS ||
                  body == THREADMON__FRAME__BODY_SWITCHES ||
                  body == THREADMON__FRAME__BODY_USER_SWITCHES ||
                  body == THREADMON__FRAME__BODY_TICK || body == THREADMON__FRAME__BODY_SUMMARY;
      }
    }
    QCOMPARE(missed, size_t(0));
    QVERIFY(columns > 100);
  }

  void damagedFramesReadAlike() {
    const std::vector<QByteArray> frames = corpusFrames();
    std::vector<QByteArray> columnFrames;
    FrameArena arena;
    for (const QByteArray &f : frames)
      if (check(&arena, f) == ColumnCheck::Same) columnFrames.push_back(f);
    QVERIFY(!columnFrames.empty());
    QRandomGenerator rng(29);
    size_t refused = 0;
    for (int i = 0; i < 20000; i++) {
      QByteArray f = columnFrames[rng.bounded(quint32(columnFrames.size()))];
      const int edits = 1 + int(rng.bounded(3));
      for (int e = 0; e < edits && !f.isEmpty(); e++) {
        const qsizetype at = qsizetype(rng.bounded(quint32(f.size())));
        switch (rng.bounded(3)) {
          case 0:
            f[at] = char(rng.bounded(256));
            break;
          case 1:
            f[at] = char(f[at] ^ 0x80);
            break;  // a varint longer or shorter
          default:
            f.truncate(at);
            break;
        }
      }
      const ColumnCheck c = check(&arena, f);
      QVERIFY2(c != ColumnCheck::Differ, qPrintable(f.toHex()));
      refused += c == ColumnCheck::NotColumns;
    }
    QVERIFY(refused > 0);  // some damage is left to protobuf-c
  }

  void plainFormsAreColumns() {
    FrameArena arena;
    QCOMPARE(check(&arena, transitionsFrame(plainBody())), ColumnCheck::Same);
    QCOMPARE(check(&arena, transitionsFrame(QByteArray())), ColumnCheck::Same);  // empty body
    // Columns of different lengths are the model's to refuse (FrameCheck),
    // as protobuf-c unpacks them.
    QCOMPARE(check(&arena, transitionsFrame(lengthField(2, varint(5)))), ColumnCheck::Same);
    // Ten-byte varints, a value's bits past 32 dropped in a uint32 column.
    const QByteArray tenBytes = varint(~uint64_t(0));
    QCOMPARE(tenBytes.size(), 10);
    QCOMPARE(check(&arena, transitionsFrame(lengthField(2, tenBytes + varint(1)) +
                                            lengthField(3, tenBytes))),
             ColumnCheck::Same);
    // A switch batch with its bool and counter; user switches.
    const QByteArray switches = char((1 << 3) | 0) + varint(5) + lengthField(2, varint(4)) +
                                char((6 << 3) | 0) + varint(3) + char((7 << 3) | 0) + varint(1);
    QCOMPARE(check(&arena, lengthField(9, switches)), ColumnCheck::Same);
    QCOMPARE(check(&arena, lengthField(15, lengthField(4, varint(2)))), ColumnCheck::Same);
    Threadmon__Frame *f = arena.unpackColumns(
        reinterpret_cast<const uint8_t *>(transitionsFrame(plainBody()).constData()),
        size_t(transitionsFrame(plainBody()).size()));
    QVERIFY(f && f->body_case == THREADMON__FRAME__BODY_TRANSITIONS);
    QCOMPARE(f->transitions->base_ns, uint64_t(123456789));
    QCOMPARE(f->transitions->n_delta_ns, size_t(3));
    QCOMPARE(f->transitions->delta_ns[2], int64_t(INT64_MIN));
    QCOMPARE(f->transitions->tid[2], 70000u);
    // A key of two bytes written in the longer form protobuf-c accepts.
    QCOMPARE(check(&arena, transitionsFrame(QByteArray("\x88\x00\x05", 3))), ColumnCheck::Same);
  }

  // Ticks and Summary records: messages inside the frame, read in the same pass.
  void nestedMessagesAreRead() {
    FrameArena arena;
    // An LwpSample with fields past 15 (keys of two bytes) and a column.
    const QByteArray lwp = char(1 << 3) + varint(4242) + char(2 << 3) + varint(123456789) +
                           QByteArray("\x80\x01", 2) + varint(77) +  // field 16, futex_addr
                           QByteArray("\x98\x01", 2) + varint(2) +   // field 19, asleep_kind
                           // field 21, folded_ns: 3 bytes, the values 4 and 300
                           QByteArray("\xaa\x01", 2) + varint(3) + varint(4) + varint(300);
    const QByteArray lwp21 = QByteArray("\xaa\x01", 2) + varint(1) + varint(0);
    const QByteArray cpu = char(1 << 3) + varint(3) + char(5 << 3) + varint(1000000);
    const QByteArray probe = char(1 << 3) + varint(9) + char(5 << 3) + varint(100);
    // The lwps apart from each other, the probe between them, an empty sample.
    const QByteArray tick = char(1 << 3) + varint(17) + char(2 << 3) + varint(5000000000ull) +
                            lengthField(3, lwp) + lengthField(4, cpu) + lengthField(6, probe) +
                            lengthField(3, QByteArray()) + lengthField(3, lwp21) +
                            lengthField(5, char(1 << 3) + varint(8));
    QCOMPARE(check(&arena, lengthField(3, tick)), ColumnCheck::Same);
    QCOMPARE(check(&arena, lengthField(3, QByteArray())), ColumnCheck::Same);
    Threadmon__Frame *f =
        arena.unpackColumns(reinterpret_cast<const uint8_t *>(lengthField(3, tick).constData()),
                            size_t(lengthField(3, tick).size()));
    QVERIFY(f && f->body_case == THREADMON__FRAME__BODY_TICK);
    QCOMPARE(f->tick->n_lwps, size_t(3));
    QCOMPARE(f->tick->lwps[0]->tid, 4242u);
    QCOMPARE(f->tick->lwps[0]->futex_addr, uint64_t(77));
    QCOMPARE(f->tick->lwps[0]->n_folded_ns, size_t(2));
    QCOMPARE(f->tick->lwps[0]->folded_ns[1], uint64_t(300));
    QCOMPARE(f->tick->lwps[1]->tid, 0u);
    QCOMPARE(f->tick->lwps[2]->n_folded_ns, size_t(1));
    QVERIFY(f->tick->probe && f->tick->probe->threads_tracked == 100);
    QCOMPARE(f->tick->n_sync, size_t(1));
    // A Summary record: a frame key of two bytes (field 16).
    const QByteArray thread = char(1 << 3) + varint(7) + lengthField(3, varint(5) + varint(6));
    const QByteArray summary = char(1 << 3) + varint(1) + char(2 << 3) + varint(2) +
                               lengthField(3, thread) + lengthField(3, thread);
    const QByteArray summaryFrame =
        QByteArray("\x82\x01", 2) + varint(uint64_t(summary.size())) + summary;
    QCOMPARE(check(&arena, summaryFrame), ColumnCheck::Same);
    // Left to protobuf-c: the probe twice (merged), an unknown field inside
    // a sample, a sample's varint cut short, a sample given as a varint.
    const auto leftAlone = [&](const QByteArray &frame) {
      return arena.unpackColumns(reinterpret_cast<const uint8_t *>(frame.constData()),
                                 size_t(frame.size())) == nullptr;
    };
    QVERIFY(leftAlone(lengthField(3, lengthField(6, probe) + lengthField(6, probe))));
    QVERIFY(leftAlone(lengthField(3, lengthField(3, char(30 << 3) + varint(1)))));
    QVERIFY(leftAlone(lengthField(3, lengthField(3, QByteArray("\x08\x80", 2)))));
    QVERIFY(leftAlone(lengthField(3, char(3 << 3) + varint(1))));
    QCOMPARE(check(&arena, lengthField(3, lengthField(3, char(30 << 3) + varint(1)))),
             ColumnCheck::NotColumns);
  }

  // Long columns of varints of every length, 1 to 10 bytes, mixed as
  // chance has it (runs of one-byte values, of two and three bytes, a long
  // one now and then): every way through the four-at-a-time reader, its
  // 64-byte and 16-byte rounds and the tail, in each column type (uint32,
  // sint64, an enum; uint64 in a sample), as protobuf-c reads them.
  void longColumnsReadAlike() {
    QRandomGenerator rng(2026);
    FrameArena arena;
    auto column = [&rng](int n) {
      // This column's lengths: mostly short, the longest up to 10 bytes.
      const int longest = 1 + int(rng.bounded(rng.bounded(4) == 0 ? 10 : 3));
      QByteArray b;
      for (int i = 0; i < n; i++) {
        const int bytes =
            1 + int(rng.bounded(rng.bounded(8) == 0 ? 10 : longest));  // 1 to 10
        // A value of exactly that many bytes: its top group not 0.
        const int bits = 7 * (bytes - 1);
        const uint64_t v = bytes == 1    ? rng.bounded(128)
                           : bytes == 10 ? rng.generate64() | (uint64_t(1) << 63)
                                         : (uint64_t(1) << bits) |
                                               (rng.generate64() & ((uint64_t(1) << bits) - 1));
        b += varint(v);
      }
      return b;
    };
    for (int round = 0; round < 4000; round++) {
      const int n = int(rng.bounded(round % 4 == 0 ? 400 : 40));
      QByteArray body = char((1 << 3) | 0) + varint(rng.generate64() >> 8);
      for (unsigned field = 2; field <= 7; field++) body += lengthField(field, column(n));
      QCOMPARE(check(&arena, transitionsFrame(body)), ColumnCheck::Same);
      // folded_ns (uint64, field 21 of an LwpSample) in a Tick.
      const QByteArray folded = column(n);
      const QByteArray sample = char(1 << 3) + varint(7) + QByteArray("\xaa\x01", 2) +
                                varint(uint64_t(folded.size())) + folded;
      QCOMPARE(check(&arena, lengthField(3, lengthField(3, sample))), ColumnCheck::Same);
    }
  }

  // Columns of one-byte or two-byte values only, read 64 bytes at a time,
  // broken now and then by a value of another length (at any offset of a
  // 64-byte round, or in the tail), in each column type.
  void uniformColumnsReadAlike() {
    QRandomGenerator rng(3029);
    FrameArena arena;
    auto column = [&rng](int n, int bytes) {
      QByteArray b;
      for (int i = 0; i < n; i++) {
        const bool odd = rng.bounded(200) == 0;
        const int len = odd ? 1 + int(rng.bounded(10)) : bytes;
        const int bits = 7 * (len - 1);
        b += varint(len == 1    ? rng.bounded(128)
                    : len == 10 ? rng.generate64() | (uint64_t(1) << 63)
                                : (uint64_t(1) << bits) |
                                      (rng.generate64() & ((uint64_t(1) << bits) - 1)));
      }
      return b;
    };
    for (int round = 0; round < 1000; round++) {
      const int n = int(rng.bounded(round % 4 == 0 ? 1000 : 100));
      QByteArray body = char((1 << 3) | 0) + varint(rng.generate64() >> 8);
      for (unsigned field = 2; field <= 7; field++)
        body += lengthField(field, column(n, 1 + int(rng.bounded(2))));
      QCOMPARE(check(&arena, transitionsFrame(body)), ColumnCheck::Same);
      const QByteArray folded = column(n, 1 + int(rng.bounded(2)));
      const QByteArray sample = char(1 << 3) + varint(7) + QByteArray("\xaa\x01", 2) +
                                varint(uint64_t(folded.size())) + folded;
      QCOMPARE(check(&arena, lengthField(3, lengthField(3, sample))), ColumnCheck::Same);
    }
    // The values themselves, not only as protobuf-c reads them: 16383 and
    // 128 in two bytes, 127 and 0 in one, unzigzagged in a sint64 column.
    QByteArray tids, deltas;
    for (int i = 0; i < 100; i++) {
      tids += varint(i % 2 ? 16383 : 128);
      deltas += varint(i % 2 ? 127 : 0);
    }
    const QByteArray frame = transitionsFrame(lengthField(2, tids) + lengthField(3, deltas));
    Threadmon__Frame *f = arena.unpackColumns(
        reinterpret_cast<const uint8_t *>(frame.constData()), size_t(frame.size()));
    QVERIFY(f && f->transitions->n_tid == 100 && f->transitions->n_delta_ns == 100);
    for (int i = 0; i < 100; i++) {
      QCOMPARE(f->transitions->tid[i], i % 2 ? 16383u : 128u);
      QCOMPARE(f->transitions->delta_ns[i], i % 2 ? int64_t(-64) : int64_t(0));
    }
  }

  void otherFormsAreLeftToProtobufC() {
    FrameArena arena;
    const QByteArray body = plainBody();
    const auto leftAlone = [&](const QByteArray &frame) {
      const uint8_t *p = reinterpret_cast<const uint8_t *>(frame.constData());
      return arena.unpackColumns(p, size_t(frame.size())) == nullptr;
    };
    // A column twice (protobuf-c joins them), a scalar twice (the last wins).
    QVERIFY(leftAlone(transitionsFrame(body + lengthField(2, varint(1)))));
    QVERIFY(leftAlone(transitionsFrame(body + char(1 << 3) + varint(1))));
    // An unpacked column, an unknown field, field 0, a key of three bytes.
    QVERIFY(leftAlone(transitionsFrame(char(2 << 3) + varint(5))));
    QVERIFY(leftAlone(transitionsFrame(char(12 << 3) + varint(5))));
    QVERIFY(leftAlone(transitionsFrame(char(0) + varint(5))));
    QVERIFY(leftAlone(transitionsFrame(QByteArray("\x88\x80\x00\x05", 4))));
    // An eleven-byte varint (protobuf-c refuses it); one not ended.
    QVERIFY(leftAlone(transitionsFrame(lengthField(2, QByteArray(10, '\x80') + '\x01'))));
    QVERIFY(leftAlone(transitionsFrame(lengthField(2, QByteArray("\x80", 1)))));
    // The body twice, another field beside it, a body cut short.
    QVERIFY(leftAlone(transitionsFrame(body) + transitionsFrame(body)));
    QVERIFY(leftAlone(transitionsFrame(body) + char(1 << 3) + varint(1)));
    QVERIFY(leftAlone(transitionsFrame(body).chopped(1)));
    // Other frames: a Hello, a Stack.
    QVERIFY(leftAlone(lengthField(1, QByteArray())));
    QVERIFY(leftAlone(lengthField(11, char(1 << 3) + varint(1))));
    // What protobuf-c reads from each of them is what the readers get.
    for (const QByteArray &f : {transitionsFrame(body + lengthField(2, varint(1))),
                                transitionsFrame(char(2 << 3) + varint(5))}) {
      Threadmon__Frame *u =
          arena.unpack(reinterpret_cast<const uint8_t *>(f.constData()), size_t(f.size()));
      QVERIFY(u && u->body_case == THREADMON__FRAME__BODY_TRANSITIONS);
    }
  }
};

QTEST_GUILESS_MAIN(TestColumnFrame)
#include "test_columnframe.moc"
