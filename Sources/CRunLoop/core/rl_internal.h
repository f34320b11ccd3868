/*
 * rl_internal.h: the structures of the core and the functions its files share.
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

/* ---- shared between files ------------------------------------------------ */
bool rl_mode_name_is_valid(RLRunLoopMode mode);
bool rl_mode_name_is_common(RLRunLoopMode mode);
rl_mode *rl_mode_find(RLRunLoopRef rl, RLRunLoopMode name);
rl_mode *rl_mode_find_or_create(RLRunLoopRef rl, RLRunLoopMode name);
/* The default mode named by its constant, told without a string comparison:
   most items are added to it, by that name. */
static inline bool rl_mode_name_is_default(RLRunLoopMode mode) {
    return mode == kRLRunLoopDefaultMode;
}
/* The default mode of a live loop: made first, with the loop. */
rl_mode *rl_mode_default(RLRunLoopRef rl);
/* Frees every mode of the loop and its table of them (the loop's finalization). */
void rl_modes_free(RLRunLoopRef rl);
bool rl_mode_is_empty(RLRunLoopRef rl, rl_mode *m);
bool rl_mode_has_blocks(RLRunLoopRef rl, rl_mode *m);
/* Arms the loop's timerfd for the mode's `deadline` (its rl_mode_next_deadline)
   if that changed; false when there is no timerfd (the wait must time out). */
bool rl_mode_arm(rl_mode *m, int64_t deadline);
/* The timers of a mode changed: re-arm now if another thread is changing the
   mode the loop is running in (its own thread re-arms before it sleeps). */
void rl_mode_timers_changed(rl_mode *m);
int64_t rl_mode_next_deadline(rl_mode *m);
/* When the mode's timers want the loop awake (rl_mode_next_deadline without
   a run's deadline); RL_NEVER without timers. */
int64_t rl_mode_timers_deadline(rl_mode *m);
/* Reads the calling thread's timer slack into the loop, once (its own thread). */
void rl_mode_read_timer_slack(RLRunLoopRef rl);

/* The main queue's source marks itself inert (draining) or live again (NULL):
   the process's main thread only, and only that thread reads it. */
static inline void rl_loop_set_main_queue_inert(RLRunLoopRef rl, RLRunLoopSourceRef source) {
    rl->main_queue_inert = source;
}

/* A pthread_mutex_* call on a loop's lock failed with `error`: prints the
   call and errno, the way rl_fatal_errno does, and aborts (rl_fatal.c). */
_Noreturn void rl_fatal_lock(const char *call, int error);
/* The loop's lock and which thread asks (rl_lock.c). Taken by the loop's own
   thread, it is rl_loop_relock. */
void rl_loop_lock(RLRunLoopRef rl);
/* The loop's own thread taking its lock back after a callout or the wait.
   Its wait is bounded: only the callers already queued for the lock go
   first (glibc mutexes are not fair; see rl_lock.c). */
void rl_loop_relock(RLRunLoopRef rl);
/* Once per pass, the loop's thread (holding its lock): callers queued for
   the lock have it first, then the loop's thread takes it back, so a busy
   loop cannot starve callers of the API. Nothing when none is queued. */
void rl_loop_let_callers_in(RLRunLoopRef rl);
/* A pause instruction for spin-waits. */
static inline void rl_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}
/* Unlocks, then finalizes whatever died under the lock. */
void rl_loop_unlock(RLRunLoopRef rl);
/* Releases obj while holding rl's lock: finalization waits for the unlock. */
void rl_loop_release_locked(RLRunLoopRef rl, const void *obj);
bool rl_loop_is_current_thread(RLRunLoopRef rl);
/* Whether the calling thread is the process's main thread (gettid == getpid),
   asked of the kernel once per thread. */
bool rl_on_process_main_thread(void);
/* (rl_scratch.c) The scratch space of the current depth (a pass collects the items it
   calls out into it), emptied; NULL when out of memory. */
rl_ptr_array *rl_scratch_items_locked(RLRunLoopRef rl);
/* Makes sure `depth` has scratch space for RL_SCRATCH_RESERVED items, so a
   pass with no more ready items than that never allocates: a loop gets it
   for its first run when made, a nested run before it starts. */
#define RL_SCRATCH_RESERVED 32
bool rl_scratch_reserve(RLRunLoopRef rl, size_t depth);
void rl_scratch_free(RLRunLoopRef rl); /* the loop's finalization */

void rl_source_add_to_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, rl_callback_list *scheduled);
bool rl_source_in_mode(RLRunLoopRef rl, const rl_mode *m, RLRunLoopSourceRef s);
/* Adds to a common mode the common items it lacks (an earlier add ran out of
   memory); clears common_incomplete once it has them all. Loop locked. */
void rl_mode_complete_common(RLRunLoopRef rl, rl_mode *m, rl_callback_list *scheduled);
bool rl_source_remove_from_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, rl_callback_list *cancelled);
bool rl_source_remove_common(RLRunLoopRef rl, RLRunLoopSourceRef s);

