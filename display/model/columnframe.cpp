#include "columnframe.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#endif

namespace tmon {

namespace {

// Fields 1-31: a key of one or two bytes.
constexpr unsigned kMaxField = 31;

struct Reader;

// What a field of a message read here is, by field number: how its value
// is stored, from which wire type. Built once from protobuf-c's
// descriptors, so that a field costs one look-up in a small table, not a
// walk through its descriptor.
struct FieldOp {
  enum Kind : uint8_t {
    None,      // not a field read here: protobuf-c's
    Unsigned,  // uint32, int32, enum: the low 32 bits
    Zigzag32,  // sint32
    Wide,      // uint64, int64
    Zigzag64,  // sint64
    Boolean,
    Column,    // a packed column of varints
    Message,
    Messages,  // repeated messages
  };
  Kind kind = None;
  uint8_t wire = 0xff;   // the wire type it is read from
  uint8_t columnType = 0;  // a column's ProtobufCType
  uint16_t offset = 0;
  uint16_t quantifier = 0;  // a column's or repeated messages' count
  const Reader *sub = nullptr;
};

// A message unpacked here, when every field is a varint scalar, a packed
// varint column, or a message (one or repeated) that is read here too.
struct Reader {
  const ProtobufCMessageDescriptor *desc = nullptr;  // nullptr: left to protobuf-c
  FieldOp ops[kMaxField + 1];
  bool repeatedMessages = false;  // a field of repeated messages: counted first
};

bool varintType(ProtobufCType t) {
  switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_ENUM:
      return true;
    default:
      return false;
  }
}

bool wide(ProtobufCType t) {
  return t == PROTOBUF_C_TYPE_INT64 || t == PROTOBUF_C_TYPE_SINT64 || t == PROTOBUF_C_TYPE_UINT64;
}

// The readers of the frames read here (the column frames, Tick, Summary)
// and of the messages inside them, each built after those it contains.
class Readers {
 public:
  Readers() {
    for (const ProtobufCMessageDescriptor *d :
         {&threadmon__lwp_sample__descriptor, &threadmon__cpu_sample__descriptor,
          &threadmon__sync_stats__descriptor, &threadmon__probe_stats__descriptor,
          &threadmon__site_stats__descriptor, &threadmon__thread_summary__descriptor,
          &threadmon__tick__descriptor, &threadmon__summary__descriptor,
          &threadmon__transitions__descriptor, &threadmon__cpu_switches__descriptor,
          &threadmon__user_switches__descriptor})
      if (n_ < kReaders) make(d, &readers_[n_++]);
  }
  // The reader of the frame body with this field number, or nullptr.
  const Reader *body(unsigned id) const {
    const ProtobufCFieldDescriptor *f =
        id ? protobuf_c_message_descriptor_get_field(&threadmon__frame__descriptor, id) : nullptr;
    return f && f->type == PROTOBUF_C_TYPE_MESSAGE ? find(f->descriptor) : nullptr;
  }

