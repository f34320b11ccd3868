/*
 * rl_internal.h: the core's shared structures: the loop, composed of one
 * part per file that owns it (wait set, wait and spin, blocks, timers,
 * signal inbox, embedding: each touched by its own file), its modes and
 * runs. The items' structs and what each file lends the others are in that
 * file's own header (rl_<file>.h), included at the end of this one.
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
#include "rl_item_set.h"

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
