#include "sourcelines.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace tmon {

namespace {

// Modules remembered, those without usable debug information included. The
// paths come from a capture, which may name thousands: past this, lookups
// in new modules give nothing.
constexpr size_t kMaxModules = 256;

char *debugInfoPath = nullptr;  // libdwfl's default search path
const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, nullptr, &debugInfoPath};

// One module reported offline, at libdwfl's own placement.
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
    return QStringLiteral("%1:%2").arg(QFileInfo(QString::fromUtf8(file)).fileName()).arg(lineNo);
  }

 private:
  bool report(const QString &path, const QByteArray &buildId) {
    if (path.isEmpty() || !path.startsWith(u'/')) return false;
    const QByteArray name = QFile::encodeName(path);
    // Only a regular file: a capture's path could name a FIFO or a device.
    int fd = open(name.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return false;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return false;
    }
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

  Dwfl *dwfl_ = nullptr;
  Dwfl_Module *mod_ = nullptr;
};

std::mutex cacheMutex;
std::map<std::pair<QString, QByteArray>, std::unique_ptr<ModuleLines>> cache;

}  // namespace

QString sourceLine(const CodeLocation &where) {
  if (where.modulePath.isEmpty() || where.address == 0) return QString();
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto key = std::make_pair(where.modulePath, where.buildId);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= kMaxModules) return QString();
    it = cache.emplace(key, std::make_unique<ModuleLines>(where.modulePath, where.buildId)).first;
  }
  return it->second->line(where.address);
}

}  // namespace tmon
