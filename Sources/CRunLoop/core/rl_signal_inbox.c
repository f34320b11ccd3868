/*
 * rl_signal_inbox.c: which version-0 sources are signalled, per loop: each
 * (source, loop) pair's link, the loop's inbox that signals push links onto,
 * and the list a pass collects its mode's signalled sources from.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "rl_signal_inbox.h"

/* A pass performs the signalled sources of its mode, by order then the order
   each was added to that mode. CF scans every version-0 source of the mode
   for its flag; here a signal hands the source to each loop holding it, and
   a pass looks at those only: its cost follows what is signalled, not what
   is registered.

   Each (source, loop) pair has one link, made when the source joins the loop
   (so signalling never allocates) and freed when it leaves. A signal that
   turns the source's flag on pushes each link not yet `queued` onto its
   loop's inbox, a lock-free stack (many pushers; the loop takes it whole,
   under its lock). The loop moves what it takes into its `signalled` list
   and keeps each link there while its source stays signalled, whatever mode
   runs: a pass of another mode leaves it for a later one. A link is dropped
   from the list when its source is found unsignalled (performed, here or in
   another loop): `queued` is cleared first, then the flag read again, so a
   signal racing with the drop either sees `queued` off and pushes the link
   again, or is seen by the drop. Either way a signalled source of the loop
   always has its link in the inbox or in the list.

   A source counts its links that are not queued (`unqueued_links`), raised
   before anyone reads the flag to decide a link may stay unqueued, lowered
   after a link is queued. A signal that finds the count 0 has nothing to
   push and takes no lock: a source performed and signalled again while it
   stays listed (the usual case) costs its signal two atomic operations. */

void rl_signal_inbox_push(RLRunLoopRef rl, rl_signal_link *link) {
    rl_signal_link *head = atomic_load_explicit(&rl->inbox.pushed, memory_order_relaxed);
    do {
        link->inbox_next = head;
    } while (!atomic_compare_exchange_weak_explicit(&rl->inbox.pushed, &head, link, memory_order_release,
                                                    memory_order_relaxed));
}

/* Moves the inbox into the list; room was reserved when each link was made.
   Loop locked. */
static void take_inbox(RLRunLoopRef rl) {
    if (!atomic_load_explicit(&rl->inbox.pushed, memory_order_relaxed)) return;
    rl_signal_link *link = atomic_exchange_explicit(&rl->inbox.pushed, NULL, memory_order_acquire);
    while (link) {
        rl_signal_link *next = link->inbox_next;
        link->listed_at = rl->inbox.signalled.count;
        rl->inbox.signalled.items[rl->inbox.signalled.count++] = link;
        link = next;
    }
}

static void unlist(RLRunLoopRef rl, rl_signal_link *link) {
    size_t at = link->listed_at;
    rl_signal_link *last = rl->inbox.signalled.items[--rl->inbox.signalled.count];
    rl->inbox.signalled.items[at] = last;
    last->listed_at = at;
    link->listed_at = RL_NOT_LISTED;
}

/* Drops a listed link whose source was seen unsignalled, unless a signal
   came since; true if it left the list. Loop locked. */
static bool unlist_if_unsignalled(RLRunLoopRef rl, rl_signal_link *link) {
    RLRunLoopSourceRef s = link->source;
    atomic_store(&link->queued, false);
    atomic_fetch_add(&s->unqueued_links, 1);
    /* Signalled again and not yet pushed: keep it. Pushed meanwhile: it is
       in the inbox now, so it leaves the list. */
    if (atomic_load(&s->signalled) && !atomic_exchange(&link->queued, true)) {
        atomic_fetch_sub(&s->unqueued_links, 1);
        return false;
    }
    unlist(rl, link);
    return true;
}

static rl_signal_link *link_in(RLRunLoopSourceRef s, RLRunLoopRef rl) {
    for (size_t i = 0; i < s->signal_links.count; i++) {
        rl_signal_link *link = s->signal_links.items[i];
        if (link->loop == rl) return link;
    }
    return NULL;
}

/* Gives a version-0 source its link in rl, before its first membership
   there; a source signalled already is listed at once. Loop and source
   locked; false when out of memory. */
