/*
 * rl_source.c: version-0 sources (signalled by hand) and version-1 sources
 * (a file descriptor watched for readability).
 *
 * Invariants: a mode's sources0 set is ordered by order, ties in the order
 * added, and holds one reference per entry; a version-1 membership is one
 * entry of the mode's v1 list (naming the loop's one registration of the
 * source, rl_wait_set.c) holding one reference. `loops` has one entry per
 * membership (each mode, and the loop's common items), changed only with
 * `valid` checked under the source's lock.
 * schedule/cancel callouts run with no lock held (rl_callback_list.c). Which
 * version-0 sources are signalled, per loop, is rl_signal_inbox.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "rl_callback_list.h"
#include "rl_signal_inbox.h"

static void finalize_source(rl_object *obj);
const rl_class rl_source_class = {"RLRunLoopSource", finalize_source, rl_description_of_source};

RLRunLoopSourceRef RLRunLoopSourceCreate(RLIndex order, RLRunLoopSourceContext *context) {
    RLIndex version = context ? rl_context_version(context->version) : -1;
    if (version != 0 && version != 1) return NULL;
    RLRunLoopSourceRef s = calloc(1, sizeof *s);
    if (!s) return NULL;
    rl_object_init(&s->base, &rl_source_class);
    rl_item_lock_init(&s->lock);
    s->order = order;
    s->version = version;
    if (s->version == 0) s->context.v0 = *context;
    else s->context.v1 = *(RLRunLoopSourceContext1 *)context;
    atomic_init(&s->valid, true);
    atomic_init(&s->signalled, false);
    atomic_init(&s->signalled_at, 0);
    atomic_init(&s->unqueued_links, 0);
    atomic_init(&s->watch_events, EPOLLIN);
    atomic_init(&s->explicit_events, false);
    /* As CF: retain whenever it is set, NULL info included; release once,
       when the source is freed (finalize_source). */
    if (s->context.v0.retain) s->context.v0.info = (void *)s->context.v0.retain(s->context.v0.info);
    return s;
}

static void finalize_source(rl_object *obj) {
    RLRunLoopSourceRef s = (RLRunLoopSourceRef)obj;
    if (s->context.v0.release) s->context.v0.release(s->context.v0.info);
    rl_ptr_array_free(&s->loops);
    rl_ptr_array_free(&s->signal_links); /* empty: links leave with the last membership */
    free(s);
}

RLIndex RLRunLoopSourceGetOrder(RLRunLoopSourceRef source) {
    return source ? source->order : 0;
}

bool RLRunLoopSourceIsValid(RLRunLoopSourceRef source) {
    return source && atomic_load(&source->valid);
}

void RLRunLoopSourceSignal(RLRunLoopSourceRef source) {
    if (!source || source->version != 0 || !atomic_load(&source->valid)) return;
    /* An exchange, not a test first: it orders what the caller wrote before
       the signal with the perform that clears the flag. */
    if (atomic_exchange(&source->signalled, true)) return;
    RL_PROBE2(source_signal, source, source->context.v0.perform);
    /* Only the edge is stamped (signalling again keeps the first time): a
       pass performs sources of equal order earliest-signalled first, as CF.
       Stamped before the link is pushed, so the pass that takes the link
       reads this time. */
    atomic_store_explicit(&source->signalled_at, rl_mono_now(), memory_order_relaxed);
    if (atomic_load(&source->unqueued_links) == 0) return;
    rl_item_lock_acquire(&source->lock);
    if (!atomic_load(&source->valid)) {
        atomic_store(&source->signalled, false); /* invalidated meanwhile: it never performs */
    } else {
        for (size_t i = 0; i < source->signal_links.count; i++) {
            rl_signal_link *link = source->signal_links.items[i];
            if (atomic_exchange(&link->queued, true)) continue;
            atomic_fetch_sub(&source->unqueued_links, 1);
            rl_signal_inbox_push(link->loop, link);
        }
    }
    rl_item_lock_release(&source->lock);
}

void RLRunLoopSourceGetContext(RLRunLoopSourceRef source, RLRunLoopSourceContext *context) {
    if (!source || !context) return;
    if (source->version == 0) *context = source->context.v0;
    else *(RLRunLoopSourceContext1 *)context = source->context.v1;
}

/* ---- membership ---------------------------------------------------------- */

