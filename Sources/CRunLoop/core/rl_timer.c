/*
 * rl_timer.c: timers: creating them, their dates, adding them to modes and
 * removing them, and their slots in the modes' heaps. Firing them is
 * rl_timer_fire.c's.
 *
 * Over 500 lines: the timer's creation, dates and memberships share the slot
 * and heap bookkeeping below, which no other file may touch.
 *
 * Invariants: a timer is in at most one loop (`rl`); it has one slot per mode
 * it is in, each slot holding one reference; a slot is in its mode's heap
 * unless the timer is firing (no heap handle). While a timer's callout runs it
 * is out of every heap, so nested runs in any mode cannot fire it again, and
 * only it: the other due timers stay scheduled, as in CF, where a timer is
 * marked firing only when its own callout starts (its modes list it
 * meanwhile, for the next fire date). Fields that scheduling
 * reads are written with both the loop's and the timer's lock held when the
 * timer is in a loop, so either lock suffices to read them; `firing` is read
 * and written under the timer's lock, because the callout may end with the
 * timer in another loop.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include "rl_timer_slots.h"

static void finalize_timer(rl_object *obj);
/* A timer fits one 96-byte malloc chunk (see rl_timer_extra). */
_Static_assert(sizeof(struct __RLRunLoopTimer) <= 88 || sizeof(void *) != 8, "timer grew past 88 bytes");
const rl_class rl_timer_class = {"RLRunLoopTimer", finalize_timer, rl_description_of_timer};

static double clamp_interval(RLTimeInterval interval) {
    if (isnan(interval) || interval <= 0) return 0;
    if (interval < 1e-6) return 1e-6;
    if (interval > RL_INTERVAL_LIMIT) return RL_INTERVAL_LIMIT;
    return interval;
}

static double clamp_date(RLAbsoluteTime date) {
    if (isnan(date)) return RLAbsoluteTimeGetCurrent();
    if (date > RL_DATE_LIMIT) return RL_DATE_LIMIT;
    if (date < -RL_DATE_LIMIT) return -RL_DATE_LIMIT;
    return date;
}

static double clamp_tolerance(const RLRunLoopTimerRef t, RLTimeInterval tolerance) {
    if (isnan(tolerance) || tolerance < 0) return 0;
    RLTimeInterval interval = rl_timer_interval(t);
    if (interval > 0 && tolerance > interval / 2) return interval / 2;
    if (tolerance > RL_INTERVAL_LIMIT) return RL_INTERVAL_LIMIT;
    return tolerance;
}

/* The timer's extra part, made if it has none yet; NULL when out of memory.
   Timer locked, and its loop if it is in one (readers hold either). */
static rl_timer_extra *extra_made(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    if (x) return x;
    x = calloc(1, sizeof *x);
    if (x) atomic_store_explicit(&t->extra, x, memory_order_release);
    return x;
}

RLRunLoopTimerRef RLRunLoopTimerCreate(RLAbsoluteTime fireDate, RLTimeInterval interval, RLOptionFlags flags,
                                       RLIndex order, RLRunLoopTimerCallBack callout, RLRunLoopTimerContext *context) {
    (void)flags;
    if (!callout) return NULL;
    /* malloc, every field written below: calloc costs a quarter more. */
    RLRunLoopTimerRef t = malloc(sizeof *t);
    if (!t) return NULL;
    *t = (struct __RLRunLoopTimer){
        .fire_date = clamp_date(fireDate), /* its deadline is computed when it joins a loop (claim) */
        .callout = callout,
        .slot = {NULL, RL_HEAP_NO_HANDLE, true},
    };
    rl_object_init(&t->base, &rl_timer_class);
    rl_item_lock_init(&t->lock);
    atomic_init(&t->valid, true);
    atomic_init(&t->extra, NULL);
    bool functions = context && (context->version || context->retain || context->release || context->copyDescription);
    RLTimeInterval every = clamp_interval(interval);
    if (order || functions || every > 0) {
        rl_timer_extra *x = extra_made(t);
        if (!x) {
            free(t);
            return NULL;
        }
        x->interval = every;
        x->order = order;
        if (functions) {
            x->context_version = context->version;
            x->retain = context->retain;
            x->release = context->release;
            x->copy_description = context->copyDescription;
        }
    }
    if (context) {
        t->info = context->info;
        if (context->retain) t->info = (void *)context->retain(t->info); /* NULL info too */
    }
    return t;
}

