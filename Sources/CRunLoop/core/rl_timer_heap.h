/*
 * rl_timer_heap.h: a 4-ary min-heap of timer slots keyed by (deadline,
 * sequence), the deadline cached beside the pointer so sifting never touches
 * the timer (libev's layout). Equal deadlines come out in sequence order,
 * i.e. in the order the timers were (re)scheduled: the caller draws a fresh
 * sequence for every insertion and re-key. Every move writes the entry's new
 * position back into its slot, so removal and re-keying are O(log n).
 */
#ifndef RL_TIMER_HEAP_H
#define RL_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rl_timer_slot;

typedef struct {
    int64_t               deadline_ns;
    uint64_t              sequence;
    struct rl_timer_slot *slot;
} rl_heap_entry;

typedef struct {
    rl_heap_entry *entries;
    size_t         count;
    size_t         capacity;
} rl_timer_heap;

/* Scratch space for the keys of the due entries, reused from pass to pass. */
typedef struct {
    rl_heap_entry *items;
    size_t         count;
    size_t         capacity;
} rl_heap_key_buffer;

bool   rl_heap_insert(rl_timer_heap *h, struct rl_timer_slot *slot, int64_t deadline_ns, uint64_t sequence);
void   rl_heap_remove(rl_timer_heap *h, size_t index);
/* Gives the entry at `index` a new key (a re-dated timer goes after the
   others of its deadline: the caller passes a fresh sequence). */
void   rl_heap_update(rl_timer_heap *h, size_t index, int64_t deadline_ns, uint64_t sequence);
static inline const rl_heap_entry *rl_heap_top(const rl_timer_heap *h) {
    return h->count ? &h->entries[0] : NULL;
}
/* The earliest of deadline + tolerance over all entries, given each slot's
   tolerance (ns); prunes subtrees whose deadline is already past the best. */
int64_t rl_heap_earliest_latest(const rl_timer_heap *h, int64_t (*tolerance_of)(const struct rl_timer_slot *));
/* The latest deadline that is <= limit (INT64_MIN if none); visits only the
   entries due by `limit`. */
int64_t rl_heap_latest_deadline_until(const rl_timer_heap *h, int64_t limit);
void   rl_heap_free(rl_timer_heap *h);
/* Checks every heap invariant; aborts with a message if one is broken. */
void   rl_heap_verify(const rl_timer_heap *h);

#endif