 private:
  static constexpr size_t kReaders = 11;
  const Reader *find(const void *d) const {
    for (size_t i = 0; i < n_; i++)
      if (readers_[i].desc == d) return &readers_[i];
    return nullptr;
  }
  // The message's fields, or nullptr in desc when one of them is of another
  // kind (a string, a bool column, a message not read here...).
  void make(const ProtobufCMessageDescriptor *d, Reader *r) const {
    for (unsigned i = 0; i < d->n_fields; i++) {
      const ProtobufCFieldDescriptor *f = &d->fields[i];
      const Reader *sub = f->type == PROTOBUF_C_TYPE_MESSAGE ? find(f->descriptor) : nullptr;
      const bool message = sub != nullptr;
      const bool ok =
          f->id >= 1 && f->id <= kMaxField && !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
          f->offset <= UINT16_MAX && f->quantifier_offset <= UINT16_MAX &&
          (f->label == PROTOBUF_C_LABEL_REPEATED
               ? varintType(f->type) || message
               : f->label == PROTOBUF_C_LABEL_NONE && f->quantifier_offset == 0 &&
                     (varintType(f->type) || f->type == PROTOBUF_C_TYPE_BOOL || message));
      if (!ok) {
        *r = Reader{};
        return;
      }
      FieldOp &op = r->ops[f->id];
      op.offset = uint16_t(f->offset);
      op.quantifier = uint16_t(f->quantifier_offset);
      op.sub = sub;
      op.wire = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
      if (message) {
        op.kind = f->label == PROTOBUF_C_LABEL_REPEATED ? FieldOp::Messages : FieldOp::Message;
        r->repeatedMessages = r->repeatedMessages || op.kind == FieldOp::Messages;
      } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        op.kind = FieldOp::Column;
        op.columnType = uint8_t(f->type);
      } else {
        op.wire = PROTOBUF_C_WIRE_TYPE_VARINT;
        op.kind = scalarKind(f->type);
      }
    }
    r->desc = d;
  }
  static FieldOp::Kind scalarKind(ProtobufCType t) {
    switch (t) {
      case PROTOBUF_C_TYPE_SINT64: return FieldOp::Zigzag64;
      case PROTOBUF_C_TYPE_INT64:
      case PROTOBUF_C_TYPE_UINT64: return FieldOp::Wide;
      case PROTOBUF_C_TYPE_SINT32: return FieldOp::Zigzag32;
      case PROTOBUF_C_TYPE_BOOL: return FieldOp::Boolean;
      default: return FieldOp::Unsigned;  // int32, uint32, enum
    }
  }
  Reader readers_[kReaders];
  size_t n_ = 0;
};

// The varint at p (at most 10 bytes, ending before end), as protobuf-c
// reads it: the bits past 64 dropped. Its length, 0 when it does not end.
inline unsigned varintAt(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (p < end && !(*p & 0x80)) {
    *v = *p;
    return 1;
  }
  uint64_t r = 0;
  for (unsigned i = 0; i < 10 && p + i < end; i++) {
    r |= uint64_t(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = r;
      return i + 1;
    }
  }
  return 0;
}

// A varint's value as a field of type t, stored as protobuf-c stores it.
inline int64_t unzigzag64(uint64_t v) {
  return int64_t((v >> 1) ^ (~(v & 1) + 1));
}
inline int32_t unzigzag32(uint32_t v) {
  return int32_t((v >> 1) ^ (~(v & 1) + 1));
}

// Whether this CPU has BMI2's pext, which gathers a varint's 7-bit groups
// in one instruction (fast on Intel since Haswell and on AMD since Zen 3).
// (-DTHREADMON_NO_PEXT: the shifts everywhere, to test them on such a CPU.)
bool havePext() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(THREADMON_NO_PEXT)
  static const bool have = __builtin_cpu_supports("bmi2");
  return have;
#else
  return false;
#endif
}

// The varint in the low `bits` bits of w (little-endian, as x86 and arm64
// load it; bits is 8, 16 ... 64, through its last byte's stop bit): its
// 7-bit groups packed together. With BMI2 in two instructions (bzhi, pext;
// as inline assembly: the intrinsics would need the whole caller compiled
// for BMI2, and only the CPUs that have it take this path), else by three
// rounds of shifts.
template <bool Pext>
inline uint64_t packGroups(uint64_t w, unsigned bits) {
  constexpr uint64_t kGroups = 0x7f7f7f7f7f7f7f7full;
#if defined(__x86_64__) && defined(__GNUC__)
  if (Pext) {
    uint64_t v, t;
    __asm__("bzhiq %[n], %[w], %[t]\n\tpextq %[k], %[t], %[v]"
            : [v] "=r"(v), [t] "=&r"(t)
            : [w] "r"(w), [n] "r"(uint64_t(bits)), [k] "r"(kGroups));
    return v;
  }
#endif
  uint64_t x = (bits == 64 ? w : w & ((uint64_t(1) << bits) - 1)) & kGroups;
  x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
  x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
  return (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
}

// A scalar's varint at p, as varintAt reads it (ending before end): from
// one 8-byte load when it ends in them and eight bytes are left before
// limit (the end of the frame: a message's last field is read so too).
template <bool Pext>
inline unsigned scalarAt(const uint8_t *p, const uint8_t *end, const uint8_t *limit,
                         uint64_t *v) {
  if (limit - p >= 8 && (*p & 0x80)) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    const uint64_t stops = ~w & 0x8080808080808080ull;
    if (stops) {
      const unsigned bits = unsigned(__builtin_ctzll(stops)) + 1;
      if (bits / 8 <= size_t(end - p)) {
        *v = packGroups<Pext>(w, bits);
        return bits / 8;
      }
    }
  }
  return varintAt(p, end, v);
}

