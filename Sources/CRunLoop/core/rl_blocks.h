/*
 * rl_blocks.h: what rl_blocks.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_BLOCKS_H
#define RL_BLOCKS_H

rl_block_queue rl_blocks_take_all(RLRunLoopRef rl);
void rl_blocks_dispose(rl_block_queue *taken); /* unlocked */
/* Queues fn(info) for `mode`; false if it was not queued (then dispose is the
   caller's to call). dispose(info) runs after fn, or when the item is dropped. */
bool rl_enqueue_block(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info, void (*dispose)(void *));
/* The same, saying why (rl_enqueue_block_status, rl_extras.h). */
void rl_blocks_free(RLRunLoopRef rl);
/* A step of a pass; loop locked on entry and exit. */
bool rl_do_blocks(RLRunLoopRef rl, rl_mode *m); /* __CFRunLoopDoBlocks */

#endif