bool rl_signal_inbox_link_join_locked(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    if (s->version != 0 || link_in(s, rl)) return true;
    if (!rl_ptr_array_reserve(&rl->inbox.signalled, rl->inbox.links + 1) ||
        !rl_ptr_array_reserve(&s->signal_links, s->signal_links.count + 1))
        return false;
    rl_signal_link *link = calloc(1, sizeof *link);
    if (!link) return false;
    link->source = s;
    link->loop = rl;
    link->listed_at = RL_NOT_LISTED;
    /* Counted unqueued before the flag is read: a signal that reads the
       count 0 after this read turned the flag on before it, and is seen. */
    atomic_fetch_add(&s->unqueued_links, 1);
    bool signalled = atomic_load(&s->signalled); /* signallers push under the source's lock: none now */
    atomic_init(&link->queued, signalled);
    if (signalled) {
        atomic_fetch_sub(&s->unqueued_links, 1);
        link->listed_at = rl->inbox.signalled.count;
        rl->inbox.signalled.items[rl->inbox.signalled.count++] = link;
    }
    rl_ptr_array_append(&s->signal_links, link); /* room reserved above */
    rl->inbox.links++;
    return true;
}

/* Frees the source's link in rl once it has no membership left there.
   Loop and source locked: no signal can push the link meanwhile. */
void rl_signal_inbox_link_leave_locked(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    if (s->version != 0 || rl_ptr_array_index_of(&s->loops, rl) >= 0) return;
    rl_signal_link *link = link_in(s, rl);
    if (!link) return;
    take_inbox(rl); /* it may be there: now it is listed, or not queued */
    if (link->listed_at != RL_NOT_LISTED) unlist(rl, link);
    else atomic_fetch_sub(&s->unqueued_links, 1);
    rl_ptr_array_remove(&s->signal_links, link);
    rl->inbox.links--;
    free(link);
}

static int64_t signal_time(const rl_item_node *node) {
    const struct __RLRunLoopSource *s = node->item;
    return atomic_load_explicit(&s->signalled_at, memory_order_relaxed);
}

/* CF's order among signalled sources: by order, then the earliest signal;
   the order they joined the mode breaks what is left of a tie. */
static bool node_precedes(const rl_item_node *a, const rl_item_node *b) {
    if (a->order != b->order) return a->order < b->order;
    int64_t ta = signal_time(a), tb = signal_time(b);
    if (ta != tb) return ta < tb;
    return a->seq < b->seq;
}

static int compare_nodes(const void *a, const void *b) {
    const rl_item_node *x = *(rl_item_node *const *)a, *y = *(rl_item_node *const *)b;
    return node_precedes(x, y) ? -1 : node_precedes(y, x) ? 1 : 0;
}

/* Fills `ready` with the mode's nodes of the loop's valid signalled sources
   (only the first by order when stop_after_one), dropping from the list the
   links of sources no longer signalled. Loop locked. */
void rl_signal_inbox_collect_locked(RLRunLoopRef rl, rl_mode *m, bool stop_after_one, rl_ptr_array *ready) {
    take_inbox(rl);
    rl_item_node *first = NULL;
    for (size_t i = 0; i < rl->inbox.signalled.count;) {
        rl_signal_link *link = rl->inbox.signalled.items[i];
        RLRunLoopSourceRef s = link->source;
        if (!atomic_load(&s->signalled)) {
            if (!unlist_if_unsignalled(rl, link)) i++; /* else the last link moved to i */
            continue;
        }
        i++;
        rl_item_node *node = atomic_load(&s->valid) ? rl_item_set_find(&m->sources0, s) : NULL;
        if (!node) continue; /* another mode's: it waits for that mode */
        if (stop_after_one) {
            if (!first || node_precedes(node, first)) first = node;
        } else if (!rl_ptr_array_append(ready, node)) {
            break; /* out of memory: the rest stay listed for the next pass */
        }
    }
    if (first) rl_ptr_array_append(ready, first); /* the scratch space always has room for one */
    if (ready->count > 1) qsort(ready->items, ready->count, sizeof *ready->items, compare_nodes);
}

bool rl_signal_inbox_has_signalled_locked(RLRunLoopRef rl, rl_mode *m) {
    take_inbox(rl);
    for (size_t i = 0; i < rl->inbox.signalled.count; i++) {
        RLRunLoopSourceRef s = ((rl_signal_link *)rl->inbox.signalled.items[i])->source;
        if (atomic_load(&s->signalled) && atomic_load(&s->valid) && rl_item_set_contains(&m->sources0, s)) return true;
    }
    return false;
}

void rl_signal_inbox_free(RLRunLoopRef rl) {
    rl_ptr_array_free(&rl->inbox.signalled); /* its links left with their sources */
}
