/*
 * rl_loop.h: what rl_loop.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_LOOP_H
#define RL_LOOP_H

/* The main queue's source marks itself inert (draining) or live again (NULL):
   the process's main thread only, and only that thread reads it. */
static inline void rl_loop_set_main_queue_inert(RLRunLoopRef rl, RLRunLoopSourceRef source) {
    rl->main_queue_inert = source;
}
/* Removes every item from the loop (thread exit). Loop locked. */
void rl_loop_remove_all_items_locked(RLRunLoopRef rl, rl_callback_list *cancelled);
/* Adds to a common mode the common items it lacks (an earlier add ran out of
   memory); clears common_incomplete once it has them all. Loop locked. */
void rl_loop_complete_common_mode_locked(RLRunLoopRef rl, rl_mode *m, rl_callback_list *scheduled);

#endif
