/*
 * Our run loop driven by a GLib main loop (RLGLibSourceCreate): our timers,
 * sources, queued functions and wake-ups run while the thread runs only
 * g_main_loop_run, and an idle loop costs GLib no wake-up.
 */
#include <CRunLoop.h>
#include <CRunLoopGLib.h>
#include <dlfcn.h>
#include <glib.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "rltest.h"
#include "rltest_glib.h"

static GMainLoop *main_loop;
static int fired;

/* Attaches our loop to the thread's default GLib context; a GLib timeout
   ends the test's main loop after `limit` seconds at the latest. */
static GSource *host_our_loop(RLRunLoopMode mode) {
    main_loop = g_main_loop_new(NULL, FALSE);
    GSource *s = RLGLibSourceCreate(RLRunLoopGetCurrent(), mode);
    RL_ASSERT(s != NULL);
    g_source_attach(s, NULL);
    return s;
}
/* g_main_loop_run for `limit` seconds at most. */
static void run_glib(double limit) {
    rl_test_run_glib_loop(main_loop, limit);
}
static void unhost(GSource *s) {
    g_source_destroy(s);
    g_source_unref(s);
    g_main_loop_unref(main_loop);
}

static void quit_on_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    fired++;
    g_main_loop_quit(main_loop);
}

/* One of our timers fires while the thread runs only g_main_loop_run. */
static void our_timer_fires_in_a_glib_main_loop(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    double start = rl_test_now();
    RLRunLoopTimerRef t = rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.02, 0, quit_on_timer, NULL);
    run_glib(10);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT_GE_DBL(rl_test_now() - start, 0.019); /* never early */
    RLRelease(t);
    unhost(s);
}

/* Timers in the common modes fire through a source hosting the default mode. */
static void common_mode_timer_through_the_default_mode(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopCommonModes, 0.01, 0, quit_on_timer, NULL);
    run_glib(10);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
    unhost(s);
}

/* GLib's own sources and our timers share the thread. */
static void quit_main_loop(void) {
    g_main_loop_quit(main_loop);
}
static void glib_and_our_timers_share_the_thread(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    guint id;
    RLRunLoopTimerRef t = start_both_tickers(quit_main_loop, &id);
    run_glib(30);
    expect_both_ticked(t, id);
    unhost(s);
}

/* Work queued from another thread (a function, then a wake-up) wakes GLib's
   poll and runs on the GLib thread. */
static void queued_work(void *info) {
    *(pthread_t *)info = pthread_self();
    fired++;
    g_main_loop_quit(main_loop);
}
static pthread_t ran_on;
static void *queue_later(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10); /* true while GLib sleeps on our descriptor */
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, queued_work, &ran_on);
    RLRunLoopWakeUp(rl);
    return NULL;
}
static void work_queued_from_another_thread_runs_on_the_glib_thread(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, queue_later, RLRunLoopGetCurrent());
    run_glib(10);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT(pthread_equal(ran_on, pthread_self()));
    unhost(s);
}

/* A version-0 source signalled from another thread, then a wake-up. */
static RLRunLoopSourceRef v0;
static void v0_perform(void *info) {
    (void)info;
    fired++;
    g_main_loop_quit(main_loop);
}
static void *signal_later(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    RLRunLoopSourceSignal(v0);
    RLRunLoopWakeUp(rl);
    return NULL;
}
static void version0_source_signalled_from_another_thread(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    v0 = rl_test_source0(0, v0_perform, NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), v0, kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, signal_later, RLRunLoopGetCurrent());
    run_glib(10);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRunLoopSourceInvalidate(v0);
    RLRelease(v0);
    unhost(s);
}

/* A version-1 source (a pipe) becomes readable while GLib sleeps. */
static int pipe_fds[2];
static int pipe_fd(void *info) {
    (void)info;
    return pipe_fds[0];
}
static void pipe_readable(void *info) {
    (void)info;
    char c;
    if (read(pipe_fds[0], &c, 1) != 1) abort();
    fired++;
    g_main_loop_quit(main_loop);
}
static void *write_later(void *arg) {
    rl_test_wait_sleeping(arg, 10);
    if (write(pipe_fds[1], "x", 1) != 1) abort();
    return NULL;
}
static void version1_source_readable_while_glib_sleeps(void) {
    RL_ASSERT_EQ_INT(pipe(pipe_fds), 0);
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    RLRunLoopSourceRef v1 = rl_test_source1(0, pipe_fd, pipe_readable, NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), v1, kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, write_later, RLRunLoopGetCurrent());
    run_glib(10);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRunLoopSourceInvalidate(v1);
    RLRelease(v1);
    unhost(s);
}

