/*
 * rl_observer.h: what rl_observer.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_OBSERVER_H
#define RL_OBSERVER_H

/* ---- an observer: the struct ---- */
struct __RLRunLoopObserver {
    rl_object base;
    rl_item_lock lock;
    RLOptionFlags activities;
    bool repeats;
    _Atomic bool firing; /* its callout is running (on whichever loop) */
    bool info_released;
    bool release_after_firing; /* invalidated mid-callout; under the observer's lock */
    _Atomic bool valid;
    RLIndex order;
    RLRunLoopObserverCallBack callout;
    RLRunLoopObserverContext context;
    RLRunLoopRef rl;         /* while in a loop */
    RLRunLoopRef round_loop; /* the loop and round of its last collection, */
    uint64_t round;          /* under that loop's lock (rl_do_observers) */
    size_t memberships;      /* modes + common set */
    void *block;             /* CreateWithHandler's block copy */
};

void rl_observer_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o);
bool rl_observer_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o);
/* A step of a pass; loop locked on entry and exit. */
void rl_do_observers(RLRunLoopRef rl, rl_mode *m, RLRunLoopActivity activity); /* __CFRunLoopDoObservers */

#endif
