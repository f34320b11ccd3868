/* rltest_glib.h: what the two GLib tests (GLib hosting our loop, our loop
   hosting GLib) share: GLib's own 5 ms ticks and our 50 ms timer on one
   thread, however it is run. Include after rltest.h and glib.h. */
#ifndef RLTEST_GLIB_H
#define RLTEST_GLIB_H

#include <glib.h>
#include "rltest.h"

static int glib_ticks, our_ticks;
static void (*after_our_fifth_tick)(void);

static gboolean glib_tick(gpointer data) {
    (void)data;
    glib_ticks++;
    return G_SOURCE_CONTINUE;
}

static void our_tick(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    if (++our_ticks == 5) after_our_fifth_tick();
}

/* Starts GLib's ticks (their id in *glib_id) and ours, in the default mode;
   stop() is called at our fifth tick. Returns our timer. */
static RLRunLoopTimerRef start_both_tickers(void (*stop)(void), guint *glib_id) {
    after_our_fifth_tick = stop;
    *glib_id = g_timeout_add(5, glib_tick, NULL);
    return rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.05, 0.05, our_tick, NULL);
}

/* After the run: our five ticks came, and GLib's kept coming meanwhile
   (250 ms of 5 ms ticks: at least a few). Ends both. */
static void expect_both_ticked(RLRunLoopTimerRef ours, guint glib_id) {
    RL_ASSERT_EQ_INT(our_ticks, 5);
    RL_ASSERT_GE_INT(glib_ticks, 5);
    g_source_remove(glib_id);
    RLRunLoopTimerInvalidate(ours);
    RLRelease(ours);
}

static inline gboolean rl_test_quit_glib_loop(gpointer loop) {
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
}

/* g_main_loop_run(loop) for `limit` seconds at most. */
static inline void rl_test_run_glib_loop(GMainLoop *loop, double limit) {
    guint id = g_timeout_add((guint)(limit * 1000), rl_test_quit_glib_loop, loop);
    g_main_loop_run(loop);
    GSource *t = g_main_context_find_source_by_id(NULL, id);
    if (t) g_source_destroy(t);
}

#endif
