/*
 * A GLib main context driven by our run loop: real GLib sources (timeouts,
 * idles, GIO async reads on a pipe, sources attached from other threads) run
 * while the thread runs only our loop.
 */
#include <CRunLoop.h>
#include <CRunLoopGLib.h>
#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <glib-unix.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>

#include "rltest.h"
#include "rltest_glib.h"

static int fired;

static gboolean count_and_stop(gpointer data) {
    (void)data;
    fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}

/* A g_timeout_add source fires while the thread runs only RLRunLoopRun. */
static void glib_timeout_fires_in_our_loop(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    RL_ASSERT(g != NULL);
    g_timeout_add(20, count_and_stop, NULL);
    double start = rl_test_now();
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT_GE_DBL(rl_test_now() - start, 0.019); /* never early */
    RLGLibContextDetach(g);
}

/* A repeating GLib timeout keeps firing, interleaved with our own timer. */
static void stop_our_loop(void) {
    RLRunLoopStop(RLRunLoopGetCurrent());
}
static void glib_and_our_timers_share_the_thread(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopCommonModes);
    RL_ASSERT(g != NULL);
    guint id;
    RLRunLoopTimerRef t = start_both_tickers(stop_our_loop, &id);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 30, false);
    expect_both_ticked(t, id);
    RLGLibContextDetach(g);
}

/* GIO: an async read on a pipe completes when another thread writes. */
typedef struct {
    char buf[64];
    gssize got;
    int write_fd;
} read_state;

static void read_done(GObject *stream, GAsyncResult *res, gpointer data) {
    read_state *st = data;
    GError *error = NULL;
    st->got = g_input_stream_read_finish(G_INPUT_STREAM(stream), res, &error);
    g_clear_error(&error);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *write_later(void *arg) {
    read_state *st = arg;
    rl_test_sleep(0.05);
    if (write(st->write_fd, "hello", 5) != 5) abort();
    return NULL;
}

static void gio_async_read_on_a_pipe(void) {
    int p[2];
    RL_ASSERT_EQ_INT(pipe(p), 0);
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    RL_ASSERT(g != NULL);
    GInputStream *in = g_unix_input_stream_new(p[0], TRUE);
    static read_state st;
    st.got = -2;
    st.write_fd = p[1];
    g_input_stream_read_async(in, st.buf, sizeof st.buf, G_PRIORITY_DEFAULT, NULL, read_done, &st);
    pthread_t th;
    pthread_create(&th, NULL, write_later, &st);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(st.got, 5);
    RL_ASSERT(memcmp(st.buf, "hello", 5) == 0);
    g_object_unref(in);
    close(p[1]);
    RLGLibContextDetach(g);
}

/* GIO: an async write that must wait for room (the pipe is full) completes
   once a reader drains it: GLib's descriptor is watched for writing. */
static void write_done(GObject *stream, GAsyncResult *res, gpointer data) {
    gssize *wrote = data;
    GError *error = NULL;
    *wrote = g_output_stream_write_finish(G_OUTPUT_STREAM(stream), res, &error);
    g_clear_error(&error);
    RLRunLoopStop(RLRunLoopGetCurrent());
}
static void *drain_later(void *arg) {
    int fd = *(int *)arg;
    rl_test_sleep(0.05);
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) abort();
    return NULL;
}
static void gio_async_write_waits_for_room(void) {
    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK), 0);
    char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    while (write(p[1], chunk, sizeof chunk) > 0) {} /* fill it */
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    GOutputStream *out = g_unix_output_stream_new(p[1], TRUE);
    static gssize wrote = -2;
    static char msg[] = "after the drain";
    g_output_stream_write_async(out, msg, sizeof msg, G_PRIORITY_DEFAULT, NULL, write_done, &wrote);
    pthread_t th;
    pthread_create(&th, NULL, drain_later, &p[0]);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(wrote, (gssize)sizeof msg);
    g_object_unref(out);
    close(p[0]);
    RLGLibContextDetach(g);
}

/* Another thread attaching a source to the context wakes our sleeping loop
   (GLib signals the context's own wake-up descriptor, which we watch). */
