/*
 * rl_mode.h: what rl_mode.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_MODE_H
#define RL_MODE_H

bool rl_mode_name_is_valid(RLRunLoopMode mode);
bool rl_mode_name_is_common(RLRunLoopMode mode);
rl_mode *rl_mode_find(RLRunLoopRef rl, RLRunLoopMode name);
rl_mode *rl_mode_find_or_create(RLRunLoopRef rl, RLRunLoopMode name);
/* The default mode named by its constant, told without a string comparison:
   most items are added to it, by that name. */
static inline bool rl_mode_name_is_default(RLRunLoopMode mode) {
    return mode == kRLRunLoopDefaultMode;
}
/* The default mode of a live loop: made first, with the loop. */
rl_mode *rl_mode_default(RLRunLoopRef rl);
/* Frees every mode of the loop and its table of them (the loop's finalization). */
void rl_modes_free(RLRunLoopRef rl);
bool rl_mode_is_empty(RLRunLoopRef rl, rl_mode *m);
bool rl_mode_has_blocks(RLRunLoopRef rl, rl_mode *m);
/* Arms the loop's timerfd for the mode's `deadline` (its rl_mode_next_deadline)
   if that changed; false when there is no timerfd (the wait must time out). */
bool rl_mode_arm_locked(rl_mode *m, int64_t deadline);
/* The timers of a mode changed: re-arm now if another thread is changing the
   mode the loop is running in (its own thread re-arms before it sleeps). */
void rl_mode_timers_changed_locked(rl_mode *m);
int64_t rl_mode_next_deadline(rl_mode *m);
/* When the mode's timers want the loop awake (rl_mode_next_deadline without
   a run's deadline); RL_NEVER without timers. */
int64_t rl_mode_timers_deadline(rl_mode *m);
/* Reads the calling thread's timer slack into the loop, once (its own thread). */
void rl_mode_read_timer_slack(RLRunLoopRef rl);

#endif