// The last values of a column, one by one: past the last one stored, or
// nullptr for one over 10 bytes.
template <typename T, typename Conv>
inline T *columnRest(const uint8_t *p, const uint8_t *end, T *out, Conv conv) {
  while (p < end) {
    uint64_t v = 0;
    const unsigned n = varintAt(p, end, &v);
    if (n == 0) return nullptr;
    *out++ = conv(v);
    p += n;
  }
  return out;
}

// The varints from p to end (end[-1] ends the last) into out, which has
// room for one per byte (a value takes one byte at least), each converted
// by conv: past the last value stored, or nullptr when one is longer than
// 10 bytes. The column's type is chosen once, outside, and nothing is read
// at or past end. Counting the values first, to allocate just enough, was
// a tenth of the reading thread's unpacking.
template <bool Pext, typename T, typename Conv>
T *column(const uint8_t *p, const uint8_t *end, T *out, Conv conv) {
  constexpr uint64_t kStops = 0x8080808080808080ull;
  // Eight bytes at a time while eight are left, each value that ends in
  // them decoded from the one load. They hold a stop byte unless a varint
  // is 9 or 10 bytes (the loop below), and when all eight are stops they
  // are eight one-byte values, which a column of states or of mostly
  // unknown holders is. Every value stored took a byte of [p, end), so
  // out has room for as many as there are bytes left.
  if (end - p >= 8) {
    const uint8_t *const lastLoad = end - 8;
    do {
      uint64_t w;
      std::memcpy(&w, p, 8);
      uint64_t stops = ~w & kStops;
      if (stops == kStops) {
        if constexpr (std::is_same_v<T, uint32_t>) {
          // A uint32 column converts nothing: the bytes widened in vector
          // registers (pmovzx, or SSE2's unpacking).
          typedef uint8_t Bytes __attribute__((vector_size(8)));
          typedef uint32_t Words __attribute__((vector_size(32)));
          Bytes b;
          std::memcpy(&b, p, 8);
          const Words v = __builtin_convertvector(b, Words);
          std::memcpy(out, &v, sizeof v);
        } else {
          for (unsigned k = 0; k < 8; k++) out[k] = conv(uint64_t((w >> (8 * k)) & 0xff));
        }
        out += 8;
        p += 8;
        continue;
      }
      if (!stops) break;
      // Every value that ends in these eight bytes: `at` is where the next
      // one starts, below 64 while a stop bit is left.
      unsigned at = 0;
      do {
        const unsigned bits = unsigned(__builtin_ctzll(stops)) + 1;
        *out++ = conv(packGroups<Pext>(w >> at, bits - at));
        at = bits;
        stops &= stops - 1;
      } while (stops);
      p += at / 8;
    } while (p <= lastLoad);
  }
  return columnRest(p, end, out, conv);
}

// The values stored from out on, SIZE_MAX for a varint over 10 bytes.
template <typename T>
size_t countOrFail(const T *out, const T *last) {
  return last ? size_t(last - out) : SIZE_MAX;
}