/* Where m lists s among its version-1 sources, -1 if it does not. */
static long v1_position(RLRunLoopRef rl, const rl_mode *m, RLRunLoopSourceRef s) {
    (void)rl;
    return rl_index_map_get(&m->v1_positions, (uintptr_t)s);
}

static bool mode_contains_source(RLRunLoopRef rl, const rl_mode *m, RLRunLoopSourceRef s) {
    if (s->version == 0) return rl_item_set_contains(&m->sources0, s);
    return v1_position(rl, m, s) >= 0;
}

bool rl_source_in_mode_locked(RLRunLoopRef rl, const rl_mode *m, RLRunLoopSourceRef s) {
    return mode_contains_source(rl, m, s);
}

static bool add_source0(rl_mode *m, RLRunLoopSourceRef s) {
    return rl_item_set_insert(&m->sources0, s, s->order);
}

/* One registration per loop, shared by the modes that hold the source; it
   is armed while the loop waits in one of them. A bad fd leaves the source
   in the mode, unwatched: it never fires. */
static bool add_source1(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, int fd) {
    size_t v1_capacity = m->v1_capacity;
    if (!rl_array_reserve(&m->v1, sizeof *m->v1, &v1_capacity, (size_t)m->v1_count + 1, 4)) return false;
    m->v1_capacity = (uint32_t)v1_capacity;
    if (!rl_index_map_reserve(&m->v1_positions, m->v1_count + 1)) return false;
    bool armed = m == rl->wait_set.armed_mode;
    long reg = rl_wait_set_reg_find_locked(rl, s);
    if (reg < 0) reg = rl_wait_set_reg_add_locked(rl, s, fd, armed);
    else if (armed) rl_wait_set_reg_set_armed_locked(rl, reg, true);
    if (reg < 0) return false;
    rl->wait_set.regs[reg].modes++;
    rl_index_map_put(&m->v1_positions, (uintptr_t)s, m->v1_count); /* room reserved above */
    m->v1[m->v1_count++] = (uint32_t)reg;
    return true;
}

void rl_source_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, rl_callback_list *scheduled) {
    if (mode_contains_source(rl, m, s)) return;
    /* Asked outside the source's lock, once per loop (the modes share the
       registration): user code may call back into the API. */
    int fd = -1;
    if (s->version == 1 && s->context.v1.getFileDescriptor && rl_wait_set_reg_find_locked(rl, s) < 0)
        fd = s->context.v1.getFileDescriptor(s->context.v1.info);
    /* Room for the schedule callout first: out of memory, nothing changes. */
    if (s->version == 0 && scheduled && !rl_callback_list_reserve(scheduled, scheduled->count + 1)) return;
    rl_item_lock_acquire(&s->lock);
    bool ok = atomic_load(&s->valid) && rl_ptr_array_reserve(&s->loops, s->loops.count + 1) &&
              rl_signal_inbox_link_join_locked(rl, s);
    if (ok) ok = s->version == 0 ? add_source0(m, s) : add_source1(rl, m, s, fd);
    if (ok) rl_ptr_array_append(&s->loops, rl);
    else rl_signal_inbox_link_leave_locked(rl, s); /* a link just made for this membership */
    rl_item_lock_release(&s->lock);
    if (!ok) return;
    RLRetain(s);
    if (s->version == 0 && scheduled) rl_callback_list_add(scheduled, m, s);
}

static bool remove_source1(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s) {
    long pos = v1_position(rl, m, s);
    if (pos < 0) return false;
    uint32_t reg = m->v1[pos];
    m->v1[pos] = m->v1[--m->v1_count];
    rl_index_map_delete(&m->v1_positions, (uintptr_t)s);
    if ((uint32_t)pos < m->v1_count) /* the last one moved into its place */
        rl_index_map_put(&m->v1_positions, (uintptr_t)rl->wait_set.regs[m->v1[pos]].source, (uint32_t)pos);
    if (--rl->wait_set.regs[reg].modes == 0) rl_wait_set_reg_remove_locked(rl, reg);
    else if (m == rl->wait_set.armed_mode) rl_wait_set_reg_set_armed_locked(rl, reg, false);
    return true;
}