/* One of our callouts runs a nested GLib main loop (a modal dialog): our
   loop keeps running inside it. */
static GMainLoop *nested_loop;
static int inner_fired;
static void quit_nested(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    inner_fired++;
    g_main_loop_quit(nested_loop);
}
static void run_nested_glib(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopTimerRef inner =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.01, 0, quit_nested, NULL);
    nested_loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(nested_loop);
    g_main_loop_unref(nested_loop);
    RLRelease(inner);
    fired++;
    g_main_loop_quit(main_loop);
}
static void nested_glib_loop_inside_our_callout(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.01, 0, run_nested_glib, NULL);
    run_glib(10);
    RL_ASSERT_EQ_INT(inner_fired, 1);
    RL_ASSERT_EQ_INT(fired, 1);
    RLRelease(t);
    unhost(s);
}

/* Only the hosted mode's items run. */
static void other_modes_stay_quiet(void) {
    GSource *s = host_our_loop("hosted-mode");
    RLRunLoopTimerRef other = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, quit_on_timer, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), other, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef mine = rl_test_add_timer(RLRunLoopGetCurrent(), "hosted-mode", 0.1, 0, quit_on_timer, NULL);
    run_glib(10);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT(RLRunLoopTimerIsValid(other)); /* the default mode's timer never fired */
    RL_ASSERT(!RLRunLoopTimerIsValid(mine));
    RLRunLoopTimerInvalidate(other);
    RLRelease(other);
    RLRelease(mine);
    unhost(s);
}

/* An idle hosted loop costs GLib no wake-up: count GLib's polls that return
   while our loop has only a far timer. */
static int polls;
static GPollFunc real_poll;
static gint counting_poll(GPollFD *fds, guint n, gint timeout) {
    polls++;
    return real_poll(fds, n, timeout);
}
static void idle_hosted_loop_costs_no_wakeups(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    RLRunLoopTimerRef far =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 3600, 0, quit_on_timer, NULL);
    real_poll = g_main_context_get_poll_func(NULL);
    g_main_context_set_poll_func(NULL, counting_poll);
    run_glib(0.5);
    g_main_context_set_poll_func(NULL, real_poll);
    /* One poll sleeping until GLib's own give-up timeout, maybe one more
       from the first iteration: never one per our loop's activity. */
    RL_ASSERT_LE_INT(polls, 3);
    RL_ASSERT_EQ_INT(fired, 0);
    RLRunLoopTimerInvalidate(far);
    RLRelease(far);
    unhost(s);
}

/* Destroying the source hands the loop back: it runs by itself again. */
static void loop_runs_by_itself_after_the_source_is_destroyed(void) {
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    unhost(s);
    RLRunLoopTimerRef t =
        rl_test_add_timer(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.01, 0, rl_test_stop_current, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunStopped);
    RLRelease(t);
}

/* DispatchQueue.main (and so Swift's main actor) on a GLib main thread:
   libdispatch's main queue, which the main run loop drains, runs inside
   g_main_loop_run. libdispatch is loaded at run time in the forked child
   (it binds the main queue to the thread that loads it); without it the
   test passes with a note. */
