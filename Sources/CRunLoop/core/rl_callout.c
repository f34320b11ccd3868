/*
 * rl_callout.c: every call into user code goes through one of these, kept out
 * of line so that a backtrace, a profiler or the hang monitor shows at once
 * what the loop was doing (CF's __CFRUNLOOP_IS_CALLING_OUT_TO_...__ frames).
 */
#define _GNU_SOURCE
#include "rl_internal.h"

#if defined(__clang__)
#define RL_CALLOUT __attribute__((noinline, used))
#else
#define RL_CALLOUT __attribute__((noinline, noclone, used))
#endif

RL_CALLOUT void RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION(RLRunLoopObserverCallBack fn, RLRunLoopObserverRef o,
                                                                   RLRunLoopActivity activity, void *info) {
    fn(o, activity, info);
    __asm__ volatile(""); /* keeps the frame from becoming a tail call */
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION(RLRunLoopTimerCallBack fn, RLRunLoopTimerRef t,
                                                               void *info) {
    fn(t, info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION(void (*perform)(void *), void *info) {
    if (perform) perform(info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION(void (*perform)(void *), void *info) {
    if (perform) perform(info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_BLOCK(void (*fn)(void *), void *info) {
    fn(info);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_CALLING_OUT_TO_A_BLOCK_PAYLOAD(void (*fn)(void *, bool), void *payload) {
    fn(payload, true);
    __asm__ volatile("");
}

RL_CALLOUT void RL_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE(void (*drain)(void *), void *msg) {
    drain(msg);
    __asm__ volatile("");
}
