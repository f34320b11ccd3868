/*
 * rl_blocks.c: work queued with RLRunLoopPerformFunction/Block
 * (__CFRunLoopDoBlocks).
 *
 * Invariants: one FIFO per loop; each item names one mode or the common
 * modes, counted in that mode's `pending_blocks` (or the loop's
 * `pending_common_blocks`) until it runs or is dropped. A pass detaches the
 * matching items before calling any, so work queued meanwhile waits for the
 * next block point. Spent nodes are kept for reuse, so steady-state queueing
 * does not allocate.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "rl_internal.h"

#define MAX_SPARE_BLOCKS 1024

static rl_block *take_node(RLRunLoopRef rl) {
    rl_block *b = rl->spare_blocks;
    if (b) {
        rl->spare_blocks = b->next;
        rl->spare_block_count--;
        return b;
    }
    return malloc(sizeof *b);
}

static void give_back_node(RLRunLoopRef rl, rl_block *b) {
    if (rl->spare_block_count >= MAX_SPARE_BLOCKS) {
        free(b);
        return;
    }
    b->next = rl->spare_blocks;
    rl->spare_blocks = b;
    rl->spare_block_count++;
}

static void count_pending(RLRunLoopRef rl, rl_block *b, long delta) {
    if (b->mode) b->mode->pending_blocks += (size_t)delta;
    else rl->pending_common_blocks += (size_t)delta;
}

bool rl_enqueue_block(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info,
                      void (*dispose)(void *)) {
    if (!rl || !fn || !rl_mode_name_is_valid(mode)) return false;
    bool common = rl_mode_name_is_common(mode);
    rl_loop_lock(rl);
    rl_mode *m = common || rl->dead ? NULL : rl_mode_find_or_create(rl, mode);
    rl_block *b = (common || m) && !rl->dead ? take_node(rl) : NULL;
    if (b) {
        *b = (rl_block){NULL, m, fn, info, dispose};
        if (rl->blocks_tail) rl->blocks_tail->next = b;
        else rl->blocks_head = b;
        rl->blocks_tail = b;
        count_pending(rl, b, 1);
    }
    rl_loop_unlock(rl);
    return b != NULL;
}

void RLRunLoopPerformFunction(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *info), void *info) {
    rl_enqueue_block(rl, mode, fn, info, NULL);
}

static bool matches(RLRunLoopRef rl, const rl_block *b, const rl_mode *m) {
    (void)rl;
    return b->mode ? b->mode == m : m->is_common;
}

/* __CFRunLoopDoBlocks */
bool rl_do_blocks(RLRunLoopRef rl, rl_mode *m) {
    if (!rl->blocks_head || !rl_mode_has_blocks(rl, m)) return false;
    rl_block *run_head = NULL, **run_tail = &run_head;
    rl_block *keep_head = NULL, **keep_tail = &keep_head, *keep_last = NULL;
    for (rl_block *b = rl->blocks_head, *next; b; b = next) {
        next = b->next;
        b->next = NULL;
        if (matches(rl, b, m)) {
            count_pending(rl, b, -1);
            *run_tail = b;
            run_tail = &b->next;
        } else {
            *keep_tail = b;
            keep_tail = &b->next;
            keep_last = b;
        }
    }
    rl->blocks_head = keep_head;
    rl->blocks_tail = keep_last;
    if (!run_head) return false;
    rl_loop_unlock(rl);
    for (rl_block *b = run_head; b; b = b->next) {
        RL_IS_CALLING_OUT_TO_A_BLOCK(b->fn, b->info);
        if (b->dispose) b->dispose(b->info);
    }
    rl_loop_relock(rl);
    for (rl_block *b = run_head, *next; b; b = next) {
        next = b->next;
        give_back_node(rl, b);
    }
    return true;
}

/* Drops every queued item without calling it (the loop's thread exited).
   Loop locked; dispose functions only release block copies. */
void rl_blocks_drop_all(RLRunLoopRef rl) {
    for (rl_block *b = rl->blocks_head, *next; b; b = next) {
        next = b->next;
        count_pending(rl, b, -1);
        if (b->dispose) b->dispose(b->info);
        free(b);
    }
    rl->blocks_head = rl->blocks_tail = NULL;
}

void rl_blocks_free_spares(RLRunLoopRef rl) {
    for (rl_block *b = rl->spare_blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    rl->spare_blocks = NULL;
    rl->spare_block_count = 0;
}
