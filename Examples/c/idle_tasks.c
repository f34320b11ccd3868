/*
 * idle_tasks.c: idle-time work. Twelve "image loads" (expensive tasks)
 * are queued on an RLIdleQueue; they run only when the loop is about to
 * sleep, one per pass, between the "events" (a timer firing every 40 ms, as
 * a user scrolling would). Each event is handled promptly: it never waits
 * for more than one load. The usual recipe needs a do-nothing 1 ms timer to keep
 * its observer firing; the queue instead wakes the loop while work remains.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <CRunLoop.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double start;

static void load_image(void *info) {
    long n = (long)info;
    double t0 = now_ms();
    while (now_ms() - t0 < 15) {} /* 15 ms of "decoding" */
    printf("  %6.1f ms  idle task: loaded image %2ld\n", now_ms() - start, n);
}

static void event(RLRunLoopTimerRef t, void *info) {
    int *events = info;
    printf("  %6.1f ms  EVENT %d handled (a timer, standing for user input)\n", now_ms() - start, ++*events);
    if (*events == 4) RLRunLoopTimerInvalidate(t);
}

int main(void) {
    printf("== idle tasks: expensive work only while the loop is idle ==\n");
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLIdleQueueRef q = RLIdleQueueCreate(rl, kRLRunLoopDefaultMode, 0);
    int events = 0;
    RLRunLoopTimerContext tctx = {0, &events, NULL, NULL, NULL};
    start = now_ms();
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 0.04, 0.04, 0, 0, event, &tctx);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    for (long i = 1; i <= 12; i++) RLIdleQueueSubmit(q, load_image, (void *)i, NULL);
    RLIdleTaskToken skipped = RLIdleQueueSubmit(q, load_image, (void *)99L, NULL);
    RLIdleQueueCancel(q, skipped);
    printf("  queued 12 loads (and cancelled a 13th); running the loop until it has nothing left\n");
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    printf("  run finished (%s) after %.0f ms: %llu loads, %d events\n\n",
           r == kRLRunLoopRunFinished ? "kRLRunLoopRunFinished" : "?", now_ms() - start,
           (unsigned long long)RLIdleQueueGetCompletedCount(q), events);
    RLIdleQueueRelease(q);
    RLRelease(t);
    return 0;
}
