/* Flight recorder triggers: a deadlock forming (a cycle of waiters on
 * mutexes, rwlocks and spin locks, each held by the next: the rule of
 * docs/format.md, "Owners"), or a wrapped wait longer than a threshold. */
#ifndef THREADMON_FLIGHT_TRIGGERS_H
#define THREADMON_FLIGHT_TRIGGERS_H

#include <stdbool.h>
#include <stdint.h>

#include "keymap.h"
#include "threadmon.pb-c.h"

typedef struct fr_triggers {
  bool deadlock;
  uint64_t wait_ns; /* 0: no wait trigger */
  keymap waits;     /* tid -> open wait */
  keymap owners;    /* object -> last known owner tid */
  keymap kinds;     /* object -> SyncKind */
} fr_triggers;

/* Parses "deadlock" or "wait>DURATION" (200ms, 1.5s, 2m); false if it is
 * neither. */
bool fr_trigger_parse(fr_triggers *t, const char *spec);
/* Follows one frame; when a trigger fires, writes one line saying why to
 * why (n bytes), when its condition began to hold to *at_ns (the probe's
 * clock: the last wait of a cycle began, a wait passed the threshold), and
 * returns true. */
bool fr_triggers_take(fr_triggers *t, const Threadmon__Frame *f, uint64_t start_ns, char *why,
                      size_t n, uint64_t *at_ns);
void fr_triggers_free(fr_triggers *t);

#endif
