/*
 * rl_observer.h: what rl_observer.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_OBSERVER_H
#define RL_OBSERVER_H

void rl_observer_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o);
bool rl_observer_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o);
/* A step of a pass; loop locked on entry and exit. */
void rl_do_observers(RLRunLoopRef rl, rl_mode *m, RLRunLoopActivity activity); /* __CFRunLoopDoObservers */

#endif
