/* The table of initialiser call sites (core/madeat.c): a site per address,
 * replaced by a later initialiser at the same address, kept apart for
 * addresses that share a home slot, the same from many threads at once,
 * and a full table that stops noting (counted) while known addresses keep
 * their sites. */
#include <pthread.h>
#include <stdint.h>

#include "madeat.h"
#include "tm_check.h"

#define THREADS 4
#define PER_THREAD 1000

static void *site_of(uintptr_t addr) {
  return (void *)(addr ^ 0x5a5a0000u);
}

static void *noter(void *arg) {
  uintptr_t base = (uintptr_t)arg;
  for (uintptr_t i = 0; i < PER_THREAD; i++)
    tm_made_at_note((void *)(base + i * 64), site_of(base + i * 64));
  return NULL;
}

int main(void) {
  CHECK_EQ(tm_made_at(0x1000), 0); /* nothing noted yet, table not mapped */
  tm_made_at_note((void *)0x1000, (void *)0x401234);
  CHECK_EQ(tm_made_at(0x1000), 0x401234);
  CHECK_EQ(tm_made_at(0x1040), 0);
  tm_made_at_note((void *)0x1000, (void *)0x405678); /* freed, made again elsewhere */
  CHECK_EQ(tm_made_at(0x1000), 0x405678);
  /* Equal modulo 4 GiB: one home slot, two entries. */
  tm_made_at_note((void *)0x100001000, (void *)0x409abc);
  CHECK_EQ(tm_made_at(0x100001000), 0x409abc);
  CHECK_EQ(tm_made_at(0x1000), 0x405678);
  tm_made_at_note(NULL, (void *)0x401234); /* ignored */
  CHECK_EQ(tm_made_at(0), 0);

  pthread_t t[THREADS];
  for (uintptr_t k = 0; k < THREADS; k++)
    CHECK_EQ(pthread_create(&t[k], NULL, noter, (void *)(0x7f0000000000u + k * 0x100000u)), 0);
  for (int k = 0; k < THREADS; k++) pthread_join(t[k], NULL);
  for (uintptr_t k = 0; k < THREADS; k++)
    for (uintptr_t i = 0; i < PER_THREAD; i++) {
      uintptr_t a = 0x7f0000000000u + k * 0x100000u + i * 64;
      CHECK_EQ(tm_made_at(a), (uintptr_t)site_of(a));
    }
  CHECK_EQ(tm_made_at_dropped(), 0);

  /* Fill it: noting stops at 7/8 of the slots, counted; known ones stay. */
  for (uintptr_t i = 0; i < TM_MADE_AT_SLOTS; i++)
    tm_made_at_note((void *)(0x200000000000u + i * 16), (void *)0x40aaaa);
  CHECK(tm_made_at_dropped() > 0);
  CHECK(tm_made_at_dropped() < TM_MADE_AT_SLOTS / 4);
  CHECK_EQ(tm_made_at(0x1000), 0x405678);
  CHECK_EQ(tm_made_at(0x200000000000u), 0x40aaaa);
  tm_made_at_note((void *)0x1000, (void *)0x40bbbb); /* a known address is still replaced */
  CHECK_EQ(tm_made_at(0x1000), 0x40bbbb);
  CHECK_EQ(tm_made_at(0x3000), 0);
  return 0;
}