void rl_timer_release_info(RLRunLoopTimerRef t) {
    rl_timer_extra *x = rl_timer_extra_of(t);
    if (x && x->release) rl_release_info_once(&t->lock, &x->info_released, x->release, t->info);
}

/* Invalidation releases info at once, unless the timer's callout is running
   (on any thread): then the callout's end releases it, so the callout and
   its bracket retain never see info released under them by another thread. */
static void release_info_unless_firing(RLRunLoopTimerRef t) {
    rl_item_lock_acquire(&t->lock);
    bool defer = t->firing;
    if (defer) t->release_after_firing = true;
    rl_item_lock_release(&t->lock);
    if (!defer) rl_timer_release_info(t);
}

static void finalize_timer(rl_object *obj) {
    RLRunLoopTimerRef t = (RLRunLoopTimerRef)obj;
    rl_timer_release_info(t);
    rl_timer_extra *x = rl_timer_extra_of(t);
    if (x) {
        free(x->more_slots);
        free(x);
    }
    free(t);
}

RLTimeInterval RLRunLoopTimerGetInterval(RLRunLoopTimerRef timer) {
    return timer ? rl_timer_interval(timer) : 0;
}

bool RLRunLoopTimerDoesRepeat(RLRunLoopTimerRef timer) {
    return timer && rl_timer_interval(timer) > 0;
}

RLIndex RLRunLoopTimerGetOrder(RLRunLoopTimerRef timer) {
    rl_timer_extra *x = timer ? rl_timer_extra_of(timer) : NULL;
    return x ? x->order : 0;
}

bool RLRunLoopTimerIsValid(RLRunLoopTimerRef timer) {
    return timer && atomic_load(&timer->valid);
}

void RLRunLoopTimerGetContext(RLRunLoopTimerRef timer, RLRunLoopTimerContext *context) {
    if (!timer || !context) return;
    rl_timer_extra *x = rl_timer_extra_of(timer);
    *context = (RLRunLoopTimerContext){0, timer->info, NULL, NULL, NULL};
    if (x) {
        context->version = x->context_version;
        context->retain = x->retain;
        context->release = x->release;
        context->copyDescription = x->copy_description;
    }
}

RLAbsoluteTime RLRunLoopTimerGetNextFireDate(RLRunLoopTimerRef timer) {
    if (!timer || !atomic_load(&timer->valid)) return 0;
    rl_item_lock_acquire(&timer->lock);
    RLAbsoluteTime date = timer->fire_date;
    rl_item_lock_release(&timer->lock);
    return date;
}

RLTimeInterval RLRunLoopTimerGetTolerance(RLRunLoopTimerRef timer) {
    if (!timer) return 0;
    rl_item_lock_acquire(&timer->lock);
    RLTimeInterval tolerance = rl_timer_tolerance(timer);
    rl_item_lock_release(&timer->lock);
    return tolerance;
}

/* Locks the loop the timer is in (if any) and the timer; returns the loop. */
RLRunLoopRef rl_timer_lock_with_loop(RLRunLoopTimerRef t) {
    for (;;) {
        rl_item_lock_acquire(&t->lock);
        RLRunLoopRef rl = t->rl;
        if (!rl) return NULL;
        RLRetain(rl); /* alive: it holds the timer, see rl_internal.h */
        rl_item_lock_release(&t->lock);
        rl_loop_lock(rl);
        rl_item_lock_acquire(&t->lock);
        if (t->rl == rl) {
            RLRelease(rl); /* the timer's membership keeps it alive while locked */
            return rl;
        }
        rl_item_lock_release(&t->lock);
        rl_loop_unlock(rl);
        RLRelease(rl);
    }
}

