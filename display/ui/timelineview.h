// Timeline: the state strips (TimelineCanvas) with their legend, the pools'
// filter and sort (as in the Threads view) and a line saying how to zoom,
// pan, select and unfold. Threads are pooled as the Threads view pools
// them (pools.h over the window); the pools' per-column state mixes are
// computed on a worker thread in large sessions, again when the span shown
// or the strips' width changes.
#ifndef THREADMON_UI_TIMELINEVIEW_H
#define THREADMON_UI_TIMELINEVIEW_H

#include <QSet>
#include <memory>

#include "modelview.h"
#include "pools.h"
#include "timelinecanvas.h"

namespace tmui {

class PoolControls;

class TimelineView : public ModelView {
  Q_OBJECT
 public:
  TimelineView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  // Threads shown, in pools or not.
  int rowCount() const override { return shown_; }
  TimelineCanvas *canvas() const { return canvas_; }
  // The filter box and the sort (-1: creation order), for tests.
  void setFilter(const QString &text);
  void setSortCategory(int category);
  // Folds or unfolds the aggregate (TimelineRow::key) as a click does.
  void toggle(const QString &key);
  Ahead ahead() const override;

 protected:
  void rebuild() override;

 private:
  // What a computation is for: the window pooled, the span and width mixed.
  struct Span {
    tmon::TimeRange range;
    int width = 0;
    bool operator==(const Span &o) const {
      return range.t0 == o.range.t0 && range.t1 == o.range.t1 && width == o.width;
    }
  };
  struct Computed {
    std::shared_ptr<const tmon::PoolLayout> pools;
    std::shared_ptr<const TimelineCanvas::Mixes> mixes;
  };
  Span span() const;
  // What a rebuild computes for: the window pooled (filtered), the span mixed.
  struct Inputs {
    tmon::TimeRange window;
    Span span;
    QString filter;
    bool operator==(const Inputs &o) const {
      return window.t0 == o.window.t0 && window.t1 == o.window.t1 && span == o.span &&
             filter == o.filter;
    }
  };
  static Computed compute(const tmon::SessionModel &m, const Inputs &in);
  static std::shared_ptr<const TimelineCanvas::Mixes> mix(const tmon::SessionModel &m,
                                                          const tmon::PoolLayout &pools,
                                                          const Span &s);
  // New mixes for the span now shown (a zoom, a pan, a resize).
  void remix();
  // The rows again from the last pools (a click, the sort).
  void relayout();

  TimelineCanvas *canvas_;
  PoolControls *controls_;
  std::shared_ptr<const tmon::PoolLayout> pools_;
  QSet<QString> toggled_;
  Span mixedFor_;  // the span of the last mixes asked for
  int shown_ = 0;
};

}  // namespace tmui

#endif
