/*
 * bench_uv.c: the workloads W1-W7 on libuv (the idioms a libuv user writes).
 *
 * W1/W7 wake: uv_async_send. W2/W3: uv_timer (whole milliseconds). W4: a
 * hand-written mutex-protected queue of malloc'd nodes drained by a uv_idle
 * watcher. W5: uv_poll on each end of a socketpair. W6: a far-future timer.
 * W12: a uv_tcp echo over loopback (uv_read_start, uv_try_write).
 */
#define _GNU_SOURCE
#include "benchlib.h"
#include "bl_node_queue.h"
#include <uv.h>

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

/* ---- a second thread with its own loop and an async handle ---------------- */

typedef struct {
    pthread_t thread;
    uv_loop_t loop;
    uv_async_t async;
    uv_async_cb cb;
    void (*setup)(uv_loop_t *loop);
    atomic_int ready, stop;
    long long sc;
} peer_thread;

static void peer_async(uv_async_t *h) {
    peer_thread *p = h->data;
    if (atomic_load(&p->stop)) {
        uv_stop(&p->loop);
        return;
    }
    if (p->cb) p->cb(h);
}

static void *peer_main(void *arg) {
    peer_thread *p = arg;
    uv_loop_init(&p->loop);
    uv_async_init(&p->loop, &p->async, peer_async);
    p->async.data = p;
    if (p->setup) p->setup(&p->loop);
    bl_sc_span span = bl_sc_begin();
    atomic_store(&p->ready, 1);
    uv_run(&p->loop, UV_RUN_DEFAULT);
    p->sc = bl_sc_end(&span);
    return NULL;
}

static void peer_start(peer_thread *p, uv_async_cb cb, void (*setup)(uv_loop_t *)) {
    memset(p, 0, sizeof *p);
    p->cb = cb;
    p->setup = setup;
    pthread_create(&p->thread, NULL, peer_main, p);
    while (!atomic_load(&p->ready)) bl_spin_pause();
}

/* Stops the thread; its system calls while it ran, or -1. */
static long long peer_stop(peer_thread *p) {
    atomic_store(&p->stop, 1);
    uv_async_send(&p->async);
    pthread_join(p->thread, NULL);
    return p->sc;
}

/* ---- W1 ---------------------------------------------------------------------- */

static bl_w1 w1;
static uv_async_t w1_async_a;
static peer_thread w1_b;

static void w1_on_b(uv_async_t *h) {
    (void)h;
    uv_async_send(&w1_async_a);
}
static void w1_wake_b(void) {
    uv_async_send(&w1_b.async);
}

static void w1_on_a(uv_async_t *h) {
    if (bl_w1_back(&w1)) uv_stop(h->loop);
    else w1_wake_b();
}

static void w1_run(void) {
    uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}
static long long w1_stop_b(void) {
    return peer_stop(&w1_b);
}

static void run_w1(double arg) {
    bl_w1_begin(&w1, (long)arg);
    uv_async_init(uv_default_loop(), &w1_async_a, w1_on_a);
    peer_start(&w1_b, w1_on_b, NULL);
    bl_run_w1(&w1, w1_wake_b, w1_run, w1_stop_b);
}

/* ---- W2 ---------------------------------------------------------------------- */

static bl_w2 w2;

static void w2_fire(uv_timer_t *t) {
    bl_w2_fired(&w2, (long)(intptr_t)t->data);
}

static void run_w2(double arg) {
    bl_w2_begin(&w2, (long)arg);
    uv_timer_t *timers = calloc((size_t)w2.n, sizeof(uv_timer_t));
    uv_loop_t *loop = uv_default_loop();
    bl_usage u0 = bl_usage_now(false);
    long long m0 = bl_mallocs();
    uv_update_time(loop);
    w2.t0 = bl_now_ns();
    for (long i = 0; i < w2.n; i++) {
        uv_timer_init(loop, &timers[i]);
        timers[i].data = (void *)(intptr_t)i;
        uv_timer_start(&timers[i], w2_fire, (uint64_t)ceil(bl_spread(i) * 1000.0), 0);
    }
    uint64_t t_added = bl_now_ns();
    long long m1 = bl_mallocs();
    uv_run(loop, UV_RUN_DEFAULT);
    bl_usage u1 = bl_usage_now(false);
    bl_report_w2(w2.n, w2.t0, t_added, w2.t_last, w2.fired, w2.late, u0, u1, m0, m1);
}

/* ---- W3 ---------------------------------------------------------------------- */

static bl_w3 w3;

static void w3_fire(uv_timer_t *t) {
    (void)t;
    bl_w3_fired(&w3);
}

