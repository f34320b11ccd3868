/* benchlib.c: see benchlib.h. */
#define _GNU_SOURCE
#include "benchlib.h"

#include <dirent.h>
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t bl_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double bl_spread(long i) {
    double x = (double)i * 0.61803398874989484820;
    return x - floor(x);
}

static long tracepoint_id(void) {
    static long id = -2;
    if (id != -2) return id;
    id = -1;
    const char *paths[] = {"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
                           "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id"};
    for (unsigned i = 0; i < 2 && id < 0; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f) continue;
        if (fscanf(f, "%ld", &id) != 1) id = -1;
        fclose(f);
    }
    return id;
}

int bl_sc_open(void) {
    long id = tracepoint_id();
    if (id < 0) return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_TRACEPOINT;
    a.size = sizeof a;
    a.config = (uint64_t)id;
    a.sample_period = 0;
    a.disabled = 0;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd;
}

long long bl_sc_read(int fd) {
    static __thread long long reads; /* our own read() calls, subtracted */
    if (fd < 0) return -1;
    uint64_t v = 0;
    if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) return -1;
    reads++;
    return (long long)v - reads;
}

void bl_sc_close(int fd) {
    if (fd >= 0) close(fd);
}

bl_sc_span bl_sc_begin(void) {
    bl_sc_span s;
    s.fd = bl_sc_open();
    s.start = bl_sc_read(s.fd);
    return s;
}

long long bl_sc_end(bl_sc_span *s) {
    long long end = bl_sc_read(s->fd);
    bl_sc_close(s->fd);
    return (s->start >= 0 && end >= 0) ? end - s->start : -1;
}

bool bl_sc_available(void) {
    int fd = bl_sc_open();
    if (fd < 0) return false;
    close(fd);
    return true;
}

long long bl_mallocs(void) {
    static long long (*fn)(void);
    static int looked;
    if (!looked) {
        fn = (long long (*)(void))dlsym(RTLD_DEFAULT, "bench_malloc_count");
        looked = 1;
    }
    return fn ? fn() : -1;
}

bl_usage bl_usage_now(bool thread) {
    struct rusage ru;
    getrusage(thread ? RUSAGE_THREAD : RUSAGE_SELF, &ru);
    bl_usage u;
    u.cpu_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec * 1e6 +
               (double)ru.ru_stime.tv_usec;
    u.vcsw = ru.ru_nvcsw;
    u.ivcsw = ru.ru_nivcsw;
    return u;
}

int bl_threads(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    return n;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bl_percentile(double *v, long n, double p) {
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double rank = p / 100.0 * (double)(n - 1);
    long lo = (long)floor(rank);
    long hi = lo + 1 < n ? lo + 1 : lo;
    double f = rank - (double)lo;
    return v[lo] * (1 - f) + v[hi] * f;
}

double bl_median(double *v, long n) {
    return bl_percentile(v, n, 50);
}

double bl_mean(const double *v, long n) {
    if (n <= 0) return NAN;
    double s = 0;
    for (long i = 0; i < n; i++) s += v[i];
    return s / (double)n;
}

void bl_result_begin(const char *workload) {
    printf("RESULT %s", workload);
}
void bl_result(const char *key, double value) {
    if (isnan(value)) printf(" %s=nan", key);
    else printf(" %s=%.6g", key, value);
}
void bl_result_end(void) {
    printf("\n");
    fflush(stdout);
}

void bl_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void bl_sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0) {}
}

/* ---- standalone driver -------------------------------------------------- */
#define MAXK 48
#define MAXR 16
typedef struct {
    char key[48];
    double v[MAXR];
    int n;
} kv;

