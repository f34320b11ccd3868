/*
 * rl_timer.h: what rl_timer.c and rl_timer_fire.c lend the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_TIMER_H
#define RL_TIMER_H

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
