/*
 * rl_thread.c: run-loop threads (RLThread): a pthread that runs its loop,
 * kept alive by a version-0 source, until it is stopped and joined. Built on
 * the public API only.
 *
 * Invariants:
 *  - `phase` only moves forward: NEW -> STARTING -> READY -> EXITED, or
 *    NEW -> STARTING -> FAILED when pthread_create fails or the thread cannot
 *    make its loop (then it ends at once); it changes under
 *    `lock` and every change is broadcast on `cond`.
 *  - `rl` (retained) and `keepalive` are set once, before READY; `keepalive`
 *    is the thread's until it exits (it clears the field under the lock,
 *    then invalidates and releases the source). Others retain it under the
 *    lock before signalling it.
 *  - The thread re-enters its run until `stop` is set, and `stop` is set
 *    before the source is signalled: the signalled source stops whatever run
 *    is active (even one entered after RLRunLoopStop found none), so a stop
 *    is never lost.
 *  - The pthread is joined at most once (`joining`/`joined`), never while
 *    holding `lock` (the thread takes the lock on its way out), and never
 *    after it was detached; it is detached only when its last reference is
 *    dropped on the thread itself.
 *  - The thread is a held RL object (rl_object.h): the last reference
 *    stops it and joins it (or detaches it, on the thread itself). Its holds
 *    are the references' one and the running thread's; the memory is freed
 *    at the last hold, so it outlives its thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "CRunLoop.h"
#include "rl_extras.h"

enum { NEW, STARTING, READY, EXITED, FAILED };

struct __RLThread {
    rl_held_object base;
    atomic_bool stop;
    char *name;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int phase;
    bool joining, joined, detached;
    pthread_t tid;
    RLRunLoopRef rl;
    RLRunLoopSourceRef keepalive;
};

static void thread_free_memory(rl_object *obj) {
    RLThreadRef t = (RLThreadRef)obj;
    RLRelease(t->rl);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t->name);
    free(t);
}

static void thread_unref(RLThreadRef t) {
    rl_object_unhold(&t->base);
}

static void thread_last_reference(rl_object *obj);
static char *thread_copy_description(const rl_object *obj);

static const rl_held_class thread_class = {
    {"RLThread", thread_last_reference, thread_copy_description},
    thread_free_memory,
};

RLThreadRef RLThreadCreate(const char *name) {
    RLThreadRef t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->name = strdup(name ? name : "RLThread");
    if (!t->name) {
        free(t);
        return NULL;
    }
    rl_held_object_init(&t->base, &thread_class);
    atomic_init(&t->stop, false);
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    t->phase = NEW;
    return t;
}

/* The keep-alive source's perform: a signal after a stop request ends the run. */
static void keepalive_perform(void *info) {
    RLThreadRef t = info;
    if (atomic_load(&t->stop)) RLRunLoopStop(RLRunLoopGetCurrent());
}

static RLRunLoopSourceRef keepalive_create(RLThreadRef t) {
    RLRunLoopSourceContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.info = t; /* not retained: the thread holds a reference while the source lives */
    ctx.perform = keepalive_perform;
    return RLRunLoopSourceCreate(0, &ctx);
}

static void *thread_main(void *arg) {
    RLThreadRef t = arg;
    char shown[16];
    strncpy(shown, t->name, sizeof shown - 1);
    shown[sizeof shown - 1] = '\0';
    pthread_setname_np(pthread_self(), shown);

    /* Out of memory or descriptors, the thread cannot get a loop that stays
       alive: it says so (FAILED) and ends; RLThreadStart reports it. */
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef src = rl ? keepalive_create(t) : NULL;
    RLRunLoopAddSource(rl, src, kRLRunLoopCommonModes);
    bool ready = RLRunLoopContainsSource(rl, src, kRLRunLoopDefaultMode);
    pthread_mutex_lock(&t->lock);
    if (ready) {
        t->rl = (RLRunLoopRef)RLRetain(rl);
        t->keepalive = src;
    }
    t->phase = ready ? READY : FAILED;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    if (!ready) {
        RLRunLoopSourceInvalidate(src);
        RLRelease(src);
        thread_unref(t);
        return NULL;
    }

    while (!atomic_load(&t->stop)) {
        RLRunLoopRunResult res = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1.0e10, false);
        if (res != kRLRunLoopRunFinished || atomic_load(&t->stop)) continue;
        /* The mode went empty: a callout removed or invalidated the source. */
        if (!src || !RLRunLoopSourceIsValid(src)) {
            RLRunLoopSourceRef fresh = keepalive_create(t);
            if (!fresh) break; /* out of memory: cannot keep the loop alive */
            pthread_mutex_lock(&t->lock);
            RLRunLoopSourceRef old = t->keepalive;
            t->keepalive = src = fresh;
            pthread_mutex_unlock(&t->lock);
            RLRelease(old);
            if (atomic_load(&t->stop)) RLRunLoopSourceSignal(src);
        }
        RLRunLoopAddSource(rl, src, kRLRunLoopCommonModes);
    }

    pthread_mutex_lock(&t->lock);
    src = t->keepalive;
    t->keepalive = NULL;
    t->phase = EXITED;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    RLRunLoopSourceInvalidate(src);
    RLRelease(src);
    thread_unref(t);
    return NULL; /* the loop is torn down by the thread's exit, before a join returns */
}