// column() for a column of type t: the values it stored, SIZE_MAX when a
// varint is over 10 bytes.
template <bool Pext>
size_t readColumn(ProtobufCType t, const uint8_t *p, const uint8_t *end, void *out) {
  switch (t) {
    case PROTOBUF_C_TYPE_SINT64: {
      auto *o = static_cast<int64_t *>(out);
      return countOrFail(o, column<Pext>(p, end, o, [](uint64_t v) { return unzigzag64(v); }));
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64: {
      auto *o = static_cast<uint64_t *>(out);
      return countOrFail(o, column<Pext>(p, end, o, [](uint64_t v) { return v; }));
    }
    case PROTOBUF_C_TYPE_SINT32: {
      auto *o = static_cast<int32_t *>(out);
      return countOrFail(
          o, column<Pext>(p, end, o, [](uint64_t v) { return unzigzag32(uint32_t(v)); }));
    }
    default: {
      auto *o = static_cast<uint32_t *>(out);
      return countOrFail(o, column<Pext>(p, end, o, [](uint64_t v) { return uint32_t(v); }));
    }
  }
}

// A column's value converted as readColumn's lambdas do, by its type.
template <typename T>
inline T converted(uint64_t v) {
  if constexpr (std::is_same_v<T, int64_t>) return unzigzag64(v);
  if constexpr (std::is_same_v<T, int32_t>) return unzigzag32(uint32_t(v));
  return T(v);  // uint64, or uint32 with the bits past 32 dropped
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(THREADMON_NO_SIMD)
// Whether this CPU has SSSE3's byte shuffle (every x86-64 since 2006 but
// the first Opterons and Athlon 64s).
bool haveSsse3() {
  static const bool have = __builtin_cpu_supports("ssse3");
  return have;
}

// Columns read four values at a time, as Masked VByte does (Plaisance,
// Kurz, Lemire, 2015): the stop bits of 8 bytes choose a shuffle that
// puts each of the next varints of at most 4 bytes into a 32-bit lane of
// its own, and three rounds of masks and shifts pack each lane's 7-bit
// groups. When the next varints are of one or two bytes (a column of
// holders, of releasers: mostly unknown, else a tid), up to eight of them
// go into 16-bit lanes instead, packed in one round and widened (for
// 32-bit values: widened twice to 64 bits, 8 values cost more than the 4
// of the other table). The shuffles of the 256 masks are made once: 2 x
// 4.9 KB (those of 12 bytes, 72 KB, read a few more values a step, no
// faster, and would crowd the cache the fold shares).
struct Shuffles {
  static constexpr unsigned kMaskBits = 8;
  struct Entry {
    uint8_t take[16];      // byte of the input for each byte of the lanes; 0x80: zero
    uint8_t values = 0;    // varints read (0: the first is over 4 bytes or longer)
    uint8_t consumed = 0;  // their bytes
    bool shorts = false;   // into 16-bit lanes (each at most 2 bytes), not 32-bit ones
  };
  Entry wide[1 << kMaskBits];   // into 32-bit lanes only: for 64-bit values
  Entry narrow[1 << kMaskBits];  // into 16-bit lanes when more values fit: for 32-bit ones
  Shuffles() {
    for (unsigned mask = 0; mask < (1u << kMaskBits); mask++) {
      fill(mask, 4, &wide[mask]);
      narrow[mask] = wide[mask];
      Entry shorts;
      fill(mask, 2, &shorts);
      if (shorts.values > wide[mask].values) {
        narrow[mask] = shorts;
        narrow[mask].shorts = true;
      }
    }
  }
  template <typename T>
  const Entry &entry(unsigned mask) const {
    return sizeof(T) == 4 ? narrow[mask] : wide[mask];
  }
  // The varints of at most `longest` bytes that end in the mask's bytes,
  // from the first: each into a lane of 2 * longest bytes.
  static void fill(unsigned mask, unsigned longest, Entry *e) {
    std::memset(e->take, 0x80, sizeof e->take);
    unsigned start = 0;
    while (e->values < 16 / longest) {
      unsigned stop = start;
      while (stop < kMaskBits && !(mask >> stop & 1)) stop++;
      if (stop == kMaskBits || stop - start >= longest) break;  // none ends here, or too long
      for (unsigned j = start; j <= stop; j++)
        e->take[longest * e->values + (j - start)] = uint8_t(j);
      e->values++;
      start = stop + 1;
    }
    e->consumed = uint8_t(start);
  }
};

// One table for every column type, made at the first column read.
const Shuffles &shuffles() {
  static const Shuffles table;
  return table;
}

// Four lanes of at most 28 bits each, converted as converted<T> converts
// them, stored at out (room for four).
template <typename T>
__attribute__((target("ssse3"), always_inline)) inline void storeLanes(__m128i v, T *out) {
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>) {
    // Unzigzagged in 32 bits: under 2^28, a value's 64-bit form is the
    // 32-bit one widened with its sign.
    const __m128i odd = _mm_and_si128(v, _mm_set1_epi32(1));
    v = _mm_xor_si128(_mm_srli_epi32(v, 1), _mm_sub_epi32(_mm_setzero_si128(), odd));
  }
  if constexpr (sizeof(T) == 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out), v);
  } else {
    const __m128i high = std::is_same_v<T, int64_t> ? _mm_srai_epi32(v, 31) : _mm_setzero_si128();
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out), _mm_unpacklo_epi32(v, high));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 2), _mm_unpackhi_epi32(v, high));
  }
}