static int parse_line(char *line, kv *tab, int *ntab, int run) {
    (void)run;
    if (strncmp(line, "RESULT ", 7) != 0) return 0;
    char *save = NULL;
    char *tok = strtok_r(line + 7, " \n", &save); /* workload name */
    while ((tok = strtok_r(NULL, " \n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        int k;
        for (k = 0; k < *ntab; k++)
            if (strcmp(tab[k].key, tok) == 0) break;
        if (k == *ntab) {
            if (*ntab == MAXK) continue;
            snprintf(tab[k].key, sizeof tab[k].key, "%s", tok);
            tab[k].n = 0;
            (*ntab)++;
        }
        if (tab[k].n < MAXR) tab[k].v[tab[k].n++] = strtod(eq + 1, NULL);
    }
    return 1;
}

int bl_main(int argc, char **argv, const bl_workload *wl, int nwl, int runs) {
    if (argc >= 2) {
        for (int i = 0; i < nwl; i++) {
            if (strcmp(argv[1], wl[i].name) == 0) {
                double arg = argc >= 3 ? strtod(argv[2], NULL) : wl[i].default_arg;
                wl[i].fn(arg);
                return 0;
            }
        }
        /* A workload this peer has no counterpart for: the driver reports it so. */
        printf("UNSUPPORTED %s\n", argv[1]);
        fprintf(stderr, "usage: %s [", argv[0]);
        for (int i = 0; i < nwl; i++) fprintf(stderr, "%s%s", i ? "|" : "", wl[i].name);
        fprintf(stderr, "] [count-or-seconds]\n");
        return 0;
    }
    printf("%s: every workload, median of %d runs (each run a fresh process)\n", argv[0], runs);
    for (int i = 0; i < nwl; i++) {
        kv tab[MAXK];
        int ntab = 0;
        for (int r = 0; r < runs; r++) {
            char cmd[512];
            snprintf(cmd, sizeof cmd, "/proc/%d/exe %s %.17g", (int)getpid(), wl[i].name, wl[i].default_arg);
            FILE *p = popen(cmd, "r");
            if (!p) {
                perror("popen");
                return 1;
            }
            char line[4096];
            while (fgets(line, sizeof line, p)) parse_line(line, tab, &ntab, r);
            if (pclose(p) != 0) fprintf(stderr, "%s run %d failed\n", wl[i].name, r);
        }
        printf("%-4s (arg %g)\n", wl[i].name, wl[i].default_arg);
        for (int k = 0; k < ntab; k++)
            printf("     %-24s %14.6g   (runs:%d)\n", tab[k].key, bl_median(tab[k].v, tab[k].n), tab[k].n);
        fflush(stdout);
    }
    return 0;
}

void bl_report_w1(long n, double secs, double *rtt, bl_usage u0, bl_usage u1, long long m0, long long m1, long long sc0,
                  long long sc1, long long peer_sc) {
    bl_result_begin("w1");
    bl_result("rt", (double)n);
    bl_result("rt_per_s", (double)n / secs);
    bl_result("rtt_p99_us", bl_percentile(rtt, n, 99));
    bl_result("rtt_med_us", bl_median(rtt, n));
    bl_result("cpu_us_per_rt", (u1.cpu_us - u0.cpu_us) / (double)n);
    bl_result("csw_per_rt", (double)(u1.vcsw - u0.vcsw + u1.ivcsw - u0.ivcsw) / (double)n);
    if (sc0 >= 0 && peer_sc >= 0) bl_result("sc_per_rt", (double)(sc1 - sc0 + peer_sc) / (double)n);
    if (m0 >= 0) bl_result("mallocs_per_rt", (double)(m1 - m0) / (double)n);
    bl_result_end();
}

void bl_report_w2(long n, uint64_t t0, uint64_t t_added, uint64_t t_last, long fired, double *late, bl_usage u0,
                  bl_usage u1, long long m0, long long m1) {
    bl_result_begin("w2");
    bl_result("n", (double)n);
    bl_result("add_ns", (double)(t_added - t0) / (double)n);
    bl_result("fired", (double)fired);
    bl_result("all_fired_s", (double)(t_last - t0) / 1e9);
    bl_result("cpu_ms", (u1.cpu_us - u0.cpu_us) / 1e3);
    bl_result("late_mean_us", bl_mean(late, fired));
    bl_result("late_p99_us", bl_percentile(late, n, 99));
    if (m0 >= 0) bl_result("mallocs_per_add", (double)(m1 - m0) / (double)n);
    bl_result_end();
}

/* ---- reports of W3-W9 (one place per metric, for every peer) ------------ */

void bl_report_w3(const char *name, long fires, long cap, double *jit, uint64_t first, uint64_t t0, uint64_t t1,
                  bl_usage u0, bl_usage u1, long host_wakeups) {
    long n = fires < cap ? fires : cap;
    bl_result_begin(name);
    bl_result("fires", (double)fires);
    bl_result("expected", floor((double)(t1 - first) / 1e6) + 1);
    if (host_wakeups >= 0) bl_result("host_wakeups", (double)host_wakeups);
    bl_result("jit_mean_us", bl_mean(jit, n));
    bl_result("jit_p99_us", bl_percentile(jit, n, 99));
    bl_result("cpu_pct", (u1.cpu_us - u0.cpu_us) / ((double)(t1 - t0) / 1e3) * 100);
    bl_result_end();
}

void bl_report_w4(long n, uint64_t t0, uint64_t t1, uint64_t t2, long long m0, long long m1) {
    bl_result_begin("w4");
    bl_result("n", (double)n);
    bl_result("blocks_per_s", (double)n / ((double)(t2 - t0) / 1e9));
    bl_result("enqueue_ns", (double)(t1 - t0) / (double)n);
    bl_result("drain_ns", (double)(t2 - t1) / (double)n);
    if (m0 >= 0) bl_result("mallocs_per_block", (double)(m1 - m0) / (double)n);
    bl_result_end();
}

void bl_report_w5(const char *name, long n, uint64_t t0, uint64_t t1, double *rtt, long long sc0, long long sc1,
                  long long peer_sc) {
    bl_result_begin(name);
    bl_result("rt_per_s", (double)n / ((double)(t1 - t0) / 1e9));
    bl_result("rtt_med_us", bl_median(rtt, n));
    bl_result("rtt_p99_us", bl_percentile(rtt, n, 99));
    if (sc0 >= 0 && peer_sc >= 0) bl_result("sc_per_rt", (double)(sc1 - sc0 + peer_sc) / (double)n);
    bl_result_end();
}

void bl_report_w6(bl_usage u0, bl_usage u1, int threads, long long sc0, long long sc1) {
    bl_result_begin("w6");
    bl_result("cpu_us", u1.cpu_us - u0.cpu_us);
    bl_result("vcsw", (double)(u1.vcsw - u0.vcsw));
    bl_result("ivcsw", (double)(u1.ivcsw - u0.ivcsw));
    bl_result("threads", threads);
    if (sc0 >= 0) bl_result("syscalls", (double)(sc1 - sc0));
    bl_result_end();
}

void bl_report_w7(long n, bool counted, long long waker, long long loop_sc, long long a0, long long a1, uint64_t t0,
                  uint64_t t1) {
    bl_result_begin("w7");
    bl_result("n", (double)n);
    if (counted) {
        bl_result("sc_waker_per_wake", (double)waker / (double)n);
        bl_result("sc_loop_per_woken_pass", (double)loop_sc / (double)n);
        bl_result("sc_per_wake_awake", (double)(a1 - a0) / (double)n);
    }
    bl_result("ns_per_wake_awake", (double)(t1 - t0) / (double)n);
    bl_result_end();
}

void bl_report_w9a(long events, uint64_t t0, uint64_t t1, bl_usage u0, bl_usage u1, int extra_fds) {
    bl_result_begin("w9a");
    bl_result("ns_per_event", (double)(t1 - t0) / (double)events);
    bl_result("cpu_ns_per_event", (u1.cpu_us - u0.cpu_us) * 1e3 / (double)events);
    bl_result("extra_fds", (double)extra_fds);
    bl_result_end();
}

int bl_open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n - 3; /* ".", "..", and the directory's own descriptor */
}

/* Rate and CPU per operation over a timed stretch (W8, W9d). */
static void report_rate(const char *name, const char *rate_key, const char *cpu_key, double total, uint64_t t0,
                        uint64_t t1, bl_usage u0, bl_usage u1, bool switches) {
    bl_result_begin(name);
    bl_result(rate_key, total / ((double)(t1 - t0) / 1e9));
    bl_result(cpu_key, (u1.cpu_us - u0.cpu_us) / total);
    if (switches) bl_result("csw_per_rt", (double)(u1.vcsw - u0.vcsw + u1.ivcsw - u0.ivcsw) / total);
    bl_result_end();
}

/* ---- W8 and W9d drivers --------------------------------------------------- */

#define W8_MAX_PAIRS 16
static atomic_int pairs_ready, pairs_go;

void bl_pair_ready(void) {
    atomic_fetch_add(&pairs_ready, 1);
}
void bl_pair_wait_go(void) {
    while (!atomic_load(&pairs_go)) bl_spin_pause();
}

void bl_run_w8(long n, void *pairs_array, int pairs, size_t size, void *(*a_main)(void *), void *(*b_main)(void *),
               void (*stop_b)(void *pair)) {
    pthread_t ta[W8_MAX_PAIRS], tb[W8_MAX_PAIRS];
    if (pairs > W8_MAX_PAIRS) pairs = W8_MAX_PAIRS;
    atomic_store(&pairs_ready, 0);
    atomic_store(&pairs_go, 0);
    for (int k = 0; k < pairs; k++) {
        void *p = (char *)pairs_array + (size_t)k * size;
        memset(p, 0, size);
        ((bl_pair *)p)->n = n;
        pthread_create(&tb[k], NULL, b_main, p);
        while (atomic_load(&pairs_ready) < 2 * k + 1) bl_spin_pause();
        pthread_create(&ta[k], NULL, a_main, p);
        while (atomic_load(&pairs_ready) < 2 * k + 2) bl_spin_pause();
    }
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    atomic_store(&pairs_go, 1);
    for (int k = 0; k < pairs; k++) pthread_join(ta[k], NULL);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    for (int k = 0; k < pairs; k++) {
        stop_b((char *)pairs_array + (size_t)k * size);
        pthread_join(tb[k], NULL);
    }
    report_rate("w8", "rt_per_s", "cpu_us_per_rt", (double)n * pairs, t0, t1, u0, u1, true);
}

static atomic_long w9d_handled;

void bl_w9d_handled(void) {
    atomic_fetch_add(&w9d_handled, 1);
}

void bl_run_w9d(double arg, int max, void (*start)(int i), void (*wake)(int i), void (*stop)(int i)) {
    atomic_store(&w9d_handled, 0);
    int t = (int)arg;
    if (t < 1) t = 1;
    if (t > max) t = max;
    for (int i = 0; i < t; i++) start(i);
    long rounds = 40000 / t;
    if (rounds < 200) rounds = 200;
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < t; i++) wake(i);
        long want = (r + 1) * t;
        while (atomic_load(&w9d_handled) < want) sched_yield();
    }
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    for (int i = 0; i < t; i++) stop(i);
    report_rate("w9d", "wakeups_per_s", "cpu_us_per_wakeup", (double)rounds * t, t0, t1, u0, u1, false);
}

