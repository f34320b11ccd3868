/*
 * rl_callout.c: every call into user code goes through one of these, kept out
 * of line so that a backtrace, a profiler or the hang monitor shows at once
 * what the loop was doing (CF's __CFRUNLOOP_IS_CALLING_OUT_TO_...__ frames).
 * Each also counts and times its callout (rl_stats.h) and fires the
 * callout_begin and callout_end probes around it (docs/PROBES.md).
 */
#define _GNU_SOURCE
#include "rl_internal.h"

#if defined(__clang__)
#define RL_CALLOUT __attribute__((noinline, used))
#else
#define RL_CALLOUT __attribute__((noinline, noclone, used))
#endif

static inline __attribute__((always_inline)) void callout_begin(RLRunLoopRef rl, RLRunLoopCalloutKind kind,
                                                                const void *fn, const void *info) {
    rl_stats_callout_begin(&rl->stats, rl->depth);
    RL_PROBE4(callout_begin, rl, kind, fn, info);
}

static inline __attribute__((always_inline)) void callout_end(RLRunLoopRef rl, RLRunLoopCalloutKind kind,
                                                              const void *fn, const void *info) {
    RL_PROBE4(callout_end, rl, kind, fn, info);
    rl_stats_callout_end(&rl->stats, rl->depth, kind, fn);
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION(RLRunLoopRef rl, RLRunLoopObserverCallBack fn,
                                                                   RLRunLoopObserverRef o, RLRunLoopActivity activity,
                                                                   void *info) {
    callout_begin(rl, kRLRunLoopCalloutObserver, (const void *)fn, info);
    fn(o, activity, info);
    callout_end(rl, kRLRunLoopCalloutObserver, (const void *)fn, info);
    __asm__ volatile(""); /* keeps the frame from becoming a tail call */
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION(RLRunLoopRef rl, RLRunLoopTimerCallBack fn,
                                                               RLRunLoopTimerRef t, void *info) {
    callout_begin(rl, kRLRunLoopCalloutTimer, (const void *)fn, info);
    fn(t, info);
    callout_end(rl, kRLRunLoopCalloutTimer, (const void *)fn, info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION(RLRunLoopRef rl, void (*perform)(void *), void *info) {
    callout_begin(rl, kRLRunLoopCalloutSource0, (const void *)perform, info);
    if (perform) perform(info);
    callout_end(rl, kRLRunLoopCalloutSource0, (const void *)perform, info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION(RLRunLoopRef rl, void (*perform)(void *), void *info) {
    callout_begin(rl, kRLRunLoopCalloutSource1, (const void *)perform, info);
    if (perform) perform(info);
    callout_end(rl, kRLRunLoopCalloutSource1, (const void *)perform, info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_BLOCK(RLRunLoopRef rl, void (*fn)(void *), void *info) {
    callout_begin(rl, kRLRunLoopCalloutBlock, (const void *)fn, info);
    fn(info);
    callout_end(rl, kRLRunLoopCalloutBlock, (const void *)fn, info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_BLOCK_PAYLOAD(RLRunLoopRef rl, void (*fn)(void *, bool), void *payload) {
    callout_begin(rl, kRLRunLoopCalloutBlock, (const void *)fn, payload);
    fn(payload, true);
    callout_end(rl, kRLRunLoopCalloutBlock, (const void *)fn, payload);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE(RLRunLoopRef rl, void (*drain)(void *), void *msg) {
    callout_begin(rl, kRLRunLoopCalloutMainQueue, (const void *)drain, msg);
    drain(msg);
    callout_end(rl, kRLRunLoopCalloutMainQueue, (const void *)drain, msg);
    __asm__ volatile("");
}
