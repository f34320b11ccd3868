/*
 * rl_internal.h: the core's shared structures: the loop, composed of one
 * part per file that owns it (wait set, wait and spin, blocks, timers,
 * signal inbox, embedding: each touched by its own file), its modes, runs
 * and items. What each file lends the others is declared in that file's
 * own header (rl_<file>.h), included at the end of this one.
 *
 * Names: a function named rl_<concept>_... is defined in rl_<concept>.c
 * (Tests/layers/check.py enforces it); a name ending in `_locked` expects
 * the loop's lock held by its caller. (Older names without the suffix say
 * their lock in their comment.) No inline function here or in those
 * headers calls a function of a file above the core's lowest files: an
 * inline function is its includers' code (check-layers counts it so).
 *
 * Locking (never broken): a run loop's `lock` guards the loop, its modes, its
 * block queue and the membership fields of every item while the item is in
 * that loop. Each item also has a small `lock` of its own, always taken after
 * (inside) a loop's lock, never before: it guards which loops the item is in,
 * and the fields other threads read without knowing the loop. No lock is held
 * across a callout into user code; every callout holds a reference to the
 * object it calls out for.
 *
 * Items do not retain the loops they are in: a loop removes every item (under
 * the item's lock) before it dies, so a loop seen in an item's membership
 * under that item's lock is alive and may be retained.
 */
#ifndef RL_INTERNAL_H
#define RL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/epoll.h>
#include "CRunLoop.h"
#include "rl_extras.h" /* what the extras may use too: objects, clocks */
#include "rl_callout.h"
#include "rl_timer_heap.h"
#include "rl_stats.h"
#include "rl_callback_list.h"

typedef struct rl_mode rl_mode;
typedef struct rl_run rl_run;
typedef struct rl_block rl_block;

/* A loop's manual clock (rl_clock.c): the loop's time and the clock's, in ns
   since 2001 (a date times 1e9: the frame of a manual loop's deadlines). The
   loop's time moves up to the clock's as its runs wait (or at once, for an
   advance made in one of its callouts). Written under the loop's lock. */
typedef struct {
    _Atomic int64_t now;    /* the loop's time: what its timers and runs are measured against */
    _Atomic int64_t target; /* the clock's time: advances move it; never behind `now` */
} rl_manual_clock;
typedef struct rl_clock_listeners rl_clock_listeners;

/* A growable array of pointers. */
typedef struct {
    void **items;
    size_t count;
    size_t capacity;
} rl_ptr_array;

bool rl_ptr_array_reserve(rl_ptr_array *a, size_t capacity);
bool rl_ptr_array_insert(rl_ptr_array *a, size_t index, void *item);
bool rl_ptr_array_append(rl_ptr_array *a, void *item);
void rl_ptr_array_remove_at(rl_ptr_array *a, size_t index);
long rl_ptr_array_index_of(const rl_ptr_array *a, const void *item); /* -1 when absent */
bool rl_ptr_array_remove(rl_ptr_array *a, const void *item);         /* first occurrence */
void rl_ptr_array_free(rl_ptr_array *a);

/* An ordered set of items (rl_item_set.c): walked by order, then in the
   order added; add O(log n) expected, remove O(log n) expected, contains
   O(1). Walk it with rl_item_set_first / node->next[0]. */
#define RL_ITEM_SET_LEVELS 16
typedef struct rl_item_node rl_item_node;
struct rl_item_node {
    void *item;
    RLIndex order;
    uint64_t seq; /* order among equal orders */
    unsigned levels;
    rl_item_node *next[]; /* one per level */
};
typedef struct {
    rl_item_node *head[RL_ITEM_SET_LEVELS];
    size_t count;
    uint64_t next_seq;
    uint64_t rng;          /* node heights */
    rl_item_node **table;  /* item -> node, open addressing */
    size_t table_capacity; /* 0 or a power of two */
} rl_item_set;

