/*
 * rl_run.c: running a loop: CFRunLoopRunSpecific and __CFRunLoopRun.
 *
 * One pass, in CF's order: BeforeTimers and BeforeSources observers, blocks,
 * version-0 sources, blocks again if a source ran; then, unless the pass only
 * polls, BeforeWaiting, the sleep, AfterWaiting; then the timers, version-1
 * sources and wake-ups that ended the sleep; blocks; the exit checks.
 * Invariants: the loop's lock is held everywhere here except inside the wait
 * and the callouts; `current_run` always names the innermost active run.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include "rl_internal.h"
#include "rl_main_queue.h"

#define MAX_EVENTS 64

typedef struct {
    struct epoll_event events[MAX_EVENTS];
    int  count;
} wait_result;

static void set_deadline(rl_run *run, RLTimeInterval seconds) {
    if (isnan(seconds) || seconds <= 0) {
        run->polling = true;
        run->deadline_ns = 0;
    } else if (seconds > RL_INTERVAL_LIMIT) {
        run->deadline_ns = RL_NEVER;
    } else {
        run->deadline_ns = rl_mono_now() + rl_seconds_to_ns(seconds);
    }
}

static bool has_wake_event(const struct epoll_event *events, int n) {
    for (int i = 0; i < n; i++)
        if (events[i].data.u64 == RL_EVENT_WAKE) return true;
    return false;
}

/* Only the wake eventfd's edge, and no wake-up pending: an edge written for
   a sleep that already ended for another reason (the waker saw `sleeping`
   just before the loop woke). The wake-up it carried was for that sleep. */
static bool only_stale_wake(RLRunLoopRef rl, const struct epoll_event *events, int n) {
    for (int i = 0; i < n; i++)
        if (events[i].data.u64 != RL_EVENT_WAKE && events[i].data.u64 != RL_EVENT_DISARMED) return false;
    return !atomic_load(&rl->wake_pending);
}

/* epoll_wait's timeout for `deadline`, rounded up (never early). */
static int timeout_ms_until(int64_t deadline) {
    if (deadline == RL_NEVER) return -1;
    int64_t left = deadline - rl_mono_now();
    if (left <= 0) return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 1000000000 ? 1000000000 : (int)ms;
}

/* The sleep (or the poll) itself, unlocked. `deadline` is RL_NEVER when the
   timerfd ends it. Neither a signal (EINTR) nor a stale wake-up ends it: CF's
   wait is not interrupted by signals, so it is resumed for what is left. */
static int sleep_until_event(RLRunLoopRef rl, wait_result *out, bool poll, int64_t deadline) {
    for (;;) {
        int timeout = poll ? 0 : timeout_ms_until(deadline);
        int n = rl_wait_events(rl, out->events, MAX_EVENTS, timeout);
        if (n > 0 && !poll && only_stale_wake(rl, out->events, n)) continue;
        if (n >= 0) return n;   /* else EINTR: any other failure was fatal */
    }
}

/* Adaptive spinning: a loop whose last sleep was ended by a wake-up within
   a few microseconds (a conversation with another thread) first waits a
   little awake, with `sleeping` off, so the answer costs neither thread a
   system call nor a context switch. Loops that sleep longer never spin, so
   an idle or timer-driven loop costs nothing more; a single CPU never spins. */
#define SPIN_IF_LAST_SLEEP_NS  50000
#define SPIN_FOR_NS            20000

static bool spin_for_wake_up(RLRunLoopRef rl, int64_t deadline) {
    int64_t start = rl_mono_now();
    int64_t until = start + SPIN_FOR_NS < deadline ? start + SPIN_FOR_NS : deadline;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&rl->wake_pending, memory_order_acquire)) return true;
        if ((i & 63) == 0 && rl_mono_now() >= until) return false;
        rl_cpu_relax();
    }
}

/* A spin that is not answered (the other thread did not get a CPU: an
   oversubscribed machine, or threads sharing one CPU) burned its time for
   nothing and took that CPU from the threads that needed it. Each failure
   doubles the number of short sleeps taken without spinning before the next
   try (up to SPIN_BACKOFF_MAX); an answered spin resets it. */
#define SPIN_BACKOFF_MAX 1024

static bool should_spin(RLRunLoopRef rl) {
    if (!rl->multiprocessor || rl->last_sleep_ns >= SPIN_IF_LAST_SLEEP_NS) return false;
    if (rl->spin_skips_left > 0) {
        rl->spin_skips_left--;
        return false;
    }
    return true;
}

