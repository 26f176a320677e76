/* event_server: ground truth for a server's idle threads and its lock.
 *
 * The shape of a real server, small: "listener" sits in accept() on a
 * loopback TCP port, "evloop" in epoll_wait() on the connections the
 * listener hands it, and "worker-N" take the requests the event loop reads
 * from a queue (a pthread mutex and a condition: a pool's wait for work)
 * and answer them after a piece of work under a table lock (a pthread mutex
 * on the heap, made by make_table()). "client-N" threads of the same
 * process are the load: each sends a request, reads the answer and thinks
 * a little, for --seconds.
 *
 * Truth, measured by each thread itself with CLOCK_MONOTONIC from its
 * start to its return: the listener's and event loop's time inside accept
 * and epoll_wait (waiting for work) and how much of it they spent woken and
 * waiting for a CPU (schedstat run_delay's growth across the call: an
 * asleep thread is not queued), each worker's time inside
 * pthread_mutex_lock (both locks: every wait a wrapped lock can have) and
 * pthread_cond_wait, and each client's time in recv (waiting for its
 * answer, woken as above) and in nanosleep (thinking).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wl.h"

#define MAX_WORKERS 16
#define MAX_CLIENTS 16
#define QUEUE_CAP 64

static double seconds = 1.5, hold_us = 3000, outside_us = 100, think_us = 15000;
static int workers = 3, clients = 4;

typedef struct role {
  pthread_t thread;
  pid_t tid;
  int index;
  double start_s, lifetime_s;
  double waiting_s;                   /* listener, evloop, clients: in accept / epoll_wait / recv */
  double woken_s;                     /* of that, woken and waiting for a CPU */
  double mutex_s, cond_s;             /* workers: in pthread_mutex_lock / cond_wait */
  double slept_s;                     /* clients: in their think time's nanosleep */
  uint64_t served;                    /* requests (workers, clients) */
} role;

typedef struct table {
  pthread_mutex_t lock;
  uint64_t rows[64];
} table;

static table *shared_table;
static int listen_fd, epoll_fd, stop_fd;
static volatile int stopping;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t ready;
  int fds[QUEUE_CAP];
  int head, count;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0};

static void die(const char *what) {
  fprintf(stderr, "event_server: %s: %s\n", what, strerror(errno));
  exit(1);
}

static table *make_table(void) {
  table *t = calloc(1, sizeof *t);
  if (!t) die("calloc");
  wl_check(pthread_mutex_init(&t->lock, NULL), "pthread_mutex_init");
  return t;
}

static void begin(role *r, const char *name) {
  r->start_s = wl_now_s();
  r->tid = gettid();
  if (name) wl_name_self(name, r->index);
}

static void end(role *r) { r->lifetime_s = wl_now_s() - r->start_s; }

/* Every lock a worker takes, clocked: the whole call, as a wrapped wait. */
static void timed_lock(role *r, pthread_mutex_t *m) {
  double t0 = wl_now_s();
  wl_check(pthread_mutex_lock(m), "pthread_mutex_lock");
  r->mutex_s += wl_now_s() - t0;
}

/* A wait for work that began at t0 with run_delay d0 has ended. */
static void waited(role *r, double t0, double d0) {
  double t1 = wl_now_s(), d1 = wl_run_delay_s();
  r->waiting_s += t1 - t0;
  if (d0 >= 0 && d1 >= 0) r->woken_s += d1 - d0;
}

static void *listener(void *arg) {
  role *r = arg;
  begin(r, NULL);
  pthread_setname_np(pthread_self(), "listener");
  for (;;) {
    double d0 = wl_run_delay_s(), t0 = wl_now_s();
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC), err = errno;
    waited(r, t0, d0);
    if (fd < 0) {
      if (err == EINTR || err == ECONNABORTED) continue;
      break; /* shut down */
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) die("epoll_ctl");
  }
  end(r);
  return NULL;
}

static void enqueue(int fd) {
  wl_check(pthread_mutex_lock(&queue.lock), "pthread_mutex_lock");
  if (queue.count < QUEUE_CAP) {
    queue.fds[(queue.head + queue.count) % QUEUE_CAP] = fd;
    queue.count++;
  }
  pthread_cond_signal(&queue.ready);
  pthread_mutex_unlock(&queue.lock);
}

static void *evloop(void *arg) {
  role *r = arg;
  begin(r, NULL);
  pthread_setname_np(pthread_self(), "evloop");
  struct epoll_event evs[MAX_CLIENTS + 1];
  while (!stopping) {
    double d0 = wl_run_delay_s(), t0 = wl_now_s();
    int n = epoll_wait(epoll_fd, evs, MAX_CLIENTS + 1, -1), err = errno;
    waited(r, t0, d0);
    if (n < 0 && err != EINTR) {
      errno = err;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == stop_fd) {
        stopping = 1;
        continue;
      }
      uint64_t req;
      ssize_t got = recv(fd, &req, sizeof req, MSG_WAITALL);
      if (got != (ssize_t)sizeof req) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL); /* the client left */
        continue;
      }
      enqueue(fd);
    }
  }
  end(r);
  return NULL;
}