/* false if the item is already there (nothing changes) or out of memory. */
bool rl_item_set_insert(rl_item_set *s, void *item, RLIndex order);
bool rl_item_set_remove(rl_item_set *s, const void *item);
bool rl_item_set_contains(const rl_item_set *s, const void *item);
rl_item_node *rl_item_set_find(const rl_item_set *s, const void *item); /* NULL when absent */
void rl_item_set_free(rl_item_set *s);
static inline rl_item_node *rl_item_set_first(const rl_item_set *s) {
    return s->head[0];
}
#define RL_ITEM_SET_FOREACH(node, set) for (rl_item_node *node = (set)->head[0]; node; node = node->next[0])

/* A map from a key (a pointer, or a small number plus one; never 0) to a
   32-bit index: O(1) expected put, get and delete (rl_item_set.c). */
typedef struct {
    uintptr_t key; /* 0: empty */
    uint32_t value;
} rl_index_map_entry;
typedef struct {
    rl_index_map_entry *entries;
    size_t count;
    size_t capacity; /* 0 or a power of two, at most half full */
} rl_index_map;
bool rl_index_map_reserve(rl_index_map *m, size_t count);              /* room for `count` keys */
bool rl_index_map_put(rl_index_map *m, uintptr_t key, uint32_t value); /* false: out of memory */
long rl_index_map_get(const rl_index_map *m, uintptr_t key);           /* -1 when absent */
void rl_index_map_delete(rl_index_map *m, uintptr_t key);
void rl_index_map_free(rl_index_map *m);

/* ---- version-1 registrations in the loop's wait set ---------------------- */
/* epoll data: (generation << 32) | registration index; reserved values for
   the loop's own descriptors and for disarmed registrations. A stale event
   (registration re-armed, reused or freed since) fails the generation check
   and is dropped. */
#define RL_EVENT_WAKE     UINT64_MAX
#define RL_EVENT_TIMER    (UINT64_MAX - 1)
#define RL_EVENT_DISARMED (UINT64_MAX - 2)

/* One per version-1 source per loop, shared by the loop's modes that hold
   the source. It is in the loop's epoll set from the first of those modes
   to the last, and armed only while the mode being waited in holds it. */
typedef struct {
    RLRunLoopSourceRef source; /* NULL when the entry is free */
    int fd;                    /* the number registered; -1: not in the set */
    int number;                /* the fd the source named (also when not in the set) */
    bool active;               /* the armed mode holds it */
    bool always_ready;         /* a closed or unpollable fd of a source that set its events */
    bool awaits_set;           /* no epoll set, or no room in it, when registered: retried */
    uint32_t armed;            /* epoll events armed (or reported, if always_ready); 0: none */
    uint32_t generation;
    uint32_t modes; /* how many of the loop's modes hold it */
    uint64_t mark;  /* bookkeeping of a mode switch */
    int32_t next_free;
} rl_v1_reg;

/* ---- signalled version-0 sources (rl_signal_inbox.c) ---------------------- */
typedef struct rl_signal_link rl_signal_link;
/* A loop's part: the links of its sources signalled since they were
   performed. Only rl_signal_inbox.c touches it. */
typedef struct {
    _Atomic(rl_signal_link *) pushed; /* links pushed by signals since the last pass (a stack) */
    rl_ptr_array signalled;           /* links taken from `pushed`, kept while their source is signalled */
    size_t links;                     /* links of this loop: `signalled` has room for all of them */
} rl_signal_inbox;