static void note_spin_result(RLRunLoopRef rl, bool answered) {
    if (answered) {
        rl->spin_backoff = 0;
        return;
    }
    rl->spin_backoff = rl->spin_backoff ? rl->spin_backoff * 2 : 1;
    if (rl->spin_backoff > SPIN_BACKOFF_MAX) rl->spin_backoff = SPIN_BACKOFF_MAX;
    rl->spin_skips_left = rl->spin_backoff;
}

/* __CFRunLoopServiceMachPort: sleeps (or polls) on the loop's epoll set, with
   the mode's version-1 sources armed.
   Returns with `sleeping` off and pending wake-ups consumed (CF's
   SetIgnoreWakeUps: the next pass re-scans everything anyway). */
static void wait_for_events(RLRunLoopRef rl, rl_mode *m, bool poll, wait_result *out) {
    /* A deadline that already passed (a loop behind a dense run of timers)
       needs no timer programming and no sleep: poll, and fire it next. */
    int64_t deadline = rl_mode_next_deadline(m);
    if (!poll && deadline <= rl_mono_now()) poll = true;
    if (!poll && should_spin(rl)) {
        rl_loop_unlock(rl);
        bool woken = spin_for_wake_up(rl, deadline);
        rl_loop_relock(rl);
        note_spin_result(rl, woken);
        /* Woken: poll the fds once, then run the pass. Not woken: the
           conversation is over; sleep, and do not spin again until a sleep
           is short once more. Other threads may have changed the timers
           while the lock was free. */
        if (woken) poll = true;
        else rl->last_sleep_ns = RL_NEVER;
        deadline = rl_mode_next_deadline(m);
    }
    rl_wait_prepare(rl, m);
    if (rl->ready_regs) poll = true;   /* a source is always ready (poll()'s answer for its fd) */
    int64_t timeout_deadline = RL_NEVER;   /* the timerfd ends the sleep */
    if (!poll) {
        if (!rl_mode_arm(m, deadline)) timeout_deadline = deadline;
        atomic_store(&rl->sleeping, true);
        if (atomic_load(&rl->wake_pending)) {
            poll = true;
            atomic_store(&rl->sleeping, false);
        }
    }
    rl_loop_unlock(rl);
    int64_t slept_at = poll ? 0 : rl_mono_now();
    int n = sleep_until_event(rl, out, poll, timeout_deadline);
    int64_t woke_at = poll ? 0 : rl_mono_now();
    rl_loop_relock(rl);
    atomic_store(&rl->sleeping, false);
    bool woken = atomic_exchange(&rl->wake_pending, false) && has_wake_event(out->events, n);
    if (!poll) rl->last_sleep_ns = woken ? woke_at - slept_at : RL_NEVER;
    n = rl_wait_add_ready(rl, m, out->events, n, MAX_EVENTS);
    out->count = n;
    for (int i = 0; i < n; i++)
        if (out->events[i].data.u64 == RL_EVENT_TIMER) rl->armed_ns = RL_NEVER;   /* it expired */
}

/* The version-1 sources that ended the sleep. With returnAfterSourceHandled
   only one may run; after a callout that ran the loop re-entrantly, the rest
   of the batch is stale (the nested run may have consumed it) and is left for
   the next wait, which reports whatever is still readable. */
static bool handle_source1_events(RLRunLoopRef rl, rl_mode *m, const wait_result *w, bool stop_after_one) {
    bool handled = false;
    uint64_t generation = rl->run_generation;
    for (int i = 0; i < w->count; i++) {
        uint64_t token = w->events[i].data.u64;
        if (token == RL_EVENT_WAKE || token == RL_EVENT_TIMER || token == RL_EVENT_DISARMED) continue;
        if (handled && stop_after_one) break;
        if (rl->run_generation != generation) break;
        if (rl_do_source1(rl, m, token, w->events[i].events)) handled = true;
    }
    return handled;
}

static RLRunLoopRunResult exit_check(RLRunLoopRef rl, rl_mode *m, rl_run *run, bool handled, bool stop_after_one) {
    if (handled && stop_after_one) return kRLRunLoopRunHandledSource;
    if (run->polling || (run->deadline_ns != RL_NEVER && rl_mono_now() >= run->deadline_ns))
        return kRLRunLoopRunTimedOut;
    if (run->stopped) {
        run->stopped = false;
        return kRLRunLoopRunStopped;
    }
    if (rl_mode_is_empty(rl, m)) return kRLRunLoopRunFinished;
    return 0;
}

/* The common items a mode lacks since an add ran out of memory join it
   before its passes, so they recover once memory is back. */
