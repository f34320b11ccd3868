/*
 * rl_timer_heap.c: the 4-ary heap of rl_timer_heap.h. Invariants (checked by
 * rl_heap_check): every parent orders before its children by (deadline,
 * sequence); for every entry i, positions[entries[i].handle] == i;
 * the handles not in use form one free list (linked through `positions`), and
 * in-use plus free handles are all the handles. Self-contained: it includes
 * nothing of the run loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include "rl_timer_heap.h"

#define ARITY 4

_Static_assert(sizeof(rl_heap_entry) == 16, "four children fill one 64-byte line");

static inline bool before(const rl_timer_heap *h, const rl_heap_entry *a, const rl_heap_entry *b) {
    return rl_heap_order_before(a->deadline_ns, h->info[a->handle].sequence, b->deadline_ns,
                                h->info[b->handle].sequence);
}

/* Writes an entry at `index` and tells its handle where it is now: the only
   write a sift makes outside the entry array, into the heap's own table. */
static inline void place(rl_timer_heap *h, size_t index, rl_heap_entry e) {
    h->entries[index] = e;
    h->positions[e.handle] = (uint32_t)index;
}

static void sift_up(rl_timer_heap *h, size_t index) {
    rl_heap_entry e = h->entries[index];
    while (index > 0) {
        size_t parent = (index - 1) / ARITY;
        if (!before(h, &e, &h->entries[parent])) break;
        place(h, index, h->entries[parent]);
        index = parent;
    }
    place(h, index, e);
}

/* The earliest child of `index` among the first `count` entries; index
   itself if it has none. */
static inline size_t earliest_child(const rl_timer_heap *h, size_t index, size_t count) {
    size_t first = index * ARITY + 1;
    if (first >= count) return index;
    if (first + ARITY <= count) {
        /* A full family, the usual case: two independent pairs, then their
           winners, so the comparisons need not wait for one another. */
        const rl_heap_entry *e = h->entries;
        size_t a = before(h, &e[first + 1], &e[first]) ? first + 1 : first;
        size_t b = before(h, &e[first + 3], &e[first + 2]) ? first + 3 : first + 2;
        return before(h, &e[b], &e[a]) ? b : a;
    }
    size_t end = count;
    size_t best = first;
    for (size_t c = first + 1; c < end; c++)
        if (before(h, &h->entries[c], &h->entries[best])) best = c;
    return best;
}

static void sift_down(rl_timer_heap *h, size_t index) {
    rl_heap_entry e = h->entries[index];
    for (;;) {
        size_t best = earliest_child(h, index, h->count);
        if (best == index || !before(h, &h->entries[best], &e)) break;
        place(h, index, h->entries[best]);
        index = best;
    }
    place(h, index, e);
}

/* Room for one more element in an array of `count` elements of `size` bytes:
   a full one doubles (an empty one holds `first`). False, the array
   untouched, without memory. */
static bool reserve_one(void **array, size_t size, size_t count, size_t *capacity, size_t first) {
    if (count < *capacity) return true;
    size_t cap = *capacity ? *capacity * 2 : first;
    void *grown = realloc(*array, cap * size);
    if (!grown) return false;
    *array = grown;
    *capacity = cap;
    return true;
}

/* A free handle, growing the table if none is left; RL_HEAP_NO_HANDLE
   without memory (the heap untouched). */
static rl_heap_handle take_handle(rl_timer_heap *h) {
    if (h->free_handle == RL_HEAP_NO_HANDLE) {
        size_t old_cap = h->handle_capacity;
        if (old_cap >= RL_HEAP_NO_HANDLE / 2) return RL_HEAP_NO_HANDLE;
        size_t cap = old_cap ? old_cap * 2 : 16;
        /* Each array keeps what it grew to even if the other cannot grow. */
        uint32_t *positions = realloc(h->positions, cap * sizeof *positions);
        if (!positions) return RL_HEAP_NO_HANDLE;
        h->positions = positions;
        rl_heap_handle_info *info = realloc(h->info, cap * sizeof *info);
        if (!info) return RL_HEAP_NO_HANDLE;
        h->info = info;
        /* Chain the new handles, lowest first. */
        for (size_t i = old_cap; i < cap; i++) {
            h->info[i] = (rl_heap_handle_info){NULL, 0};
            h->positions[i] = i + 1 < cap ? (uint32_t)(i + 1) : RL_HEAP_NO_HANDLE;
        }
        h->free_handle = (uint32_t)old_cap;
        h->handle_capacity = (uint32_t)cap;
    }
    rl_heap_handle handle = h->free_handle;
    h->free_handle = h->positions[handle];
    return handle;
}

