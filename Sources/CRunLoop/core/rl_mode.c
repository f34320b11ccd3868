/*
 * rl_mode.c: modes by name (a hash table per loop), their wait set,
 * emptiness and timer arming.
 *
 * A mode holds no descriptor: the loop's one wait set arms the version-1
 * sources of the mode being waited in, and its one timerfd is armed for that
 * mode's deadline (rl_wait.c), so fds and timers of other modes never wake a
 * loop running this one. Modes live as long as their loop, as in CF.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "rl_internal.h"

/* CF's own names, so a mode name means the same to both. */
const RLRunLoopMode kRLRunLoopDefaultMode = "kCFRunLoopDefaultMode";
const RLRunLoopMode kRLRunLoopCommonModes = "kCFRunLoopCommonModes";

bool rl_mode_name_is_valid(RLRunLoopMode mode) {
    return mode && mode[0] != '\0';
}

/* strcmp, with the first character compared inline: most names differ there. */
static inline bool same_name(const char *a, const char *b) {
    return a[0] == b[0] && strcmp(a, b) == 0;
}

bool rl_mode_name_is_common(RLRunLoopMode mode) {
    if (mode == kRLRunLoopDefaultMode) return false;
    return mode == kRLRunLoopCommonModes || same_name(mode, kRLRunLoopCommonModes);
}

/* ---- modes by name ------------------------------------------------------
   CF finds a mode in a set hashed by name; so does this table: open
   addressing with linear probing, at most half full, each mode keeping its
   name's hash so probes compare names only when hashes agree. Modes are never
   removed (they live as long as their loop), so there are no tombstones. The
   default mode, made first, is also modes[0]: named by its constant, it is
   found without hashing. */

/* FNV-1a, 64 bits. */
static uint64_t hash_name(const char *name) {
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 0x100000001b3u;
    return h;
}

static rl_mode *lookup(RLRunLoopRef rl, RLRunLoopMode name, uint64_t hash) {
    if (!rl->mode_table_capacity) return NULL;
    size_t mask = rl->mode_table_capacity - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        rl_mode *m = rl->mode_table[i];
        if (!m) return NULL; /* the table is never full */
        if (m->name_hash == hash && same_name(m->name, name)) return m;
    }
}

static void place_in_table(rl_mode **table, size_t capacity, rl_mode *m) {
    size_t i = m->name_hash & (capacity - 1);
    while (table[i]) i = (i + 1) & (capacity - 1);
    table[i] = m;
}

/* Room in the table for `count` modes; false (the table untouched) when out
   of memory. */
static bool reserve_table(RLRunLoopRef rl, size_t count) {
    if (count * 2 <= rl->mode_table_capacity) return true;
    size_t capacity = rl->mode_table_capacity ? rl->mode_table_capacity : 8;
    while (capacity < count * 2) capacity *= 2;
    rl_mode **table = calloc(capacity, sizeof *table);
    if (!table) return false;
    for (size_t i = 0; i < rl->mode_count; i++) place_in_table(table, capacity, rl->modes[i]);
    free(rl->mode_table);
    rl->mode_table = table;
    rl->mode_table_capacity = capacity;
    return true;
}

rl_mode *rl_mode_find(RLRunLoopRef rl, RLRunLoopMode name) {
    if (name == kRLRunLoopDefaultMode && rl->mode_count) return rl->modes[0];
    return lookup(rl, name, hash_name(name));
}

rl_mode *rl_mode_find_or_create(RLRunLoopRef rl, RLRunLoopMode name) {
    if (name == kRLRunLoopDefaultMode && rl->mode_count) return rl->modes[0];
    uint64_t hash = hash_name(name);
    rl_mode *m = lookup(rl, name, hash);
    if (m) return m;
    if (!rl_array_reserve(&rl->modes, sizeof *rl->modes, &rl->mode_capacity, rl->mode_count + 1, 4) ||
        !reserve_table(rl, rl->mode_count + 1))
        return NULL;
    m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->name = strdup(name);
    if (!m->name) {
        free(m);
        return NULL;
    }
    m->name_hash = hash;
    m->rl = rl;
    m->run_deadline_ns = RL_NEVER;
    place_in_table(rl->mode_table, rl->mode_table_capacity, m);
    rl->modes[rl->mode_count++] = m;
    return m;
}

rl_mode *rl_mode_default(RLRunLoopRef rl) {
    return rl->mode_count ? rl->modes[0] : rl_mode_find_or_create(rl, kRLRunLoopDefaultMode);
}

static void free_mode(rl_mode *m) {
    rl_item_set_free(&m->sources0);
    rl_item_set_free(&m->observers);
    rl_heap_free(&m->timers);
    free(m->firing);
    free(m->v1);
    rl_index_map_free(&m->v1_positions);
    free(m->name);
    free(m);
}

void rl_modes_free(RLRunLoopRef rl) {
    for (size_t i = 0; i < rl->mode_count; i++) free_mode(rl->modes[i]);
    free(rl->modes);
    free(rl->mode_table);
    rl->modes = rl->mode_table = NULL;
    rl->mode_count = rl->mode_capacity = rl->mode_table_capacity = 0;
}