static void complete_common(RLRunLoopRef rl, rl_mode *m) {
    if (!m->common_incomplete) return;
    rl_callback_list scheduled = {0};
    rl_mode_complete_common(rl, m, &scheduled);
    if (!scheduled.count) {
        free(scheduled.items);
        return;
    }
    rl_loop_unlock(rl);
    rl_callback_list_run_schedule(rl, &scheduled);
    rl_loop_relock(rl);
}

/* __CFRunLoopRun */
static RLRunLoopRunResult run_passes(RLRunLoopRef rl, rl_mode *m, rl_run *run, bool stop_after_one) {
    if (run->stopped) {
        run->stopped = false;
        return kRLRunLoopRunStopped;
    }
    wait_result w;
    for (;;) {
        complete_common(rl, m);
        rl_do_observers(rl, m, kRLRunLoopBeforeTimers);
        rl_do_observers(rl, m, kRLRunLoopBeforeSources);
        rl_do_blocks(rl, m);
        bool handled = rl_do_sources0(rl, m, stop_after_one);
        if (handled) rl_do_blocks(rl, m);

        /* A mode left empty by its own blocks or sources has nothing that
           could end a sleep but the timeout: CF would sleep it out; we
           finish now. */
        bool poll = handled || run->polling || rl_mode_is_empty(rl, m);
        if (!poll) rl_do_observers(rl, m, kRLRunLoopBeforeWaiting);
        wait_for_events(rl, m, poll, &w);
        if (!poll) rl_do_observers(rl, m, kRLRunLoopAfterWaiting);

        rl_do_timers(rl, m);
        if (!(handled && stop_after_one) && handle_source1_events(rl, m, &w, stop_after_one)) handled = true;
        rl_do_blocks(rl, m);

        RLRunLoopRunResult result = exit_check(rl, m, run, handled, stop_after_one);
        if (result) return result;
    }
}

/* libdispatch may be loaded after the main loop was made (dlopen): look for
   it again, at most once a second, until it is found. */
static void attach_main_queue_late(RLRunLoopRef rl) {
    if (!rl->is_main || rl->main_queue_attached) return;
    int64_t now = rl_mono_now();
    if (now < rl->main_queue_next_try_ns) return;
    rl->main_queue_next_try_ns = now + 1000000000;
    rl->main_queue_attached = rl_main_queue_install(rl);
}

/* CFRunLoopRunSpecific */
static RLRunLoopRunResult run_specific(RLRunLoopRef rl, RLRunLoopMode mode, RLTimeInterval seconds,
                                       bool stop_after_one) {
    if (!rl || !rl_mode_name_is_valid(mode) || rl_mode_name_is_common(mode)) return kRLRunLoopRunFinished;
    attach_main_queue_late(rl);
    rl_loop_lock(rl);
    rl_mode *m = rl->dead ? NULL : rl_mode_find(rl, mode);
    if (m) complete_common(rl, m);
    /* A nested run that cannot have its scratch space (out of memory)
       does not start: finished, as for an empty mode. */
    if (!m || rl_mode_is_empty(rl, m) || !rl_loop_reserve_scratch(rl, rl->depth + 1)) {
        rl_loop_unlock(rl);
        return kRLRunLoopRunFinished;
    }
    rl_mode_read_timer_slack(rl);
    rl_run run = {.outer = rl->current_run, .mode = m};
    set_deadline(&run, seconds);
    int64_t outer_deadline = m->run_deadline_ns;
    m->run_deadline_ns = run.deadline_ns;
    rl->current_run = &run;
    rl->depth++;
    rl->run_generation++;
    /* Wake-ups sent before the run began are moot (CF ignores them while a
       loop is not running): the first pass scans everything anyway. */
    atomic_store(&rl->wake_pending, false);

    rl_do_observers(rl, m, kRLRunLoopEntry);
    RLRunLoopRunResult result = run_passes(rl, m, &run, stop_after_one);
    rl_do_observers(rl, m, kRLRunLoopExit);

    rl->depth--;
    rl->current_run = run.outer;
    m->run_deadline_ns = outer_deadline;
    rl_loop_unlock(rl);
    return result;
}

RLRunLoopRunResult RLRunLoopRunInMode(RLRunLoopMode mode, RLTimeInterval seconds, bool returnAfterSourceHandled) {
    return run_specific(RLRunLoopGetCurrent(), mode, seconds, returnAfterSourceHandled);
}

void RLRunLoopRun(void) {
    RLRunLoopRunResult result;
    do {
        result = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1.0e10, false);
    } while (result != kRLRunLoopRunStopped && result != kRLRunLoopRunFinished);
}
