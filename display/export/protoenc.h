// ProtoEncoder: the few protobuf wire rules the exports need (varints,
// length-delimited fields, fixed64), written by hand so that pprof's
// profile.proto and Perfetto's TracePacket need no generated code and no
// descriptor of theirs has to ship with threadmon. Field numbers live beside
// each writer (pprofexport.cpp, perfettoexport.cpp), taken from the
// readers' own .proto files.
#ifndef THREADMON_PROTOENC_H
#define THREADMON_PROTOENC_H

#include <QByteArray>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

namespace tmon {

// A varint's length and its continuation bits ("more" on all bytes but
// the last) by the count of its value's leading zero bits, for 8 of 7 bits
// or fewer (a table: the division by 7 was a tenth of putVarint).
struct VarintShape {
  uint64_t more;
  int bytes;
};
constexpr struct VarintShapes {
  VarintShape at[64];
} kVarintShapes = [] {
  VarintShapes t{};
  for (int zeros = 8; zeros < 64; zeros++) {
    const int n = (70 - zeros) / 7;  // 64 - zeros bits, 7 to a byte
    t.at[zeros] = {0x0080808080808080ull >> (8 * (8 - n)), n};
  }
  return t;
}();

class ProtoEncoder {
 public:
  enum WireType { kVarint = 0, kFixed64 = 1, kLength = 2 };

  ProtoEncoder() = default;
  ProtoEncoder(const ProtoEncoder &o) { append(o.ptr_, o.size_); }
  ProtoEncoder &operator=(const ProtoEncoder &o) {
    if (this != &o) {
      size_ = 0;
      append(o.ptr_, o.size_);
    }
    return *this;
  }

  void varint(uint32_t field, uint64_t v) {
    key(field, kVarint);
    raw(v);
  }
  // int64/int32 fields: two's complement as a varint (negatives take 10 bytes).
  void int64(uint32_t field, int64_t v) { varint(field, uint64_t(v)); }
  void fixed64(uint32_t field, uint64_t v) {
    key(field, kFixed64);
    char b[8];
    for (int i = 0; i < 8; i++) b[i] = char((v >> (8 * i)) & 0xff);
    append(b, 8);
  }
  void bytes(uint32_t field, const char *data, qsizetype n) {
    key(field, kLength);
    raw(uint64_t(n));
    append(data, n);
  }
  void bytes(uint32_t field, const QByteArray &b) { bytes(field, b.constData(), b.size()); }
  void string(uint32_t field, const QString &s) { bytes(field, s.toUtf8()); }
  void string(uint32_t field, QLatin1String s) { bytes(field, s.data(), s.size()); }
  void message(uint32_t field, const ProtoEncoder &m) { bytes(field, m.ptr_, m.size_); }
  // The key and length of a length-delimited field whose bytes follow
  // elsewhere (a TracePacket written straight to the output).
  void lengthHeader(uint32_t field, uint64_t n) {
    key(field, kLength);
    raw(n);
  }
  // Fields encoded beforehand (by another encoder), appended as they are.
  void encoded(const char *data, size_t n) { append(data, qsizetype(n)); }
  // A packed repeated varint field.
  template <typename Values>
  void packed(uint32_t field, const Values &values) {
    ProtoEncoder p;
    for (auto v : values) p.raw(uint64_t(v));
    if (p.size_ > 0) message(field, p);
  }

