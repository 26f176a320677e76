/* Unwinding by .eh_frame (cfi.h). */
#include "cfi.h"

#include <link.h>
#include <stddef.h>
#include <string.h>

#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RA 16
#define STATE_DEPTH 8

/* A bounded view of one module segment. */
typedef struct span {
  const uint8_t *lo, *hi;
} span;

typedef struct locate {
  uintptr_t ip;
  const uint8_t *hdr; /* .eh_frame_hdr of the module holding ip */
  span seg;           /* the PT_LOAD segment holding hdr */
  uintptr_t text_lo, text_hi; /* the executable segment holding ip */
} locate;

static int find_module(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  locate *q = arg;
  bool holds = false;
  const ElfW(Phdr) *eh = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)p->p_vaddr;
    if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && q->ip >= start && q->ip - start < p->p_memsz) {
      holds = true;
      q->text_lo = start;
      q->text_hi = start + p->p_memsz;
    }
    if (p->p_type == PT_GNU_EH_FRAME) eh = p;
  }
  if (!holds) return 0;
  if (!eh) return 1;
  uintptr_t hdr = (uintptr_t)info->dlpi_addr + (uintptr_t)eh->p_vaddr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)p->p_vaddr;
    if (p->p_type == PT_LOAD && (p->p_flags & PF_R) && hdr >= start && hdr - start < p->p_memsz) {
      q->hdr = (const uint8_t *)hdr;
      q->seg = (span){(const uint8_t *)start, (const uint8_t *)start + p->p_memsz};
    }
  }
  return 1;
}

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
    uint8_t b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return true;
    }
  }
  return false;
}

static bool sleb(const uint8_t **p, const uint8_t *end, int64_t *v) {
  uint64_t x = 0;
  unsigned shift = 0;
  uint8_t b = 0x80;
  while (*p < end && shift < 64 && (b & 0x80)) {
    b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  }
  if (b & 0x80) return false;
  if (shift < 64 && (b & 0x40)) x |= ~(uint64_t)0 << shift;
  *v = (int64_t)x;
  return true;
}

static bool fixed(const uint8_t **p, const uint8_t *end, void *out, size_t n) {
  if ((size_t)(end - *p) < n) return false;
  memcpy(out, *p, n);
  *p += n;
  return true;
}

/* A DW_EH_PE-encoded pointer: absolute, pc-relative or relative to the
 * .eh_frame_hdr; indirect ones are not followed. */
static bool encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, const uint8_t *datarel,
                    uint64_t *v) {
  if (enc == 0xff || (enc & 0x80)) return false;
  const uint8_t *at = *p;
  uint64_t x = 0;
  switch (enc & 0x0f) {
  case 0x00: if (!fixed(p, end, &x, 8)) return false; break;
  case 0x01: if (!uleb(p, end, &x)) return false; break;
  case 0x02: { uint16_t u; if (!fixed(p, end, &u, 2)) return false; x = u; break; }
  case 0x03: { uint32_t u; if (!fixed(p, end, &u, 4)) return false; x = u; break; }
  case 0x04: if (!fixed(p, end, &x, 8)) return false; break;
  case 0x09: { int64_t s; if (!sleb(p, end, &s)) return false; x = (uint64_t)s; break; }
  case 0x0a: { int16_t s; if (!fixed(p, end, &s, 2)) return false; x = (uint64_t)(int64_t)s; break; }
  case 0x0b: { int32_t s; if (!fixed(p, end, &s, 4)) return false; x = (uint64_t)(int64_t)s; break; }
  case 0x0c: if (!fixed(p, end, &x, 8)) return false; break;
  default: return false;
  }
  switch (enc & 0x70) {
  case 0x00: break;
  case 0x10: x += (uint64_t)(uintptr_t)at; break;
  case 0x30: x += (uint64_t)(uintptr_t)datarel; break;
  default: return false;
  }
  *v = x;
  return true;
}

/* A factored offset: the tables are the target's to write (attach), so the
 * product wraps like the unsigned arithmetic it feeds, never overflows. */
static int64_t scaled(uint64_t n, int64_t factor) {
  return (int64_t)(n * (uint64_t)factor);
}

/* The rules this unwinder keeps: the CFA, and where RBP and the return
 * address were saved (offsets from the CFA). */
typedef struct row {
  uint64_t cfa_reg;
  int64_t cfa_off;
  bool bp_saved;
  int64_t bp_off;
  int64_t ra_off;
} row;

