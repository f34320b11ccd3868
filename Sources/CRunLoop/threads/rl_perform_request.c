/*
 * rl_perform_request.c: perform requests across threads (Cocoa's
 * performSelector:onThread:..., afterDelay:..., cancelPreviousPerform...),
 * built on the public API only: RLRunLoopPerformFunctionWithRelease,
 * RLRunLoopWakeUp and one-shot timers.
 *
 * Over 500 lines: immediate, delayed and cancelled requests all settle
 * through the one compare-and-swap below.
 *
 * Invariants:
 *  - A request's `state` leaves PENDING exactly once, by one compare-and-swap,
 *    and the thread that wins it alone settles the request: it runs fn
 *    (PENDING -> RUNNING) or closes it without running (PENDING -> CLOSING_x:
 *    cancelled, timed out, dropped). Settling calls release(info) once,
 *    unregisters the request, takes its timer away, and only then stores the
 *    final state (and wakes a waiter with a futex), so a waiter that sees a
 *    final state knows release(info) has returned.
 *  - An immediate request is queued once per mode, each copy holding a
 *    reference and counted in `queued`. A copy that runs first claims the
 *    request; the others do nothing when they run. When the last copy is
 *    released (run, or dropped because the loop's thread exited or refused
 *    because the loop was already dead) and nobody claimed the request, it is
 *    dropped.
 *  - A delayed request owns one one-shot timer (`timer`, a reference held
 *    until settlement) whose context retains the request. The cycle is broken
 *    when the request is settled: the settler invalidates and releases the
 *    timer. A loop whose thread exits removes its timers without
 *    invalidating them, so every loop that gets a delayed request is
 *    "watched": an inert function queued in the private watch mode is
 *    dropped (its release called) when the thread exits, and that drops every
 *    delayed request registered for the loop.
 *  - The registry (requests with a target and all delayed requests, plus the
 *    watched loops) is guarded by `reg_lock`; no callback runs under it. A
 *    registered request is not settled, so it holds at least one reference
 *    (a queued copy, its timer, or its maker's) and may be retained under the
 *    lock. A request is registered under the same lock hold that finds its
 *    loop's watch, so a loop's exit either sees it or was seen by it.
 *  - Requests with no target and no delay never touch the registry: the
 *    wait-until-done round trip takes no global lock.
 *  - A request is an RL object (rl_object.h); every holder above (maker,
 *    queued copy, timer context, a batch under cancellation) is one
 *    reference. The last one frees it; it never cancels.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "CRunLoop.h"
#include "rl_extras.h"

/* Internal states beyond the public ones: a winner closing the request. */
#define CLOSING     8u
#define IS_FINAL(s) ((s) >= (uint32_t)kRLPerformRequestDone && (s) <= (uint32_t)kRLPerformRequestDropped)

static const char watch_mode[] = "RLPerformRequestWatchMode";

struct __RLPerformRequest {
    rl_object base;
    _Atomic uint32_t state;
    atomic_long queued;               /* immediate: copies still queued */
    _Atomic(RLRunLoopTimerRef) timer; /* delayed: one reference, until settled */
    RLRunLoopRef rl;                  /* retained */
    void (*fn)(void *);
    void *info;
    void (*release)(void *);
    const void *target;
    bool delayed;
    bool waited;
    /* registry, under reg_lock */
    bool registered;
    bool collected; /* taken by a watched loop's exit */
    struct __RLPerformRequest *prev, *next;
};
typedef struct __RLPerformRequest request;

typedef struct watch {
    RLRunLoopRef rl; /* not retained: removed before the loop can die */
    bool ran;        /* someone ran the watch mode */
    bool armed;      /* its function is queued (or being queued); reg_lock */
    struct watch *next;
} watch;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static request *reg_head;
static watch *watches;

/* ---- futex ----------------------------------------------------------------- */