void rl_timer_unlock_with_loop(RLRunLoopTimerRef t, RLRunLoopRef rl) {
    rl_item_lock_release(&t->lock);
    if (rl) rl_loop_unlock(rl);
}

/* How late a timer scheduled `ahead_ns` before its date may fire when that
   lets it share a wake-up with the timers around it (rl_mode.c's
   timers_wake_up; a lone timer still fires on its date): an eighth of how far
   ahead it was scheduled, at most RL_TIMER_LEEWAY_CAP_NS. macOS's kernel
   coalesces timers without tolerance in the same proportion (capped near a
   millisecond for a foreground app); the cap here is lower, so that a timer's
   lateness stays well under libev's millisecond. */
#define RL_TIMER_LEEWAY_CAP_NS 500000
uint32_t rl_timer_implicit_leeway(int64_t ahead_ns) {
    if (ahead_ns <= 0) return 0;
    int64_t leeway = ahead_ns / 8;
    return leeway > RL_TIMER_LEEWAY_CAP_NS ? RL_TIMER_LEEWAY_CAP_NS : (uint32_t)leeway;
}

/* implicit_leeway for a timer added at `coarse_now` (rl_mono_coarse_now,
   which adding reads anyway for the date's conversion). That clock may be a
   tick behind (4 ms here), so the distance it gives may be a tick too long,
   and an eighth of it too generous. A timer so far ahead that even two ticks
   less earns the cap (the second for a late tick) gets the cap as it is;
   for a nearer one the precise clock is read, so the rule holds exactly for
   every timer, and most adds (of timers over 12 ms ahead, with 4 ms ticks)
   still read one clock, the cheap one. */
static inline __attribute__((always_inline)) uint32_t added_timer_leeway(int64_t deadline, int64_t coarse_now,
                                                                         bool manual) {
    if (manual) return rl_timer_implicit_leeway(deadline - coarse_now); /* a manual clock's reading is exact */
    if (deadline - coarse_now >= 8 * (int64_t)RL_TIMER_LEEWAY_CAP_NS + 2 * rl_mono_coarse_tick())
        return RL_TIMER_LEEWAY_CAP_NS;
    return rl_timer_implicit_leeway(deadline - rl_mono_now());
}

/* Puts a slot into its mode's heap, after every timer already there with the
   same deadline (CF inserts a timer after its equals, whether it is new,
   re-added, re-dated or advanced after firing), with the timer's implicit
   leeway. Loop and timer locked. */
bool rl_timer_schedule_slot_locked(RLRunLoopTimerRef t, rl_timer_slot *slot, uint32_t leeway) {
    rl_mode *m = slot->mode;
    slot->heap_handle = rl_heap_insert(&m->timers, slot, t->fire_ns, ++m->rl->timers.sequence);
    if (slot->heap_handle == RL_HEAP_NO_HANDLE) return false;
    rl_heap_set_leeway(&m->timers, slot->heap_handle, leeway);
    return true;
}

/* ---- the firing slots of a mode ---------------------------------------
   In CF a timer stays in its modes' sorted timer lists while its callout
   runs, so RLRunLoopGetNextTimerFireDate must still see it then; here its
   slots leave the heaps for the callout (nested runs must not fire it), so
   each mode lists the slots it holds of timers whose callout runs (`firing`,
   a few at a time: one per nested firing, plus any a callout moved in). A
   slot is listed from begin_firing, or from its add while its timer fires,
   until it is scheduled again or removed. Room for a few is made with the
   mode's first timer, so firing does not allocate; out of memory beyond
   that room, a slot goes unlisted (only the next fire date misses it). */
#define FIRING_ROOM 4

bool rl_timer_firing_room_locked(rl_mode *m, uint32_t count) {
    if (count <= m->firing_capacity) return true;
    uint32_t cap = m->firing_capacity ? m->firing_capacity * 2 : FIRING_ROOM;
    rl_timer_slot **grown = realloc(m->firing, cap * sizeof *grown);
    if (!grown) return false;
    m->firing = grown;
    m->firing_capacity = cap;
    return true;
}

