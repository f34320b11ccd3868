/* rltest_badinput.h: what the bad-input and misuse tests (test_badinput.c,
   test_badinput_extras.c, test_misuse.c, test_fd_reuse.c) share: the check
   each case ends with, that the loop
   still services a source and a timer after whatever the case did to it
   (counted in rltest.h's rl_test_calls). Include after rltest.h. */
#ifndef RLTEST_BADINPUT_H
#define RLTEST_BADINPUT_H

#include <CRunLoop.h>
#include "rltest.h"

/* The loop still services a source and a timer after whatever came before. */
static void assert_loop_still_works(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int before = rl_test_calls;
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, "works");
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("works", 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_calls, before + 1);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.01, 0, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, t, "works");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("works", 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_calls, before + 2);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(t);
}

#endif