static void give_back_handle(rl_timer_heap *h, rl_heap_handle handle) {
    h->info[handle].item = NULL;
    h->positions[handle] = h->free_handle;
    h->free_handle = handle;
}

rl_heap_handle rl_heap_insert(rl_timer_heap *h, void *item, int64_t deadline_ns, uint64_t sequence) {
    if (h->handle_capacity == 0) h->free_handle = RL_HEAP_NO_HANDLE; /* a zeroed heap */
    void *entries = h->entries;
    if (!reserve_one(&entries, sizeof *h->entries, h->count, &h->capacity, 16)) return RL_HEAP_NO_HANDLE;
    h->entries = entries;
    rl_heap_handle handle = take_handle(h);
    if (handle == RL_HEAP_NO_HANDLE) return RL_HEAP_NO_HANDLE;
    h->info[handle] = (rl_heap_handle_info){item, sequence};
    h->entries[h->count] = (rl_heap_entry){deadline_ns, handle, 0};
    sift_up(h, h->count++);
    return handle;
}

/* Removal moves the hole left at the entry down to a leaf along the earliest
   children, then fills it with the last entry and sifts that up. The last
   entry almost always belongs near the bottom, so this saves the comparisons
   against it that a plain sift-down makes on every level (Floyd's trick). */
void rl_heap_remove(rl_timer_heap *h, rl_heap_handle handle) {
    size_t index = h->positions[handle];
    give_back_handle(h, handle);
    h->count--;
    if (index == h->count) return;
    rl_heap_entry last = h->entries[h->count];
    size_t hole = index;
    for (;;) {
        size_t best = earliest_child(h, hole, h->count);
        if (best == hole) break;
        place(h, hole, h->entries[best]);
        hole = best;
    }
    h->entries[hole] = last;
    sift_up(h, hole);
}

void rl_heap_update(rl_timer_heap *h, rl_heap_handle handle, int64_t deadline_ns, uint64_t sequence) {
    size_t index = h->positions[handle];
    rl_heap_key old = {h->entries[index].deadline_ns, h->info[handle].sequence, handle};
    rl_heap_key now = {deadline_ns, sequence, handle};
    h->entries[index].deadline_ns = deadline_ns;
    h->info[handle].sequence = sequence;
    if (rl_heap_key_before(&now, &old)) sift_up(h, index);
    else sift_down(h, index);
}

static inline void prefetch_items_of_children(const rl_timer_heap *h, size_t index) {
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        __builtin_prefetch(&h->info[h->entries[c].handle]);
}

const rl_heap_entry *rl_heap_second(const rl_timer_heap *h) {
    size_t best = earliest_child(h, 0, h->count);
    if (!best) return NULL;
    prefetch_items_of_children(h, 0);
    prefetch_items_of_children(h, best);
    return &h->entries[best];
}

void rl_heap_set_leeway(rl_timer_heap *h, rl_heap_handle handle, uint32_t leeway_ns) {
    h->entries[h->positions[handle]].leeway_ns = leeway_ns;
}

/* ---- collecting the due entries ----------------------------------------- */

static inline void swap_entries(rl_heap_key *a, rl_heap_key *b) {
    rl_heap_key tmp = *a;
    *a = *b;
    *b = tmp;
}

/* Binary max-heap (the latest key on top) of e[0..n), for heapsort and for
   keeping the earliest keys when the buffer cannot grow. */
