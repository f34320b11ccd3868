/*
 * rl_timer_fire.c: firing the due timers of a mode (__CFRunLoopDoTimers):
 * taking a timer out of its heaps for its callout, calling it out, and
 * scheduling it again (or invalidating a one-shot) after. The invariants
 * are rl_timer.c's.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include "rl_timer_slots.h"

/* Takes a timer out of every heap for its own callout; loop and timer locked. */
static void begin_firing(RLRunLoopTimerRef t) {
    t->firing = true;
    for (size_t i = 0; i < rl_timer_slot_count(t); i++) {
        rl_timer_slot *slot = rl_timer_slot_at(t, i);
        rl_timer_unschedule_slot_locked(slot);
        rl_timer_list_firing_locked(slot);
    }
}

/* The date `steps` intervals after `date`: exact on the date's own grid,
   unless that grid has drifted from the deadline's (a date clamped at
   creation, or the wall clock stepped), and then derived from the deadline. */
static RLAbsoluteTime next_grid_date(RLRunLoopTimerRef t, RLAbsoluteTime date, int64_t steps, int64_t now) {
    RLAbsoluteTime on_grid = date + (double)steps * rl_timer_interval(t);
    RLAbsoluteTime today = t->rl ? rl_loop_date_now(t->rl) : RLAbsoluteTimeGetCurrent();
    RLAbsoluteTime from_deadline = today + (double)(t->fire_ns - now) * 1e-9;
    return fabs(on_grid - from_deadline) > 1.0 ? from_deadline : on_grid;
}

/* What a timer was fired for: its date and deadline when its callout began. */
typedef struct {
    RLAbsoluteTime date;
    int64_t deadline_ns;
    bool manual; /* on a manual clock's frame of deadlines (rl_clock.c) */
} fired_at;

/* A callout that moved its timer to a loop on the other kind of clock
   leaves deadlines of the first: they are taken again from the dates, in
   the frame of the loop the timer is in now. Timer and t->rl locked. */
static void convert_if_moved_across_clocks(RLRunLoopTimerRef t, fired_at *fired, int64_t now) {
    if (!t->rl || (rl_loop_manual_clock(t->rl) != NULL) == fired->manual) return;
    fired->deadline_ns = rl_loop_deadline_for_date(t->rl, fired->date, now);
    t->fire_ns = rl_loop_deadline_for_date(t->rl, t->fire_date, now);
}

/* After the callout, under the lock of the loop the timer is in now (none, or
   another loop than the one that fired it, if the callout moved it): as in
   __CFRunLoopDoTimer, a date the callout moved later is kept; otherwise a
   repeating timer moves to the first point of its grid (fire + k * interval,
   counted from the date it fired for) after now, once however late, and any
   earlier date the callout set is ignored. Then every slot out of its heap
   (all of them, or those of the modes it was added to meanwhile) is
   scheduled, after the timers of equal date. Returns whether an
   invalidation during the callout left info for it to release. Timer
   locked; t->rl locked. */
static bool end_firing(RLRunLoopTimerRef t, fired_at fired) {
    t->firing = false;
    bool release_info_now = t->release_after_firing;
    t->release_after_firing = false;
    if (!atomic_load(&t->valid)) return release_info_now; /* its invalidation removes every slot */
    int64_t now = t->rl ? rl_loop_now(t->rl) : rl_mono_now();
    convert_if_moved_across_clocks(t, &fired, now);
    if (rl_timer_interval(t) > 0 && t->fire_date <= fired.date) {
        int64_t interval_ns = rl_seconds_to_ns(rl_timer_interval(t));
        int64_t steps = now >= fired.deadline_ns ? (now - fired.deadline_ns) / interval_ns + 1 : 1;
        t->fire_ns = fired.deadline_ns + steps * interval_ns;
        t->fire_date = next_grid_date(t, fired.date, steps, now);
    }
    uint32_t leeway = rl_timer_implicit_leeway(t->fire_ns - now);
    for (size_t i = 0; i < rl_timer_slot_count(t); i++) {
        rl_timer_slot *slot = rl_timer_slot_at(t, i);
        if (slot->heap_handle != RL_HEAP_NO_HANDLE) continue;
        rl_timer_unlist_firing_locked(slot);
        rl_timer_schedule_slot_locked(t, slot, leeway);
        rl_mode_timers_changed_locked(slot->mode);
    }
    return release_info_now;
}

/* Ends the firing under the right lock and returns with `rl` locked. The
   timer usually stayed in `rl`; one its callout moved to another loop is
   finished under that loop's lock (never two loop locks at once), so that
   loop's heap is only ever touched under its own lock, and it re-arms.
   Returns end_firing's answer. */
