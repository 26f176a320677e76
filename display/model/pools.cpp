#include "pools.h"

#include <QHash>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "sessionmodel.h"

namespace tmon {

double PoolItem::share(size_t category) const {
  double t = total;
  if (t <= 0)
    for (double v : values) t += v;
  return t > 0 && category < values.size() ? values[category] / t : 0.0;
}

QString Pool::label() const {
  if (!pattern.isEmpty()) return pattern;
  return routine.isEmpty() ? QStringLiteral("(unnamed)") : routine;
}

QString Pool::routineName() const {
  QString r = routine.section(QLatin1Char('!'), -1);
  const qsizetype plus = r.lastIndexOf(QLatin1Char('+'));
  return plus > 0 ? r.left(plus) : r;
}

QString namePattern(const QString &name) {
  QString out;
  out.reserve(name.size());
  bool inDigits = false;
  for (QChar c : name) {
    if (c.isDigit()) {
      if (!inDigits) out += QLatin1Char('#');
      inDigits = true;
    } else {
      out += c;
      inDigits = false;
    }
  }
  return out;
}

QString poolKey(const QString &routine, const QString &name) {
  return routine + QLatin1Char('\n') + namePattern(name);
}

namespace {

bool hasTime(const PoolItem &it) {
  if (it.total > 0) return true;
  for (double v : it.values)
    if (v > 0) return true;
  return false;
}

double median(std::vector<double> v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + qsizetype(mid), v.end());
  return v[mid];
}

PoolStats stats(const std::vector<PoolItem> &items, const std::vector<int> &which, size_t cats) {
  PoolStats st;
  st.values.assign(cats, 0.0);
  st.low.assign(cats, which.empty() ? 0.0 : 1.0);
  st.high.assign(cats, 0.0);
  for (int m : which) {
    const PoolItem &it = items[size_t(m)];
    double t = 0;
    for (size_t c = 0; c < cats && c < it.values.size(); ++c) {
      st.values[c] += it.values[c];
      t += it.values[c];
      st.low[c] = std::min(st.low[c], it.share(c));
      st.high[c] = std::max(st.high[c], it.share(c));
    }
    st.total += it.total > 0 ? it.total : t;
  }
  return st;
}

// Splits the outliers off and sums both parts.
void settle(Pool &p, const std::vector<PoolItem> &items) {
  const size_t cats = items[size_t(p.members.front())].values.size();
  if (int(p.members.size()) >= kMinForOutliers) {
    std::vector<double> mid(cats);
    for (size_t c = 0; c < cats; ++c) {
      std::vector<double> shares;
      shares.reserve(p.members.size());
      for (int m : p.members) shares.push_back(items[size_t(m)].share(c));
      mid[c] = median(std::move(shares));
    }
    std::vector<std::pair<double, int>> far;
    for (int m : p.members) {
      double d = 0;
      for (size_t c = 0; c < cats; ++c) d = std::max(d, std::abs(items[size_t(m)].share(c) - mid[c]));
      if (d > kOutlierDistance) far.push_back({d, m});
    }
    if (far.size() * 3 < p.members.size()) {
      std::stable_sort(far.begin(), far.end(),
                       [](const auto &a, const auto &b) { return a.first > b.first; });
      QSet<int> out;
      for (const auto &f : far) {
        p.outliers.push_back(f.second);
        out.insert(f.second);
      }
      p.members.erase(std::remove_if(p.members.begin(), p.members.end(),
                                     [&](int m) { return out.contains(m); }),
                      p.members.end());
    }
  }
  p.typical = stats(items, p.members, cats);
  p.outlying = stats(items, p.outliers, cats);
}

}  // namespace

std::vector<Pool> poolItems(const std::vector<PoolItem> &items) {
  std::vector<Pool> pools;
  QHash<QString, int> byKey;
  for (size_t i = 0; i < items.size(); ++i) {
    const PoolItem &it = items[i];
    if (!hasTime(it)) continue;
    const QString pattern = it.alone ? it.name : namePattern(it.name);
    QString key = it.alone ? it.routine + QLatin1Char('\n') + pattern : poolKey(it.routine, it.name);
    if (it.alone) key += QLatin1Char('\n') + QString::number(it.id);  // a pool of its own
    auto found = byKey.constFind(key);
    int at;
    if (found == byKey.constEnd()) {
      at = int(pools.size());
      byKey.insert(key, at);
      Pool p;
      p.routine = it.routine;
      p.pattern = pattern;
      pools.push_back(std::move(p));
    } else {
      at = *found;
    }
    pools[size_t(at)].members.push_back(int(i));
  }
  for (Pool &p : pools) settle(p, items);
  std::stable_sort(pools.begin(), pools.end(), [](const Pool &a, const Pool &b) {
    if (a.size() != b.size()) return a.size() > b.size();
    return a.label() < b.label();
  });
  return pools;
}

