/*
 * rl_time.c: clocks and date-to-deadline conversion.
 *
 * Converting a date with a fresh reading of both clocks each time would give
 * two timers with the same date deadlines that differ by the jitter between
 * the readings (CF's bug: equal dates fire in random order). So the offset
 * between the clocks is cached, and refreshed only when the wall clock has
 * moved against the monotonic one by more than a millisecond. Whether the
 * cached offset is fresh is told by the coarse monotonic clock (one clock
 * tick, a few ms, of resolution): on this path, taken for every timer added,
 * it costs a quarter of a precise reading (~7 ns against ~26 in a VM).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdatomic.h>
#include <time.h>
#include "rl_time.h"

#define UNIX_TO_2001 978307200LL
#define NS_PER_S     1000000000LL

/* realtime(2001 epoch) - monotonic, in ns; 0 until first use. */
static _Atomic int64_t cached_clock_offset;
/* When it was last measured (monotonic ns). */
static _Atomic int64_t cached_clock_offset_at;

int64_t rl_mono_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t rl_mono_coarse_now(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return rl_mono_now();
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Read once: a property of the kernel's clock, the same for every thread. */
static _Atomic int64_t coarse_tick;
/* Without a resolution to read, the longest tick Linux has (HZ=100). */
#define LONGEST_TICK_NS 10000000

int64_t rl_mono_coarse_tick(void) {
    int64_t tick = atomic_load_explicit(&coarse_tick, memory_order_relaxed);
    if (tick) return tick;
    struct timespec res;
    tick = clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 ? (int64_t)res.tv_sec * NS_PER_S + res.tv_nsec
                                                           : LONGEST_TICK_NS;
    if (tick <= 0) tick = 1;
    atomic_store_explicit(&coarse_tick, tick, memory_order_relaxed);
    return tick;
}

static int64_t real_now_2001_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((int64_t)ts.tv_sec - UNIX_TO_2001) * NS_PER_S + ts.tv_nsec;
}

RLAbsoluteTime RLAbsoluteTimeGetCurrent(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)((int64_t)ts.tv_sec - UNIX_TO_2001) + (double)ts.tv_nsec * 1e-9;
}

/* Rounds to the nearest integer; |x| < 2^63 (llround is a libm call). */
static inline int64_t round_to_int64(double x) {
    return (int64_t)(x >= 0 ? x + 0.5 : x - 0.5);
}

int64_t rl_seconds_to_ns(double seconds) {
    if (isnan(seconds)) return 0;
    if (seconds >= 9.2e9) return RL_NEVER;
    if (seconds <= -9.2e9) return -RL_NEVER;
    return round_to_int64(seconds * 1e9);
}

/* real - mono, never above the true offset: the wall clock is read between
   two monotonic readings and paired with the later one. Too small an offset
   makes deadlines late by the gap between the readings, never early; and
   since the cached offset moves down at once, one reading taken across a
   preemption (milliseconds on a loaded machine) would shift every later
   deadline by that much and reorder timers converted before and after it.
   So the reading with the narrowest bracket out of a few is kept. */
#define OFFSET_SAMPLES  4
#define OFFSET_TIGHT_NS 20000
static int64_t sample_clock_offset(void) {
    int64_t best = 0, best_gap = INT64_MAX;
    for (int i = 0; i < OFFSET_SAMPLES && best_gap > OFFSET_TIGHT_NS; i++) {
        int64_t before = rl_mono_now();
        int64_t real = real_now_2001_ns();
        int64_t after = rl_mono_now();
        if (after - before < best_gap) {
            best_gap = after - before;
            best = real - after;
        }
    }
    return best;
}

/* The cached offset moves down at once (otherwise timers could fire early)
   and up only when the wall clock has moved ahead by over a millisecond, so
   that equal dates converted one after another keep equal, or increasing,
   deadlines. It is re-measured at most once a millisecond (once a clock tick,
   as `coarse` reads the coarse clock): converting a date in between costs one
   coarse clock reading. */
static int64_t clock_offset(int64_t coarse) {
    int64_t cached = atomic_load_explicit(&cached_clock_offset, memory_order_relaxed);
    int64_t measured_at = atomic_load_explicit(&cached_clock_offset_at, memory_order_relaxed);
    if (cached != 0 && coarse - measured_at < 1000000 && coarse >= measured_at) return cached;
    int64_t fresh = sample_clock_offset();
    if (cached == 0 || fresh < cached || fresh - cached > 1000000) {
        atomic_store_explicit(&cached_clock_offset, fresh, memory_order_relaxed);
        cached = fresh;
    }
    atomic_store_explicit(&cached_clock_offset_at, coarse, memory_order_relaxed);
    return cached;
}

int64_t rl_deadline_for_date(RLAbsoluteTime date) {
    return rl_deadline_for_date_at(date, rl_mono_coarse_now());
}

int64_t rl_deadline_for_date_at(RLAbsoluteTime date, int64_t coarse_now) {
    if (isnan(date)) return rl_mono_now();
    /* A tick behind now at most: nothing to the clamps, which are 16 years. */
    int64_t mono = coarse_now;
    int64_t offset = clock_offset(mono);
    double ahead = date - (double)(mono + offset) * 1e-9;
    if (ahead > RL_INTERVAL_LIMIT) return mono + rl_seconds_to_ns(RL_INTERVAL_LIMIT);
    if (ahead < -RL_INTERVAL_LIMIT) return mono - rl_seconds_to_ns(RL_INTERVAL_LIMIT);
    /* From the date itself, not from `mono`, so that equal dates map to equal
       deadlines whenever they are converted. */
    return round_to_int64(date * 1e9) - offset;
}

int64_t rl_manual_deadline_for_date(RLAbsoluteTime date, int64_t now) {
    if (isnan(date)) return now;
    double ahead = date - (double)now * 1e-9;
    if (ahead > RL_INTERVAL_LIMIT) return now + rl_seconds_to_ns(RL_INTERVAL_LIMIT);
    if (ahead < -RL_INTERVAL_LIMIT) return now - rl_seconds_to_ns(RL_INTERVAL_LIMIT);
    return rl_seconds_to_ns(date);
}
