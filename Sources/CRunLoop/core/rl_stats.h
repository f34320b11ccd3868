/*
 * rl_stats.h: a loop's statistics (RLRunLoopCopyStatistics), kept by the
 * loop's own thread (rl_stats.c).
 *
 * The counters are written only by the loop's thread and read by any thread
 * without a lock: each is a relaxed atomic written with a plain load and
 * store (no read-modify-write instruction), which costs what a plain
 * counter does and makes the racy reads defined. The longest callout's
 * fields change together under a sequence lock, so a reader never mixes two
 * of them.
 *
 * Timing callouts (the longest one) reads the coarse monotonic clock, a few
 * nanoseconds a reading, and not around every callout: a batch of callouts
 * (those between two relocks of the loop's lock: one pass's queued
 * functions, its version-0 sources; each observer, timer and version-1
 * perform is a batch of its own) is read after each of its first
 * RL_STATS_SINGLES callouts, then after every RL_STATS_GROUP, and once at its
 * end. The callouts of a group are counted when it is read, so a drain of a
 * million queued functions costs a few stores each and a clock reading per
 * 64. Only callouts at run depth 1 are timed: a callout that runs the loop
 * again is timed whole, and those nested in it are only counted.
 */
#ifndef RL_STATS_H
#define RL_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "CRunLoopStatistics.h"

#define RL_STATS_SINGLES       8
#define RL_STATS_GROUP         64
/* Every timer may be this late without a fault (see timersFiredLate). */
#define RL_STATS_LATE_FLOOR_NS 1000000

typedef _Atomic uint64_t rl_counter;

/* The loop's thread adds to its own counter: no other thread writes it. */
static inline void rl_count(rl_counter *c, uint64_t n) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

typedef struct {
    rl_counter passes;
    rl_counter sleeps;
    rl_counter wake_ups[kRLRunLoopWakeReasonCount];
    rl_counter callouts[kRLRunLoopCalloutKindCount];
    rl_counter timers_fired;
    rl_counter timers_late;
    rl_counter latest_timer_ns;
    /* The longest callout, under a sequence lock: odd while written (rl_stats.c). */
    _Atomic uint32_t longest_seq;
    rl_counter longest_ns;
    _Atomic(const void *) longest_fn;
    _Atomic uint32_t longest_kind;
    _Atomic uint32_t longest_span;
    /* The batch being timed: the loop's thread only. */
    bool open;               /* a reading was taken in this batch */
    uint32_t countdown;      /* callouts after this one until the next reading */
    uint32_t group_size;     /* callouts the next reading covers, less one */
    uint32_t batch_callouts; /* callouts of the batch read so far */
    int64_t group_start;     /* the reading the group began at */
    const void *last_fn;     /* the last callout's function and kind */
    uint32_t last_kind;
} rl_loop_stats;

/* The clock callouts are timed on (rl_stats.c). */
int64_t rl_stats_clock(void);
/* Out of line: each reads the clock. */
void rl_stats_measure(rl_loop_stats *s);
void rl_stats_close_group(rl_loop_stats *s);

/* Around each callout, at the loop's run depth `depth`. A batch begins with
   countdown, group_size and batch_callouts 0 (a zeroed loop, or the end of
   the last batch): its first callouts are read one at a time. */
static inline void rl_stats_callout_begin(rl_loop_stats *s, unsigned depth) {
    if (s->open || depth > 1) return;
    s->open = true;
    s->group_start = rl_stats_clock();
}

static inline void rl_stats_callout_end(rl_loop_stats *s, unsigned depth, RLRunLoopCalloutKind kind, const void *fn) {
    if (depth > 1) {
        rl_count(&s->callouts[kind], 1); /* nested: its outer callout's time covers it */
        return;
    }
    s->last_fn = fn;
    s->last_kind = kind;
    if (s->countdown == 0) rl_stats_measure(s);
    else s->countdown--;
}

/* The loop's thread took its lock back after callouts (or a wait): the
   batch, if one was timed, ends; a group left unread is read now. */
static inline void rl_stats_batch_end(rl_loop_stats *s, unsigned depth) {
    if (!s->open || depth > 1) return;
    if (s->countdown != s->group_size) rl_stats_close_group(s);
    s->open = false;
    s->countdown = s->group_size = s->batch_callouts = 0;
}

static inline void rl_stats_timer_fired(rl_loop_stats *s, int64_t lateness_ns, int64_t tolerance_ns) {
    rl_count(&s->timers_fired, 1);
    if (lateness_ns > (int64_t)atomic_load_explicit(&s->latest_timer_ns, memory_order_relaxed))
        atomic_store_explicit(&s->latest_timer_ns, (uint64_t)lateness_ns, memory_order_relaxed);
    if (lateness_ns > (tolerance_ns > RL_STATS_LATE_FLOOR_NS ? tolerance_ns : RL_STATS_LATE_FLOOR_NS))
        rl_count(&s->timers_late, 1);
}

#endif
