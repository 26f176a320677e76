#include "modeltypes.h"

#include <QRegularExpression>
#include <algorithm>

#include "framecheck.h"
#include "symbolname.h"
#include "threadmon.pb-c.h"
#include "wirestate.h"

namespace tmon {

namespace {

struct StateDef {
  const char *key, *shortLabel, *label;
  uint32_t rgb;
  int wire, kind, column;
};

const StateDef kStates[] = {
#define TM_FINAL_STATE(name, key, shortLabel, label, rgb, wire, kind, column) \
  {key, shortLabel, label, rgb, wire, kind, column},
#include "states.def"
#undef TM_FINAL_STATE
};
static_assert(sizeof kStates / sizeof kStates[0] == size_t(kFinalStateCount), "one entry per state");

const StateDef *def(FinalState s) {
  int i = int(s);
  return i >= 0 && i < kFinalStateCount ? &kStates[i] : nullptr;
}

}  // namespace

void addDetailLoss(DetailLosses *v, const DetailLoss &d) {
  DetailLoss *last = nullptr;
  for (auto it = v->rbegin(); it != v->rend() && !last; ++it)
    if (it->what == d.what) last = &*it;
  const bool full = v->size() >= limits::kMaxDetailLosses;
  if (last && last->toNs >= 0 && (last->toNs >= d.fromNs || full)) {
    last->toNs = d.toNs < 0 ? -1 : std::max(last->toNs, d.toNs);
    last->tickNs = std::max(last->tickNs, d.tickNs);
    return;
  }
  if (!full) v->push_back(d);
}

int64_t detailLostNs(const DetailLosses &v, int64_t t0, int64_t t1) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const DetailLoss &d : v) {
    if (!d.shown()) continue;
    int64_t a = std::max(d.fromNs, t0), b = d.toNs < 0 ? t1 : std::min(d.toNs, t1);
    if (a < b) spans.emplace_back(a, b);
  }
  std::sort(spans.begin(), spans.end());
  int64_t sum = 0, end = INT64_MIN;
  for (const auto &[a, b] : spans) {
    if (b <= end) continue;
    sum += b - std::max(a, end);
    end = b;
  }
  return sum;
}

const char *finalStateKey(FinalState s) { return def(s) ? def(s)->key : "unknown"; }
const char *finalStateShort(FinalState s) { return def(s) ? def(s)->shortLabel : "?"; }
const char *finalStateLabel(FinalState s) { return def(s) ? def(s)->label : ""; }
uint32_t finalStateRgb(FinalState s) { return def(s) ? def(s)->rgb : 0xffffff; }

FinalState finalStateAtColumn(int col) {
  for (int i = 0; i < kFinalStateCount; i++)
    if (kStates[i].column == col) return FinalState(i);
  return FinalState::OnCpu;
}

bool finalStateOfWire(int wireState, FinalState *out) {
  const int code = finalCodeOfWire(wireState);
  if (code < 0) return false;
  *out = FinalState(code);
  return true;
}

bool isBlockedState(FinalState s) { return isBlockedCode(int(s)); }

bool blockedStateOfKind(int syncKind, FinalState *out) {
  for (int i = 0; syncKind && i < kFinalStateCount; i++)
    if (kStates[i].kind == syncKind) {
      *out = FinalState(i);
      return true;
    }
  return false;
}

int blockedWireOfKind(int syncKind) {
  for (int i = 0; syncKind && i < kFinalStateCount; i++)
    if (kStates[i].kind == syncKind) return kStates[i].wire;
  return 0;
}

namespace {

struct KindDef {
  int number;
  const char *text;
  bool held;
};

const KindDef kKinds[] = {
#define TM_SYNC_KIND(name, number, text, held) {number, text, held != 0},
#include "states.def"
};

const KindDef *kindDef(int kind) {
  for (const KindDef &k : kKinds)
    if (k.number == kind) return &k;
  return nullptr;
}

}  // namespace

QString syncKindName(int kind) {
  const KindDef *k = kindDef(kind);
  return QString::fromLatin1(k ? k->text : "unknown");
}

bool isHeldKind(int kind) {
  const KindDef *k = kindDef(kind);
  return k && k->held;
}

QString userThreadName(const UserThreadInfo &u) {
  if (!u.name.isEmpty()) return u.name;
  // "module!function+0x10 (file:line)"; a C++ function demangled, e.g.
  // "void ns::entry<T, main::{lambda()#1}>(transfer_t)": its unqualified
  // name without return type, template arguments and parameters ("entry").
  QString f = u.function.section('!', 1);
  QString out;
  int depth = 0;  // inside <...> or (...)
  for (QChar c : f) {
    if (c == '<' || c == '(') {
      if (c == '(' && depth == 0) break;  // the parameters: done
      depth++;
    } else if (c == '>' || c == ')') {
      depth--;
    } else if (depth == 0) {
      if (c == '+' && !out.isEmpty()) break;  // the offset
      if (c == ' ') out.clear();              // a return type before the name
      else out += c;
    }
  }
  const qsizetype scope = out.lastIndexOf(QStringLiteral("::"));
  return scope < 0 ? out : out.mid(scope + 2);
}

QString sourceName(int source) {
  static const char *const names[] = {"unspecified",   "interpose",     "proc_task",
                                      "proc_stat",     "perf_switch",   "perf_software",
                                      "perf_hardware", "unwind",        "futex_sampling",
                                      "user_context",  "attach"};
  if (source < 0 || source >= int(sizeof names / sizeof names[0]))
    return QStringLiteral("source_%1").arg(source);
  return QString::fromLatin1(names[source]);
}

