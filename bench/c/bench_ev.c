/*
 * bench_ev.c: the workloads W1-W7 on libev (the idioms a libev user writes).
 *
 * W1/W7 wake: ev_async_send. W2/W3: ev_timer. W4: a hand-written
 * mutex-protected queue of malloc'd nodes drained by an ev_idle watcher.
 * W5: ev_io on each end of a socketpair. W6: a far-future timer.
 */
#define _GNU_SOURCE
#include "benchlib.h"
#include <ev.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

typedef void (*async_cb)(struct ev_loop *loop, ev_async *w, int revents);

typedef struct {
    pthread_t thread;
    struct ev_loop *loop;
    ev_async async;
    async_cb cb;
    void (*setup)(struct ev_loop *loop);
    atomic_int ready, stop;
    long long sc;
} peer_thread;

static void peer_async(struct ev_loop *loop, ev_async *w, int revents)
{
    peer_thread *p = w->data;
    if (atomic_load(&p->stop)) { ev_break(loop, EVBREAK_ALL); return; }
    if (p->cb) p->cb(loop, w, revents);
}

static void *peer_main(void *arg)
{
    peer_thread *p = arg;
    p->loop = ev_loop_new(EVFLAG_AUTO);
    ev_async_init(&p->async, peer_async);
    p->async.data = p;
    ev_async_start(p->loop, &p->async);
    if (p->setup) p->setup(p->loop);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    atomic_store(&p->ready, 1);
    ev_run(p->loop, 0);
    long long sc1 = bl_sc_read(sc);
    p->sc = (sc0 >= 0 && sc1 >= 0) ? sc1 - sc0 : -1;
    bl_sc_close(sc);
    return NULL;
}

static void peer_start(peer_thread *p, async_cb cb, void (*setup)(struct ev_loop *))
{
    memset(p, 0, sizeof *p);
    p->cb = cb;
    p->setup = setup;
    pthread_create(&p->thread, NULL, peer_main, p);
    while (!atomic_load(&p->ready)) bl_spin_pause();
}

static void peer_stop(peer_thread *p)
{
    atomic_store(&p->stop, 1);
    ev_async_send(p->loop, &p->async);
    pthread_join(p->thread, NULL);
}

/* ---- W1 ---------------------------------------------------------------------- */

static struct {
    struct ev_loop *a;
    ev_async async_a;
    peer_thread b;
    long n, i;
    double *rtt;
    uint64_t t_send;
} w1;

static void w1_on_b(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop; (void)w; (void)revents;
    ev_async_send(w1.a, &w1.async_a);
}

static void w1_on_a(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)w; (void)revents;
    uint64_t now = bl_now_ns();
    w1.rtt[w1.i++] = (double)(now - w1.t_send) / 1e3;
    if (w1.i == w1.n) { ev_break(loop, EVBREAK_ALL); return; }
    w1.t_send = bl_now_ns();
    ev_async_send(w1.b.loop, &w1.b.async);
}

static void run_w1(double arg)
{
    w1.n = (long)arg;
    w1.rtt = calloc((size_t)w1.n, sizeof(double));
    w1.a = ev_default_loop(0);
    ev_async_init(&w1.async_a, w1_on_a);
    ev_async_start(w1.a, &w1.async_a);
    peer_start(&w1.b, w1_on_b, NULL);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    long long m0 = bl_mallocs();
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    w1.t_send = t0;
    ev_async_send(w1.b.loop, &w1.b.async);
    ev_run(w1.a, 0);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    long long m1 = bl_mallocs();
    long long sc1 = bl_sc_read(sc);
    peer_stop(&w1.b);
    bl_sc_close(sc);
    double secs = (double)(t1 - t0) / 1e9;
    bl_report_w1(w1.n, secs, w1.rtt, u0, u1, m0, m1, sc0, sc1, w1.b.sc);
}

/* ---- W2 ---------------------------------------------------------------------- */

static struct { long n, fired; uint64_t t0, t_last; double *late; } w2;

static void w2_fire(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop; (void)revents;
    long i = (long)(intptr_t)t->data;
    uint64_t now = bl_now_ns();
    w2.late[i] = ((double)now - ((double)w2.t0 + bl_spread(i) * 1e9)) / 1e3;
    w2.t_last = now;
    w2.fired++;
}

