/*
 * curl_multi_driver — a minimal closed-loop HTTP load driver on libcurl's multi interface,
 * used by bench/load_engine.py as the "libcurl-multi" anchor (the seed mapper's engine was
 * curb's Curl::Multi, i.e. libcurl multi underneath a Ruby loop).
 *
 * Keeps N transfers in flight against one URL for D seconds; connections are reused through
 * the multi handle's connection cache. Prints one line:
 *   completed=<ok> failed=<failed> seconds=<wall>
 *
 * Two engines:
 *   --engine socket   curl_multi_socket_action() driven by our own epoll loop (the scalable
 *                     way libcurl documents for many transfers); easy handles are reused.
 *   --engine perform  curl_multi_perform() + curl_multi_poll(), a new easy handle per request
 *                     with redirects and the cookie engine on: what the seed did through curb
 *                     (Curl::Easy.new per URL, follow_location, enable_cookies, Multi#perform).
 *
 * Build: gcc -O2 -Wall bench/curl_multi_driver.c -lcurl -o build/bench/curl_multi_driver
 * Usage: curl_multi_driver [-c N] [-d SECONDS] [--engine socket|perform] URL
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t discard_body(char *data, size_t size, size_t nmemb, void *user) {
  (void)data;
  *(size_t *)user += size * nmemb;
  return size * nmemb;
}

struct driver {
  CURLM *multi;
  const char *url;
  int seed_options; /* new easy per request + follow redirects + cookie engine */
  int epfd;
  long timer_ms; /* -1: no timer armed */
  double timer_set_at;
  long completed, failed;
  size_t body_bytes;
  unsigned char watched[65536]; /* fds currently registered with epoll */
  CURL **slots; /* the easy handle of each in-flight slot (slot index in CURLOPT_PRIVATE) */
};

static CURL *make_easy(struct driver *d, long slot) {
  CURL *e = curl_easy_init();
  if (!e) {
    fprintf(stderr, "curl_easy_init failed\n");
    exit(1);
  }
  curl_easy_setopt(e, CURLOPT_URL, d->url);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &d->body_bytes);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
  curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)slot);
  d->slots[slot] = e;
  if (d->seed_options) {
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_COOKIEFILE, ""); /* empty name: enable the cookie engine */
  }
  return e;
}

/* Counts finished transfers and starts their replacements while time remains. */
static void reap(struct driver *d, int keep_going) {
  int left;
  CURLMsg *msg;
  while ((msg = curl_multi_info_read(d->multi, &left)) != NULL) {
    if (msg->msg != CURLMSG_DONE) continue;
    CURL *e = msg->easy_handle;
    long code = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    if (msg->data.result == CURLE_OK && code >= 200 && code < 400)
      d->completed++;
    else
      d->failed++;
    void *priv = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
    long slot = (long)priv;
    curl_multi_remove_handle(d->multi, e);
    if (d->seed_options || !keep_going) {
      curl_easy_cleanup(e);
      d->slots[slot] = NULL;
      e = keep_going ? make_easy(d, slot) : NULL;
    }
    if (e) curl_multi_add_handle(d->multi, e);
  }
}

/* libcurl tells us which sockets to watch; we mirror that into epoll. */
static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp) {
  (void)e;
  (void)socketp;
  struct driver *d = userp;
  if (s < 0 || s >= (curl_socket_t)sizeof d->watched) {
    fprintf(stderr, "fd %d out of range\n", (int)s);
    exit(1);
  }
  if (what == CURL_POLL_REMOVE) {
    if (d->watched[s]) epoll_ctl(d->epfd, EPOLL_CTL_DEL, s, NULL);
    d->watched[s] = 0;
    return 0;
  }
  struct epoll_event ev = {0};
  if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
  if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
  ev.data.fd = s;
  epoll_ctl(d->epfd, d->watched[s] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev);
  d->watched[s] = 1;
  return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp) {
  (void)m;
  struct driver *d = userp;
  d->timer_ms = timeout_ms;
  d->timer_set_at = now_s();
  return 0;
}