/* ---- modes --------------------------------------------------------------- */
struct rl_mode {
    char *name;
    uint64_t name_hash;
    RLRunLoopRef rl; /* owner; modes live as long as it */
    bool is_common;
    int64_t run_deadline_ns; /* innermost run of this mode; RL_NEVER = none */
    rl_item_set sources0;    /* retained, by order, ties in insertion order */
    uint32_t *v1;            /* its version-1 sources: indices into the loop's regs */
    uint32_t v1_count;
    uint32_t v1_capacity;
    rl_index_map v1_positions;          /* source -> its place in v1 */
    rl_item_set observers;              /* retained, by order, ties in insertion order */
    RLOptionFlags observer_mask;        /* union of activities ever added (CF never shrinks it) */
    rl_timer_heap timers;               /* scheduled, not currently firing */
    struct rl_timer_pass *timer_passes; /* the passes firing its timers, innermost first (rl_timer.c) */
    struct rl_timer_slot **firing;      /* its slots out of the heap while their timer's callout runs */
    uint32_t firing_count;              /* of those listed (rl_timer.c) */
    uint32_t firing_capacity;           /* room in `firing` */
    size_t timer_count;                 /* memberships, including firing timers */
    size_t tolerant_timers;             /* memberships with tolerance > 0 */
    size_t pending_blocks;              /* queued blocks for exactly this mode */
    bool common_incomplete;             /* a common item could not join it (out of memory): retried before a pass */
};

/* ---- runs (one per active RLRunLoopRunInMode, on its C stack) ------------- */
struct rl_run {
    rl_run *outer;
    rl_mode *mode;
    uint8_t stopped; /* RL_RUN_STOP_ASKED, RL_RUN_IDLE: the exit checks look at both with one test */
    bool polling;    /* seconds <= 0: exactly one pass */
    int64_t deadline_ns;
};

#define RL_RUN_STOP_ASKED 1u /* RLRunLoopStop */
#define RL_RUN_IDLE       2u /* a manual clock's wait found nothing to do (rl_clock_wait) */

/* ---- queued functions and blocks ----------------------------------------- */
struct rl_block {
    rl_mode *mode; /* NULL: the common modes */
    union {
        void (*fn)(void *info);
        void (*payload_fn)(void *payload, bool run); /* RLRunLoopPerformPayload */
    } call;
    union {
        struct {
            void *info;
            void (*dispose)(void *info); /* for blocks: releases the copy */
        } object;
        void *payload[2]; /* RLRunLoopPerformPayload's copy */
    } data;
    /* Twice the order of queueing (per loop), plus 1 for an item with a
       payload: one bit rather than a field keeps an item at 40 bytes. */
    uint64_t sequence;
};

/* A FIFO of blocks in one array: appending never allocates once it has grown. */
typedef struct {
    rl_block *items;
    size_t count;
    size_t capacity;
} rl_block_queue;

/* Per-depth scratch space, so a pass collects without allocating. */
typedef struct {
    rl_ptr_array items;
    rl_heap_key_buffer timer_keys; /* the due timers' keys, sorted by value */
} rl_scratch;

/* A loop's embedding in a host's event loop (rl_embed.c); only rl_embed_fd.c
   touches it. */
typedef struct {
    int fd;        /* the embedding descriptor; -1 until asked for */
    bool attached; /* the wait set is in `fd` (not: out of memory; retried) */
    rl_mode *mode; /* the mode a host last prepared for */
    bool waiting;  /* a host sleeps on `fd` for `mode` */
} rl_embedding;

/* ---- the run loop -------------------------------------------------------- */
/* A loop's wait set (rl_wait_set.c): the epoll set, the wake eventfd and the
   version-1 sources' registrations. */
typedef struct {
    int wake_fd;                      /* eventfd, edge-triggered in epoll_fd, never read */
    int epoll_fd;                     /* the wait set: wake_fd, timer_fd, version-1 fds */
    bool set_stale;                   /* epoll_fd may hold a registration of a closed fd: rebuild it */
    bool regs_awaiting;               /* a registration found no room in epoll: retry before waiting */
    _Atomic unsigned fork_generation; /* the process image the kernel objects were made in */
    rl_mode *armed_mode;              /* whose version-1 sources are armed in epoll_fd */
    uint64_t arm_epoch;               /* marks of a mode switch */
    rl_v1_reg *regs;
    uint32_t reg_capacity;
    int32_t reg_free;
    rl_index_map reg_by_source; /* source -> its registration */
    rl_index_map reg_by_fd;     /* fd + 1 -> the registration watching that number */
    uint32_t ready_regs;        /* always-ready registrations with events: never sleep */
} rl_wait_set_state;