bool rl_source_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, rl_callback_list *cancelled) {
    if (s->version == 0 && cancelled && !rl_callback_list_reserve(cancelled, cancelled->count + 1) &&
        mode_contains_source(rl, m, s)) {
        /* Out of memory with the inline entries used: run the cancels owed
           so far (unlocked, as always), then go on; callers re-read the loop
           after this call. */
        RLRetain(s);
        rl_loop_unlock(rl);
        rl_callback_list_run_cancel(rl, cancelled);
        rl_loop_lock(rl);
        rl_loop_release_locked(rl, s);
    }
    bool removed = s->version == 0 ? rl_item_set_remove(&m->sources0, s) : remove_source1(rl, m, s);
    if (!removed) return false;
    rl->removals++;
    rl_item_lock_acquire(&s->lock);
    rl_ptr_array_remove(&s->loops, rl);
    rl_signal_inbox_link_leave_locked(rl, s);
    rl_item_lock_release(&s->lock);
    if (s->version == 0 && cancelled) rl_callback_list_add(cancelled, m, s);
    rl_loop_release_locked(rl, s);
    return true;
}

/* Joins the loop's common items; the membership is in the source's bag too,
   checked against `valid` under the source's lock, so an invalidation racing
   with this add either sees the loop or makes the add fail. Loop locked. */
static bool add_common(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    if (!rl_item_set_insert(&rl->common_sources, s, 0)) return false; /* already there, or no memory */
    rl_item_lock_acquire(&s->lock);
    bool ok = atomic_load(&s->valid) && rl_ptr_array_reserve(&s->loops, s->loops.count + 1) &&
              rl_signal_inbox_link_join_locked(rl, s);
    if (ok) rl_ptr_array_append(&s->loops, rl);
    else rl_signal_inbox_link_leave_locked(rl, s);
    rl_item_lock_release(&s->lock);
    if (!ok) {
        rl_item_set_remove(&rl->common_sources, s);
        return false;
    }
    RLRetain(s);
    return true;
}

/* Leaves the loop's common items (not the modes). Loop locked. */
bool rl_source_remove_common_locked(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    if (!rl_item_set_remove(&rl->common_sources, s)) return false;
    rl_item_lock_acquire(&s->lock);
    rl_ptr_array_remove(&s->loops, rl);
    rl_signal_inbox_link_leave_locked(rl, s);
    rl_item_lock_release(&s->lock);
    rl_loop_release_locked(rl, s);
    return true;
}

void RLRunLoopAddSource(RLRunLoopRef rl, RLRunLoopSourceRef source, RLRunLoopMode mode) {
    if (!rl || !source || !rl_mode_name_is_valid(mode) || !atomic_load(&source->valid)) return;
    rl_callback_list scheduled = {0};
    rl_loop_lock(rl);
    if (rl->dead) {
        /* its thread is gone: nothing would ever service the source */
    } else if (rl_mode_name_is_common(mode)) {
        if (add_common(rl, source)) {
            for (size_t i = 0; i < rl->mode_count; i++) {
                if (!rl->modes[i]->is_common) continue;
                rl_source_add_to_mode_locked(rl, rl->modes[i], source, &scheduled);
                if (!mode_contains_source(rl, rl->modes[i], source)) rl->modes[i]->common_incomplete = true;
            }
        }
    } else {
        rl_mode *m = rl_mode_find_or_create(rl, mode);
        if (m) rl_source_add_to_mode_locked(rl, m, source, &scheduled);
    }
    rl_loop_unlock(rl);
    rl_callback_list_run_schedule(rl, &scheduled);
}

void RLRunLoopRemoveSource(RLRunLoopRef rl, RLRunLoopSourceRef source, RLRunLoopMode mode) {
    if (!rl || !source || !rl_mode_name_is_valid(mode)) return;
    rl_callback_list cancelled = {0};
    rl_loop_lock(rl);
    if (rl_mode_name_is_common(mode)) {
        if (rl_source_remove_common_locked(rl, source)) {
            for (size_t i = 0; i < rl->mode_count; i++)
                if (rl->modes[i]->is_common) rl_source_remove_from_mode_locked(rl, rl->modes[i], source, &cancelled);
        }
    } else {
        rl_mode *m = rl_mode_find(rl, mode);
        if (m) rl_source_remove_from_mode_locked(rl, m, source, &cancelled);
    }
    rl_loop_unlock(rl);
    rl_callback_list_run_cancel(rl, &cancelled);
}

