/*
 * CRunLoopStatistics.h: what a run loop has done so far, counted by the loop
 * itself (included by CRunLoop.h). Beyond CF, which keeps no such counts:
 * on macOS the same questions are answered by tracing the loop; here the
 * library's USDT probes answer them in detail (docs/PROBES.md), and these
 * counters answer the usual ones at any time, with no tracer attached.
 *
 * Always on, per loop, and cheap: plain counters that only the loop's own
 * thread writes, with no lock and no atomic read-modify-write, so they cost
 * the hot paths a few instructions (a queued function, the commonest
 * callout, is counted in batches).
 */
#ifndef CRUNLOOP_STATISTICS_H
#define CRUNLOOP_STATISTICS_H

#include <stddef.h>
#include "CRunLoopCore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What ended a sleep of the loop. When several things are ready at once the
   first of timer (or timeout), descriptor, wake-up is counted. */
typedef enum {
    /* The timerfd: one of the running mode's timers was due. */
    kRLRunLoopWakeReasonTimer = 0,
    /* A version-1 source's descriptor was ready (an RLFileDescriptor, a
       message port, a UNIX signal source, ...). */
    kRLRunLoopWakeReasonDescriptor = 1,
    /* RLRunLoopWakeUp, from another thread (or one meant for an earlier sleep
       that arrived late: the sleep then resumes). */
    kRLRunLoopWakeReasonWakeUp = 2,
    /* A signal handled on the loop's thread interrupted the sleep, which
       resumes for the time left (CF's Mach wait is not interrupted). */
    kRLRunLoopWakeReasonSignal = 3,
    /* The run's own deadline (RLRunLoopRunInMode's seconds) with no timer
       due, or the timerfd expiring a little early for a later deadline. */
    kRLRunLoopWakeReasonTimeout = 4,
    kRLRunLoopWakeReasonCount   = 5
} RLRunLoopWakeReason;

/* The kinds of callout, each called through its named frame
   (RL_IS_CALLING_OUT_TO_*, as CF's __CFRUNLOOP_IS_CALLING_OUT_TO_*__). */
typedef enum {
    kRLRunLoopCalloutObserver  = 0, /* an observer's callback */
    kRLRunLoopCalloutTimer     = 1, /* a timer's callback */
    kRLRunLoopCalloutSource0   = 2, /* a version-0 source's perform */
    kRLRunLoopCalloutSource1   = 3, /* a version-1 source's perform */
    kRLRunLoopCalloutBlock     = 4, /* a queued function, block or payload */
    kRLRunLoopCalloutMainQueue = 5, /* the main dispatch queue's drain (main loop only) */
    kRLRunLoopCalloutKindCount = 6
} RLRunLoopCalloutKind;

/* Room in the arrays below: kinds and reasons added later fit without
   moving the fields after them. Entries past the counts above are 0. */
#define RL_STATISTICS_SLOTS 8

/*
 * A loop's counts since it was made. Fill `size` with sizeof(RLRunLoopStatistics)
 * before calling RLRunLoopCopyStatistics: a program built against an older,
 * smaller version of this struct gets the fields it knows, and one built
 * against a newer, larger version gets the fields this library knows, the
 * rest zeroed.
 */
typedef struct RLRunLoopStatistics {
    size_t size; /* in: the caller's sizeof(RLRunLoopStatistics); out: the bytes filled */

    /* Passes begun (each iteration of __CFRunLoopRun, in any mode, nested
       runs included). */
    uint64_t passes;
    /* Times the loop went to sleep: a wait that could block (not a polling
       pass, not a wait skipped for a wake-up already pending, not a spin
       answered before it slept). */
    uint64_t sleeps;
    /* Why the thread woke, indexed by RLRunLoopWakeReason. A sleep that a
       signal or a stale wake-up interrupted, and that resumed, counts once
       in `sleeps` and once per wake-up here. */
    uint64_t wakeUps[RL_STATISTICS_SLOTS];
    /* Callouts made, indexed by RLRunLoopCalloutKind. The main queue's drain
       runs inside its version-1 source's perform and counts in both. */
    uint64_t callouts[RL_STATISTICS_SLOTS];

    /* The longest callout measured (0: none yet), on the coarse monotonic
       clock (CLOCK_MONOTONIC_COARSE, one kernel tick of resolution: 1 to 10
       ms, 4 ms on most distributions), so that timing costs a few
       nanoseconds: a callout shorter than a tick usually reads 0 or one
       tick. It is meant to find the callouts that stall a loop; the probes
       time every callout to the nanosecond.
       What is timed: each of the first few callouts of a batch (the
       queued functions of one pass, its version-0 sources, ...) alone;
       after those, a long batch (a drain of many queued functions) is timed
       a group of up to 64 callouts at a time, and `longestCalloutSpan` says
       how many callouts the measurement covered (1: this one alone; more:
       the group that ended with the named one, which took at most that
       long). A callout that runs the loop again is timed whole, nested
       callouts included (those are counted but not timed themselves). */
    uint64_t    longestCalloutNanoseconds;
    const void *longestCalloutFunction; /* the function called: callback, perform, queued function */
    uint32_t    longestCalloutKind;     /* its RLRunLoopCalloutKind */
    uint32_t    longestCalloutSpan;     /* callouts the measurement covered (see above) */

    /* Timer callouts made (as callouts[kRLRunLoopCalloutTimer]). */
    uint64_t timersFired;
    /* Of those, the timers that fired later than their tolerance allows: more
       than max(tolerance, 1 ms) after their fire date. The millisecond
       covers what every timer may be late by without a fault: the loop's
       own grouping of timers (at most 500 us, see RLRunLoopTimerSetTolerance)
       and the kernel's wake-up latency. Lateness is measured from the fire
       date to the start of the pass that fires the timer (the clock the
       pass reads anyway): a timer that waits behind earlier callouts of the
       same pass is late by more than that. */
    uint64_t timersFiredLate;
    /* The greatest lateness seen, in nanoseconds (as above), late or not. */
    uint64_t latestTimerNanoseconds;
} RLRunLoopStatistics;

/*
 * Copies the loop's counts into *statistics (statistics->size set by the
 * caller, see above); false, with nothing written, for a NULL loop or
 * statistics or a size too small to hold `passes`. Any thread, no lock.
 *
 * Consistency: the loop's thread writes the counts as it goes, without a
 * lock, and this reads them without one. Each count is one the loop had at
 * some moment during the call, but a loop running meanwhile may have moved
 * on between two of them (passes read before a sleep that follows it), and
 * the counts of a batch of queued functions still running may lag by up to
 * 64 callouts until the batch ends. The longest callout's four fields always
 * belong together. Called on the loop's own thread (from a callout, or
 * between runs), the copy is exact up to the callout it is called from.
 */
bool RLRunLoopCopyStatistics(RLRunLoopRef rl, RLRunLoopStatistics *statistics);

/* "timer", "descriptor", "wake-up", "signal", "timeout"; "unknown" for
   anything else. Static storage. */
const char *RLRunLoopWakeReasonGetName(RLRunLoopWakeReason reason);
/* "observer", "timer", "source0", "source1", "block", "main queue";
   "unknown" for anything else. Static storage. */
const char *RLRunLoopCalloutKindGetName(RLRunLoopCalloutKind kind);
/* A few lines that show the counts (as the hang monitor's report prints
   them), each ending in a newline, malloc'd (caller frees); NULL for NULL
   or out of memory. Reads only the fields `statistics->size` covers. */
char *RLRunLoopStatisticsCopyDescription(const RLRunLoopStatistics *statistics);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_STATISTICS_H */