/* ---- W7 driver ---------------------------------------------------------- */

static atomic_long w7_handled;
static atomic_int w7_busy, w7_release, w7_hold_next;

void bl_w7_handled(void) {
    atomic_fetch_add(&w7_handled, 1);
}

void bl_w7_hold(void) {
    atomic_store(&w7_busy, 1);
    while (!atomic_load(&w7_release)) bl_spin_pause();
}

void bl_w7_woken(void) {
    if (atomic_exchange(&w7_hold_next, 0)) bl_w7_hold();
    else bl_w7_handled();
}

void bl_run_w7(long n, const bl_w7_peer *peer) {
    atomic_store(&w7_handled, 0);
    atomic_store(&w7_busy, 0);
    atomic_store(&w7_release, 0);
    atomic_store(&w7_hold_next, 0);
    int sc = bl_sc_open();
    bl_sleep_us(2000);
    /* (a) the loop sleeps; we hand it work and wake it. */
    long long waker = 0;
    for (long i = 0; i < n; i++) {
        long long c0 = bl_sc_read(sc);
        peer->send();
        long long c1 = bl_sc_read(sc);
        waker += c1 - c0;
        while (atomic_load(&w7_handled) <= i) bl_spin_pause();
        if (peer->settle) peer->settle();
        bl_sleep_us(50);
    }
    /* (b) the loop is awake (in a callout); we wake it n times. */
    if (peer->hold) {
        peer->hold();
    } else {
        atomic_store(&w7_hold_next, 1);
        peer->wake();
    }
    while (!atomic_load(&w7_busy)) bl_spin_pause();
    long long a0 = bl_sc_read(sc);
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < n; i++) peer->wake();
    uint64_t t1 = bl_now_ns();
    long long a1 = bl_sc_read(sc);
    atomic_store(&w7_release, 1);
    bl_sleep_us(2000);
    long long loop_sc = peer->stop();
    bl_sc_close(sc);
    bl_report_w7(n, sc >= 0, waker, loop_sc, a0, a1, t0, t1);
}

