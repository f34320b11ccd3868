/*
 * rl_timer_heap.h: a 4-ary min-heap of opaque items keyed by (deadline,
 * sequence). It knows nothing of timers: it owns its entries and hands out a
 * handle per item, which the caller keeps to remove or re-key the item later.
 *
 * Layout: the entries hold the deadline and the handle only (16 bytes), so
 * sifting reads and writes one dense array and the heap's own position table,
 * never the caller's objects (libev caches the key beside the pointer for the
 * same reason; here not even the pointer is followed), and reads the
 * sequence beside the item only to order equal deadlines. Equal deadlines come out in
 * sequence order: the caller draws a fresh sequence for every insertion and
 * re-key, so ties fire in the order the items were (re)scheduled.
 *
 * Every function takes the heap's owner's lock (the caller's business); none
 * calls out. Out of memory only insertion (and collecting into a buffer that
 * cannot grow) can fail, and both say so.
 */
#ifndef RL_TIMER_HEAP_H
#define RL_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Names an item while it is in a heap; reused after it leaves. */
typedef uint32_t rl_heap_handle;
#define RL_HEAP_NO_HANDLE UINT32_MAX

/* 16 bytes: a family of four children fills one cache line. The sequence,
   needed only to order equal deadlines, lives with the item. */
typedef struct {
    int64_t deadline_ns;
    rl_heap_handle handle;
    uint32_t leeway_ns; /* how late after its deadline the item may still be taken (not part of the key) */
} rl_heap_entry;

/* Per handle in use: its item and its entry's sequence. */
typedef struct {
    void *item;
    uint64_t sequence;
} rl_heap_handle_info;

/* Per handle, in two arrays: where its entry is (or, free, the next free
   handle), written on every level a sift moves an entry, so 4 bytes a
   handle keep that table small enough to stay in cache; and its item and
   sequence, read when the caller asks and to order equal deadlines. */
typedef struct {
    rl_heap_entry *entries;
    size_t count;
    size_t capacity;
    uint32_t *positions;
    rl_heap_handle_info *info;
    uint32_t handle_capacity;
    uint32_t free_handle; /* head of the free handles, RL_HEAP_NO_HANDLE if none */
} rl_timer_heap;

/* An entry's whole key, by value. */
typedef struct {
    int64_t deadline_ns;
    uint64_t sequence;
    rl_heap_handle handle;
} rl_heap_key;

/* The timers' one order: by deadline, equal deadlines by sequence (the
   order of (re)insertion, so ties fire in it). */
static inline bool rl_heap_order_before(int64_t deadline_a, uint64_t sequence_a, int64_t deadline_b,
                                        uint64_t sequence_b) {
    return deadline_a < deadline_b || (deadline_a == deadline_b && sequence_a < sequence_b);
}
static inline bool rl_heap_key_before(const rl_heap_key *a, const rl_heap_key *b) {
    return rl_heap_order_before(a->deadline_ns, a->sequence, b->deadline_ns, b->sequence);
}

/* Scratch space for the keys of the due entries, reused from call to call. */
typedef struct {
    rl_heap_key *items;
    size_t count;
    size_t capacity;
} rl_heap_key_buffer;

/* Adds `item` with the key (deadline, sequence) and no leeway; returns its
   handle, or RL_HEAP_NO_HANDLE (the heap untouched) when out of memory. */
rl_heap_handle rl_heap_insert(rl_timer_heap *h, void *item, int64_t deadline_ns, uint64_t sequence);
/* Removes the entry of a handle the heap gave out and has not taken back;
   the handle is free again. */
void rl_heap_remove(rl_timer_heap *h, rl_heap_handle handle);
/* Gives a handle's entry a new key (a re-dated timer goes after the others of
   its deadline: the caller passes a fresh sequence). */
void rl_heap_update(rl_timer_heap *h, rl_heap_handle handle, int64_t deadline_ns, uint64_t sequence);
/* Sets how late after its deadline a handle's entry may be taken (it keeps
   that leeway until set again, re-keyed or not). */
void rl_heap_set_leeway(rl_timer_heap *h, rl_heap_handle handle, uint32_t leeway_ns);
static inline const rl_heap_entry *rl_heap_top(const rl_timer_heap *h) {
    return h->count ? &h->entries[0] : NULL;
}
/* The entry that becomes the top once the top leaves (the earliest of its
   children); NULL if there is none. It also starts loading the items of
   the entries that may come after it (its siblings and its children), so
   that a caller popping the top one at a time finds them in cache. */
const rl_heap_entry *rl_heap_second(const rl_timer_heap *h);
/* The entry of a handle that is in the heap (valid until the heap changes). */
static inline const rl_heap_entry *rl_heap_entry_of(const rl_timer_heap *h, rl_heap_handle handle) {
    return &h->entries[h->positions[handle]];
}
/* The sequence of a handle's entry. */
static inline uint64_t rl_heap_sequence_of(const rl_timer_heap *h, rl_heap_handle handle) {
    return h->info[handle].sequence;
}
/* The item of a handle that is in the heap. */
static inline void *rl_heap_item(const rl_timer_heap *h, rl_heap_handle handle) {
    return h->info[handle].item;
}
static inline size_t rl_heap_count(const rl_timer_heap *h) {
    return h->count;
}
/* The earliest end of a window over all entries (INT64_MAX if none), where an
   entry's window is deadline + the largest of `floor_ns`, its own leeway and
   its item's tolerance (ns; tolerance_of may be NULL: none). Visits only the
   entries whose deadline + floor is before the best end so far. */
int64_t rl_heap_earliest_latest(const rl_timer_heap *h, int64_t floor_ns, int64_t (*tolerance_of)(const void *item));
/* The latest deadline that is <= limit (INT64_MIN if none); visits only the
   entries due by `limit`. */
int64_t rl_heap_latest_deadline_until(const rl_timer_heap *h, int64_t limit);
/* Makes room in `keys` for `count` entries; false when out of memory. */
bool rl_heap_key_buffer_reserve(rl_heap_key_buffer *keys, size_t count);
/* Fills `keys` with the entries due by `limit` (deadline <= limit), sorted by
   key, the heap untouched. Returns false if the buffer could not grow to hold
   them all: it then holds the earliest that fit, still sorted (the rest stay
   due for a later call). */
bool rl_heap_collect_due(const rl_timer_heap *h, int64_t limit, rl_heap_key_buffer *keys);
void rl_heap_key_buffer_free(rl_heap_key_buffer *keys);
void rl_heap_free(rl_timer_heap *h);
/* Checks every invariant of the heap (order, positions, handles); returns
   NULL if they hold, else a static message naming the first broken one. */
const char *rl_heap_check(const rl_timer_heap *h);
/* rl_heap_check, aborting with its message if an invariant is broken. */
void rl_heap_verify(const rl_timer_heap *h);

#endif