bool RLThreadStart(RLThreadRef t) {
    if (!t) return false;
    pthread_mutex_lock(&t->lock);
    if (t->phase != NEW) {
        pthread_mutex_unlock(&t->lock);
        return false;
    }
    t->phase = STARTING;
    rl_object_hold(&t->base); /* the thread's */
    int rc = pthread_create(&t->tid, NULL, thread_main, t);
    if (rc != 0) {
        t->phase = FAILED;
        thread_unref(t); /* cannot be the last: the references hold the memory */
        pthread_cond_broadcast(&t->cond);
        pthread_mutex_unlock(&t->lock);
        return false;
    }
    /* Started only once it has its loop: a thread that could not make one
       has ended, and is joined here. */
    while (t->phase == STARTING) pthread_cond_wait(&t->cond, &t->lock);
    bool ready = t->phase != FAILED;
    if (!ready) t->joined = true; /* nobody else joins a FAILED thread */
    pthread_mutex_unlock(&t->lock);
    if (!ready) pthread_join(t->tid, NULL);
    return ready;
}

RLRunLoopRef RLThreadGetRunLoop(RLThreadRef t) {
    if (!t) return NULL;
    pthread_mutex_lock(&t->lock);
    while (t->phase == STARTING) pthread_cond_wait(&t->cond, &t->lock);
    RLRunLoopRef rl = t->rl;
    pthread_mutex_unlock(&t->lock);
    return rl;
}

bool RLThreadIsCurrent(RLThreadRef t) {
    if (!t) return false;
    pthread_mutex_lock(&t->lock);
    bool current = (t->phase == STARTING || t->phase == READY) && pthread_equal(t->tid, pthread_self());
    pthread_mutex_unlock(&t->lock);
    return current;
}

bool RLThreadHasExited(RLThreadRef t) {
    if (!t) return false;
    pthread_mutex_lock(&t->lock);
    bool exited = t->phase == EXITED;
    pthread_mutex_unlock(&t->lock);
    return exited;
}

/* Asks a started thread to stop; returns whether the caller is that thread
   (false too when it never started). */
static bool request_stop(RLThreadRef t, bool *started) {
    pthread_mutex_lock(&t->lock);
    while (t->phase == STARTING) pthread_cond_wait(&t->cond, &t->lock);
    *started = t->phase == READY || t->phase == EXITED;
    if (!*started) {
        pthread_mutex_unlock(&t->lock);
        return false;
    }
    atomic_store(&t->stop, true);
    RLRunLoopSourceRef src = t->keepalive ? (RLRunLoopSourceRef)RLRetain(t->keepalive) : NULL;
    RLRunLoopRef rl = t->rl;
    bool self = pthread_equal(t->tid, pthread_self());
    pthread_mutex_unlock(&t->lock);
    if (src) {
        RLRunLoopSourceSignal(src);
        RLRelease(src);
    }
    RLRunLoopStop(rl);
    RLRunLoopWakeUp(rl);
    return self;
}

static void join_once(RLThreadRef t) {
    pthread_mutex_lock(&t->lock);
    if (t->detached) {
        while (t->phase != EXITED) pthread_cond_wait(&t->cond, &t->lock);
    } else if (t->joining) {
        while (!t->joined) pthread_cond_wait(&t->cond, &t->lock);
    } else if (!t->joined) {
        t->joining = true;
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->tid, NULL);
        pthread_mutex_lock(&t->lock);
        t->joined = true;
        pthread_cond_broadcast(&t->cond);
    }
    pthread_mutex_unlock(&t->lock);
}

void RLThreadStop(RLThreadRef t) {
    if (!t) return;
    bool started = false;
    if (request_stop(t, &started) || !started) return;
    join_once(t);
}

RLThreadRef RLThreadRetain(RLThreadRef t) {
    rl_object_check(t, &thread_class.base, __func__);
    return (RLThreadRef)RLRetain(t);
}

void RLThreadRelease(RLThreadRef t) {
    rl_object_check(t, &thread_class.base, __func__);
    RLRelease(t);
}

/* The last reference is gone: a started thread is stopped and joined first. */
static void thread_last_reference(rl_object *obj) {
    RLThreadRef t = (RLThreadRef)obj;
    bool started = false;
    if (request_stop(t, &started)) {
        /* The last reference dropped on the thread itself: it cannot join
           itself, so it detaches (unless another thread is joining it). */
        pthread_mutex_lock(&t->lock);
        if (!t->joining && !t->joined) {
            t->detached = true;
            pthread_detach(t->tid);
        }
        pthread_mutex_unlock(&t->lock);
    } else if (started) {
        join_once(t);
    }
    thread_unref(t);
}

static char *thread_copy_description(const rl_object *obj) {
    RLThreadRef t = (RLThreadRef)obj;
    static const char *const phases[] = {"not started", "starting", "running", "exited", "failed"};
    pthread_mutex_lock(&t->lock);
    const char *phase = phases[t->phase];
    if (t->phase == READY && atomic_load(&t->stop)) phase = "stopping";
    RLRunLoopRef rl = t->rl;
    pthread_mutex_unlock(&t->lock);
    return rl_strdup_printf("<RLThread %p [%s]>{name = \"%s\", run loop = %p}", (void *)t, phase, t->name, (void *)rl);
}
