#include "mappingview.h"

#include <QPaintEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <map>

#include "names.h"
#include "sessionmodel.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
constexpr int kColumns = 720;    // time columns computed per strip
constexpr int kMaxUserRows = 64;  // user threads drawn; the rest counted
constexpr int kRowH = 18, kGap = 4, kLabelW = 190, kHeadH = 22, kMargin = 8;

// Time per column of each part, then each column's shares.
struct ColumnSums {
  explicit ColumnSums(const tmon::TimeRange &r, int columns)
      : r_(r), columns_(columns), width_(std::max<int64_t>(1, r.length() / columns)) {}
  void add(int64_t start, int64_t end, int part) {
    start = std::max(start, r_.t0);
    end = std::min(end, r_.t1);
    while (start < end) {
      const int c = std::min(columns_ - 1, int((start - r_.t0) / width_));
      const int64_t colEnd = c == columns_ - 1 ? r_.t1 : r_.t0 + (c + 1) * width_;
      const int64_t to = std::min(end, colEnd);
      sums_[{c, part}] += to - start;
      start = to;
    }
  }
  // LWPs and CPUs first (by index), then the others (Dispatchable, OffCpu,
  // Runnable, Stolen): what ran sits at the bottom of each column.
  std::vector<MappingData::Column> columns() const {
    std::vector<MappingData::Column> out(static_cast<size_t>(columns_));
    for (const auto &[key, ns] : sums_) {
      const int c = key.first;
      const int64_t len = c == columns_ - 1 ? r_.t1 - (r_.t0 + c * width_) : width_;
      out[size_t(c)].emplace_back(int16_t(key.second), float(double(ns) / double(len)));
    }
    for (MappingData::Column &col : out)
      std::sort(col.begin(), col.end(), [](const auto &a, const auto &b) {
        return (a.first >= 0) != (b.first >= 0) ? a.first >= 0
               : a.first >= 0                   ? a.first < b.first
                                                : a.first > b.first;
      });
    return out;
  }

 private:
  tmon::TimeRange r_;
  int columns_;
  int64_t width_;
  std::map<std::pair<int, int>, int64_t> sums_;
};

// The part that fills a column (at least kFillShare of it), else INT16_MIN.
constexpr float kFillShare = 0.9f;
int16_t fillingPart(const MappingData::Column &col) {
  for (const auto &[part, share] : col)
    if (share >= kFillShare) return part;
  return INT16_MIN;
}
}  // namespace

QColor mappingLwpColor(int i) {
  static const QRgb kLwp[] = {0x1f77b4, 0xd62728, 0x2ca02c, 0x9467bd,
                              0xff7f0e, 0x8c564b, 0xe377c2, 0x17becf};
  return QColor(kLwp[size_t(i) % (sizeof kLwp / sizeof kLwp[0])]);
}

QColor mappingCpuColor(int cpu) {
  // None close to an LWP's colour, to the state colours of runnable and
  // stolen, or to the off-CPU grey.
  static const QRgb kCpu[] = {0x00838f, 0x8e24aa, 0x827717, 0x6d4c41,
                              0x1a237e, 0xad1457, 0x33691e, 0x4e342e};
  return QColor(kCpu[size_t(cpu) % (sizeof kCpu / sizeof kCpu[0])]);
}

MappingData computeMapping(const tmon::SessionModel &m, const tmon::TimeRange &r, int columns) {
  MappingData d;
  d.range = r;
  d.cpus = m.cpuCount();
  if (r.length() <= 0) return d;
  std::map<uint32_t, int> lwpIndex;  // tid -> colour index, in order of first use
  std::vector<uint32_t> lwpTids;
  auto lwpOf = [&](uint32_t tid) {
    auto [it, added] = lwpIndex.emplace(tid, int(lwpTids.size()));
    if (added) lwpTids.push_back(tid);
    return it->second;
  };
  int shown = 0;
  for (int i = 0; i < m.userThreadCount(); ++i) {
    const tmon::UserThreadInfo &u = m.userThread(i);
    const int64_t end = u.doneNs >= 0 ? u.doneNs : m.latestNs();
    const tmon::TimeRange life{std::max(r.t0, u.createdNs), std::min(r.t1, end)};
    if (u.createdNs == INT64_MAX || life.t1 <= life.t0) continue;
    if (shown++ >= kMaxUserRows) {
      d.usersNotShown++;
      continue;
    }
    ColumnSums sums(r, columns);
    int64_t t = life.t0;
    for (const tmon::UserSpan &s : m.userThreadSpans(i, life)) {
      sums.add(t, s.start, MappingData::Dispatchable);
      sums.add(s.start, s.end, lwpOf(s.tid));
      t = s.end;
    }
    sums.add(t, life.t1, MappingData::Dispatchable);
    d.users.push_back(
        {QStringLiteral("u%1  %2").arg(u.id).arg(tmon::userThreadName(u)), sums.columns()});
  }
  for (uint32_t tid : lwpTids) {
    d.lwpNames.push_back(threadLabel(m, tid));
    const int at = m.indexOfTid(tid);
    ColumnSums sums(r, columns);
    if (at >= 0)
      for (const tmon::StateInterval &iv : m.intervals(at, r)) {
        int part = MappingData::OffCpu;
        // On a CPU the records did not name: its share shows as not running.
        if (iv.state == tmon::FinalState::OnCpu && iv.cpu >= 0) part = iv.cpu;
        if (iv.state == tmon::FinalState::Runnable) part = MappingData::Runnable;
        if (iv.state == tmon::FinalState::Stolen) part = MappingData::Stolen;
        sums.add(iv.start, iv.end, part);
      }
    d.lwps.push_back({threadLabel(m, tid), sums.columns()});
  }
  return d;
}

