/* tmcreate: a new output file never goes through a name someone planted:
 * a symlink at the name is replaced (its target untouched), an existing
 * file is replaced by a new inode (the old one, perhaps another's, never
 * written), and the temporary names are unpredictable and left behind on
 * no path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tmcreate.h"

static char dir[] = "/tmp/tmcreate-XXXXXX";

static size_t entries(void) {
  DIR *d = opendir(dir);
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void slurp(const char *path, char *buf, size_t n) {
  buf[0] = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  ssize_t r = read(fd, buf, n - 1);
  buf[r > 0 ? r : 0] = 0;
  close(fd);
}

static void test_planted_link_is_replaced(void) {
  char target[256], out[256], got[64];
  snprintf(target, sizeof target, "%s/victim", dir);
  snprintf(out, sizeof out, "%s/out.tmcap", dir);
  int v = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
  CHECK(v >= 0 && write(v, "precious", 8) == 8);
  close(v);
  CHECK(symlink(target, out) == 0);
  int fd = tm_create_replacing(out);
  CHECK(fd >= 0);
  CHECK(write(fd, "capture", 7) == 7);
  close(fd);
  slurp(target, got, sizeof got);
  CHECK(strcmp(got, "precious") == 0);  /* the target is untouched */
  struct stat st;
  CHECK(lstat(out, &st) == 0 && S_ISREG(st.st_mode));  /* the link itself is gone */
  slurp(out, got, sizeof got);
  CHECK(strcmp(got, "capture") == 0);
  CHECK(entries() == 2); /* victim, out.tmcap: no temporary left */
  unlink(out);
  unlink(target);
}

static void test_existing_file_is_a_new_inode(void) {
  char out[256];
  snprintf(out, sizeof out, "%s/again.tmcap", dir);
  int old = open(out, O_WRONLY | O_CREAT | O_EXCL, 0666);
  CHECK(old >= 0);
  struct stat before, after;
  CHECK(fstat(old, &before) == 0);
  int fd = tm_create_replacing(out);
  CHECK(fd >= 0);
  CHECK(fstat(fd, &after) == 0);
  CHECK(after.st_ino != before.st_ino);
  CHECK((after.st_mode & 0777) == (0644 & ~(mode_t)umask(022)));
  close(fd);
  close(old);
  unlink(out);
}

static void test_temp_names_differ_and_refuse_what_exists(void) {
  char out[256], a[300], b[300];
  snprintf(out, sizeof out, "%s/f.tmcap", dir);
  int fa = tm_create_temp(out, ".partial", a, sizeof a);
  int fb = tm_create_temp(out, ".partial", b, sizeof b);
  CHECK(fa >= 0 && fb >= 0);
  CHECK(strcmp(a, b) != 0);
  CHECK(strncmp(a, out, strlen(out)) == 0 && strstr(a, ".partial.") != NULL);
  close(fa);
  close(fb);
  unlink(a);
  unlink(b);
  /* A name that does not fit is refused, not cut. */
  char small[8];
  CHECK(tm_create_temp(out, ".partial", small, sizeof small) < 0);
  /* A directory that is not there: nothing made. */
  CHECK(tm_create_replacing("/nonexistent-dir/x.tmcap") < 0);
  CHECK(entries() == 0);
}

/* A device or FIFO at the name (a root user's /dev/null) is never replaced
 * by a file: refused with EEXIST, nothing left behind. */
static void test_special_file_is_kept(void) {
  char out[256];
  snprintf(out, sizeof out, "%s/sink", dir);
  CHECK(mkfifo(out, 0600) == 0);
  errno = 0;
  CHECK(tm_create_replacing(out) < 0 && errno == EEXIST);
  struct stat st;
  CHECK(lstat(out, &st) == 0 && S_ISFIFO(st.st_mode));
  CHECK(entries() == 1);
  unlink(out);
}

int main(void) {
  umask(022);
  if (!mkdtemp(dir)) return 1;
  test_planted_link_is_replaced();
  test_existing_file_is_a_new_inode();
  test_temp_names_differ_and_refuse_what_exists();
  test_special_file_is_kept();
  rmdir(dir);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
