// How ThreadTimeline codes a mixed interval (a tick split between on-CPU,
// runnable and one rest state): what its derivation writes and what walks
// over its intervals read (threadtimeline.h's forEachPiece, inlined into
// its readers).
#ifndef THREADMON_INTERVALCODE_H
#define THREADMON_INTERVALCODE_H

#include <cstdint>

#include "modeltypes.h"

namespace tmon {
namespace intervalcode {

constexpr unsigned kMixed = 15;  // code of a tick-split or stolen-split interval
static_assert(kFinalStateCount <= int(kMixed), "a final state and kMixed fit the 4-bit code");
// A mixed interval's on-CPU and runnable fractions take kFracBits each of
// its 32-bit payload; the rest's code (sleeping, I/O wait, stopped, stolen,
// idle) the 4 bits above them.
constexpr uint32_t kFracBits = 14;
constexpr uint32_t kFracOne = (1u << kFracBits) - 1;
constexpr uint32_t kRestShift = 2 * kFracBits;
// Rest code of a mixed interval of on-CPU time (by switch records) that was
// partly stolen: the on fraction is what the CPU clock ran.
constexpr uint32_t kRestStolen = 3;
constexpr uint32_t kRestIdle = 4;  // of time off a CPU that a read found idle

// A mixed interval's payload: on and rq fractions (kFracBits each), then
// the rest's code in the top bits.
struct Mix {
  uint32_t on, rq, rest;  // on/rq in 1/kFracOne
};
inline Mix mixOf(uint32_t payload) {
  return Mix{payload & kFracOne, (payload >> kFracBits) & kFracOne, payload >> kRestShift};
}
inline uint32_t mixPayload(uint32_t on, uint32_t rq, uint32_t rest) {
  return on | rq << kFracBits | rest << kRestShift;
}
inline uint32_t restCodeOfMix(uint32_t rest) {
  switch (rest) {
    case 1:
      return unsigned(FinalState::IoWait);
    case 2:
      return unsigned(FinalState::Stopped);
    case kRestStolen:
      return unsigned(FinalState::Stolen);
    case kRestIdle:
      return unsigned(FinalState::Idle);
    default:
      return unsigned(FinalState::Sleeping);
  }
}
// frac/kFracOne of d, rounded.
inline int64_t part(int64_t d, uint32_t frac) {
  return (d * int64_t(frac) + kFracOne / 2) / kFracOne;
}

}  // namespace intervalcode
}  // namespace tmon

#endif
