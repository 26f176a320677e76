// One colour and one label per thread state, CPU time category and LWP
// microstate, so every view (bars, timeline, legends) agrees.
#ifndef THREADMON_UI_STATEPALETTE_H
#define THREADMON_UI_STATEPALETTE_H

#include <QColor>
#include <QString>

#include "modeltypes.h"

namespace tmui {

QColor stateColor(tmon::FinalState s);
QString stateLabel(tmon::FinalState s);

// A user thread switched out, ready for an LWP (M:N).
QColor dispatchableColor();
QString dispatchableLabel();

// /proc/stat categories of the CPUs view, in drawing order.
enum class CpuCategory { User, Nice, System, Irq, SoftIrq, Steal, IoWait, Idle };
constexpr int kCpuCategoryCount = 8;
QColor cpuColor(CpuCategory c);
QString cpuLabel(CpuCategory c);

// Kernel microstates of the LWPs view, in drawing order.
enum class LwpCategory { User, System, RunQueue, Sleep };
constexpr int kLwpCategoryCount = 4;
QColor lwpColor(LwpCategory c);
QString lwpLabel(LwpCategory c);

// Outline of intervals blocked on the selected sync object.
QColor highlightColor();
// Hatching over spans whose states are folded totals (a full event ring).
QColor gapColor();
// Row tint of hidden (library-internal) locks in the sync view.
QColor hiddenLockTint();
// Severity colours of findings: 0 high, 1 medium, 2 low.
QColor severityColor(int severity);

}  // namespace tmui

#endif
