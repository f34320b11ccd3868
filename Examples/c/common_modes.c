/*
 * common_modes.c: a timer added to kRLRunLoopCommonModes keeps
 * firing while the loop runs a custom "tracking" mode (UITrackingRunLoopMode
 * while a scroll view is dragged), because "tracking" was made a common
 * mode; a timer added only to the default mode pauses meanwhile.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <CRunLoop.h>

static const RLRunLoopMode tracking = "UITrackingRunLoopMode";

typedef struct {
    const char *name;
    int fired;
} timer_info;

static void fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    timer_info *ti = info;
    char *mode = RLRunLoopCopyCurrentMode(RLRunLoopGetCurrent());
    printf("  %-22s fired (%d) while the loop runs in %s\n", ti->name, ++ti->fired, mode);
    free(mode);
}

static void run_for(RLRunLoopMode mode, double seconds) {
    printf("-- running in %s for %.2f s\n", mode, seconds);
    RLRunLoopRunInMode(mode, seconds, false);
}

int main(void) {
    printf("== a timer in the common modes keeps firing in a custom tracking mode ==\n");
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddCommonMode(rl, tracking);
    timer_info common = {"common-modes timer", 0}, plain = {"default-mode timer", 0};
    RLRunLoopTimerContext c1 = {0, &common, NULL, NULL, NULL}, c2 = {0, &plain, NULL, NULL, NULL};
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef t1 = RLRunLoopTimerCreate(now + 0.05, 0.1, 0, 0, fire, &c1);
    RLRunLoopTimerRef t2 = RLRunLoopTimerCreate(now + 0.05, 0.1, 0, 0, fire, &c2);
    RLRunLoopAddTimer(rl, t1, kRLRunLoopCommonModes);
    RLRunLoopAddTimer(rl, t2, kRLRunLoopDefaultMode);

    run_for(kRLRunLoopDefaultMode, 0.22);
    run_for(tracking, 0.3); /* "dragging": only the common-modes timer fires */
    run_for(kRLRunLoopDefaultMode, 0.2);
    printf("common-modes timer fired %d times, default-mode timer %d times\n\n", common.fired, plain.fired);

    RLRunLoopTimerInvalidate(t1);
    RLRunLoopTimerInvalidate(t2);
    RLRelease(t1);
    RLRelease(t2);
    return 0;
}
