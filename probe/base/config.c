#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

static int bad(const char *var, const char *value, const char *why) {
  fprintf(stderr, "threadmon: %s=\"%s\": %s; running unprobed\n", var, value, why);
  return -1;
}

static int parse_u64(const char *var, const char *s, uint64_t lo, uint64_t hi,
                     uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
    char why[96];
    snprintf(why, sizeof why, "expected an integer in [%llu, %llu]",
             (unsigned long long)lo, (unsigned long long)hi);
    return bad(var, s, why);
  }
  *out = v;
  return 0;
}

/* A share of one core: "0.05" or "5%"; a whole number without "%" is a
 * percentage too ("5", as the variable was first read); "0": no budget.
 * Read before main(), in the C locale. */
static int parse_budget(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  bool pct = *end == '%';
  if (pct) end++;
  bool whole = !pct && !strpbrk(s, ".eE") && v >= 1;
  if (errno || end == s || *end || !(v >= 0) || s[0] == '-')
    return bad("THREADMON_BUDGET", s, "expected a share of one core: 0.05 or 5%");
  if (pct || whole) v /= 100;
  if (v > 1) return bad("THREADMON_BUDGET", s, "more than one core");
  *out = v;
  return 0;
}

/* "unix:/absolute/path" (a Unix socket; kept whole as the host, no port),
 * "host:port", "[v6addr]:port" or ":port" (localhost). */
static int parse_connect(tm_config *c, const char *s) {
  if (!strncmp(s, TM_UNIX_PREFIX, strlen(TM_UNIX_PREFIX))) {
    const char *path = s + strlen(TM_UNIX_PREFIX);
    if (path[0] != '/') return bad("THREADMON_CONNECT", s, "expected unix:/absolute/path");
    if (strlen(path) >= TM_UNIX_PATH_BYTES)
      return bad("THREADMON_CONNECT", s, "socket path longer than 107 bytes");
    snprintf(c->host, sizeof c->host, "%s", s);
    c->port[0] = 0;
    return 0;
  }
  const char *colon = strrchr(s, ':');
  if (!colon || !colon[1]) return bad("THREADMON_CONNECT", s, "expected host:port");
  const char *host = s;
  size_t host_len = (size_t)(colon - s);
  if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
    host++;
    host_len -= 2;
  }
  uint64_t port;
  if (parse_u64("THREADMON_CONNECT", colon + 1, 1, 65535, &port)) return -1;
  if (host_len == 0) {
    host = "127.0.0.1";
    host_len = strlen(host);
  }
  if (host_len >= sizeof c->host) return bad("THREADMON_CONNECT", s, "host name too long");
  memcpy(c->host, host, host_len);
  c->host[host_len] = 0;
  snprintf(c->port, sizeof c->port, "%u", (unsigned)port);
  return 0;
}

static const char *parse_unsigned(const char *s, unsigned *out) {
  uint64_t v = 0;
  const char *start = s;
  for (; *s >= '0' && *s <= '9' && s - start < 10; s++) v = v * 10 + (uint64_t)(*s - '0');
  if (s == start || v > 0xffffffffu || (*s >= '0' && *s <= '9')) return NULL;
  *out = (unsigned)v;
  return s;
}

bool tm_config_lineage(const char *s, unsigned *pid, unsigned *gen) {
  if (!s || !(s = parse_unsigned(s, pid)) || *s++ != ':') return false;
  return parse_unsigned(s, gen) != NULL;
}

bool tm_config_lazy_image(void) {
  /* Asked by three constructors of one image: one answer (0 not known yet). */
  TM_HOT static int known;
  if (known) return known == 1;
  const char *tree = getenv("THREADMON_TREE");
  const char *follow = getenv("THREADMON_FOLLOW");
  const char *lineage = getenv("THREADMON_SESSION");
  unsigned pid = 0, gen = 0;
  bool lazy = tree && tree[0] && !(follow && !strcmp(follow, "0")) && lineage &&
              tm_config_lineage(lineage, &pid, &gen) && pid != (unsigned)getpid();
  known = lazy ? 1 : 2;
  return lazy;
}

