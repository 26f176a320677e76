/* Where each sync object was made: the program's call of pthread_mutex_init,
 * pthread_cond_init, pthread_rwlock_init, pthread_spin_init,
 * pthread_barrier_init or sem_init (shim/wrap_init.c), by the object's
 * address. The sampler names an object by it when it describes the object
 * (SyncObject.made_at): a heap lock then reads "made in make_table
 * (db.c:40)" instead of an address.
 *
 * One table, mapped on the first initialiser call (MAP_NORESERVE: pages are
 * only committed as entries land in them), open addressing, never shrunk.
 * An initialiser writes it with one CAS and one store; no lock, no malloc.
 * A second initialiser call at the same address (memory freed and reused)
 * replaces the site: an object described before that keeps its first name.
 * When the table is full, further objects go unnamed (counted). */
#ifndef THREADMON_MADEAT_H
#define THREADMON_MADEAT_H

#include <stdint.h>

#include "probe.h"

#define TM_MADE_AT_SLOTS (1u << 17) /* power of two; 16 bytes each */

/* Any thread: the object at addr was initialised by a call returning to site. */
TM_HIDDEN void tm_made_at_note(const void *addr, const void *site);
/* The sampler: the return address of the call that initialised the object
 * at addr, 0 when none was seen. */
TM_HIDDEN uintptr_t tm_made_at(uintptr_t addr);
/* Initialiser calls not noted because the table was full. */
TM_HIDDEN uint64_t tm_made_at_dropped(void);

#endif
