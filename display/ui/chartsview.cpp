#include "chartsview.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "sessionmodel.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
// At most this many points per series: more than a screen can show, few
// enough that a long run redraws quickly.
constexpr size_t kMaxPoints = 1500;
constexpr size_t kMinBucket = 5;
// A CPU point covers at least this much: /proc/stat moves in 10 ms clock
// ticks, so a 50 ms window of a CPU 90% busy can read 75%.
constexpr int64_t kMinCpuSpanNs = 100'000'000;
constexpr size_t kMaxStateQueries = 100000;

// Average threads runnable (waiting for a CPU) over [t0, t1): the same
// per-thread states as the Threads view, so the two always agree. (Per-tick
// run-queue deltas undercount: a thread's schedstat sample can cover many
// ticks but lands in one.)
double runnableThreads(const tmon::SessionModel &m, const tmon::TimeRange &r) {
  if (r.length() <= 0) return 0;
  int64_t ns = 0;
  for (int i = 0; i < m.threadCount(); ++i)
    ns += m.threadStates(i, r).ns[size_t(tmon::FinalState::Runnable)];
  return double(ns) / double(r.length());
}
}  // namespace

ChartsView::ChartsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  charts_.push_back(addChart(tr("CPU utilisation (all CPUs)"), tr("busy %"),
                             stateColor(tmon::FinalState::OnCpu)));
  charts_.push_back(addChart(tr("Runnable threads (waiting for a CPU)"), tr("threads"),
                             stateColor(tmon::FinalState::Runnable).darker(130)));
  charts_.push_back(addChart(tr("Contention (contended acquisitions per second)"),
                             tr("per s"), stateColor(tmon::FinalState::BlockedMutex)));
  for (Chart &c : charts_) {
    auto *view = new QChartView(c.chart, this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(150);
    layout->addWidget(view, 1);
  }
}

ChartsView::Chart ChartsView::addChart(const QString &title, const QString &yLabel,
                                       const QColor &color) {
  Chart c;
  c.chart = new QChart;
  c.chart->setTitle(title);
  c.chart->legend()->hide();
  c.chart->setMargins(QMargins(4, 2, 4, 2));
  c.series = new QLineSeries;
  QPen pen(color);
  pen.setWidthF(1.5);
  c.series->setPen(pen);
  c.chart->addSeries(c.series);
  c.x = new QValueAxis;
  c.x->setTitleText(tr("time since start (s)"));
  c.y = new QValueAxis;
  c.y->setTitleText(yLabel);
  c.y->setLabelFormat(QStringLiteral("%.0f"));
  c.chart->addAxis(c.x, Qt::AlignBottom);
  c.chart->addAxis(c.y, Qt::AlignLeft);
  c.series->attachAxis(c.x);
  c.series->attachAxis(c.y);
  return c;
}

int ChartsView::pointCount(int i) const { return charts_[size_t(i)].series->count(); }
int ChartsView::yTickCount(int i) const { return charts_[size_t(i)].y->tickCount(); }
double ChartsView::plotHeight(int i) const {
  return charts_[size_t(i)].chart->plotArea().height();
}
double ChartsView::xTickInterval(int i) const { return charts_[size_t(i)].x->tickInterval(); }
QString ChartsView::xLabelFormat(int i) const { return charts_[size_t(i)].x->labelFormat(); }

namespace {

// Time labels at round seconds (0.2, 0.4, ... rather than the range split
// in four: 0.17, 0.35, ...), about kTimeLabels of them, at multiples of the
// step from the session start, with the digits the step needs.
void setTimeTicks(QValueAxis *x, double span) {
  constexpr double kTimeLabels = 6;
  const double raw = std::max(span, 1e-6) / kTimeLabels;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  const int digits = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(0);
  x->setTickInterval(step);
  x->setLabelFormat(QStringLiteral("%.%1f").arg(digits));
}

}  // namespace

