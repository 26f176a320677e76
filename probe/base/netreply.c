#include "netreply.h"

#include <stdio.h>

#include "threadmon.pb-c.h"

tm_reply tm_reply_parse(const uint8_t *payload, size_t len, char *text, size_t n) {
  Threadmon__Frame *f = threadmon__frame__unpack(NULL, len, payload);
  if (!f) return TM_REPLY_OTHER;
  tm_reply r = TM_REPLY_OTHER;
  if (f->body_case == THREADMON__FRAME__BODY_WELCOME) {
    r = TM_REPLY_WELCOME;
  } else if (f->body_case == THREADMON__FRAME__BODY_REFUSAL) {
    const Threadmon__Refusal *m = f->refusal;
    /* Busy and slow say nothing about this probe; any other reason, and
     * reasons added later, would be refused again. */
    r = m->reason == THREADMON__REFUSAL_REASON__REFUSED_BUSY ||
                m->reason == THREADMON__REFUSAL_REASON__REFUSED_TIMEOUT
            ? TM_REPLY_RETRY
            : TM_REPLY_REFUSED;
    snprintf(text, n, "%s", m->text && m->text[0] ? m->text : "refused");
  }
  threadmon__frame__free_unpacked(f, NULL);
  return r;
}
