// Base of the bar views (threads, LWPs, user threads, CPUs): one stacked
// percentage bar per item over the window, computed off the GUI thread in
// large sessions. A pooled view groups its items into pools (pools.h): one
// aggregate row per pool that a click expands, its outliers beside it, a
// filter box and a sort by any category; pools start expanded while every
// item fits on a screen.
#ifndef THREADMON_UI_BARCHARTVIEW_H
#define THREADMON_UI_BARCHARTVIEW_H

#include <QSet>
#include <memory>
#include <vector>

#include "modelview.h"
#include "modeltypes.h"
#include "pools.h"
#include "stackedbarchart.h"

namespace tmui {

class PoolControls;

// One item's bar and what it pools by.
struct ItemBar {
  tmon::PoolItem item;
  BarRow row;
};

// A thread's pool item with its bar's values: the main thread and the
// probe's stand alone.
tmon::PoolItem poolItem(const tmon::ThreadInfo &t, int index, const BarRow &row);

class BarChartView : public ModelView {
  Q_OBJECT
 public:
  // What a bar view shows.
  struct Spec {
    std::vector<BarCategory> categories;
    QString heading;    // "Threads: time in each state"
    QString noun;       // "threads" (counted in the title), or "" (not)
    QString emptyText;  // no items in the window
    bool pooled = false;
    // Each item's bar over a window; runs on a worker thread when large
    // (may only read the model), so it is a free function, not a virtual
    // one that a view being destroyed could lose mid-rebuild.
    std::vector<ItemBar> (*items)(const tmon::SessionModel &m, const tmon::TimeRange &r) = nullptr;
  };
  BarChartView(tmon::SessionModel *model, ViewWindow *window, Spec spec, QWidget *parent = nullptr);
  // Items shown (threads, LWPs, CPUs), in pools or not.
  int rowCount() const override { return itemsShown_; }
  const StackedBarChart *chart() const { return chart_; }
  // The filter box and the sort (-1: creation order), for tests.
  void setFilter(const QString &text);
  void setSortCategory(int category);
  // Expands or collapses the pool whose aggregate is chart row `row`.
  void toggleRow(int row);
  Ahead ahead() const override;

 protected:
  void rebuild() override;

 private:
  // What the filter box, the sort and the clicks ask for.
  struct Query {
    QString filter;
    int sort = -1;
    QSet<QString> toggled;
    bool operator==(const Query &o) const {
      return filter == o.filter && sort == o.sort && toggled == o.toggled;
    }
  };
  // The chart's rows for it, each row's pool key ("" for an item), the items
  // shown and the pools grouped: pure, so it runs on the worker thread too.
  struct Laid {
    std::vector<BarRow> rows;
    std::vector<QString> rowPool;
    int shown = 0;
    int pools = 0;
  };
  static Laid layOut(const std::vector<ItemBar> &bars, const Query &q, const Spec &spec);
  // A rebuild's result, and what it is for (the window, the query).
  using Result = std::pair<std::shared_ptr<const std::vector<ItemBar>>, Laid>;
  using Inputs = std::pair<std::pair<int64_t, int64_t>, Query>;
  static Result compute(const tmon::SessionModel &m, const tmon::TimeRange &r, const Query &q,
                        const Spec &spec);
  Query query() const;
  void relayout();
  void showLaid(Laid &&laid);

  StackedBarChart *chart_;
  Spec spec_;
  PoolControls *controls_ = nullptr;  // pooled views only
  std::shared_ptr<const std::vector<ItemBar>> bars_;  // the last computed
  QString described_;
  QSet<QString> toggled_;      // pools expanded or collapsed by a click
  std::vector<QString> rowPool_;  // each chart row's pool key ("" for an item)
  int itemsShown_ = 0;
};

}  // namespace tmui

#endif
