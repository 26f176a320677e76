#include "statepalette.h"

#include <QCoreApplication>

namespace tmui {

// Running is green and waiting for a CPU is amber in every view; blocked
// kinds are warm, distinct hues; sleeping and I/O are cool. Chosen to stay
// apart for the common forms of colour blindness where possible.
QColor stateColor(tmon::FinalState s) {
  switch (s) {
    case tmon::FinalState::OnCpu: return QColor(0x2e, 0xa0, 0x43);
    case tmon::FinalState::Runnable: return QColor(0xf2, 0xb7, 0x05);
    case tmon::FinalState::BlockedMutex: return QColor(0xd6, 0x27, 0x28);
    case tmon::FinalState::BlockedCond: return QColor(0x94, 0x67, 0xbd);
    case tmon::FinalState::BlockedRwlock: return QColor(0xe3, 0x77, 0xc2);
    case tmon::FinalState::BlockedBarrier: return QColor(0x8c, 0x56, 0x4b);
    case tmon::FinalState::BlockedSem: return QColor(0xff, 0x7f, 0x0e);
    case tmon::FinalState::BlockedSpin: return QColor(0x7b, 0x10, 0x10);
    case tmon::FinalState::BlockedJoin: return QColor(0x9a, 0x9a, 0x9a);
    case tmon::FinalState::Sleeping: return QColor(0xa6, 0xce, 0xe3);
    case tmon::FinalState::IoWait: return QColor(0x1f, 0x5f, 0xb4);
    case tmon::FinalState::Stopped: return QColor(0x30, 0x30, 0x30);
    // Dark grey-violet: not the thread's fault, apart from every blocked hue.
    case tmon::FinalState::Stolen: return QColor(0x5c, 0x4d, 0x6e);
  }
  return Qt::white;
}

QString stateLabel(tmon::FinalState s) {
  switch (s) {
    case tmon::FinalState::OnCpu: return QCoreApplication::translate("state", "On CPU");
    case tmon::FinalState::Runnable: return QCoreApplication::translate("state", "Runnable (run queue)");
    case tmon::FinalState::BlockedMutex: return QCoreApplication::translate("state", "Blocked: mutex");
    case tmon::FinalState::BlockedCond: return QCoreApplication::translate("state", "Blocked: condvar");
    case tmon::FinalState::BlockedRwlock: return QCoreApplication::translate("state", "Blocked: rwlock");
    case tmon::FinalState::BlockedBarrier: return QCoreApplication::translate("state", "Blocked: barrier");
    case tmon::FinalState::BlockedSem: return QCoreApplication::translate("state", "Blocked: semaphore");
    case tmon::FinalState::BlockedSpin: return QCoreApplication::translate("state", "Blocked: spinlock");
    case tmon::FinalState::BlockedJoin: return QCoreApplication::translate("state", "Blocked: join");
    case tmon::FinalState::Sleeping: return QCoreApplication::translate("state", "Sleeping");
    case tmon::FinalState::IoWait: return QCoreApplication::translate("state", "I/O wait");
    case tmon::FinalState::Stopped: return QCoreApplication::translate("state", "Stopped");
    case tmon::FinalState::Stolen: return QCoreApplication::translate("state", "Stolen (hypervisor)");
  }
  return QString();
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

QColor hiddenLockTint() { return QColor(0xff, 0xe8, 0xd6); }

QColor severityColor(int severity) {
  switch (severity) {
    case 0: return QColor(0xc6, 0x28, 0x28);  // high: red
    case 1: return QColor(0xef, 0x8a, 0x00);  // medium: orange
    default: return QColor(0x1e, 0x6f, 0xc8);  // low: blue
  }
}

}  // namespace tmui