bool SessionInfo::hasSource(int source) const {
  return std::find(sources.begin(), sources.end(), source) != sources.end();
}

bool SessionInfo::acquisitionsKnown() const {
  return sources.empty() || hasSource(THREADMON__SOURCE__SOURCE_INTERPOSE);
}

QString SyncObjectInfo::symbolText() const {
  if (symbol.isEmpty()) return QString();
  QString s = symbol;
  if (!symbolMember.isEmpty())
    s += symbolMember;
  else if (symbolOffset)
    s += QStringLiteral("+0x%1").arg(symbolOffset, 0, 16);
  if (!symbolFile.isEmpty()) s += QStringLiteral(" (%1)").arg(symbolFile);
  return s;
}

QString SyncObjectInfo::callSite() const {
  return firstContentionStack.isEmpty() ? QString() : firstContentionStack.first();
}

namespace {

// A site as a name: a stripped module's function has no name, so its
// offset tells one site from another ("mariadbd+0xc1f385", which addr2line
// finds once debug symbols are installed).
QString siteText(const QString &frame) {
  const SiteName n = siteName(frame);
  if (!n.function.isEmpty() || n.line > 0) return n.text();
  const FrameParts p = splitFrame(frame);
  return p.offset.isEmpty() ? n.text() : QStringLiteral("%1+%2").arg(n.module, p.offset);
}

}  // namespace

SyncObjectInfo::NamedBy SyncObjectInfo::namedBy() const {
  if (!symbol.isEmpty()) return NamedBy::Symbol;
  if (!madeAt.isEmpty()) return NamedBy::MadeAt;
  if (!callSite().isEmpty()) return NamedBy::FirstUse;
  return NamedBy::Address;
}

QString SyncObjectInfo::name() const {
  switch (namedBy()) {
    case NamedBy::Symbol:
      return symbolText();
    case NamedBy::MadeAt:
      return (madeMember.isEmpty() ? QString() : madeMember + u' ') +
             QStringLiteral("made in %1").arg(siteText(madeAt));
    case NamedBy::FirstUse:
      return QStringLiteral("first used in %1").arg(siteText(callSite()));
    case NamedBy::Address:
      break;
  }
  return QStringLiteral("0x%1").arg(address, 0, 16);
}

namespace {

// "make_table.constprop.0" -> "make_table": the suffixes GCC gives the
// copies it makes of a function (constant-propagated, split, cold part),
// which the source never names.
QString sourceFunction(const QString &function) {
  static const QRegularExpression clone(
      QStringLiteral("(\\.(constprop|isra|part|cold|lto_priv|localalias)(\\.[0-9]+)?)+$"));
  QString f = function;
  return f.remove(clone);
}

}  // namespace

SiteName siteName(const QString &frame) {
  SiteName n;
  const FrameParts p = splitFrame(frame);
  n.function = sourceFunction(p.function);
  n.module = p.module.section(u'/', -1);
  // "futex.rs:35 in main.rs:41": library code inlined at the program's line.
  const QString own = p.location.section(QLatin1String(" in "), -1);
  const qsizetype colon = own.lastIndexOf(u':');
  bool ok = false;
  const int line = colon > 0 ? own.mid(colon + 1).toInt(&ok) : 0;
  if (ok && line > 0) {
    n.file = own.left(colon);
    n.line = line;
  }
  return n;
}

QString SiteName::text() const {
  const QString fn = function.isEmpty() ? module : function;
  if (line > 0) return QStringLiteral("%1 (%2:%3)").arg(fn, file).arg(line);
  if (!function.isEmpty() && !module.isEmpty())
    return QStringLiteral("%1 in %2").arg(function, module);
  return fn;
}

WaitPair &waitCell(WaitCells *cells, uint32_t waiter, uint32_t holder) {
  WaitPair &c = (*cells)[uint64_t(waiter) << 32 | holder];
  c.waiter = waiter;
  c.holder = holder;
  return c;
}

std::vector<WaitPair> sortedWaitPairs(const WaitCells &cells) {
  std::vector<WaitPair> out;
  for (const auto &c : cells)
    if (c.second.count || c.second.waitNs) out.push_back(c.second);
  sortWaitPairs(&out);
  return out;
}

void sortWaitPairs(std::vector<WaitPair> *pairs) {
  std::sort(pairs->begin(), pairs->end(), [](const WaitPair &a, const WaitPair &b) {
    if (a.waitNs != b.waitNs) return a.waitNs > b.waitNs;
    if (a.count != b.count) return a.count > b.count;
    return a.waiter != b.waiter ? a.waiter < b.waiter : a.holder < b.holder;
  });
}

namespace {
uint64_t between(CounterMerge merge, uint64_t from, uint64_t to) {
  if (merge == CounterMerge::Max) return to;
  return to > from ? to - from : 0;
}
}  // namespace

LwpDelta lwpBetween(const LwpDelta &from, const LwpDelta &to) {
  LwpDelta d;
#define TM_LWP_BETWEEN(field, number, index, member, ...) \
  d.member = between(CounterMerge::Sum, from.member, to.member);
#define TM_LWP_COUNTER TM_LWP_BETWEEN
#define TM_LWP_EXTRA TM_LWP_BETWEEN
#include "counters.def"
#undef TM_LWP_BETWEEN
  return d;
}

SyncDelta syncBetween(const SyncDelta &from, const SyncDelta &to) {
  SyncDelta d;
#define TM_SYNC_COUNTER(field, number, index, member, merge, ...) \
  d.member = between(CounterMerge::merge, from.member, to.member);
#include "counters.def"
  d.maxWaitInWindow = to.maxWaitNs > from.maxWaitNs;
  return d;
}

}  // namespace tmon
