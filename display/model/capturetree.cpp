#include "capturetree.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <algorithm>
#include <map>

namespace tmon {

namespace {

constexpr qint64 kMaxIndexBytes = 256ll << 20;  // 2 million processes' lines

// "key=value" words; name= runs to the end of the line.
struct Line {
  QString kind;
  std::map<QString, QString> fields;
};

bool parseLine(const QString &text, Line *out) {
  const QStringList words = text.split(' ');
  if (words.size() < 3 || words[0] != "life" || words[1] != "1") return false;
  out->kind = words[2];
  for (int i = 3; i < words.size(); i++) {
    const int eq = words[i].indexOf('=');
    if (eq <= 0) return false;
    const QString key = words[i].left(eq);
    if (key == "name") {
      out->fields[key] = words.mid(i).join(' ').mid(eq + 1);
      break;
    }
    out->fields[key] = words[i].mid(eq + 1);
  }
  return out->fields.count("pid") && out->fields.count("t");
}

uint64_t u64(const Line &l, const char *key) {
  auto it = l.fields.find(QLatin1String(key));
  return it == l.fields.end() ? 0 : it->second.toULongLong();
}

}  // namespace

bool CaptureTree::isTree(const QString &path) {
  const QFileInfo info(path);
  return info.isDir() && QFileInfo(QDir(path).filePath("lives")).isFile();
}

QString CaptureTree::mainCapture(const QString &path) {
  CaptureTree tree;
  if (!isTree(path)) return path;
  return tree.open(path) ? tree.captureFor(tree.rootPid()) : QString();
}

bool CaptureTree::open(const QString &path) {
  processes_.clear();
  skipped_ = 0;
  if (!isTree(path)) {
    error_ = QStringLiteral("not a process tree's capture (a directory with its index, lives)");
    return false;
  }
  const QDir dir(path);
  QFile f(dir.filePath("lives"));
  if (!f.open(QIODevice::ReadOnly)) {
    error_ = QStringLiteral("cannot read its index: %1").arg(f.errorString());
    return false;
  }
  if (f.size() > kMaxIndexBytes) {
    error_ = QStringLiteral("its index is %1 bytes, more than a tree can write").arg(f.size());
    return false;
  }
  std::map<uint32_t, TreeProcess> byPid;
  std::vector<uint32_t> order;
  const QList<QByteArray> lines = f.readAll().split('\n');
  for (const QByteArray &raw : lines) {
    if (raw.isEmpty()) continue;
    Line l;
    if (!parseLine(QString::fromUtf8(raw), &l) || u64(l, "pid") == 0 ||
        u64(l, "pid") > 0xffffffffu) {
      skipped_++;
      continue;
    }
    const uint32_t pid = uint32_t(u64(l, "pid"));
    auto [it, fresh] = byPid.try_emplace(pid);
    TreeProcess &p = it->second;
    if (fresh) {
      p.pid = pid;
      order.push_back(pid);
    }
    const uint64_t t = u64(l, "t");
    const uint64_t since = u64(l, "since");
    const uint64_t began = since ? since : t;
    if (l.kind != "end" || since) p.startNs = p.startNs ? std::min(p.startNs, began) : began;
    if (!p.ppid) p.ppid = uint32_t(u64(l, "ppid"));
    if (l.fields.count("name")) p.name = l.fields["name"];
    if (l.kind == "start" && l.fields.count("capture")) {
      const QString name = l.fields["capture"];
      // Only a file inside the tree: the index names, never points elsewhere.
      if (!name.contains('/') && name != ".." && name != ".")
        p.captures << dir.absoluteFilePath(name);
    } else if (l.kind == "end") {
      const QString how = l.fields["how"];
      if (how == "exec") continue;               // an image ended; the process goes on
      if (p.ended && how == "signal") continue;  // a probe said it first
      p.ended = true;
      p.endNs = t;
      p.how = how;
      p.status = l.fields["status"].toInt();
      if (l.fields.count("utime")) {
        p.utimeNs = u64(l, "utime");
        p.stimeNs = u64(l, "stime");
      }
    }
  }
  if (order.empty()) {
    error_ = QStringLiteral("its index names no process");
    return false;
  }
  // The root: the first process whose parent is not in the tree.
  uint32_t root = order.front();
  for (uint32_t pid : order)
    if (!byPid.count(byPid[pid].ppid)) {
      root = pid;
      break;
    }
  std::map<uint32_t, std::vector<uint32_t>> children;
  for (uint32_t pid : order)
    if (pid != root) {
      const uint32_t parent = byPid.count(byPid[pid].ppid) ? byPid[pid].ppid : root;
      children[parent].push_back(pid);
    }
  for (auto &[parent, kids] : children)
    std::stable_sort(kids.begin(), kids.end(),
                     [&](uint32_t a, uint32_t b) { return byPid[a].startNs < byPid[b].startNs; });
  // Depth first, iteratively (a tree can be deep); a pid seen twice (a
  // cycle in a damaged index) is not visited again.
  std::vector<std::pair<uint32_t, int>> stack{{root, 0}};
  std::map<uint32_t, bool> seen;
  while (!stack.empty()) {
    auto [pid, depth] = stack.back();
    stack.pop_back();
    if (seen[pid]) continue;
    seen[pid] = true;
    TreeProcess p = byPid[pid];
    p.depth = depth;
    processes_.push_back(p);
    const auto &kids = children[pid];
    for (auto k = kids.rbegin(); k != kids.rend(); ++k) stack.push_back({*k, depth + 1});
  }
  for (uint32_t pid : order)  // orphans of a damaged index: listed under the root
    if (!seen[pid]) {
      TreeProcess p = byPid[pid];
      p.depth = 1;
      processes_.push_back(p);
    }
  error_.clear();
  return true;
}

const TreeProcess *CaptureTree::find(uint32_t pid) const {
  for (const TreeProcess &p : processes_)
    if (p.pid == pid) return &p;
  return nullptr;
}

QString CaptureTree::captureFor(uint32_t pid) const {
  const TreeProcess *p = find(pid);
  for (int i = p ? int(p->captures.size()) - 1 : -1; i >= 0; i--)
    if (QFileInfo(p->captures[i]).isFile()) return p->captures[i];
  return QString();
}

}  // namespace tmon