void ChartsView::setPoints(Chart &c, const QList<QPointF> &points, double t0, double t1,
                           double yMin) {
  c.series->replace(points);
  double top = yMin;
  for (const QPointF &p : points) top = std::max(top, p.y());
  // The larger of the old and new label steps while the range changes: a
  // live window that grew from 10 ms to 10 s laid out 5,000 labels of the
  // old step first (a GUI block of 0.9 s).
  const double span = std::max(t1 - t0, 0.001);
  c.x->setTickInterval(std::max(c.x->tickInterval(), span));
  c.x->setRange(t0, t0 + span);
  setTimeTicks(c.x, span);
  if (yMin >= 100.0 && top <= 100.0) {
    c.y->setRange(0, 100);  // a utilisation: keep the full scale
    c.y->setTickCount(5);
  } else {
    c.y->setRange(0, top * 1.1);
    c.y->applyNiceNumbers();
  }
  c.niceTicks = c.y->tickCount();
  fitTicks(c);
}

// Qt elides every label of an axis whose labels overlap ("..."): on a short
// chart, every other tick is dropped (they stay round numbers) until the
// labels fit, down to the two ends.
void ChartsView::fitTicks(Chart &c) {
  constexpr double kLabelPx = 16;
  const double h = c.chart->plotArea().height();
  if (h <= 0) return;
  int ticks = c.niceTicks;
  while (ticks > 2 && (ticks - 1) * kLabelPx > h)
    ticks = (ticks - 1) % 2 == 0 ? (ticks - 1) / 2 + 1 : 2;
  if (c.y->tickCount() != ticks) c.y->setTickCount(ticks);
}

void ChartsView::resizeEvent(QResizeEvent *e) {
  ModelView::resizeEvent(e);
  for (Chart &c : charts_) fitTicks(c);
}

void ChartsView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const int w = width();
  const tmon::SessionModel *m = model();
  struct Points {
    QList<QPointF> cpu, runnable, contention;
    double t0 = 0, t1 = 0;
  };
  auto compute = [m, r, w] {
    Points out;
    const std::vector<tmon::TickPoint> ticks = m->ticks(r);
    const double origin = double(m->startNs());
    const int64_t tickNs =
        m->info().tickIntervalNs ? int64_t(m->info().tickIntervalNs) : 10000000;
    const double tickSeconds = double(tickNs) / 1e9;
    // Buckets of ticks: /proc/stat moves in 10 ms steps (and the probe may
    // read it only every ~50 ms), so single ticks flip between 0 and 100 %; a
    // bucket of at least kMinBucket ticks (and few enough points for the
    // width) shows the trend instead.
    // The runnable series asks every thread's states per point: cap the
    // points so that stays near kMaxStateQueries however many threads there are.
    const size_t threads = size_t(std::max(1, m->threadCount()));
    const size_t maxPoints = std::max<size_t>(
        20, std::min({kMaxPoints, size_t(std::max(50, w / 4)), kMaxStateQueries / threads}));
    const size_t bucket = std::max<size_t>(
        std::min<size_t>(kMinBucket, std::max<size_t>(1, ticks.size() / 20)),
        (ticks.size() + maxPoints - 1) / maxPoints);
    for (size_t i = 0; i < ticks.size(); i += bucket) {
      const size_t end = std::min(ticks.size(), i + bucket);
      double cont = 0;
      for (size_t k = i; k < end; ++k) cont += ticks[k].contentions;
      const double n = double(end - i);
      const double t = (double(ticks[end - 1].t) - origin) / 1e9;
      // The bucket spans from the tick before its first to its last.
      const int64_t from = i > 0 ? ticks[i - 1].t : std::max(r.t0, ticks[i].t - tickNs);
      const tmon::TimeRange span{from, ticks[end - 1].t};
      // The same busy share as the findings; no point where /proc/stat is unknown.
      const double busy = m->cpuBusyShare({std::min(from, span.t1 - kMinCpuSpanNs), span.t1});
      if (busy >= 0) out.cpu << QPointF(t, 100.0 * busy);
      out.runnable << QPointF(t, runnableThreads(*m, span));
      out.contention << QPointF(t, cont / n / tickSeconds);
    }
    out.t0 = (double(r.t0) - origin) / 1e9;
    out.t1 = (double(r.t1) - origin) / 1e9;
    return out;
  };
  auto present = [this](Points &&p) {
    setPoints(charts_[0], p.cpu, p.t0, p.t1, 100.0);
    setPoints(charts_[1], p.runnable, p.t0, p.t1, 1.0);
    setPoints(charts_[2], p.contention, p.t0, p.t1, 10.0);
  };
  // Every thread's states per point: off the GUI thread when large.
  rebuildWith<Points>(compute, present);
}

}  // namespace tmui
