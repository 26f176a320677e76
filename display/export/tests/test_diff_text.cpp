// DiffChange::text (display/export/capturediff.h): a change's sentence,
// its two figures in one unit when both are small.
#include <QtTest>

#include "capturediff.h"

using namespace tmon;

namespace {

QString said(double before, double after) {
  DiffChange c;
  c.subject = QStringLiteral("`[main]`: runnable (run queue)");
  c.before = before;
  c.after = after;
  return c.text();
}

}  // namespace

class TestDiffText : public QObject {
  Q_OBJECT
 private slots:
  // Both under a second, one under 10 ms: both in ms ("from 9.9 ms to
  // 0.02 s" hid a doubling).
  void smallFiguresShareMilliseconds() {
    QCOMPARE(said(0.0099, 0.0188), QStringLiteral("`[main]`: runnable (run queue) rose from "
                                                  "9.9 ms to 18.8 ms (+90%)"));
    QCOMPARE(
        said(0.25, 0.004),
        QStringLiteral("`[main]`: runnable (run queue) fell from 250.0 ms to 4.0 ms (\u221298%)"));
  }

  // Otherwise each as before: seconds, or ms for a figure under 10 ms
  // beside one of a second or more.
  void otherFiguresUnchanged() {
    QCOMPARE(
        said(1.13, 0.18),
        QStringLiteral("`[main]`: runnable (run queue) fell from 1.13 s to 0.18 s (\u221284%)"));
    QCOMPARE(said(0.005, 1.5),
             QStringLiteral("`[main]`: runnable (run queue) rose from 5.0 ms to 1.50 s (+29900%)"));
    QCOMPARE(said(0, 0.004), QStringLiteral("`[main]`: runnable (run queue) is new: 4.0 ms"));
    QCOMPARE(said(0.02, 0), QStringLiteral("`[main]`: runnable (run queue) is gone (was 0.02 s)"));
  }
};

QTEST_GUILESS_MAIN(TestDiffText)
#include "test_diff_text.moc"
