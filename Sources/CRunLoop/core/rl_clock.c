/*
 * rl_clock.c: a loop's manual clock (CRunLoopClock.h): switching a loop
 * between real time and a clock the program advances, reading and
 * advancing it, and what a pass does instead of sleeping.
 *
 * A manual clock has two readings, in ns since 2001 (a date times 1e9,
 * which is also the frame of the loop's deadlines while it is manual, so a
 * date converts to a deadline exactly and equal dates give equal
 * deadlines):
 *  - `target`, the clock's time: what the program advanced it to;
 *  - `now`, the loop's time: what its timers and runs are measured against.
 * `now` catches up with `target` where a real loop would sleep: one wake-up
 * of the mode's timers at a time (rl_clock_wait), so each timer fires at its
 * own time, in date order, and callouts that schedule more timers on the way
 * see them fire in their place. An advance made by the loop's own thread
 * inside one of its runs (a callout whose work "takes" that long) moves
 * `now` at once, as real time passes during a callout.
 *
 * Invariants: both readings only grow (a switch starts them again), `now`
 * <= `target`, and both are written under the loop's lock; other threads
 * read them as atomics. `rl->clock` is set and cleared by the loop's own
 * thread, outside every run, under the lock; its memory lives as long as
 * the loop, so a thread that loaded it just before a switch reads valid
 * memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "CRunLoopClock.h"
#include "rl_internal.h"

/* Who is told when a callout's advance moves the loop's time (the hang
   monitor's watchdog). `lock` is held while they are told, so one that has
   stopped listening is never called after. */
struct rl_clock_listeners {
    pthread_mutex_t lock;
    struct {
        void (*moved)(void *info);
        void *info;
    } * items;
    size_t count, capacity;
};

/* The readings never pass the latest date a timer may have. */
#define LATEST_NS ((int64_t)(RL_DATE_LIMIT * 1e9))

static int64_t clamp_ns(int64_t ns) {
    if (ns > LATEST_NS) return LATEST_NS;
    if (ns < -LATEST_NS) return -LATEST_NS;
    return ns;
}

static int64_t add_clamped(int64_t a, int64_t b) {
    return b > LATEST_NS - a ? LATEST_NS : a + b; /* b >= 0, |a| <= LATEST_NS */
}

static double ns_to_date(int64_t ns) {
    return (double)ns / 1e9; /* exact below 2^53 ns (104 days from 2001), else the nearest date */
}

/* ---- switching --------------------------------------------------------- */

/* Puts rl on `clock` (NULL: real time) and re-dates its timers for it; on
   failure (out of memory) everything is as it was. Loop locked, no run. */
static bool switch_to(RLRunLoopRef rl, rl_manual_clock *clock, int64_t start) {
    rl_manual_clock *before = rl_loop_manual_clock(rl);
    int64_t now_before = before ? atomic_load(&before->now) : 0;
    int64_t target_before = before ? atomic_load(&before->target) : 0;
    if (clock) {
        atomic_store(&clock->now, start);
        atomic_store(&clock->target, start);
    }
    atomic_store_explicit(&rl->clock, clock, memory_order_release);
    if (rl_timers_reconvert(rl)) {
        /* A deadline armed on real time would end nothing now, or a sleep
           early; the next real sleep arms its own. */
        rl_wait_arm_timer_locked(rl, RL_NEVER);
        return true;
    }
    if (before) {
        atomic_store(&before->now, now_before);
        atomic_store(&before->target, target_before);
    }
    atomic_store_explicit(&rl->clock, before, memory_order_release);
    return false;
}

/* The loop's own thread, outside every run of it: the only place a switch
   cannot pull deadlines from under a pass. Locks rl when it returns true. */
static bool lock_for_a_switch(RLRunLoopRef rl) {
    if (!rl || !rl_loop_is_current_thread(rl)) return false;
    rl_loop_lock(rl);
    if (!rl->dead && !rl->current_run) return true;
    rl_loop_unlock(rl);
    return false;
}