class MappingCanvas : public QWidget {
 public:
  explicit MappingCanvas(QWidget *parent) : QWidget(parent) {}
  void setData(MappingData d) {
    data_ = std::move(d);
    setMinimumHeight(heightFor());
    update();
  }
  const MappingData &data() const { return data_; }

 protected:
  void paintEvent(QPaintEvent *) override {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    p.setPen(palette().text().color());
    QFont bold = font();
    bold.setBold(true);
    int y = kMargin;
    p.setFont(bold);
    p.drawText(QRect(kMargin, y, width() - 2 * kMargin, kHeadH), Qt::AlignVCenter, data_.title);
    y += kHeadH;
    if (data_.users.empty()) {
      p.setFont(font());
      p.drawText(QRect(kMargin, y, width() - 2 * kMargin, kHeadH), Qt::AlignVCenter,
                 tr("No user threads: the program made no context with makecontext in this "
                    "window"));
      return;
    }
    const QRect plot(kMargin + kLabelW, 0, std::max(50, width() - 2 * kMargin - kLabelW), 0);
    auto section = [&](const QString &head, const std::vector<MappingData::Row> &rows,
                       bool userRows) {
      p.setFont(bold);
      p.drawText(QRect(kMargin, y, width(), kHeadH), Qt::AlignVCenter, head);
      y += kHeadH;
      p.setFont(font());
      for (const MappingData::Row &row : rows) {
        p.setPen(palette().text().color());
        p.drawText(QRect(kMargin, y, kLabelW - 6, kRowH), Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(row.label, Qt::ElideRight, kLabelW - 6));
        drawStrip(&p, QRect(plot.x(), y, plot.width(), kRowH), row.columns, userRows);
        y += kRowH + kGap;
      }
    };
    section(tr("User thread → LWP (pale: dispatchable)"), data_.users, true);
    if (data_.usersNotShown)
      p.drawText(QRect(kMargin, y, width(), kRowH), Qt::AlignVCenter,
                 tr("… and %1 more user threads").arg(data_.usersNotShown));
    if (data_.usersNotShown) y += kRowH;
    y += kGap;
    section(tr("LWP → CPU (amber: waiting for a CPU, grey: off the CPUs)"), data_.lwps, false);
    drawAxis(&p, QRect(plot.x(), y, plot.width(), kRowH));
    y += kRowH + kGap;
    drawLegend(&p, y);
  }

 private:
  int heightFor() const {
    const int rows = int(data_.users.size() + data_.lwps.size()) + (data_.usersNotShown ? 1 : 0);
    return 2 * kMargin + 3 * kHeadH + rows * (kRowH + kGap) + 5 * kRowH + kGap;
  }

  QColor partColor(int16_t part, bool userRows) const {
    switch (part) {
      case MappingData::Dispatchable: return dispatchableColor();
      case MappingData::Runnable: return stateColor(tmon::FinalState::Runnable);
      case MappingData::Stolen: return stateColor(tmon::FinalState::Stolen);
      case MappingData::OffCpu: return QColor(0xd0d0d0);
      default: return userRows ? mappingLwpColor(part) : mappingCpuColor(part);
    }
  }

  QString partText(int16_t part, bool userRows) const {
    if (part < 0) return QString();
    if (!userRows) return tr("CPU %1").arg(part);
    return size_t(part) < data_.lwpNames.size() ? data_.lwpNames[size_t(part)] : QString();
  }

