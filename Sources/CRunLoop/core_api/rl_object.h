/*
 * rl_object.h: the header every reference-counted object of the library
 * starts with, and the class table RLRetain/RLRelease/RLCopyDescription
 * dispatch through.
 *
 * Invariants: refcount > 0 while anyone may use the object; an object whose
 * count reaches 0 under a run loop's lock is not finalized there but parked on
 * that loop's graveyard and finalized after the lock is dropped (finalizers may
 * call user code, which may call back into the loop).
 */
#ifndef RL_OBJECT_H
#define RL_OBJECT_H

#include <stdatomic.h>
#include <stddef.h>
#include "CRunLoop.h"

typedef struct rl_object rl_object;

typedef struct rl_class {
    const char *name;
    void  (*finalize)(rl_object *obj);             /* frees everything, including obj */
    char *(*copy_description)(const rl_object *obj);
} rl_class;

struct rl_object {
    _Atomic long   refcount;
    const rl_class *cls;
    rl_object      *next_dead;                      /* graveyard link, see rl_loop_release_locked */
};

/* Sets up a new object with one reference. */
void rl_object_init(rl_object *obj, const rl_class *cls);

/* Drops one reference; returns true when it was the last one (the caller then
   owns finalization). */
bool rl_object_release_is_last(rl_object *obj);

/* Internal classes, for type checks. */
extern const rl_class rl_run_loop_class;
extern const rl_class rl_source_class;
extern const rl_class rl_observer_class;
extern const rl_class rl_timer_class;

/* The small lock of an item (source, observer, timer): 4 bytes, held only for
   a few field updates, never across a callout or a system call. */
typedef struct {
    _Atomic int held;
} rl_item_lock;

void rl_item_lock_slow(rl_item_lock *l);
static inline void rl_item_lock_init(rl_item_lock *l) { atomic_init(&l->held, 0); }
static inline void rl_item_lock_acquire(rl_item_lock *l) {
    if (atomic_exchange_explicit(&l->held, 1, memory_order_acquire)) rl_item_lock_slow(l);
}
static inline void rl_item_lock_release(rl_item_lock *l) {
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

/* Calls release(info) the first time it is asked for an item whose context
   info may be released both at invalidation and at finalization;
   `*released` (guarded by `lock`) remembers that it happened. */
void rl_release_info_once(rl_item_lock *lock, bool *released, void (*release)(const void *info), void *info);

/* printf into a new malloc'd string (NULL if out of memory). */
char *rl_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
