/*
 * rl_source.h: what rl_source.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_SOURCE_H
#define RL_SOURCE_H

/* ---- a source: the struct ---- */
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

void rl_source_add_to_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, rl_callback_list *scheduled);
bool rl_source_in_mode_locked(RLRunLoopRef rl, const rl_mode *m, RLRunLoopSourceRef s);
bool rl_source_remove_from_mode_locked(RLRunLoopRef rl, rl_mode *m, RLRunLoopSourceRef s, rl_callback_list *cancelled);
bool rl_source_remove_common_locked(RLRunLoopRef rl, RLRunLoopSourceRef s);
/* A step of a pass; loop locked on entry and exit. */
bool rl_do_sources0(RLRunLoopRef rl, rl_mode *m, bool stop_after_one); /* __CFRunLoopDoSources0 */
/* A step of a pass; loop locked on entry and exit. */
bool rl_do_source1(RLRunLoopRef rl, rl_mode *m, uint64_t token, uint32_t events); /* __CFRunLoopDoSource1 */
/* Whether an event's token still names a registration armed in the mode
   waited in, of a valid source: what rl_do_source1 would perform. */
bool rl_source1_token_is_live(RLRunLoopRef rl, uint64_t token);

#endif
