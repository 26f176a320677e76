#include "encode.h"

#include <stdlib.h>

#include "probe.h"
#include "tmwire.h"

size_t tm_encode_frame(tm_encoder *e, const Threadmon__Frame *f) {
  size_t payload = protobuf_c_message_get_packed_size(&f->base);
  if (payload > TM_MAX_FRAME_BYTES) return 0;
  size_t need = TM_FRAME_PREFIX_BYTES + payload;
  if (need > e->cap) {
    size_t cap = e->cap ? e->cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *b = realloc(e->buf, cap);
    if (!b) return 0;
    e->buf = b;
    e->cap = cap;
  }
  uint8_t *body = e->buf + TM_FRAME_PREFIX_BYTES;
  protobuf_c_message_pack(&f->base, body);
  tm_frame_prefix_encode(e->buf, body, (uint32_t)payload);
  return need;
}

void tm_encoder_free(tm_encoder *e) {
  free(e->buf);
  e->buf = NULL;
  e->cap = 0;
}

/* The probe's states and kinds go on the wire as they are: they must be
 * the proto's numbers (adding one starts in proto/threadmon.proto, then
 * display/model/finalstates.def for how readers show it). */
#define TM_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " is not " #b)
TM_SAME(TM_STATE_UNKNOWN, THREADMON__THREAD_STATE__STATE_UNKNOWN);
TM_SAME(TM_STATE_RUNNING, THREADMON__THREAD_STATE__STATE_RUNNING);
TM_SAME(TM_STATE_BLOCKED_MUTEX, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX);
TM_SAME(TM_STATE_BLOCKED_COND, THREADMON__THREAD_STATE__STATE_BLOCKED_COND);
TM_SAME(TM_STATE_BLOCKED_RWLOCK, THREADMON__THREAD_STATE__STATE_BLOCKED_RWLOCK);
TM_SAME(TM_STATE_BLOCKED_BARRIER, THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER);
TM_SAME(TM_STATE_BLOCKED_SEM, THREADMON__THREAD_STATE__STATE_BLOCKED_SEM);
TM_SAME(TM_STATE_BLOCKED_SPIN, THREADMON__THREAD_STATE__STATE_BLOCKED_SPIN);
TM_SAME(TM_STATE_BLOCKED_JOIN, THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN);
TM_SAME(TM_STATE_SLEEPING, THREADMON__THREAD_STATE__STATE_SLEEPING);
TM_SAME(TM_STATE_EXITED, THREADMON__THREAD_STATE__STATE_EXITED);
TM_SAME(TM_KIND_MUTEX, THREADMON__SYNC_KIND__KIND_MUTEX);
TM_SAME(TM_KIND_COND, THREADMON__SYNC_KIND__KIND_COND);
TM_SAME(TM_KIND_RWLOCK, THREADMON__SYNC_KIND__KIND_RWLOCK);
TM_SAME(TM_KIND_BARRIER, THREADMON__SYNC_KIND__KIND_BARRIER);
TM_SAME(TM_KIND_SPIN, THREADMON__SYNC_KIND__KIND_SPIN);
TM_SAME(TM_KIND_SEM, THREADMON__SYNC_KIND__KIND_SEM);
TM_SAME(TM_KIND_INTERNAL, THREADMON__SYNC_KIND__KIND_INTERNAL);
