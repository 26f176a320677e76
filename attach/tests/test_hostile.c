/* What a hostile or corrupt target controls, fed to attach's readers: each
 * case a bug found by reading the code or by the fuzz targets
 * (docs/fuzzing.md). Every one must return promptly (an alarm fails a
 * hang), believe nothing that makes no sense, and say what it skipped. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../probe/tests/tm_check.h"
#include "elfsyms.h"
#include "futexwait.h"
#include "maps.h"
#include "snapshot.h"

static bool noted(const tm_notes *notes, const char *what) {
  for (int i = 0; i < notes->n; i++)
    if (strstr(notes->line[i], what)) return true;
  return false;
}

static void read_maps_text(const char *text, tm_maps *m, tm_notes *notes) {
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  CHECK(f);
  tm_maps_read(f, 0, m, notes);
  fclose(f);
}

/* A path longer than the line buffer (the kernel prints paths past
 * PATH_MAX) ended in text that passed for a line of its own. */
static void overlong_path_forges_no_line(void) {
  char text[8192];
  int n = sprintf(text, "1000-2000 r-xp 00000000 08:01 12 /");
  /* maps.c reads lines of up to 4351 characters: the forged line starts
   * right where the path is cut. */
  memset(text + n, 'a', (size_t)(4351 - n));
  sprintf(text + 4351, "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 /forged\n"
                       "3000-4000 rw-p 00000000 00:00 0 [heap]\n");
  tm_maps m;
  tm_notes notes = {0};
  read_maps_text(text, &m, &notes);
  CHECK_EQ(m.nmaps, 1);
  CHECK_EQ(m.maps[0].start, 0x3000);
  CHECK(!tm_maps_find(&m, 0x7f0000000000));
  CHECK(noted(&notes, "1 lines not understood"));
  tm_maps_free(&m);
}

/* Short permissions were read past their end; a line without the name
 * field named itself; start >= end and lines out of order broke the
 * binary search. */
static void malformed_lines_skipped(void) {
  tm_maps m;
  tm_notes notes = {0};
  read_maps_text("1000-2000 r 00000000 00:00 0 [x]\n"
                 "2000-1000 r-xp 00000000 00:00 0 [y]\n"
                 "5000-6000 r-xp 00000000\n"
                 "8000-9000 r-xp 00000000 00:00 0 [stack]\n"
                 "7000-8800 r-xp 00000000 00:00 0 [heap]\n"
                 "a000-b000 r--p 00000000 00:00 0\n",
                 &m, &notes);
  CHECK_EQ(m.nmaps, 2);
  CHECK(!strcmp(m.maps[0].name, "[stack]"));
  CHECK(!strcmp(m.maps[1].name, "[anon]"));
  CHECK(tm_maps_find(&m, 0x8800) == &m.maps[0]);
  CHECK(noted(&notes, "3 lines not understood"));
  CHECK(noted(&notes, "1 lines out of address order"));
  tm_maps_free(&m);
}

static void alarm_fails(int sig) {
  (void)sig;
  static const char msg[] = "test_hostile: a reader hung on a target's file\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(1);
}

/* A target maps a file, deletes it and puts a FIFO under its name: opening
 * it to read its ELF headers blocked forever. This process is the target. */
