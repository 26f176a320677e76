// cpp_threads: C++17 threads and locks with known counts.
//
// W std::thread workers each run N iterations: one std::mutex acquisition
// (a shared counter), one std::shared_mutex acquisition (shared, except
// every 8th which is exclusive) and some work. A producer/consumer pair
// passes P items through a queue guarded by a second std::mutex and a
// std::condition_variable. The counts printed at exit are exact; the
// standard library maps them to pthread mutex, rwlock and cond calls. The
// workers and the consumer run functions, the producer a lambda.
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  int workers = 3;
  int iterations = 12000;
  int items = 250;
  int work_loops = 20000;
};

std::mutex counter_mutex;
long counter = 0;

std::shared_mutex table_mutex;
std::vector<long> table(64);

std::mutex queue_mutex;
std::condition_variable queue_ready;
std::deque<int> queue;
bool producer_done = false;

void busy(int loops) {
  for (volatile int i = 0; i < loops; i = i + 1) {
  }
}

void worker(const Options &opt, int index, long *exclusive, long *shared) {
  std::string name = "cpp-worker-" + std::to_string(index);
  pthread_setname_np(pthread_self(), name.c_str());
  for (int i = 0; i < opt.iterations; i++) {
    {
      std::lock_guard<std::mutex> guard(counter_mutex);
      counter++;
    }
    if (i % 8 == 0) {
      std::unique_lock<std::shared_mutex> write(table_mutex);
      table[static_cast<size_t>(i) % table.size()]++;
      ++*exclusive;
    } else {
      std::shared_lock<std::shared_mutex> read(table_mutex);
      busy(opt.work_loops / 10);
      ++*shared;
    }
    busy(opt.work_loops);
  }
}

void producer(const Options &opt, long *notifies) {
  pthread_setname_np(pthread_self(), "cpp-producer");
  for (int i = 0; i < opt.items; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    {
      std::lock_guard<std::mutex> guard(queue_mutex);
      queue.push_back(i);
    }
    queue_ready.notify_one();
    ++*notifies;
  }
  {
    std::lock_guard<std::mutex> guard(queue_mutex);
    producer_done = true;
  }
  queue_ready.notify_one();
  ++*notifies;
}

void consumer(long *received) {
  pthread_setname_np(pthread_self(), "cpp-consumer");
  std::unique_lock<std::mutex> lock(queue_mutex);
  for (;;) {
    queue_ready.wait(lock, [] { return !queue.empty() || producer_done; });
    while (!queue.empty()) {
      queue.pop_front();
      ++*received;
    }
    if (producer_done) return;
  }
}

int parse_count(const char *flag, const char *text) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < 1 || v > 10000000) {
    std::fprintf(stderr, "cpp_threads: bad value for %s: %s\n", flag, text);
    std::exit(2);
  }
  return static_cast<int>(v);
}

Options parse(int argc, char **argv) {
  Options opt;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: cpp_threads [--workers N] [--iterations N] [--items N] [--work-loops N]\n"
          "std::thread workers with std::mutex, std::shared_mutex and a condition_variable "
          "queue; prints exact counts.\n");
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "cpp_threads: unknown flag or missing value: %s (see --help)\n",
                   arg.c_str());
      std::exit(2);
    }
    int value = parse_count(arg.c_str(), argv[++i]);
    if (arg == "--workers") {
      opt.workers = value;
    } else if (arg == "--iterations") {
      opt.iterations = value;
    } else if (arg == "--items") {
      opt.items = value;
    } else if (arg == "--work-loops") {
      opt.work_loops = value;
    } else {
      std::fprintf(stderr, "cpp_threads: unknown flag: %s (see --help)\n", arg.c_str());
      std::exit(2);
    }
  }
  return opt;
}

}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse(argc, argv);
  auto start = std::chrono::steady_clock::now();
  std::vector<long> exclusive(static_cast<size_t>(opt.workers)), shared(exclusive.size());
  long notifies = 0, received = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < opt.workers; i++) {
    threads.emplace_back(worker, std::cref(opt), i, &exclusive[static_cast<size_t>(i)],
                         &shared[static_cast<size_t>(i)]);
  }
  threads.emplace_back(consumer, &received);
  // A lambda, where the others run functions: threadmon names both.
  threads.emplace_back([&opt, &notifies] { producer(opt, &notifies); });
  for (auto &t : threads) t.join();
  long exclusive_total = 0, shared_total = 0;
  for (size_t i = 0; i < exclusive.size(); i++) {
    exclusive_total += exclusive[i];
    shared_total += shared[i];
  }
  std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  std::printf(
      "{\"workload\":\"cpp_threads\",\"wall_s\":%.6f,\"threads_created\":%zu,"
      "\"counter_mutex_acquisitions\":%ld,\"rwlock_exclusive\":%ld,\"rwlock_shared\":%ld,"
      "\"notifies\":%ld,\"items_received\":%ld,\"mutexes\":2,\"rwlocks\":1,\"conds\":1}\n",
      wall.count(), threads.size(), counter, exclusive_total, shared_total, notifies, received);
  return counter == static_cast<long>(opt.workers) * opt.iterations && received == opt.items
             ? 0
             : 1;
}
