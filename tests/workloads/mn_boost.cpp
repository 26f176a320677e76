// mn_boost: user threads on Boost.Context (boost::context::fiber, linked
// dynamically: make_fcontext, jump_fcontext and ontop_fcontext go through
// the PLT, where the probe sees them).
//
// --fibers F fibers (default 3) on the main thread, resumed round robin;
// each spins --work-us of CPU time, then gives the thread back (with
// resume, or resume_with every other time), --rounds times, then ends. Truth per fiber, measured by
// the program: on_lwp_s, the sum of its spans from the scheduler's clock read just before resuming
// it to its own read just before giving the thread back; lifetime_s from just before its creation
// to its end; uncertainty_s, how far the probe's stamps of its switches may lie from those reads
// (mn_sched.h: the widths of the switches a preemption disturbed, from the read before to the first
// read on the far side).
#include <time.h>

#include <boost/context/fiber.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace ctx = boost::context;

namespace {

double clock_s(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}
double now_s() { return clock_s(CLOCK_MONOTONIC); }

void spin_cpu_us(double us) {
  const double until = clock_s(CLOCK_THREAD_CPUTIME_ID) + us / 1e6;
  while (clock_s(CLOCK_THREAD_CPUTIME_ID) < until) {
  }
}

// mn_sched.h's MN_SWITCH_SLACK_S: wider than a quiet switch, narrower than a preemption.
constexpr double kSwitchSlackS = 20e-6;

struct Truth {
  double created = 0, done = 0, in = 0, out = 0, on = 0;
  int switches = 0, uncertainSwitches = 0;
  double uncertainty = 0;

  // The far side of a switch whose near side read before.
  void switched(double before) {
    const double width = now_s() - before;
    switches++;
    if (width <= kSwitchSlackS) return;
    uncertainSwitches++;
    uncertainty += width;
  }
  void leaving() {
    out = now_s();
    on += out - in;
  }
};

int intFlag(int argc, char **argv, const char *name, int def) {
  for (int i = 1; i + 1 < argc; i++)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return def;
}

}  // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("usage: mn_boost [--fibers F] [--rounds R] [--work-us US]\n"
                  "Boost.Context fibers resumed round robin on one thread; prints its truth.\n");
      return 0;
    }
  const int fibers = intFlag(argc, argv, "--fibers", 3);
  const int rounds = intFlag(argc, argv, "--rounds", 200);
  const int workUs = intFlag(argc, argv, "--work-us", 1000);
  std::vector<Truth> truth(static_cast<size_t>(fibers));
  std::vector<ctx::fiber> fs;
  const double start = now_s();
  for (int i = 0; i < fibers; i++) {
    Truth &t = truth[size_t(i)];
    t.created = now_s();
    fs.emplace_back([&t, rounds, workUs](ctx::fiber &&sched) {
      t.switched(t.in);
      for (int r = 0; r < rounds; r++) {
        spin_cpu_us(workUs);
        t.leaving();
        // Every other round through resume_with (an ontop_fcontext from the
        // fiber that does not end it, docs/format.md).
        if (r % 2)
          sched = std::move(sched).resume_with([](ctx::fiber &&c) { return std::move(c); });
        else
          sched = std::move(sched).resume();
        t.switched(t.in);
      }
      t.leaving();
      t.done = now_s();
      return std::move(sched);
    });
    t.switched(t.created);
  }
  for (bool any = true; any;) {
    any = false;
    for (int i = 0; i < fibers; i++) {
      if (!fs[size_t(i)]) continue;
      Truth &t = truth[size_t(i)];
      t.in = now_s();
      fs[size_t(i)] = std::move(fs[size_t(i)]).resume();
      t.switched(t.out);
      any = true;
    }
  }
  std::printf("{\"workload\":\"mn_boost\",\"wall_s\":%.6f,\"fibers\":%d,\"rounds\":%d,"
              "\"tid\":%d,\"user_threads\":[",
              now_s() - start, fibers, rounds, int(gettid()));
  for (int i = 0; i < fibers; i++) {
    const Truth &t = truth[size_t(i)];
    std::printf(
        "%s{\"index\":%d,\"lifetime_s\":%.6f,\"on_lwp_s\":%.6f,\"switches\":%d,"
        "\"uncertain_switches\":%d,\"uncertainty_s\":%.6f}",
        i ? "," : "", i, t.done - t.created, t.on, t.switches, t.uncertainSwitches, t.uncertainty);
  }
  std::printf("]}\n");
  return 0;
}