typedef struct cie_info {
  uint64_t code_align;
  int64_t data_align;
  uint8_t fde_enc;
  const uint8_t *insns, *insns_end;
} cie_info;

static bool parse_cie(const uint8_t *c, span seg, const uint8_t *hdr, cie_info *ci) {
  const uint8_t *p = c, *end;
  uint32_t len, id;
  if (!fixed(&p, seg.hi, &len, 4) || len == 0xffffffffu || len > (size_t)(seg.hi - p)) return false;
  end = p + len;
  if (!fixed(&p, end, &id, 4) || id != 0) return false;
  uint8_t version;
  if (!fixed(&p, end, &version, 1) || (version != 1 && version != 3)) return false;
  const char *aug = (const char *)p;
  const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
  if (!nul) return false;
  p = nul + 1;
  uint64_t ra;
  if (!uleb(&p, end, &ci->code_align) || !sleb(&p, end, &ci->data_align)) return false;
  if (version == 1) {
    uint8_t b;
    if (!fixed(&p, end, &b, 1)) return false;
    ra = b;
  } else if (!uleb(&p, end, &ra)) {
    return false;
  }
  if (ra != DW_REG_RA) return false;
  ci->fde_enc = 0;
  if (aug[0] == 'z') {
    uint64_t aug_len;
    if (!uleb(&p, end, &aug_len) || aug_len > (uint64_t)(end - p)) return false;
    const uint8_t *aug_end = p + aug_len;
    for (const char *a = aug + 1; *a; a++) {
      if (*a == 'R') {
        if (!fixed(&p, aug_end, &ci->fde_enc, 1)) return false;
      } else if (*a == 'P') {
        uint8_t enc;
        uint64_t ignored;
        if (!fixed(&p, aug_end, &enc, 1) || !encoded(&p, aug_end, enc & 0x7f, hdr, &ignored))
          return false;
      } else if (*a == 'L') {
        uint8_t enc;
        if (!fixed(&p, aug_end, &enc, 1)) return false;
      } else if (*a != 'S') {
        break; /* the rest of the augmentation data is skipped whole */
      }
    }
    p = aug_end;
  } else if (aug[0]) {
    return false;
  }
  ci->insns = p;
  ci->insns_end = end;
  return true;
}

/* Runs instructions up to the row that holds target (loc: the address of
 * the row being built). */