static gboolean idle_from_thread(gpointer data) {
    (void)data;
    fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static void *invoke_later(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    g_main_context_invoke(NULL, idle_from_thread, NULL);
    return NULL;
}
static void source_attached_from_another_thread_wakes_the_loop(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, invoke_later, RLRunLoopGetCurrent());
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(fired, 1);
    RLGLibContextDetach(g);
}

/* Idle sources run (many times) without the loop sleeping in between. */
static int idles;
static gboolean idle_counter(gpointer data) {
    (void)data;
    if (++idles == 100) {
        RLRunLoopStop(RLRunLoopGetCurrent());
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}
static void glib_idle_runs_repeatedly(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_idle_add(idle_counter, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(idles, 100);
    RLGLibContextDetach(g);
}

/* A source that our run handled with returnAfterSourceHandled: GLib's
   callback ran inside it. */
static gboolean just_count(gpointer data) {
    (void)data;
    fired++;
    return G_SOURCE_REMOVE;
}
static void return_after_source_handled_counts_glib_dispatch(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_timeout_add(10, just_count, NULL);
    RLRunLoopRunResult r = kRLRunLoopRunTimedOut;
    for (int i = 0; i < 10 && fired == 0; i++) r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, true);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunHandledSource);
    RLGLibContextDetach(g);
}

/* Detaching inside a GLib callback: nothing runs from the loop afterwards and
   the mode empties (the run finishes). */
static RLGLibContextRef detach_me;
static gboolean detach_from_callback(gpointer data) {
    (void)data;
    fired++;
    RLGLibContextDetach(detach_me);
    return G_SOURCE_CONTINUE;
}
static void detach_inside_a_glib_callback(void) {
    detach_me = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_timeout_add(5, detach_from_callback, NULL);
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(fired, 1);
    /* The context is ours again: GLib's own loop runs the same source. */
    RL_ASSERT(g_main_context_acquire(NULL));
    g_main_context_release(NULL);
}

