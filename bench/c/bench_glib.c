/*
 * bench_glib.c: the workloads W1-W7 on GLib's main loop (the idioms a GLib user writes).
 *
 * W1: g_main_context_invoke to the other thread's context (an idle source,
 * attached and woken). W2/W3: g_timeout_add (whole milliseconds). W4: g_idle_add.
 * W5: a unix fd source on each end of a socketpair. W6: a far-future timeout.
 * W7 wake: g_main_context_invoke (sleeping loop), g_main_context_wakeup (awake loop).
 * W12: a GSocket echo over loopback from socket sources (g_socket_create_source).
 */
#define _GNU_SOURCE
#include "benchlib.h"
#include <glib.h>
#include <glib-unix.h>
#include <gio/gio.h>
#include <netinet/in.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    pthread_t thread;
    GMainContext *ctx;
    GMainLoop *loop;
    void (*setup)(GMainContext *ctx);
    atomic_int ready;
    long long sc;
} peer_thread;

static void *peer_main(void *arg) {
    peer_thread *p = arg;
    g_main_context_push_thread_default(p->ctx);
    if (p->setup) p->setup(p->ctx);
    bl_sc_span span = bl_sc_begin();
    atomic_store(&p->ready, 1);
    g_main_loop_run(p->loop);
    p->sc = bl_sc_end(&span);
    g_main_context_pop_thread_default(p->ctx);
    return NULL;
}

static void peer_start(peer_thread *p, void (*setup)(GMainContext *)) {
    memset(p, 0, sizeof *p);
    p->ctx = g_main_context_new();
    p->loop = g_main_loop_new(p->ctx, FALSE);
    p->setup = setup;
    pthread_create(&p->thread, NULL, peer_main, p);
    while (!atomic_load(&p->ready)) bl_spin_pause();
    while (!g_main_loop_is_running(p->loop)) bl_spin_pause();
}

/* Stops the thread; its system calls while it ran, or -1. */
static long long peer_stop(peer_thread *p) {
    g_main_loop_quit(p->loop);
    pthread_join(p->thread, NULL);
    return p->sc;
}

/* ---- W1 ---------------------------------------------------------------------- */

static bl_w1 w1;
static GMainContext *w1_a;
static GMainLoop *w1_loop_a;
static peer_thread w1_b;

static gboolean w1_on_a(gpointer data);
static gboolean w1_on_b(gpointer data) {
    (void)data;
    g_main_context_invoke(w1_a, w1_on_a, NULL);
    return G_SOURCE_REMOVE;
}

static void w1_wake_b(void) {
    g_main_context_invoke(w1_b.ctx, w1_on_b, NULL);
}

static gboolean w1_on_a(gpointer data) {
    (void)data;
    if (bl_w1_back(&w1)) g_main_loop_quit(w1_loop_a);
    else w1_wake_b();
    return G_SOURCE_REMOVE;
}

static void w1_run(void) {
    g_main_loop_run(w1_loop_a);
}
static long long w1_stop_b(void) {
    return peer_stop(&w1_b);
}

static void run_w1(double arg) {
    bl_w1_begin(&w1, (long)arg);
    w1_a = g_main_context_new();
    g_main_context_push_thread_default(w1_a);
    w1_loop_a = g_main_loop_new(w1_a, FALSE);
    peer_start(&w1_b, NULL);
    bl_run_w1(&w1, w1_wake_b, w1_run, w1_stop_b);
}

/* ---- W2 ---------------------------------------------------------------------- */

static bl_w2 w2;
static GMainLoop *w2_loop;

static gboolean w2_fire(gpointer data) {
    if (bl_w2_fired(&w2, (long)(intptr_t)data)) g_main_loop_quit(w2_loop);
    return G_SOURCE_REMOVE;
}

static void run_w2(double arg) {
    bl_w2_begin(&w2, (long)arg);
    w2_loop = g_main_loop_new(NULL, FALSE);
    bl_usage u0 = bl_usage_now(false);
    long long m0 = bl_mallocs();
    w2.t0 = bl_now_ns();
    for (long i = 0; i < w2.n; i++) g_timeout_add((guint)ceil(bl_spread(i) * 1000.0), w2_fire, (gpointer)(intptr_t)i);
    uint64_t t_added = bl_now_ns();
    long long m1 = bl_mallocs();
    g_main_loop_run(w2_loop);
    bl_usage u1 = bl_usage_now(false);
    bl_report_w2(w2.n, w2.t0, t_added, w2.t_last, w2.fired, w2.late, u0, u1, m0, m1);
}

/* ---- W3 ---------------------------------------------------------------------- */

static bl_w3 w3;

static gboolean w3_fire(gpointer data) {
    (void)data;
    bl_w3_fired(&w3);
    return G_SOURCE_CONTINUE;
}