static bool finish_firing(RLRunLoopRef rl, RLRunLoopTimerRef t, fired_at fired) {
    rl_loop_relock(rl);
    rl_item_lock_acquire(&t->lock);
    if (t->rl == rl || t->rl == NULL) {
        bool release_info_now = end_firing(t, fired);
        rl_item_lock_release(&t->lock);
        return release_info_now;
    }
    rl_item_lock_release(&t->lock);
    rl_loop_unlock(rl);
    RLRunLoopRef now_in = rl_timer_lock_with_loop(t);
    bool release_info_now = end_firing(t, fired);
    rl_timer_unlock_with_loop(t, now_in);
    rl_loop_relock(rl);
    return release_info_now;
}

/* CF: a one-shot timer is invalidated after its callout, even if the
   callout re-dated it. This is RLRunLoopTimerInvalidate and the end of the
   firing in one round of the loop's lock (the common case: the timer is
   still in rl, or in no loop); a timer the callout moved to another loop is
   taken out of that one under its own lock. Returns, with rl locked, whether
   info is now to be released (the invalidation's release, deferred while
   the callout ran). */
static bool finish_one_shot(RLRunLoopRef rl, RLRunLoopTimerRef t) {
    rl_loop_relock(rl);
    bool was_valid = atomic_exchange(&t->valid, false);
    rl_item_lock_acquire(&t->lock);
    if (t->rl == rl) {
        rl_timer_remove_everywhere_locked(rl, t);
    } else if (t->rl) {
        rl_item_lock_release(&t->lock);
        rl_loop_unlock(rl);
        RLRunLoopRef now_in = rl_timer_lock_with_loop(t);
        if (now_in) rl_timer_remove_everywhere_locked(now_in, t);
        rl_item_lock_release(&t->lock);
        if (now_in) rl_loop_unlock(now_in);
        rl_loop_relock(rl);
        rl_item_lock_acquire(&t->lock);
    }
    t->firing = false;
    bool release_info_now = was_valid || t->release_after_firing;
    t->release_after_firing = false;
    rl_item_lock_release(&t->lock);
    return release_info_now;
}

/* __CFRunLoopDoTimer: fires t unless an earlier callout of the pass (or
   another thread) invalidated it, removed it from this mode or loop, or
   re-dated it past `now`, or its callout is already running; a skipped timer
   is left exactly as it is. Loop locked on entry and exit. */
static bool fire(RLRunLoopRef rl, rl_mode *m, RLRunLoopTimerRef t, int64_t now) {
    rl_item_lock_acquire(&t->lock);
    bool due = atomic_load(&t->valid) && t->rl == rl && !t->firing && t->fire_ns <= now && rl_timer_slot_for_mode(t, m);
    if (!due) {
        rl_item_lock_release(&t->lock);
        return false;
    }
    begin_firing(t);
    fired_at fired = {t->fire_date, t->fire_ns, rl_loop_manual_clock(rl) != NULL};
    rl_trace_timer_fire(rl, t, fired.deadline_ns, now);
    /* CF's ownership rule: retain and release bracket the callout only when
       the context has a retain; a context with only a release hands its info
       over, to be released once, when the timer is invalidated or freed.
       The timer is marked firing, so an invalidation from here on leaves
       that release to the callout's end: info cannot go before the retain,
       which runs with no lock held, as every user callback does. */
    rl_timer_extra *x = rl_timer_extra_of(t);
    void *info = t->info;
    const void *(*retain)(const void *) = x ? x->retain : NULL;
    bool bracket = retain != NULL;
    rl_item_lock_release(&t->lock);
    rl_loop_unlock(rl);
    if (bracket) info = (void *)retain(info);

    RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION(rl, t->callout, t, info);
    bool release_info_now;
    void (*release_bracket)(const void *) = bracket ? x->release : NULL;
    if (rl_timer_interval(t) <= 0) {
        release_info_now = finish_one_shot(rl, t);
    } else {
        if (release_bracket) release_bracket(info);
        release_bracket = NULL;
        release_info_now = finish_firing(rl, t, fired);
    }
    /* Only a context with a release has info to release (set at creation,
       so `x` read before the callout tells): most timers keep the lock. */
    if (!x || !x->release) release_info_now = false;
    if (release_bracket || release_info_now) {
        rl_loop_unlock(rl);
        if (release_bracket) release_bracket(info);
        if (release_info_now) rl_timer_release_info(t);
        rl_loop_relock(rl);
    }
    return true;
}

/* Starts loading a slot's timer without reading the slot (which would wait
   for it): the slot's line, and the timer's first line if the slot is the
   timer's own (harmless if not). */
static inline void prefetch_timer_of(const rl_timer_slot *slot) {
    __builtin_prefetch(slot, 1);
    __builtin_prefetch((const char *)slot - offsetof(struct __RLRunLoopTimer, slot), 1);
}