bool RLRunLoopUseManualClock(RLRunLoopRef rl, RLAbsoluteTime date) {
    if (isnan(date) || !lock_for_a_switch(rl)) return false;
    if (!rl->clock_memory) rl->clock_memory = calloc(1, sizeof *rl->clock_memory);
    bool done = rl->clock_memory && switch_to(rl, rl->clock_memory, clamp_ns(rl_seconds_to_ns(date)));
    rl_loop_unlock(rl);
    return done;
}

bool RLRunLoopUseRealClock(RLRunLoopRef rl) {
    if (!lock_for_a_switch(rl)) return false;
    bool done = !rl_loop_manual_clock(rl) || switch_to(rl, NULL, 0);
    rl_loop_unlock(rl);
    return done;
}

bool RLRunLoopHasManualClock(RLRunLoopRef rl) {
    return rl && rl_loop_manual_clock(rl);
}

/* ---- reading ----------------------------------------------------------- */

RLAbsoluteTime RLRunLoopGetCurrentTime(RLRunLoopRef rl) {
    rl_manual_clock *c = rl ? rl_loop_manual_clock(rl) : NULL;
    return c ? ns_to_date(atomic_load_explicit(&c->now, memory_order_relaxed)) : RLAbsoluteTimeGetCurrent();
}

RLAbsoluteTime RLRunLoopClockGetTime(RLRunLoopRef rl) {
    rl_manual_clock *c = rl ? rl_loop_manual_clock(rl) : NULL;
    return c ? ns_to_date(atomic_load_explicit(&c->target, memory_order_relaxed)) : RLAbsoluteTimeGetCurrent();
}

int64_t rl_loop_time_ns(RLRunLoopRef rl) {
    return rl_loop_now(rl);
}

bool rl_loop_clock_is_manual(RLRunLoopRef rl) {
    return rl_loop_manual_clock(rl) != NULL;
}

/* ---- advancing ---------------------------------------------------------- */

static void tell_listeners(rl_clock_listeners *l) {
    if (!l) return;
    pthread_mutex_lock(&l->lock);
    for (size_t i = 0; i < l->count; i++) l->items[i].moved(l->items[i].info);
    pthread_mutex_unlock(&l->lock);
}

/* Moves the clock `delta` ns (>= 0) forward. From inside a run on the loop's
   own thread the loop's time moves with it (the callout took that long),
   and those listening are told; from anywhere else the loop catches up
   when it next waits, and a loop running on another thread is woken so
   that it does not go idle first. */
static bool advance(RLRunLoopRef rl, rl_manual_clock *c, int64_t delta) {
    bool own = rl_loop_is_current_thread(rl);
    bool busy = own && rl->current_run != NULL;
    atomic_store(&c->target, add_clamped(atomic_load(&c->target), delta));
    if (busy) atomic_store(&c->now, add_clamped(atomic_load(&c->now), delta));
    rl_clock_listeners *listeners = rl->clock_listeners;
    rl_loop_unlock(rl);
    if (busy && delta > 0) tell_listeners(listeners);
    if (!own) RLRunLoopWakeUp(rl);
    return true;
}

/* Locks rl and returns its manual clock; NULL (unlocked) if it has none. */
static rl_manual_clock *lock_clock(RLRunLoopRef rl) {
    rl_loop_lock(rl);
    rl_manual_clock *c = rl_loop_manual_clock(rl);
    if (!c) rl_loop_unlock(rl);
    return c;
}

bool RLRunLoopClockAdvance(RLRunLoopRef rl, RLTimeInterval seconds) {
    if (!rl || isnan(seconds) || isinf(seconds) || seconds < 0) return false;
    rl_manual_clock *c = lock_clock(rl);
    return c && advance(rl, c, rl_seconds_to_ns(seconds));
}

bool RLRunLoopClockSetTime(RLRunLoopRef rl, RLAbsoluteTime date) {
    if (!rl || isnan(date)) return false;
    rl_manual_clock *c = lock_clock(rl);
    if (!c) return false;
    int64_t to = clamp_ns(rl_seconds_to_ns(date));
    int64_t target = atomic_load(&c->target);
    if (to < target) {
        rl_loop_unlock(rl);
        return false;
    }
    return advance(rl, c, to - target);
}