static void fifo_under_a_mapped_name(void) {
  char dir[] = "/tmp/test_hostile.XXXXXX", path[64];
  CHECK(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/lib.so", dir);
  int fd = open(path, O_RDWR | O_CREAT, 0600);
  CHECK(fd >= 0);
  CHECK(ftruncate(fd, 4096) == 0);
  void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(p != MAP_FAILED);
  close(fd);
  CHECK(unlink(path) == 0);
  CHECK(mkfifo(path, 0600) == 0);
  signal(SIGALRM, alarm_fails);
  alarm(20);
  tm_snapshot s;
  CHECK(tm_snapshot_take(getpid(), &s));
  alarm(0);
  /* Root reads the mapping itself (/proc/PID/map_files): the FIFO is never
   * opened. Others open the name, see a FIFO, and say so. */
  char why[128];
  snprintf(why, sizeof why, "skipped %s: not a regular file", path);
  CHECK(geteuid() == 0 ? !noted(&s.notes, "not a regular file") : noted(&s.notes, why));
  tm_snapshot_free(&s);
  munmap(p, 4096);
  unlink(path);
  rmdir(dir);
}

/* The file at path as this process's module at 0x400000..0x500000, with
 * its device and inode as the kernel would write them. */
static void map_module(const char *path, tm_maps *m) {
  char text[4500];
  struct stat st = {0};
  CHECK(stat(path, &st) == 0);
  snprintf(text, sizeof text, "400000-500000 r-xp 00000000 %x:%x %lu %s\n", major(st.st_dev),
           minor(st.st_dev), (unsigned long)st.st_ino, path);
  FILE *f = fmemopen(text, strlen(text), "r");
  CHECK(f);
  tm_maps_read(f, getpid(), m, NULL);
  fclose(f);
  CHECK_EQ(m->nmodules, 1);
}

/* An empty file mapped as a module: no symbols (qsort of NULL, 0 was
 * undefined: fuzz-elf's first find). */
static void empty_module_has_no_names(void) {
  int fd = memfd_create("empty", MFD_CLOEXEC);
  CHECK(fd >= 0);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  tm_maps m;
  map_module(path, &m);
  tm_symtabs *syms = tm_symtabs_new(&m);
  CHECK(syms);
  uintptr_t off;
  CHECK(tm_symtabs_lookup(syms, 0x400100, false, &off) == NULL);
  char out[64];
  tm_symtabs_format(syms, 0x400100, false, out, sizeof out);
  CHECK(strstr(out, "+0x100"));
  tm_symtabs_free(syms);
  tm_maps_free(&m);
  close(fd);
}

/* The kernel sleeps in futex_waitv only for 1 to 128 waiters: any other
 * count in a syscall file is not a wait (it was kept, cut to 32 bits). */
static void futex_waitv_count_checked(void) {
  static const char *const lines[] = {
      "449 0x7ffd1000 0x1000 0x0 0x0 0x1 0x0 0x7ffd0000 0x7fb53c5d3829",
      "449 0x7ffd1000 0x100000002 0x0 0x0 0x1 0x0 0x7ffd0000 0x7fb53c5d3829",
      "449 0x7ffd1000 0x0 0x0 0x0 0x1 0x0 0x7ffd0000 0x7fb53c5d3829",
  };
  for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
    tm_syscall sc;
    CHECK(tm_syscall_parse(lines[i], &sc));
    tm_futex_wait w = tm_futex_decode(getpid(), &sc);
    CHECK_EQ(w.op, TM_FUTEX_NONE);
    CHECK(w.skipped && strstr(w.skipped, "1 to 128"));
  }
  /* A real one: two waiters in this process's memory. */
  uint64_t waiters[6] = {7, 0x1234, 0x82, 0, 0, 0};
  char line[160];
  snprintf(line, sizeof line, "449 %p 0x2 0x0 0x0 0x1 0x0 0x7ffd0000 0x7fb53c5d3829",
           (void *)waiters);
  tm_syscall sc;
  CHECK(tm_syscall_parse(line, &sc));
  tm_futex_wait w = tm_futex_decode(getpid(), &sc);
  CHECK_EQ(w.op, TM_FUTEX_WAITV);
  CHECK_EQ(w.word, 0x1234);
  CHECK_EQ(w.expected, 7);
  CHECK_EQ(w.nwords, 2);
  CHECK(!w.skipped);
}

/* Names are the target's: a thread's or a file's with an escape sequence
 * wrote to the terminal of whoever ran peek (as root, often). */
static void names_printable(void) {
  char text[] = "1000-2000 r-xp 00000000 08:01 12 /tmp/evil\033]0;owned\007.so\n";
  tm_maps m;
  read_maps_text(text, &m, NULL);
  tm_symtabs *syms = tm_symtabs_new(&m);
  CHECK(syms);
  char out[64];
  tm_symtabs_format(syms, 0x1100, false, out, sizeof out);
  CHECK(!strcmp(out, "evil?]0;owned?.so+0x100"));
  tm_symtabs_free(syms);
  tm_maps_free(&m);

  CHECK(prctl(PR_SET_NAME, "esc\033[2Jape") == 0);
  tm_snapshot s;
  CHECK(tm_snapshot_take(getpid(), &s));
  const tm_thread_state *me = tm_snapshot_thread(&s, gettid());
  CHECK(me && !strcmp(me->name, "esc?[2Jape"));
  tm_snapshot_free(&s);
}