static void sift_down_latest(rl_heap_key *e, size_t n, size_t i) {
    for (;;) {
        size_t largest = i, l = 2 * i + 1, r = l + 1;
        if (l < n && rl_heap_key_before(&e[largest], &e[l])) largest = l;
        if (r < n && rl_heap_key_before(&e[largest], &e[r])) largest = r;
        if (largest == i) return;
        swap_entries(&e[i], &e[largest]);
        i = largest;
    }
}

static void heapify_latest(rl_heap_key *e, size_t n) {
    for (size_t i = n / 2; i-- > 0;) sift_down_latest(e, n, i);
}

static void heapsort_values(rl_heap_key *e, size_t n) {
    if (n < 2) return;
    heapify_latest(e, n);
    for (size_t end = n - 1; end > 0; end--) {
        swap_entries(&e[0], &e[end]);
        sift_down_latest(e, end, 0);
    }
}

/* Introsort of distinct keys (sequences are unique): quicksort with a median
   of three, recursing into the smaller part, heapsort past a depth limit so
   the worst case stays O(n log n); insertion sort for short runs. */
static void sort_values(rl_heap_key *e, size_t n, unsigned depth_left) {
    while (n > 16) {
        if (depth_left-- == 0) {
            heapsort_values(e, n);
            return;
        }
        size_t mid = n / 2;
        if (rl_heap_key_before(&e[mid], &e[0])) swap_entries(&e[mid], &e[0]);
        if (rl_heap_key_before(&e[n - 1], &e[0])) swap_entries(&e[n - 1], &e[0]);
        if (rl_heap_key_before(&e[n - 1], &e[mid])) swap_entries(&e[n - 1], &e[mid]);
        rl_heap_key pivot = e[mid];
        size_t i = 0, j = n - 1;
        for (;;) {
            while (rl_heap_key_before(&e[i], &pivot)) i++;
            while (rl_heap_key_before(&pivot, &e[j])) j--;
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
        rl_heap_key x = e[i];
        size_t j = i;
        for (; j > 0 && rl_heap_key_before(&x, &e[j - 1]); j--) e[j] = e[j - 1];
        e[j] = x;
    }
}

bool rl_heap_key_buffer_reserve(rl_heap_key_buffer *keys, size_t count) {
    if (count <= keys->capacity) return true;
    rl_heap_key *grown = realloc(keys->items, count * sizeof *grown);
    if (!grown) return false;
    keys->items = grown;
    keys->capacity = count;
    return true;
}

/* One due entry into the buffer. Once the buffer cannot grow (`*full`), it
   is a max-heap of the earliest entries seen so far: an earlier one
   replaces its latest. */
static void keep_due(rl_heap_key_buffer *keys, const rl_heap_key *e, bool *full) {
    if (!*full) {
        void *items = keys->items;
        if (reserve_one(&items, sizeof *keys->items, keys->count, &keys->capacity, 64)) {
            keys->items = items;
            keys->items[keys->count++] = *e;
            return;
        }
        *full = true;
        heapify_latest(keys->items, keys->count);
    }
    if (keys->count && rl_heap_key_before(e, &keys->items[0])) {
        keys->items[0] = *e;
        sift_down_latest(keys->items, keys->count, 0);
    }
}

/* The due entries copied by value, so that sorting them reads one array in
   order: with a million timers due at once this is the difference between
   seconds and milliseconds. */
static void copy_due(const rl_timer_heap *h, size_t index, int64_t limit, rl_heap_key_buffer *keys, bool *full) {
    if (h->entries[index].deadline_ns > limit) return; /* children are no earlier */
    const rl_heap_entry *e = &h->entries[index];
    keep_due(keys, &(rl_heap_key){e->deadline_ns, h->info[e->handle].sequence, e->handle}, full);
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        copy_due(h, c, limit, keys, full);
}

bool rl_heap_collect_due(const rl_timer_heap *h, int64_t limit, rl_heap_key_buffer *keys) {
    keys->count = 0;
    bool full = false;
    if (h->count) copy_due(h, 0, limit, keys, &full);
    sort_values(keys->items, keys->count, 2 * 64);
    return !full;
}

/* ---- questions about the deadlines --------------------------------------- */

static void search_latest_date(const rl_timer_heap *h, size_t index, int64_t limit, int64_t *best) {
    const rl_heap_entry *e = &h->entries[index];
    if (e->deadline_ns > limit) return; /* children are no earlier */
    if (e->deadline_ns > *best) *best = e->deadline_ns;
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++)
        search_latest_date(h, c, limit, best);
}

