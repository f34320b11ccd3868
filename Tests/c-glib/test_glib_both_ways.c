/*
 * Both directions on one GLib context and one thread: our loop hosted by the
 * context (RLGLibSourceCreate) and the same context attached to our loop
 * (RLGLibContextAttach). Whichever loop the thread runs drives the other,
 * and a nested run of either, from a callout of the other, drives both.
 */
#include <CRunLoop.h>
#include <CRunLoopGLib.h>
#include <glib-unix.h>
#include <glib.h>
#include <pthread.h>

#include "rltest.h"
#include "rltest_glib.h"

static GMainLoop *main_loop;
static GSource *hosting;
static RLGLibContextRef attached;
static int fired, inner_fired;

/* Our loop hosted by the thread's default GLib context in `hosted_mode`, and
   that context attached to our loop in `attached_mode`. */
static void both_ways(RLRunLoopMode hosted_mode, RLRunLoopMode attached_mode) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    main_loop = g_main_loop_new(NULL, FALSE);
    hosting = RLGLibSourceCreate(rl, hosted_mode);
    RL_ASSERT(hosting != NULL);
    g_source_attach(hosting, NULL);
    attached = RLGLibContextAttach(NULL, rl, attached_mode);
    RL_ASSERT(attached != NULL);
}
static void undo_both_ways(void) {
    RLGLibContextDetach(attached);
    g_source_destroy(hosting);
    g_source_unref(hosting);
    g_main_loop_unref(main_loop);
}

/* g_main_loop_run for `limit` seconds at most. */
static void run_glib(double limit) {
    rl_test_run_glib_loop(main_loop, limit);
}

static void quit_main_loop(void) {
    g_main_loop_quit(main_loop);
}
static void stop_our_loop(void) {
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static int count_runs_entered;
static void count_entry(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    count_runs_entered++;
}
static RLRunLoopObserverRef add_entry_counter(RLRunLoopMode mode) {
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, count_entry, NULL);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, mode);
    return o;
}
static void remove_observer(RLRunLoopObserverRef o) {
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

/* The thread runs GLib's loop: GLib runs our timers through the source and
   its own timeouts itself (this aborted in g_main_dispatch when our pass,
   dispatched by GLib, iterated the context that was dispatching it). */
static void glib_main_loop_runs_both(void) {
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    guint id;
    RLRunLoopTimerRef t = start_both_tickers(quit_main_loop, &id);
    run_glib(30);
    expect_both_ticked(t, id);
    undo_both_ways();
}

/* The same with the context attached in the common modes (the Swift
   attachment's default) and our loop hosted in the default mode. */
static void glib_main_loop_runs_both_common_modes(void) {
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopCommonModes);
    guint id;
    RLRunLoopTimerRef t = start_both_tickers(quit_main_loop, &id);
    run_glib(30);
    expect_both_ticked(t, id);
    undo_both_ways();
}

/* The thread runs our loop: the attachment runs GLib's timeouts, and our
   loop is never run through the source from there (it is already running):
   one run entered, the test's own. */
static void our_loop_runs_both(void) {
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef entries = add_entry_counter(kRLRunLoopDefaultMode);
    guint id;
    RLRunLoopTimerRef t = start_both_tickers(stop_our_loop, &id);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    expect_both_ticked(t, id);
    RL_ASSERT_EQ_INT(count_runs_entered, 1);
    remove_observer(entries);
    undo_both_ways();
}

/* The thread switches between the two loops, back and forth. */
static int switches;
static gboolean glib_tick_counts(gpointer data) {
    (void)data;
    fired++;
    return G_SOURCE_CONTINUE;
}
static void our_tick_counts(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    inner_fired++;
}
static void switching_between_the_loops(void) {
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    guint id = g_timeout_add(2, glib_tick_counts, NULL);
    RLRunLoopTimerRef t =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.002, 0.002, our_tick_counts, NULL);
    for (switches = 0; switches < 6; switches++) {
        int glib_before = fired, ours_before = inner_fired;
        double give_up_at = rl_test_now() + 10;
        while ((fired < glib_before + 3 || inner_fired < ours_before + 3) && rl_test_now() < give_up_at) {
            if (switches % 2) g_main_context_iteration(NULL, TRUE);
            else RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true);
        }
        RL_ASSERT_GE_INT(fired, glib_before + 3);
        RL_ASSERT_GE_INT(inner_fired, ours_before + 3);
    }
    g_source_remove(id);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    undo_both_ways();
}

/* A modal run of our loop, from our timer's callout inside g_main_loop_run,
   runs GLib's sources too (the attachment drives the context there). */
