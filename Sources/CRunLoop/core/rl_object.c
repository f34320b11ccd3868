/*
 * rl_object.c: reference counting and descriptions for every object type.
 * Retain/release are lock-free atomics; finalization runs the class's finalizer
 * exactly once, on the thread that dropped the last reference. A retain or
 * release of a dead object whose memory was not reused aborts (rl_object.h).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_object.h"

void rl_object_init(rl_object *obj, const rl_class *cls) {
    atomic_init(&obj->refcount, 1);
    obj->cls = cls;
}

void rl_object_dead(rl_object *obj, const char *function, long change) {
    if (change) atomic_fetch_sub_explicit(&obj->refcount, change, memory_order_relaxed);
    fprintf(stderr, "CRunLoop: %s of an object with no references (%p)\n", function, (void *)obj);
    abort();
}

void rl_held_object_init(rl_held_object *obj, const rl_held_class *cls) {
    rl_object_init(&obj->base, &cls->base);
    atomic_init(&obj->holds, 1);
}

void rl_object_hold(rl_held_object *obj) {
    atomic_fetch_add_explicit(&obj->holds, 1, memory_order_relaxed);
}

void rl_object_unhold(rl_held_object *obj) {
    long before = atomic_fetch_sub_explicit(&obj->holds, 1, memory_order_acq_rel);
    if (before <= 0) {
        fprintf(stderr, "CRunLoop: a %s's memory was released once too often (%p)\n", obj->base.cls->name, (void *)obj);
        abort();
    }
    if (before == 1) ((const rl_held_class *)obj->base.cls)->free_memory(&obj->base);
}

void rl_object_check(const void *obj, const rl_class *cls, const char *function) {
    if (obj && !rl_object_is(obj, cls)) {
        /* A dead object's class word may be malloc's by now: say it is dead. */
        rl_object *o = (rl_object *)obj;
        if (!rl_refcount_is_live(atomic_load_explicit(&o->refcount, memory_order_relaxed)))
            rl_object_dead(o, function, 0);
        fprintf(stderr, "CRunLoop: %s called with an object that is not a %s (%p)\n", function, cls->name, obj);
        abort();
    }
}

const void *RLRetain(const void *obj) {
    if (obj) rl_object_retain((rl_object *)obj);
    return obj;
}

void RLRelease(const void *obj) {
    if (obj) rl_object_release((rl_object *)obj);
}

char *RLCopyDescription(const void *obj) {
    if (!obj) return strdup("(null)");
    const rl_object *o = obj;
    return o->cls->copy_description(o);
}

char *rl_strdup_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *out = NULL;
    if (vasprintf(&out, fmt, ap) < 0) out = NULL;
    va_end(ap);
    return out;
}

void rl_item_lock_slow(rl_item_lock *l) {
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(&l->held, memory_order_relaxed) == 0 &&
            !atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
            return;
        /* The holder may have been preempted: give it the CPU. */
        if (spins > 32) sched_yield();
    }
}

void rl_release_info_once(rl_item_lock *lock, bool *released, void (*release)(const void *info), void *info) {
    rl_item_lock_acquire(lock);
    bool first = !*released;
    *released = true;
    rl_item_lock_release(lock);
    if (first && release) release(info);
}