void rl_observer_add_to_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o);
bool rl_observer_remove_from_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o);
void rl_timer_add_to_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t);
bool rl_timer_remove_from_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t);
rl_timer_slot *rl_timer_slot_for_mode(RLRunLoopTimerRef t, rl_mode *m);
/* The calling depth's key buffer (rl_scratch_items_locked's companion). */
rl_heap_key_buffer *rl_scratch_timer_keys_locked(RLRunLoopRef rl);

/* Removes every item from the loop (thread exit). Loop locked. */
void rl_loop_remove_all_items(RLRunLoopRef rl, rl_callback_list *cancelled);
rl_block_queue rl_blocks_take_all(RLRunLoopRef rl);
void rl_blocks_dispose(rl_block_queue *taken); /* unlocked */
/* Queues fn(info) for `mode`; false if it was not queued (then dispose is the
   caller's to call). dispose(info) runs after fn, or when the item is dropped. */
bool rl_enqueue_block(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info, void (*dispose)(void *));
/* The same, saying why (rl_enqueue_block_status, rl_extras.h). */
void rl_blocks_free(RLRunLoopRef rl);

/* The steps of a pass; loop locked on entry and exit. */
void rl_do_observers(RLRunLoopRef rl, rl_mode *m, RLRunLoopActivity activity);    /* __CFRunLoopDoObservers */
bool rl_do_blocks(RLRunLoopRef rl, rl_mode *m);                                   /* __CFRunLoopDoBlocks */
bool rl_do_sources0(RLRunLoopRef rl, rl_mode *m, bool stop_after_one);            /* __CFRunLoopDoSources0 */
bool rl_do_timers(RLRunLoopRef rl, rl_mode *m);                                   /* __CFRunLoopDoTimers */
bool rl_do_source1(RLRunLoopRef rl, rl_mode *m, uint64_t token, uint32_t events); /* __CFRunLoopDoSource1 */
/* Whether an event's token still names a registration armed in the mode
   waited in, of a valid source: what rl_do_source1 would perform. */
bool rl_source1_token_is_live(RLRunLoopRef rl, uint64_t token);

/* Descriptions of the parts of a loop. */
char *rl_source_copy_description(const rl_object *obj);
char *rl_observer_copy_description(const rl_object *obj);
char *rl_timer_copy_description(const rl_object *obj);
char *rl_loop_copy_description(const rl_object *obj);

/* The loop's wait set (rl_wait_set.c): the epoll set, the wake eventfd and
   the version-1 sources' registrations; loop locked unless said otherwise. */
bool rl_wait_set_open(RLRunLoopRef rl); /* at creation: epoll set + wake eventfd */
void rl_wait_set_close(RLRunLoopRef rl);
/* In a forked child, replaces the inherited kernel objects (the parent's)
   by the child's own; nothing otherwise. */
void rl_wait_set_own_kernel_objects_locked(RLRunLoopRef rl);
/* Whether the loop's kernel objects are still the parent's (made before a
   fork, not remade since). Any thread, no lock. */
bool rl_wait_set_inherited(RLRunLoopRef rl);
/* Joins a descriptor the loop just made for itself (the timerfd) to its set,
   readable and edge-triggered, its events tagged `data`; a registration
   under that number, for a file closed behind its source's back, is
   forgotten first. False only out of memory or room (ENOMEM, ENOSPC);
   anything else is fatal, naming `object`. */
bool rl_wait_set_join_own(RLRunLoopRef rl, int fd, uint64_t data, const char *object);
/* Before a wait in m: remakes the kernel objects if the process forked,
   rebuilds a stale set, arms exactly m's version-1 sources. */
void rl_wait_set_prepare_locked(RLRunLoopRef rl, rl_mode *m);
/* The source's registration in this loop, -1 if none. */
long rl_wait_set_reg_find_locked(RLRunLoopRef rl, RLRunLoopSourceRef s);
/* Registers `s` watching `fd` (unwatched if fd < 0 or epoll refuses it),
   armed if `armed`; -1 when out of memory (or epoll is: ENOMEM, ENOSPC). */
long rl_wait_set_reg_add_locked(RLRunLoopRef rl, RLRunLoopSourceRef s, int fd, bool armed);
void rl_wait_set_reg_remove_locked(RLRunLoopRef rl, long index);
/* The armed mode gained or lost the registration's source. */
void rl_wait_set_reg_set_armed_locked(RLRunLoopRef rl, long index, bool armed);
/* The source's watched events changed: apply them; true if the loop must be
   woken (it may sleep, and the registration is now always ready). */
bool rl_wait_set_reg_refresh_locked(RLRunLoopRef rl, long index);
/* Appends, for the always-ready registrations of m, the events they report
   (after a wait, so perform is called for them); returns the new count. */
int rl_wait_set_add_ready_locked(RLRunLoopRef rl, rl_mode *m, struct epoll_event *events, int n, int max);

/* The sleep/wake handshake and the timerfd (rl_wait.c); loop locked unless
   said otherwise. */
