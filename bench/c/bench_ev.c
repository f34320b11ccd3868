/*
 * bench_ev.c: the workloads W1-W7 on libev (the idioms a libev user writes).
 *
 * W1/W7 wake: ev_async_send. W2/W3: ev_timer. W4: a hand-written
 * mutex-protected queue of malloc'd nodes drained by an ev_idle watcher.
 * W5: ev_io on each end of a socketpair. W6: a far-future timer.
 */
#define _GNU_SOURCE
#include "benchlib.h"
#include "bl_node_queue.h"
#include <ev.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
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

static void peer_async(struct ev_loop *loop, ev_async *w, int revents) {
    peer_thread *p = w->data;
    if (atomic_load(&p->stop)) {
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    if (p->cb) p->cb(loop, w, revents);
}

static void *peer_main(void *arg) {
    peer_thread *p = arg;
    p->loop = ev_loop_new(EVFLAG_AUTO);
    ev_async_init(&p->async, peer_async);
    p->async.data = p;
    ev_async_start(p->loop, &p->async);
    if (p->setup) p->setup(p->loop);
    bl_sc_span span = bl_sc_begin();
    atomic_store(&p->ready, 1);
    ev_run(p->loop, 0);
    p->sc = bl_sc_end(&span);
    return NULL;
}

static void peer_start(peer_thread *p, async_cb cb, void (*setup)(struct ev_loop *)) {
    memset(p, 0, sizeof *p);
    p->cb = cb;
    p->setup = setup;
    pthread_create(&p->thread, NULL, peer_main, p);
    while (!atomic_load(&p->ready)) bl_spin_pause();
}

/* Stops the thread; its system calls while it ran, or -1. */
static long long peer_stop(peer_thread *p) {
    atomic_store(&p->stop, 1);
    ev_async_send(p->loop, &p->async);
    pthread_join(p->thread, NULL);
    return p->sc;
}

/* ---- W1 ---------------------------------------------------------------------- */

static bl_w1 w1;
static struct ev_loop *w1_a;
static ev_async w1_async_a;
static peer_thread w1_b;

static void w1_on_b(struct ev_loop *loop, ev_async *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
    ev_async_send(w1_a, &w1_async_a);
}

static void w1_wake_b(void) {
    ev_async_send(w1_b.loop, &w1_b.async);
}

static void w1_on_a(struct ev_loop *loop, ev_async *w, int revents) {
    (void)w;
    (void)revents;
    if (bl_w1_back(&w1)) ev_break(loop, EVBREAK_ALL);
    else w1_wake_b();
}

static void w1_run(void) {
    ev_run(w1_a, 0);
}
static long long w1_stop_b(void) {
    return peer_stop(&w1_b);
}

static void run_w1(double arg) {
    bl_w1_begin(&w1, (long)arg);
    w1_a = ev_default_loop(0);
    ev_async_init(&w1_async_a, w1_on_a);
    ev_async_start(w1_a, &w1_async_a);
    peer_start(&w1_b, w1_on_b, NULL);
    bl_run_w1(&w1, w1_wake_b, w1_run, w1_stop_b);
}

/* ---- W2 ---------------------------------------------------------------------- */

static bl_w2 w2;

static void w2_fire(struct ev_loop *loop, ev_timer *t, int revents) {
    (void)loop;
    (void)revents;
    bl_w2_fired(&w2, (long)(intptr_t)t->data);
}

static void run_w2(double arg) {
    bl_w2_begin(&w2, (long)arg);
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

static bl_w3 w3;

static void w3_fire(struct ev_loop *loop, ev_timer *t, int revents) {
    (void)loop;
    (void)t;
    (void)revents;
    bl_w3_fired(&w3);
}

static void w3_stop(struct ev_loop *loop, ev_timer *t, int revents) {
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void run_w3(double secs) {
    bl_w3_begin(&w3, secs);
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
    bl_report_w3("w3", w3.fires, w3.cap, w3.jit, w3.first, t0, t1, u0, u1, -1);
}

/* ---- W4 ---------------------------------------------------------------------- */

static bl_node_queue queue = BL_NODE_QUEUE_INIT;
static struct {
    ev_idle idle;
    struct ev_loop *loop;
    long done, n;
} q;

static void q_drain(struct ev_loop *loop, ev_idle *w, int revents) {
    (void)revents;
    bl_node *list = bl_node_queue_take(&queue);
    ev_idle_stop(loop, w);
    if (bl_node_queue_run(&queue, list)) ev_idle_start(loop, w);
}

static void q_perform(void (*fn)(void *), void *info) {
    if (bl_node_queue_push(&queue, fn, info) && !ev_is_active(&q.idle)) ev_idle_start(q.loop, &q.idle);
}

static void w4_fn(void *info) {
    (void)info;
    if (++q.done == q.n) ev_break(q.loop, EVBREAK_ALL);
}

static void run_w4(double arg) {
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
    bl_report_w4(q.n, t0, t1, t2, m0, m1);
}

/* ---- W5 ---------------------------------------------------------------------- */

static bl_w5 w5;
static ev_io w5_ia, w5_ib;
static peer_thread w5_b;

static void w5_on_b(struct ev_loop *loop, ev_io *w, int revents) {
    (void)loop;
    (void)revents;
    bl_w5_echo(w->fd);
}

static void w5_on_a(struct ev_loop *loop, ev_io *w, int revents) {
    (void)w;
    (void)revents;
    if (bl_w5_answered(&w5)) ev_break(loop, EVBREAK_ALL);
}

static void w5_setup_b(struct ev_loop *loop) {
    ev_io_init(&w5_ib, w5_on_b, w5.sv[1], EV_READ);
    ev_io_start(loop, &w5_ib);
}

static void w5_run(void) {
    ev_run(ev_default_loop(0), 0);
}

static long long w5_stop_b(void) {
    return peer_stop(&w5_b);
}

static void run_w5(double arg) {
    bl_w5_open(&w5, (long)arg);
    ev_io_init(&w5_ia, w5_on_a, w5.sv[0], EV_READ);
    ev_io_start(ev_default_loop(0), &w5_ia);
    peer_start(&w5_b, NULL, w5_setup_b);
    bl_run_w5("w5", &w5, w5_run, w5_stop_b);
}

/* ---- W6 ---------------------------------------------------------------------- */

static void never(struct ev_loop *loop, ev_timer *t, int revents) {
    (void)loop;
    (void)t;
    (void)revents;
}

static void run_w6(double secs) {
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
    bl_report_w6(u0, u1, bl_threads(), sc0, sc1);
    bl_sc_close(sc);
}

/* ---- W7 ---------------------------------------------------------------------- */

static peer_thread w7_b;
static void w7_on_b(struct ev_loop *loop, ev_async *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
    bl_w7_woken();
}

static void w7_wake(void) {
    ev_async_send(w7_b.loop, &w7_b.async);
}

static long long w7_stop(void) {
    return peer_stop(&w7_b);
}

static void run_w7(double arg) {
    static const bl_w7_peer peer = {w7_wake, NULL, NULL, w7_wake, w7_stop};
    peer_start(&w7_b, w7_on_b, NULL);
    bl_run_w7((long)arg, &peer);
}

/* ---- W8: 4 pairs of loops ping-ponging (ev_async both ways) -------------- */

#define W8_PAIRS 4
typedef struct {
    bl_pair base; /* first: the driver fills it */
    struct ev_loop *la, *lb;
    ev_async aa, ab;
    atomic_int stop_b;
} w8_pair;
static w8_pair w8[W8_PAIRS];

static void w8_on_b(struct ev_loop *loop, ev_async *w, int revents) {
    (void)revents;
    w8_pair *p = w->data;
    if (atomic_load(&p->stop_b)) {
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    ev_async_send(p->la, &p->aa);
}

static void w8_on_a(struct ev_loop *loop, ev_async *w, int revents) {
    (void)revents;
    w8_pair *p = w->data;
    if (++p->base.done == p->base.n) {
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    ev_async_send(p->lb, &p->ab);
}

static void *w8_b_main(void *arg) {
    w8_pair *p = arg;
    p->lb = ev_loop_new(EVFLAG_AUTO);
    ev_async_init(&p->ab, w8_on_b);
    p->ab.data = p;
    ev_async_start(p->lb, &p->ab);
    bl_pair_ready();
    ev_run(p->lb, 0);
    ev_loop_destroy(p->lb);
    return NULL;
}

static void *w8_a_main(void *arg) {
    w8_pair *p = arg;
    p->la = ev_loop_new(EVFLAG_AUTO);
    ev_async_init(&p->aa, w8_on_a);
    p->aa.data = p;
    ev_async_start(p->la, &p->aa);
    bl_pair_ready();
    bl_pair_wait_go();
    ev_async_send(p->lb, &p->ab);
    ev_run(p->la, 0);
    ev_loop_destroy(p->la);
    return NULL;
}

static void w8_stop_b(void *pair) {
    w8_pair *p = pair;
    atomic_store(&p->stop_b, 1);
    ev_async_send(p->lb, &p->ab);
}

static void run_w8(double arg) {
    bl_run_w8((long)arg, w8, W8_PAIRS, sizeof *w8, w8_a_main, w8_b_main, w8_stop_b);
}

/* ---- W9a: N eventfds watched (ev_io), one active ------------------------- */

static struct { long events, want; } w9a;

static void w9a_idle(struct ev_loop *loop, ev_io *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
}
static void w9a_active(struct ev_loop *loop, ev_io *w, int revents) {
    (void)revents;
    uint64_t v;
    if (read(w->fd, &v, sizeof v) != sizeof v) return;
    if (++w9a.events == w9a.want) {
        ev_break(loop, EVBREAK_ALL);
        return;
    }
    v = 1;
    if (write(w->fd, &v, sizeof v) != sizeof v) perror("write");
}

static void run_w9a(double arg) {
    long n = (long)arg;
    w9a.want = 50000;
    struct ev_loop *loop = ev_default_loop(0);
    int before = bl_open_fds();
    ev_io *ios = calloc((size_t)n, sizeof *ios);
    for (long i = 0; i < n; i++) {
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            perror("eventfd");
            exit(1);
        }
        ev_io_init(&ios[i], i == n / 2 ? w9a_active : w9a_idle, fd, EV_READ);
        ev_io_start(loop, &ios[i]);
    }
    ev_run(loop, EVRUN_NOWAIT);
    int after = bl_open_fds();
    uint64_t v = 1;
    if (write(ios[n / 2].fd, &v, sizeof v) != sizeof v) perror("write");
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    ev_run(loop, 0);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w9a(w9a.events, t0, t1, u0, u1, after - before - n);
}

/* ---- W9d: T loops on T threads, all woken by one thread ------------------ */

#define W9D_MAX 64
static peer_thread w9d_loops[W9D_MAX];
static void w9d_on(struct ev_loop *loop, ev_async *w, int revents) {
    (void)loop;
    (void)w;
    (void)revents;
    bl_w9d_handled();
}

static void w9d_start(int i) {
    peer_start(&w9d_loops[i], w9d_on, NULL);
}
static void w9d_wake(int i) {
    ev_async_send(w9d_loops[i].loop, &w9d_loops[i].async);
}
static void w9d_stop(int i) {
    peer_stop(&w9d_loops[i]);
}

static void run_w9d(double arg) {
    bl_run_w9d(arg, W9D_MAX, w9d_start, w9d_wake, w9d_stop);
}

static const bl_workload workloads[] = {
    {"w1", run_w1, 100000},  {"w2", run_w2, 1000000}, {"w3", run_w3, 2.0},   {"w4", run_w4, 1000000},
    {"w5", run_w5, 100000},  {"w6", run_w6, 2.0},     {"w7", run_w7, 20000}, {"w8", run_w8, 100000},
    {"w9a", run_w9a, 10000}, {"w9d", run_w9d, 8},
};

int main(int argc, char **argv) {
    return bl_main(argc, argv, workloads, (int)(sizeof workloads / sizeof *workloads), 3);
}