static void w3_stop(uv_timer_t *t) {
    uv_stop(t->loop);
}

static void run_w3(double secs) {
    bl_w3_begin(&w3, secs);
    uv_loop_t *loop = uv_default_loop();
    uv_timer_t t, stop;
    uv_timer_init(loop, &t);
    uv_timer_init(loop, &stop);
    bl_usage u0 = bl_usage_now(false);
    uv_update_time(loop);
    uint64_t t0 = bl_now_ns();
    w3.first = t0 + 1000000;
    uv_timer_start(&t, w3_fire, 1, 1);
    uv_timer_start(&stop, w3_stop, (uint64_t)(secs * 1000), 0);
    uv_run(loop, UV_RUN_DEFAULT);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w3("w3", w3.fires, w3.cap, w3.jit, w3.first, t0, t1, u0, u1, -1);
}

/* ---- W4: a hand-written perform queue drained by an idle watcher -------------- */

static bl_node_queue queue = BL_NODE_QUEUE_INIT;
static struct {
    uv_idle_t idle;
    long done, n;
} q;

static void q_drain(uv_idle_t *h) {
    bl_node *list = bl_node_queue_take(&queue);
    uv_idle_stop(h);
    if (bl_node_queue_run(&queue, list)) uv_idle_start(h, q_drain);
}

static void q_perform(void (*fn)(void *), void *info) /* same thread */
{
    if (bl_node_queue_push(&queue, fn, info) && !uv_is_active((uv_handle_t *)&q.idle)) uv_idle_start(&q.idle, q_drain);
}

static void w4_fn(void *info) {
    (void)info;
    if (++q.done == q.n) uv_stop(uv_default_loop());
}

static void run_w4(double arg) {
    q.n = (long)arg;
    uv_loop_t *loop = uv_default_loop();
    uv_idle_init(loop, &q.idle);
    long long m0 = bl_mallocs();
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < q.n; i++) q_perform(w4_fn, NULL);
    uint64_t t1 = bl_now_ns();
    uv_run(loop, UV_RUN_DEFAULT);
    uint64_t t2 = bl_now_ns();
    long long m1 = bl_mallocs();
    bl_report_w4(q.n, t0, t1, t2, m0, m1);
}

/* ---- W5 ---------------------------------------------------------------------- */

static bl_w5 w5;
static uv_poll_t w5_pa, w5_pb;
static peer_thread w5_b;

static void w5_on_b(uv_poll_t *h, int status, int events) {
    (void)h;
    (void)status;
    (void)events;
    bl_w5_echo(w5.sv[1]);
}

static void w5_on_a(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    if (bl_w5_answered(&w5)) uv_stop(h->loop);
}

static void w5_setup_b(uv_loop_t *loop) {
    uv_poll_init(loop, &w5_pb, w5.sv[1]);
    uv_poll_start(&w5_pb, UV_READABLE, w5_on_b);
}

static void w5_run(void) {
    uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}

static long long w5_stop_b(void) {
    return peer_stop(&w5_b);
}

static void run_w5(double arg) {
    bl_w5_open(&w5, (long)arg);
    uv_poll_init(uv_default_loop(), &w5_pa, w5.sv[0]);
    uv_poll_start(&w5_pa, UV_READABLE, w5_on_a);
    peer_start(&w5_b, NULL, w5_setup_b);
    bl_run_w5("w5", &w5, w5_run, w5_stop_b);
}

/* ---- W12 ---------------------------------------------------------------------- */
/* A uv_tcp echo: the peer loop listens and accepts, each end reads with
   uv_read_start into its own buffer and answers with uv_try_write (a small
   write to a socket with room goes out at once; no write request to track). */

static struct {
    bl_w1 rt;
    peer_thread b;
    uv_tcp_t listener, server, client;
    uv_connect_t connecting;
    struct sockaddr_in address;
    char buf_b[65536], buf_a[65536];
    int connected;
    atomic_int accepted;
} w12;

static void w12_alloc_b(uv_handle_t *h, size_t size, uv_buf_t *buf) {
    (void)h;
    (void)size;
    *buf = uv_buf_init(w12.buf_b, sizeof w12.buf_b);
}
static void w12_alloc_a(uv_handle_t *h, size_t size, uv_buf_t *buf) {
    (void)h;
    (void)size;
    *buf = uv_buf_init(w12.buf_a, sizeof w12.buf_a);
}

static void w12_send(uv_stream_t *s, char *bytes, size_t n) {
    uv_buf_t b = uv_buf_init(bytes, (unsigned)n);
    if (uv_try_write(s, &b, 1) != (int)n) {
        fprintf(stderr, "w12: uv_try_write did not write it all\n");
        exit(1);
    }
}

