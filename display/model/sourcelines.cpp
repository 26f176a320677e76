#include "sourcelines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>

#include "threadmon.pb-c.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace tmon {

namespace {

// Modules remembered, those without usable debug information included. The
// paths come from a capture, which may name thousands: past this, lookups
// in new modules give nothing.
constexpr size_t kMaxModules = 256;

// Source of a language's library rather than the program: Rust's std, core
// and alloc (/rustc/<hash>/library/... from rustup, /usr/src/rustc-*/library/...
// from Debian), crates (cargo's registry, Debian's /usr/share/cargo/registry),
// libstdc++'s headers.
bool librarySource(const char *file) {
  for (const char *p : {"/library/std/", "/library/core/", "/library/alloc/", "/rustc/",
                        "/cargo/registry/", "/.cargo/registry/", "/include/c++/"})
    if (strstr(file, p)) return true;
  return false;
}

QString baseName(const char *file) {
  return QFileInfo(QString::fromUtf8(file)).fileName();
}

// Appends to path the DIEs under parent that contain pc, outermost first:
// functions, inlined calls and blocks, also inside namespaces and types
// (Rust nests its functions there, where dwarf_getscopes does not look).
bool scopesAt(Dwarf_Die *parent, Dwarf_Addr pc, std::vector<Dwarf_Die> *path, int depth) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(parent, &child) != 0) return false;
  do {
    const int tag = dwarf_tag(&child);
    const bool container = tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
                           tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type ||
                           tag == DW_TAG_class_type;
    if (container) {
      if (scopesAt(&child, pc, path, depth + 1)) return true;
    } else if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
                tag == DW_TAG_lexical_block) &&
               dwarf_haspc(&child, pc) == 1) {
      path->push_back(child);
      scopesAt(&child, pc, path, depth + 1);
      return true;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

char *debugInfoPath = nullptr;  // libdwfl's default search path
const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, nullptr, &debugInfoPath};

// One module reported offline, at libdwfl's own placement.
// The path is the stream's to name (/dev/zero, /etc/shadow, a FIFO): it
// is looked at through an O_PATH descriptor first, which opens nothing, and
// read only when the file it resolves to (libraries are loaded through
// links: libstdc++.so.6) is a regular file that everyone may read (as
// programs and libraries are), or one of this user's own (not root's: a
// root display would then read any secret root owns); then it is reopened
// through the same descriptor: the very inode checked. Else skipped in one
// line.
int openModuleFile(const QByteArray &name) {
  const int where = open(name.constData(), O_PATH | O_CLOEXEC);
  if (where < 0) return -1;  // not there: nothing to say
  struct stat st;
  const bool ok = fstat(where, &st) == 0 && S_ISREG(st.st_mode) &&
                  ((st.st_mode & S_IROTH) || (st.st_uid == geteuid() && st.st_uid != 0));
  int fd = -1;
  if (ok) {
    char self[40];
    snprintf(self, sizeof self, "/proc/self/fd/%d", where);
    fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  } else {
    qWarning("threadmon: not reading debug information from %s: not a regular file that "
             "everyone may read, nor this user's own",
             name.constData());
  }
  close(where);
  return fd;
}

class ModuleLines {
 public:
  ModuleLines(const QString &path, const QByteArray &buildId) {
    // The module's file, when it is this build; else the debug file of
    // the build-id, which holds the same addresses.
    if (report(path, buildId)) return;
    if (buildId.size() >= 2) {
      const QByteArray hex = buildId.toHex();
      report(QStringLiteral("/usr/lib/debug/.build-id/%1/%2.debug")
                 .arg(QString::fromLatin1(hex.left(2)), QString::fromLatin1(hex.mid(2))),
             buildId);
    }
  }
  ~ModuleLines() {
    if (dwfl_) dwfl_end(dwfl_);
  }
  ModuleLines(const ModuleLines &) = delete;
  ModuleLines &operator=(const ModuleLines &) = delete;