// 16-bit lanes of a varint's two bytes each (their stop bits clear, the
// high byte's 0 for a one-byte value) packed into values of 14 bits.
__attribute__((target("ssse3"), always_inline)) inline __m128i packShorts(__m128i v) {
  return _mm_or_si128(_mm_and_si128(v, _mm_set1_epi16(0x007f)),
                      _mm_and_si128(_mm_srli_epi16(v, 1), _mm_set1_epi16(0x3f80)));
}

// Eight 16-bit lanes widened, converted and stored at out.
template <typename T>
__attribute__((target("ssse3"), always_inline)) inline void storeShorts(__m128i v, T *out) {
  storeLanes(_mm_unpacklo_epi16(v, _mm_setzero_si128()), out);
  storeLanes(_mm_unpackhi_epi16(v, _mm_setzero_si128()), out + 4);
}

// The values that start at p (stops: its bytes' stop bits, p[0]'s lowest,
// 8 of them at least): the next varints that end in its first 8 bytes, up
// to eight of one or two bytes or four of up to four, else one longer
// varint as varintAt reads it. Its 16 bytes are read, and up to eight
// values stored at out: the caller has that many of each. Returns the
// bytes read, 0 for a varint over 10 bytes.
template <typename T>
__attribute__((target("ssse3"), always_inline)) inline unsigned valuesAt(
    const Shuffles &table, const uint8_t *p, const uint8_t *end, unsigned stops, T **out) {
  const Shuffles::Entry &e = table.entry<T>(stops & ((1u << Shuffles::kMaskBits) - 1));
  if (e.values == 0) {
    uint64_t v = 0;
    const unsigned n = varintAt(p, end, &v);
    if (n) *(*out)++ = converted<T>(v);
    return n;
  }
  const __m128i in = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  __m128i v = packShorts(_mm_and_si128(
      _mm_shuffle_epi8(in, _mm_loadu_si128(reinterpret_cast<const __m128i *>(e.take))),
      _mm_set1_epi8(0x7f)));
  if (sizeof(T) == 4 && e.shorts) {
    storeShorts(v, *out);
  } else {
    v = _mm_or_si128(_mm_and_si128(v, _mm_set1_epi32(0x00003fff)),
                     _mm_srli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x3fff0000)), 2));
    storeLanes(v, *out);
  }
  *out += e.values;
  return e.consumed;
}

// Sixteen one-byte values at p, stored at out.
template <typename T>
__attribute__((target("ssse3"), always_inline)) inline void oneByteValues(const uint8_t *p,
                                                                         T *out) {
  const __m128i in = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  const __m128i low = _mm_unpacklo_epi8(in, _mm_setzero_si128());
  const __m128i high = _mm_unpackhi_epi8(in, _mm_setzero_si128());
  storeLanes(_mm_unpacklo_epi16(low, _mm_setzero_si128()), out);
  storeLanes(_mm_unpackhi_epi16(low, _mm_setzero_si128()), out + 4);
  storeLanes(_mm_unpacklo_epi16(high, _mm_setzero_si128()), out + 8);
  storeLanes(_mm_unpackhi_epi16(high, _mm_setzero_si128()), out + 12);
}