static void *worker(void *arg) {
  role *r = arg;
  begin(r, "worker");
  for (;;) {
    timed_lock(r, &queue.lock);
    while (queue.count == 0 && !stopping) {
      double t0 = wl_now_s();
      pthread_cond_wait(&queue.ready, &queue.lock); /* a pool waiting for work */
      r->cond_s += wl_now_s() - t0;
    }
    if (queue.count == 0) {
      pthread_mutex_unlock(&queue.lock);
      break;
    }
    int fd = queue.fds[queue.head];
    queue.head = (queue.head + 1) % QUEUE_CAP;
    queue.count--;
    pthread_mutex_unlock(&queue.lock);

    wl_spin_cpu_ms(outside_us / 1000);
    timed_lock(r, &shared_table->lock);
    wl_spin_cpu_ms(hold_us / 1000);
    shared_table->rows[r->served % 64]++;
    pthread_mutex_unlock(&shared_table->lock);

    uint64_t answer = r->served++;
    if (send(fd, &answer, sizeof answer, MSG_NOSIGNAL) != (ssize_t)sizeof answer) continue;
  }
  end(r);
  return NULL;
}

static struct sockaddr_in server_addr;

static void *client(void *arg) {
  role *r = arg;
  begin(r, "client");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0)
    die("connect");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  double deadline = r->start_s + seconds;
  while (wl_now_s() < deadline) {
    uint64_t req = r->served, answer;
    if (send(fd, &req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req) die("send");
    double d0 = wl_run_delay_s(), t0 = wl_now_s();
    ssize_t got = recv(fd, &answer, sizeof answer, MSG_WAITALL);
    waited(r, t0, d0);
    if (got != (ssize_t)sizeof answer) die("recv");
    r->served++;
    double s0 = wl_now_s();
    wl_sleep_ms(think_us / 1000);
    r->slept_s += wl_now_s() - s0;
  }
  close(fd);
  end(r);
  return NULL;
}

static void print_role(const char *name, const role *r, int last) {
  printf(
      "{\"role\":\"%s\",\"tid\":%d,\"lifetime_s\":%.6f,\"waiting_s\":%.6f,\"woken_s\":%.6f,"
      "\"mutex_s\":%.6f,\"cond_s\":%.6f,\"slept_s\":%.6f,\"served\":%llu}%s",
      name, (int)r->tid, r->lifetime_s, r->waiting_s, r->woken_s, r->mutex_s, r->cond_s, r->slept_s,
      (unsigned long long)r->served, last ? "" : ",");
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"seconds", WL_DOUBLE, &seconds, "how long each client sends requests"},
      {"workers", WL_INT, &workers, "worker threads"},
      {"clients", WL_INT, &clients, "client threads (connections)"},
      {"hold-us", WL_DOUBLE, &hold_us, "CPU time a request holds the table lock"},
      {"outside-us", WL_DOUBLE, &outside_us, "CPU time a request takes outside the lock"},
      {"think-us", WL_DOUBLE, &think_us, "a client's pause between requests"},
  };
  wl_parse_flags(argc, argv, "an epoll server, its listener, worker pool and clients", flags,
                 sizeof flags / sizeof flags[0]);
  if (workers < 1 || workers > MAX_WORKERS || clients < 1 || clients > MAX_CLIENTS) {
    fprintf(stderr, "event_server: --workers and --clients: 1 to %d\n", MAX_WORKERS);
    return 2;
  }
  shared_table = make_table();
  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  server_addr.sin_family = AF_INET;
  server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof server_addr;
  if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&server_addr, sizeof server_addr) != 0 ||
      listen(listen_fd, MAX_CLIENTS) != 0 ||
      getsockname(listen_fd, (struct sockaddr *)&server_addr, &len) != 0)
    die("listen");
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  stop_fd = eventfd(0, EFD_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = stop_fd};
  if (epoll_fd < 0 || stop_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, stop_fd, &ev) != 0)
    die("epoll");

  role lis = {0}, loop = {0}, work[MAX_WORKERS] = {{0}}, cli[MAX_CLIENTS] = {{0}};
  wl_check(pthread_create(&lis.thread, NULL, listener, &lis), "pthread_create");
  wl_check(pthread_create(&loop.thread, NULL, evloop, &loop), "pthread_create");
  for (int i = 0; i < workers; i++) {
    work[i].index = i;
    wl_check(pthread_create(&work[i].thread, NULL, worker, &work[i]), "pthread_create");
  }
  for (int i = 0; i < clients; i++) {
    cli[i].index = i;
    wl_check(pthread_create(&cli[i].thread, NULL, client, &cli[i]), "pthread_create");
  }
  for (int i = 0; i < clients; i++) pthread_join(cli[i].thread, NULL);

  /* Shut down: the listener's accept fails, the event loop reads the stop
   * event, the workers find the queue empty and stopping set. */
  shutdown(listen_fd, SHUT_RDWR);
  pthread_join(lis.thread, NULL);
  uint64_t one = 1;
  if (write(stop_fd, &one, sizeof one) != sizeof one) die("write");
  pthread_join(loop.thread, NULL);
  pthread_mutex_lock(&queue.lock);
  stopping = 1;
  pthread_cond_broadcast(&queue.ready);
  pthread_mutex_unlock(&queue.lock);
  for (int i = 0; i < workers; i++) pthread_join(work[i].thread, NULL);

  uint64_t requests = 0;
  for (int i = 0; i < clients; i++) requests += cli[i].served;
  printf("{\"workload\":\"event_server\",\"requests\":%llu,\"threads\":[",
         (unsigned long long)requests);
  print_role("listener", &lis, 0);
  print_role("evloop", &loop, 0);
  for (int i = 0; i < workers; i++) print_role("worker", &work[i], 0);
  for (int i = 0; i < clients; i++) print_role("client", &cli[i], i == clients - 1);
  printf("]}\n");
  return 0;
}
