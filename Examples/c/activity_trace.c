/*
 * activity_trace.c: the activities of a run loop, Entry ... Exit, as the
 * CF names them (kCFRunLoopEntry, BeforeTimers, BeforeSources,
 * BeforeWaiting, AfterWaiting, Exit).
 *
 * One observer of every activity prints each one. The loop has a timer that
 * fires twice, 50 ms apart, and then stops the loop, so the trace shows:
 * a pass that sleeps (BeforeWaiting) until the timer wakes it (AfterWaiting),
 * the timer firing, and the Exit at the end.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <CRunLoop.h>

static const char *name_of(RLRunLoopActivity a) {
    switch (a) {
    case kRLRunLoopEntry: return "kCFRunLoopEntry          (entering the loop)";
    case kRLRunLoopBeforeTimers: return "kCFRunLoopBeforeTimers   (about to handle timers)";
    case kRLRunLoopBeforeSources: return "kCFRunLoopBeforeSources  (about to handle sources)";
    case kRLRunLoopBeforeWaiting: return "kCFRunLoopBeforeWaiting  (about to sleep)";
    case kRLRunLoopAfterWaiting: return "kCFRunLoopAfterWaiting   (just woke up)";
    case kRLRunLoopExit: return "kCFRunLoopExit           (leaving the loop)";
    default: return "?";
    }
}

static void print_activity(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    int *step = info;
    printf("  %2d  %s\n", ++*step, name_of(a));
}

static void fire(RLRunLoopTimerRef t, void *info) {
    int *fired = info;
    printf("        -> timer fired (%d)\n", ++*fired);
    if (*fired == 2) {
        RLRunLoopTimerInvalidate(t);
        RLRunLoopStop(RLRunLoopGetCurrent());
    }
}

int main(void) {
    printf("== activity trace: one observer of kRLRunLoopAllActivities, a timer every 50 ms ==\n");
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int step = 0, fired = 0;
    RLRunLoopObserverContext octx = {0, &step, NULL, NULL, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, print_activity, &octx);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopTimerContext tctx = {0, &fired, NULL, NULL, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 0.05, 0.05, 0, 0, fire, &tctx);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);

    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false);
    printf("RLRunLoopRunInMode returned %s\n\n", r == kRLRunLoopRunStopped ? "kRLRunLoopRunStopped" : "something else");

    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRelease(t);
    return 0;
}