static void run_socket(struct driver *d, double deadline) {
  d->epfd = epoll_create1(EPOLL_CLOEXEC);
  curl_multi_setopt(d->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
  curl_multi_setopt(d->multi, CURLMOPT_SOCKETDATA, d);
  curl_multi_setopt(d->multi, CURLMOPT_TIMERFUNCTION, on_timer);
  curl_multi_setopt(d->multi, CURLMOPT_TIMERDATA, d);
  int running = 0;
  curl_multi_socket_action(d->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  struct epoll_event evs[256];
  for (;;) {
    double t = now_s();
    if (t >= deadline) break;
    int wait_ms = (int)((deadline - t) * 1000) + 1;
    if (d->timer_ms >= 0) {
      long due = d->timer_ms - (long)((t - d->timer_set_at) * 1000);
      if (due < 0) due = 0;
      if (due < wait_ms) wait_ms = (int)due;
    }
    int n = epoll_wait(d->epfd, evs, 256, wait_ms);
    if (n < 0 && errno != EINTR) {
      perror("epoll_wait");
      exit(1);
    }
    if (n <= 0) {
      d->timer_ms = -1;
      curl_multi_socket_action(d->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    for (int i = 0; i < n; i++) {
      int flags = 0;
      if (evs[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
      if (evs[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
      if (evs[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
      curl_multi_socket_action(d->multi, evs[i].data.fd, flags, &running);
    }
    reap(d, now_s() < deadline);
  }
}

static void run_perform(struct driver *d, double deadline) {
  int running = 0;
  for (;;) {
    curl_multi_perform(d->multi, &running);
    reap(d, now_s() < deadline);
    double t = now_s();
    if (t >= deadline) break;
    int wait_ms = (int)((deadline - t) * 1000) + 1;
    if (wait_ms > 100) wait_ms = 100;
    curl_multi_poll(d->multi, NULL, 0, wait_ms, NULL);
  }
}

static void usage(const char *argv0) {
  fprintf(stderr, "usage: %s [-c N] [-d SECONDS] [--engine socket|perform] URL\n", argv0);
  exit(2);
}

int main(int argc, char **argv) {
  int concurrency = 50;
  double seconds = 5;
  const char *engine = "socket";
  const char *url = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-c") && i + 1 < argc)
      concurrency = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-d") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--engine") && i + 1 < argc)
      engine = argv[++i];
    else if (argv[i][0] == '-')
      usage(argv[0]);
    else
      url = argv[i];
  }
  int use_socket = !strcmp(engine, "socket");
  if (!url || concurrency < 1 || seconds <= 0 || (!use_socket && strcmp(engine, "perform")))
    usage(argv[0]);

  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 1;
  static struct driver d; /* static: the fd table is 64 KiB */
  d.url = url;
  d.seed_options = !use_socket;
  d.timer_ms = -1;
  d.multi = curl_multi_init();
  /* Room for every in-flight connection in the cache, so none is closed between requests. */
  curl_multi_setopt(d.multi, CURLMOPT_MAXCONNECTS, (long)concurrency * 2);

  double start = now_s();
  double deadline = start + seconds;
  d.slots = calloc((size_t)concurrency, sizeof *d.slots);
  for (long i = 0; i < concurrency; i++) curl_multi_add_handle(d.multi, make_easy(&d, i));
  if (use_socket)
    run_socket(&d, deadline);
  else
    run_perform(&d, deadline);
  double elapsed = now_s() - start;

  /* Transfers still in flight at the deadline are abandoned, as wrk does. */
  for (int i = 0; i < concurrency; i++) {
    if (!d.slots[i]) continue;
    curl_multi_remove_handle(d.multi, d.slots[i]);
    curl_easy_cleanup(d.slots[i]);
  }
  free(d.slots);
  curl_multi_cleanup(d.multi);
  curl_global_cleanup();
  printf("completed=%ld failed=%ld seconds=%.3f\n", d.completed, d.failed, elapsed);
  return 0;
}
