#include "statepalette.h"

#include <QObject>

#include <QCoreApplication>

namespace tmui {

// Colours and labels come from the one list of states (proto/states.def).
QColor stateColor(tmon::FinalState s) { return QColor(QRgb(tmon::finalStateRgb(s))); }

QString stateLabel(tmon::FinalState s) {
  return QCoreApplication::translate("state", tmon::finalStateLabel(s));
}

QColor cpuColor(CpuCategory c) {
  switch (c) {
    case CpuCategory::User: return stateColor(tmon::FinalState::OnCpu);
    case CpuCategory::Nice: return QColor(0x98, 0xdf, 0x8a);
    case CpuCategory::System: return QColor(0xd6, 0x27, 0x28);
    case CpuCategory::Irq: return QColor(0x8c, 0x56, 0x4b);
    case CpuCategory::SoftIrq: return QColor(0xc4, 0x9c, 0x94);
    case CpuCategory::Steal: return stateColor(tmon::FinalState::Stolen);
    case CpuCategory::IoWait: return stateColor(tmon::FinalState::IoWait);
    case CpuCategory::Idle: return QColor(0xe8, 0xe8, 0xe8);
  }
  return Qt::white;
}

QString cpuLabel(CpuCategory c) {
  switch (c) {
    case CpuCategory::User: return QCoreApplication::translate("cpu", "User");
    case CpuCategory::Nice: return QCoreApplication::translate("cpu", "Nice");
    case CpuCategory::System: return QCoreApplication::translate("cpu", "System");
    case CpuCategory::Irq: return QCoreApplication::translate("cpu", "IRQ");
    case CpuCategory::SoftIrq: return QCoreApplication::translate("cpu", "Soft IRQ");
    case CpuCategory::Steal: return QCoreApplication::translate("cpu", "Steal");
    case CpuCategory::IoWait: return QCoreApplication::translate("cpu", "I/O wait");
    case CpuCategory::Idle: return QCoreApplication::translate("cpu", "Idle");
  }
  return QString();
}

QColor lwpColor(LwpCategory c) {
  switch (c) {
    case LwpCategory::User: return stateColor(tmon::FinalState::OnCpu);
    case LwpCategory::System: return QColor(0xd6, 0x27, 0x28);
    case LwpCategory::RunQueue: return stateColor(tmon::FinalState::Runnable);
    case LwpCategory::Sleep: return stateColor(tmon::FinalState::Sleeping);
  }
  return Qt::white;
}

QString lwpLabel(LwpCategory c) {
  switch (c) {
    case LwpCategory::User: return QCoreApplication::translate("lwp", "User");
    case LwpCategory::System: return QCoreApplication::translate("lwp", "System");
    case LwpCategory::RunQueue: return QCoreApplication::translate("lwp", "Run-queue wait");
    case LwpCategory::Sleep: return QCoreApplication::translate("lwp", "Sleep / blocked");
  }
  return QString();
}

QColor highlightColor() { return QColor(0x00, 0xe5, 0xff); }
QColor gapColor() { return QColor(0x20, 0x20, 0x20, 0xc0); }

// Pale khaki: waiting, but for an LWP, not for a CPU (runnable's amber) or an
// object (the blocked hues); apart from the cool sleeping and I/O colours.
QColor dispatchableColor() { return QColor(0xe3, 0xd7, 0xb5); }
QString dispatchableLabel() { return QObject::tr("Dispatchable (ready for an LWP)"); }

QColor hiddenLockTint() { return QColor(0xff, 0xe8, 0xd6); }

QColor severityColor(int severity) {
  switch (severity) {
    case 0: return QColor(0xc6, 0x28, 0x28);  // high: red
    case 1: return QColor(0xef, 0x8a, 0x00);  // medium: orange
    default: return QColor(0x1e, 0x6f, 0xc8);  // low: blue
  }
}

}  // namespace tmui