bool RLRunLoopContainsSource(RLRunLoopRef rl, RLRunLoopSourceRef source, RLRunLoopMode mode) {
    if (!rl || !source || !rl_mode_name_is_valid(mode)) return false;
    bool found = false;
    rl_loop_lock(rl);
    if (rl_mode_name_is_common(mode)) {
        found = rl_item_set_contains(&rl->common_sources, source);
    } else {
        rl_mode *m = rl_mode_find(rl, mode);
        found = m && mode_contains_source(rl, m, source);
    }
    rl_loop_unlock(rl);
    return found;
}

/* Removes the source from every mode of one loop; loop locked. */
static void remove_from_loop(RLRunLoopRef rl, RLRunLoopSourceRef s, rl_callback_list *cancelled) {
    rl_source_remove_common_locked(rl, s);
    for (size_t i = 0; i < rl->mode_count; i++) rl_source_remove_from_mode_locked(rl, rl->modes[i], s, cancelled);
}

void RLRunLoopSourceInvalidate(RLRunLoopSourceRef source) {
    if (!source) return;
    RLRetain(source);
    for (;;) {
        rl_item_lock_acquire(&source->lock);
        atomic_store(&source->valid, false);
        atomic_store(&source->signalled, false);
        RLRunLoopRef rl = source->loops.count ? source->loops.items[0] : NULL;
        if (rl) RLRetain(rl); /* alive: it is listed, see rl_internal.h */
        rl_item_lock_release(&source->lock);
        if (!rl) break;
        rl_callback_list cancelled = {0};
        rl_loop_lock(rl);
        remove_from_loop(rl, source, &cancelled);
        rl_loop_unlock(rl);
        rl_callback_list_run_cancel(rl, &cancelled);
        RLRelease(rl);
    }
    RLRelease(source);
}

/* ---- what a version-1 source watches ------------------------------------- */

/* Applies the source's watched events in every loop that holds it. */
static void refresh_in_loops(RLRunLoopSourceRef s) {
    RLRunLoopRef few[8];
    RLRunLoopRef *loops = few;
    size_t n = 0;
    rl_item_lock_acquire(&s->lock);
    size_t count = s->loops.count;
    if (count > 8) loops = malloc(count * sizeof *loops);
    for (size_t i = 0; loops && i < count; i++) {
        RLRunLoopRef rl = s->loops.items[i];
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = loops[k] == rl;
        if (!seen) loops[n++] = (RLRunLoopRef)RLRetain(rl); /* alive: listed, see rl_internal.h */
    }
    rl_item_lock_release(&s->lock);
    for (size_t i = 0; i < n; i++) {
        RLRunLoopRef rl = loops[i];
        rl_loop_lock(rl);
        long reg = rl_wait_set_reg_find_locked(rl, s);
        bool wake = reg >= 0 && rl_wait_set_reg_refresh_locked(rl, reg);
        rl_loop_unlock(rl);
        if (wake) RLRunLoopWakeUp(rl);
        RLRelease(rl);
    }
    if (loops != few) free(loops);
}

void RLRunLoopSourceSetWatchedEvents(RLRunLoopSourceRef source, RLOptionFlags events) {
    if (!source || source->version != 1 || !atomic_load(&source->valid)) return;
    uint32_t ev = 0;
    if (events & kRLRunLoopSourceReadable) ev |= EPOLLIN;
    if (events & kRLRunLoopSourceWritable) ev |= EPOLLOUT;
    atomic_store(&source->explicit_events, true);
    if (atomic_exchange(&source->watch_events, ev) == ev) return; /* no change: no system call */
    refresh_in_loops(source);
}

/* ---- performing ---------------------------------------------------------- */