  QString line(uint64_t address) {
    if (!mod_) return QString();
    Dwarf_Addr bias = 0;
    if (!dwfl_module_getelf(mod_, &bias)) return QString();
    Dwfl_Line *l = dwfl_module_getsrc(mod_, address + bias);
    int lineNo = 0;
    const char *file = l ? dwfl_lineinfo(l, nullptr, &lineNo, nullptr, nullptr, nullptr) : nullptr;
    if (!file || lineNo <= 0) return QString();
    QString text = QStringLiteral("%1:%2").arg(baseName(file)).arg(lineNo);
    // Library code inlined into the program's (a Rust closure's Mutex::lock,
    // an item of rayon's for_each): also the program's own line it was
    // inlined at, the outermost call site outside the library.
    if (librarySource(file)) {
      const QString own = inlinedAt(address + bias);
      if (!own.isEmpty()) text += QStringLiteral(" in ") + own;
    }
    return text;
  }

 private:
  bool report(const QString &path, const QByteArray &buildId) {
    if (path.isEmpty() || !path.startsWith(u'/')) return false;
    const QByteArray name = QFile::encodeName(path);
    const int fd = openModuleFile(name);
    if (fd < 0) return false;
    Dwfl *dwfl = dwfl_begin(&kCallbacks);
    if (!dwfl) {
      close(fd);
      return false;
    }
    Dwfl_Module *mod = dwfl_report_offline(dwfl, "module", name.constData(), fd);
    if (!mod) close(fd);  // consumed only on success
    dwfl_report_end(dwfl, nullptr, nullptr);
    const unsigned char *bits = nullptr;
    GElf_Addr vaddr = 0;
    const int len = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : -1;
    const bool same = mod && (buildId.isEmpty() ||
                              (len == buildId.size() &&
                               memcmp(bits, buildId.constData(), size_t(len)) == 0));
    if (!same) {
      dwfl_end(dwfl);
      return false;
    }
    dwfl_ = dwfl;
    mod_ = mod;
    return true;
  }