/* ---- W1, W2, W3 and W5 records ---------------------------------------------- */

/* One round trip came back: its time into rtt[*i]; true after the n-th, else
   the next one starts now. */
static bool round_trip_back(long *i, long n, double *rtt, uint64_t *t_send) {
    uint64_t now = bl_now_ns();
    rtt[(*i)++] = (double)(now - *t_send) / 1e3;
    if (*i >= n) return true;
    *t_send = bl_now_ns();
    return false;
}

void bl_w1_begin(bl_w1 *w, long n) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->rtt = calloc((size_t)n, sizeof(double));
}

bool bl_w1_back(bl_w1 *w) {
    return round_trip_back(&w->i, w->n, w->rtt, &w->t_send);
}

void bl_run_w1(bl_w1 *w, void (*wake_b)(void), void (*run)(void), long long (*stop_b)(void)) {
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    long long m0 = bl_mallocs();
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    w->t_send = t0;
    wake_b();
    run();
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    long long m1 = bl_mallocs();
    long long sc1 = bl_sc_read(sc);
    long long peer_sc = stop_b();
    bl_sc_close(sc);
    bl_report_w1(w->n, (double)(t1 - t0) / 1e9, w->rtt, u0, u1, m0, m1, sc0, sc1, peer_sc);
}

