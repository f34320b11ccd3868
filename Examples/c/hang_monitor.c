/*
 * hang_monitor.c: a stall ("卡顿") monitor, as RLHangMonitor.
 *
 * A loop runs a 1 ms timer (healthy: short passes, no report), then a
 * source0 whose perform blocks for 350 ms (a deliberate stall). The monitor,
 * threshold 100 ms, reports the stall from its watchdog thread while it
 * lasts: duration, mode, the activity the loop is stuck after, and the stalled
 * thread's stack. This program is linked with -rdynamic, so the stack names
 * the core's callout RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION: the
 * stall happened inside a version-0 source's perform. Each report also
 * carries the loop's statistics (RLRunLoopCopyStatistics), and afterwards the
 * loop's own counts name the longest callout: the stalling perform.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <CRunLoop.h>

static void sleep_seconds(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {} /* the monitor's signal interrupts it: sleep the rest */
}

/* An expensive function the stack should show. */
__attribute__((noinline)) void decode_huge_image(void);
__attribute__((noinline)) void decode_huge_image(void) {
    sleep_seconds(0.35);
    __asm__ volatile("");
}

void stalling_perform(void *info);
void stalling_perform(void *info) {
    (void)info;
    printf("  loop: source0 perform starts decoding a huge image on the loop's thread...\n");
    fflush(stdout);
    decode_huge_image();
    printf("  loop: ... done\n");
}

static void on_stall(RLHangMonitorRef m, const RLHangReport *r, void *info) {
    (void)m;
    (void)info;
    printf("  watchdog: STALL %llu report %u: awake %.0f ms (threshold %.0f ms) in mode %s after %s\n",
           (unsigned long long)r->stallNumber, r->reportNumber, r->duration * 1e3, r->threshold * 1e3, r->mode,
           RLRunLoopActivityGetName(r->activity));
    if (r->reportNumber > 1) return; /* the stack once per stall */
    for (int i = 0; i < r->frameCount && i < 9; i++) {
        const char *f = strrchr(r->frames[i], '/');
        printf("      #%d %s\n", i, f ? f + 1 : r->frames[i]);
    }
    if (r->statistics)
        printf("      the loop so far: %llu passes, %llu sleeps, %llu timer callouts\n",
               (unsigned long long)r->statistics->passes, (unsigned long long)r->statistics->sleeps,
               (unsigned long long)r->statistics->callouts[kRLRunLoopCalloutTimer]);
    fflush(stdout);
}

/* The loop's statistics, and the longest callout's function by name. */
static void print_statistics(RLRunLoopRef rl) {
    RLRunLoopStatistics s = {.size = sizeof s};
    if (!RLRunLoopCopyStatistics(rl, &s)) return;
    char *text = RLRunLoopStatisticsCopyDescription(&s);
    printf("  the loop's statistics:\n");
    for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) printf("    %s\n", line);
    free(text);
    Dl_info where;
    if (s.longestCalloutFunction && dladdr(s.longestCalloutFunction, &where) && where.dli_sname)
        printf("  the longest callout was %s (%.0f ms)\n", where.dli_sname, (double)s.longestCalloutNanoseconds * 1e-6);
}

static void tick(RLRunLoopTimerRef t, void *info) {
    (void)t;
    ++*(int *)info;
}

int main(void) {
    printf("== hang monitor: a watchdog thread catches a deliberate stall ==\n");
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLHangMonitorRef monitor = RLHangMonitorCreate(rl, 0.1, on_stall, NULL);
    RLHangMonitorStart(monitor);

    int ticks = 0;
    RLRunLoopTimerContext tctx = {0, &ticks, NULL, NULL, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0.001, 0, 0, tick, &tctx);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    printf("  healthy: 0.3 s of a 1 ms timer...\n");
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
    printf("  healthy: %d timer callouts, %llu stall reports\n", ticks,
           (unsigned long long)RLHangMonitorGetReportCount(monitor));

    RLRunLoopSourceContext sctx;
    memset(&sctx, 0, sizeof sctx);
    sctx.perform = stalling_perform;
    RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, &sctx);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, false);

    printf("  stalls seen: %llu, reports: %llu\n", (unsigned long long)RLHangMonitorGetStallCount(monitor),
           (unsigned long long)RLHangMonitorGetReportCount(monitor));
    print_statistics(rl);
    printf("\n");
    RLHangMonitorRelease(monitor);
    RLRunLoopSourceInvalidate(s);
    RLRunLoopTimerInvalidate(t);
    RLRelease(s);
    RLRelease(t);
    return 0;
}