static bool run(const uint8_t *p, const uint8_t *end, const cie_info *ci, const row *initial,
                row *r, uint64_t *loc, uint64_t target) {
  row stack[STATE_DEPTH];
  int depth = 0;
  while (p < end) {
    uint8_t op = *p++, low = op & 0x3f;
    uint64_t a = 0, b = 0;
    int64_t s = 0;
    uint64_t advance = 0;
    switch (op >> 6) {
    case 1: advance = low; break;
    case 2:
      if (!uleb(&p, end, &a)) return false;
      if (low == DW_REG_RBP) r->bp_saved = true, r->bp_off = scaled(a, ci->data_align);
      if (low == DW_REG_RA) r->ra_off = scaled(a, ci->data_align);
      continue;
    case 3:
      if (low == DW_REG_RBP) r->bp_saved = initial->bp_saved, r->bp_off = initial->bp_off;
      continue;
    default: break;
    }
    if (op >> 6 == 0) {
      switch (op) {
      case 0x00: break;                                                  /* nop */
      case 0x02: { uint8_t d; if (!fixed(&p, end, &d, 1)) return false; advance = d; break; }
      case 0x03: { uint16_t d; if (!fixed(&p, end, &d, 2)) return false; advance = d; break; }
      case 0x04: { uint32_t d; if (!fixed(&p, end, &d, 4)) return false; advance = d; break; }
      case 0x05: /* offset_extended */
        if (!uleb(&p, end, &a) || !uleb(&p, end, &b)) return false;
        if (a == DW_REG_RBP) r->bp_saved = true, r->bp_off = scaled(b, ci->data_align);
        if (a == DW_REG_RA) r->ra_off = scaled(b, ci->data_align);
        break;
      case 0x06: /* restore_extended */
        if (!uleb(&p, end, &a)) return false;
        if (a == DW_REG_RBP) r->bp_saved = initial->bp_saved, r->bp_off = initial->bp_off;
        break;
      case 0x07: case 0x08: /* undefined, same_value */
        if (!uleb(&p, end, &a)) return false;
        if (a == DW_REG_RBP) r->bp_saved = false;
        if (a == DW_REG_RA && op == 0x07) return false; /* the outermost frame */
        break;
      case 0x09: /* register */
        if (!uleb(&p, end, &a) || !uleb(&p, end, &b)) return false;
        if (a == DW_REG_RBP || a == DW_REG_RA) return false;
        break;
      case 0x0a:
        if (depth == STATE_DEPTH) return false;
        stack[depth++] = *r;
        break;
      case 0x0b:
        if (depth == 0) return false;
        { row saved = stack[--depth]; r->cfa_reg = saved.cfa_reg, r->cfa_off = saved.cfa_off;
          r->bp_saved = saved.bp_saved, r->bp_off = saved.bp_off, r->ra_off = saved.ra_off; }
        break;
      case 0x0c: /* def_cfa */
        if (!uleb(&p, end, &a) || !uleb(&p, end, &b)) return false;
        r->cfa_reg = a, r->cfa_off = (int64_t)b;
        break;
      case 0x0d: if (!uleb(&p, end, &r->cfa_reg)) return false; break;
      case 0x0e: if (!uleb(&p, end, &a)) return false; r->cfa_off = (int64_t)a; break;
      case 0x11: /* offset_extended_sf */
        if (!uleb(&p, end, &a) || !sleb(&p, end, &s)) return false;
        if (a == DW_REG_RBP) r->bp_saved = true, r->bp_off = scaled((uint64_t)s, ci->data_align);
        if (a == DW_REG_RA) r->ra_off = scaled((uint64_t)s, ci->data_align);
        break;
      case 0x12: /* def_cfa_sf */
        if (!uleb(&p, end, &a) || !sleb(&p, end, &s)) return false;
        r->cfa_reg = a, r->cfa_off = scaled((uint64_t)s, ci->data_align);
        break;
      case 0x13: /* def_cfa_offset_sf */
        if (!sleb(&p, end, &s)) return false;
        r->cfa_off = scaled((uint64_t)s, ci->data_align);
        break;
      case 0x14: case 0x15: /* val_offset(_sf): a value, not a saved slot */
        if (!uleb(&p, end, &a)) return false;
        if (op == 0x14 ? !uleb(&p, end, &b) : !sleb(&p, end, &s)) return false;
        if (a == DW_REG_RBP || a == DW_REG_RA) return false;
        break;
      case 0x10: case 0x16: /* expression, val_expression: skipped unless they matter */
        if (!uleb(&p, end, &a) || !uleb(&p, end, &b) || b > (uint64_t)(end - p)) return false;
        p += b;
        if (a == DW_REG_RBP || a == DW_REG_RA) return false;
        break;
      case 0x2e: if (!uleb(&p, end, &a)) return false; break; /* GNU_args_size */
      default: return false; /* def_cfa_expression (PLT), set_loc, ... */
      }
    }
    if (advance) {
      uint64_t next = *loc + advance * ci->code_align;
      if (next > target) return true;
      *loc = next;
    }
  }
  return true;
}

/* This process's tables: the loaded module's own segment, no translation.
 * arg: a tm_cfi_walk or NULL. */
static bool find_local(void *arg, uintptr_t ip, tm_cfi_tables *out) {
  tm_cfi_walk *w = arg;
  if (w && ip >= w->text_lo && ip < w->text_hi) {
    *out = w->tables;
    return true;
  }
  locate q = {ip, NULL, {NULL, NULL}, 0, 0};
  dl_iterate_phdr(find_module, &q);
  if (!q.hdr) return false;
  *out = (tm_cfi_tables){q.hdr, q.seg.lo, q.seg.hi, 0};
  if (w) {
    w->text_lo = q.text_lo;
    w->text_hi = q.text_hi;
    w->tables = *out;
  }
  return true;
}