/* ---- a pass without a sleep ---------------------------------------------- */

/* Whether an event names a version-1 source (not the loop's own wake-up or
   timerfd, which on a manual clock only say what the clock says anyway). */
static bool has_source_event(const struct epoll_event *events, int n) {
    for (int i = 0; i < n; i++) {
        uint64_t data = events[i].data.u64;
        if (data != RL_EVENT_WAKE && data != RL_EVENT_TIMER && data != RL_EVENT_DISARMED) return true;
    }
    return false;
}

/* epoll_wait with no timeout: it never blocks, so the lock stays held. */
static int poll_descriptors(RLRunLoopRef rl, rl_mode *m, struct epoll_event *events, int max) {
    rl_wait_set_prepare_locked(rl, m);
    int n;
    while ((n = rl_wait_events(rl, events, max, 0)) < 0) {} /* EINTR */
    for (int i = 0; i < n; i++)
        if (events[i].data.u64 == RL_EVENT_TIMER)
            rl->wait.armed_ns = RL_NEVER; /* a real deadline from before the switch */
    return rl_wait_set_add_ready_locked(rl, m, events, n, max);
}

bool rl_clock_wait(RLRunLoopRef rl, rl_mode *m, bool poll, int64_t run_deadline, struct epoll_event *events, int max,
                   int *count) {
    rl_manual_clock *c = rl_loop_manual_clock(rl);
    int64_t now = atomic_load_explicit(&c->now, memory_order_relaxed);
    int64_t wake = rl_mode_timers_deadline(m);
    int64_t until = wake < run_deadline ? wake : run_deadline;
    int64_t target = atomic_load_explicit(&c->target, memory_order_relaxed);
    if (until > target) until = target;
    if (until > now) atomic_store(&c->now, now = until);
    *count = poll_descriptors(rl, m, events, max);
    atomic_store(&rl->wait.sleeping, false); /* a host that prepared to sleep on the loop is running it */
    bool woken = atomic_exchange(&rl->wait.wake_pending, false);
    /* Had `now` stopped short of the clock's time, a wake-up or the run's
       deadline would be due: the pass is idle only once it caught up. */
    return !poll && !woken && wake > now && run_deadline > now && !has_source_event(events, *count);
}

/* ---- listeners ------------------------------------------------------------ */

bool rl_loop_clock_listen(RLRunLoopRef rl, void (*moved)(void *info), void *info) {
    rl_loop_lock(rl);
    if (!rl->clock_listeners) {
        rl_clock_listeners *l = calloc(1, sizeof *l);
        if (l) pthread_mutex_init(&l->lock, NULL);
        rl->clock_listeners = l;
    }
    rl_clock_listeners *l = rl->clock_listeners;
    rl_loop_unlock(rl);
    if (!l) return false;
    pthread_mutex_lock(&l->lock);
    bool room = rl_array_reserve(&l->items, sizeof *l->items, &l->capacity, l->count + 1, 2);
    if (room) {
        l->items[l->count].moved = moved;
        l->items[l->count].info = info;
        l->count++;
    }
    pthread_mutex_unlock(&l->lock);
    return room;
}

void rl_loop_clock_unlisten(RLRunLoopRef rl, void (*moved)(void *info), void *info) {
    rl_loop_lock(rl);
    rl_clock_listeners *l = rl->clock_listeners;
    rl_loop_unlock(rl);
    if (!l) return;
    pthread_mutex_lock(&l->lock);
    for (size_t i = 0; i < l->count; i++) {
        if (l->items[i].moved == moved && l->items[i].info == info) {
            l->items[i] = l->items[--l->count];
            break;
        }
    }
    pthread_mutex_unlock(&l->lock);
}

void rl_clock_free(RLRunLoopRef rl) {
    free(rl->clock_memory);
    if (rl->clock_listeners) {
        pthread_mutex_destroy(&rl->clock_listeners->lock);
        free(rl->clock_listeners->items);
        free(rl->clock_listeners);
    }
}
