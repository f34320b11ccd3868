/*
 * rl_observer.c: observers of a loop's activities.
 *
 * Invariants: a mode's observers set is ordered by order, ties in the order
 * added, one reference per entry; an observer is in at most one loop (`rl`),
 * `memberships` counts its modes plus the common set. An observer is never
 * re-entered: `firing` (atomic, since the callout may move the observer to
 * another loop) keeps nested runs, and that other loop, from calling it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "rl_internal.h"

static void finalize_observer(rl_object *obj);
const rl_class rl_observer_class = {"RLRunLoopObserver", finalize_observer, rl_description_of_observer};

RLRunLoopObserverRef RLRunLoopObserverCreate(RLOptionFlags activities, bool repeats, RLIndex order,
                                             RLRunLoopObserverCallBack callout, RLRunLoopObserverContext *context) {
    if (!callout) return NULL;
    RLRunLoopObserverRef o = calloc(1, sizeof *o);
    if (!o) return NULL;
    rl_object_init(&o->base, &rl_observer_class);
    rl_item_lock_init(&o->lock);
    o->activities = activities;
    o->repeats = repeats;
    o->order = order;
    o->callout = callout;
    atomic_init(&o->valid, true);
    if (context) {
        o->context = *context;
        if (o->context.retain) o->context.info = (void *)o->context.retain(o->context.info); /* NULL info too */
    }
    return o;
}

static void release_info(RLRunLoopObserverRef o) {
    rl_release_info_once(&o->lock, &o->info_released, o->context.release, o->context.info);
}

/* Invalidation releases info at once, unless the observer's callout is
   running (on any thread): then the callout's end releases it, so the
   callout never sees info released under it by another thread. `firing` is
   set before the callout re-checks `valid`, and `valid` cleared before this
   reads `firing`: one of the two sees the other. */
static void release_info_unless_firing(RLRunLoopObserverRef o) {
    rl_item_lock_acquire(&o->lock);
    bool defer = atomic_load(&o->firing);
    if (defer) o->release_after_firing = true;
    rl_item_lock_release(&o->lock);
    if (!defer) release_info(o);
}

/* After a callout (or a claim that found the observer invalidated): ends
   the firing and releases info if an invalidation left that to it. */
static void end_firing(RLRunLoopObserverRef o) {
    rl_item_lock_acquire(&o->lock);
    atomic_store(&o->firing, false);
    bool release_now = o->release_after_firing;
    o->release_after_firing = false;
    rl_item_lock_release(&o->lock);
    if (release_now) release_info(o);
}

static void finalize_observer(rl_object *obj) {
    RLRunLoopObserverRef o = (RLRunLoopObserverRef)obj;
    release_info(o);
    free(o);
}

RLOptionFlags RLRunLoopObserverGetActivities(RLRunLoopObserverRef observer) {
    return observer ? observer->activities : 0;
}

bool RLRunLoopObserverDoesRepeat(RLRunLoopObserverRef observer) {
    return observer && observer->repeats;
}

RLIndex RLRunLoopObserverGetOrder(RLRunLoopObserverRef observer) {
    return observer ? observer->order : 0;
}

bool RLRunLoopObserverIsValid(RLRunLoopObserverRef observer) {
    return observer && atomic_load(&observer->valid);
}

void RLRunLoopObserverGetContext(RLRunLoopObserverRef observer, RLRunLoopObserverContext *context) {
    if (observer && context) *context = observer->context;
}

/* ---- membership ---------------------------------------------------------- */

/* Claims the observer for `rl`; false if it is invalid or in another loop. */
static bool claim(RLRunLoopRef rl, RLRunLoopObserverRef o) {
    rl_item_lock_acquire(&o->lock);
    bool ok = atomic_load(&o->valid) && (o->rl == NULL || o->rl == rl);
    if (ok) {
        if (o->rl == NULL) o->round_loop = NULL; /* a new loop's rounds start afresh */
        o->rl = rl;
        o->memberships++;
    }
    rl_item_lock_release(&o->lock);
    return ok;
}

static void unclaim(RLRunLoopObserverRef o) {
    rl_item_lock_acquire(&o->lock);
    if (--o->memberships == 0) o->rl = NULL;
    rl_item_lock_release(&o->lock);
}

void rl_observer_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o) {
    if (rl_item_set_contains(&m->observers, o) || !claim(rl, o)) return;
    if (!rl_item_set_insert(&m->observers, o, o->order)) {
        unclaim(o);
        return;
    }
    RLRetain(o);
    m->observer_mask |= o->activities;
}

bool rl_observer_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopObserverRef o) {
    if (!rl_item_set_remove(&m->observers, o)) return false;
    rl->removals++;
    unclaim(o);
    rl_loop_release_locked(rl, o);
    return true;
}

void RLRunLoopAddObserver(RLRunLoopRef rl, RLRunLoopObserverRef observer, RLRunLoopMode mode) {
    if (!rl || !observer || !rl_mode_name_is_valid(mode)) return;
    rl_loop_lock(rl);
    if (rl->dead) {
        /* nothing would ever call it */
    } else if (rl_mode_name_is_common(mode)) {
        if (!rl_item_set_contains(&rl->common_observers, observer) && claim(rl, observer)) {
            if (rl_item_set_insert(&rl->common_observers, observer, 0)) {
                RLRetain(observer);
                for (size_t i = 0; i < rl->mode_count; i++) {
                    if (!rl->modes[i]->is_common) continue;
                    rl_observer_add_to_mode_locked(rl, rl->modes[i], observer);
                    if (!rl_item_set_contains(&rl->modes[i]->observers, observer))
                        rl->modes[i]->common_incomplete = true; /* out of memory: retried */
                }
            } else {
                unclaim(observer);
            }
        }
    } else {
        rl_mode *m = rl_mode_find_or_create(rl, mode);
        if (m) rl_observer_add_to_mode_locked(rl, m, observer);
    }
    rl_loop_unlock(rl);
}