std::vector<int> poolOfItems(const std::vector<Pool> &pools, size_t itemCount) {
  std::vector<int> of(itemCount, -1);
  for (size_t p = 0; p < pools.size(); ++p) {
    for (int m : pools[p].members) of[size_t(m)] = int(p);
    for (int m : pools[p].outliers) of[size_t(m)] = int(p);
  }
  return of;
}

std::vector<PoolItem> threadPoolItems(const SessionModel &m, const TimeRange &r) {
  std::vector<PoolItem> items;
  for (int i = 0; i < m.threadCount(); ++i) {
    const StateTimes st = m.threadStatesAttributed(i, r);
    if (st.lifetimeNs <= 0) continue;
    const ThreadInfo &t = m.thread(i);
    PoolItem it;
    it.index = i;
    it.id = t.tid;
    it.name = t.name;
    it.routine = t.startRoutine;
    it.alone = t.main || t.probe;
    it.values.assign(st.ns.begin(), st.ns.end());
    it.total = double(st.lifetimeNs);
    items.push_back(std::move(it));
  }
  return items;
}

ItemFilter::ItemFilter(const QString &text, const QStringList &categoryLabels)
    : text_(text.trimmed()) {
  if (text_.isEmpty()) return;
  const QRegularExpression nonWord(QStringLiteral("[^\\w]+"));
  for (int c = 0; c < categoryLabels.size(); ++c) {
    const QStringList words = categoryLabels[c].split(nonWord, Qt::SkipEmptyParts);
    if (categoryLabels[c].compare(text_, Qt::CaseInsensitive) == 0 ||
        words.contains(text_, Qt::CaseInsensitive))
      categories_.push_back(size_t(c));
  }
}

bool ItemFilter::matches(const PoolItem &item) const {
  if (text_.isEmpty()) return true;
  if (item.name.contains(text_, Qt::CaseInsensitive) ||
      item.routine.contains(text_, Qt::CaseInsensitive) || QString::number(item.id).contains(text_))
    return true;
  for (size_t c : categories_)
    if (item.share(c) >= 0.25) return true;
  return false;
}

std::vector<PoolRow> poolRows(const std::vector<PoolItem> &items, const std::vector<Pool> &pools,
                              const QSet<QString> &expanded, int sortCategory) {
  // Units in order: a grouped pool, or one member of a pool too small to group.
  struct Unit {
    int pool;
    int item;  // -1 for a grouped pool
    double share;
    int first;  // creation order: the lowest item position
  };
  std::vector<Unit> units;
  for (size_t p = 0; p < pools.size(); ++p) {
    const Pool &pool = pools[p];
    if (pool.grouped()) {
      int first = INT32_MAX;
      for (int m : pool.members) first = std::min(first, m);
      for (int m : pool.outliers) first = std::min(first, m);
      units.push_back({int(p), -1, sortCategory >= 0 ? pool.share(size_t(sortCategory)) : 0.0, first});
      continue;
    }
    for (const std::vector<int> *list : {&pool.members, &pool.outliers})
      for (int m : *list)
        units.push_back({int(p), m, sortCategory >= 0 ? items[size_t(m)].share(size_t(sortCategory)) : 0.0, m});
  }
  auto bySort = [&](auto &v, auto shareOf, auto firstOf) {
    std::stable_sort(v.begin(), v.end(), [&](const auto &a, const auto &b) {
      if (sortCategory >= 0 && shareOf(a) != shareOf(b)) return shareOf(a) > shareOf(b);
      return firstOf(a) < firstOf(b);
    });
  };
  bySort(units, [](const Unit &u) { return u.share; }, [](const Unit &u) { return u.first; });

  std::vector<PoolRow> rows;
  auto itemShare = [&](int m) { return sortCategory >= 0 ? items[size_t(m)].share(size_t(sortCategory)) : 0.0; };
  for (const Unit &u : units) {
    if (u.item >= 0) {
      rows.push_back({PoolRow::Kind::Single, u.pool, u.item});
      continue;
    }
    const Pool &pool = pools[size_t(u.pool)];
    rows.push_back({PoolRow::Kind::Pool, u.pool, -1});
    const bool many = pool.outliers.size() > kOutliersListed;
    if (many) rows.push_back({PoolRow::Kind::Outliers, u.pool, -1});
    if (!many || expanded.contains(pool.outliersKey()))
      for (int m : pool.outliers) rows.push_back({PoolRow::Kind::Outlier, u.pool, m});
    if (!expanded.contains(pool.key())) continue;
    std::vector<int> members = pool.members;
    bySort(members, itemShare, [](int m) { return m; });
    for (int m : members) rows.push_back({PoolRow::Kind::Member, u.pool, m});
  }
  return rows;
}