static void note_displaced_in(rl_timer_pass *p, const rl_heap_key *key, RLRunLoopTimerRef t) {
    if (p->displaced_count == p->displaced_capacity) {
        size_t cap = p->displaced_capacity ? p->displaced_capacity * 2 : 8;
        displaced_timer *grown = realloc(p->displaced, cap * sizeof *grown);
        if (!grown) {
            p->displaced_lost = true;
            return;
        }
        p->displaced = grown;
        p->displaced_capacity = cap;
    }
    RLRetain(t);
    p->displaced[p->displaced_count++] = (displaced_timer){*key, t};
}

/* A scheduled slot is about to leave its heap or change its key: every pass
   of its mode that still owes it a firing notes it. Loop and timer locked. */
static void note_if_owed(rl_timer_slot *slot) {
    rl_mode *m = slot->mode;
    for (rl_timer_pass *p = m->timer_passes; p; p = p->outer) {
        rl_heap_key key = {rl_heap_entry_of(&m->timers, slot->heap_handle)->deadline_ns,
                           rl_heap_sequence_of(&m->timers, slot->heap_handle), slot->heap_handle};
        if (p->own != slot && key.deadline_ns <= p->now && key.sequence <= p->sequence)
            note_displaced_in(p, &key, rl_timer_slot_timer(slot));
    }
}

/* Takes a slot out of its mode's heap, if it is there. Loop and timer locked. */
void rl_timer_unschedule_slot_locked(rl_timer_slot *slot) {
    if (slot->heap_handle == RL_HEAP_NO_HANDLE) return;
    if (slot->mode->timer_passes) note_if_owed(slot);
    rl_heap_remove(&slot->mode->timers, slot->heap_handle);
    slot->heap_handle = RL_HEAP_NO_HANDLE;
}

/* Re-keys every scheduled slot after the deadline moved; both locks held. */
static void reschedule_slots(RLRunLoopTimerRef t) {
    uint32_t leeway = rl_timer_implicit_leeway(t->fire_ns - rl_loop_now(t->rl));
    for (size_t i = 0; i < rl_timer_slot_count(t); i++) {
        rl_timer_slot *slot = rl_timer_slot_at(t, i);
        if (slot->heap_handle == RL_HEAP_NO_HANDLE) continue;
        rl_mode *m = slot->mode;
        if (m->timer_passes) note_if_owed(slot);
        rl_heap_update(&m->timers, slot->heap_handle, t->fire_ns, ++m->rl->timers.sequence);
        rl_heap_set_leeway(&m->timers, slot->heap_handle, leeway);
        rl_mode_timers_changed_locked(m);
    }
}

void RLRunLoopTimerSetNextFireDate(RLRunLoopTimerRef timer, RLAbsoluteTime fireDate) {
    if (!timer || !atomic_load(&timer->valid)) return;
    fireDate = clamp_date(fireDate);
    int64_t deadline = rl_deadline_for_date(fireDate);
    RLRunLoopRef rl = rl_timer_lock_with_loop(timer);
    timer->fire_date = fireDate;
    /* A manual clock's deadlines are its dates. */
    if (rl && rl_loop_manual_clock(rl)) deadline = rl_loop_deadline_for_date(rl, fireDate, rl_loop_now(rl));
    timer->fire_ns = deadline;
    if (rl) reschedule_slots(timer);
    rl_timer_unlock_with_loop(timer, rl);
}

void RLRunLoopTimerSetTolerance(RLRunLoopTimerRef timer, RLTimeInterval tolerance) {
    if (!timer) return;
    RLRunLoopRef rl = rl_timer_lock_with_loop(timer);
    double before = rl_timer_tolerance(timer);
    double after = clamp_tolerance(timer, tolerance);
    rl_timer_extra *x = after > 0 ? extra_made(timer) : rl_timer_extra_of(timer);
    if (x) { /* else out of memory: the tolerance stays 0 */
        x->tolerance = after;
        x->tolerance_ns = rl_seconds_to_ns(after);
        for (size_t i = 0; rl && i < rl_timer_slot_count(timer); i++) {
            rl_mode *m = rl_timer_slot_at(timer, i)->mode;
            if (before > 0) m->tolerant_timers--;
            if (after > 0) m->tolerant_timers++;
            rl_mode_timers_changed_locked(m);
        }
    }
    rl_timer_unlock_with_loop(timer, rl);
}

