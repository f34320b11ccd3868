/*
 * rl_blocks.c: work queued with RLRunLoopPerformFunction/Block
 * (__CFRunLoopDoBlocks).
 *
 * Invariants: one FIFO per loop, an array; each item names one mode or the
 * common modes, counted in that mode's `pending_blocks` (or the loop's
 * `pending_common_blocks`) until it runs or is dropped. A pass takes the whole
 * array, puts back the items for other modes in their order, and only then
 * calls the matching ones, so work queued meanwhile lands behind them and
 * waits for the next block point. The taken array is kept as a spare, so
 * steady-state queueing allocates nothing. An item holds a pointer of info
 * or, for RLRunLoopPerformPayload, a two-word value of its own (so a Swift
 * closure needs no box); items move by copy. Out of memory, an item is never
 * dropped and no user code runs under the lock: queueing fails at once (the
 * caller's release runs, outside the lock), or a pass calls its items one at
 * a time in place.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

static bool queue_reserve(rl_block_queue *q, size_t capacity) {
    return rl_array_reserve(&q->items, sizeof *q->items, &q->capacity, capacity, 64);
}

static void count_pending(RLRunLoopRef rl, const rl_block *b, long delta) {
    if (b->mode) b->mode->pending_blocks += (size_t)delta;
    else rl->pending_common_blocks += (size_t)delta;
}

/* Appends `item` (mode and sequence still to fill in) for `mode`. */
static rl_queue_status enqueue(RLRunLoopRef rl, RLRunLoopMode mode, rl_block item) {
    if (!rl || !item.fn || !rl_mode_name_is_valid(mode)) return RL_QUEUE_REFUSED;
    bool common = rl_mode_name_is_common(mode);
    rl_queue_status status = RL_QUEUE_NO_MEMORY;
    rl_loop_lock(rl);
    rl_mode *m = common || rl->dead ? NULL : rl_mode_find_or_create(rl, mode);
    if (rl->dead) {
        status = RL_QUEUE_REFUSED;
    } else if ((common || m) && queue_reserve(&rl->blocks, rl->blocks.count + 1)) {
        rl_block *b = &rl->blocks.items[rl->blocks.count++];
        *b = item;
        b->mode = m;
        b->sequence = rl->block_sequence++;
        count_pending(rl, b, 1);
        status = RL_QUEUED;
    }
    rl_loop_unlock(rl);
    return status;
}

rl_queue_status rl_enqueue_block_status(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info,
                                        void (*dispose)(void *)) {
    return enqueue(rl, mode, (rl_block){.fn = fn, .data.info = info, .dispose = dispose});
}

bool rl_enqueue_block(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info, void (*dispose)(void *)) {
    return rl_enqueue_block_status(rl, mode, fn, info, dispose) == RL_QUEUED;
}

void RLRunLoopPerformFunction(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *info), void *info) {
    rl_enqueue_block(rl, mode, fn, info, NULL);
}

void RLRunLoopPerformFunctionWithRelease(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *info), void *info,
                                         void (*release)(void *info)) {
    if (!rl_enqueue_block(rl, mode, fn, info, release) && release) release(info);
}

void RLRunLoopPerformPayload(RLRunLoopRef rl, RLRunLoopMode mode, void (*run)(void *payload), const void *payload,
                             void (*drop)(void *payload)) {
    if (!payload) return;
    rl_block item = {.fn = run, .dispose = drop, .has_payload = true};
    memcpy(item.data.payload, payload, sizeof item.data.payload);
    if (enqueue(rl, mode, item) != RL_QUEUED && drop) drop(item.data.payload);
}

/* What the item's functions get. */
static void *argument(rl_block *b) {
    return b->has_payload ? (void *)b->data.payload : b->data.info;
}

/* Calls a taken item, then its dispose unless it owns a payload (run took
   it). The item must not move meanwhile. */
static void call_block(rl_block *b) {
    RL_IS_CALLING_OUT_TO_A_BLOCK(b->fn, argument(b));
    if (b->dispose && !b->has_payload) b->dispose(b->data.info);
}

