/*
 * rl_callout.h: the callouts (rl_callout.c), every call into user code, with
 * names that tell a backtrace what the loop was doing (CF's
 * __CFRUNLOOP_IS_CALLING_OUT_TO_*__). Global in the library but not public:
 * the core calls them, and the tests that look for their frames include
 * this header rather than declare them again. Each is handed the loop it
 * calls out for, which counts and times it and fires its probes.
 */
#ifndef RL_CALLOUT_H
#define RL_CALLOUT_H

#include <CRunLoopCore.h>

void RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION(RLRunLoopRef rl, RLRunLoopObserverCallBack fn,
                                                        RLRunLoopObserverRef o, RLRunLoopActivity activity, void *info);
void RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION(RLRunLoopRef rl, RLRunLoopTimerCallBack fn, RLRunLoopTimerRef t,
                                                    void *info);
void RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION(RLRunLoopRef rl, void (*perform)(void *), void *info);
void RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION(RLRunLoopRef rl, void (*perform)(void *), void *info);
void RL_IS_CALLING_OUT_TO_A_BLOCK(RLRunLoopRef rl, void (*fn)(void *), void *info);
/* A queued payload (RLRunLoopPerformPayload): fn(payload, true). */
void RL_IS_CALLING_OUT_TO_A_BLOCK_PAYLOAD(RLRunLoopRef rl, void (*fn)(void *, bool), void *payload);
void RL_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE(RLRunLoopRef rl, void (*drain)(void *), void *msg);

#endif