/* ---- membership ---------------------------------------------------------- */

rl_timer_slot *rl_timer_slot_for_mode(RLRunLoopTimerRef t, rl_mode *m) {
    if (t->slot.mode == m && m) return &t->slot;
    rl_timer_extra *x = rl_timer_extra_of(t);
    for (size_t i = 0; x && i < x->more_count; i++)
        if (x->more_slots[i]->mode == m) return x->more_slots[i];
    return NULL;
}

/* Claims the timer for `rl` at `now` (rl_loop_coarse_now; `manual`: rl is
   on a manual clock, as its caller found once); false if invalid or in
   another loop. Timer locked. */
static inline __attribute__((always_inline)) bool claim(RLRunLoopRef rl, RLRunLoopTimerRef t, int64_t now,
                                                        bool manual) {
    if (!atomic_load(&t->valid) || (t->rl && t->rl != rl)) return false;
    /* Joining a loop converts the date again, like re-dating it: deadlines
       of equal dates never decrease from one conversion to the next, so the
       timer goes after those of its date converted before (a firing timer
       keeps the deadline it fires for until end_firing). */
    if (!t->rl && !t->firing)
        t->fire_ns =
            manual ? rl_manual_deadline_for_date(t->fire_date, now) : rl_deadline_for_date_at(t->fire_date, now);
    t->rl = rl;
    return true;
}

/* claim, at the loop's now. */
static bool claim_now(RLRunLoopRef rl, RLRunLoopTimerRef t) {
    return claim(rl, t, rl_loop_coarse_now(rl), rl_loop_manual_clock(rl) != NULL);
}

static void unclaim_if_unused(RLRunLoopTimerRef t) {
    if (rl_timer_slot_count(t) == 0 && !t->in_common) t->rl = NULL;
}

/* A slot for mode m, unscheduled: the timer's own if free, else a new one in
   its extra part; NULL when out of memory. Timer locked. */
static rl_timer_slot *new_slot(RLRunLoopTimerRef t, rl_mode *m) {
    if (!t->slot.mode) {
        t->slot = (rl_timer_slot){m, RL_HEAP_NO_HANDLE, true};
        return &t->slot;
    }
    rl_timer_extra *x = extra_made(t);
    if (!x) return NULL;
    if (!rl_array_reserve(&x->more_slots, sizeof *x->more_slots, &x->more_capacity, x->more_count + 1, 2)) return NULL;
    rl_timer_more_slot *more = malloc(sizeof *more);
    if (!more) return NULL;
    *more = (rl_timer_more_slot){{m, RL_HEAP_NO_HANDLE, false}, t};
    x->more_slots[x->more_count++] = &more->slot;
    return &more->slot;
}

/* Forgets an unscheduled slot. Timer locked. */
static void drop_slot(RLRunLoopTimerRef t, rl_timer_slot *slot) {
    if (slot == &t->slot) {
        t->slot.mode = NULL;
        return;
    }
    rl_timer_extra *x = rl_timer_extra_of(t);
    for (size_t i = 0; i < x->more_count; i++)
        if (x->more_slots[i] == slot) {
            x->more_slots[i] = x->more_slots[--x->more_count];
            break;
        }
    free((rl_timer_more_slot *)slot);
}

static inline __attribute__((always_inline)) void add_slot(rl_mode *m, RLRunLoopTimerRef t, int64_t now, bool manual) {
    if (rl_timer_slot_for_mode(t, m) || !rl_timer_firing_room_locked(m, FIRING_ROOM)) return;
    rl_timer_slot *slot = new_slot(t, m);
    if (!slot) return;
    /* A firing timer is scheduled when its callout ends (end_firing). */
    if (t->firing) {
        rl_timer_list_firing_locked(slot);
    } else if (!rl_timer_schedule_slot_locked(t, slot, added_timer_leeway(t->fire_ns, now, manual))) {
        drop_slot(t, slot);
        return;
    }
    m->timer_count++;
    if (rl_timer_tolerance(t) > 0) m->tolerant_timers++;
    RLRetain(t);
    rl_mode_timers_changed_locked(m);
}

