// The steps of a capture's read and a seek's page, one line each on stderr
// when THREADMON_SEEK_STEPS is set (bench/display_seek.cpp runs with it to
// say where a seek's wall time goes: docs/benchmarks.md, "Seek steps").
#ifndef THREADMON_APP_SEEKSTEPS_H
#define THREADMON_APP_SEEKSTEPS_H

#include <QByteArray>
#include <QElapsedTimer>
#include <QString>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <utility>

class SeekStep {
 public:
  explicit SeekStep(const char *name) : SeekStep(QByteArray(name)) {}
  explicit SeekStep(const QString &name) : SeekStep(name.toUtf8()) {}
  explicit SeekStep(QByteArray name) : name_(std::move(name)) {
    if (!on()) return;
    wall_.start();
    cpu_ = threadCpuMs();
  }
  ~SeekStep() { done(); }
  SeekStep(const SeekStep &) = delete;
  SeekStep &operator=(const SeekStep &) = delete;
  // Ends the step before its scope does.
  void done() {
    if (name_.isEmpty() || !on()) return;
    std::fprintf(stderr, "{\"step\":\"%s\",\"wall_ms\":%.1f,\"cpu_ms\":%.1f}\n", name_.constData(),
                 double(wall_.nsecsElapsed()) / 1e6, threadCpuMs() - cpu_);
    name_.clear();
  }
  static bool on() {
    static const bool set = std::getenv("THREADMON_SEEK_STEPS") != nullptr;
    return set;
  }

 private:
  static double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
  }
  QByteArray name_;
  QElapsedTimer wall_;
  double cpu_ = 0;
};

#endif