/* The row for target (in the tables' local addresses) from the FDE covering it. */
static bool row_for(const tm_cfi_tables *t, uint64_t target, row *r) {
  locate q = {0, t->hdr, {t->lo, t->hi}, 0, 0};
  const uint8_t *p = q.hdr, *end = q.seg.hi;
  uint8_t version, ptr_enc, count_enc, table_enc;
  uint64_t eh_frame, count;
  if (!fixed(&p, end, &version, 1) || version != 1 || !fixed(&p, end, &ptr_enc, 1) ||
      !fixed(&p, end, &count_enc, 1) || !fixed(&p, end, &table_enc, 1) ||
      !encoded(&p, end, ptr_enc, q.hdr, &eh_frame) || !encoded(&p, end, count_enc, q.hdr, &count))
    return false;
  /* The binary search table: pairs of datarel sdata4 (initial location, FDE). */
  if (table_enc != 0x3b || count == 0 || count > (uint64_t)(end - p) / 8) return false;
  const int32_t *table = (const int32_t *)(const void *)p;
  /* Offsets are added as integers and checked before they become
   * pointers: a pointer outside the segment is undefined even unread. */
  uintptr_t hdr = (uintptr_t)q.hdr;
  uint64_t lo = 0, hi = count;
  while (hi - lo > 1) {
    uint64_t mid = (lo + hi) / 2;
    int32_t start;
    memcpy(&start, &table[2 * mid], 4);
    if ((uint64_t)(hdr + (uintptr_t)(intptr_t)start) <= target) lo = mid;
    else hi = mid;
  }
  int32_t fde_off;
  memcpy(&fde_off, &table[2 * lo + 1], 4);
  uintptr_t fde = hdr + (uintptr_t)(intptr_t)fde_off;
  if (fde < (uintptr_t)q.seg.lo || fde >= (uintptr_t)q.seg.hi) return false;
  p = q.seg.lo + (fde - (uintptr_t)q.seg.lo);
  uint32_t len, cie_ptr;
  if (!fixed(&p, end, &len, 4) || len == 0xffffffffu || len > (size_t)(end - p)) return false;
  const uint8_t *fde_end = p + len;
  const uint8_t *cie_field = p;
  if (!fixed(&p, fde_end, &cie_ptr, 4) || cie_ptr == 0) return false;
  if (cie_ptr > (size_t)(cie_field - q.seg.lo)) return false;
  const uint8_t *cie = cie_field - cie_ptr;
  cie_info ci;
  if (!parse_cie(cie, q.seg, q.hdr, &ci)) return false;
  uint64_t begin, range;
  if (!encoded(&p, fde_end, ci.fde_enc, q.hdr, &begin) ||
      !encoded(&p, fde_end, ci.fde_enc & 0x0f, q.hdr, &range))
    return false;
  if (target < begin || target - begin >= range) return false;
  uint64_t aug_len;
  if (!uleb(&p, fde_end, &aug_len) || aug_len > (uint64_t)(fde_end - p)) return false;
  p += aug_len;
  row initial = {DW_REG_RSP, 8, false, 0, -8}, out;
  uint64_t loc = begin;
  /* The CIE's instructions describe the entry; the FDE's follow. */
  out = initial;
  if (!run(ci.insns, ci.insns_end, &ci, &initial, &out, &loc, UINT64_MAX)) return false;
  initial = out;
  loc = begin;
  if (!run(p, fde_end, &ci, &initial, &out, &loc, target)) return false;
  *r = out;
  return true;
}

static bool read_word(const tm_stack_copy *st, uintptr_t a, uintptr_t *v) {
  if (a < st->base || a - st->base > st->len || st->len - (a - st->base) < sizeof *v) return false;
  memcpy(v, st->bytes + (a - st->base), sizeof *v);
  return true;
}

/* ---- rows by address, per thread ----
 * A step's cost was the search for its row: a binary search of the
 * module's .eh_frame_hdr table (mariadbd's has about 40,000 entries: 16
 * cache misses), the CIE and the FDE's instructions run, and a
 * dl_iterate_phdr per module. Under sysbench that was 2.3% of MariaDB's
 * CPU, at up to 1,000 call-site unwinds a second per thread (sites.h).
 * Direct-mapped by target address, the row packed in 8 bytes: cfa is
 * cfa_off << 3 | ROW_NONE | ROW_BP_SAVED | ROW_CFA_RBP; a row that does not
 * fit is not kept. ROW_NONE: no row (the outermost frame of every walk). */
#define ROW_CACHE 128 /* power of two */
#define ROW_CFA_RBP 1
#define ROW_BP_SAVED 2
#define ROW_NONE 4

typedef struct cached_row {
  uintptr_t target; /* 0 = empty */
  int32_t cfa;
  int16_t bp_off, ra_off;
} cached_row;

static __attribute__((tls_model("initial-exec"))) __thread cached_row row_cache[ROW_CACHE];
/* dlopen and dlclose counts (dl_phdr_info's adds + subs) the cache is of. */
static __attribute__((tls_model("initial-exec"))) __thread unsigned long long row_cache_gen;