/* `now` for the date's conversion and the leeway; `manual` a constant at
   each call, so each path has its own copy and real time pays nothing. */
static inline __attribute__((always_inline)) void add_to_mode(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t,
                                                              int64_t now, bool manual) {
    rl_item_lock_acquire(&t->lock);
    if (claim(rl, t, now, manual)) {
        add_slot(m, t, now, manual);
        unclaim_if_unused(t);
    }
    rl_item_lock_release(&t->lock);
}

static __attribute__((noinline)) void add_to_mode_on_manual_clock(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t) {
    add_to_mode(rl, m, t, rl_loop_coarse_now(rl), true);
}

void rl_timer_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t) {
    if (__builtin_expect(rl_loop_manual_clock(rl) != NULL, 0)) add_to_mode_on_manual_clock(rl, m, t);
    else add_to_mode(rl, m, t, rl_mono_coarse_now(), false);
}

/* Timer locked. */
static bool remove_slot(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t) {
    for (size_t i = 0; i < rl_timer_slot_count(t); i++) {
        rl_timer_slot *slot = rl_timer_slot_at(t, i);
        if (slot->mode != m) continue;
        rl_timer_unschedule_slot_locked(slot);
        if (m->firing_count) rl_timer_unlist_firing_locked(slot);
        drop_slot(t, slot);
        rl->removals++;
        m->timer_count--;
        if (rl_timer_tolerance(t) > 0) m->tolerant_timers--;
        rl_mode_timers_changed_locked(m);
        rl_loop_release_locked(rl, t);
        return true;
    }
    return false;
}

bool rl_timer_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t) {
    rl_item_lock_acquire(&t->lock);
    bool removed = t->rl == rl && remove_slot(rl, m, t);
    if (removed) unclaim_if_unused(t);
    rl_item_lock_release(&t->lock);
    return removed;
}

void RLRunLoopAddTimer(RLRunLoopRef rl, RLRunLoopTimerRef timer, RLRunLoopMode mode) {
    bool is_default = rl_mode_name_is_default(mode);
    if (!rl || !timer || !(is_default || rl_mode_name_is_valid(mode))) return;
    rl_loop_lock(rl);
    if (rl->dead) {
        /* nothing would ever fire it */
    } else if (!is_default && rl_mode_name_is_common(mode)) {
        rl_item_lock_acquire(&timer->lock);
        bool added = !timer->in_common && claim_now(rl, timer) && rl_item_set_insert(&rl->common_timers, timer, 0);
        if (added) timer->in_common = true;
        unclaim_if_unused(timer);
        rl_item_lock_release(&timer->lock);
        if (added) {
            RLRetain(timer);
            for (size_t i = 0; i < rl->mode_count; i++) {
                if (!rl->modes[i]->is_common) continue;
                rl_timer_add_to_mode_locked(rl, rl->modes[i], timer);
                if (!rl_timer_slot_for_mode(timer, rl->modes[i]))
                    rl->modes[i]->common_incomplete = true; /* out of memory: retried */
            }
        }
    } else {
        rl_mode *m = is_default ? rl_mode_default(rl) : rl_mode_find_or_create(rl, mode);
        if (m) rl_timer_add_to_mode_locked(rl, m, timer);
    }
    rl_loop_unlock(rl);
}

/* Loop and timer locked. */
static void remove_from_common(RLRunLoopRef rl, RLRunLoopTimerRef t) {
    if (!t->in_common || !rl_item_set_remove(&rl->common_timers, t)) return;
    t->in_common = false;
    for (size_t i = 0; i < rl->mode_count; i++)
        if (rl->modes[i]->is_common) remove_slot(rl, rl->modes[i], t);
    rl_loop_release_locked(rl, t);
}