static void remove_common(RLRunLoopRef rl, RLRunLoopObserverRef o) {
    if (!rl_item_set_remove(&rl->common_observers, o)) return;
    for (size_t i = 0; i < rl->mode_count; i++)
        if (rl->modes[i]->is_common) rl_observer_remove_from_mode_locked(rl, rl->modes[i], o);
    unclaim(o);
    rl_loop_release_locked(rl, o);
}

void RLRunLoopRemoveObserver(RLRunLoopRef rl, RLRunLoopObserverRef observer, RLRunLoopMode mode) {
    if (!rl || !observer || !rl_mode_name_is_valid(mode)) return;
    rl_loop_lock(rl);
    if (rl_mode_name_is_common(mode)) {
        remove_common(rl, observer);
    } else {
        rl_mode *m = rl_mode_find(rl, mode);
        if (m) rl_observer_remove_from_mode_locked(rl, m, observer);
    }
    rl_loop_unlock(rl);
}

bool RLRunLoopContainsObserver(RLRunLoopRef rl, RLRunLoopObserverRef observer, RLRunLoopMode mode) {
    if (!rl || !observer || !rl_mode_name_is_valid(mode)) return false;
    bool found;
    rl_loop_lock(rl);
    if (rl_mode_name_is_common(mode)) {
        found = rl_item_set_contains(&rl->common_observers, observer);
    } else {
        rl_mode *m = rl_mode_find(rl, mode);
        found = m && rl_item_set_contains(&m->observers, observer);
    }
    rl_loop_unlock(rl);
    return found;
}

void RLRunLoopObserverInvalidate(RLRunLoopObserverRef observer) {
    if (!observer) return;
    RLRetain(observer);
    rl_item_lock_acquire(&observer->lock);
    bool was_valid = atomic_exchange(&observer->valid, false);
    RLRunLoopRef rl = observer->rl;
    if (rl) RLRetain(rl); /* alive: it holds the observer, see rl_internal.h */
    rl_item_lock_release(&observer->lock);
    if (rl) {
        rl_loop_lock(rl);
        remove_common(rl, observer);
        for (size_t i = 0; i < rl->mode_count; i++) rl_observer_remove_from_mode_locked(rl, rl->modes[i], observer);
        rl_loop_unlock(rl);
        RLRelease(rl);
    }
    if (was_valid) release_info_unless_firing(observer);
    RLRelease(observer);
}

/* ---- calling out --------------------------------------------------------- */

/* __CFRunLoopDoObservers */
/* Collects into `due` the observers of `activity` not yet called in this
   round; true when it stopped early for lack of memory (the rest wait for
   the next chunk of the same round). Loop locked. */
static bool collect_observers(RLRunLoopRef rl, rl_mode *m, RLRunLoopActivity activity, uint64_t round,
                              rl_ptr_array *due) {
    RL_ITEM_SET_FOREACH(node, &m->observers) {
        RLRunLoopObserverRef o = node->item;
        if (!(o->activities & activity) || atomic_load(&o->firing) || !atomic_load(&o->valid)) continue;
        if (o->round_loop == rl && o->round == round) continue;
        if (!rl_ptr_array_append(due, o)) return true;
        o->round_loop = rl;
        o->round = round;
        RLRetain(o);
    }
    return false;
}

static void call_observers(RLRunLoopRef rl, rl_mode *m, RLRunLoopActivity activity, void **items, size_t count) {
    uint64_t removals = rl->removals;
    for (size_t i = 0; i < count; i++) {
        RLRunLoopObserverRef o = items[i];
        if (!atomic_load(&o->valid)) continue;
        /* An earlier observer of this activity may have removed this one. */
        if (rl->removals != removals && !rl_item_set_contains(&m->observers, o)) continue;
        /* Claimed atomically, not under this loop's lock: the callout may
           move the observer to another loop, whose thread must see it
           firing until the callout returns, and must see it end. */
        if (atomic_exchange(&o->firing, true)) continue;
        rl_loop_unlock(rl);
        /* CF never brackets an observer callout with retain/release: the
           info is retained once at creation and released once, when the
           observer is invalidated or freed. */
        if (atomic_load(&o->valid)) { /* again, now that it is marked firing */
            RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION(rl, o->callout, o, activity, o->context.info);
            if (!o->repeats) RLRunLoopObserverInvalidate(o);
        }
        end_firing(o);
        rl_loop_relock(rl);
    }
}

/* __CFRunLoopDoObservers. Normally one batch; when memory runs short while
   collecting (more observers than the reserved scratch space), the rest are
   called in further batches of the same round, so none misses the activity
   (an observer added meanwhile may then be called in this round too). */
void rl_do_observers(RLRunLoopRef rl, rl_mode *m, RLRunLoopActivity activity) {
    if (!(m->observer_mask & activity)) return;
    uint64_t round = ++rl->observer_round;
    for (bool more = true; more;) {
        rl_ptr_array *due = rl_scratch_items_locked(rl);
        if (!due) return;
        more = collect_observers(rl, m, activity, round, due);
        if (!due->count) return;
        /* Nested runs may move the per-depth table but never this depth's buffer. */
        void **items = due->items;
        size_t count = due->count;
        call_observers(rl, m, activity, items, count);
        for (size_t i = 0; i < count; i++) rl_loop_release_locked(rl, items[i]);
    }
}