static void sort_displaced(displaced_timer *d, size_t n) {
    for (size_t i = 1; i < n; i++) {
        displaced_timer x = d[i];
        size_t j = i;
        for (; j > 0 && rl_heap_key_before(&x.key, &d[j - 1].key); j--) d[j] = d[j - 1];
        d[j] = x;
    }
}

/* The rest of a pass the slow way, as CF does it all: what the pass still
   owes (the due entries left from its start, and the displaced timers) is
   collected in firing order, each retained, and then fired one by one, each
   checked again at its turn. Out of memory, the earliest that fit fire and
   the others stay due for a later pass. Loop locked; `p` is off the mode's
   list. */
static void fire_the_rest(RLRunLoopRef rl, rl_mode *m, rl_timer_pass *p) {
    rl_ptr_array *due = rl_scratch_items_locked(rl);
    rl_heap_key_buffer *keys = due ? rl_scratch_timer_keys_locked(rl) : &(rl_heap_key_buffer){0};
    if (due) {
        rl_heap_collect_due(&m->timers, p->now, keys);
        size_t owed = 0;
        for (size_t i = 0; i < keys->count; i++)
            if (keys->items[i].sequence <= p->sequence) keys->items[owed++] = keys->items[i];
        keys->count = owed;
    }
    sort_displaced(p->displaced, p->displaced_count);
    size_t total = (due ? keys->count : 0) + p->displaced_count;
    size_t room = due && rl_ptr_array_reserve(due, total) ? total : due ? due->capacity : 0;
    size_t k = 0, d = 0;
    while (due && due->count < room && (k < keys->count || d < p->displaced_count)) {
        bool take_key =
            d == p->displaced_count || (k < keys->count && rl_heap_key_before(&keys->items[k], &p->displaced[d].key));
        if (take_key) {
            rl_timer_slot *slot = rl_heap_item(&m->timers, keys->items[k++].handle);
            RLRetain(rl_timer_slot_timer(slot));
            due->items[due->count++] = rl_timer_slot_timer(slot);
        } else {
            due->items[due->count++] = p->displaced[d++].timer; /* its retain moves over */
        }
    }
    for (; d < p->displaced_count; d++) rl_loop_release_locked(rl, p->displaced[d].timer);
    free(p->displaced);
    if (!due) return;
    /* Nested runs may move the per-depth table but never this depth's buffer. */
    void **items = due->items;
    size_t count = due->count;
    for (size_t i = 0; i < count; i++) fire(rl, m, items[i], p->now);
    for (size_t i = 0; i < count; i++) rl_loop_release_locked(rl, items[i]);
}

/* __CFRunLoopDoTimers: the timers due at the start of the pass fire in
   firing order, one at a time; each leaves the heaps only for its own
   callout, so a run nested in a callout fires the others, and a timer a
   callout adds already due does not fire in this pass. As long as nothing
   but the pass itself changes the heap, the next timer owed is the heap's
   root: popped and fired, no collecting or sorting. When a callout (or a
   nested pass, or another thread) disturbs one of the owed timers, or the
   root is not owed (added or re-dated due during the pass), or a timer is
   found not to be firable, the rest of the pass is collected in order as CF
   does (fire_the_rest): the same timers, in the same order, with the same
   checks. Returns whether any timer was due: the pass then handled the
   timers, its one wake-up source. */
bool rl_do_timers(RLRunLoopRef rl, rl_mode *m) {
    const rl_heap_entry *top = rl_heap_top(&m->timers);
    if (!top) return false;
    int64_t now = rl_loop_now(rl);
    if (top->deadline_ns > now) return false;
    rl_timer_pass pass = {.now = now, .sequence = rl->timers.sequence, .outer = m->timer_passes};
    m->timer_passes = &pass;
    bool rest = false;
    while ((top = rl_heap_top(&m->timers)) && top->deadline_ns <= now) {
        if (pass.displaced_count || pass.displaced_lost ||
            rl_heap_sequence_of(&m->timers, top->handle) > pass.sequence) {
            rest = true;
            break;
        }
        rl_timer_slot *slot = rl_heap_item(&m->timers, top->handle);
        RLRunLoopTimerRef t = rl_timer_slot_timer(slot);
        /* The next timer is usually the next root: its cache misses overlap
           this one's callout instead of following it. */
        const rl_heap_entry *next = rl_heap_second(&m->timers);
        if (next) prefetch_timer_of(rl_heap_item(&m->timers, next->handle));
        RLRetain(t);
        pass.own = slot;
        bool ok = fire(rl, m, t, now);
        pass.own = NULL;
        rl_loop_release_locked(rl, t);
        if (!ok) {
            rest = true;
            break;
        }
    }
    m->timer_passes = pass.outer;
    if (rest || pass.displaced_count) fire_the_rest(rl, m, &pass);
    else free(pass.displaced);
    return true;
}
