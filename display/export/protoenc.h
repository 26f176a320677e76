// ProtoEncoder: the few protobuf wire rules the exports need (varints,
// length-delimited fields, fixed64), written by hand so that pprof's
// profile.proto and Perfetto's TracePacket need no generated code and no
// descriptor of theirs has to ship with threadmon. Field numbers live beside
// each writer (pprofexport.cpp, perfettoexport.cpp), taken from the
// readers' own .proto files.
#ifndef THREADMON_PROTOENC_H
#define THREADMON_PROTOENC_H

#include <QByteArray>

#include <cstdint>

namespace tmon {

class ProtoEncoder {
 public:
  enum WireType { kVarint = 0, kFixed64 = 1, kLength = 2 };

  void varint(uint32_t field, uint64_t v) {
    key(field, kVarint);
    raw(v);
  }
  // int64/int32 fields: two's complement as a varint (negatives take 10 bytes).
  void int64(uint32_t field, int64_t v) { varint(field, uint64_t(v)); }
  void fixed64(uint32_t field, uint64_t v) {
    key(field, kFixed64);
    for (int i = 0; i < 8; i++) buf_.append(char((v >> (8 * i)) & 0xff));
  }
  void bytes(uint32_t field, const char *data, qsizetype n) {
    key(field, kLength);
    raw(uint64_t(n));
    buf_.append(data, n);
  }
  void bytes(uint32_t field, const QByteArray &b) { bytes(field, b.constData(), b.size()); }
  void string(uint32_t field, const QString &s) { bytes(field, s.toUtf8()); }
  void string(uint32_t field, QLatin1String s) { bytes(field, s.data(), s.size()); }
  void message(uint32_t field, const ProtoEncoder &m) { bytes(field, m.buf_); }
  // The key and length of a length-delimited field whose bytes follow
  // elsewhere (a TracePacket written straight to the output).
  void lengthHeader(uint32_t field, uint64_t n) {
    key(field, kLength);
    raw(n);
  }
  // A packed repeated varint field.
  template <typename Values>
  void packed(uint32_t field, const Values &values) {
    ProtoEncoder p;
    for (auto v : values) p.raw(uint64_t(v));
    if (!p.buf_.isEmpty()) message(field, p);
  }

  const QByteArray &data() const { return buf_; }
  qsizetype size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  void key(uint32_t field, WireType t) { raw((uint64_t(field) << 3) | t); }
  void raw(uint64_t v) {
    char b[10];
    int n = 0;
    while (v >= 0x80) {
      b[n++] = char((v & 0x7f) | 0x80);
      v >>= 7;
    }
    b[n++] = char(v);
    buf_.append(b, n);
  }
  QByteArray buf_;
};

}  // namespace tmon

#endif
