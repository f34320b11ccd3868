/*
 * bench_monitor.c: the hang monitor's overhead per pass.
 *
 * N polling passes, RLRunLoopRunInMode(mode, 0, false), each with a version-0
 * source signalled before it (so every pass does real work: Entry,
 * BeforeTimers, BeforeSources, the perform, Exit), timed without a monitor
 * and with a started monitor (threshold 1 s, so it never reports), in
 * alternating rounds; the medians are printed in ns per pass. Each pass
 * fires 4 activities, i.e. 4 monitor callouts. A third variant adds two
 * empty observers in the monitor's places: what any observer costs the
 * core's pass (the callout itself), so the monitor's own work is the
 * difference between the last two.
 *
 *   bench_monitor [passes per round] [rounds]     (default 1000000 and 5)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <CRunLoop.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void perform(void *info) {
    ++*(long *)info;
}

static void empty_observer(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}

static double round_ns_per_pass(RLRunLoopSourceRef s, long passes) {
    double t0 = now_ns();
    for (long i = 0; i < passes; i++) {
        RLRunLoopSourceSignal(s);
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    }
    return (now_ns() - t0) / (double)passes;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    long passes = argc > 1 ? atol(argv[1]) : 1000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (passes < 1) passes = 1;
    if (rounds < 1 || rounds > 64) rounds = 5;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    long performed = 0;
    RLRunLoopSourceContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.info = &performed;
    ctx.perform = perform;
    RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, &ctx);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLHangMonitorRef m = RLHangMonitorCreate(rl, 1.0, NULL, NULL);

    round_ns_per_pass(s, passes / 10 + 1); /* warm up */
    double without[64], with[64], empty[64];
    for (int r = 0; r < rounds; r++) {
        without[r] = round_ns_per_pass(s, passes);
        RLHangMonitorStart(m);
        with[r] = round_ns_per_pass(s, passes);
        RLHangMonitorStop(m);
        RLRunLoopObserverRef early = RLRunLoopObserverCreate(0x47, true, LONG_MIN, empty_observer, NULL);
        RLRunLoopObserverRef late = RLRunLoopObserverCreate(0xa0, true, LONG_MAX, empty_observer, NULL);
        RLRunLoopAddObserver(rl, early, kRLRunLoopDefaultMode);
        RLRunLoopAddObserver(rl, late, kRLRunLoopDefaultMode);
        empty[r] = round_ns_per_pass(s, passes);
        RLRunLoopObserverInvalidate(early);
        RLRunLoopObserverInvalidate(late);
        RLRelease(early);
        RLRelease(late);
    }
    double a = median(without, rounds), b = median(with, rounds), e = median(empty, rounds);
    printf("== hang monitor overhead: %ld polling passes x %d rounds, a source0 signalled each pass ==\n", passes,
           rounds);
    printf("  without monitor: %7.1f ns/pass\n", a);
    printf("  empty observers: %7.1f ns/pass (the core's cost of calling out to 2 observers)\n", e);
    printf("  with monitor:    %7.1f ns/pass\n", b);
    printf("  overhead:        %7.1f ns/pass (%.1f%%), %.1f ns per activity (4 per pass); reports: %llu\n", b - a,
           (b - a) / a * 100, (b - a) / 4, (unsigned long long)RLHangMonitorGetReportCount(m));
    printf("  the monitor's own work (clock read, atomic store): %.1f ns/pass, %.1f ns per activity\n\n", b - e,
           (b - e) / 4);
    RLHangMonitorRelease(m);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    return performed > 0 ? 0 : 1;
}
