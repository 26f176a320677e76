/* Another process's modules, from /proc/PID/maps: what its addresses are.
 *
 * A module is a file mapped into the target (its program, libraries); its
 * executable mappings are where return addresses may point, its load bias
 * turns a runtime address into the link-time one its ELF symbol table and
 * a reader's file:line use, and its build-id says which file that is (the
 * one on disk may have been replaced since the target loaded it). Files
 * are opened as /proc/PID/root/PATH, so a target in a container is read
 * through its own filesystem. */
#ifndef THREADMON_ATTACH_MAPS_H
#define THREADMON_ATTACH_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "elffile.h"
#include "notes.h"

#define TM_MAPS_BUILD_ID_MAX 32
/* Distinct files read (libelf, symbol tables, unwind tables); a target
 * mapping more is cut there: each costs an open and a parse. */
#define TM_MAPS_MODULES_MAX 4096

typedef struct tm_mapping {
  uintptr_t start, end;
  uint64_t offset; /* in the file */
  bool read, exec, write;
  int module; /* index in tm_maps.modules, -1: anonymous, [heap], [stack] ... */
  char name[24]; /* "[heap]", "[stack]", "[anon]" ... when module is -1 */
} tm_mapping;

typedef struct tm_module {
  char *path;      /* as the target sees it */
  char *open_path; /* /proc/PID/root/PATH: where this process may find it */
  char *map_path;  /* /proc/PID/map_files/START-END: the mapped inode itself */
  dev_t dev;       /* the mapped file's, from maps: what open_path must lead to */
  ino_t ino;
  uintptr_t base;  /* start of its mapping at file offset 0 */
  uintptr_t bias;  /* runtime address - link-time address */
  uint8_t build_id[TM_MAPS_BUILD_ID_MAX];
  size_t build_id_len;
} tm_module;

typedef struct tm_maps {
  pid_t pid;
  tm_mapping *maps; /* in address order */
  size_t nmaps;
  tm_module *modules;
  size_t nmodules;
  size_t nmodules_skipped; /* files past TM_MAPS_MODULES_MAX */
  tm_notes *notes; /* what was skipped, here and by the readers of its modules */
} tm_maps;

/* Reads the target's maps and each module's ELF headers; false (errno
 * set) when its maps cannot be read. Lines that make no sense are
 * skipped and said in notes (may be NULL). */
bool tm_maps_load(pid_t pid, tm_maps *m, tm_notes *notes);
/* The same from a maps file's text in f (pid: whose root the modules'
 * files are opened through). */
void tm_maps_read(FILE *f, pid_t pid, tm_maps *m, tm_notes *notes);
void tm_maps_free(tm_maps *m);

/* Opens a module's file only through a descriptor checked to be the mapped
 * inode: /proc/PID/map_files/START-END (root, or the same user on kernels
 * that allow it), else /proc/PID/root/PATH when fstat shows a regular file
 * with the mapping's device and inode. Never a device node, FIFO, or a
 * file the target put at the name after mapping another. */
bool tm_module_open(const tm_module *mod, tm_elf_file *f, tm_notes *notes);

/* The mapping holding addr, NULL when none. */
const tm_mapping *tm_maps_find(const tm_maps *m, uintptr_t addr);
/* The module holding addr (any of its mappings), NULL when none. */
const tm_module *tm_maps_module_of(const tm_maps *m, uintptr_t addr);

/* Base name of a module's path. */
const char *tm_module_name(const tm_module *mod);

#endif