static gboolean inner_glib_timeout(gpointer data) {
    (void)data;
    inner_fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static void our_modal_run(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_timeout_add(5, inner_glib_timeout, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    fired++;
    g_main_loop_quit(main_loop);
}
static void our_modal_run_inside_glib_main_loop_runs_glib(void) {
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.005, 0, our_modal_run, NULL);
    run_glib(30);
    RL_ASSERT_EQ_INT(inner_fired, 1);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
    undo_both_ways();
}

/* A modal GLib loop, from a GLib callback inside our loop's run, runs our
   timers too (the source drives our loop there). */
static GMainLoop *modal_loop;
static void quit_modal(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    inner_fired++;
    g_main_loop_quit(modal_loop);
}
static gboolean glib_modal_loop(gpointer data) {
    (void)data;
    RLRunLoopTimerRef inner =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.005, 0, quit_modal, NULL);
    modal_loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(modal_loop);
    g_main_loop_unref(modal_loop);
    RLRelease(inner);
    fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static void glib_modal_loop_inside_our_run_runs_ours(void) {
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    g_timeout_add(5, glib_modal_loop, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(inner_fired, 1);
    RL_ASSERT_EQ_INT(fired, 1);
    undo_both_ways();
}

/* Idle both ways: neither loop wakes the other. */
static int polls;
static GPollFunc real_poll;
static gint counting_poll(GPollFD *fds, guint n, gint timeout) {
    polls++;
    return real_poll(fds, n, timeout);
}
static void count_glib_polls(bool on) {
    if (on) real_poll = g_main_context_get_poll_func(NULL);
    g_main_context_set_poll_func(NULL, on ? counting_poll : real_poll);
}
static gboolean never(gpointer data) {
    (void)data;
    fired++;
    return G_SOURCE_REMOVE;
}
static void never_ours(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    fired++;
}
static void idle_both_ways_costs_no_wakeups(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    guint id = g_timeout_add_seconds(3600, never, NULL);
    RLRunLoopTimerRef far = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 3600, 0, never_ours, NULL);
    count_glib_polls(true);
    run_glib(0.5);
    count_glib_polls(false);
    RL_ASSERT_LE_INT(polls, 3); /* the give-up timeout's, maybe one more at the start */
    int wakeups = 0;
    RLRunLoopObserverRef o = rl_test_wake_counter(rl, kRLRunLoopDefaultMode, &wakeups);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.5, false);
    RL_ASSERT_LE_INT(wakeups, 3); /* the run's own time limit, and g_main_loop_quit's wake-up of the context */
    RL_ASSERT_EQ_INT(fired, 0);
    remove_observer(o);
    g_source_remove(id);
    RLRunLoopTimerInvalidate(far);
    RLRelease(far);
    undo_both_ways();
}

/* A descriptor the attachment watched while our loop ran, then left readable
   when GLib's loop removed its source, keeps neither loop awake. */
static int stale[2];
static guint stale_watch;
static gboolean unread(gint fd, GIOCondition cond, gpointer data) {
    (void)fd;
    (void)cond;
    (void)data;
    fired++; /* never: nothing is written while it is attached */
    return G_SOURCE_CONTINUE;
}
static gboolean remove_watch_and_write(gpointer data) {
    (void)data;
    g_source_remove(stale_watch);
    if (write(stale[1], "x", 1) != 1) abort();
    return G_SOURCE_REMOVE;
}
static void descriptor_left_readable_after_a_switch_keeps_no_loop_awake(void) {
    RL_ASSERT_EQ_INT(pipe(stale), 0);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    both_ways(kRLRunLoopDefaultMode, kRLRunLoopDefaultMode);
    stale_watch = g_unix_fd_add(stale[0], G_IO_IN, unread, NULL);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false); /* the attachment watches the pipe */
    g_timeout_add(10, remove_watch_and_write, NULL);
    count_glib_polls(true);
    run_glib(0.5);
    count_glib_polls(false);
    RL_ASSERT_LE_INT(polls, 30); /* a few when healthy; a spin is thousands */
    RL_ASSERT_EQ_INT(fired, 0);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    close(stale[0]);
    close(stale[1]);
    undo_both_ways();
}

/* Different contexts both ways on one thread need no care: GLib's loop on
   one runs our loop, which runs the other. */
static void other_contexts_each_way(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    main_loop = g_main_loop_new(NULL, FALSE);
    hosting = RLGLibSourceCreate(rl, kRLRunLoopDefaultMode);
    g_source_attach(hosting, NULL);
    GMainContext *other = g_main_context_new();
    attached = RLGLibContextAttach(other, rl, kRLRunLoopDefaultMode);
    GSource *tick = g_timeout_source_new(5);
    g_source_set_callback(tick, glib_tick, NULL, NULL);
    g_source_attach(tick, other);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0.05, our_tick, NULL);
    after_our_fifth_tick = quit_main_loop;
    run_glib(30);
    RL_ASSERT_EQ_INT(our_ticks, 5);
    RL_ASSERT_GE_INT(glib_ticks, 5);
    g_source_destroy(tick);
    g_source_unref(tick);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    undo_both_ways();
    g_main_context_unref(other);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(glib_main_loop_runs_both),
        RL_TEST(glib_main_loop_runs_both_common_modes),
        RL_TEST(our_loop_runs_both),
        RL_TEST(switching_between_the_loops),
        RL_TEST(our_modal_run_inside_glib_main_loop_runs_glib),
        RL_TEST(glib_modal_loop_inside_our_run_runs_ours),
        RL_TEST(idle_both_ways_costs_no_wakeups),
        RL_TEST(descriptor_left_readable_after_a_switch_keeps_no_loop_awake),
        RL_TEST(other_contexts_each_way),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
