/*
 * rl_timer.h: what rl_timer.c and rl_timer_fire.c lend the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_TIMER_H
#define RL_TIMER_H

/* ---- a timer, its slots in modes and its extra part: the struct ---- */
typedef struct rl_timer_slot {
    rl_mode *mode;              /* NULL: the timer's own slot, unused */
    rl_heap_handle heap_handle; /* its entry in the mode's heap; RL_HEAP_NO_HANDLE while
                                                  the timer is firing (scheduled after its callout) */
    bool is_own;                /* the slot inside the timer, else an rl_timer_more_slot */
} rl_timer_slot;

/* A slot beyond the timer's own, malloc'd: it names its timer, which the
   timer's own slot need not (rl_timer_slot_timer), 8 bytes less per timer. */
typedef struct {
    rl_timer_slot slot;
    RLRunLoopTimerRef timer;
} rl_timer_more_slot;

/* What most timers never use, made on first need: the context's functions,
   the order, a tolerance, slots in more modes than one, a repeating timer's
   interval (made with the timer). Kept out of the timer so that a million
   timers touch (and the kernel zeroes) less memory: a timer is 88 bytes, one
   96-byte malloc chunk (it was 216). */
typedef struct {
    RLTimeInterval interval; /* > 0: it repeats; set at creation, never changed */
    RLIndex context_version;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copy_description)(const void *info);
    bool info_released; /* only a context with a release has anything to release */
    RLIndex order;
    RLTimeInterval tolerance;
    int64_t tolerance_ns;
    rl_timer_slot **more_slots; /* slots beyond the timer's own, rl_timer_more_slot each */
    size_t more_count;
    size_t more_capacity;
} rl_timer_extra;

struct __RLRunLoopTimer {
    rl_object base;
    rl_item_lock lock;
    _Atomic bool valid;
    bool firing;               /* its callout is running; under the timer's lock */
    bool release_after_firing; /* invalidated mid-callout; under the timer's lock */
    bool in_common;
    RLAbsoluteTime fire_date; /* as given, or moved along the grid */
    int64_t fire_ns;          /* its deadline */
    RLRunLoopTimerCallBack callout;
    void *info;
    RLRunLoopRef rl; /* while in a loop */
    /* Set once, from NULL, with the timer's lock (and its loop's, if any)
       held; never freed before the timer. */
    _Atomic(rl_timer_extra *) extra;
    rl_timer_slot slot; /* its first mode's: most timers are in one */
};

/* The timer a slot belongs to. */
static inline RLRunLoopTimerRef rl_timer_slot_timer(const rl_timer_slot *slot) {
    if (slot->is_own) return (RLRunLoopTimerRef)((uintptr_t)slot - offsetof(struct __RLRunLoopTimer, slot));
    return ((const rl_timer_more_slot *)slot)->timer;
}

static inline rl_timer_extra *rl_timer_extra_of(RLRunLoopTimerRef t) {
    return atomic_load_explicit(&t->extra, memory_order_acquire);
}
/* How many modes hold the timer. Timer locked (or its loop). */
static inline size_t rl_timer_slot_count(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return (t->slot.mode != NULL) + (x ? x->more_count : 0);
}
/* 0: a one-shot timer. */
static inline RLTimeInterval rl_timer_interval(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return x ? x->interval : 0;
}
static inline int64_t rl_timer_tolerance_ns(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return x ? x->tolerance_ns : 0;
}
static inline RLTimeInterval rl_timer_tolerance(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return x ? x->tolerance : 0;
}

void rl_timer_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t);
bool rl_timer_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t);
rl_timer_slot *rl_timer_slot_for_mode(RLRunLoopTimerRef t, rl_mode *m);
/* Re-dates every scheduled timer of the loop for the clock it now runs on,
   keeping their order (rl_timer.c); false, nothing changed, when out of
   memory. Loop locked, no run active. */
bool rl_timers_reconvert(RLRunLoopRef rl);
/* A step of a pass; loop locked on entry and exit. */
bool rl_do_timers(RLRunLoopRef rl, rl_mode *m); /* __CFRunLoopDoTimers */

#endif