/* The ELF files fuzz-elf found bugs with (attach/fuzz/regressions/elf),
 * read as a module's file in this build too: glibc aborts on the double
 * free an empty symbol table caused. */
static void fuzz_found_elf_files(const char *dir) {
  DIR *d = opendir(dir);
  CHECK(d);
  int files = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    tm_maps m;
    map_module(path, &m);
    tm_symtabs *syms = tm_symtabs_new(&m);
    CHECK(syms);
    char out[160];
    for (uintptr_t a = 0x400000; a < 0x500000; a += 0x1000)
      tm_symtabs_format(syms, a, false, out, sizeof out);
    tm_symtabs_free(syms);
    tm_maps_free(&m);
    files++;
  }
  closedir(d);
  CHECK(files >= 2);
}

/* A target maps a file, then puts another file, and then a link to a
 * device, under its name (root's attach-peek of a user's process opened
 * /dev/zero through such a link, and named frames from a file that
 * replaced the binary). Only the mapped inode is ever read: through
 * map_files, or through the name when it leads to that very inode. */
static void replaced_mapped_file_is_not_read(void) {
  char dir[] = "/tmp/test_hostile.XXXXXX", path[64], other[80];
  CHECK(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/lib.so", dir);
  snprintf(other, sizeof other, "%s/other.so", dir);
  /* This very test program's ELF file: something with headers to read. */
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  CHECK(n > 0);
  self[n > 0 ? n : 0] = 0;
  int in = open(self, O_RDONLY), out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  CHECK(in >= 0 && out >= 0);
  char buf[65536];
  for (ssize_t r; (r = read(in, buf, sizeof buf)) > 0;) CHECK(write(out, buf, (size_t)r) == r);
  close(in);
  close(out);
  int fd = open(path, O_RDONLY);
  void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  CHECK(p != MAP_FAILED);
  struct stat mapped;
  CHECK(fstat(fd, &mapped) == 0);
  close(fd);
  tm_maps m;
  tm_notes notes = {0};
  CHECK(tm_maps_load(getpid(), &m, &notes));
  tm_module *mod = NULL;
  for (size_t i = 0; i < m.nmodules; i++)
    if (!strcmp(m.modules[i].path, path)) mod = &m.modules[i];
  CHECK(mod != NULL);
  if (!mod) return;
  CHECK(mod->dev == mapped.st_dev && mod->ino == mapped.st_ino);
  /* Another file under the name. */
  int o = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
  CHECK(o >= 0 && write(o, buf, 64) == 64);
  close(o);
  CHECK(rename(other, path) == 0);
  tm_elf_file f;
  struct stat got;
  bool via_map_files = tm_module_open(mod, &f, &notes);
  if (geteuid() == 0) { /* map_files: the mapped inode, whatever the name holds */
    CHECK(via_map_files && fstat(f.fd, &got) == 0 && got.st_ino == mapped.st_ino);
  }
  if (via_map_files) tm_elf_close(&f);
  char *keep = mod->map_path;
  mod->map_path = NULL; /* as a user without map_files: the name only */
  CHECK(!tm_module_open(mod, &f, &notes));
  CHECK(noted(&notes, "not the file that is mapped"));
  /* A link to a device under the name: not followed, nothing opened. */
  CHECK(unlink(path) == 0 && symlink("/dev/zero", path) == 0);
  signal(SIGALRM, alarm_fails);
  alarm(20);
  CHECK(!tm_module_open(mod, &f, &notes));
  alarm(0);
  mod->map_path = keep;
  tm_maps_free(&m);
  munmap(p, 4096);
  unlink(path);
  rmdir(dir);
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  overlong_path_forges_no_line();
  malformed_lines_skipped();
  fifo_under_a_mapped_name();
  replaced_mapped_file_is_not_read();
  empty_module_has_no_names();
  futex_waitv_count_checked();
  names_printable();
  fuzz_found_elf_files(argv[1]);
  printf("test_hostile: ok\n");
  return 0;
}
