/*
 * rl_idle_tasks.c: RLIdleQueue, idle-time work (work done in
 * kRLRunLoopBeforeWaiting), on the public API.
 *
 * Invariants:
 *  - `mu` guards the task list, `pending`, `next_token` and `keeper_added`;
 *    it is never held across a task or a release callback. Lock order: mu,
 *    then the loop's lock (Add/RemoveSource); the loop never calls into this
 *    file with its lock held (the keeper source has no context callbacks
 *    that take locks).
 *  - The keeper source is in the mode exactly when tasks are pending and the
 *    queue is valid (so a run does not finish with idle work left).
 *  - Each task's release is called exactly once: after its fn, on
 *    cancellation, or when the queue is invalidated; always with no lock held.
 *  - After a slice, the loop is woken (RLRunLoopWakeUp) iff tasks remain, so
 *    it polls instead of sleeping and comes back to BeforeWaiting.
 *  - The queue is a held RL object (rl_object.h): its last reference
 *    invalidates it. Its holds are the references' one and the observer's
 *    (its context retains the queue, also around each callout); the memory
 *    is freed at the last hold.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "CRunLoop.h"
#include "rl_extras.h"

#define MAX_SLICE_NS 10000000000LL

typedef struct idle_task idle_task;
struct idle_task {
    idle_task *next;
    RLIdleTaskToken token;
    void (*fn)(void *info);
    void *info;
    void (*release)(void *info);
};

struct __RLIdleQueue {
    rl_held_object base;
    RLRunLoopRef rl;
    char *mode;
    pthread_mutex_t mu;
    idle_task *head, *tail;     /* under mu */
    size_t pending;             /* under mu */
    RLIdleTaskToken next_token; /* under mu */
    bool keeper_added;          /* under mu */
    _Atomic bool valid;
    _Atomic int64_t slice_ns;
    _Atomic uint64_t completed;
    _Atomic long pending_count; /* mirror of `pending`, read without mu */
    RLRunLoopObserverRef observer;
    RLRunLoopSourceRef keeper;
};

static int64_t clamp_slice(RLTimeInterval slice) {
    if (isnan(slice) || slice <= 0) return 0;
    if (slice >= (double)MAX_SLICE_NS * 1e-9) return MAX_SLICE_NS;
    int64_t ns = (int64_t)(slice * 1e9);
    return ns > 0 ? ns : 1;
}

/* ---- references ---------------------------------------------------------------- */

static void queue_free(RLIdleQueueRef q) {
    RLRelease(q->observer);
    RLRelease(q->keeper);
    RLRelease(q->rl);
    pthread_mutex_destroy(&q->mu);
    free(q->mode);
    free(q);
}

static void queue_free_memory(rl_object *obj) {
    queue_free((RLIdleQueueRef)obj);
}

/* The last reference is gone: the queue stops for good; the observer lets go
   of the memory when the loop is done with it. */
static void queue_last_reference(rl_object *obj) {
    RLIdleQueueRef q = (RLIdleQueueRef)obj;
    RLIdleQueueInvalidate(q);
    rl_object_unhold(&q->base);
}

static char *queue_copy_description(const rl_object *obj);

static const rl_held_class queue_class = {
    {"RLIdleQueue", queue_last_reference, queue_copy_description},
    queue_free_memory,
};

static const void *observer_retain(const void *info) {
    rl_object_hold(&((RLIdleQueueRef)info)->base);
    return info;
}

static void observer_release(const void *info) {
    rl_object_unhold(&((RLIdleQueueRef)info)->base);
}

/* ---- the keeper source ------------------------------------------------------------ */

static void keeper_perform(void *info) {
    (void)info;
}

static char *keeper_describe(const void *info) {
    (void)info;
    return strdup("RLIdleQueue: idle tasks pending");
}

/* Under mu: the keeper is in the mode iff tasks are pending. Returns true
   when it just left the mode. */