bool rl_mode_has_blocks(RLRunLoopRef rl, rl_mode *m) {
    return m->pending_blocks > 0 || (m->is_common && rl->blocks.pending_common > 0);
}

/* Version-1 sources that count: inside a main-queue drain the main queue's
   own source does not (CF leaves its port out of the wait then). The source
   marks itself inert in the loop (rl_main_queue.c), on the main thread, and
   only that thread sees it so. */
static uint32_t live_source1_count(RLRunLoopRef rl, const rl_mode *m) {
    RLRunLoopSourceRef inert = rl->is_main && m->v1_count && rl_on_process_main_thread() ? rl->main_queue_inert : NULL;
    if (!inert || rl_index_map_get(&m->v1_positions, (uintptr_t)inert) < 0) return m->v1_count;
    return m->v1_count - 1;
}

/* __CFRunLoopModeIsEmpty: observers do not count, queued work does. */
bool rl_mode_is_empty(RLRunLoopRef rl, rl_mode *m) {
    return m->sources0.count == 0 && m->timer_count == 0 && !rl_mode_has_blocks(rl, m) &&
           live_source1_count(rl, m) == 0;
}

/* The kernel's default timer slack, used until the loop's thread reads its own. */
#define DEFAULT_TIMER_SLACK_NS 50000

static int64_t timer_slack(const RLRunLoopRef rl) {
    return rl->timers.slack_ns >= 0 ? rl->timers.slack_ns : DEFAULT_TIMER_SLACK_NS;
}

void rl_mode_read_timer_slack(RLRunLoopRef rl) {
    if (rl->timers.slack_ns >= 0) return;
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    rl->timers.slack_ns = slack >= 0 ? slack : DEFAULT_TIMER_SLACK_NS;
}

static int64_t slot_tolerance(const void *item) {
    const rl_timer_slot *slot = item;
    return rl_timer_tolerance_ns(rl_timer_slot_timer(slot));
}

/* When the timers want the loop awake. Each timer may fire anywhere in its
   window [date, date + window], where the window is the largest of its
   tolerance, its implicit leeway (rl_timer.c: an eighth of how far ahead it
   was scheduled, capped) and the thread's timer slack (what the kernel allows
   itself to add to any sleep); the window is only there to let timers share
   a wake-up, never to make a lone timer late. So the wake-up is the latest
   date among the timers due by the earliest window end L (the smallest
   date + window): every such timer's window contains that moment, so one
   wake-up fires them all, none before its date, none late beyond its window,
   and the last of them exactly on time. A lone timer, or one whose window
   holds no other date, wakes the loop at its date. Dense timers cost one
   wake-up per window, not one each. */
static int64_t timers_wake_up(rl_mode *m) {
    int64_t window_end =
        rl_heap_earliest_latest(&m->timers, timer_slack(m->rl), m->tolerant_timers ? slot_tolerance : NULL);
    return rl_heap_latest_deadline_until(&m->timers, window_end);
}

/* The latest moment the loop may sleep to: the timers' wake-up or the run's
   own deadline. */
int64_t rl_mode_next_deadline(rl_mode *m) {
    int64_t deadline = m->run_deadline_ns;
    const rl_heap_entry *top = rl_heap_top(&m->timers);
    if (top) {
        int64_t t = timers_wake_up(m);
        if (t < deadline) deadline = t;
    }
    return deadline;
}

int64_t rl_mode_timers_deadline(rl_mode *m) {
    return rl_heap_top(&m->timers) ? timers_wake_up(m) : RL_NEVER;
}

/* A manual clock's deadlines mean nothing to the kernel's clock: its loop
   never arms the timerfd for them (its passes never sleep; a host embedding
   it is told of due timers through the wake eventfd). */
bool rl_mode_arm_locked(rl_mode *m, int64_t deadline) {
    if (rl_loop_manual_clock(m->rl)) return false;
    return rl_wait_arm_timer_locked(m->rl, deadline);
}

void rl_mode_timers_changed_locked(rl_mode *m) {
    RLRunLoopRef rl = m->rl;
    if (rl_loop_is_current_thread(rl)) return;
    /* Also when a host sleeps on the embedding descriptor for m. */
    if (!rl_embed_fd_waits_in_locked(rl, m) && (!rl->current_run || rl->current_run->mode != m)) return;
    /* Without a timerfd the sleeping loop computed its timeout before this
       change: wake it to compute it again. */
    if (!rl_mode_arm_locked(m, rl_mode_next_deadline(m))) RLRunLoopWakeUp(rl);
}

bool RLRunLoopModeIsEmpty(RLRunLoopRef rl, RLRunLoopMode mode) {
    if (!rl || !rl_mode_name_is_valid(mode) || rl_mode_name_is_common(mode)) return true;
    rl_loop_lock(rl);
    rl_mode *m = rl->dead ? NULL : rl_mode_find(rl, mode);
    bool empty = !m || rl_mode_is_empty(rl, m);
    rl_loop_unlock(rl);
    return empty;
}
