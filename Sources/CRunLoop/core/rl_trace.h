/*
 * rl_trace.h: the points of a pass that both count (rl_stats.h) and fire a
 * probe (rl_probe.h), one call at each point; included at the end of
 * rl_internal.h, which they need. docs/PROBES.md lists the probes and their
 * arguments.
 */
#ifndef RL_TRACE_H
#define RL_TRACE_H

#include "rl_probe.h"
#include "rl_stats.h"

/* Top of each pass. */
static inline void rl_trace_pass_begin(RLRunLoopRef rl, const rl_mode *m) {
    rl_count(&rl->stats.passes, 1);
    RL_PROBE3(pass_begin, rl, m->name, rl->depth);
}

/* End of each pass: the run's result, 0 when another pass follows. */
static inline void rl_trace_pass_end(RLRunLoopRef rl, RLRunLoopRunResult result) {
    RL_PROBE2(pass_end, rl, result);
}

/* The loop is about to sleep until `deadline` (monotonic ns; INT64_MAX: no
   deadline). Locked. */
static inline void rl_trace_sleep(RLRunLoopRef rl, int64_t deadline) {
    rl_count(&rl->stats.sleeps, 1);
    RL_PROBE2(sleep, rl, deadline);
}

/* The loop woke and goes back to sleep at once (unlocked): a signal
   interrupted the wait, or a wake-up meant for an earlier sleep ended it. */
static inline void rl_trace_resumed(RLRunLoopRef rl, RLRunLoopWakeReason reason) {
    rl_count(&rl->stats.wake_ups[reason], 1);
    RL_PROBE3(wake, rl, reason, reason == kRLRunLoopWakeReasonSignal ? "signal" : "wake-up");
}

/* The sleep in m ended with these events (relocked, before the always-ready
   registrations are added): counts and traces why (rl_stats.c). */
void rl_trace_woke(RLRunLoopRef rl, rl_mode *m, const struct epoll_event *events, int n);

/* Timer t, due at deadline_ns, fires in the pass that began at `now`.
   Timer locked. */
static inline void rl_trace_timer_fire(RLRunLoopRef rl, RLRunLoopTimerRef t, int64_t deadline_ns, int64_t now) {
    int64_t lateness = now - deadline_ns;
    rl_stats_timer_fired(&rl->stats, lateness, rl_timer_tolerance_ns(t));
    RL_PROBE4(timer_fire, rl, t, t->callout, lateness);
}

#endif