static gboolean quit_loop(gpointer data) {
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

static void run_w3(double secs) {
    bl_w3_begin(&w3, secs);
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    w3.first = t0 + 1000000;
    g_timeout_add(1, w3_fire, NULL);
    g_timeout_add((guint)(secs * 1000), quit_loop, loop);
    g_main_loop_run(loop);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w3("w3", w3.fires, w3.cap, w3.jit, w3.first, t0, t1, u0, u1, -1);
}

/* ---- W4 ---------------------------------------------------------------------- */

static long w4_done, w4_n;
static GMainLoop *w4_loop;

static gboolean w4_fn(gpointer data) {
    (void)data;
    if (++w4_done == w4_n) g_main_loop_quit(w4_loop);
    return G_SOURCE_REMOVE;
}

static void run_w4(double arg) {
    w4_n = (long)arg;
    w4_loop = g_main_loop_new(NULL, FALSE);
    long long m0 = bl_mallocs();
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < w4_n; i++) g_idle_add(w4_fn, NULL);
    uint64_t t1 = bl_now_ns();
    g_main_loop_run(w4_loop);
    uint64_t t2 = bl_now_ns();
    long long m1 = bl_mallocs();
    bl_report_w4(w4_n, t0, t1, t2, m0, m1);
}

/* ---- W5 ---------------------------------------------------------------------- */

static bl_w5 w5;
static GMainLoop *w5_loop_a;
static peer_thread w5_b;

static gboolean w5_on_b(gint fd, GIOCondition cond, gpointer data) {
    (void)cond;
    (void)data;
    bl_w5_echo(fd);
    return G_SOURCE_CONTINUE;
}

static gboolean w5_on_a(gint fd, GIOCondition cond, gpointer data) {
    (void)fd;
    (void)cond;
    (void)data;
    if (bl_w5_answered(&w5)) g_main_loop_quit(w5_loop_a);
    return G_SOURCE_CONTINUE;
}

static void w5_setup_b(GMainContext *ctx) {
    GSource *s = g_unix_fd_source_new(w5.sv[1], G_IO_IN);
    g_source_set_callback(s, (GSourceFunc)(void (*)(void))w5_on_b, NULL, NULL);
    g_source_attach(s, ctx);
    g_source_unref(s);
}

static void w5_run(void) {
    g_main_loop_run(w5_loop_a);
}

static long long w5_stop_b(void) {
    return peer_stop(&w5_b);
}

static void run_w5(double arg) {
    bl_w5_open(&w5, (long)arg);
    w5_loop_a = g_main_loop_new(NULL, FALSE);
    g_unix_fd_add(w5.sv[0], G_IO_IN, w5_on_a, NULL);
    peer_start(&w5_b, w5_setup_b);
    bl_run_w5("w5", &w5, w5_run, w5_stop_b);
}

/* ---- W12 ---------------------------------------------------------------------- */
/* A GSocket echo: the peer context's listening socket accepts from a socket
   source (g_socket_create_source), each connected end reads and answers with
   g_socket_receive and g_socket_send from its own socket source. Sockets are
   non-blocking, as a GSocket on a main loop is. */

static struct {
    bl_w1 rt;
    peer_thread b;
    GMainLoop *loop_a;
    GSocket *listener, *server, *client;
    struct sockaddr_in address;
    gchar buf_b[65536], buf_a[65536];
    atomic_int accepted;
} w12;

static void w12_send(GSocket *s, const gchar *bytes, gsize n) {
    if (g_socket_send(s, bytes, n, NULL, NULL) != (gssize)n) {
        fprintf(stderr, "w12: g_socket_send did not send it all\n");
        exit(1);
    }
}

static void w12_attach(GSocket *s, GSocketSourceFunc fn, GMainContext *ctx) {
    GSource *src = g_socket_create_source(s, G_IO_IN, NULL);
    g_source_set_callback(src, (GSourceFunc)(void (*)(void))fn, NULL, NULL);
    g_source_attach(src, ctx);
    g_source_unref(src);
}