/* A GLib callback runs our loop nested; GLib sources keep running inside. */
static int inner_fired;
static gboolean inner_timeout(gpointer data) {
    (void)data;
    inner_fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static gboolean outer_timeout(gpointer data) {
    (void)data;
    g_timeout_add(5, inner_timeout, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false); /* nested */
    fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static void nested_run_inside_a_glib_callback(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_timeout_add(5, outer_timeout, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(inner_fired, 1);
    RL_ASSERT_EQ_INT(fired, 1);
    RLGLibContextDetach(g);
}

/* A GLib callback iterates the context itself, as GLib allows. */
static gboolean outer_iterates(gpointer data) {
    (void)data;
    g_idle_add(just_count, NULL);
    while (fired == 0) g_main_context_iteration(NULL, TRUE);
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static void nested_glib_iteration_inside_a_glib_callback(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_timeout_add(5, outer_iterates, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(fired, 1);
    RLGLibContextDetach(g);
}

/* GLib closes a descriptor and watches a new file under the same number
   between two iterations: the new file is watched. */
static int reuse_fd = -1, reuse_writer = -1;
static gboolean reused_fd_ready(gint fd, GIOCondition cond, gpointer data) {
    (void)cond;
    (void)data;
    char c;
    if (read(fd, &c, 1) != 1) abort();
    fired++;
    RLRunLoopStop(RLRunLoopGetCurrent());
    return G_SOURCE_REMOVE;
}
static gboolean first_fd_ready(gint fd, GIOCondition cond, gpointer data) {
    (void)cond;
    (void)data;
    int p[2];
    if (pipe(p) != 0) abort();
    close(reuse_writer);
    dup2(p[0], fd); /* the same number now names the new pipe */
    close(p[0]);
    reuse_writer = p[1];
    g_unix_fd_add(fd, G_IO_IN, reused_fd_ready, NULL);
    return G_SOURCE_REMOVE;
}
static void *write_new_pipe_later(void *arg) {
    rl_test_wait_sleeping(arg, 10);
    if (write(reuse_writer, "y", 1) != 1) abort();
    return NULL;
}
static void descriptor_number_reused_between_iterations(void) {
    int p[2];
    RL_ASSERT_EQ_INT(pipe(p), 0);
    reuse_fd = p[0];
    reuse_writer = p[1];
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_unix_fd_add(reuse_fd, G_IO_IN, first_fd_ready, NULL);
    /* First callback swaps the pipe; wait until the loop sleeps on the new one. */
    while (reuse_writer == p[1]) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true);
    pthread_t th;
    pthread_create(&th, NULL, write_new_pipe_later, RLRunLoopGetCurrent());
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(fired, 1);
    RLGLibContextDetach(g);
}

/* GLib callbacks run only in the attached mode. */
static void only_in_the_attached_mode(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLGLibContextRef g = RLGLibContextAttach(NULL, rl, "glib-mode");
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_timeout_add(1, just_count, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);
    RL_ASSERT_EQ_INT(fired, 0);
    for (int i = 0; i < 100 && fired == 0; i++) RLRunLoopRunInMode("glib-mode", 0.1, true);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    RLGLibContextDetach(g);
}

/* An idle attached context (GLib has nothing due) costs no wake-ups. */
static int wakeups;
static void count_wakeup(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    wakeups++;
}
static void idle_context_costs_no_wakeups(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLGLibContextRef g = RLGLibContextAttach(NULL, rl, kRLRunLoopDefaultMode);
    g_timeout_add_seconds(3600, just_count, NULL); /* something far away */
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAfterWaiting, true, 0, count_wakeup, NULL);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.5, false);
    RL_ASSERT_LE_INT(wakeups, 1); /* only the run's own time limit */
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLGLibContextDetach(g);
}

/* Runs that never sleep (a host pumping the loop once per frame): GLib
   sources ready when the run starts are dispatched in that run, and those
   attached by a callout of ours in the next one, also once GLib has
   dispatched through the attachment before. */
static int zero_second_runs_until_fired(int limit) {
    int runs = 0;
    while (fired == 0 && runs < limit) {
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
        runs++;
    }
    return runs;
}
static void *invoke_now(void *arg) {
    (void)arg;
    g_main_context_invoke(NULL, just_count, NULL);
    return NULL;
}
static void glib_source_ready_at_the_start_runs_in_one_zero_second_run(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_idle_add(just_count, NULL); /* before GLib ever ran through the attachment */
    RL_ASSERT_EQ_INT(zero_second_runs_until_fired(100), 1);
    fired = 0;
    g_idle_add(just_count, NULL); /* between two runs, after it did */
    RL_ASSERT_EQ_INT(zero_second_runs_until_fired(100), 1);
    fired = 0;
    g_timeout_add(0, just_count, NULL); /* a ready time already past */
    RL_ASSERT_EQ_INT(zero_second_runs_until_fired(100), 1);
    fired = 0;
    pthread_t th;
    pthread_create(&th, NULL, invoke_now, NULL); /* another thread's invoke */
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(zero_second_runs_until_fired(100), 1);
    RLGLibContextDetach(g);
}

static void idle_from_our_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_idle_add(just_count, NULL);
}
static void timeout_0_from_our_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_timeout_add(0, just_count, NULL);
}
/* Our timer (due now) attaches a GLib source in the first run; how many more
   zero-second runs dispatch it. */
static int runs_after_our_callout(RLRunLoopTimerCallBack callout) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0, callout, NULL);
    while (RLRunLoopTimerIsValid(t)) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRelease(t);
    return zero_second_runs_until_fired(100);
}
static void glib_source_added_by_our_callout_runs_in_the_next_zero_second_run(void) {
    RLGLibContextRef g = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_idle_add(just_count, NULL);
    zero_second_runs_until_fired(100); /* GLib dispatched through the attachment */
    RL_ASSERT_EQ_INT(fired, 1);
    fired = 0;
    RL_ASSERT_EQ_INT(runs_after_our_callout(idle_from_our_timer), 1);
    RL_ASSERT_EQ_INT(fired, 1);
    fired = 0;
    RL_ASSERT_EQ_INT(runs_after_our_callout(timeout_0_from_our_timer), 1);
    RL_ASSERT_EQ_INT(fired, 1);
    RLGLibContextDetach(g);
}

/* The same inside a poll() host (the embedding API): a GLib timeout attached
   by our timer's callout wakes the host's sleep when it falls due. */