static void run_w2(double arg)
{
    w2.n = (long)arg;
    w2.late = calloc((size_t)w2.n, sizeof(double));
    ev_timer *timers = calloc((size_t)w2.n, sizeof(ev_timer));
    struct ev_loop *loop = ev_default_loop(0);
    bl_usage u0 = bl_usage_now(false);
    long long m0 = bl_mallocs();
    ev_now_update(loop);
    w2.t0 = bl_now_ns();
    for (long i = 0; i < w2.n; i++) {
        ev_timer_init(&timers[i], w2_fire, bl_spread(i), 0.);
        timers[i].data = (void *)(intptr_t)i;
        ev_timer_start(loop, &timers[i]);
    }
    uint64_t t_added = bl_now_ns();
    long long m1 = bl_mallocs();
    ev_run(loop, 0);
    bl_usage u1 = bl_usage_now(false);
    bl_report_w2(w2.n, w2.t0, t_added, w2.t_last, w2.fired, w2.late, u0, u1, m0, m1);
}

/* ---- W3 ---------------------------------------------------------------------- */

static struct { uint64_t first; long fires, cap; double *jit; } w3;

static void w3_fire(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)loop; (void)t; (void)revents;
    uint64_t now = bl_now_ns();
    double since = (double)now - (double)w3.first;
    double grid = floor(since / 1e6) * 1e6;
    if (w3.fires < w3.cap) w3.jit[w3.fires] = (since - grid) / 1e3;
    w3.fires++;
}

static void w3_stop(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t; (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void run_w3(double secs)
{
    w3.cap = (long)(secs * 1000) * 2 + 16;
    w3.jit = calloc((size_t)w3.cap, sizeof(double));
    struct ev_loop *loop = ev_default_loop(0);
    ev_timer t, stop;
    bl_usage u0 = bl_usage_now(false);
    ev_now_update(loop);
    uint64_t t0 = bl_now_ns();
    w3.first = t0 + 1000000;
    ev_timer_init(&t, w3_fire, 0.001, 0.001);
    ev_timer_init(&stop, w3_stop, secs, 0.);
    ev_timer_start(loop, &t);
    ev_timer_start(loop, &stop);
    ev_run(loop, 0);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    long n = w3.fires < w3.cap ? w3.fires : w3.cap;
    bl_result_begin("w3");
    bl_result("fires", (double)w3.fires);
    bl_result("expected", floor((double)(t1 - w3.first) / 1e6) + 1);
    bl_result("jit_mean_us", bl_mean(w3.jit, n));
    bl_result("jit_p99_us", bl_percentile(w3.jit, n, 99));
    bl_result("cpu_pct", (u1.cpu_us - u0.cpu_us) / ((double)(t1 - t0) / 1e3) * 100);
    bl_result_end();
}

/* ---- W4 ---------------------------------------------------------------------- */

typedef struct node { void (*fn)(void *); void *info; struct node *next; } node;
static struct {
    pthread_mutex_t lock;
    node *head, *tail;
    ev_idle idle;
    struct ev_loop *loop;
    long done, n;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void q_drain(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)revents;
    pthread_mutex_lock(&q.lock);
    node *list = q.head;
    q.head = q.tail = NULL;
    pthread_mutex_unlock(&q.lock);
    ev_idle_stop(loop, w);
    while (list) {
        node *next = list->next;
        list->fn(list->info);
        free(list);
        list = next;
    }
    pthread_mutex_lock(&q.lock);
    if (q.head) ev_idle_start(loop, w);
    pthread_mutex_unlock(&q.lock);
}

static void q_perform(void (*fn)(void *), void *info)
{
    node *nd = malloc(sizeof *nd);
    nd->fn = fn;
    nd->info = info;
    nd->next = NULL;
    pthread_mutex_lock(&q.lock);
    int was_empty = q.head == NULL;
    if (q.tail) q.tail->next = nd; else q.head = nd;
    q.tail = nd;
    pthread_mutex_unlock(&q.lock);
    if (was_empty && !ev_is_active(&q.idle)) ev_idle_start(q.loop, &q.idle);
}

static void w4_fn(void *info)
{
    (void)info;
    if (++q.done == q.n) ev_break(q.loop, EVBREAK_ALL);
}

static void run_w4(double arg)
{
    q.n = (long)arg;
    q.loop = ev_default_loop(0);
    ev_idle_init(&q.idle, q_drain);
    long long m0 = bl_mallocs();
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < q.n; i++) q_perform(w4_fn, NULL);
    uint64_t t1 = bl_now_ns();
    ev_run(q.loop, 0);
    uint64_t t2 = bl_now_ns();
    long long m1 = bl_mallocs();
    bl_result_begin("w4");
    bl_result("n", (double)q.n);
    bl_result("blocks_per_s", (double)q.n / ((double)(t2 - t0) / 1e9));
    bl_result("enqueue_ns", (double)(t1 - t0) / (double)q.n);
    bl_result("drain_ns", (double)(t2 - t1) / (double)q.n);
    if (m0 >= 0) bl_result("mallocs_per_block", (double)(m1 - m0) / (double)q.n);
    bl_result_end();
}

/* ---- W5 ---------------------------------------------------------------------- */

static struct { int sv[2]; long n, i; double *rtt; uint64_t t_send; ev_io ia, ib; } w5;

static void w5_on_b(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop; (void)w; (void)revents;
    char c[64];
    ssize_t r = read(w5.sv[1], c, sizeof c);
    for (ssize_t k = 0; k < r; k++)
        if (write(w5.sv[1], "x", 1) != 1) perror("write");
}

static void w5_on_a(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)w; (void)revents;
    char c[64];
    ssize_t r = read(w5.sv[0], c, sizeof c);
    if (r <= 0) return;
    uint64_t now = bl_now_ns();
    w5.rtt[w5.i++] = (double)(now - w5.t_send) / 1e3;
    if (w5.i >= w5.n) { ev_break(loop, EVBREAK_ALL); return; }
    w5.t_send = bl_now_ns();
    if (write(w5.sv[0], "x", 1) != 1) perror("write");
}