void RLRunLoopRemoveTimer(RLRunLoopRef rl, RLRunLoopTimerRef timer, RLRunLoopMode mode) {
    if (!rl || !timer || !rl_mode_name_is_valid(mode)) return;
    rl_loop_lock(rl);
    rl_item_lock_acquire(&timer->lock);
    if (timer->rl == rl) {
        if (rl_mode_name_is_common(mode)) {
            remove_from_common(rl, timer);
        } else {
            rl_mode *m = rl_mode_find(rl, mode);
            if (m) remove_slot(rl, m, timer);
        }
        unclaim_if_unused(timer);
    }
    rl_item_lock_release(&timer->lock);
    rl_loop_unlock(rl);
}

bool RLRunLoopContainsTimer(RLRunLoopRef rl, RLRunLoopTimerRef timer, RLRunLoopMode mode) {
    if (!rl || !timer || !rl_mode_name_is_valid(mode)) return false;
    bool found = false;
    rl_loop_lock(rl);
    rl_item_lock_acquire(&timer->lock);
    if (timer->rl == rl) {
        if (rl_mode_name_is_common(mode)) {
            found = timer->in_common;
        } else {
            rl_mode *m = rl_mode_find(rl, mode);
            found = m && rl_timer_slot_for_mode(timer, m);
        }
    }
    rl_item_lock_release(&timer->lock);
    rl_loop_unlock(rl);
    return found;
}

/* Takes the timer out of every mode of rl and out of rl. Loop and timer locked. */
void rl_timer_remove_everywhere_locked(RLRunLoopRef rl, RLRunLoopTimerRef t) {
    remove_from_common(rl, t);
    for (size_t n; (n = rl_timer_slot_count(t)) > 0;) remove_slot(rl, rl_timer_slot_at(t, n - 1)->mode, t);
    unclaim_if_unused(t);
}

void RLRunLoopTimerInvalidate(RLRunLoopTimerRef timer) {
    if (!timer) return;
    RLRetain(timer);
    bool was_valid = atomic_exchange(&timer->valid, false);
    RLRunLoopRef rl = rl_timer_lock_with_loop(timer);
    if (rl) rl_timer_remove_everywhere_locked(rl, timer);
    rl_timer_unlock_with_loop(timer, rl);
    if (was_valid) release_info_unless_firing(timer);
    RLRelease(timer);
}

/* ---- a loop changing clocks ------------------------------------------------ */

/* Re-keys a mode's heap, whose keys are sorted in `keys`, in that order: each
   timer's deadline taken again from its date for the loop's clock, equal
   dates keeping their order. */
static void reconvert_mode(RLRunLoopRef rl, rl_mode *m, const rl_heap_key_buffer *keys, int64_t now) {
    for (size_t i = 0; i < keys->count; i++) {
        rl_heap_handle handle = keys->items[i].handle;
        RLRunLoopTimerRef t = rl_timer_slot_timer(rl_heap_item(&m->timers, handle));
        rl_item_lock_acquire(&t->lock);
        t->fire_ns = rl_loop_deadline_for_date(rl, t->fire_date, now);
        rl_heap_update(&m->timers, handle, t->fire_ns, ++rl->timers.sequence);
        rl_heap_set_leeway(&m->timers, handle, rl_timer_implicit_leeway(t->fire_ns - now));
        rl_item_lock_release(&t->lock);
    }
}

bool rl_timers_reconvert(RLRunLoopRef rl) {
    size_t most = 0;
    for (size_t i = 0; i < rl->mode_count; i++)
        if (rl_heap_count(&rl->modes[i]->timers) > most) most = rl_heap_count(&rl->modes[i]->timers);
    rl_heap_key_buffer keys = {0};
    if (most && !rl_heap_key_buffer_reserve(&keys, most)) return false;
    int64_t now = rl_loop_now(rl);
    for (size_t i = 0; i < rl->mode_count; i++) {
        rl_mode *m = rl->modes[i];
        if (!rl_heap_count(&m->timers)) continue;
        rl_heap_collect_due(&m->timers, RL_NEVER, &keys); /* room for all: reserved */
        reconvert_mode(rl, m, &keys, now);
    }
    rl_heap_key_buffer_free(&keys);
    return true;
}
