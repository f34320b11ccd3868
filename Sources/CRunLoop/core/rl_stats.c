/*
 * rl_stats.c: a loop's statistics: timing its callouts in batches (see
 * rl_stats.h), why its sleeps ended, and RLRunLoopCopyStatistics.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rl_internal.h"

/* Real time, whatever clock timers use; coarse, so a reading costs a few
   nanoseconds (rl_stats.h). */
int64_t rl_stats_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the longest callout ------------------------------------------------- */

/* A sequence lock, all sequentially consistent (rare on both sides): a
   reader that sees any field of a newer record then sees the sequence
   number that changed before it, and reads again. */
static void note_longest(rl_loop_stats *s, int64_t ns, uint32_t span) {
    if (ns <= 0 || (uint64_t)ns <= atomic_load_explicit(&s->longest_ns, memory_order_relaxed)) return;
    uint32_t seq = atomic_load_explicit(&s->longest_seq, memory_order_relaxed);
    atomic_store(&s->longest_seq, seq + 1);
    atomic_store(&s->longest_ns, (uint64_t)ns);
    atomic_store(&s->longest_fn, s->last_fn);
    atomic_store(&s->longest_kind, s->last_kind);
    atomic_store(&s->longest_span, span);
    atomic_store(&s->longest_seq, seq + 2);
}

/* A group of callouts was read: `n` of them took `ns` together. */
static void group_read(rl_loop_stats *s, int64_t ns, uint32_t n) {
    rl_count(&s->callouts[s->last_kind], n);
    note_longest(s, ns, n);
    s->batch_callouts += n;
}

void rl_stats_measure(rl_loop_stats *s) {
    uint32_t n = s->group_size + 1;
    if (!s->open) { /* a callout that began in a batch that has ended since: counted only */
        rl_count(&s->callouts[s->last_kind], n);
        s->countdown = s->group_size = 0;
        return;
    }
    int64_t now = rl_stats_clock();
    group_read(s, now - s->group_start, n);
    /* The next group: single callouts first, then groups. */
    s->group_start = now;
    s->countdown = s->group_size = s->batch_callouts < RL_STATS_SINGLES ? 0 : RL_STATS_GROUP - 1;
}

void rl_stats_close_group(rl_loop_stats *s) {
    group_read(s, rl_stats_clock() - s->group_start, s->group_size - s->countdown);
}

/* ---- why a sleep ended ---------------------------------------------------- */

static const char *const wake_reason_names[kRLRunLoopWakeReasonCount] = {
    [kRLRunLoopWakeReasonTimer] = "timer",     [kRLRunLoopWakeReasonDescriptor] = "descriptor",
    [kRLRunLoopWakeReasonWakeUp] = "wake-up",  [kRLRunLoopWakeReasonSignal] = "signal",
    [kRLRunLoopWakeReasonTimeout] = "timeout",
};

static const char *const callout_kind_names[kRLRunLoopCalloutKindCount] = {
    [kRLRunLoopCalloutObserver] = "observer", [kRLRunLoopCalloutTimer] = "timer",
    [kRLRunLoopCalloutSource0] = "source0",   [kRLRunLoopCalloutSource1] = "source1",
    [kRLRunLoopCalloutBlock] = "block",       [kRLRunLoopCalloutMainQueue] = "main queue",
};

const char *RLRunLoopWakeReasonGetName(RLRunLoopWakeReason reason) {
    return (unsigned)reason < kRLRunLoopWakeReasonCount ? wake_reason_names[reason] : "unknown";
}

const char *RLRunLoopCalloutKindGetName(RLRunLoopCalloutKind kind) {
    return (unsigned)kind < kRLRunLoopCalloutKindCount ? callout_kind_names[kind] : "unknown";
}

/* The timerfd (or, without one, the wait's own timeout) ended the sleep:
   for a timer if one of m's is due, else for the run's deadline. */
static RLRunLoopWakeReason timer_or_timeout(rl_mode *m) {
    const rl_heap_entry *top = rl_heap_top(&m->timers);
    return top && top->deadline_ns <= rl_mono_now() ? kRLRunLoopWakeReasonTimer : kRLRunLoopWakeReasonTimeout;
}

static RLRunLoopWakeReason wake_reason(rl_mode *m, const struct epoll_event *events, int n) {
    bool timer = n == 0, descriptor = false;
    for (int i = 0; i < n; i++) {
        uint64_t data = events[i].data.u64;
        if (data == RL_EVENT_TIMER) timer = true;
        else if (data != RL_EVENT_WAKE && data != RL_EVENT_DISARMED) descriptor = true;
    }
    if (timer) return timer_or_timeout(m);
    return descriptor ? kRLRunLoopWakeReasonDescriptor : kRLRunLoopWakeReasonWakeUp;
}