static bool update_keeper(RLIdleQueueRef q) {
    bool want = q->pending > 0 && atomic_load(&q->valid);
    if (want == q->keeper_added || !q->keeper) return false;
    if (want) {
        RLRunLoopAddSource(q->rl, q->keeper, q->mode);
    } else {
        RLRunLoopRemoveSource(q->rl, q->keeper, q->mode);
    }
    q->keeper_added = want;
    return !want;
}

/* Under mu. */
static idle_task *pop(RLIdleQueueRef q) {
    idle_task *t = q->head;
    if (!t) return NULL;
    q->head = t->next;
    if (!q->head) q->tail = NULL;
    q->pending--;
    atomic_store_explicit(&q->pending_count, (long)q->pending, memory_order_relaxed);
    return t;
}

static void finish(idle_task *t, bool run) {
    if (run) t->fn(t->info);
    if (t->release) t->release(t->info);
    free(t);
}

/* The kRLRunLoopBeforeWaiting observer: one slice of idle work. */
static void run_slice(RLRunLoopObserverRef o, RLRunLoopActivity activity, void *info) {
    (void)o;
    (void)activity;
    RLIdleQueueRef q = info;
    int64_t slice = atomic_load_explicit(&q->slice_ns, memory_order_relaxed);
    /* On the loop's time: on a manual clock only the tasks' own advances
       end a slice. */
    int64_t start = slice > 0 ? rl_loop_time_ns(q->rl) : 0;
    bool more = false, emptied = false;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        idle_task *t = atomic_load(&q->valid) ? pop(q) : NULL;
        more = q->head != NULL && atomic_load(&q->valid);
        if ((!t || !more) && update_keeper(q)) emptied = true;
        pthread_mutex_unlock(&q->mu);
        if (!t) break;
        finish(t, true);
        atomic_fetch_add_explicit(&q->completed, 1, memory_order_relaxed);
        if (!more || slice == 0 || rl_loop_time_ns(q->rl) - start >= slice) break;
    }
    /* Tasks remain: poll instead of sleeping, then come back for more. Or
       the keeper just left: the mode may be empty now, and the pass must
       reach its exit check rather than sleep (the loop decided to sleep
       before this observer ran). */
    if (more || emptied) RLRunLoopWakeUp(q->rl);
}

/* ---- public API ------------------------------------------------------------------- */

RLIdleQueueRef RLIdleQueueCreate(RLRunLoopRef rl, RLRunLoopMode mode, RLTimeInterval slice) {
    if (!rl || !mode || !mode[0]) return NULL;
    RLIdleQueueRef q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->mode = strdup(mode);
    pthread_mutex_init(&q->mu, NULL);
    rl_held_object_init(&q->base, &queue_class);
    atomic_init(&q->valid, true);
    atomic_init(&q->slice_ns, clamp_slice(slice));
    q->rl = (RLRunLoopRef)RLRetain(rl); /* its memory outlives its thread while we use it */
    q->next_token = 1;
    RLRunLoopSourceContext sctx;
    memset(&sctx, 0, sizeof sctx);
    sctx.copyDescription = keeper_describe;
    sctx.perform = keeper_perform;
    q->keeper = RLRunLoopSourceCreate(0, &sctx);
    RLRunLoopObserverContext octx = {0, q, observer_retain, observer_release, NULL};
    q->observer = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, LONG_MAX - 1, run_slice, &octx);
    if (!q->mode || !q->keeper || !q->observer) {
        if (q->observer) {
            RLRunLoopObserverInvalidate(q->observer); /* drops the observer's reference */
        }
        queue_free(q);
        return NULL;
    }
    RLRunLoopAddObserver(rl, q->observer, q->mode);
    return q;
}