static void w5_setup_b(struct ev_loop *loop)
{
    ev_io_init(&w5.ib, w5_on_b, w5.sv[1], EV_READ);
    ev_io_start(loop, &w5.ib);
}

static void run_w5(double arg)
{
    w5.n = (long)arg;
    w5.rtt = calloc((size_t)w5.n, sizeof(double));
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, w5.sv) != 0) { perror("socketpair"); exit(1); }
    struct ev_loop *a = ev_default_loop(0);
    ev_io_init(&w5.ia, w5_on_a, w5.sv[0], EV_READ);
    ev_io_start(a, &w5.ia);
    peer_thread b;
    peer_start(&b, NULL, w5_setup_b);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    uint64_t t0 = bl_now_ns();
    w5.t_send = t0;
    if (write(w5.sv[0], "x", 1) != 1) perror("write");
    ev_run(a, 0);
    uint64_t t1 = bl_now_ns();
    long long sc1 = bl_sc_read(sc);
    peer_stop(&b);
    bl_sc_close(sc);
    bl_result_begin("w5");
    bl_result("rt_per_s", (double)w5.n / ((double)(t1 - t0) / 1e9));
    bl_result("rtt_med_us", bl_median(w5.rtt, w5.n));
    bl_result("rtt_p99_us", bl_percentile(w5.rtt, w5.n, 99));
    if (sc0 >= 0 && b.sc >= 0) bl_result("sc_per_rt", (double)(sc1 - sc0 + b.sc) / (double)w5.n);
    bl_result_end();
}

/* ---- W6 ---------------------------------------------------------------------- */

static void never(struct ev_loop *loop, ev_timer *t, int revents) { (void)loop; (void)t; (void)revents; }

static void run_w6(double secs)
{
    struct ev_loop *loop = ev_default_loop(0);
    ev_timer far, stop;
    ev_timer_init(&far, never, 3600., 0.);
    ev_timer_init(&stop, w3_stop, secs, 0.);
    ev_timer_start(loop, &far);
    ev_timer_start(loop, &stop);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    bl_usage u0 = bl_usage_now(false);
    ev_run(loop, 0);
    bl_usage u1 = bl_usage_now(false);
    long long sc1 = bl_sc_read(sc);
    bl_result_begin("w6");
    bl_result("cpu_us", u1.cpu_us - u0.cpu_us);
    bl_result("vcsw", (double)(u1.vcsw - u0.vcsw));
    bl_result("ivcsw", (double)(u1.ivcsw - u0.ivcsw));
    bl_result("threads", bl_threads());
    if (sc0 >= 0) bl_result("syscalls", (double)(sc1 - sc0));
    bl_result_end();
    bl_sc_close(sc);
}

/* ---- W7 ---------------------------------------------------------------------- */

