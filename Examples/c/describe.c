/*
 * describe.c: RLCopyDescription of a busy loop, like `po [NSRunLoop
 * currentRunLoop]` on macOS: modes, common modes, sources0 (with their
 * signalled flag), sources1, observers (activities as CF's hex mask, e.g.
 * 0xa0 = BeforeWaiting|Exit) and timers with their next fire dates. Printed
 * from inside a callout, while the loop runs.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CRunLoop.h>

static void nothing(void *info) {
    (void)info;
}

static void port_cb(RLMessagePortRef p, int32_t id, const void *bytes, size_t len, void *info) {
    (void)p;
    (void)id;
    (void)bytes;
    (void)len;
    (void)info;
}

static void observer_cb(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}

static void describe_now(RLRunLoopTimerRef t, void *info) {
    (void)t;
    RLRunLoopSourceSignal(info); /* shows as signalled = Yes */
    char *d = RLCopyDescription(RLRunLoopGetCurrent());
    printf("%s\n\n", d);
    free(d);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void later(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}

int main(void) {
    printf("== RLCopyDescription of a busy loop (like `po [NSRunLoop currentRunLoop]`) ==\n");
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddCommonMode(rl, "UITrackingRunLoopMode");
    RLRunLoopSourceContext sctx;
    memset(&sctx, 0, sizeof sctx);
    sctx.perform = nothing;
    RLRunLoopSourceRef events = RLRunLoopSourceCreate(-1, &sctx);
    RLRunLoopAddSource(rl, events, kRLRunLoopCommonModes);
    RLMessagePortRef port = RLMessagePortCreate(port_cb, NULL, 0);
    RLRunLoopSourceRef port_source = RLMessagePortCreateRunLoopSource(port, 0);
    RLRunLoopAddSource(rl, port_source, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef commit =
        RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting | kRLRunLoopExit, true, 2000000, observer_cb, NULL);
    RLRunLoopAddObserver(rl, commit, kRLRunLoopCommonModes);
    RLHangMonitorRef monitor = RLHangMonitorCreate(rl, 0.25, NULL, NULL);
    RLHangMonitorStart(monitor); /* its two observers per mode show too */
    RLRunLoopTimerRef t1 = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 0.01, 0, 0, 0, describe_now,
                                                &(RLRunLoopTimerContext){0, events, NULL, NULL, NULL});
    RLRunLoopTimerRef t2 = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 60, 1, 0, 0, later, NULL);
    RLRunLoopAddTimer(rl, t1, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, t2, kRLRunLoopCommonModes);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false);

    RLHangMonitorRelease(monitor);
    RLRunLoopSourceInvalidate(events);
    RLMessagePortInvalidate(port);
    RLRunLoopObserverInvalidate(commit);
    RLRunLoopTimerInvalidate(t2);
    RLRelease(events);
    RLRelease(port_source);
    RLRelease(port);
    RLRelease(commit);
    RLRelease(t1);
    RLRelease(t2);
    return 0;
}
