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

/* Room for one more entry in an array of `count` entries: a full one doubles
   (a first one holds `first`). False, the array untouched, without memory. */
static bool reserve_entry(rl_heap_entry **entries, size_t count, size_t *capacity, size_t first) {
    if (count < *capacity) return true;
    size_t cap = *capacity ? *capacity * 2 : first;
    rl_heap_entry *grown = realloc(*entries, cap * sizeof *grown);
    if (!grown) return false;
    *entries = grown;
    *capacity = cap;
    return true;
}

bool rl_heap_insert(rl_timer_heap *h, struct rl_timer_slot *slot, int64_t deadline_ns, uint64_t sequence) {
    if (!reserve_entry(&h->entries, h->count, &h->capacity, 16)) return false;
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

void rl_heap_update(rl_timer_heap *h, size_t index, int64_t deadline_ns, uint64_t sequence) {
    rl_heap_entry old = h->entries[index];
    h->entries[index].deadline_ns = deadline_ns;
    h->entries[index].sequence = sequence;
    if (before(&h->entries[index], &old)) sift_up(h, index);
    else sift_down(h, index);
}

static void collect_due(const rl_timer_heap *h, size_t index, int64_t limit, rl_ptr_array *out, bool *complete) {
    if (h->entries[index].deadline_ns > limit) return;      /* children are no earlier */
    if (!rl_ptr_array_append(out, h->entries[index].slot)) {
        *complete = false;
        return;
    }
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        collect_due(h, c, limit, out, complete);
}

/* The heap key of a slot that is in h. */
static inline const rl_heap_entry *entry_of(const rl_timer_heap *h, void *slot) {
    return &h->entries[((struct rl_timer_slot *)slot)->heap_index];
}

/* Heapsort of items[0..n) by their entries' keys: in place, no allocation,
   O(n log n) however many timers are due at once. */
static void sift_down_items(const rl_timer_heap *h, void **items, size_t n, size_t i) {
    for (;;) {
        size_t largest = i, l = 2 * i + 1, r = l + 1;
        if (l < n && before(entry_of(h, items[largest]), entry_of(h, items[l]))) largest = l;
        if (r < n && before(entry_of(h, items[largest]), entry_of(h, items[r]))) largest = r;
        if (largest == i) return;
        void *tmp = items[i];
        items[i] = items[largest];
        items[largest] = tmp;
        i = largest;
    }
}

static void sort_by_key(const rl_timer_heap *h, void **items, size_t n) {
    if (n < 2) return;
    for (size_t i = n / 2; i-- > 0;) sift_down_items(h, items, n, i);
    for (size_t end = n - 1; end > 0; end--) {
        void *tmp = items[0];
        items[0] = items[end];
        items[end] = tmp;
        sift_down_items(h, items, end, 0);
    }
}

/* The due entries copied by value, so that sorting them reads one array in
   order instead of chasing every slot into its timer: with a million timers
   due at once this is the difference between seconds and milliseconds. */
static bool copy_due(const rl_timer_heap *h, size_t index, int64_t limit, rl_heap_key_buffer *keys) {
    if (h->entries[index].deadline_ns > limit) return true;      /* children are no earlier */
    if (!reserve_entry(&keys->items, keys->count, &keys->capacity, 64)) return false;
    keys->items[keys->count++] = h->entries[index];
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        if (!copy_due(h, c, limit, keys)) return false;
    return true;
}

static inline void swap_entries(rl_heap_entry *a, rl_heap_entry *b) {
    rl_heap_entry tmp = *a;
    *a = *b;
    *b = tmp;
}

static void sift_down_values(rl_heap_entry *e, size_t n, size_t i) {
    for (;;) {
        size_t largest = i, l = 2 * i + 1, r = l + 1;
        if (l < n && before(&e[largest], &e[l])) largest = l;
        if (r < n && before(&e[largest], &e[r])) largest = r;
        if (largest == i) return;
        swap_entries(&e[i], &e[largest]);
        i = largest;
    }
}

static void heapsort_values(rl_heap_entry *e, size_t n) {
    if (n < 2) return;
    for (size_t i = n / 2; i-- > 0;) sift_down_values(e, n, i);
    for (size_t end = n - 1; end > 0; end--) {
        swap_entries(&e[0], &e[end]);
        sift_down_values(e, end, 0);
    }
}

/* Introsort of distinct keys (sequences are unique): quicksort with a median
   of three, recursing into the smaller part, heapsort past a depth limit so
   the worst case stays O(n log n); insertion sort for short runs. */
static void sort_values(rl_heap_entry *e, size_t n, unsigned depth_left) {
    while (n > 16) {
        if (depth_left-- == 0) {
            heapsort_values(e, n);
            return;
        }
        size_t mid = n / 2;
        if (before(&e[mid], &e[0])) swap_entries(&e[mid], &e[0]);
        if (before(&e[n - 1], &e[0])) swap_entries(&e[n - 1], &e[0]);
        if (before(&e[n - 1], &e[mid])) swap_entries(&e[n - 1], &e[mid]);
        rl_heap_entry pivot = e[mid];
        size_t i = 0, j = n - 1;
        for (;;) {
            while (before(&e[i], &pivot)) i++;
            while (before(&pivot, &e[j])) j--;
            if (i >= j) break;
            swap_entries(&e[i], &e[j]);
            i++;
            j--;
        }
        /* e[0..j] <= pivot <= e[j+1..n) */
        size_t left = j + 1;
        if (left < n - left) {
            sort_values(e, left, depth_left);
            e += left;
            n -= left;
        } else {
            sort_values(e + left, n - left, depth_left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        rl_heap_entry x = e[i];
        size_t j = i;
        for (; j > 0 && before(&x, &e[j - 1]); j--) e[j] = e[j - 1];
        e[j] = x;
    }
}

bool rl_heap_collect_due(const rl_timer_heap *h, int64_t limit, rl_heap_key_buffer *keys, rl_ptr_array *out) {
    size_t start = out->count;
    keys->count = 0;
    if (!h->count) return true;
    if (copy_due(h, 0, limit, keys) && rl_ptr_array_reserve(out, start + keys->count)) {
        sort_values(keys->items, keys->count, 2 * 64);
        for (size_t i = 0; i < keys->count; i++) out->items[start + i] = keys->items[i].slot;
        out->count = start + keys->count;
        return true;
    }
    /* Out of memory for the keys: sort the slots in place by their entries. */
    bool complete = true;
    collect_due(h, 0, limit, out, &complete);
    sort_by_key(h, out->items + start, out->count - start);
    return complete;
}

static void search_latest_date(const rl_timer_heap *h, size_t index, int64_t limit, int64_t *best) {
    const rl_heap_entry *e = &h->entries[index];
    if (e->deadline_ns > limit) return;       /* children are no earlier */
    if (e->deadline_ns > *best) *best = e->deadline_ns;
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        search_latest_date(h, c, limit, best);
}

int64_t rl_heap_latest_deadline_until(const rl_timer_heap *h, int64_t limit) {
    int64_t best = INT64_MIN;
    if (h->count) search_latest_date(h, 0, limit, &best);
    return best;
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
