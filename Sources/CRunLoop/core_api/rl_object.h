/*
 * rl_object.h: the header every reference-counted object of the library
 * starts with, and the class table RLRetain/RLRelease/RLCopyDescription
 * dispatch through.
 *
 * Invariants: refcount > 0 while anyone may use the object; an object whose
 * count reaches 0 under a run loop's lock is not finalized there but parked on
 * that loop's graveyard and finalized after the lock is dropped (finalizers may
 * call user code, which may call back into the loop).
 *
 * Held objects (rl_held_object) work on after their last reference: a thread
 * they run, or observers in a loop, still call into them. Their `holds` count
 * keeps the memory: one hold for all the references together, one per such
 * internal user. The last release tears the object down (the class's
 * finalize: invalidate, stop, join) and then drops the references' hold; the
 * last hold frees the memory (the class's free_memory). So a callout still
 * running on another thread never touches freed memory, and the references
 * alone decide when the object stops working. This is the strong/weak pair of
 * a shared pointer, with the weak side kept private.
 */
#ifndef RL_OBJECT_H
#define RL_OBJECT_H

#include <stdatomic.h>
#include <stddef.h>
#include "CRunLoop.h"

typedef struct rl_object rl_object;

typedef struct rl_class {
    const char *name;
    void (*finalize)(rl_object *obj); /* frees everything, including obj; held
                                                      objects: tears down, then rl_object_unhold */
    char *(*copy_description)(const rl_object *obj);
} rl_class;

struct rl_object {
    /* A dead object (count 0) has no use for its count, and a live one is on
       no graveyard: the link takes the count's place, 8 bytes less per object. */
    union {
        _Atomic long refcount;
        rl_object *next_dead; /* graveyard link, see rl_loop_release_locked */
    };
    const rl_class *cls;
};

/* Sets up a new object with one reference. */
void rl_object_init(rl_object *obj, const rl_class *cls);

/* A live object's count is between 1 and RL_REFCOUNT_LIVE_MAX. A dead one's
   count word holds 0 (finalized, or its memory kept for a hold), a
   graveyard link (a pointer), or, once its memory is freed, whatever malloc
   keeps there: a free-list pointer, or (glibc 2.32 and later) one XORed
   with the chunk's address shifted right by 12, which for the heap of a
   64-bit position-independent program or a thread's arena is far above
   2^32. So a retain or release that finds any other count met a dead object
   whose memory was not reused, and aborts (rl_object_dead) instead of
   scribbling on malloc's free list. The test is the one compare a release
   always made, and one more for a retain. Not caught: memory malloc has
   handed out again (it is someone else's object then), and a chunk freed
   into a low, non-PIE heap (its mangled link can look like a count). */
#define RL_REFCOUNT_LIVE_MAX (sizeof(long) > 4 ? 1UL << 32 : 1UL << 24)
static inline bool rl_refcount_is_live(long count) {
    return (unsigned long)count - 1UL < RL_REFCOUNT_LIVE_MAX;
}

/* Aborts, printing "CRunLoop: <function> of an object with no references
   (<obj>)": `function` (RLRetain, RLRelease, a type's own name) met a dead
   object, whose count it had just changed by `change`; that change is undone
   first (it may have been a word of malloc's). A caller bug that would
   corrupt memory. */
void rl_object_dead(rl_object *obj, const char *function, long change) __attribute__((noreturn, cold));

/* Drops one reference; returns true when it was the last one (the caller then
   owns finalization). Inline: requests and items are released per pass. */
static inline bool rl_object_release_is_last(rl_object *obj) {
    long before = atomic_fetch_sub_explicit(&obj->refcount, 1, memory_order_acq_rel);
    if (__builtin_expect(!rl_refcount_is_live(before), 0)) rl_object_dead(obj, "RLRelease", -1);
    return before == 1;
}

/* RLRetain and RLRelease of an object known not to be NULL, inline. */
static inline void rl_object_retain(rl_object *obj) {
    long before = atomic_fetch_add_explicit(&obj->refcount, 1, memory_order_relaxed);
    if (__builtin_expect(!rl_refcount_is_live(before), 0)) rl_object_dead(obj, "RLRetain", 1);
}
static inline void rl_object_release(rl_object *obj) {
    if (rl_object_release_is_last(obj)) obj->cls->finalize(obj);
}

/* An object that keeps working after its last reference (see above). */
typedef struct rl_held_object {
    rl_object base;
    _Atomic long holds;
} rl_held_object;

/* The class of held objects. */
typedef struct rl_held_class {
    rl_class base;
    void (*free_memory)(rl_object *obj); /* the last hold is gone: frees everything */
} rl_held_class;

/* Sets up a new held object: one reference, and the references' hold. */
void rl_held_object_init(rl_held_object *obj, const rl_held_class *cls);
/* Takes a hold for an internal user (a thread, an observer's context). */
void rl_object_hold(rl_held_object *obj);
/* Drops a hold; the last one calls the class's free_memory. */
void rl_object_unhold(rl_held_object *obj);

/* Whether `obj` (not NULL) is of class `cls`; the type-specific names of the
   public API check their argument with it. */
static inline bool rl_object_is(const void *obj, const rl_class *cls) {
    return ((const rl_object *)obj)->cls == cls;
}
/* Aborts with a message naming `function` when `obj` is not NULL and not of
   class `cls` (or dead: then with rl_object_dead's message): such a call
   would corrupt memory. */
void rl_object_check(const void *obj, const rl_class *cls, const char *function);

/* Internal classes, for type checks. */
extern const rl_class rl_loop_class;
extern const rl_class rl_source_class;
extern const rl_class rl_observer_class;
extern const rl_class rl_timer_class;

/* The small lock of an item (source, observer, timer): 4 bytes, held only for
   a few field updates, never across a callout or a system call. */
typedef struct {
    _Atomic int held;
} rl_item_lock;

void rl_item_lock_slow(rl_item_lock *l);
static inline void rl_item_lock_init(rl_item_lock *l) {
    atomic_init(&l->held, 0);
}
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
