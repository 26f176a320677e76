/* Stale return addresses out of scanned stacks (callchain.h). */
#include "callchain.h"

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A pointer in a GOT slot, when the slot is readable module data and the
 * pointer leads into code; 0 otherwise. */
static uintptr_t got_target(const tm_code_view *v, uintptr_t slot) {
  uintptr_t target;
  uint8_t code;
  if (!v->read(v->arg, slot, &target, sizeof target, PF_R)) return 0;
  return v->read(v->arg, target, &code, 1, PF_X) ? target : 0;
}

/* The function a PLT entry jumps to ([endbr64] [bnd] jmp *disp(%rip));
 * anything else is the function itself. A GOT slot not bound yet leads
 * back into the PLT: a callee that matches no frame, as for any call the
 * scan cannot resolve. */
static uintptr_t through_plt(const tm_code_view *v, uintptr_t t) {
  uint8_t plt_entry[11];
  if (!v->read(v->arg, t, plt_entry, sizeof plt_entry, PF_X)) return 0;
  const uint8_t *p = plt_entry;
  if (p[0] == 0xF3 && p[1] == 0x0F && p[2] == 0x1E && p[3] == 0xFA) p += 4;
  if (p[0] == 0xF2) p++;
  if (p[0] != 0xFF || p[1] != 0x25) return t;
  int32_t disp;
  memcpy(&disp, p + 2, sizeof disp);
  uintptr_t slot = t + (uintptr_t)(p + 6 - plt_entry) + (uintptr_t)(intptr_t)disp;
  return got_target(v, slot);
}

/* The callee of the call ending at return address r, 0 when indirect. The
 * scan found r at least 8 bytes into an executable segment. */
static uintptr_t callee(const tm_code_view *v, uintptr_t r) {
  uint8_t before[8];
  if (!v->read(v->arg, r - sizeof before, before, sizeof before, PF_X)) return 0;
  const uint8_t *p = before + sizeof before;
  int32_t disp;
  if (p[-5] == 0xE8) {
    memcpy(&disp, p - 4, sizeof disp);
    return through_plt(v, r + (uintptr_t)(intptr_t)disp);
  }
  if (p[-6] == 0xFF && p[-5] == 0x15) {
    memcpy(&disp, p - 4, sizeof disp);
    return got_target(v, r + (uintptr_t)(intptr_t)disp);
  }
  return 0;
}

typedef struct function {
  char module[128];
  char name[256]; /* "" when unknown */
  uintptr_t start;
} function;

/* The function holding a, by the module's symbol table. */
static void function_at(const tm_code_view *v, uintptr_t a, function *f) {
  memset(f, 0, sizeof *f);
  v->function_at(v->arg, a, f->module, sizeof f->module, f->name, sizeof f->name, &f->start);
}

/* The callee is inner's function: the same entry, or inner is a part of
 * it the compiler split off ("fn.cold", "fn.part.0"). */
static bool calls(const tm_code_view *v, uintptr_t target, const function *inner) {
  if (target == inner->start) return true;
  function t;
  function_at(v, target, &t);
  size_t len = strlen(t.name);
  return len && t.start == target && !strncmp(inner->name, t.name, len) && inner->name[len] == '.';
}

/* Frames kept so far, with their functions; weak: kept without knowing
 * its call led to the frame inside it (an indirect call, or across
 * modules). Sampler thread only: static. */
static function kept_fn[TM_CHAIN_MAX];
static bool kept_weak[TM_CHAIN_MAX];

int tm_call_chain_clean_in(const tm_code_view *v, uintptr_t *pcs, int n, int exact) {
  if (n > TM_CHAIN_MAX) n = TM_CHAIN_MAX;
  if (exact < 1) exact = 1;
  if (n <= exact) return n;
  for (int k = 0; k < exact; k++) {
    function_at(v, k ? pcs[k] - 1 : pcs[k], &kept_fn[k]);
    kept_weak[k] = false;
  }
  int kept = exact;
  for (int k = exact; k < n; k++) {
    uintptr_t r = pcs[k];
    uintptr_t target = callee(v, r);
    function here;
    function_at(v, r - 1, &here);
    bool weak = !target || !kept_fn[kept - 1].name[0];
    if (!weak && !calls(v, target, &kept_fn[kept - 1])) {
      /* A chain resting on a weak link gives way to a frame whose call
       * leads to the frame below it. */
      int j = kept - 1;
      while (j >= exact && !calls(v, target, &kept_fn[j - 1])) j--;
      if (j >= exact && kept_weak[j]) {
        kept = j;
      } else if (!strcmp(here.module, kept_fn[kept - 1].module)) {
        continue; /* stale: this call did not lead to the frame inside it */
      } else {
        weak = true; /* across modules: a tail call may lie between */
      }
    }
    pcs[kept] = pcs[k];
    kept_fn[kept] = here;
    kept_weak[kept] = weak;
    kept++;
  }
  return kept;
}

/* The call ending at return address r leads to fn's function. */
static bool leads_to(const tm_code_view *v, uintptr_t r, const function *fn) {
  uintptr_t target = callee(v, r);
  return target && fn->name[0] && calls(v, target, fn);
}

int tm_call_chain_linked_in(const tm_code_view *v, const uintptr_t *pcs, int n) {
  if (n < 1) return 0;
  function inside, here;
  function_at(v, pcs[0], &inside);
  int k = 1;
  for (; k < n; k++) {
    function_at(v, pcs[k] - 1, &here);
    /* Not linked: a tail call between, when the next frame's call leads
     * here (never for the first, the slot a woken thread writes first). */
    if (!leads_to(v, pcs[k], &inside) && (k == 1 || k + 1 >= n || !leads_to(v, pcs[k + 1], &here)))
      break;
    inside = here;
  }
  return k;
}