/* Arms the timerfd for `deadline` (RL_NEVER disarms) if that changed; false
   when the loop has no timerfd (then the wait itself must time out). Only a
   deadline the kernel accepted is recorded, so a failed arm (no timerfd
   could be made or joined to the set: out of descriptors or memory) is
   tried again by the next call. */
bool rl_wait_arm_timer(RLRunLoopRef rl, int64_t deadline);
/* The loop's thread, before a sleep in a mode until `deadline`: when its
   last sleep was a quick conversation with another thread, waits a little
   awake for the answer (the lock dropped meanwhile: the caller computes its
   deadline again unless skipped). */
typedef enum { RL_SPIN_SKIPPED, RL_SPIN_ANSWERED, RL_SPIN_UNANSWERED } rl_spin_result;
rl_spin_result rl_wait_spin(RLRunLoopRef rl, int64_t deadline);
/* After an answered spin, instead of a poll: consumes the wake-up (locked). */
void rl_wait_take_wake_up(RLRunLoopRef rl);
/* The loop's thread sleeps (or polls, if `poll`) in m until `deadline`, an
   event of m's version-1 sources or a wake-up; fills `events` (at most
   `max`), returns their count. Locked on entry and exit, not while asleep;
   returns with `sleeping` off and pending wake-ups consumed (CF's
   SetIgnoreWakeUps: the next pass re-scans everything anyway). */
int rl_wait_sleep(RLRunLoopRef rl, rl_mode *m, bool poll, int64_t deadline, struct epoll_event *events, int max);
/* Writes the wake eventfd of a sleeping loop. Any thread, no lock. */
void rl_wait_signal(RLRunLoopRef rl);
/* Waits (timeout_ms as epoll_wait's) for events of the armed mode. Called
   unlocked by the loop's thread, after rl_wait_set_prepare_locked. Returns the number
   of events, or -1 with errno EINTR (a signal: the caller resumes); any
   other failure is a broken set and fatal. */
int rl_wait_events(RLRunLoopRef rl, struct epoll_event *events, int max, int timeout_ms);

/* A manual clock's part of a pass (rl_clock.c); loop locked, its own
   thread. Where a real loop would sleep (or poll) in m, moves the loop's
   time toward the clock's (to the mode's next wake-up if that comes first,
   and no further than `run_deadline`), then polls the mode's descriptors
   into `events` (at most `max`; *count of them) and takes any pending
   wake-up. Returns whether the pass found nothing (unless `poll`): nothing
   due, no descriptor ready, no wake-up, and the loop's time has caught up
   with the clock's: a real loop would sleep with nothing to end its sleep
   but time, which only the program moves. */
bool rl_clock_wait(RLRunLoopRef rl, rl_mode *m, bool poll, int64_t run_deadline, struct epoll_event *events, int max,
                   int *count);
/* The loop's finalization: frees its clock and listeners. */
void rl_clock_free(RLRunLoopRef rl);
/* Re-dates every scheduled timer of the loop for the clock it now runs on,
   keeping their order (rl_timer.c); false, nothing changed, when out of
   memory. Loop locked, no run active. */
bool rl_timers_reconvert(RLRunLoopRef rl);

/* The embedding descriptor's side of the wait set (rl_embed_fd.c); loop locked.
   init/close: with the wait set; detach: the wait set is about to be
   closed; attach: a new wait set was made; after_fork: in a child, before
   its wait set is remade. */
void rl_embed_fd_init_locked(RLRunLoopRef rl);
void rl_embed_fd_close_locked(RLRunLoopRef rl);
void rl_embed_fd_detach_locked(RLRunLoopRef rl);
void rl_embed_fd_attach_locked(RLRunLoopRef rl);
void rl_embed_fd_after_fork_locked(RLRunLoopRef rl);
/* Before a host sleeps on the embedding descriptor: aborts (rl_fatal_errno)
   if its number no longer names the loop's embedding set. */
void rl_embed_fd_check_locked(RLRunLoopRef rl);
/* A host sleeps on the embedding descriptor for mode m (timer changes made
   by other threads must re-arm the timerfd, as for a loop asleep in m). */
bool rl_embed_fd_waits_in_locked(RLRunLoopRef rl, rl_mode *m);
/* The embedding descriptor, made (and joined by the wait set) on first ask;
   -1 if it cannot be made. */
int rl_embed_fd_open_locked(RLRunLoopRef rl);
/* A host is about to sleep on the descriptor for m / the loop waits by
   itself again / the host gave up its wait. */
void rl_embed_fd_wait_in_locked(RLRunLoopRef rl, rl_mode *m);
void rl_embed_fd_stop_waiting_locked(RLRunLoopRef rl);
void rl_embed_fd_cancel_locked(RLRunLoopRef rl);
/* Whether the host's descriptor holds the wait set (or there is none yet). */
bool rl_embed_fd_holds_wait_set_locked(RLRunLoopRef rl);

/* Statistics and probes at the points of a pass. */
#include "rl_trace.h"

#endif
