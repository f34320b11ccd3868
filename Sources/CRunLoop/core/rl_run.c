/*
 * rl_run.c: running a loop: CFRunLoopRunSpecific and __CFRunLoopRun.
 *
 * One pass, in CF's order: BeforeTimers and BeforeSources observers, blocks,
 * version-0 sources, blocks again if a source ran; then, unless the pass only
 * polls, BeforeWaiting, the sleep, AfterWaiting; then one thing that ended
 * the sleep (the due timers, or one version-1 source, or the wake-up);
 * blocks; the exit checks. Several descriptors ready at once are taken from
 * the kernel in one epoll_wait and handed out one per pass, as CF's passes
 * would each have received one.
 * Invariants: the loop's lock is held everywhere here except inside the wait
 * (rl_wait.c) and the callouts; `current_run` always names the innermost
 * active run.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include "rl_internal.h"
#include "rl_main_queue.h"

#define MAX_EVENTS 64

/* What one wait took from the kernel, handed out one event per pass. Only
   the run that took it uses it, and only while no run nested in a callout
   has waited since (the nested run may have handled what it reports). */
typedef struct {
    struct epoll_event events[MAX_EVENTS];
    int count;
    int next;            /* the next event to hand out */
    uint64_t generation; /* the loop's run_generation when taken */
} event_batch;

static void set_deadline(RLRunLoopRef rl, rl_run *run, RLTimeInterval seconds) {
    if (isnan(seconds) || seconds <= 0) {
        run->polling = true;
        run->deadline_ns = 0;
    } else if (seconds > RL_INTERVAL_LIMIT) {
        run->deadline_ns = RL_NEVER;
    } else {
        run->deadline_ns = rl_loop_now(rl) + rl_seconds_to_ns(seconds);
    }
}

/* How stale the descriptors' readiness may get while answered spins skip
   polling them (a conversation of sub-microsecond round trips would
   otherwise make a system call each): at most this many answered spins, and at
   most this long, short beside one real wake-up (tens of microseconds), so
   a ready descriptor waits no longer than the sleep CF's loop would have
   made to see it. */
#define POLL_EVERY_SPINS 64
#define POLL_EVERY_NS    50000

/* After an answered spin: whether the descriptors are due a poll. A mode
   that watches none has nothing for a poll to report but the timerfd, and
   the pass fires timers by the clock. */
static bool descriptors_due_a_poll(RLRunLoopRef rl, const rl_mode *m) {
    if (!m->v1_count) return false;
    int64_t now = rl_mono_now();
    if (++rl->wait.unpolled_spins < POLL_EVERY_SPINS && now - rl->wait.polled_at_ns < POLL_EVERY_NS) return false;
    rl->wait.unpolled_spins = 0;
    rl->wait.polled_at_ns = now;
    return true;
}

static void wait_on_manual_clock(RLRunLoopRef rl, rl_mode *m, bool poll, event_batch *out);

/* __CFRunLoopServiceMachPort: sleeps (or polls) on the loop's epoll set, with
   the mode's version-1 sources armed, until the mode's next deadline (the
   handshake with wakers, the spin and the sleep are rl_wait.c's). */
static void wait_for_events(RLRunLoopRef rl, rl_mode *m, bool poll, event_batch *out) {
    if (__builtin_expect(rl_loop_manual_clock(rl) != NULL, 0)) {
        wait_on_manual_clock(rl, m, poll, out);
        return;
    }
    /* A deadline that already passed (a loop behind a dense run of timers)
       needs no timer programming and no sleep: poll, and fire it next. */
    int64_t deadline = rl_mode_next_deadline(m);
    if (!poll && deadline <= rl_mono_now()) poll = true;
    out->count = out->next = 0;
    rl_spin_result spin = poll ? RL_SPIN_SKIPPED : rl_wait_spin_locked(rl, deadline);
    if (spin == RL_SPIN_ANSWERED && !descriptors_due_a_poll(rl, m)) {
        /* The pass runs at once, without the poll's system call. Answering a
           conversation that much sooner often catches the other thread
           before it goes to sleep (an actor's round trip through a dispatch
           worker, a main loop whose main-queue descriptor is watched). */
        rl_wait_take_wake_up_locked(rl);
        return;
    }
    if (spin != RL_SPIN_SKIPPED) {
        /* Answered: poll the fds once, then run the pass. Either way other
           threads may have changed the timers while the lock was free. */
        if (spin == RL_SPIN_ANSWERED) poll = true;
        deadline = rl_mode_next_deadline(m);
    }
    out->count = rl_wait_sleep_locked(rl, m, poll, deadline, out->events, MAX_EVENTS);
    out->generation = rl->run_generation;
}

/* Whether the batch still holds a version-1 source to perform, skipping
   what is not one (the wake-up, the timerfd) or no longer is: a
   registration removed, disarmed or remade since, or a source invalidated.
   A run nested in a callout since the batch was taken makes it all stale. */
static bool batch_has_source(RLRunLoopRef rl, event_batch *b) {
    if (b->next < b->count && b->generation != rl->run_generation) b->count = b->next = 0;
    while (b->next < b->count && !rl_source1_token_is_live(rl, b->events[b->next].data.u64)) b->next++;
    return b->next < b->count;
}