static void w12_echo(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    if (nread > 0) w12_send(s, buf->base, (size_t)nread);
}

static void w12_accepted(uv_stream_t *listener, int status) {
    if (status != 0) return;
    uv_tcp_init(listener->loop, &w12.server);
    if (uv_accept(listener, (uv_stream_t *)&w12.server) != 0) return;
    uv_tcp_nodelay(&w12.server, 1);
    uv_read_start((uv_stream_t *)&w12.server, w12_alloc_b, w12_echo);
    atomic_store(&w12.accepted, 1);
}

static void w12_listen_b(uv_loop_t *loop) {
    bl_w12_listen_address(&w12.address);
    uv_tcp_init(loop, &w12.listener);
    if (uv_tcp_bind(&w12.listener, (const struct sockaddr *)&w12.address, 0) != 0 ||
        uv_listen((uv_stream_t *)&w12.listener, 128, w12_accepted) != 0) {
        fprintf(stderr, "w12: cannot listen\n");
        exit(1);
    }
    int len = sizeof w12.address;
    uv_tcp_getsockname(&w12.listener, (struct sockaddr *)&w12.address, &len);
}

static void w12_answered(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    if (nread <= 0) return;
    if (bl_w1_back(&w12.rt)) uv_stop(s->loop);
    else w12_send(s, "x", 1);
}

static void w12_connected(uv_connect_t *req, int status) {
    (void)req;
    w12.connected = status == 0 ? 1 : -1;
}

static void w12_connect(void) {
    uv_loop_t *loop = uv_default_loop();
    uv_tcp_init(loop, &w12.client);
    uv_tcp_connect(&w12.connecting, &w12.client, (const struct sockaddr *)&w12.address, w12_connected);
    while (w12.connected == 0) uv_run(loop, UV_RUN_ONCE);
    if (w12.connected < 0) {
        fprintf(stderr, "w12: cannot connect\n");
        exit(1);
    }
    uv_tcp_nodelay(&w12.client, 1);
    uv_read_start((uv_stream_t *)&w12.client, w12_alloc_a, w12_answered);
    while (!atomic_load(&w12.accepted)) bl_spin_pause();
}

static void w12_send_first(void) {
    w12_send((uv_stream_t *)&w12.client, "x", 1);
}

static void w12_run(void) {
    uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}

static long long w12_stop_b(void) {
    return peer_stop(&w12.b);
}

static void run_w12(double arg) {
    bl_w1_begin(&w12.rt, (long)arg);
    peer_start(&w12.b, NULL, w12_listen_b);
    w12_connect();
    bl_run_w12(&w12.rt, w12_send_first, w12_run, w12_stop_b);
    free(w12.rt.rtt);
}

/* ---- W6 ---------------------------------------------------------------------- */

static void never(uv_timer_t *t) {
    (void)t;
}
static void w6_stop(uv_timer_t *t) {
    uv_stop(t->loop);
}

static void run_w6(double secs) {
    uv_loop_t *loop = uv_default_loop();
    uv_timer_t far, stop;
    uv_timer_init(loop, &far);
    uv_timer_init(loop, &stop);
    uv_timer_start(&far, never, 3600 * 1000, 0);
    uv_timer_start(&stop, w6_stop, (uint64_t)(secs * 1000), 0);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    bl_usage u0 = bl_usage_now(false);
    uv_run(loop, UV_RUN_DEFAULT);
    bl_usage u1 = bl_usage_now(false);
    long long sc1 = bl_sc_read(sc);
    bl_report_w6(u0, u1, bl_threads(), sc0, sc1);
    bl_sc_close(sc);
}

/* ---- W7 ---------------------------------------------------------------------- */

static peer_thread w7_b;
static void w7_on_b(uv_async_t *h) {
    (void)h;
    bl_w7_woken();
}

static void w7_wake(void) {
    uv_async_send(&w7_b.async);
}

static long long w7_stop(void) {
    return peer_stop(&w7_b);
}

static void run_w7(double arg) {
    static const bl_w7_peer peer = {w7_wake, NULL, NULL, w7_wake, w7_stop};
    peer_start(&w7_b, w7_on_b, NULL);
    bl_run_w7((long)arg, &peer);
}

/* ---- W8: 4 pairs of loops ping-ponging (uv_async both ways) -------------- */

#define W8_PAIRS 4
typedef struct {
    bl_pair base; /* first: the driver fills it */
    uv_loop_t la, lb;
    uv_async_t aa, ab;
    atomic_int stop_b;
} w8_pair;
static w8_pair w8[W8_PAIRS];