static void futex_wake_all(_Atomic uint32_t *addr) {
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps while *addr == val, until the absolute CLOCK_MONOTONIC `deadline`
   (NULL: no limit). Spurious returns are fine. */
static void futex_wait(_Atomic uint32_t *addr, uint32_t val, const struct timespec *deadline) {
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_BITSET_PRIVATE, val, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* ---- references ------------------------------------------------------------ */

static void req_finalize(rl_object *obj) {
    request *r = (request *)obj;
    RLRelease(r->rl);
    free(r);
}

static char *req_copy_description(const rl_object *obj);

static const rl_class request_class = {"RLPerformRequest", req_finalize, req_copy_description};

static request *req_retain(request *r) {
    rl_object_retain(&r->base);
    return r;
}

static void req_unref(request *r) {
    rl_object_release(&r->base);
}

RLPerformRequestRef RLPerformRequestRetain(RLPerformRequestRef r) {
    rl_object_check(r, &request_class, __func__);
    return (RLPerformRequestRef)RLRetain(r);
}

void RLPerformRequestRelease(RLPerformRequestRef r) {
    rl_object_check(r, &request_class, __func__);
    RLRelease(r);
}

static const void *timer_info_retain(const void *info) {
    return req_retain((request *)info);
}

static void timer_info_release(const void *info) {
    req_unref((request *)info);
}

/* ---- registry -------------------------------------------------------------- */

/* reg_lock held. */
static void link_locked(request *r) {
    r->registered = true;
    r->prev = NULL;
    r->next = reg_head;
    if (reg_head) reg_head->prev = r;
    reg_head = r;
}

static void unregister(request *r) {
    if (!r->target && !r->delayed) return;
    pthread_mutex_lock(&reg_lock);
    if (r->registered) {
        if (r->prev) r->prev->next = r->next;
        else reg_head = r->next;
        if (r->next) r->next->prev = r->prev;
        r->registered = false;
        r->prev = r->next = NULL;
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ---- settling -------------------------------------------------------------- */

static bool claim(request *r, uint32_t to) {
    uint32_t expected = (uint32_t)kRLPerformRequestPending;
    return atomic_compare_exchange_strong(&r->state, &expected, to);
}

/* The caller won the request (claim); closes it with `final`. */
static void settle(request *r, RLPerformRequestStatus final) {
    if (r->release) r->release(r->info);
    unregister(r);
    RLRunLoopTimerRef t = atomic_exchange(&r->timer, NULL);
    if (t) {
        RLRunLoopTimerInvalidate(t);
        RLRelease(t);
    }
    atomic_store(&r->state, (uint32_t) final);
    if (r->waited) futex_wake_all(&r->state);
}

/* Closes a pending request without running it; false if someone else won. */
static bool close_unrun(request *r, RLPerformRequestStatus final) {
    if (!claim(r, CLOSING + (uint32_t) final)) return false;
    settle(r, final);
    return true;
}

static void run_claimed(request *r) {
    r->fn(r->info);
    settle(r, kRLPerformRequestDone);
}

/* ---- immediate requests ------------------------------------------------------ */

/* A queued copy's function (called through RL_IS_CALLING_OUT_TO_A_BLOCK). */
static void copy_run(void *info) {
    request *r = info;
    if (claim(r, (uint32_t)kRLPerformRequestRunning)) run_claimed(r);
}

/* A queued copy's release: after it ran, or when it was dropped or refused. */
static void copy_release(void *info) {
    request *r = info;
    if (atomic_fetch_sub_explicit(&r->queued, 1, memory_order_acq_rel) == 1)
        close_unrun(r, kRLPerformRequestDropped); /* no-op if claimed */
    req_unref(r);
}

static bool modes_valid(const RLRunLoopMode *modes, RLIndex count) {
    if (count < 0 || (count > 0 && !modes)) return false;
    for (RLIndex i = 0; i < count; i++)
        if (!modes[i] || !modes[i][0]) return false;
    return true;
}

static request *req_new(RLRunLoopRef rl, const void *target, void (*fn)(void *), void *info, void (*release)(void *)) {
    request *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    rl_object_init(&r->base, &request_class);
    atomic_init(&r->state, (uint32_t)kRLPerformRequestPending);
    atomic_init(&r->queued, 0);
    atomic_init(&r->timer, NULL);
    r->rl = (RLRunLoopRef)RLRetain(rl);
    r->fn = fn;
    r->info = info;
    r->release = release;
    r->target = target;
    return r;
}

static void monotonic_deadline(struct timespec *ts, double seconds) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    double whole = floor(seconds);
    long nsec = ts->tv_nsec + (long)((seconds - whole) * 1e9);
    ts->tv_sec += (time_t)whole + nsec / 1000000000L;
    ts->tv_nsec = nsec % 1000000000L;
}

static bool deadline_passed(const struct timespec *d) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

/* Waits until the request is settled; withdraws it when the deadline passes
   before the loop started it. */
static RLPerformRequestStatus wait_settled(request *r, RLTimeInterval timeout) {
    if (isnan(timeout) || timeout < 0) timeout = 0;
    bool limited = timeout < 5.0e8;
    struct timespec deadline = {0, 0};
    if (limited) monotonic_deadline(&deadline, timeout);
    for (;;) {
        uint32_t s = atomic_load(&r->state);
        if (IS_FINAL(s)) return (RLPerformRequestStatus)s;
        bool pending = s == (uint32_t)kRLPerformRequestPending;
        if (pending && limited && deadline_passed(&deadline)) {
            if (close_unrun(r, kRLPerformRequestTimedOut)) return kRLPerformRequestTimedOut;
            continue;
        }
        futex_wait(&r->state, s, pending && limited ? &deadline : NULL);
    }
}

RLPerformRequestStatus RLRunLoopPerformRequest(RLRunLoopRef rl, const RLRunLoopMode *modes, RLIndex modeCount,
                                               const void *target, void (*fn)(void *info), void *info,
                                               void (*release)(void *info), bool waitUntilDone,
                                               RLTimeInterval timeout) {
    if (!rl || !fn || !modes_valid(modes, modeCount)) {
        if (release) release(info);
        return kRLPerformRequestInvalid;
    }
    /* Only a thread that has a loop can be rl's thread: asking makes none. */
    if (waitUntilDone && rl_loop_current_if_made() == rl) {
        /* Cocoa: performSelector:onThread:<current> waitUntilDone:YES runs it now. */
        fn(info);
        if (release) release(info);
        return kRLPerformRequestDone;
    }
    RLRunLoopMode common = kRLRunLoopCommonModes;
    if (modeCount == 0) {
        modes = &common;
        modeCount = 1;
    }
    request *r = req_new(rl, target, fn, info, release);
    if (!r) {
        if (release) release(info);
        return kRLPerformRequestDropped; /* out of memory */
    }
    r->waited = waitUntilDone;
    atomic_store(&r->queued, (long)modeCount);
    for (RLIndex i = 0; i < modeCount; i++) req_retain(r); /* one reference per queued copy */
    if (target) {
        pthread_mutex_lock(&reg_lock);
        link_locked(r);
        pthread_mutex_unlock(&reg_lock);
    }
    for (RLIndex i = 0; i < modeCount; i++)
        RLRunLoopPerformFunctionWithRelease(rl, modes[i], copy_run, r, copy_release);
    RLRunLoopWakeUp(rl);
    RLPerformRequestStatus result;
    if (waitUntilDone) {
        result = wait_settled(r, timeout);
    } else {
        uint32_t s = atomic_load(&r->state);
        result = s == (uint32_t)kRLPerformRequestDropped ? kRLPerformRequestDropped : kRLPerformRequestPending;
    }
    req_unref(r);
    return result;
}

/* ---- delayed requests -------------------------------------------------------- */

static void watch_run(void *info) {
    ((watch *)info)->ran = true;
}

/* The watched loop's thread exited: forget the watch, drop the loop's
   delayed requests. */
static void watch_loop_exited(watch *w) {
    pthread_mutex_lock(&reg_lock);
    for (watch **p = &watches; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    for (;;) {
        request *batch[64];
        size_t n = 0;
        pthread_mutex_lock(&reg_lock);
        for (request *r = reg_head; r && n < 64; r = r->next) {
            if (r->delayed && r->rl == w->rl && !r->collected) {
                r->collected = true;
                batch[n++] = req_retain(r);
            }
        }
        pthread_mutex_unlock(&reg_lock);
        if (!n) break;
        for (size_t i = 0; i < n; i++) {
            close_unrun(batch[i], kRLPerformRequestDropped);
            req_unref(batch[i]);
        }
    }
    free(w);
}

static void watch_release(void *info);

/* Queues the watch function; the caller has marked it armed. A loop whose
   thread exited refuses it: that is handled at once. Out of memory, the
   watch is left unarmed (the next delayed request to the loop tries again). */
static rl_queue_status watch_queue(watch *w) {
    rl_queue_status status = rl_enqueue_block_status(w->rl, watch_mode, watch_run, w, watch_release);
    if (status == RL_QUEUE_REFUSED) {
        watch_loop_exited(w);
    } else if (status == RL_QUEUE_NO_MEMORY) {
        pthread_mutex_lock(&reg_lock);
        w->armed = false;
        pthread_mutex_unlock(&reg_lock);
    }
    return status;
}

/* The watch function left the loop: after someone ran the watch mode (it
   re-arms), or dropped because the loop's thread exited (a pass never drops
   queued work, even out of memory). */
static void watch_release(void *info) {
    watch *w = info;
    if (w->ran) {
        w->ran = false;
        watch_queue(w);
        return;
    }
    watch_loop_exited(w);
}

static void delayed_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    request *r = info;
    if (claim(r, (uint32_t)kRLPerformRequestRunning)) run_claimed(r);
}

RLPerformRequestRef RLRunLoopPerformRequestAfterDelay(RLRunLoopRef rl, RLTimeInterval delay, const RLRunLoopMode *modes,
                                                      RLIndex modeCount, const void *target, void (*fn)(void *info),
                                                      void *info, void (*release)(void *info)) {
    if (!rl || !fn || !modes_valid(modes, modeCount)) {
        if (release) release(info);
        return NULL;
    }
    RLRunLoopMode common = kRLRunLoopCommonModes;
    if (modeCount == 0) {
        modes = &common;
        modeCount = 1;
    }
    if (isnan(delay) || delay < 0) delay = 0;
    request *r = req_new(rl, target, fn, info, release);
    if (!r) {
        if (release) release(info);
        return NULL;
    }
    r->delayed = true;

    /* Register, and make sure the loop is watched, in one lock hold. */
    pthread_mutex_lock(&reg_lock);
    watch *w = watches;
    while (w && w->rl != rl) w = w->next;
    if (!w && (w = calloc(1, sizeof *w)) != NULL) {
        w->rl = rl;
        w->next = watches;
        watches = w;
    }
    bool arm = w && !w->armed;
    if (arm) w->armed = true;
    link_locked(r);
    pthread_mutex_unlock(&reg_lock);
    /* Out of memory, the loop cannot be watched: the request is dropped
       rather than left to outlive a loop that may exit unnoticed. A dead
       loop drops it inside watch_queue. */
    if (!w || (arm && watch_queue(w) == RL_QUEUE_NO_MEMORY)) {
        close_unrun(r, kRLPerformRequestDropped);
        return r;
    }
    if (atomic_load(&r->state) != (uint32_t)kRLPerformRequestPending) return r;

    RLRunLoopTimerContext ctx = {0, r, timer_info_retain, timer_info_release, NULL};
    /* Dated on the loop's own time: a loop on a manual clock runs it once
       the program has advanced that clock by `delay`. */
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLRunLoopGetCurrentTime(rl) + delay, 0, 0, 0, delayed_fire, &ctx);
    if (!t) {
        close_unrun(r, kRLPerformRequestDropped);
        return r;
    }
    atomic_store(&r->timer, (RLRunLoopTimerRef)RLRetain(t));
    if (atomic_load(&r->state) != (uint32_t)kRLPerformRequestPending) {
        /* Settled meanwhile (dropped or cancelled): the settler may have missed the timer. */
        RLRunLoopTimerRef mine = atomic_exchange(&r->timer, NULL);
        if (mine) {
            RLRunLoopTimerInvalidate(mine);
            RLRelease(mine);
        }
    } else {
        bool added = false;
        for (RLIndex i = 0; i < modeCount; i++) {
            RLRunLoopAddTimer(rl, t, modes[i]);
            added = added || RLRunLoopContainsTimer(rl, t, modes[i]);
        }
        /* In no mode (out of memory, or the loop just died): it would never
           fire. */
        if (!added) close_unrun(r, kRLPerformRequestDropped);
        else RLRunLoopWakeUp(rl);
    }
    RLRelease(t);
    return r;
}

/* ---- cancelling ----------------------------------------------------------------- */

bool RLPerformRequestCancel(RLPerformRequestRef r) {
    return r ? close_unrun(r, kRLPerformRequestCancelled) : false;
}

RLIndex RLPerformRequestCancelWithTarget(const void *target, RLRunLoopRef rl) {
    if (!target) return 0;
    RLIndex cancelled = 0;
    for (;;) {
        request *batch[64];
        size_t n = 0;
        pthread_mutex_lock(&reg_lock);
        for (request *r = reg_head; r && n < 64; r = r->next) {
            if (r->target == target && (!rl || r->rl == rl) &&
                atomic_load(&r->state) == (uint32_t)kRLPerformRequestPending)
                batch[n++] = req_retain(r);
        }
        pthread_mutex_unlock(&reg_lock);
        if (!n) break;
        for (size_t i = 0; i < n; i++) {
            if (close_unrun(batch[i], kRLPerformRequestCancelled)) cancelled++;
            req_unref(batch[i]);
        }
    }
    return cancelled;
}

RLPerformRequestStatus RLPerformRequestGetStatus(RLPerformRequestRef r) {
    if (!r) return kRLPerformRequestInvalid;
    uint32_t s = atomic_load(&r->state);
    if (s >= CLOSING) s -= CLOSING;
    return (RLPerformRequestStatus)s;
}

static const char *status_name(RLPerformRequestStatus s) {
    switch (s) {
    case kRLPerformRequestPending: return "pending";
    case kRLPerformRequestRunning: return "running";
    case kRLPerformRequestDone: return "done";
    case kRLPerformRequestCancelled: return "cancelled";
    case kRLPerformRequestTimedOut: return "timed out";
    case kRLPerformRequestDropped: return "dropped";
    default: return "invalid";
    }
}

static char *req_copy_description(const rl_object *obj) {
    request *r = (request *)obj;
    return rl_strdup_printf("<RLPerformRequest %p [%s]>{run loop = %p, %s, target = %p, function = %p, info = %p}",
                            (void *)r, status_name(RLPerformRequestGetStatus(r)), (void *)r->rl,
                            r->delayed ? "delayed" : "immediate", r->target, (void *)(uintptr_t)r->fn, r->info);
}