PoolLayout poolLayout(const std::vector<PoolItem> &all, const QString &filter,
                      const QStringList &categoryLabels) {
  PoolLayout l;
  const ItemFilter keep(filter, categoryLabels);
  for (size_t i = 0; i < all.size(); ++i)
    if (keep.matches(all[i])) {
      l.items.push_back(all[i]);
      l.source.push_back(i);
    }
  l.pools = poolItems(l.items);
  for (const Pool &p : l.pools) {
    l.shown += p.size();
    if (p.grouped()) ++l.grouped;
  }
  return l;
}

QSet<QString> unfoldedPools(const PoolLayout &layout, const QSet<QString> &toggled) {
  const bool open = layout.items.size() <= kUnfoldedUpTo;
  QSet<QString> unfolded;
  for (const Pool &p : layout.pools) {
    if (!p.grouped()) continue;
    for (const QString &key : {p.key(), p.outliersKey()})
      if (open != toggled.contains(key)) unfolded.insert(key);
  }
  return unfolded;
}

QHash<QString, int> poolSizes(const SessionModel &m) {
  QHash<QString, int> poolSize;
  for (int i = 0; i < m.threadCount(); ++i) {
    const ThreadInfo &t = m.thread(i);
    if (!t.main && !t.probe) poolSize[poolKey(t.startRoutine, t.name)] += 1;
  }
  return poolSize;
}

PoolPairs poolPairs(const SessionModel &m, const std::vector<WaitPair> &pairs) {
  const QHash<QString, int> poolSize = poolSizes(m);
  PoolPairs out;
  QHash<QString, uint32_t> partyOfKey;
  std::unordered_map<uint32_t, uint32_t> partyOfTid;
  auto party = [&](uint32_t tid) -> uint32_t {
    if (tid == 0) return 0;  // unknown stays apart: no pool stands for it
    auto found = partyOfTid.find(tid);
    if (found != partyOfTid.end()) return found->second;
    const int i = m.indexOfTid(tid);
    const ThreadInfo *t = i >= 0 ? &m.thread(i) : nullptr;
    QString key, name;
    if (t && !t->main && !t->probe) {
      key = poolKey(t->startRoutine, t->name);
      const int size = poolSize.value(key);
      if (size >= Pool::kMinGrouped) {
        Pool p;
        p.routine = t->startRoutine;
        p.pattern = namePattern(t->name);
        name = QStringLiteral("%1 (%2 threads)").arg(p.label()).arg(size);
      } else {
        key.clear();
      }
    }
    if (key.isEmpty()) {
      key = QStringLiteral("\n\n%1").arg(tid);  // a party of its own
      name = t && !t->name.isEmpty() ? QStringLiteral("%1 (%2)").arg(t->name).arg(tid)
                                     : QStringLiteral("tid %1").arg(tid);
    } else if (!partyOfKey.contains(key)) {
      ++out.pooled;
    }
    auto known = partyOfKey.constFind(key);
    uint32_t id;
    if (known != partyOfKey.constEnd()) {
      id = *known;
    } else {
      out.parties << name;
      id = uint32_t(out.parties.size());
      partyOfKey.insert(key, id);
    }
    partyOfTid[tid] = id;
    return id;
  };
  std::map<std::pair<uint32_t, uint32_t>, WaitPair> summed;
  for (const WaitPair &p : pairs) {
    const uint32_t w = party(p.waiter), h = party(p.holder);
    WaitPair &s = summed[{w, h}];
    s.waiter = w;
    s.holder = h;
    s.count += p.count;
    s.waitNs += p.waitNs;
  }
  for (const auto &kv : summed) out.pairs.push_back(kv.second);
  return out;
}

}  // namespace tmon