static void w8_on_b(uv_async_t *h) {
    w8_pair *p = h->data;
    if (atomic_load(&p->stop_b)) {
        uv_close((uv_handle_t *)h, NULL);
        return;
    }
    uv_async_send(&p->aa);
}

static void w8_on_a(uv_async_t *h) {
    w8_pair *p = h->data;
    if (++p->base.done == p->base.n) {
        uv_close((uv_handle_t *)h, NULL);
        return;
    }
    uv_async_send(&p->ab);
}

static void *w8_b_main(void *arg) {
    w8_pair *p = arg;
    uv_loop_init(&p->lb);
    uv_async_init(&p->lb, &p->ab, w8_on_b);
    p->ab.data = p;
    bl_pair_ready();
    uv_run(&p->lb, UV_RUN_DEFAULT);
    return NULL;
}

static void *w8_a_main(void *arg) {
    w8_pair *p = arg;
    uv_loop_init(&p->la);
    uv_async_init(&p->la, &p->aa, w8_on_a);
    p->aa.data = p;
    bl_pair_ready();
    bl_pair_wait_go();
    uv_async_send(&p->ab);
    uv_run(&p->la, UV_RUN_DEFAULT);
    return NULL;
}

static void w8_stop_b(void *pair) {
    w8_pair *p = pair;
    atomic_store(&p->stop_b, 1);
    uv_async_send(&p->ab);
}

static void run_w8(double arg) {
    bl_run_w8((long)arg, w8, W8_PAIRS, sizeof *w8, w8_a_main, w8_b_main, w8_stop_b);
}

/* ---- W9a: N eventfds watched (uv_poll), one active ----------------------- */

static struct {
    long events, want;
    int active_fd;
} w9a;

static void w9a_idle(uv_poll_t *h, int status, int events) {
    (void)h;
    (void)status;
    (void)events;
}
static void w9a_active(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    uint64_t v;
    if (read(w9a.active_fd, &v, sizeof v) != sizeof v) return;
    if (++w9a.events == w9a.want) {
        uv_stop(h->loop);
        return;
    }
    v = 1;
    if (write(w9a.active_fd, &v, sizeof v) != sizeof v) perror("write");
}

static void run_w9a(double arg) {
    long n = (long)arg;
    w9a.want = 50000;
    uv_loop_t *loop = uv_default_loop();
    uv_run(loop, UV_RUN_NOWAIT);
    int before = bl_open_fds();
    uv_poll_t *polls = calloc((size_t)n, sizeof *polls);
    int *fds = calloc((size_t)n, sizeof *fds);
    for (long i = 0; i < n; i++) {
        fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fds[i] < 0) {
            perror("eventfd");
            exit(1);
        }
        uv_poll_init(loop, &polls[i], fds[i]);
        uv_poll_start(&polls[i], UV_READABLE, i == n / 2 ? w9a_active : w9a_idle);
    }
    w9a.active_fd = fds[n / 2];
    uv_run(loop, UV_RUN_NOWAIT);
    int after = bl_open_fds();
    uint64_t v = 1;
    if (write(w9a.active_fd, &v, sizeof v) != sizeof v) perror("write");
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    uv_run(loop, UV_RUN_DEFAULT);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w9a(w9a.events, t0, t1, u0, u1, after - before - n);
}

/* ---- W9d: T loops on T threads, all woken by one thread ------------------ */

#define W9D_MAX 64
static peer_thread w9d_loops[W9D_MAX];
static void w9d_on(uv_async_t *h) {
    (void)h;
    bl_w9d_handled();
}

static void w9d_start(int i) {
    peer_start(&w9d_loops[i], w9d_on, NULL);
}
static void w9d_wake(int i) {
    uv_async_send(&w9d_loops[i].async);
}
static void w9d_stop(int i) {
    peer_stop(&w9d_loops[i]);
}

static void run_w9d(double arg) {
    bl_run_w9d(arg, W9D_MAX, w9d_start, w9d_wake, w9d_stop);
}

static const bl_workload workloads[] = {
    {"w1", run_w1, 100000},  {"w2", run_w2, 1000000}, {"w3", run_w3, 2.0},     {"w4", run_w4, 1000000},
    {"w5", run_w5, 100000},  {"w6", run_w6, 2.0},     {"w7", run_w7, 20000},   {"w8", run_w8, 100000},
    {"w9a", run_w9a, 10000}, {"w9d", run_w9d, 8},     {"w12", run_w12, 50000},
};

int main(int argc, char **argv) {
    return bl_main(argc, argv, workloads, (int)(sizeof workloads / sizeof *workloads), 3);
}