int tm_config_load(tm_config *c) {
  memset(c, 0, sizeof *c);
  c->interval_ns = 10u * 1000000u;
  c->net_buffer_bytes = 8u << 20;
  c->follow = true;
  c->perf = true;
  c->max_switch_rate = 25000;
  c->max_create_rate = 4000;
  c->budget = 0.05;
  c->compress = 3;

  const char *v;
  if ((v = getenv("THREADMON_OUTPUT")) && *v) {
    if (strlen(v) >= sizeof c->output) return bad("THREADMON_OUTPUT", v, "path too long");
    strcpy(c->output, v);
  }
  if ((v = getenv("THREADMON_STATUS")) && *v) {
    if (strlen(v) >= sizeof c->status) return bad("THREADMON_STATUS", v, "path too long");
    strcpy(c->status, v);
  }
  if ((v = getenv("THREADMON_TREE")) && *v) {
    if (strlen(v) >= sizeof c->tree - 64) return bad("THREADMON_TREE", v, "path too long");
    strcpy(c->tree, v);
  }
  if ((v = getenv("THREADMON_CONNECT")) && *v && parse_connect(c, v)) return -1;
  if ((v = getenv("THREADMON_TOKEN")) && *v) {
    if (strlen(v) >= sizeof c->token) return bad("THREADMON_TOKEN", v, "longer than 255 bytes");
    strcpy(c->token, v);
  }
  uint64_t n;
  if ((v = getenv("THREADMON_INTERVAL_MS")) && *v) {
    if (parse_u64("THREADMON_INTERVAL_MS", v, 1, 10000, &n)) return -1;
    c->interval_ns = n * 1000000u;
  }
  c->interval_asked_ns = c->interval_ns;
  if ((v = getenv("THREADMON_BUDGET")) && *v && parse_budget(v, &c->budget)) return -1;
  if ((v = getenv("THREADMON_COMPRESS")) && *v) {
    if (parse_u64("THREADMON_COMPRESS", v, 0, 19, &n)) return -1;
    c->compress = (int)n;
  }
  if ((v = getenv("THREADMON_FOLLOW")) && *v) {
    if (parse_u64("THREADMON_FOLLOW", v, 0, 1, &n)) return -1;
    c->follow = n != 0;
  }
  if ((v = getenv("THREADMON_PERF")) && *v) {
    if (parse_u64("THREADMON_PERF", v, 0, 1, &n)) return -1;
    c->perf = n != 0;
  }
  if ((v = getenv("THREADMON_COUNTERS")) && *v) {
    if (parse_u64("THREADMON_COUNTERS", v, 0, 1, &n)) return -1;
    c->counters = n != 0;
  }
  if ((v = getenv("THREADMON_MAX_SWITCH_RATE")) && *v) {
    if (parse_u64("THREADMON_MAX_SWITCH_RATE", v, 0, UINT64_MAX / 1000000000u, &n)) return -1;
    c->max_switch_rate = n;
  }
  if ((v = getenv("THREADMON_MAX_CREATE_RATE")) && *v) {
    if (parse_u64("THREADMON_MAX_CREATE_RATE", v, 0, UINT64_MAX / 1000000000u, &n)) return -1;
    c->max_create_rate = n;
  }
  if ((v = getenv("THREADMON_NET_BUFFER_KB")) && *v) {
    if (parse_u64("THREADMON_NET_BUFFER_KB", v, 16, 1u << 20, &n)) return -1;
    c->net_buffer_bytes = (size_t)n << 10;
  }
  return 0;
}

bool tm_config_wants_probe(const tm_config *c) { return c->output[0] || c->host[0]; }

int tm_config_tag_path(const char *path, const char *tag, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base) dot = base + strlen(base); /* no extension */
  int w = snprintf(out, n, "%.*s.%s%s", (int)(dot - path), path, tag, dot);
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

int tm_config_child_path(const char *path, pid_t pid, char *out, size_t n) {
  char tag[24];
  snprintf(tag, sizeof tag, "%d", (int)pid);
  return tm_config_tag_path(path, tag, out, n);
}

static bool is_probe_entry(const char *entry, size_t len) {
  /* Matches ".../libthreadmon.so" and "libthreadmon.so.0" alike. */
  const char *name = entry;
  for (size_t i = 0; i < len; i++)
    if (entry[i] == '/') name = entry + i + 1;
  size_t rest = len - (size_t)(name - entry);
  return rest >= 15 && memcmp(name, "libthreadmon.so", 15) == 0;
}

/* Drops the probe from LD_PRELOAD by rewriting the value in place, never
 * through setenv: a program that kept its own copy of the environment array
 * (bash reads main's envp, which an earlier setenv's reallocation of environ
 * leaves behind) shares the string, so its children and exec'd images run
 * unprobed too. The value only shrinks; an empty one preloads nothing. */
void tm_config_unpreload(void) {
  char *value = getenv("LD_PRELOAD");
  if (!value) return;
  char *out = value;
  /* ld.so separates entries with spaces or colons. */
  for (const char *p = value; *p;) {
    size_t n = strcspn(p, " :");
    if (n && !is_probe_entry(p, n)) {
      if (out != value) *out++ = ':';
      memmove(out, p, n);
      out += n;
    }
    p += n;
    if (*p) p++;
  }
  *out = 0;
}
