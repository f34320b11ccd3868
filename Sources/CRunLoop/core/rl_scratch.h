/*
 * rl_scratch.h: what rl_scratch.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_SCRATCH_H
#define RL_SCRATCH_H

/* (rl_scratch.c) The scratch space of the current depth (a pass collects the items it
   calls out into it), emptied; NULL when out of memory. */
rl_ptr_array *rl_scratch_items_locked(RLRunLoopRef rl);
/* Makes sure `depth` has scratch space for RL_SCRATCH_RESERVED items, so a
   pass with no more ready items than that never allocates: a loop gets it
   for its first run when made, a nested run before it starts. */
#define RL_SCRATCH_RESERVED 32
bool rl_scratch_reserve(RLRunLoopRef rl, size_t depth);
void rl_scratch_free(RLRunLoopRef rl); /* the loop's finalization */
/* The calling depth's key buffer (rl_scratch_items_locked's companion). */
rl_heap_key_buffer *rl_scratch_timer_keys_locked(RLRunLoopRef rl);

#endif
