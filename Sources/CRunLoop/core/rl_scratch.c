/*
 * rl_scratch.c: the scratch space of each run depth. A pass collects the
 * items it is about to call out (and the due timers' heap keys) into the
 * scratch of its depth, so a pass with no more ready items than
 * RL_SCRATCH_RESERVED never allocates; a nested run gets its own depth, so
 * it never overwrites what an outer pass is still walking.
 */
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

bool rl_scratch_reserve(RLRunLoopRef rl, size_t depth) {
    if (depth >= rl->scratch_depths) {
        size_t n = depth + 4;
        rl_scratch *grown = realloc(rl->scratch, n * sizeof *grown);
        if (!grown) return false;
        memset(grown + rl->scratch_depths, 0, (n - rl->scratch_depths) * sizeof *grown);
        rl->scratch = grown;
        rl->scratch_depths = n;
    }
    return rl_ptr_array_reserve(&rl->scratch[depth].items, RL_SCRATCH_RESERVED) &&
           rl_heap_key_buffer_reserve(&rl->scratch[depth].timer_keys, RL_SCRATCH_RESERVED);
}

rl_ptr_array *rl_scratch_items_locked(RLRunLoopRef rl) {
    if (!rl_scratch_reserve(rl, rl->depth)) return NULL;
    rl_ptr_array *a = &rl->scratch[rl->depth].items;
    a->count = 0;
    return a;
}

rl_heap_key_buffer *rl_scratch_timer_keys_locked(RLRunLoopRef rl) {
    return &rl->scratch[rl->depth].timer_keys;
}

void rl_scratch_free(RLRunLoopRef rl) {
    for (size_t i = 0; i < rl->scratch_depths; i++) {
        rl_ptr_array_free(&rl->scratch[i].items);
        rl_heap_key_buffer_free(&rl->scratch[i].timer_keys);
    }
    free(rl->scratch);
    rl->scratch = NULL;
    rl->scratch_depths = 0;
}