  // The innermost inlined call site at pc whose file is not a library's
  // (where the program called into it), "main.rs:41"; "" when none.
  QString inlinedAt(Dwarf_Addr pc) {
    Dwarf_Addr cuBias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod_, pc, &cuBias);
    Dwarf_Files *files = nullptr;
    size_t nFiles = 0;
    if (!cu || dwarf_getsrcfiles(cu, &files, &nFiles) != 0) return QString();
    std::vector<Dwarf_Die> scopes;
    scopesAt(cu, pc - cuBias, &scopes, 0);
    // Innermost first; an inlined call's file and line are in the scope
    // around it.
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      if (dwarf_tag(&*it) != DW_TAG_inlined_subroutine) continue;
      Dwarf_Attribute attr;
      Dwarf_Word fileIndex = 0, line = 0;
      if (dwarf_formudata(dwarf_attr(&*it, DW_AT_call_file, &attr), &fileIndex) != 0 ||
          dwarf_formudata(dwarf_attr(&*it, DW_AT_call_line, &attr), &line) != 0 ||
          fileIndex >= nFiles || line == 0)
        continue;
      const char *file = dwarf_filesrc(files, fileIndex, nullptr, nullptr);
      if (file && !librarySource(file))
        return QStringLiteral("%1:%2").arg(baseName(file)).arg(line);
    }
    return QString();
  }


 public:
  // The struct member an object of type typeName made by the call at
  // address is: "table->lock" when the function holding the call sees
  // exactly one (struct, member) of that type through its pointer
  // variables; "" when none or several (a guess would mislead).
  QString member(uint64_t address, const char *typeName) {
    if (!mod_) return QString();
    Dwarf_Addr bias = 0;
    if (!dwfl_module_getelf(mod_, &bias)) return QString();
    Dwarf_Addr cuBias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod_, address + bias, &cuBias);
    if (!cu) return QString();
    std::vector<Dwarf_Die> scopes;
    scopesAt(cu, address + bias - cuBias, &scopes, 0);
    std::set<QString> found;
    // Innermost first, up to the function (or inlined call) itself.
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      Dwarf_Die child;
      if (dwarf_child(&*it, &child) == 0) do {
          const int tag = dwarf_tag(&child);
          if (tag == DW_TAG_variable || tag == DW_TAG_formal_parameter)
            membersOfType(&child, typeName, &found);
        } while (found.size() < 2 && dwarf_siblingof(&child, &child) == 0);
      if (dwarf_tag(&*it) != DW_TAG_lexical_block) break;
    }
    return found.size() == 1 ? *found.begin() : QString();
  }

 private:
  // The DIE's type (through abstract origins), false when it has none.
  static bool typeOf(Dwarf_Die *die, Dwarf_Die *type) {
    Dwarf_Attribute attr;
    return dwarf_attr_integrate(die, DW_AT_type, &attr) && dwarf_formref_die(&attr, type);
  }

  // Follows typedefs and qualifiers; *name: the last typedef's name.
  static void strip(Dwarf_Die *type, const char **name) {
    for (int i = 0; i < 16; i++) {
      const int tag = dwarf_tag(type);
      if (tag == DW_TAG_typedef && name) *name = dwarf_diename(type);
      if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) return;
      if (!typeOf(type, type)) return;
    }
  }

  // Whether type is typeName, or a typedef chain through it.
  static bool isNamed(Dwarf_Die type, const char *typeName) {
    for (int i = 0; i < 16; i++) {
      const char *n = dwarf_diename(&type);
      if (n && strcmp(n, typeName) == 0) return true;
      const int tag = dwarf_tag(&type);
      if ((tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) ||
          !typeOf(&type, &type))
        return false;
    }
    return false;
  }

  // Adds "struct->member" for each member of type typeName of the struct
  // the variable var points to.
  static void membersOfType(Dwarf_Die *var, const char *typeName, std::set<QString> *found) {
    Dwarf_Die type;
    if (!typeOf(var, &type)) return;
    strip(&type, nullptr);
    if (dwarf_tag(&type) != DW_TAG_pointer_type || !typeOf(&type, &type)) return;
    const char *typedefName = nullptr;
    strip(&type, &typedefName);
    if (dwarf_tag(&type) != DW_TAG_structure_type) return;
    const char *structName = dwarf_diename(&type);
    if (!structName) structName = typedefName;
    Dwarf_Die m;
    if (!structName || dwarf_child(&type, &m) != 0) return;
    do {
      Dwarf_Die mt;
      const char *member = dwarf_diename(&m);
      if (dwarf_tag(&m) == DW_TAG_member && member && typeOf(&m, &mt) && isNamed(mt, typeName))
        found->insert(
            QStringLiteral("%1->%2").arg(QString::fromUtf8(structName), QString::fromUtf8(member)));
    } while (dwarf_siblingof(&m, &m) == 0);
  }

 public:
  // The member of the global variable symbol (its name in the symbol
  // table) at offset, ".users.lock" or "[3].lock", down to a member of
  // type typeName (any type when null); "" when the variable is the object
  // itself, or its debug information is not here. file: the base name of
  // its CU's source when the name is a local one, else empty.
  QString globalMember(const QByteArray &symbol, uint64_t offset, const char *typeName,
                       const QByteArray &file) {
    if (!mod_) return QString();
    if (!globalsRead_) readGlobals();
    Dwarf_Die var;
    bool found = false;
    for (auto [it, end] = globals_.equal_range(symbol); it != end && !found; ++it) {
      Dwarf_Die cu;
      found = dwarf_offdie(dwarf_, it->second, &var) && dwarf_diecu(&var, &cu, nullptr, nullptr) &&
              (file.isEmpty() || baseName(dwarf_diename(&cu)).toUtf8() == file);
    }
    Dwarf_Die type;
    if (!found || !typeOf(&var, &type)) return QString();
    QString path;
    for (int depth = 0; depth < 16; depth++) {
      if (typeName && isNamed(type, typeName)) break;
      strip(&type, nullptr);
      const int tag = dwarf_tag(&type);
      if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type) {
        if (!enterMember(&type, &offset, &path)) break;
      } else if (tag == DW_TAG_array_type) {
        Dwarf_Die element;
        Dwarf_Word size = 0;
        if (!oneDimension(&type) || !typeOf(&type, &element) ||
            dwarf_aggregate_size(&element, &size) != 0 || size == 0)
          break;
        path += QStringLiteral("[%1]").arg(offset / size);
        offset %= size;
        type = element;
      } else {
        break;
      }
    }
    if (path.isEmpty()) return QString();
    if (offset) path += QStringLiteral("+0x%1").arg(offset, 0, 16);
    return path;
  }

 private:
  // The member of the aggregate type holding offset: appends ".name" (an
  // anonymous one adds nothing), makes offset relative to it and type its
  // type. False when no member holds it.
  static bool enterMember(Dwarf_Die *type, uint64_t *offset, QString *path) {
    Dwarf_Die m;
    if (dwarf_child(type, &m) != 0) return false;
    do {
      Dwarf_Die mt;
      Dwarf_Word at = 0, size = 0;
      Dwarf_Attribute attr;
      if (dwarf_tag(&m) != DW_TAG_member || !typeOf(&m, &mt)) continue;
      // A union's members have no location: all at 0.
      if (dwarf_attr(&m, DW_AT_data_member_location, &attr) && dwarf_formudata(&attr, &at) != 0)
        continue;
      if (dwarf_aggregate_size(&mt, &size) != 0 || *offset < at || *offset >= at + size) continue;
      if (const char *name = dwarf_diename(&m)) *path += u'.' + QString::fromUtf8(name);
      *offset -= at;
      *type = mt;
      return true;
    } while (dwarf_siblingof(&m, &m) == 0);
    return false;
  }

  static bool oneDimension(Dwarf_Die *array) {
    Dwarf_Die child;
    int ranges = 0;
    if (dwarf_child(array, &child) == 0) do {
        ranges += dwarf_tag(&child) == DW_TAG_subrange_type;
      } while (dwarf_siblingof(&child, &child) == 0);
    return ranges == 1;
  }

  // Every variable with a location at a CU's top level or in its
  // namespaces, by its symbol table name (the linkage name where it has
  // one), once per module.
  void readGlobals() {
    globalsRead_ = true;
    Dwarf_Addr bias = 0;
    dwarf_ = dwfl_module_getdwarf(mod_, &bias);
    if (!dwarf_) return;
    Dwarf_Off off = 0, next = 0;
    size_t header = 0;
    while (dwarf_nextcu(dwarf_, off, &next, &header, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die cu;
      if (dwarf_offdie(dwarf_, off + header, &cu)) addGlobals(&cu, 0);
      off = next;
    }
  }

  void addGlobals(Dwarf_Die *parent, int depth) {
    Dwarf_Die child;
    if (depth > 8 || dwarf_child(parent, &child) != 0) return;
    do {
      const int tag = dwarf_tag(&child);
      Dwarf_Attribute attr;
      if (tag == DW_TAG_namespace) {
        addGlobals(&child, depth + 1);
      } else if (tag == DW_TAG_variable && dwarf_attr(&child, DW_AT_location, &attr)) {
        const char *name =
            dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_linkage_name, &attr));
        if (!name) name = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &attr));
        if (name && globals_.size() < kMaxGlobals) globals_.emplace(name, dwarf_dieoffset(&child));
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  // A program with more globals is named by the first this many.
  static constexpr size_t kMaxGlobals = 1 << 20;

  Dwfl *dwfl_ = nullptr;
  Dwfl_Module *mod_ = nullptr;
  Dwarf *dwarf_ = nullptr;
  bool globalsRead_ = false;
  std::multimap<QByteArray, Dwarf_Off> globals_;
};

