/*
 * rl_callout.h: the callouts (rl_callout.c), every call into user code, with
 * names that tell a backtrace what the loop was doing (CF's
 * __CFRUNLOOP_IS_CALLING_OUT_TO_*__). Global in the library but not public:
 * the core calls them, and the tests that look for their frames include
 * this header rather than declare them again.
 */
#ifndef RL_CALLOUT_H
#define RL_CALLOUT_H

#include <CRunLoopCore.h>

void RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION(RLRunLoopObserverCallBack fn, RLRunLoopObserverRef o,
                                                        RLRunLoopActivity activity, void *info);
void RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION(RLRunLoopTimerCallBack fn, RLRunLoopTimerRef t, void *info);
void RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION(void (*perform)(void *), void *info);
void RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION(void (*perform)(void *), void *info);
void RL_IS_CALLING_OUT_TO_A_BLOCK(void (*fn)(void *), void *info);
/* A queued payload (RLRunLoopPerformPayload): fn(payload, true). */
void RL_IS_CALLING_OUT_TO_A_BLOCK_PAYLOAD(void (*fn)(void *, bool), void *payload);
void RL_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE(void (*drain)(void *), void *msg);

#endif
