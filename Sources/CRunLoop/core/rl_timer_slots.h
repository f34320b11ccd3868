/*
 * rl_timer_slots.h: what the timer's two files share: rl_timer.c (the timer, its
 * dates and its slots in the modes' heaps) and rl_timer_fire.c (firing the
 * due timers of a mode). "_locked": the caller holds the loop's lock and the
 * timer's.
 */
#ifndef RL_TIMER_SLOTS_H
#define RL_TIMER_SLOTS_H

#include "rl_internal.h"

/* The timer's slots: its own first (if used), then those in its extra part.
   Timer locked (or its loop). */
static inline rl_timer_slot *rl_timer_slot_at(RLRunLoopTimerRef t, size_t i) {
    if (t->slot.mode) {
        if (i == 0) return &t->slot;
        i--;
    }
    return rl_timer_extra_of(t)->more_slots[i];
}

/* Locks the loop the timer is in (if any) and the timer; returns the loop. */
RLRunLoopRef rl_timer_lock_with_loop(RLRunLoopTimerRef t);
void rl_timer_unlock_with_loop(RLRunLoopTimerRef t, RLRunLoopRef rl);
/* Releases the context's info (once); no lock held. */
void rl_timer_release_info(RLRunLoopTimerRef t);
/* How late a timer scheduled `ahead_ns` before its date may fire (rl_timer.c). */
uint32_t rl_timer_implicit_leeway(int64_t ahead_ns);
/* Puts a slot into its mode's heap after its equals, with `leeway`. */
bool rl_timer_schedule_slot_locked(RLRunLoopTimerRef t, rl_timer_slot *slot, uint32_t leeway);
/* Takes a slot out of its mode's heap, if it is there. */
void rl_timer_unschedule_slot_locked(rl_timer_slot *slot);
/* Takes the timer out of every mode of rl and out of rl. */
void rl_timer_remove_everywhere_locked(RLRunLoopRef rl, RLRunLoopTimerRef t);

/* The mode's list of slots whose timer's callout runs (rl_timer.c says why):
   room for `count` of them; false when out of memory. Loop locked. */
bool rl_timer_firing_room_locked(rl_mode *m, uint32_t count);
/* Lists a slot whose timer begins firing (unlisted out of memory). */
static inline void rl_timer_list_firing_locked(rl_timer_slot *slot) {
    rl_mode *m = slot->mode;
    if (m->firing_count < m->firing_capacity || rl_timer_firing_room_locked(m, m->firing_count + 1))
        m->firing[m->firing_count++] = slot;
}

/* Takes the slot off its mode's list if it is there: usually the last, as
   nested firings end innermost first. */
static inline void rl_timer_unlist_firing_locked(rl_timer_slot *slot) {
    rl_mode *m = slot->mode;
    for (uint32_t i = m->firing_count; i-- > 0;)
        if (m->firing[i] == slot) {
            m->firing[i] = m->firing[--m->firing_count];
            return;
        }
}

/* A timer a pass owes a firing to, with the key it had when the pass began. */
typedef struct {
    rl_heap_key key;
    RLRunLoopTimerRef timer; /* retained */
} displaced_timer;

/* A pass firing a mode's timers (rl_do_timers), on its C stack. The timers
   it owes a firing to are those due at its start: the heap entries with
   deadline <= now and sequence <= sequence (nothing (re)scheduled since has a
   smaller sequence). It pops them off the heap in order; one of them taken
   out or re-keyed by anything else (a callout, a nested pass, another
   thread) before its turn loses its key, so it is noted here, retained,
   with the key it had. Under the lock of the mode's loop. */
typedef struct rl_timer_pass {
    int64_t now;
    uint64_t sequence;
    rl_timer_slot *own; /* the slot the pass is firing: its removal is the pass's own pop */
    displaced_timer *displaced;
    size_t displaced_count, displaced_capacity;
    bool displaced_lost; /* out of memory: a displaced timer waits for a later pass */
    struct rl_timer_pass *outer;
} rl_timer_pass;

#endif
