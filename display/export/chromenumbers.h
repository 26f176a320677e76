// The Chrome JSON export's numbers, written straight into the output's
// buffer: each writer stores a fixed number of bytes at p (the events keep
// room past their text) and returns where its text ends. Times are in
// microseconds with the nanoseconds as three decimals, dropped when zero.
//
// Numbers of up to four digits come from tables made when compiled (124
// KB), one load each: 5.9 million events carry 11 million times, and the digit
// arithmetic of each was most of the Chrome writer's instructions.
#ifndef THREADMON_CHROMENUMBERS_H
#define THREADMON_CHROMENUMBERS_H

#include <cstdint>
#include <cstring>

namespace tmon::chromenum {

// The digits of small numbers, in one table (one base address for the
// compiler to keep, where three were each loaded again).
struct DigitTables {
  // 0 to 9999 without leading zeros: the text in the low four bytes, its
  // length in the high ones.
  uint64_t short4[10000];
  // 0 to 9999 as four digits, leading zeros kept, the first in the lowest
  // byte.
  uint32_t digits4[10000];
  // ".000" to ".999": a time's nanoseconds below its microseconds, in the
  // low four bytes, and their length (0 for ".000") in the highest.
  uint64_t decimals[1000];
};
constexpr DigitTables digitTables() {
  DigitTables t{};
  for (uint32_t i = 0; i < 10000; i++) {
    const uint32_t n = i >= 1000 ? 4 : i >= 100 ? 3 : i >= 10 ? 2 : 1;
    uint64_t v = 0;
    for (uint32_t k = 0, d = i; k < n; k++, d /= 10) v |= uint64_t('0' + d % 10) << 8 * (n - 1 - k);
    t.short4[i] = v | uint64_t(n) << 32;
    t.digits4[i] = uint32_t('0' + i / 1000) | uint32_t('0' + i / 100 % 10) << 8 |
                   uint32_t('0' + i / 10 % 10) << 16 | uint32_t('0' + i % 10) << 24;
  }
  for (uint32_t i = 0; i < 1000; i++)
    t.decimals[i] = uint64_t('.') | uint64_t('0' + i / 100) << 8 |
                    uint64_t('0' + i / 10 % 10) << 16 | uint64_t('0' + i % 10) << 24 |
                    uint64_t(i ? 4 : 0) << 56;
  return t;
}

// A time's decimals and the text after them, ".ddd" + SUFFIX (SUFFIX alone
// for whole microseconds), and its length in the last byte: one copy of
// Size bytes, where the decimals, their length and the text were three
// stores. Tables of their own: an entry's address is its index shifted,
// where within the digits' table it took two more instructions.
template <size_t Size>
struct SuffixedDecimals {
  struct Entry {
    char text[Size - 1];
    uint8_t size;
  } at[1000];
};
template <size_t Size, size_t N>
constexpr SuffixedDecimals<Size> suffixedDecimals(const char (&suffix)[N]) {
  static_assert(4 + N - 1 <= Size - 1, "the decimals and suffix fit");
  SuffixedDecimals<Size> t{};
  for (uint32_t i = 0; i < 1000; i++) {
    auto &e = t.at[i];
    uint8_t n = 0;
    if (i) {
      e.text[n++] = '.';
      e.text[n++] = char('0' + i / 100);
      e.text[n++] = char('0' + i / 10 % 10);
      e.text[n++] = char('0' + i % 10);
    }
    for (size_t k = 0; k + 1 < N; k++) e.text[n++] = suffix[k];
    e.size = n;
  }
  return t;
}

// Every table, in one object: the writers keep its address in a register
// (each table's address was made again for each time, four or five an
// event), the tables at offsets from it.
struct NumberTables {
  DigitTables digits;
  // An event's start, followed by its duration's key.
  SuffixedDecimals<16> start;
  // A flow's time, its event's end.
  SuffixedDecimals<8> closed;
  // A duration without arguments after it: its event's end and separator.
  SuffixedDecimals<8> ended;
};
inline constexpr NumberTables kNumbers{digitTables(), suffixedDecimals<16>(",\"dur\":"),
                                       suffixedDecimals<8>("}"), suffixedDecimals<8>("},\n")};
inline constexpr const DigitTables &kDigits = kNumbers.digits;

// v (below 10^4) without leading zeros. Writes 4 bytes.
inline char *putShort4(char *p, uint32_t v, const NumberTables &tables = kNumbers) {
  const uint64_t e = tables.digits.short4[v];
  const uint32_t text = uint32_t(e);
  std::memcpy(p, &text, 4);
  return p + (e >> 32);
}

// v in decimal. Writes up to 24 bytes.
char *putDecimal(char *p, uint64_t v);

// The decimals of ns (below 1000), none for 0. Writes 4 bytes.
inline char *putDecimals(char *p, uint32_t ns, const NumberTables &tables = kNumbers) {
  const uint64_t e = tables.digits.decimals[ns];
  const uint32_t text = uint32_t(e);
  std::memcpy(p, &text, 4);
  return p + (e >> 56);
}

// A time's digits above its last four of microseconds (its tens of
// milliseconds), as the last time written had them: a thread's events come
// in time order, and these change every few of them. A value kept where
// the writers are (a local in their loop: the compiler keeps it in
// registers, where a member would be read again after each byte written).
// Times are given as the capture has them, from the session's start
// origin: from is in their clock, so that a time needs no subtraction of
// the origin (and the writers no register for it).
struct TensText {
  int64_t origin = 0;
  // The times these digits are for, [from, from + 10^7): a subtraction and
  // a comparison tell a time is in them, where its division by 10^7 did.
  uint64_t from = 10000000;
  uint64_t text = '1';
  uint32_t size = 1, tens = 1;
  const NumberTables *tables = &kNumbers;
  TensText() = default;
  explicit TensText(int64_t sessionStart)
      : origin(sessionStart), from(uint64_t(sessionStart) + 10000000) {}
  // tens in 1 to 9999.
  void set(uint32_t t) {
    const uint64_t e = kDigits.short4[t];
    from = uint64_t(origin) + uint64_t(t) * 10000000;
    size = uint32_t(e >> 32);
    text = uint32_t(e);
    tens = t;
  }
};

// ns (below 10^7) as microseconds and nanoseconds, in 64 bits: the
// compiler made the microseconds twice, as an index and for the product.
struct Micros {
  uint64_t us, ns;
};
inline Micros micros(uint64_t ns) {
  const uint64_t us = ns * 0x10624DD3 >> 38;  // ns / 1000 below 2^32
  return {us, ns - 1000 * us};
}

// Any time: negative, or 100 s or more.
char *putLongTime(char *p, int64_t ns);

// A time below 10 ms: the microseconds' four digits without their leading
// zeros, the nanoseconds as decimals. Writes 8 bytes.
inline char *putShortTime(char *p, uint32_t ns, const NumberTables &tables = kNumbers) {
  const Micros m = micros(ns);
  return putDecimals(putShort4(p, uint32_t(m.us), tables), uint32_t(m.ns), tables);
}

// A time below 10 ms or from 100 s, or negative: the writers' rare case.
[[gnu::noinline]] char *putOtherTime(char *p, int64_t ns);

// t - origin below its tens of milliseconds, which tens holds (made again
// when they changed, their text written at p): false for a time below 10
// ms, from 100 s or negative, which putOtherTime writes.
inline bool putTens(char *&p, int64_t t, TensText *tens, uint64_t *below) {
  uint64_t b = uint64_t(t) - tens->from;
  if (__builtin_expect(b >= 10000000, 0)) {
    if (b - 10000000 < 10000000 && tens->tens < 9999) {
      // The next tens, as a thread's next events mostly are: no division.
      const uint64_t e = tens->tables->digits.short4[++tens->tens];
      tens->from += 10000000;
      tens->size = uint32_t(e >> 32);
      tens->text = uint32_t(e);
      b -= 10000000;
    } else {
      const uint64_t u = uint64_t(t) - uint64_t(tens->origin);  // a negative time is above 2^63
      if (u - 10000000 >= 100000000000 - 10000000) return false;
      tens->set(uint32_t(u / 10000000));
      b = uint64_t(t) - tens->from;
    }
  }
  std::memcpy(p, &tens->text, 8);
  p += tens->size;
  *below = b;  // below 10^7
  return true;
}

// t - origin as microseconds with three decimals (nanoseconds, exactly;
// none when whole). Writes up to 32 bytes. Made for times of 10 ms to 100 s
// (the events' starts): the tens of milliseconds' digits from tens, then
// the microseconds' last four digits.
inline char *putTime(char *p, int64_t t, TensText *tens) {
  uint64_t below;
  if (__builtin_expect(!putTens(p, t, tens, &below), 0)) return putOtherTime(p, t - tens->origin);
  const auto [us, decimals] = micros(below);
  // The four digits and the decimals in one store (two were merged through
  // SSE registers).
  const DigitTables &digits = tens->tables->digits;
  const uint64_t text = digits.digits4[us] | uint64_t(digits.decimals[decimals]) << 32;
  std::memcpy(p, &text, 8);
  return p + (decimals ? 8 : 4);
}

// ns as putTime writes a time, made for durations: mostly below 10 ms (a
// longer one's tens made for it alone: they are not the starts').
inline char *putDuration(char *p, int64_t ns, const NumberTables &tables = kNumbers) {
  if (__builtin_expect(uint64_t(ns) < 10000000, 1)) return putShortTime(p, uint32_t(ns), tables);
  TensText tens;
  return putTime(p, ns, &tens);
}

// The same followed by '},\n' (an event without arguments ended): the
// decimals and the end in one copy.
inline char *putEndedDuration(char *p, int64_t ns, const NumberTables &tables) {
  if (__builtin_expect(uint64_t(ns) >= 10000000, 0)) {
    p = putDuration(p, ns, tables);
    std::memcpy(p, "},\n", 3);
    return p + 3;
  }
  const Micros m = micros(uint64_t(ns));
  p = putShort4(p, uint32_t(m.us), tables);
  const auto &d = tables.ended.at[m.ns];
  std::memcpy(p, &d, 8);
  return p + d.size;
}

// A time (as putTime) followed by the text of table (its decimals' entry,
// copied whole). Writes up to 32 + Size bytes.
template <size_t Size>
inline char *putSuffixedTime(char *p, int64_t t, TensText *tens,
                             const SuffixedDecimals<Size> &table) {
  uint64_t below;
  if (__builtin_expect(!putTens(p, t, tens, &below), 0)) {
    p = putOtherTime(p, t - tens->origin);
    std::memcpy(p, &table.at[0], Size);
    return p + table.at[0].size;
  }
  const auto [us, decimals] = micros(below);
  std::memcpy(p, &tens->tables->digits.digits4[us], 4);
  const auto &d = table.at[decimals];
  std::memcpy(p + 4, &d, Size);
  return p + 4 + d.size;
}

// An event's start and ',"dur":' after it.
inline char *putStart(char *p, int64_t t, TensText *tens) {
  return putSuffixedTime(p, t, tens, tens->tables->start);
}

// A time and '}' after it.
inline char *putClosedTime(char *p, int64_t t, TensText *tens) {
  return putSuffixedTime(p, t, tens, tens->tables->closed);
}

}  // namespace tmon::chromenum

#endif