static atomic_long w7_count;
static atomic_int w7_phase, w7_busy, w7_release;

static void w7_on_b(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop; (void)w; (void)revents;
    if (atomic_load(&w7_phase) == 1) {
        atomic_store(&w7_phase, 0);
        atomic_store(&w7_busy, 1);
        while (!atomic_load(&w7_release)) bl_spin_pause();
        return;
    }
    atomic_fetch_add(&w7_count, 1);
}

static void run_w7(double arg)
{
    long n = (long)arg;
    peer_thread b;
    peer_start(&b, w7_on_b, NULL);
    int sc = bl_sc_open();
    bl_sleep_us(2000);
    long long waker = 0;
    for (long i = 0; i < n; i++) {
        long long c0 = bl_sc_read(sc);
        ev_async_send(b.loop, &b.async);
        long long c1 = bl_sc_read(sc);
        waker += c1 - c0;
        while (atomic_load(&w7_count) <= i) bl_spin_pause();
        bl_sleep_us(50);
    }
    atomic_store(&w7_phase, 1);
    ev_async_send(b.loop, &b.async);
    while (!atomic_load(&w7_busy)) bl_spin_pause();
    long long a0 = bl_sc_read(sc);
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < n; i++) ev_async_send(b.loop, &b.async);
    uint64_t t1 = bl_now_ns();
    long long a1 = bl_sc_read(sc);
    atomic_store(&w7_release, 1);
    bl_sleep_us(2000);
    peer_stop(&b);
    bl_sc_close(sc);
    bl_result_begin("w7");
    bl_result("n", (double)n);
    if (sc >= 0) {
        bl_result("sc_waker_per_wake", (double)waker / (double)n);
        bl_result("sc_loop_per_woken_pass", (double)b.sc / (double)n);
        bl_result("sc_per_wake_awake", (double)(a1 - a0) / (double)n);
    }
    bl_result("ns_per_wake_awake", (double)(t1 - t0) / (double)n);
    bl_result_end();
}


/* ---- W8: 4 pairs of loops ping-ponging (ev_async both ways) -------------- */

#define W8_PAIRS 4
typedef struct {
    struct ev_loop *la, *lb;
    ev_async aa, ab;
    long n, done;
    atomic_int ready, stop_b;
    pthread_t ta, tb;
} w8_pair;
static w8_pair w8[W8_PAIRS];
static atomic_int w8_go;

static void w8_on_b(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)revents;
    w8_pair *p = w->data;
    if (atomic_load(&p->stop_b)) { ev_break(loop, EVBREAK_ALL); return; }
    ev_async_send(p->la, &p->aa);
}

static void w8_on_a(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)revents;
    w8_pair *p = w->data;
    if (++p->done == p->n) { ev_break(loop, EVBREAK_ALL); return; }
    ev_async_send(p->lb, &p->ab);
}

static void *w8_b_main(void *arg)
{
    w8_pair *p = arg;
    p->lb = ev_loop_new(EVFLAG_AUTO);
    ev_async_init(&p->ab, w8_on_b);
    p->ab.data = p;
    ev_async_start(p->lb, &p->ab);
    atomic_fetch_add(&p->ready, 1);
    ev_run(p->lb, 0);
    ev_loop_destroy(p->lb);
    return NULL;
}

static void *w8_a_main(void *arg)
{
    w8_pair *p = arg;
    p->la = ev_loop_new(EVFLAG_AUTO);
    ev_async_init(&p->aa, w8_on_a);
    p->aa.data = p;
    ev_async_start(p->la, &p->aa);
    atomic_fetch_add(&p->ready, 1);
    while (!atomic_load(&w8_go)) bl_spin_pause();
    ev_async_send(p->lb, &p->ab);
    ev_run(p->la, 0);
    ev_loop_destroy(p->la);
    return NULL;
}