static int loaded_count(struct dl_phdr_info *info, size_t size, void *arg) {
  unsigned long long *gen = arg;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *gen = info->dlpi_adds + info->dlpi_subs + 1;
  return 1;
}

/* Once per walk: rows of a module unloaded since (another one may be at
 * its addresses now) are dropped. 0: counts unknown, no caching. */
static void row_cache_check(void) {
  unsigned long long gen = 0;
  dl_iterate_phdr(loaded_count, &gen);
  if (gen != row_cache_gen) memset(row_cache, 0, sizeof row_cache);
  row_cache_gen = gen;
}

static cached_row *row_slot(uintptr_t target) {
  return &row_cache[(target * 0x9E3779B97F4A7C15u) >> 57 & (ROW_CACHE - 1)];
}

static void row_keep(uintptr_t target, bool found, const row *w) {
  cached_row c = {target, ROW_NONE, 0, 0};
  if (found) {
    if ((w->cfa_reg != DW_REG_RSP && w->cfa_reg != DW_REG_RBP) || w->cfa_off < -(1 << 27) ||
        w->cfa_off >= (1 << 27) || w->bp_off < INT16_MIN || w->bp_off > INT16_MAX ||
        w->ra_off < INT16_MIN || w->ra_off > INT16_MAX)
      return;
    c.cfa = (int32_t)(w->cfa_off * 8) | (w->cfa_reg == DW_REG_RBP ? ROW_CFA_RBP : 0) |
            (w->bp_saved ? ROW_BP_SAVED : 0);
    c.bp_off = (int16_t)w->bp_off;
    c.ra_off = (int16_t)w->ra_off;
  }
  *row_slot(target) = c;
}

/* The row for target from the cache: 1 found, 0 no row, -1 not kept. */
static int row_cached(uintptr_t target, row *w) {
  const cached_row *c = row_slot(target);
  if (c->target != target) return -1;
  if (c->cfa & ROW_NONE) return 0;
  *w = (row){c->cfa & ROW_CFA_RBP ? DW_REG_RBP : DW_REG_RSP, c->cfa >> 3,
             (c->cfa & ROW_BP_SAVED) != 0, c->bp_off, c->ra_off};
  return 1;
}

static bool apply(tm_cfi_regs *r, const tm_stack_copy *stack, const row *w);

bool tm_cfi_step(tm_cfi_regs *r, bool ip_is_return, const tm_stack_copy *stack, tm_cfi_walk *walk) {
  if (!walk || !r->ip) return tm_cfi_step_with(r, ip_is_return, stack, find_local, walk);
  if (!walk->rows_checked) {
    row_cache_check();
    walk->rows_checked = true;
  }
  uintptr_t target = ip_is_return ? r->ip - 1 : r->ip;
  row w;
  int cached = row_cache_gen ? row_cached(target, &w) : -1;
  if (cached < 0) {
    tm_cfi_tables t;
    cached = find_local(walk, r->ip, &t) && row_for(&t, target, &w);
    if (row_cache_gen) row_keep(target, cached, &w);
  }
  return cached && apply(r, stack, &w);
}

bool tm_cfi_step_with(tm_cfi_regs *r, bool ip_is_return, const tm_stack_copy *stack,
                      tm_cfi_find find, void *arg) {
  row w;
  tm_cfi_tables t;
  uintptr_t target = ip_is_return ? r->ip - 1 : r->ip;
  if (!r->ip || !find(arg, r->ip, &t) || !row_for(&t, (uint64_t)(target - t.delta), &w))
    return false;
  return apply(r, stack, &w);
}

/* The caller's registers by a frame's row. */
static bool apply(tm_cfi_regs *r, const tm_stack_copy *stack, const row *found) {
  const row w = *found;
  uintptr_t cfa;
  if (w.cfa_reg == DW_REG_RSP) cfa = r->sp + (uintptr_t)w.cfa_off;
  else if (w.cfa_reg == DW_REG_RBP && r->bp_known) cfa = r->bp + (uintptr_t)w.cfa_off;
  else return false;
  uintptr_t ra, bp = r->bp;
  if (cfa <= r->sp || !read_word(stack, cfa + (uintptr_t)w.ra_off, &ra)) return false;
  bool bp_known = r->bp_known;
  if (w.bp_saved) bp_known = read_word(stack, cfa + (uintptr_t)w.bp_off, &bp);
  *r = (tm_cfi_regs){ra, cfa, bp, bp_known};
  return true;
}