static bool matches(const rl_block *b, const rl_mode *m) {
    return b->mode ? b->mode == m : m->is_common;
}

/* Puts the finished batch's array aside for the next pass (the larger of the
   two survives). Loop locked. */
static void keep_as_spare(RLRunLoopRef rl, rl_block_queue batch) {
    batch.count = 0;
    if (batch.capacity > rl->spare_blocks.capacity) {
        free(rl->spare_blocks.items);
        rl->spare_blocks = batch;
    } else {
        free(batch.items);
    }
}

/* Out of memory for the array that keeps the other modes' items: calls the
   matching items one at a time, each taken out of the queue in place, so
   nothing is dropped and no memory is needed. Only items queued before this
   block point (sequence below `before`) run; a callout's nested runs may
   take some of them meanwhile. Quadratic, but only while memory is short. */
static size_t do_blocks_in_place(RLRunLoopRef rl, rl_mode *m, uint64_t before) {
    size_t run = 0;
    for (;;) {
        size_t i = 0;
        while (i < rl->blocks.count && !(rl->blocks.items[i].sequence < before && matches(&rl->blocks.items[i], m)))
            i++;
        if (i == rl->blocks.count) return run;
        rl_block b = rl->blocks.items[i];
        memmove(&rl->blocks.items[i], &rl->blocks.items[i + 1], (rl->blocks.count - i - 1) * sizeof b);
        rl->blocks.count--;
        count_pending(rl, &b, -1);
        run++;
        rl_loop_unlock(rl);
        call_block(&b);
        rl_loop_relock(rl);
    }
}

/* __CFRunLoopDoBlocks */
bool rl_do_blocks(RLRunLoopRef rl, rl_mode *m) {
    if (!rl->blocks.count || !rl_mode_has_blocks(rl, m)) return false;
    /* The spare array takes the items of other modes: it must hold them all
       before anything moves (it normally does: it was the last batch). */
    size_t matching = m->pending_blocks + (m->is_common ? rl->pending_common_blocks : 0);
    if (matching < rl->blocks.count && !queue_reserve(&rl->spare_blocks, rl->blocks.count - matching))
        return do_blocks_in_place(rl, m, rl->block_sequence) > 0;
    rl_block_queue batch = rl->blocks;
    rl->blocks = rl->spare_blocks;
    rl->spare_blocks = (rl_block_queue){0};
    size_t run = 0;
    for (size_t i = 0; i < batch.count; i++) {
        rl_block *b = &batch.items[i];
        if (matches(b, m)) {
            count_pending(rl, b, -1);
            batch.items[run++] = *b;
        } else {
            rl->blocks.items[rl->blocks.count++] = *b; /* reserved above */
        }
    }
    if (run) {
        rl_loop_unlock(rl);
        for (size_t i = 0; i < run; i++) {
            call_block(&batch.items[i]);
        }
        rl_loop_relock(rl);
    }
    keep_as_spare(rl, batch);
    return run > 0;
}

/* Takes every queued item out without calling it (the loop's thread exited).
   Loop locked; the caller disposes of them after unlocking, because dispose
   functions are user code. */
rl_block_queue rl_blocks_take_all(RLRunLoopRef rl) {
    for (size_t i = 0; i < rl->blocks.count; i++) count_pending(rl, &rl->blocks.items[i], -1);
    rl_block_queue taken = rl->blocks;
    rl->blocks = (rl_block_queue){0};
    return taken;
}

void rl_blocks_dispose(rl_block_queue *taken) {
    for (size_t i = 0; i < taken->count; i++)
        if (taken->items[i].dispose) taken->items[i].dispose(argument(&taken->items[i]));
    free(taken->items);
    *taken = (rl_block_queue){0};
}

void rl_blocks_free(RLRunLoopRef rl) {
    free(rl->blocks.items);
    free(rl->spare_blocks.items);
    rl->blocks = rl->spare_blocks = (rl_block_queue){0};
}