/* A loop's sleep and wake-up (rl_wait.c): the handshake with wakers, the
   timerfd, and the spin before a sleep. */
typedef struct {
    _Atomic bool sleeping;
    _Atomic bool wake_pending;
    int timer_fd;             /* -1 until a run needs a deadline, or if none can be made */
    int64_t armed_ns;         /* what timer_fd is armed for; RL_NEVER = disarmed */
    bool multiprocessor;      /* spinning can help: another CPU may answer */
    int64_t last_sleep_ns;    /* how long the last sleep lasted, if a wake-up ended it */
    uint32_t spin_backoff;    /* short sleeps to skip spinning after the last failed spin */
    uint32_t spin_skips_left; /* of those, still to skip */
    int64_t polled_at_ns;     /* when an answered spin last polled the descriptors (rl_run.c) */
    uint32_t unpolled_spins;  /* answered spins since then (rl_run.c) */
} rl_wait_state;

/* A loop's queued blocks (rl_blocks.c). */
typedef struct {
    rl_block_queue queue;
    rl_block_queue spare;  /* an emptied queue kept for reuse */
    size_t pending_common; /* queued for the common modes */
    uint64_t sequence;     /* the next queued block's sequence */
} rl_blocks_state;

/* A loop's timers beyond its modes' heaps (rl_timer.c, rl_timer_fire.c). */
typedef struct {
    uint64_t sequence; /* order of heap (re)insertions: ties fire in it */
    int64_t slack_ns;  /* the loop thread's timer slack: timers that close share a wake-up; -1 unread */
    bool went_last;    /* the last pass handled timers: a ready source goes first in the next (rl_run.c) */
} rl_timers_state;

struct __RLRunLoop {
    rl_object base;
    pthread_mutex_t lock;
    pthread_t thread;
    bool is_main;
    bool main_queue_attached;
    int64_t main_queue_next_try_ns;      /* when to look for libdispatch again */
    RLRunLoopSourceRef main_queue_inert; /* the main queue's source while the process's main thread drains
                                             the queue (it does not count then); that thread's only */
    bool dead;                           /* its thread has exited */
    rl_wait_state wait;                  /* rl_wait.c */
    rl_wait_set_state wait_set;          /* rl_wait_set.c */
    rl_mode **modes;
    size_t mode_count;
    size_t mode_capacity;
    /* The modes by name (rl_mode.c): open addressing, at most half full, 0 or a power of two entries. */
    rl_mode **mode_table;
    size_t mode_table_capacity;
    rl_run *current_run; /* innermost */
    unsigned depth;
    uint64_t run_generation;      /* bumped by every run entry */
    rl_timers_state timers;       /* rl_timer.c */
    rl_item_set common_sources;   /* retained, in the order added */
    rl_item_set common_observers; /* retained, in the order added */
    rl_item_set common_timers;    /* retained, in the order added */
    rl_blocks_state blocks;       /* rl_blocks.c */
    uint64_t observer_round;      /* bumped by every rl_do_observers */
    rl_scratch *scratch;
    size_t scratch_depths;
    rl_object *graveyard;          /* released under the lock, finalized after */
    _Atomic unsigned lock_waiters; /* API callers waiting for `lock` */
    _Atomic unsigned owner_waits;  /* the loop's thread waits for `lock` (rl_lock.c): callers hold back */
    uint64_t removals;             /* bumped when any item leaves any mode */
    rl_signal_inbox inbox;         /* its signalled version-0 sources (rl_signal_inbox.c) */
    rl_embedding embed;            /* a host's descriptor (rl_embed_fd.c's alone) */
    rl_loop_stats stats;           /* RLRunLoopCopyStatistics (rl_stats.h) */
    /* The manual clock the loop runs on (rl_clock.c); NULL: real time. Set
       and cleared by the loop's own thread under the lock; other threads
       load it (acquire) and read its atomics. */
    _Atomic(rl_manual_clock *) clock;
    rl_manual_clock *clock_memory; /* made on the first switch, freed with the loop: a stale `clock` stays readable */
    rl_clock_listeners *clock_listeners; /* told when a callout's advance moves the loop's time (rl_clock.c) */
};

