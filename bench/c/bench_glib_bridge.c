/*
 * bench_glib_bridge: what the GLib bridge costs.
 *
 *  - Timer latency: N one-shot timers in a row, each due 2 ms after it was
 *    made; how late each callout runs (p50, p99, max), for our timer on our
 *    loop, our timer on our loop hosted by g_main_loop_run, a GLib timeout
 *    on GLib's own loop, and a GLib timeout on a GLib context that our loop
 *    drives.
 *  - Idle wake-ups: for 2 s with nothing due, how many times the host's wait
 *    returns (GLib: calls of its poll function; ours: AfterWaiting), with and
 *    without the hosted loop.
 *
 * Usage: bench_glib_bridge [N [S]]   (N timers per case, default 2000; S idle
 * seconds, default 2)
 */
#define _GNU_SOURCE
#include <CRunLoopGLib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DELAY_S 0.002

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double *late;
static int n_timers, done_count;
static double due; /* monotonic time the current timer is due */
static GMainLoop *main_loop;
static int use_glib_loop;

static void report(const char *what) {
    qsort(late, (size_t)n_timers, sizeof *late, cmp_double);
    printf("%-52s p50 %7.1f us  p99 %7.1f us  max %7.1f us\n", what, late[n_timers / 2] * 1e6,
           late[(n_timers * 99) / 100] * 1e6, late[n_timers - 1] * 1e6);
}

static void finish(void) {
    if (use_glib_loop) g_main_loop_quit(main_loop);
    else RLRunLoopStop(RLRunLoopGetCurrent());
}

/* Our timers: each callout records its lateness and schedules the next. */
static void our_timer_fired(RLRunLoopTimerRef t, void *info);
static void schedule_ours(void) {
    due = mono() + DELAY_S;
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + DELAY_S, 0, 0, 0, our_timer_fired, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode);
    RLRelease(t);
}
static void our_timer_fired(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    late[done_count++] = mono() - due;
    if (done_count == n_timers) finish();
    else schedule_ours();
}

/* GLib timeouts, the same way. */
static gboolean glib_timeout_fired(gpointer data);
static void schedule_glib(void) {
    due = mono() + DELAY_S;
    g_timeout_add((guint)(DELAY_S * 1000), glib_timeout_fired, NULL);
}
static gboolean glib_timeout_fired(gpointer data) {
    (void)data;
    late[done_count++] = mono() - due;
    if (done_count == n_timers) finish();
    else schedule_glib();
    return G_SOURCE_REMOVE;
}

static void run_our_loop(void) {
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e6, false);
}
static void run_glib_loop(void) {
    g_main_loop_run(main_loop);
}

static void latency_case(const char *what, int glib_timers, int host_glib, int attach_glib) {
    done_count = 0;
    use_glib_loop = host_glib || (glib_timers && !attach_glib);
    GSource *hosted = NULL;
    RLGLibContextRef attached = NULL;
    if (host_glib) {
        hosted = RLGLibSourceCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
        g_source_attach(hosted, NULL);
    }
    if (attach_glib) attached = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    if (glib_timers) schedule_glib();
    else schedule_ours();
    if (use_glib_loop) run_glib_loop();
    else run_our_loop();
    if (hosted) {
        g_source_destroy(hosted);
        g_source_unref(hosted);
    }
    if (attached) RLGLibContextDetach(attached);
    report(what);
}

/* ---- idle wake-ups ---------------------------------------------------------- */

static int polls;
static double idle_s = 2;
static GPollFunc real_poll;
static gint counting_poll(GPollFD *fds, guint n, gint timeout) {
    polls++;
    return real_poll(fds, n, timeout);
}
static gboolean quit_glib(gpointer data) {
    (void)data;
    g_main_loop_quit(main_loop);
    return G_SOURCE_REMOVE;
}
static void nothing(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}
static int wakeups;
static void count_wakeup(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    wakeups++;
}

static void idle_glib_host(int with_ours) {
    GSource *hosted = NULL;
    RLRunLoopTimerRef far = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 3600, 0, 0, 0, nothing, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), far, kRLRunLoopDefaultMode);
    if (with_ours) {
        hosted = RLGLibSourceCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
        g_source_attach(hosted, NULL);
    }
    real_poll = g_main_context_get_poll_func(NULL);
    g_main_context_set_poll_func(NULL, counting_poll);
    polls = 0;
    g_timeout_add((guint)(idle_s * 1000), quit_glib, NULL);
    g_main_loop_run(main_loop);
    g_main_context_set_poll_func(NULL, real_poll);
    printf("%-52s %d polls returned in %g s\n",
           with_ours ? "idle g_main_loop_run hosting our idle loop:" : "idle g_main_loop_run alone:", polls, idle_s);
    if (hosted) {
        g_source_destroy(hosted);
        g_source_unref(hosted);
    }
    RLRunLoopTimerInvalidate(far);
    RLRelease(far);
}

static void stop_ours(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void idle_our_host(int with_glib) {
    RLGLibContextRef attached = NULL;
    if (with_glib) {
        attached = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
        g_timeout_add_seconds(3600, quit_glib, NULL); /* GLib has something, far away */
    }
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAfterWaiting, true, 0, count_wakeup, NULL);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef stop = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + idle_s, 0, 0, 0, stop_ours, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), stop, kRLRunLoopDefaultMode);
    wakeups = 0;
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e6, false);
    printf("%-52s %d wake-ups in %g s\n",
           with_glib ? "idle RLRunLoopRun driving an idle GLib context:" : "idle RLRunLoopRun alone:", wakeups, idle_s);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRelease(stop);
    if (attached) RLGLibContextDetach(attached);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    n_timers = argc > 1 ? atoi(argv[1]) : 2000;
    if (n_timers < 1) n_timers = 1;
    if (argc > 2) idle_s = atof(argv[2]);
    late = calloc((size_t)n_timers, sizeof *late);
    main_loop = g_main_loop_new(NULL, FALSE);
    printf("timer latency, %d one-shot timers due 2 ms after they were made:\n", n_timers);
    latency_case("our timer, our loop (RLRunLoopRun):", 0, 0, 0);
    latency_case("our timer, our loop inside g_main_loop_run:", 0, 1, 0);
    latency_case("GLib timeout, g_main_loop_run:", 1, 0, 0);
    latency_case("GLib timeout, GLib context driven by our loop:", 1, 0, 1);
    idle_glib_host(0);
    idle_glib_host(1);
    idle_our_host(0);
    idle_our_host(1);
    g_main_loop_unref(main_loop);
    free(late);
    return 0;
}