RLIdleTaskToken RLIdleQueueSubmit(RLIdleQueueRef q, void (*fn)(void *info), void *info, void (*release)(void *info)) {
    idle_task *t = (q && fn && atomic_load(&q->valid)) ? malloc(sizeof *t) : NULL;
    if (!t) {
        if (release) release(info);
        return 0;
    }
    *t = (idle_task){NULL, 0, fn, info, release};
    pthread_mutex_lock(&q->mu);
    if (!atomic_load(&q->valid)) {
        pthread_mutex_unlock(&q->mu);
        finish(t, false);
        return 0;
    }
    t->token = q->next_token++;
    if (q->tail) q->tail->next = t;
    else q->head = t;
    q->tail = t;
    q->pending++;
    atomic_store_explicit(&q->pending_count, (long)q->pending, memory_order_relaxed);
    update_keeper(q);
    RLIdleTaskToken token = t->token;
    pthread_mutex_unlock(&q->mu);
    RLRunLoopWakeUp(q->rl);
    return token;
}

bool RLIdleQueueCancel(RLIdleQueueRef q, RLIdleTaskToken token) {
    if (!q || token == 0) return false;
    bool emptied = false;
    pthread_mutex_lock(&q->mu);
    idle_task *prev = NULL, *t = q->head;
    while (t && t->token != token) {
        prev = t;
        t = t->next;
    }
    if (t) {
        if (prev) prev->next = t->next;
        else q->head = t->next;
        if (q->tail == t) q->tail = prev;
        q->pending--;
        atomic_store_explicit(&q->pending_count, (long)q->pending, memory_order_relaxed);
        emptied = update_keeper(q);
    }
    pthread_mutex_unlock(&q->mu);
    if (emptied) RLRunLoopWakeUp(q->rl); /* see run_slice */
    if (!t) return false;
    finish(t, false);
    return true;
}

RLIndex RLIdleQueueGetPendingCount(RLIdleQueueRef q) {
    return q ? atomic_load_explicit(&q->pending_count, memory_order_relaxed) : 0;
}

uint64_t RLIdleQueueGetCompletedCount(RLIdleQueueRef q) {
    return q ? atomic_load_explicit(&q->completed, memory_order_relaxed) : 0;
}

RLTimeInterval RLIdleQueueGetSlice(RLIdleQueueRef q) {
    return q ? (double)atomic_load(&q->slice_ns) * 1e-9 : 0;
}

void RLIdleQueueSetSlice(RLIdleQueueRef q, RLTimeInterval slice) {
    if (q) atomic_store(&q->slice_ns, clamp_slice(slice));
}

void RLIdleQueueInvalidate(RLIdleQueueRef q) {
    if (!q || !atomic_exchange(&q->valid, false)) return;
    pthread_mutex_lock(&q->mu);
    idle_task *dropped = q->head;
    q->head = q->tail = NULL;
    q->pending = 0;
    atomic_store_explicit(&q->pending_count, 0, memory_order_relaxed);
    bool emptied = update_keeper(q);
    pthread_mutex_unlock(&q->mu);
    if (emptied) RLRunLoopWakeUp(q->rl);
    RLRunLoopSourceInvalidate(q->keeper);
    RLRunLoopObserverInvalidate(q->observer);
    while (dropped) {
        idle_task *next = dropped->next;
        finish(dropped, false);
        dropped = next;
    }
}

bool RLIdleQueueIsValid(RLIdleQueueRef q) {
    return q && atomic_load(&q->valid);
}

static char *queue_copy_description(const rl_object *obj) {
    RLIdleQueueRef q = (RLIdleQueueRef)obj;
    return rl_strdup_printf("<RLIdleQueue %p [%s]>{run loop = %p, mode = \"%s\", slice = %.6f s, pending = %ld, "
                            "completed = %llu}",
                            (void *)q, atomic_load(&q->valid) ? "valid" : "invalid", (void *)q->rl, q->mode,
                            (double)atomic_load(&q->slice_ns) * 1e-9,
                            atomic_load_explicit(&q->pending_count, memory_order_relaxed),
                            (unsigned long long)atomic_load_explicit(&q->completed, memory_order_relaxed));
}

void RLIdleQueueRelease(RLIdleQueueRef q) {
    rl_object_check(q, &queue_class.base, __func__);
    RLRelease(q);
}
