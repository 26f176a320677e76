// Mapping (M:N): which user thread ran on which LWP, and which LWP on which
// CPU, over the window (the seeds' mapping figures). One strip per user
// thread coloured by the LWP it was on (pale where dispatchable), then one
// strip per LWP that ran user threads coloured by the CPU it was on (amber
// waiting for one, grey off the CPUs). Each pixel column is a small stacked
// bar of what its time went to, so a 25% share reads as a quarter-high
// mark even when runs are far shorter than a column; runs that fill their
// columns and are wide enough are labelled.
#ifndef THREADMON_UI_MAPPINGVIEW_H
#define THREADMON_UI_MAPPINGVIEW_H

#include <QColor>
#include <memory>
#include <vector>

#include "modeltypes.h"
#include "modelview.h"

namespace tmui {

class MappingCanvas;

// What the view draws, computed from the model (off the GUI thread when
// the session is large).
struct MappingData {
  // What a share of a column's time went to: >= 0 an LWP index (user rows)
  // or a CPU (LWP rows), else one of these.
  enum Part : int16_t { Stolen = -4, Runnable = -3, OffCpu = -2, Dispatchable = -1 };
  // Shares of one column's time, in drawing order (bottom first); the rest
  // of the column the row was not alive.
  using Column = std::vector<std::pair<int16_t, float>>;
  struct Row {
    QString label;
    std::vector<Column> columns;
  };
  tmon::TimeRange range;
  QString title;
  std::vector<Row> users;       // user thread -> LWP
  std::vector<Row> lwps;        // LWP -> CPU
  std::vector<QString> lwpNames;  // by LWP index
  int cpus = 0;
  int usersNotShown = 0;
};

MappingData computeMapping(const tmon::SessionModel &m, const tmon::TimeRange &r, int columns);
// The colour of LWP index i and of CPU c (distinct sets: LWPs saturated,
// CPUs in blues and teals).
QColor mappingLwpColor(int i);
QColor mappingCpuColor(int cpu);

class MappingView : public ModelView {
  Q_OBJECT
 public:
  MappingView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;

 protected:
  void rebuild() override;

 private:
  MappingCanvas *canvas_;
};

}  // namespace tmui

#endif