void rl_trace_woke(RLRunLoopRef rl, rl_mode *m, const struct epoll_event *events, int n) {
    /* The commonest: a wake-up alone. */
    RLRunLoopWakeReason reason =
        n == 1 && events[0].data.u64 == RL_EVENT_WAKE ? kRLRunLoopWakeReasonWakeUp : wake_reason(m, events, n);
    rl_count(&rl->stats.wake_ups[reason], 1);
    RL_PROBE3(wake, rl, reason, wake_reason_names[reason]);
}

/* ---- reading them --------------------------------------------------------- */

static uint64_t read_counter(rl_counter *c) {
    return atomic_load_explicit(c, memory_order_relaxed);
}

static void read_longest(rl_loop_stats *s, RLRunLoopStatistics *out) {
    for (;;) {
        uint32_t seq = atomic_load(&s->longest_seq);
        if (seq & 1) {
            rl_cpu_relax();
            continue;
        }
        out->longestCalloutNanoseconds = atomic_load(&s->longest_ns);
        out->longestCalloutFunction = atomic_load(&s->longest_fn);
        out->longestCalloutKind = atomic_load(&s->longest_kind);
        out->longestCalloutSpan = atomic_load(&s->longest_span);
        if (atomic_load(&s->longest_seq) == seq) return;
    }
}

bool RLRunLoopCopyStatistics(RLRunLoopRef rl, RLRunLoopStatistics *statistics) {
    if (!rl || !statistics) return false;
    size_t size = statistics->size;
    if (size < offsetof(RLRunLoopStatistics, passes) + sizeof statistics->passes) return false;
    rl_loop_stats *s = &rl->stats;
    RLRunLoopStatistics all = {.size = size < sizeof all ? size : sizeof all};
    all.passes = read_counter(&s->passes);
    all.sleeps = read_counter(&s->sleeps);
    for (int i = 0; i < kRLRunLoopWakeReasonCount; i++) all.wakeUps[i] = read_counter(&s->wake_ups[i]);
    for (int i = 0; i < kRLRunLoopCalloutKindCount; i++) all.callouts[i] = read_counter(&s->callouts[i]);
    read_longest(s, &all);
    all.timersFired = read_counter(&s->timers_fired);
    all.timersFiredLate = read_counter(&s->timers_late);
    all.latestTimerNanoseconds = read_counter(&s->latest_timer_ns);
    /* A newer caller's fields past ours read 0. */
    memset(statistics, 0, size);
    memcpy(statistics, &all, all.size);
    return true;
}

/* ---- describing them ------------------------------------------------------ */

/* The field's value if `size` covers it, else 0. */
#define FIELD(s, f) ((s)->size >= offsetof(RLRunLoopStatistics, f) + sizeof(s)->f ? (s)->f : 0)

static void describe_longest(FILE *f, const RLRunLoopStatistics *s) {
    uint64_t ns = FIELD(s, longestCalloutNanoseconds);
    if (!ns) {
        fprintf(f, "longest callout: none of a clock tick or more\n");
        return;
    }
    uint32_t span = FIELD(s, longestCalloutSpan);
    fprintf(f, "longest callout: %.3f ms, %s %p", (double)ns * 1e-6,
            RLRunLoopCalloutKindGetName((RLRunLoopCalloutKind)FIELD(s, longestCalloutKind)),
            FIELD(s, longestCalloutFunction));
    if (span > 1) fprintf(f, " (with the %u callouts before it)", span - 1);
    fprintf(f, "\n");
}

char *RLRunLoopStatisticsCopyDescription(const RLRunLoopStatistics *s) {
    if (!s || s->size < offsetof(RLRunLoopStatistics, passes) + sizeof s->passes) return NULL;
    char *text = NULL;
    size_t length = 0;
    FILE *f = open_memstream(&text, &length);
    if (!f) return NULL;
    fprintf(f, "passes %llu, sleeps %llu; woken by", (unsigned long long)s->passes,
            (unsigned long long)FIELD(s, sleeps));
    for (int i = 0; i < kRLRunLoopWakeReasonCount; i++)
        fprintf(f, "%s %s %llu", i ? "," : "", wake_reason_names[i],
                (unsigned long long)(s->size >= offsetof(RLRunLoopStatistics, wakeUps) + sizeof s->wakeUps
                                         ? s->wakeUps[i]
                                         : 0));
    fprintf(f, "\ncallouts:");
    for (int i = 0; i < kRLRunLoopCalloutKindCount; i++)
        fprintf(f, "%s %s %llu", i ? "," : "", callout_kind_names[i],
                (unsigned long long)(s->size >= offsetof(RLRunLoopStatistics, callouts) + sizeof s->callouts
                                         ? s->callouts[i]
                                         : 0));
    fprintf(f, "\n");
    describe_longest(f, s);
    fprintf(f, "timers: %llu fired, %llu later than their tolerance (latest %.3f ms after its date)\n",
            (unsigned long long)FIELD(s, timersFired), (unsigned long long)FIELD(s, timersFiredLate),
            (double)FIELD(s, latestTimerNanoseconds) * 1e-6);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