/* The loop's manual clock, NULL on real time (rl_clock.c). */
static inline rl_manual_clock *rl_loop_manual_clock(RLRunLoopRef rl) {
    return atomic_load_explicit(&rl->clock, memory_order_acquire);
}
/* The loop's now in the frame of its deadlines: CLOCK_MONOTONIC ns on real
   time, the manual clock's reading (ns since 2001) otherwise. One branch,
   never taken on real time. */
static inline int64_t rl_loop_now(RLRunLoopRef rl) {
    rl_manual_clock *c = rl_loop_manual_clock(rl);
    if (__builtin_expect(c != NULL, 0)) return atomic_load_explicit(&c->now, memory_order_relaxed);
    return rl_mono_now();
}
/* The same, from the coarse clock on real time (rl_mono_coarse_now). */
static inline int64_t rl_loop_coarse_now(RLRunLoopRef rl) {
    rl_manual_clock *c = rl_loop_manual_clock(rl);
    if (__builtin_expect(c != NULL, 0)) return atomic_load_explicit(&c->now, memory_order_relaxed);
    return rl_mono_coarse_now();
}
/* The loop's time as a date: the wall clock on real time. */
static inline RLAbsoluteTime rl_loop_date_now(RLRunLoopRef rl) {
    rl_manual_clock *c = rl_loop_manual_clock(rl);
    if (c) return (double)atomic_load_explicit(&c->now, memory_order_relaxed) / 1e9;
    return RLAbsoluteTimeGetCurrent();
}
/* The deadline of `date` for the loop, `now` being rl_loop_coarse_now(rl). */
static inline int64_t rl_loop_deadline_for_date(RLRunLoopRef rl, RLAbsoluteTime date, int64_t now) {
    if (__builtin_expect(rl_loop_manual_clock(rl) != NULL, 0)) return rl_manual_deadline_for_date(date, now);
    return rl_deadline_for_date_at(date, now);
}

/* ---- sources ------------------------------------------------------------- */
struct __RLRunLoopSource {
    rl_object base;
    rl_item_lock lock;
    RLIndex order;
    _Atomic bool valid;
    _Atomic bool signalled;
    _Atomic int64_t signalled_at; /* version 0: when it last went from unsignalled to signalled (rl_mono_now) */
    RLIndex version;
    _Atomic uint32_t watch_events; /* version 1: epoll events watched for (EPOLLIN unless set) */
    _Atomic bool explicit_events;  /* version 1: set them itself: poll()'s answers for bad fds */
    union {
        RLRunLoopSourceContext v0;
        RLRunLoopSourceContext1 v1;
    } context;
    rl_ptr_array loops;            /* one entry per membership: mode or common set (a bag) */
    rl_ptr_array signal_links;     /* version 0: its rl_signal_link in each loop that holds it */
    _Atomic size_t unqueued_links; /* of those, how many are not queued (see rl_source.c) */
};

/* ---- observers ----------------------------------------------------------- */
struct __RLRunLoopObserver {
    rl_object base;
    rl_item_lock lock;
    RLOptionFlags activities;
    bool repeats;
    _Atomic bool firing; /* its callout is running (on whichever loop) */
    bool info_released;
    bool release_after_firing; /* invalidated mid-callout; under the observer's lock */
    _Atomic bool valid;
    RLIndex order;
    RLRunLoopObserverCallBack callout;
    RLRunLoopObserverContext context;
    RLRunLoopRef rl;         /* while in a loop */
    RLRunLoopRef round_loop; /* the loop and round of its last collection, */
    uint64_t round;          /* under that loop's lock (rl_do_observers) */
    size_t memberships;      /* modes + common set */
    void *block;             /* CreateWithHandler's block copy */
};