// A module's lines, read by one thread at a time: the first lookup loads
// its debug information, a tenth of a second or more.
struct CachedModule {
  std::mutex mutex;
  std::unique_ptr<ModuleLines> lines;
};

std::mutex cacheMutex;  // the map only: a module loading blocks only its own lookups
std::map<std::pair<QString, QByteArray>, std::unique_ptr<CachedModule>> cache;

}  // namespace

namespace {

// where's module, read on first use (nullptr past kMaxModules).
CachedModule *cachedModule(const CodeLocation &where) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto key = std::make_pair(where.modulePath, where.buildId);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= kMaxModules) return nullptr;
    it = cache.emplace(key, std::make_unique<CachedModule>()).first;
  }
  return it->second.get();
}

}  // namespace

QString sourceGlobalMember(const CodeLocation &module, const QString &symbol, uint64_t offset,
                           const char *typeName, const QString &file) {
  if (module.modulePath.isEmpty() || symbol.isEmpty()) return QString();
  CachedModule *m = cachedModule(module);
  if (!m) return QString();
  std::lock_guard<std::mutex> lock(m->mutex);
  if (!m->lines) m->lines = std::make_unique<ModuleLines>(module.modulePath, module.buildId);
  return m->lines->globalMember(symbol.toUtf8(), offset, typeName, file.toUtf8());
}