/* The one thing a pass handles after its wait, as CF's pass handles the one
   port its wait received: the due timers, or one ready version-1 source, or
   nothing (a wake-up). Timers go first, except right after a pass that
   handled them (in this run or the last: a host may pump the loop one
   polling run at a time), so neither timers due at every pass nor ready
   descriptors can starve the other. Returns whether a source was handled. */
static bool handle_wake_up_source(RLRunLoopRef rl, rl_mode *m, event_batch *b) {
    bool source_waits = batch_has_source(rl, b);
    if (!(rl->timers.went_last && source_waits) && rl_do_timers(rl, m)) {
        rl->timers.went_last = true;
        return false;
    }
    rl->timers.went_last = false;
    if (!source_waits || !batch_has_source(rl, b)) return false; /* the timers' callouts may have changed it */
    const struct epoll_event *ev = &b->events[b->next++];
    return rl_do_source1(rl, m, ev->data.u64, ev->events);
}

static RLRunLoopRunResult exit_check(RLRunLoopRef rl, rl_mode *m, rl_run *run, bool handled, bool stop_after_one) {
    if (handled && stop_after_one) return kRLRunLoopRunHandledSource;
    if (run->polling || (run->deadline_ns != RL_NEVER && rl_loop_now(rl) >= run->deadline_ns))
        return kRLRunLoopRunTimedOut;
    if (run->stopped) {
        /* Idle only on a manual clock, and last: after Finished. A pass whose
           wait found nothing ends here, so the mark is never stale. */
        bool asked = run->stopped & RL_RUN_STOP_ASKED;
        run->stopped = 0;
        if (asked) return kRLRunLoopRunStopped;
        return rl_mode_is_empty(rl, m) ? kRLRunLoopRunFinished : kRLRunLoopRunIdle;
    }
    if (rl_mode_is_empty(rl, m)) return kRLRunLoopRunFinished;
    return 0;
}

/* A manual clock's wait: time moves instead of a sleep (rl_clock.c). The
   run waiting is the loop's current one. */
static void wait_on_manual_clock(RLRunLoopRef rl, rl_mode *m, bool poll, event_batch *out) {
    rl_run *run = rl->current_run;
    out->next = 0;
    if (rl_clock_wait(rl, m, poll, run->polling ? RL_NEVER : run->deadline_ns, out->events, MAX_EVENTS, &out->count))
        run->stopped |= RL_RUN_IDLE;
    out->generation = rl->run_generation;
}

/* The common items a mode lacks since an add ran out of memory join it
   before its passes, so they recover once memory is back. */
static void complete_common(RLRunLoopRef rl, rl_mode *m) {
    if (!m->common_incomplete) return;
    rl_callback_list scheduled = {0};
    rl_loop_complete_common_mode_locked(rl, m, &scheduled);
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
        run->stopped = 0;
        return kRLRunLoopRunStopped;
    }
    event_batch batch = {.count = 0};
    for (;;) {
        rl_trace_pass_begin(rl, m);
        rl_loop_let_callers_in(rl);
        complete_common(rl, m);
        rl_do_observers(rl, m, kRLRunLoopBeforeTimers);
        rl_do_observers(rl, m, kRLRunLoopBeforeSources);
        rl_do_blocks(rl, m);
        bool handled = rl_do_sources0(rl, m, stop_after_one);
        if (handled) rl_do_blocks(rl, m);

        /* As CF, a mode left empty by its blocks still sleeps: until its
           timeout, a wake-up, or a timer another thread adds. A batch with
           sources left stands for a wait that would end at once. */
        bool poll = handled || run->polling;
        if (!poll) rl_do_observers(rl, m, kRLRunLoopBeforeWaiting);
        if (!batch_has_source(rl, &batch)) wait_for_events(rl, m, poll, &batch);
        if (!poll) rl_do_observers(rl, m, kRLRunLoopAfterWaiting);

        if (handle_wake_up_source(rl, m, &batch)) handled = true;
        rl_do_blocks(rl, m);

        RLRunLoopRunResult result = exit_check(rl, m, run, handled, stop_after_one);
        rl_trace_pass_end(rl, result);
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
    if (!m || rl_mode_is_empty(rl, m) || !rl_scratch_reserve(rl, rl->depth + 1)) {
        rl_loop_unlock(rl);
        return kRLRunLoopRunFinished;
    }
    rl_mode_read_timer_slack(rl);
    rl_run run = {.outer = rl->current_run, .mode = m};
    set_deadline(rl, &run, seconds);
    int64_t outer_deadline = m->run_deadline_ns;
    m->run_deadline_ns = run.deadline_ns;
    rl->current_run = &run;
    rl->depth++;
    rl->run_generation++;
    /* Wake-ups sent before the run began are moot (CF ignores them while a
       loop is not running): the first pass scans everything anyway. */
    atomic_store(&rl->wait.wake_pending, false);

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
    } while (result != kRLRunLoopRunStopped && result != kRLRunLoopRunFinished && result != kRLRunLoopRunIdle);
}