/* __CFRunLoopDoSources0 */
bool rl_do_sources0(RLRunLoopRef rl, rl_mode *m, bool stop_after_one) {
    if (rl_signal_inbox_is_empty_locked(rl)) return false;
    rl_ptr_array *ready = rl_scratch_items_locked(rl);
    if (!ready) return false;
    rl_signal_inbox_collect_locked(rl, m, stop_after_one, ready);
    if (ready->count == 0) return false;
    for (size_t i = 0; i < ready->count; i++) { /* the nodes may go with a removal once unlocked */
        RLRunLoopSourceRef s = ((rl_item_node *)ready->items[i])->item;
        RLRetain(s);
        ready->items[i] = s;
    }
    /* Nested runs may move the per-depth table but never this depth's buffer. */
    void **items = ready->items;
    size_t count = ready->count;
    bool handled = false;
    rl_loop_unlock(rl);
    /* As CF: what was collected performs if still valid and signalled, even
       if an earlier perform of this pass removed it from the mode. */
    for (size_t i = 0; i < count; i++) {
        RLRunLoopSourceRef s = items[i];
        if (atomic_load(&s->valid) && atomic_exchange(&s->signalled, false)) {
            RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION(rl, s->context.v0.perform, s->context.v0.info);
            handled = true;
        }
    }
    rl_loop_relock(rl);
    for (size_t i = 0; i < count; i++) rl_loop_release_locked(rl, items[i]);
    return handled;
}

/* The version-1 perform this thread is in, and what its fd was ready for. */
typedef struct {
    RLRunLoopSourceRef source;
    RLOptionFlags ready;
} perform_state;
static _Thread_local perform_state performing;

/* poll()'s view: a hang-up or an error is readiness for both. */
static RLOptionFlags ready_flags(uint32_t events) {
    RLOptionFlags f = 0;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLPRI | EPOLLHUP | EPOLLERR)) f |= kRLRunLoopSourceReadable;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) f |= kRLRunLoopSourceWritable;
    return f;
}

RLOptionFlags RLRunLoopSourceGetReadyEvents(RLRunLoopSourceRef source) {
    return source && performing.source == source ? performing.ready : 0;
}

static RLRunLoopSourceRef live_source_of(RLRunLoopRef rl, uint64_t token) {
    if (token == RL_EVENT_WAKE || token == RL_EVENT_TIMER || token == RL_EVENT_DISARMED) return NULL;
    uint32_t index = (uint32_t)token;
    if (index >= rl->wait_set.reg_capacity) return NULL;
    const rl_v1_reg *r = &rl->wait_set.regs[index];
    if (!r->source || !r->armed || r->generation != (uint32_t)(token >> 32)) return NULL;
    return atomic_load(&r->source->valid) ? r->source : NULL;
}

bool rl_source1_token_is_live(RLRunLoopRef rl, uint64_t token) {
    return live_source_of(rl, token) != NULL;
}

/* __CFRunLoopDoSource1 */
bool rl_do_source1(RLRunLoopRef rl, rl_mode *m, uint64_t token, uint32_t events) {
    (void)m; /* armed registrations are exactly m's */
    RLRunLoopSourceRef s = live_source_of(rl, token);
    if (!s) return false;
    RLRetain(s);
    rl_loop_unlock(rl);
    perform_state outer = performing; /* a nested run may perform another source */
    performing.source = s;
    performing.ready = ready_flags(events);
    if (s->context.v1.perform)
        RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION(rl, s->context.v1.perform, s->context.v1.info);
    performing = outer;
    rl_loop_relock(rl);
    rl_loop_release_locked(rl, s);
    return true;
}

/* ---- a source an object makes once ---------------------------------------- */

RLRunLoopSourceRef rl_cached_source_copy(pthread_mutex_t *lock, RLRunLoopSourceRef *cache,
                                         bool (*is_valid)(const void *owner), const void *owner, RLIndex order,
                                         const RLRunLoopSourceContext1 *context) {
    pthread_mutex_lock(lock);
    bool valid = is_valid(owner);
    RLRunLoopSourceRef s = valid ? *cache : NULL;
    if (s) RLRetain(s);
    pthread_mutex_unlock(lock);
    if (s || !valid) return s;

    /* Made outside the owner's lock: the core never runs with it held. */
    RLRunLoopSourceContext1 copy = *context;
    RLRunLoopSourceRef made = RLRunLoopSourceCreate(order, (RLRunLoopSourceContext *)&copy);
    if (!made) return NULL;
    pthread_mutex_lock(lock);
    if (is_valid(owner) && !*cache) {
        *cache = made;
        made = NULL;
    }
    s = is_valid(owner) ? *cache : NULL;
    if (s) RLRetain(s);
    pthread_mutex_unlock(lock);
    if (made) { /* lost a race with another call or with invalidation */
        RLRunLoopSourceInvalidate(made);
        RLRelease(made);
    }
    return s;
}