/* ---- timers -------------------------------------------------------------- */
typedef struct rl_timer_slot {
    rl_mode *mode;              /* NULL: the timer's own slot, unused */
    rl_heap_handle heap_handle; /* its entry in the mode's heap; RL_HEAP_NO_HANDLE while
                                                  the timer is firing (scheduled after its callout) */
    bool is_own;                /* the slot inside the timer, else an rl_timer_more_slot */
} rl_timer_slot;

/* A slot beyond the timer's own, malloc'd: it names its timer, which the
   timer's own slot need not (rl_timer_slot_timer), 8 bytes less per timer. */
typedef struct {
    rl_timer_slot slot;
    RLRunLoopTimerRef timer;
} rl_timer_more_slot;

/* What most timers never use, made on first need: the context's functions,
   the order, a tolerance, slots in more modes than one, a repeating timer's
   interval (made with the timer). Kept out of the timer so that a million
   timers touch (and the kernel zeroes) less memory: a timer is 88 bytes, one
   96-byte malloc chunk (it was 216). */
typedef struct {
    RLTimeInterval interval; /* > 0: it repeats; set at creation, never changed */
    RLIndex context_version;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copy_description)(const void *info);
    bool info_released; /* only a context with a release has anything to release */
    RLIndex order;
    RLTimeInterval tolerance;
    int64_t tolerance_ns;
    rl_timer_slot **more_slots; /* slots beyond the timer's own, rl_timer_more_slot each */
    size_t more_count;
    size_t more_capacity;
} rl_timer_extra;

struct __RLRunLoopTimer {
    rl_object base;
    rl_item_lock lock;
    _Atomic bool valid;
    bool firing;               /* its callout is running; under the timer's lock */
    bool release_after_firing; /* invalidated mid-callout; under the timer's lock */
    bool in_common;
    RLAbsoluteTime fire_date; /* as given, or moved along the grid */
    int64_t fire_ns;          /* its deadline */
    RLRunLoopTimerCallBack callout;
    void *info;
    RLRunLoopRef rl; /* while in a loop */
    /* Set once, from NULL, with the timer's lock (and its loop's, if any)
       held; never freed before the timer. */
    _Atomic(rl_timer_extra *) extra;
    rl_timer_slot slot; /* its first mode's: most timers are in one */
};

/* The timer a slot belongs to. */
static inline RLRunLoopTimerRef rl_timer_slot_timer(const rl_timer_slot *slot) {
    if (slot->is_own) return (RLRunLoopTimerRef)((uintptr_t)slot - offsetof(struct __RLRunLoopTimer, slot));
    return ((const rl_timer_more_slot *)slot)->timer;
}

static inline rl_timer_extra *rl_timer_extra_of(RLRunLoopTimerRef t) {
    return atomic_load_explicit(&t->extra, memory_order_acquire);
}
/* How many modes hold the timer. Timer locked (or its loop). */
static inline size_t rl_timer_slot_count(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return (t->slot.mode != NULL) + (x ? x->more_count : 0);
}
/* 0: a one-shot timer. */
static inline RLTimeInterval rl_timer_interval(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return x ? x->interval : 0;
}
static inline int64_t rl_timer_tolerance_ns(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return x ? x->tolerance_ns : 0;
}
static inline RLTimeInterval rl_timer_tolerance(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    return x ? x->tolerance : 0;
}

/* What each file of the core lends the others, in its own header. */
#include "rl_mode.h"
#include "rl_loop.h"
#include "rl_fatal.h"
#include "rl_lock.h"
#include "rl_scratch.h"
#include "rl_source.h"
#include "rl_observer.h"
#include "rl_timer.h"
#include "rl_blocks.h"
#include "rl_description.h"
#include "rl_wait_set.h"
#include "rl_wait.h"
#include "rl_clock.h"
#include "rl_embed_fd.h"

/* Statistics and probes at the points of a pass. */
#include "rl_trace.h"

#endif