// Eight two-byte values at p, stored at out.
template <typename T>
__attribute__((target("ssse3"), always_inline)) inline void twoByteValues(const uint8_t *p,
                                                                         T *out) {
  storeShorts(packShorts(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))), out);
}

// The stop bits of the 16 bytes at p, p[0]'s lowest.
__attribute__((target("ssse3"), always_inline)) inline unsigned stopsAt(const uint8_t *p) {
  return ~unsigned(_mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)))) &
         0xffff;
}

// column()'s contract, with SSSE3 (valuesAt), while 16 bytes are left to
// load; the rest one by one. Up to 8 values are stored a step, never more
// than the bytes read so far and 8 more: with 16 bytes left, room in out.
// The stop bits are taken 64 bytes at a time into a register: where the
// next values start then follows from a shift and a table, not from
// loading the bytes (which made a chain of latencies as long as the work).
// 64 bytes of one-byte values (a column of states, of objects, mostly of
// unknown holders) or of two-byte values (the tids of a process whose tids
// are under 16384) are decoded whole, without the table.
template <typename T>
__attribute__((target("ssse3"))) T *columnSsse3(const uint8_t *p, const uint8_t *end, T *out) {
  const Shuffles &table = shuffles();
  while (end - p >= 80) {
    const uint64_t stops = uint64_t(stopsAt(p)) | uint64_t(stopsAt(p + 16)) << 16 |
                           uint64_t(stopsAt(p + 32)) << 32 | uint64_t(stopsAt(p + 48)) << 48;
    if (stops == ~uint64_t(0)) {
      for (unsigned k = 0; k < 64; k += 16) oneByteValues(p + k, out + k);
      out += 64;
      p += 64;
      continue;
    }
    if (stops == 0xaaaaaaaaaaaaaaaaull) {
      for (unsigned k = 0; k < 4; k++) twoByteValues(p + 16 * k, out + 8 * k);
      out += 32;
      p += 64;
      continue;
    }
    unsigned at = 0;  // at most 56: 8 of the bits left
    while (at <= 56) {
      const unsigned n = valuesAt(table, p + at, end, unsigned(stops >> at), &out);
      if (n == 0) return nullptr;
      at += n;
    }
    p += at;
  }
  while (end - p >= 16) {
    const unsigned n = valuesAt(table, p, end, stopsAt(p), &out);
    if (n == 0) return nullptr;
    p += n;
  }
  return columnRest(p, end, out, converted<T>);
}