static double glib_fired_at, glib_added_at;
static gboolean note_when_fired(gpointer data) {
    (void)data;
    fired++;
    glib_fired_at = rl_test_now();
    return G_SOURCE_REMOVE;
}
static void add_20ms_glib_timeout(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    glib_added_at = rl_test_now();
    g_timeout_add(20, note_when_fired, NULL);
}
static void glib_timeout_added_by_our_callout_wakes_a_poll_host(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLGLibContextRef g = RLGLibContextAttach(NULL, rl, kRLRunLoopDefaultMode);
    g_idle_add(just_count, NULL);
    zero_second_runs_until_fired(100); /* GLib dispatched through the attachment */
    RL_ASSERT_EQ_INT(fired, 1);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, add_20ms_glib_timeout, NULL);
    struct pollfd p = {.fd = RLRunLoopEmbedGetFD(rl), .events = POLLIN};
    double give_up = rl_test_now() + 10;
    while (fired < 2 && rl_test_now() < give_up) {
        int timeout_ms;
        RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout_ms);
        poll(&p, 1, timeout_ms < 0 || timeout_ms > 5000 ? 5000 : timeout_ms);
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    }
    RL_ASSERT_EQ_INT(fired, 2);
    RL_ASSERT_GE_DBL(glib_fired_at - glib_added_at, 0.019); /* never early */
    RL_ASSERT_LE_DBL(glib_fired_at - glib_added_at, 1.0);   /* 20 ms when healthy */
    RLRelease(t);
    RLGLibContextDetach(g);
}

/* Bad input. */
static void *attach_elsewhere(void *arg) {
    return RLGLibContextAttach(NULL, arg, kRLRunLoopDefaultMode);
}
static void *attach_own_loop(void *context) {
    RLGLibContextRef g = RLGLibContextAttach(context, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    if (g) RLGLibContextDetach(g);
    return g;
}
static void bad_input_is_refused(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLGLibContextAttach(NULL, NULL, kRLRunLoopDefaultMode) == NULL);
    RL_ASSERT(RLGLibContextAttach(NULL, rl, NULL) == NULL);
    RL_ASSERT(RLGLibContextAttach(NULL, rl, "") == NULL);
    pthread_t th;
    void *other = (void *)1;
    pthread_create(&th, NULL, attach_elsewhere, rl); /* not that thread's loop */
    pthread_join(th, &other);
    RL_ASSERT(other == NULL);
    RLGLibContextDetach(NULL);
    RL_ASSERT(RLGLibContextGetContext(NULL) == NULL);
    /* A context another thread owns. */
    GMainContext *c = g_main_context_new();
    RLGLibContextRef g = RLGLibContextAttach(c, rl, kRLRunLoopDefaultMode);
    RL_ASSERT(g != NULL);
    RL_ASSERT(RLGLibContextGetContext(g) == c);
    pthread_create(&th, NULL, attach_own_loop, c);
    pthread_join(th, &other);
    RL_ASSERT(other == NULL);
    RLGLibContextDetach(g);
    g_main_context_unref(c);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(glib_timeout_fires_in_our_loop),
        RL_TEST(glib_and_our_timers_share_the_thread),
        RL_TEST(gio_async_read_on_a_pipe),
        RL_TEST(gio_async_write_waits_for_room),
        RL_TEST(source_attached_from_another_thread_wakes_the_loop),
        RL_TEST(glib_idle_runs_repeatedly),
        RL_TEST(return_after_source_handled_counts_glib_dispatch),
        RL_TEST(detach_inside_a_glib_callback),
        RL_TEST(nested_run_inside_a_glib_callback),
        RL_TEST(nested_glib_iteration_inside_a_glib_callback),
        RL_TEST(descriptor_number_reused_between_iterations),
        RL_TEST(only_in_the_attached_mode),
        RL_TEST(idle_context_costs_no_wakeups),
        RL_TEST(glib_source_ready_at_the_start_runs_in_one_zero_second_run),
        RL_TEST(glib_source_added_by_our_callout_runs_in_the_next_zero_second_run),
        RL_TEST(glib_timeout_added_by_our_callout_wakes_a_poll_host),
        RL_TEST(bad_input_is_refused),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
