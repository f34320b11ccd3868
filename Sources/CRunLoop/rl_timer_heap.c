/*
 * rl_timer_heap.c: the 4-ary heap. Invariants: every parent orders before its
 * children by (deadline, sequence); entries[i].slot->heap_index == i.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include "rl_internal.h"

#define ARITY 4

static inline bool before(const rl_heap_entry *a, const rl_heap_entry *b) {
    return a->deadline_ns < b->deadline_ns ||
           (a->deadline_ns == b->deadline_ns && a->sequence < b->sequence);
}

static inline void place(rl_timer_heap *h, size_t index, rl_heap_entry e) {
    h->entries[index] = e;
    e.slot->heap_index = (long)index;
}

static void sift_up(rl_timer_heap *h, size_t index) {
    rl_heap_entry e = h->entries[index];
    while (index > 0) {
        size_t parent = (index - 1) / ARITY;
        if (!before(&e, &h->entries[parent])) break;
        place(h, index, h->entries[parent]);
        index = parent;
    }
    place(h, index, e);
}

static void sift_down(rl_timer_heap *h, size_t index) {
    rl_heap_entry e = h->entries[index];
    for (;;) {
        size_t first = index * ARITY + 1;
        if (first >= h->count) break;
        size_t last = first + ARITY < h->count ? first + ARITY : h->count;
        size_t best = first;
        for (size_t c = first + 1; c < last; c++)
            if (before(&h->entries[c], &h->entries[best])) best = c;
        if (!before(&h->entries[best], &e)) break;
        place(h, index, h->entries[best]);
        index = best;
    }
    place(h, index, e);
}

bool rl_heap_insert(rl_timer_heap *h, struct rl_timer_slot *slot, int64_t deadline_ns, uint64_t sequence) {
    if (h->count == h->capacity) {
        size_t cap = h->capacity ? h->capacity * 2 : 16;
        rl_heap_entry *grown = realloc(h->entries, cap * sizeof *grown);
        if (!grown) return false;
        h->entries = grown;
        h->capacity = cap;
    }
    h->entries[h->count] = (rl_heap_entry){deadline_ns, sequence, slot};
    sift_up(h, h->count++);
    return true;
}

/* Removal moves the hole left at `index` down to a leaf along the earliest
   children, then fills it with the last entry and sifts that up. The last
   entry almost always belongs near the bottom, so this saves the comparisons
   against it that a plain sift-down makes on every level (Floyd's trick). */
void rl_heap_remove(rl_timer_heap *h, size_t index) {
    h->entries[index].slot->heap_index = -1;
    h->count--;
    if (index == h->count) return;
    rl_heap_entry last = h->entries[h->count];
    size_t hole = index;
    for (;;) {
        size_t first = hole * ARITY + 1;
        if (first >= h->count) break;
        size_t end = first + ARITY < h->count ? first + ARITY : h->count;
        size_t best = first;
        for (size_t c = first + 1; c < end; c++)
            if (before(&h->entries[c], &h->entries[best])) best = c;
        place(h, hole, h->entries[best]);
        hole = best;
    }
    h->entries[hole] = last;
    sift_up(h, hole);
}

void rl_heap_update(rl_timer_heap *h, size_t index, int64_t deadline_ns) {
    int64_t old = h->entries[index].deadline_ns;
    h->entries[index].deadline_ns = deadline_ns;
    if (deadline_ns < old) sift_up(h, index);
    else sift_down(h, index);
}

static void search_latest(const rl_timer_heap *h, size_t index,
                          int64_t (*tolerance_of)(const struct rl_timer_slot *), int64_t *best) {
    const rl_heap_entry *e = &h->entries[index];
    if (e->deadline_ns >= *best) return;      /* children are no earlier */
    int64_t tol = tolerance_of(e->slot);
    int64_t latest = e->deadline_ns > INT64_MAX - tol ? INT64_MAX : e->deadline_ns + tol;
    if (latest < *best) *best = latest;
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        search_latest(h, c, tolerance_of, best);
}

int64_t rl_heap_earliest_latest(const rl_timer_heap *h, int64_t (*tolerance_of)(const struct rl_timer_slot *)) {
    int64_t best = INT64_MAX;
    if (h->count) search_latest(h, 0, tolerance_of, &best);
    return best;
}

void rl_heap_free(rl_timer_heap *h) {
    free(h->entries);
    h->entries = NULL;
    h->count = h->capacity = 0;
}

void rl_heap_verify(const rl_timer_heap *h) {
    for (size_t i = 0; i < h->count; i++) {
        if (h->entries[i].slot->heap_index != (long)i) {
            fprintf(stderr, "CRunLoop: timer heap entry %zu has index %ld\n", i, h->entries[i].slot->heap_index);
            abort();
        }
        if (i > 0 && before(&h->entries[i], &h->entries[(i - 1) / ARITY])) {
            fprintf(stderr, "CRunLoop: timer heap order broken at %zu\n", i);
            abort();
        }
    }
}
