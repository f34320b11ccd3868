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
    else rl->blocks.pending_common += (size_t)delta;
}

static bool has_payload(const rl_block *b) {
    return b->sequence & 1;
}

/* Locks the loop and appends an item for `mode`, its mode and sequence (low
   bit `payload`) set, for the caller to fill in and then unlock; NULL, and
   the loop unlocked, when nothing can be queued (`status` says why). */
static inline __attribute__((always_inline)) rl_block *append_locked(RLRunLoopRef rl, RLRunLoopMode mode,
                                                                     uint64_t payload, rl_queue_status *status) {
    if (!rl || !rl_mode_name_is_valid(mode)) {
        *status = RL_QUEUE_REFUSED;
        return NULL;
    }
    bool common = rl_mode_name_is_common(mode);
    rl_loop_lock(rl);
    rl_mode *m = common || rl->dead ? NULL : rl_mode_find_or_create(rl, mode);
    if (rl->dead || !(common || m) || !queue_reserve(&rl->blocks.queue, rl->blocks.queue.count + 1)) {
        *status = rl->dead ? RL_QUEUE_REFUSED : RL_QUEUE_NO_MEMORY;
        rl_loop_unlock(rl);
        return NULL;
    }
    rl_block *b = &rl->blocks.queue.items[rl->blocks.queue.count++];
    b->mode = m;
    b->sequence = rl->blocks.sequence++ << 1 | payload;
    count_pending(rl, b, 1);
    return b;
}

rl_queue_status rl_enqueue_block_status(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info,
                                        void (*dispose)(void *)) {
    rl_queue_status status = RL_QUEUE_REFUSED;
    rl_block *b = fn ? append_locked(rl, mode, 0, &status) : NULL;
    if (!b) return status;
    b->call.fn = fn;
    b->data.object.info = info;
    b->data.object.dispose = dispose;
    rl_loop_unlock(rl);
    return RL_QUEUED;
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

void RLRunLoopPerformPayload(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *payload, bool run),
                             const void *payload) {
    if (!fn || !payload) return;
    rl_queue_status status;
    rl_block *b = append_locked(rl, mode, 1, &status);
    if (!b) {
        void *copy[2];
        memcpy(copy, payload, sizeof copy);
        fn(copy, false);
        return;
    }
    b->call.payload_fn = fn;
    memcpy(b->data.payload, payload, sizeof b->data.payload);
    rl_loop_unlock(rl);
}

/* Calls a taken item's function (the item must not move meanwhile), then
   its dispose, if any. */
static void call_block(RLRunLoopRef rl, rl_block *b) {
    if (has_payload(b)) {
        RL_IS_CALLING_OUT_TO_A_BLOCK_PAYLOAD(rl, b->call.payload_fn, b->data.payload);
    } else {
        RL_IS_CALLING_OUT_TO_A_BLOCK(rl, b->call.fn, b->data.object.info);
        if (b->data.object.dispose) b->data.object.dispose(b->data.object.info);
    }
}

/* Lets go of an item that will not run. */
static void drop_block(rl_block *b) {
    if (has_payload(b)) b->call.payload_fn(b->data.payload, false);
    else if (b->data.object.dispose) b->data.object.dispose(b->data.object.info);
}

static bool matches(const rl_block *b, const rl_mode *m) {
    return b->mode ? b->mode == m : m->is_common;
}

/* Puts the finished batch's array aside for the next pass (the larger of the
   two survives). Loop locked. */
static void keep_as_spare(RLRunLoopRef rl, rl_block_queue batch) {
    batch.count = 0;
    if (batch.capacity > rl->blocks.spare.capacity) {
        free(rl->blocks.spare.items);
        rl->blocks.spare = batch;
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
        while (i < rl->blocks.queue.count &&
               !(rl->blocks.queue.items[i].sequence >> 1 < before && matches(&rl->blocks.queue.items[i], m)))
            i++;
        if (i == rl->blocks.queue.count) return run;
        rl_block b = rl->blocks.queue.items[i];
        memmove(&rl->blocks.queue.items[i], &rl->blocks.queue.items[i + 1],
                (rl->blocks.queue.count - i - 1) * sizeof b);
        rl->blocks.queue.count--;
        count_pending(rl, &b, -1);
        run++;
        rl_loop_unlock(rl);
        call_block(rl, &b);
        rl_loop_relock(rl);
    }
}

/* __CFRunLoopDoBlocks */
bool rl_do_blocks(RLRunLoopRef rl, rl_mode *m) {
    if (!rl->blocks.queue.count || !rl_mode_has_blocks(rl, m)) return false;
    /* The spare array takes the items of other modes: it must hold them all
       before anything moves (it normally does: it was the last batch). */
    size_t matching = m->pending_blocks + (m->is_common ? rl->blocks.pending_common : 0);
    if (matching < rl->blocks.queue.count && !queue_reserve(&rl->blocks.spare, rl->blocks.queue.count - matching))
        return do_blocks_in_place(rl, m, rl->blocks.sequence) > 0;
    rl_block_queue batch = rl->blocks.queue;
    rl->blocks.queue = rl->blocks.spare;
    rl->blocks.spare = (rl_block_queue){0};
    size_t run = 0;
    for (size_t i = 0; i < batch.count; i++) {
        rl_block *b = &batch.items[i];
        if (matches(b, m)) {
            count_pending(rl, b, -1);
            batch.items[run++] = *b;
        } else {
            rl->blocks.queue.items[rl->blocks.queue.count++] = *b; /* reserved above */
        }
    }
    if (run) {
        rl_loop_unlock(rl);
        for (size_t i = 0; i < run; i++) {
            call_block(rl, &batch.items[i]);
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
    for (size_t i = 0; i < rl->blocks.queue.count; i++) count_pending(rl, &rl->blocks.queue.items[i], -1);
    rl_block_queue taken = rl->blocks.queue;
    rl->blocks.queue = (rl_block_queue){0};
    return taken;
}

void rl_blocks_dispose(rl_block_queue *taken) {
    for (size_t i = 0; i < taken->count; i++) drop_block(&taken->items[i]);
    free(taken->items);
    *taken = (rl_block_queue){0};
}

void rl_blocks_free(RLRunLoopRef rl) {
    free(rl->blocks.queue.items);
    free(rl->blocks.spare.items);
    rl->blocks.queue = rl->blocks.spare = (rl_block_queue){0};
}