  // Each column a stacked bar of its shares (a share is its height); then
  // runs of columns one part fills, labelled when wide enough.
  void drawStrip(QPainter *p, const QRect &box, const std::vector<MappingData::Column> &cols,
                 bool userRows) const {
    const int n = int(cols.size());
    if (!n) return;
    p->fillRect(box, QColor(0xf4f4f4));
    auto xOf = [&](int c) { return box.x() + int(int64_t(box.width()) * c / n); };
    for (int c = 0; c < n; ++c) {
      const int x0 = xOf(c), w = std::max(1, xOf(c + 1) - x0);
      double bottom = box.bottom() + 1;
      for (const auto &[part, share] : cols[size_t(c)]) {
        const double top = bottom - double(share) * box.height();
        p->fillRect(QRectF(x0, top, w, bottom - top), partColor(part, userRows));
        bottom = top;
      }
    }
    for (int a = 0; a < n;) {
      const int16_t part = fillingPart(cols[size_t(a)]);
      int b = a + 1;
      while (b < n && fillingPart(cols[size_t(b)]) == part) ++b;
      const QString text = part == INT16_MIN ? QString() : partText(part, userRows);
      const QRect seg(xOf(a), box.y(), xOf(b) - xOf(a), box.height());
      if (!text.isEmpty() && p->fontMetrics().horizontalAdvance(text) + 6 < seg.width()) {
        p->setPen(partColor(part, userRows).lightness() < 150 ? Qt::white : Qt::black);
        p->drawText(seg, Qt::AlignCenter, text);
      }
      a = b;
    }
  }

  void drawAxis(QPainter *p, const QRect &box) const {
    p->setPen(palette().text().color());
    p->drawLine(box.left(), box.top(), box.right(), box.top());
    const double secs = double(data_.range.length()) / 1e9;
    for (int k = 0; k <= 4; ++k) {
      const int x = box.left() + box.width() * k / 4;
      p->drawLine(x, box.top(), x, box.top() + 4);
      const QString t = formatNs(uint64_t(secs * 1e9 * k / 4));
      const int w = p->fontMetrics().horizontalAdvance(t);
      p->drawText(std::clamp(x - w / 2, box.left(), box.right() - w),
                  box.top() + 4 + p->fontMetrics().ascent(), t);
    }
  }

  // One line per section: what the user-thread strips' colours mean, then
  // the LWP strips'.
  void drawLegend(QPainter *p, int y) const {
    int x = kMargin;
    auto item = [&](const QColor &c, const QString &text) {
      const int w = p->fontMetrics().horizontalAdvance(text) + 22;
      if (x + w > width() - kMargin) {
        x = kMargin + kLabelW;
        y += kRowH;
      }
      if (c.isValid()) p->fillRect(QRect(x, y + 4, 12, 10), c);
      p->setPen(palette().text().color());
      p->drawText(QRect(x + (c.isValid() ? 16 : 0), y, w, kRowH), Qt::AlignVCenter, text);
      x += w + 8;
    };
    auto line = [&](const QString &head) {
      x = kMargin;
      item(QColor(), head);
      x = kMargin + kLabelW;
    };
    line(tr("User threads:"));
    for (size_t i = 0; i < data_.lwpNames.size(); ++i)
      item(mappingLwpColor(int(i)), tr("on %1").arg(data_.lwpNames[i]));
    item(dispatchableColor(), dispatchableLabel());
    y += kRowH;
    line(tr("LWPs:"));
    for (int c = 0; c < data_.cpus; ++c) item(mappingCpuColor(c), tr("on CPU %1").arg(c));
    item(stateColor(tmon::FinalState::Runnable), tr("waiting for a CPU"));
    item(stateColor(tmon::FinalState::Stolen), stateLabel(tmon::FinalState::Stolen));
    item(QColor(0xd0d0d0), tr("off the CPUs (blocked, sleeping)"));
  }

  MappingData data_;
};

MappingView::MappingView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), canvas_(new MappingCanvas(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto *scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(canvas_);
  layout->addWidget(scroll);
}

int MappingView::rowCount() const {
  return int(canvas_->data().users.size() + canvas_->data().lwps.size());
}

void MappingView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString title = tr("Mapping: user thread → LWP → CPU, %1").arg(window()->describe());
  rebuildWith<MappingData>(
      [m = model(), r] { return computeMapping(*m, r, kColumns); },
      [this, title](MappingData &&d) {
        d.title = title;
        canvas_->setData(std::move(d));
      });
}

}  // namespace tmui
