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
  // ".000" to ".999": a time's nanoseconds below its microseconds.
  uint32_t decimals[1000];
};
inline constexpr DigitTables kDigits = [] {
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
    t.decimals[i] = uint32_t('.') | uint32_t('0' + i / 100) << 8 |
                    uint32_t('0' + i / 10 % 10) << 16 | uint32_t('0' + i % 10) << 24;
  return t;
}();

// v (below 10^4) without leading zeros. Writes 4 bytes.
inline char *putShort4(char *p, uint32_t v) {
  const uint64_t e = kDigits.short4[v];
  const uint32_t text = uint32_t(e);
  std::memcpy(p, &text, 4);
  return p + (e >> 32);
}

// v in decimal. Writes up to 24 bytes.
char *putDecimal(char *p, uint64_t v);

// The decimals of ns (below 1000), none for 0. Writes 4 bytes.
inline char *putDecimals(char *p, uint32_t ns) {
  std::memcpy(p, &kDigits.decimals[ns], 4);
  return ns ? p + 4 : p;
}

// A time's digits above its last four of microseconds (its tens of
// milliseconds), as the last time written had them: a thread's events come
// in time order, and these change every few of them. A value kept where
// the writers are (a local in their loop: the compiler keeps it in
// registers, where a member would be read again after each byte written).
struct TensText {
  uint32_t tens = UINT32_MAX;
  uint32_t size = 0;
  uint64_t text = 0;
  // tens below 10^4; set in place: a copy of the whole went through SSE
  // registers.
  void set(uint32_t t) {
    const uint64_t e = kDigits.short4[t];
    tens = t;
    size = uint32_t(e >> 32);
    text = uint32_t(e);
  }
};

// Any time: negative, or 100 s or more.
char *putLongTime(char *p, int64_t ns);

// A time below 10 ms: the microseconds' four digits without their leading
// zeros, the nanoseconds as decimals. Writes 8 bytes.
inline char *putShortTime(char *p, uint32_t ns) {
  const uint32_t us = ns / 1000, decimals = ns - 1000 * us;
  return putDecimals(putShort4(p, us), decimals);
}

// ns as microseconds with three decimals (nanoseconds, exactly; none when
// whole). Writes up to 32 bytes. Made for times of 10 ms to 100 s (the
// events' starts): the tens of milliseconds' digits from tens (made again
// when they changed), then the microseconds' last four digits.
inline char *putTime(char *p, int64_t ns, TensText *tens) {
  const uint64_t u = uint64_t(ns);  // a negative time is above 2^63: putLongTime
  if (__builtin_expect(u - 10000000 >= 100000000000 - 10000000, 0))
    return u < 10000000 ? putShortTime(p, uint32_t(u)) : putLongTime(p, ns);
  const uint32_t t = uint32_t(u / 10000000);
  // Exact in 32 bits: the difference is below 10^7.
  const uint32_t below = uint32_t(u) - t * 10000000u;
  if (__builtin_expect(t != tens->tens, 0)) tens->set(t);
  std::memcpy(p, &tens->text, 8);
  p += tens->size;
  const uint32_t us = below / 1000, decimals = below - 1000 * us;
  // The four digits and the decimals in one store (two were merged through
  // SSE registers).
  const uint64_t text = kDigits.digits4[us] | uint64_t(kDigits.decimals[decimals]) << 32;
  std::memcpy(p, &text, 8);
  return p + (decimals ? 8 : 4);
}

// The same, made for durations: mostly below 10 ms (a longer one's tens
// made for it alone: they are not the starts').
inline char *putDuration(char *p, int64_t ns) {
  if (__builtin_expect(uint64_t(ns) < 10000000, 1)) return putShortTime(p, uint32_t(ns));
  TensText tens;
  return putTime(p, ns, &tens);
}

}  // namespace tmon::chromenum

#endif
