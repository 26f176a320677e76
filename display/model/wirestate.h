// finalCodeOfWire: the final state of a wrapper's recorded
// threadmon.ThreadState (finalStateOfWire), from a table the compiler builds
// out of proto/states.def. The fold asks it for every transition and the
// derivation for every segment of every tick: out of line (the model is
// built -fPIC, so a function another library could interpose is never
// inlined), with a table made on first use, it was 3% of a report's
// instructions.
#ifndef THREADMON_WIRESTATE_H
#define THREADMON_WIRESTATE_H

#include <array>
#include <cstddef>
#include <cstdint>

#include "modeltypes.h"
#include "threadmon.pb-c.h"

namespace tmon {

namespace wirestate_detail {

constexpr int kWireOfFinal[] = {
#define TM_FINAL_STATE(name, key, shortLabel, label, rgb, wire, kind, column) wire,
#include "states.def"
};

// -1: no final state; the first final state of a wire value wins.
constexpr std::array<int8_t, kWireStates> finalOfWire() {
  std::array<int8_t, kWireStates> t{};
  for (size_t w = 0; w < t.size(); w++) t[w] = -1;
  for (int i = kFinalStateCount - 1; i >= 0; i--)
    if (kWireOfFinal[i] > 0) t[size_t(kWireOfFinal[i])] = int8_t(i);
  return t;
}

constexpr bool wiresInTable() {
  for (int w : kWireOfFinal)
    if (w < 0 || w >= kWireStates) return false;
  return true;
}
static_assert(wiresInTable(), "every final state's wire state is numbered 0..kWireStates-1");

inline constexpr std::array<int8_t, kWireStates> kFinalOfWire = finalOfWire();

}  // namespace wirestate_detail

// The FinalState code of a wire state, -1 when it has none (running,
// exited, unknown, or a number no state has).
inline int finalCodeOfWire(int wire) {
  return unsigned(wire) < unsigned(kWireStates) ? wirestate_detail::kFinalOfWire[size_t(wire)] : -1;
}

// isBlockedState, for the tables: a wait on an object (not sleeping).
constexpr bool isBlockedCode(int code) {
  return (code >= int(FinalState::BlockedMutex) && code <= int(FinalState::BlockedJoin)) ||
         code == int(FinalState::BlockedFutex);
}

namespace wirestate_detail {

// finalOfWire where it is a wait on an object (isBlockedCode), else -1.
constexpr std::array<int8_t, kWireStates> waitOfWire() {
  std::array<int8_t, kWireStates> t = finalOfWire();
  for (int8_t &c : t)
    if (!isBlockedCode(c)) c = -1;
  return t;
}
inline constexpr std::array<int8_t, kWireStates> kWaitOfWire = waitOfWire();

}  // namespace wirestate_detail

// The FinalState code of a wire state that waits on an object
// (isBlockedCode of finalCodeOfWire), -1 for any other: one load where the
// fold tested the code's range for every transition.
inline int waitCodeOfWire(int wire) {
  return unsigned(wire) < unsigned(kWireStates) ? wirestate_detail::kWaitOfWire[size_t(wire)] : -1;
}

// Of times by wire state (a thread's folded time, FoldPoint::ns), those in
// waits on objects (waitCodeOfWire).
template <typename T>
int64_t objectWaitNs(const std::array<T, kWireStates> &byWire) {
  int64_t ns = 0;
  for (int w = 0; w < kWireStates; w++)
    if (waitCodeOfWire(w) >= 0) ns += int64_t(byWire[size_t(w)]);
  return ns;
}

// Of times by wire state, those the thread was alive in (every state but
// EXITED): what a thread's gaps held (FoldPoint::ns).
template <typename T>
int64_t aliveNs(const std::array<T, kWireStates> &byWire) {
  int64_t ns = 0;
  for (int w = 0; w < kWireStates; w++)
    if (w != THREADMON__THREAD_STATE__STATE_EXITED) ns += int64_t(byWire[size_t(w)]);
  return ns;
}

}  // namespace tmon

#endif