int64_t rl_heap_latest_deadline_until(const rl_timer_heap *h, int64_t limit) {
    int64_t best = INT64_MIN;
    if (h->count) search_latest_date(h, 0, limit, &best);
    return best;
}

static inline int64_t saturating_add(int64_t a, int64_t b) {
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

typedef struct {
    int64_t floor_ns;
    int64_t (*tolerance_of)(const void *item);
    int64_t best;
} window_search;

static void search_latest(const rl_timer_heap *h, size_t index, window_search *s) {
    const rl_heap_entry *e = &h->entries[index];
    /* Every window is at least the floor, and children are no earlier. */
    if (saturating_add(e->deadline_ns, s->floor_ns) >= s->best) return;
    int64_t window = e->leeway_ns > s->floor_ns ? (int64_t)e->leeway_ns : s->floor_ns;
    if (s->tolerance_of) {
        int64_t tol = s->tolerance_of(h->info[e->handle].item);
        if (tol > window) window = tol;
    }
    int64_t latest = saturating_add(e->deadline_ns, window);
    if (latest < s->best) s->best = latest;
    for (size_t c = index * ARITY + 1; c < h->count && c <= index * ARITY + ARITY; c++) search_latest(h, c, s);
}

int64_t rl_heap_earliest_latest(const rl_timer_heap *h, int64_t floor_ns, int64_t (*tolerance_of)(const void *item)) {
    window_search s = {floor_ns > 0 ? floor_ns : 0, tolerance_of, INT64_MAX};
    if (h->count) search_latest(h, 0, &s);
    return s.best;
}

/* ---- lifetime and checking ----------------------------------------------- */

void rl_heap_key_buffer_free(rl_heap_key_buffer *keys) {
    free(keys->items);
    *keys = (rl_heap_key_buffer){0};
}

void rl_heap_free(rl_timer_heap *h) {
    free(h->entries);
    free(h->positions);
    free(h->info);
    *h = (rl_timer_heap){0};
}

const char *rl_heap_check(const rl_timer_heap *h) {
    if (h->count > h->capacity || h->count > h->handle_capacity) return "more entries than room";
    for (size_t i = 0; i < h->count; i++) {
        rl_heap_handle handle = h->entries[i].handle;
        if (handle >= h->handle_capacity) return "an entry's handle is out of range";
        if (h->positions[handle] != i) return "an entry's handle does not point back at it";
        if (i > 0 && before(h, &h->entries[i], &h->entries[(i - 1) / ARITY])) return "a child orders before its parent";
    }
    size_t free_count = 0;
    for (uint32_t f = h->handle_capacity ? h->free_handle : RL_HEAP_NO_HANDLE; f != RL_HEAP_NO_HANDLE;
         f = h->positions[f]) {
        if (f >= h->handle_capacity) return "the free list leaves the handle table";
        if (++free_count > h->handle_capacity - h->count) return "the free list is too long or loops";
        uint32_t p = h->positions[f];
        if (p < h->count && h->entries[p].handle == f) return "a handle in use is on the free list";
        if (h->info[f].item) return "a free handle still names an item";
    }
    if (free_count + h->count != h->handle_capacity) return "handles lost: neither in use nor free";
    return NULL;
}

void rl_heap_verify(const rl_timer_heap *h) {
    const char *broken = rl_heap_check(h);
    if (!broken) return;
    fprintf(stderr, "CRunLoop: timer heap invariant broken: %s\n", broken);
    abort();
}