QString sourceLine(const CodeLocation &where) {
  if (where.modulePath.isEmpty() || where.address == 0) return QString();
  CachedModule *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto key = std::make_pair(where.modulePath, where.buildId);
    auto it = cache.find(key);
    if (it == cache.end()) {
      if (cache.size() >= kMaxModules) return QString();
      it = cache.emplace(key, std::make_unique<CachedModule>()).first;
    }
    module = it->second.get();
  }
  std::lock_guard<std::mutex> lock(module->mutex);
  if (!module->lines) module->lines = std::make_unique<ModuleLines>(where.modulePath, where.buildId);
  return module->lines->line(where.address);
}

QString sourceMember(const CodeLocation &where, const char *typeName) {
  if (where.modulePath.isEmpty() || where.address == 0 || !typeName) return QString();
  CachedModule *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(std::make_pair(where.modulePath, where.buildId));
    if (it == cache.end()) return QString();  // sourceLine reads it first
    module = it->second.get();
  }
  std::lock_guard<std::mutex> lock(module->mutex);
  return module->lines ? module->lines->member(where.address, typeName) : QString();
}

bool sourceLinesRead(const CodeLocation &where) {
  CachedModule *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(std::make_pair(where.modulePath, where.buildId));
    if (it == cache.end()) return false;
    module = it->second.get();
  }
  std::lock_guard<std::mutex> lock(module->mutex);
  return module->lines != nullptr;
}

CodeLocation codeLocationOf(const Threadmon__CodeLocation &where) {
  return CodeLocation{where.module_path ? QString::fromUtf8(where.module_path) : QString(),
                      where.address,
                      QByteArray(reinterpret_cast<const char *>(where.build_id.data),
                                 qsizetype(where.build_id.len))};
}

void preloadSourceLines(const Threadmon__Frame &frame) {
  size_t n = 0;
  Threadmon__CodeLocation **locations = nullptr;
  if (frame.body_case == THREADMON__FRAME__BODY_STACK) {
    n = frame.stack->n_locations;
    locations = frame.stack->locations;
  } else if (frame.body_case == THREADMON__FRAME__BODY_SYNC_OBJECT) {
    n = frame.sync_object->n_first_contention_locations;
    locations = frame.sync_object->first_contention_locations;
    if (const Threadmon__CodeLocation *made = frame.sync_object->made_at_location)
      sourceLine(codeLocationOf(*made));
  }
  for (size_t i = 0; i < n; i++)
    if (locations[i]) sourceLine(codeLocationOf(*locations[i]));
}

}  // namespace tmon
