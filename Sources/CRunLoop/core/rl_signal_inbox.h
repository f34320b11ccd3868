/*
 * rl_signal_inbox.h: the signalled version-0 sources of each loop
 * (rl_signal_inbox.c), for rl_source.c. "_locked": the loop's lock is held.
 */
#ifndef RL_SIGNAL_INBOX_H
#define RL_SIGNAL_INBOX_H

#include "rl_internal.h"

/* ---- signalled version-0 sources ------------------------------------------ */
/* One per version-0 source per loop that holds it (in any mode or in the
   common items): what a signal hands that loop, so a pass looks at the
   signalled sources only, never at every registered one (rl_signal_inbox.c).
   Made when the source joins the loop, freed when it leaves; `queued` says it
   is in the loop's inbox (`pushed`) or in its `signalled` list (never both, never twice). */
struct rl_signal_link {
    rl_signal_link *inbox_next; /* written by the signaller that pushes it */
    RLRunLoopSourceRef source;
    RLRunLoopRef loop;
    _Atomic bool queued;
    size_t listed_at; /* its place in loop->inbox.signalled; RL_NOT_LISTED if not there (loop lock) */
};
#define RL_NOT_LISTED SIZE_MAX

/* Pushes a link onto its loop's inbox; any thread, the source locked. */
void rl_signal_inbox_push(RLRunLoopRef rl, rl_signal_link *link);
/* Gives a version-0 source its link in rl, before its first membership
   there; source locked too; false when out of memory. */
bool rl_signal_inbox_link_join_locked(RLRunLoopRef rl, RLRunLoopSourceRef s);
/* Frees the source's link in rl once it has no membership left there;
   source locked too. */
void rl_signal_inbox_link_leave_locked(RLRunLoopRef rl, RLRunLoopSourceRef s);
/* Fills `ready` with the mode's nodes of the loop's valid signalled sources
   in performing order (only the first when stop_after_one). */
void rl_signal_inbox_collect_locked(RLRunLoopRef rl, rl_mode *m, bool stop_after_one, rl_ptr_array *ready);
/* Whether a valid signalled source of m waits to perform. */
bool rl_signal_inbox_has_signalled_locked(RLRunLoopRef rl, rl_mode *m);
/* The loop's finalization (its links left with their sources). */
void rl_signal_inbox_free(RLRunLoopRef rl);
/* Nothing signalled in the loop since its last look: the pass skips sources. */
static inline bool rl_signal_inbox_is_empty_locked(RLRunLoopRef rl) {
    return rl->inbox.signalled.count == 0 && !atomic_load_explicit(&rl->inbox.pushed, memory_order_relaxed);
}

#endif