static gboolean w12_echo(GSocket *s, GIOCondition cond, gpointer data) {
    (void)cond;
    (void)data;
    gssize n = g_socket_receive(s, w12.buf_b, sizeof w12.buf_b, NULL, NULL);
    if (n > 0) w12_send(s, w12.buf_b, (gsize)n);
    return n == 0 ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static void w12_nodelay(GSocket *s) {
    g_socket_set_blocking(s, FALSE);
    bl_tcp_nodelay(g_socket_get_fd(s));
}

static gboolean w12_accepted(GSocket *listener, GIOCondition cond, gpointer data) {
    (void)cond;
    (void)data;
    w12.server = g_socket_accept(listener, NULL, NULL);
    if (!w12.server) return G_SOURCE_CONTINUE;
    w12_nodelay(w12.server);
    w12_attach(w12.server, w12_echo, g_main_context_get_thread_default());
    atomic_store(&w12.accepted, 1);
    return G_SOURCE_REMOVE;
}

static GSocketAddress *w12_address(void) {
    return g_socket_address_new_from_native(&w12.address, sizeof w12.address);
}

static void w12_listen_b(GMainContext *ctx) {
    bl_w12_listen_address(&w12.address);
    GSocketAddress *address = w12_address();
    w12.listener = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
    if (!w12.listener || !g_socket_bind(w12.listener, address, TRUE, NULL) || !g_socket_listen(w12.listener, NULL)) {
        fprintf(stderr, "w12: cannot listen\n");
        exit(1);
    }
    g_object_unref(address);
    g_socket_set_blocking(w12.listener, FALSE);
    GSocketAddress *bound = g_socket_get_local_address(w12.listener, NULL);
    g_socket_address_to_native(bound, &w12.address, sizeof w12.address, NULL);
    g_object_unref(bound);
    w12_attach(w12.listener, w12_accepted, ctx);
}

static gboolean w12_answered(GSocket *s, GIOCondition cond, gpointer data) {
    (void)cond;
    (void)data;
    gssize n = g_socket_receive(s, w12.buf_a, sizeof w12.buf_a, NULL, NULL);
    if (n <= 0) return n == 0 ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
    if (bl_w1_back(&w12.rt)) g_main_loop_quit(w12.loop_a);
    else w12_send(s, "x", 1);
    return G_SOURCE_CONTINUE;
}

static void w12_connect(void) {
    GSocketAddress *address = w12_address();
    w12.client = g_socket_new(G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
    if (!w12.client || !g_socket_connect(w12.client, address, NULL, NULL)) {
        fprintf(stderr, "w12: cannot connect\n");
        exit(1);
    }
    g_object_unref(address);
    w12_nodelay(w12.client);
    w12_attach(w12.client, w12_answered, NULL);
    while (!atomic_load(&w12.accepted)) bl_spin_pause();
}

static void w12_send_first(void) {
    w12_send(w12.client, "x", 1);
}

static void w12_run(void) {
    g_main_loop_run(w12.loop_a);
}

static long long w12_stop_b(void) {
    return peer_stop(&w12.b);
}

static void run_w12(double arg) {
    bl_w1_begin(&w12.rt, (long)arg);
    w12.loop_a = g_main_loop_new(NULL, FALSE);
    peer_start(&w12.b, w12_listen_b);
    w12_connect();
    bl_run_w12(&w12.rt, w12_send_first, w12_run, w12_stop_b);
    g_object_unref(w12.client);
    g_object_unref(w12.server);
    g_object_unref(w12.listener);
    free(w12.rt.rtt);
}

/* ---- W6 ---------------------------------------------------------------------- */

static gboolean never(gpointer data) {
    (void)data;
    return G_SOURCE_REMOVE;
}

static void run_w6(double secs) {
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    g_timeout_add(3600 * 1000, never, NULL);
    g_timeout_add((guint)(secs * 1000), quit_loop, loop);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    bl_usage u0 = bl_usage_now(false);
    g_main_loop_run(loop);
    bl_usage u1 = bl_usage_now(false);
    long long sc1 = bl_sc_read(sc);
    bl_report_w6(u0, u1, bl_threads(), sc0, sc1);
    bl_sc_close(sc);
}

/* ---- W7 ---------------------------------------------------------------------- */

static peer_thread w7_b;

static gboolean w7_on_b(gpointer data) {
    (void)data;
    bl_w7_handled();
    return G_SOURCE_REMOVE;
}
static gboolean w7_spin_b(gpointer data) {
    (void)data;
    bl_w7_hold();
    return G_SOURCE_REMOVE;
}
static void w7_send(void) {
    g_main_context_invoke(w7_b.ctx, w7_on_b, NULL);
}
static void w7_hold(void) {
    g_main_context_invoke(w7_b.ctx, w7_spin_b, NULL);
}
static void w7_wake(void) {
    g_main_context_wakeup(w7_b.ctx);
}

static long long w7_stop(void) {
    return peer_stop(&w7_b);
}

static void run_w7(double arg) {
    static const bl_w7_peer peer = {w7_send, NULL, w7_hold, w7_wake, w7_stop};
    peer_start(&w7_b, NULL);
    bl_run_w7((long)arg, &peer);
}

static const bl_workload workloads[] = {
    {"w1", run_w1, 100000}, {"w2", run_w2, 1000000}, {"w3", run_w3, 2.0},   {"w4", run_w4, 1000000},
    {"w5", run_w5, 100000}, {"w6", run_w6, 2.0},     {"w7", run_w7, 20000}, {"w12", run_w12, 50000},
};

int main(int argc, char **argv) {
    return bl_main(argc, argv, workloads, (int)(sizeof workloads / sizeof *workloads), 3);
}