static struct {
    void (*async_f)(void *queue, void *ctx, void (*fn)(void *));
    void *main_q;
} dq;
static bool load_dispatch(void) {
    static const char *const names[] = {
        "libdispatch.so",
        "/opt/swift/usr/lib/swift/linux/libdispatch.so",
        "/usr/lib/swift/linux/libdispatch.so",
    };
    void *h = NULL;
    const char *env = getenv("RL_LIBDISPATCH");
    if (env) h = dlopen(env, RTLD_NOW);
    for (size_t i = 0; !h && i < sizeof names / sizeof names[0]; i++) h = dlopen(names[i], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "    (libdispatch not found; skipped)\n");
        return false;
    }
    *(void **)&dq.async_f = dlsym(h, "dispatch_async_f");
    dq.main_q = dlsym(h, "_dispatch_main_q");
    RL_ASSERT(dq.async_f && dq.main_q);
    return true;
}
static pid_t main_queue_ran_on;
static void on_main_queue(void *ctx) {
    (void)ctx;
    main_queue_ran_on = (pid_t)syscall(SYS_gettid);
    fired++;
    g_main_loop_quit(main_loop);
}
static void *enqueue_on_main_queue(void *arg) {
    rl_test_wait_sleeping(arg, 10);
    dq.async_f(dq.main_q, NULL, on_main_queue);
    return NULL;
}
static void dispatch_main_queue_runs_in_a_glib_main_loop(void) {
    if (!load_dispatch()) return;
    RL_ASSERT(RLRunLoopGetMain() == RLRunLoopGetCurrent()); /* this child's only thread */
    GSource *s = host_our_loop(kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, enqueue_on_main_queue, RLRunLoopGetMain());
    run_glib(10);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT_EQ_INT(main_queue_ran_on, getpid());
    unhost(s);
}

/* Attached to a context iterated on another thread, the source does nothing:
   our loop never runs there, and its descriptor (readable: a timer is due)
   does not keep that thread's GLib poll from sleeping. */
static GMainContext *foreign;
static int foreign_timeout_fired, foreign_iterations;
static gboolean foreign_timeout(gpointer data) {
    (void)data;
    foreign_timeout_fired = 1;
    return G_SOURCE_REMOVE;
}
static void *iterate_foreign(void *arg) {
    (void)arg;
    GSource *t = g_timeout_source_new(100);
    g_source_set_callback(t, foreign_timeout, NULL, NULL);
    g_source_attach(t, foreign);
    g_source_unref(t);
    while (!foreign_timeout_fired && foreign_iterations < 20) {
        g_main_context_iteration(foreign, TRUE);
        foreign_iterations++;
    }
    return NULL;
}
static void iterated_on_another_thread_does_nothing(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, quit_on_timer, NULL); /* due now */
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, NULL)); /* the descriptor is readable */
    foreign = g_main_context_new();
    GSource *s = RLGLibSourceCreate(rl, kRLRunLoopDefaultMode);
    g_source_attach(s, foreign);
    pthread_t th;
    pthread_create(&th, NULL, iterate_foreign, NULL);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(foreign_timeout_fired, 1); /* GLib slept until its own timeout */
    RL_ASSERT_LE_INT(foreign_iterations, 3);
    RL_ASSERT_EQ_INT(fired, 0); /* our timer never ran there */
    RL_ASSERT(RLRunLoopTimerIsValid(t));
    g_source_destroy(s);
    g_source_unref(s);
    g_main_context_unref(foreign);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

static void bad_input_is_refused(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(RLGLibSourceCreate(NULL, kRLRunLoopDefaultMode) == NULL);
    RL_ASSERT(RLGLibSourceCreate(rl, NULL) == NULL);
    RL_ASSERT(RLGLibSourceCreate(rl, "") == NULL);
    RL_ASSERT(RLGLibSourceCreate(rl, kRLRunLoopCommonModes) == NULL);
    /* Never attached: finalizing frees it. */
    GSource *s = RLGLibSourceCreate(rl, kRLRunLoopDefaultMode);
    RL_ASSERT(s != NULL);
    g_source_unref(s);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(our_timer_fires_in_a_glib_main_loop),
        RL_TEST(common_mode_timer_through_the_default_mode),
        RL_TEST(glib_and_our_timers_share_the_thread),
        RL_TEST(work_queued_from_another_thread_runs_on_the_glib_thread),
        RL_TEST(version0_source_signalled_from_another_thread),
        RL_TEST(version1_source_readable_while_glib_sleeps),
        RL_TEST(nested_glib_loop_inside_our_callout),
        RL_TEST(other_modes_stay_quiet),
        RL_TEST(idle_hosted_loop_costs_no_wakeups),
        RL_TEST(loop_runs_by_itself_after_the_source_is_destroyed),
        RL_TEST(dispatch_main_queue_runs_in_a_glib_main_loop),
        RL_TEST(iterated_on_another_thread_does_nothing),
        RL_TEST(bad_input_is_refused),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