size_t readColumnSsse3(ProtobufCType t, const uint8_t *p, const uint8_t *end, void *out) {
  switch (t) {
    case PROTOBUF_C_TYPE_SINT64: {
      auto *o = static_cast<int64_t *>(out);
      return countOrFail(o, columnSsse3(p, end, o));
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64: {
      auto *o = static_cast<uint64_t *>(out);
      return countOrFail(o, columnSsse3(p, end, o));
    }
    case PROTOBUF_C_TYPE_SINT32: {
      auto *o = static_cast<int32_t *>(out);
      return countOrFail(o, columnSsse3(p, end, o));
    }
    default: {
      auto *o = static_cast<uint32_t *>(out);
      return countOrFail(o, columnSsse3(p, end, o));
    }
  }
}
#else
bool haveSsse3() { return false; }
size_t readColumnSsse3(ProtobufCType, const uint8_t *, const uint8_t *, void *) { return SIZE_MAX; }
#endif

// The length of a length-delimited field at p as protobuf-c takes it (at
// most 5 bytes, at most INT_MAX, within end): its header's length, 0 when
// it is not one.
inline unsigned lengthAt(const uint8_t *p, const uint8_t *end, size_t *n) {
  uint64_t v = 0;
  const unsigned h = varintAt(p, end, &v);
  if (h == 0 || h > 5 || v > uint64_t(INT_MAX) || v > uint64_t(end - p - h)) return 0;
  *n = size_t(v);
  return h;
}

template <typename T>
T *field(ProtobufCMessage *m, unsigned offset) {
  return reinterpret_cast<T *>(reinterpret_cast<char *>(m) + offset);
}

// A field's key at p, of one or two bytes as the writers make them: its
// length, 0 for a longer one (protobuf-c's then).
inline unsigned keyAt(const uint8_t *p, const uint8_t *end, unsigned *key) {
  if (p < end && !(p[0] & 0x80)) {
    *key = p[0];
    return 1;
  }
  if (end - p >= 2 && !(p[1] & 0x80)) {
    *key = (p[0] & 0x7fu) | unsigned(p[1]) << 7;
    return 2;
  }
  return 0;
}

// The key at *p of one of r's fields, stepped over: its op, or nullptr for
// a longer key, field 0, a field r does not have or of another wire type.
inline const FieldOp *fieldAt(const Reader &r, const uint8_t **p, const uint8_t *end,
                              unsigned *id) {
  unsigned key = 0;
  const unsigned k = keyAt(*p, end, &key);
  *id = key >> 3;
  if (k == 0 || *id > kMaxField) return nullptr;
  const FieldOp *op = &r.ops[*id];
  if (op->wire != (key & 7)) return nullptr;  // field 0 and unknown fields have none
  *p += k;
  return op;
}

// The fields of repeated messages counted into counts (by field number),
// the others stepped over: false when a field is not one of r's, or not
// of its wire type.
bool countMessages(const Reader &r, const uint8_t *p, const uint8_t *end, size_t *counts) {
  while (p < end) {
    unsigned id = 0;
    const FieldOp *op = fieldAt(r, &p, end, &id);
    if (!op) return false;
    if (op->wire == PROTOBUF_C_WIRE_TYPE_VARINT) {
      uint64_t v = 0;
      const unsigned n = varintAt(p, end, &v);
      if (n == 0) return false;
      p += n;
      continue;
    }
    size_t len = 0;
    const unsigned h = lengthAt(p, end, &len);
    if (h == 0) return false;
    if (op->kind == FieldOp::Messages) counts[id]++;
    p += h + len;
  }
  return true;
}

// The message r reads from [p, end), or nullptr when it is not in the
// plain form (columnframe.h). limit is the end of the frame: loads of 8
// bytes may reach it.
template <bool Pext>
ProtobufCMessage *unpackMessage(const Reader &r, const uint8_t *p, const uint8_t *end,
                                const uint8_t *limit, ProtobufCAllocator *a,
                                ShrinkLast shrinkLast) {
  auto *m = static_cast<ProtobufCMessage *>(a->alloc(a->allocator_data, r.desc->sizeof_message));
  if (!m) return nullptr;
  protobuf_c_message_init(r.desc, m);
  char *const base = reinterpret_cast<char *>(m);
  if (r.repeatedMessages) {
    // Their arrays first, as protobuf-c does: a field's messages need not
    // be next to each other.
    size_t counts[kMaxField + 1] = {};
    if (!countMessages(r, p, end, counts)) return nullptr;
    for (unsigned id = 1; id <= kMaxField; id++) {
      if (!counts[id]) continue;
      void *array = a->alloc(a->allocator_data, counts[id] * sizeof(void *));
      if (!array) return nullptr;
      *reinterpret_cast<void **>(base + r.ops[id].offset) = array;
    }
  }
  uint32_t seen = 0;
  while (p < end) {
    unsigned id = 0;
    // A longer key, field 0, an unknown field, a length-delimited scalar,
    // an unpacked column, a message as a varint: protobuf-c's.
    const FieldOp *op = fieldAt(r, &p, end, &id);
    if (!op) return nullptr;
    char *const at = base + op->offset;
    // Any field but repeated messages twice (a message protobuf-c would
    // merge, a column sent in parts, a scalar whose last value wins):
    // protobuf-c's.
    if (op->kind != FieldOp::Messages) {
      if (seen & (1u << id)) return nullptr;
      seen |= 1u << id;
    }
    if (op->wire == PROTOBUF_C_WIRE_TYPE_VARINT) {
      uint64_t v = 0;
      const unsigned n = scalarAt<Pext>(p, end, limit, &v);
      if (n == 0) return nullptr;
      switch (op->kind) {
        case FieldOp::Wide: std::memcpy(at, &v, 8); break;
        case FieldOp::Zigzag64: {
          const int64_t z = unzigzag64(v);
          std::memcpy(at, &z, 8);
          break;
        }
        case FieldOp::Zigzag32: {
          const int32_t z = unzigzag32(uint32_t(v));
          std::memcpy(at, &z, 4);
          break;
        }
        case FieldOp::Boolean: {
          // protobuf-c: true when any of its bytes' 7 bits is set.
          protobuf_c_boolean b = 0;
          for (unsigned i = 0; i < n; i++) b = b || (p[i] & 0x7f);
          std::memcpy(at, &b, sizeof b);
          break;
        }
        default: {
          const uint32_t u = uint32_t(v);
          std::memcpy(at, &u, 4);
          break;
        }
      }
      p += n;
      continue;
    }
    size_t len = 0;
    const unsigned h = lengthAt(p, end, &len);
    if (h == 0) return nullptr;  // no length, or one past the message
    p += h;
    const uint8_t *valueEnd = p + len;
    if (op->kind == FieldOp::Column) {
      // The last byte must end a varint.
      if (len && (valueEnd[-1] & 0x80)) return nullptr;
      if (len) {
        // Room for a value per byte: the most there can be (one-byte
        // values, as a column of states is).
        const auto type = ProtobufCType(op->columnType);
        void *values = a->alloc(a->allocator_data, len * (wide(type) ? 8 : 4));
        if (!values) return nullptr;
        const size_t count = haveSsse3() ? readColumnSsse3(type, p, valueEnd, values)
                                         : readColumn<Pext>(type, p, valueEnd, values);
        // A varint over 10 bytes: protobuf-c refuses it.
        if (count == SIZE_MAX) return nullptr;
        if (shrinkLast) shrinkLast(a->allocator_data, values, count * (wide(type) ? 8 : 4));
        std::memcpy(base + op->quantifier, &count, sizeof count);
        std::memcpy(at, &values, sizeof values);
      }
      p = valueEnd;
      continue;
    }
    ProtobufCMessage *sub = unpackMessage<Pext>(*op->sub, p, valueEnd, limit, a, shrinkLast);
    if (!sub) return nullptr;
    if (op->kind == FieldOp::Messages) {
      size_t &n = *reinterpret_cast<size_t *>(base + op->quantifier);
      (*reinterpret_cast<ProtobufCMessage ***>(at))[n++] = sub;
    } else {
      std::memcpy(at, &sub, sizeof sub);
    }
    p = valueEnd;
  }
  return m;
}

}  // namespace

