// Column frames: the frames that are most of a capture (Transitions,
// CpuSwitches, UserSwitches: a few scalars and columns of packed varints;
// Tick and Summary: lists of small messages of varints) unpacked in one
// pass over their bytes. protobuf-c reads a message twice (once to count
// each packed field's values, once to convert them) through its generic
// field tables; for these frames that was most of the reading thread's
// time. The result is the same protobuf-c struct, carved from the same
// allocator (a FrameArena), so the model cannot tell the two apart.
//
// Only a frame in the plain form the writers make is read here: the one
// body field, each field at most once (but for a list of messages), keys
// of one or two bytes, packed columns, varints ended within 10 bytes.
// Anything else (a field repeated or unknown, an unpacked column, a
// damaged varint) is left to protobuf-c, which then merges, keeps or
// refuses it as it always did: fuzz-frame checks that both agree.
#ifndef THREADMON_COLUMNFRAME_H
#define THREADMON_COLUMNFRAME_H

#include <cstddef>
#include <cstdint>

#include "threadmon.pb-c.h"

namespace tmon {

// Cuts the allocator's last allocation, at p, to size bytes (allocator
// data, p, size): a column is allocated for the most values its bytes can
// hold, then cut to those they hold.
typedef void (*ShrinkLast)(void *, void *, size_t);

// The frame, or nullptr when it is not a column frame in the plain form
// (or the allocator failed): protobuf-c's unpack decides then.
Threadmon__Frame *unpackColumnFrame(const uint8_t *data, size_t len, ProtobufCAllocator *allocator,
                                    ShrinkLast shrinkLast = nullptr);

}  // namespace tmon

#endif