  // A varint written at p (at most 10 bytes); returns where it ends. It
  // may write up to 10 bytes at p whatever the varint's length (the bytes
  // after its end are left undefined): the caller has 10 bytes of room.
  // Seven bits to a byte by three masked shifts of the whole value and one
  // store, no loop (a varint a byte at a time was half of the Perfetto
  // writer's instructions: its timestamps and track ids are 5 to 9 bytes).
  static char *putVarint(char *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (v < 0x80) {
      *p = char(v);
      return p + 1;
    }
    uint64_t x = v & ((uint64_t(1) << 56) - 1);  // 56 bits: 8 bytes of 7
    x = (x & 0xfffffffull) | ((x & 0xfffffff0000000ull) << 4);
    x = (x & 0x00003fff00003fffull) | ((x & 0x0fffc0000fffc000ull) << 2);
    x = (x & 0x007f007f007f007full) | ((x & 0x3f803f803f803f80ull) << 1);
    if (v < (uint64_t(1) << 56)) {
      const VarintShape &shape = kVarintShapes.at[__builtin_clzll(v)];
      x |= shape.more;
      std::memcpy(p, &x, 8);
      return p + shape.bytes;
    }
    x |= 0x8080808080808080ull;
    std::memcpy(p, &x, 8);
    const uint64_t rest = v >> 56;
    if (rest < 0x80) {
      p[8] = char(rest);
      return p + 9;
    }
    p[8] = char(rest | 0x80);
    p[9] = char(rest >> 7);
    return p + 10;
#else
    return putVarintExact(p, v);
#endif
  }
  // The same, writing its own bytes only.
  static char *putVarintExact(char *p, uint64_t v) {
    while (v >= 0x80) {
      *p++ = char((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = char(v);
    return p;
  }
  static qsizetype varintSize(uint64_t v) {
    qsizetype n = 1;
    for (; v >= 0x80; v >>= 7) n++;
    return n;
  }
  static qsizetype lengthHeaderSize(uint32_t field, uint64_t n) {
    return varintSize((uint64_t(field) << 3) | kLength) + varintSize(n);
  }

  const char *bytes() const { return ptr_; }
  qsizetype size() const { return size_; }
  QByteArray data() const { return QByteArray(ptr_, size_); }
  void clear() { size_ = 0; }

 private:
  void key(uint32_t field, WireType t) { raw((uint64_t(field) << 3) | t); }
  void raw(uint64_t v) {
    // Straight into the buffer: a varint is at most 10 bytes.
    if (size_ + 10 > capacity_) grow(size_ + 10);
    size_ = putVarint(ptr_ + size_, v) - ptr_;
  }
  void append(const char *p, qsizetype n) {
    if (size_ + n > capacity_) grow(size_ + n);
    if (n > 0) std::memcpy(ptr_ + size_, p, size_t(n));
    size_ += n;
  }
  void grow(qsizetype need) {
    const qsizetype capacity = std::max(need, 2 * capacity_);
    std::unique_ptr<char[]> heap(new char[size_t(capacity)]);
    std::memcpy(heap.get(), ptr_, size_t(size_));
    heap_ = std::move(heap);
    ptr_ = heap_.get();
    capacity_ = capacity;
  }
  // Most messages (a state event, a track, an annotation) fit inline: the
  // Perfetto export builds millions, and a heap buffer each was a quarter
  // of its time (perf: QByteArray growth, malloc, free).
  char inline_[256];
  std::unique_ptr<char[]> heap_;
  char *ptr_ = inline_;
  qsizetype size_ = 0;
  qsizetype capacity_ = sizeof inline_;
};

// A few bytes encoded once and copied whole (a copy of a fixed size): a
// field's value that many messages repeat (a Perfetto track's uuid, a
// packet's time and sequence fields).
struct ProtoBytes {
  char b[24];
  size_t n = 0;  // 16 at most
  static ProtoBytes varint(uint64_t v) {
    ProtoBytes e;
    e.n = size_t(ProtoEncoder::putVarint(e.b, v) - e.b);
    return e;
  }
};

// Fields written straight into memory the caller reserved (ExportOutput::
// reserve), for messages written by the million (Perfetto's TracePackets):
// no buffer of their own, no copy. A nested message's length is one byte
// until it is closed, and moved over only if it came to 128 bytes or more.
struct ProtoWriter {
  char *p;

  void key(uint32_t field, ProtoEncoder::WireType t) {
    p = ProtoEncoder::putVarint(p, (uint64_t(field) << 3) | t);
  }
  void varint(uint32_t field, uint64_t v) {
    key(field, ProtoEncoder::kVarint);
    p = ProtoEncoder::putVarint(p, v);
  }
  void fixed64(uint32_t field, uint64_t v) {
    key(field, ProtoEncoder::kFixed64);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(p, &v, 8);  // the wire's byte order: one store
#else
    for (int i = 0; i < 8; i++) p[i] = char((v >> (8 * i)) & 0xff);
#endif
    p += 8;
  }
  // Bytes known when compiled (keys and small values together).
  template <size_t N>
  void raw(const char (&b)[N]) {
    std::memcpy(p, b, N - 1);
    p += N - 1;
  }
  void rawVarint(uint64_t v) {
    p = ProtoEncoder::putVarint(p, v);
  }
  void bytes(uint32_t field, const char *data, size_t n) {
    key(field, ProtoEncoder::kLength);
    p = ProtoEncoder::putVarint(p, n);
    std::memcpy(p, data, n);
    p += n;
  }
  // Bytes encoded beforehand, 16 at most (16 written whatever their size).
  void put(const ProtoBytes &e) {
    std::memcpy(p, e.b, 16);
    p += e.n;
  }
  // Bytes of fields encoded beforehand.
  void encoded(const char *data, size_t n) {
    std::memcpy(p, data, n);
    p += n;
  }
  // A nested message: open() writes its key and leaves a byte for its
  // length; close(what open returned) writes the length.
  char *open(uint32_t field) {
    key(field, ProtoEncoder::kLength);
    return p++;
  }
  void close(char *length) {
    char *body = length + 1;
    const size_t n = size_t(p - body);
    if (n < 0x80) {
      *length = char(n);
      return;
    }
    const size_t more = size_t(ProtoEncoder::varintSize(n)) - 1;
    std::memmove(body + more, body, n);
    ProtoEncoder::putVarintExact(length, n);
    p += more;
  }
};

}  // namespace tmon

#endif