Threadmon__Frame *unpackColumnFrame(const uint8_t *data, size_t len,
                                    ProtobufCAllocator *allocator, ShrinkLast shrinkLast) {
  static const Readers readers;
  const uint8_t *end = data + len;
  // The one field of the frame: its body, length-delimited.
  unsigned key = 0;
  const unsigned k = keyAt(data, end, &key);
  if (k == 0 || (key & 7) != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) return nullptr;
  const Reader *r = readers.body(key >> 3);
  if (!r || !r->desc) return nullptr;
  size_t n = 0;
  const unsigned h = lengthAt(data + k, end, &n);
  if (h == 0 || k + h + n != len) return nullptr;  // more fields than the body
  ProtobufCMessage *body =
      havePext() ? unpackMessage<true>(*r, data + k + h, end, end, allocator, shrinkLast)
                 : unpackMessage<false>(*r, data + k + h, end, end, allocator, shrinkLast);
  if (!body) return nullptr;
  auto *f = static_cast<Threadmon__Frame *>(
      allocator->alloc(allocator->allocator_data, sizeof(Threadmon__Frame)));
  if (!f) return nullptr;
  threadmon__frame__init(f);
  f->body_case = Threadmon__Frame__BodyCase(key >> 3);
  const ProtobufCFieldDescriptor *bodyField =
      protobuf_c_message_descriptor_get_field(&threadmon__frame__descriptor, key >> 3);
  *field<ProtobufCMessage *>(&f->base, bodyField->offset) = body;
  return f;
}

}  // namespace tmon
