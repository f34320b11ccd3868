/*
 * bench_glib.c: the workloads W1-W7 on GLib's main loop (the idioms a GLib user writes).
 *
 * W1: g_main_context_invoke to the other thread's context (an idle source,
 * attached and woken). W2/W3: g_timeout_add (whole milliseconds). W4: g_idle_add.
 * W5: a unix fd source on each end of a socketpair. W6: a far-future timeout.
 * W7 wake: g_main_context_invoke (sleeping loop), g_main_context_wakeup (awake loop).
 */
#define _GNU_SOURCE
#include "benchlib.h"
#include <glib.h>
#include <glib-unix.h>

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
    {"w5", run_w5, 100000}, {"w6", run_w6, 2.0},     {"w7", run_w7, 20000},
};

int main(int argc, char **argv) {
    return bl_main(argc, argv, workloads, (int)(sizeof workloads / sizeof *workloads), 3);
}
