/* What the display answers a Hello (docs/format.md, "Replies"): Welcome,
 * or Refusal with a reason and a line of text. */
#ifndef THREADMON_NETREPLY_H
#define THREADMON_NETREPLY_H

#include <stddef.h>
#include <stdint.h>

typedef enum tm_reply {
  TM_REPLY_OTHER,   /* not an answer this probe knows: ignored */
  TM_REPLY_WELCOME, /* the session is shown */
  TM_REPLY_REFUSED, /* refused for good: stop connecting */
  TM_REPLY_RETRY,   /* refused for now (busy, too slow): try again later */
} tm_reply;

/* Reads one frame payload; a refusal's text goes to text (n bytes). */
tm_reply tm_reply_parse(const uint8_t *payload, size_t len, char *text, size_t n);

#endif
