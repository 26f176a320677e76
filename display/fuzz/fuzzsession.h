// What every fuzz target shares: its input is the bytes of a stream (a
// capture file, or what a probe sends over TCP), fed to a session model the
// way the readers feed one, and mutated by tmfuzz::mutate (streammutator.h).
#ifndef THREADMON_FUZZSESSION_H
#define THREADMON_FUZZSESSION_H

#include <cstddef>
#include <cstdint>

namespace tmon {
class SessionModel;
}

namespace tmfuzz {

// Feeds the stream through a FrameDecoder in two pieces (frames cut across
// reads) and marks the input ended. False when it had no stream header: the
// readers refuse it and there is nothing to ask.
bool feed(tmon::SessionModel *model, const uint8_t *data, size_t size);

}  // namespace tmfuzz

#endif