void bl_w12_listen_address(struct sockaddr_in *sin) {
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_port = 0;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

void bl_tcp_nodelay(int fd) {
    int on = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) perror("setsockopt TCP_NODELAY");
}

void bl_run_w12(bl_w1 *w, void (*send_first)(void), void (*run)(void), long long (*stop_b)(void)) {
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    uint64_t t0 = bl_now_ns();
    w->t_send = t0;
    send_first();
    run();
    uint64_t t1 = bl_now_ns();
    long long sc1 = bl_sc_read(sc);
    long long peer_sc = stop_b();
    bl_sc_close(sc);
    bl_report_w5("w12", w->n, t0, t1, w->rtt, sc0, sc1, peer_sc);
}

void bl_w2_begin(bl_w2 *w, long n) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->late = calloc((size_t)n, sizeof(double));
}

bool bl_w2_fired(bl_w2 *w, long i) {
    uint64_t now = bl_now_ns();
    w->late[i] = ((double)now - ((double)w->t0 + bl_spread(i) * 1e9)) / 1e3;
    w->t_last = now;
    return ++w->fired == w->n;
}

void bl_w3_begin(bl_w3 *w, double secs) {
    memset(w, 0, sizeof *w);
    w->cap = (long)(secs * 1000) * 2 + 16;
    w->jit = calloc((size_t)w->cap, sizeof(double));
}

void bl_w3_fired(bl_w3 *w) {
    uint64_t now = bl_now_ns();
    double since = (double)now - (double)w->first;
    double grid = floor(since / 1e6) * 1e6;
    if (w->fires < w->cap) w->jit[w->fires] = (since - grid) / 1e3;
    w->fires++;
}

void bl_w5_open(bl_w5 *w, long n) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->rtt = calloc((size_t)n, sizeof(double));
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, w->sv) != 0) {
        perror("socketpair");
        exit(1);
    }
}

void bl_w5_echo(int fd) {
    char c[64];
    ssize_t r = read(fd, c, sizeof c);
    for (ssize_t k = 0; k < r; k++)
        if (write(fd, "x", 1) != 1) perror("write");
}

bool bl_w5_answered(bl_w5 *w) {
    char c[64];
    ssize_t r = read(w->sv[0], c, sizeof c);
    if (r <= 0) return false;
    if (round_trip_back(&w->i, w->n, w->rtt, &w->t_send)) return true;
    if (write(w->sv[0], "x", 1) != 1) perror("write");
    return false;
}

void bl_run_w5(const char *name, bl_w5 *w, void (*run)(void), long long (*stop_b)(void)) {
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    uint64_t t0 = bl_now_ns();
    w->t_send = t0;
    if (write(w->sv[0], "x", 1) != 1) perror("write");
    run();
    uint64_t t1 = bl_now_ns();
    long long sc1 = bl_sc_read(sc);
    long long peer_sc = stop_b();
    bl_sc_close(sc);
    bl_report_w5(name, w->n, t0, t1, w->rtt, sc0, sc1, peer_sc);
}
