/* rltest_badinput.h: what the bad-input tests (test_badinput.c,
   test_badinput_more.c) share: callbacks that count into g_count, and the
   check each case ends with, that the loop still services a source and a
   timer after whatever the case did to it. Include after rltest.h. */
#ifndef RLTEST_BADINPUT_H
#define RLTEST_BADINPUT_H

#include <CRunLoop.h>
#include "rltest.h"

static int g_count;
static void count_perform(void *info) {
    (void)info;
    g_count++;
}
static void count_timer(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    g_count++;
}
static void count_obs(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    g_count++;
}

/* The loop still services a source and a timer after whatever came before. */
static void assert_loop_still_works(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int before = g_count;
    RLRunLoopSourceRef s = rl_test_source0(0, count_perform, NULL);
    RLRunLoopAddSource(rl, s, "works");
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("works", 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(g_count, before + 1);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.01, 0, count_timer, NULL);
    RLRunLoopAddTimer(rl, t, "works");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("works", 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_count, before + 2);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(t);
}

#endif