static void run_w8(double arg)
{
    long n = (long)arg;
    for (int k = 0; k < W8_PAIRS; k++) {
        memset(&w8[k], 0, sizeof w8[k]);
        w8[k].n = n;
        pthread_create(&w8[k].tb, NULL, w8_b_main, &w8[k]);
        while (atomic_load(&w8[k].ready) < 1) bl_spin_pause();
        pthread_create(&w8[k].ta, NULL, w8_a_main, &w8[k]);
        while (atomic_load(&w8[k].ready) < 2) bl_spin_pause();
    }
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    atomic_store(&w8_go, 1);
    for (int k = 0; k < W8_PAIRS; k++) pthread_join(w8[k].ta, NULL);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    for (int k = 0; k < W8_PAIRS; k++) {
        atomic_store(&w8[k].stop_b, 1);
        ev_async_send(w8[k].lb, &w8[k].ab);
        pthread_join(w8[k].tb, NULL);
    }
    double total = (double)n * W8_PAIRS;
    bl_result_begin("w8");
    bl_result("rt_per_s", total / ((double)(t1 - t0) / 1e9));
    bl_result("cpu_us_per_rt", (u1.cpu_us - u0.cpu_us) / total);
    bl_result("csw_per_rt", (double)(u1.vcsw - u0.vcsw + u1.ivcsw - u0.ivcsw) / total);
    bl_result_end();
}

/* ---- W9a: N eventfds watched (ev_io), one active ------------------------- */

static struct { long events, want; } w9a;

static void w9a_idle(struct ev_loop *loop, ev_io *w, int revents) { (void)loop; (void)w; (void)revents; }
static void w9a_active(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)revents;
    uint64_t v;
    if (read(w->fd, &v, sizeof v) != sizeof v) return;
    if (++w9a.events == w9a.want) { ev_break(loop, EVBREAK_ALL); return; }
    v = 1;
    if (write(w->fd, &v, sizeof v) != sizeof v) perror("write");
}

static int open_fd_count(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n - 3;
}

static void run_w9a(double arg)
{
    long n = (long)arg;
    w9a.want = 50000;
    struct ev_loop *loop = ev_default_loop(0);
    int before = open_fd_count();
    ev_io *ios = calloc((size_t)n, sizeof *ios);
    for (long i = 0; i < n; i++) {
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) { perror("eventfd"); exit(1); }
        ev_io_init(&ios[i], i == n / 2 ? w9a_active : w9a_idle, fd, EV_READ);
        ev_io_start(loop, &ios[i]);
    }
    ev_run(loop, EVRUN_NOWAIT);
    int after = open_fd_count();
    uint64_t v = 1;
    if (write(ios[n / 2].fd, &v, sizeof v) != sizeof v) perror("write");
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    ev_run(loop, 0);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_result_begin("w9a");
    bl_result("ns_per_event", (double)(t1 - t0) / (double)w9a.events);
    bl_result("cpu_ns_per_event", (u1.cpu_us - u0.cpu_us) * 1e3 / (double)w9a.events);
    bl_result("extra_fds", (double)(after - before - n));
    bl_result_end();
}

/* ---- W9d: T loops on T threads, all woken by one thread ------------------ */

#define W9D_MAX 64
static peer_thread w9d_loops[W9D_MAX];
static atomic_long w9d_handled;
static void w9d_on(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)loop; (void)w; (void)revents;
    atomic_fetch_add(&w9d_handled, 1);
}

static void run_w9d(double arg)
{
    int t = (int)arg;
    if (t < 1) t = 1;
    if (t > W9D_MAX) t = W9D_MAX;
    for (int i = 0; i < t; i++) peer_start(&w9d_loops[i], w9d_on, NULL);
    long rounds = 40000 / t;
    if (rounds < 200) rounds = 200;
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < t; i++) ev_async_send(w9d_loops[i].loop, &w9d_loops[i].async);
        long want = (r + 1) * t;
        while (atomic_load(&w9d_handled) < want) sched_yield();
    }
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    for (int i = 0; i < t; i++) peer_stop(&w9d_loops[i]);
    double total = (double)rounds * t;
    bl_result_begin("w9d");
    bl_result("wakeups_per_s", total / ((double)(t1 - t0) / 1e9));
    bl_result("cpu_us_per_wakeup", (u1.cpu_us - u0.cpu_us) / total);
    bl_result_end();
}

static const bl_workload workloads[] = {
    { "w1", run_w1, 100000 }, { "w2", run_w2, 1000000 }, { "w3", run_w3, 2.0 },
    { "w4", run_w4, 1000000 }, { "w5", run_w5, 100000 }, { "w6", run_w6, 2.0 },
    { "w7", run_w7, 20000 }, { "w8", run_w8, 100000 }, { "w9a", run_w9a, 10000 },
    { "w9d", run_w9d, 8 },
};

int main(int argc, char **argv)
{
    return bl_main(argc, argv, workloads, (int)(sizeof workloads / sizeof *workloads), 3);
}
