/*
 * rl_wait_set.h: what rl_wait_set.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_WAIT_SET_H
#define RL_WAIT_SET_H

/* The loop's wait set (rl_wait_set.c): the epoll set, the wake eventfd and
   the version-1 sources' registrations; loop locked unless said otherwise. */
bool rl_wait_set_open(RLRunLoopRef rl); /* at creation: epoll set + wake eventfd */
void rl_wait_set_close(RLRunLoopRef rl);
/* In a forked child, replaces the inherited kernel objects (the parent's)
   by the child's own; nothing otherwise. */
void rl_wait_set_own_kernel_objects_locked(RLRunLoopRef rl);
/* Whether the loop's kernel objects are still the parent's (made before a
   fork, not remade since). Any thread, no lock. */
bool rl_wait_set_inherited(RLRunLoopRef rl);
/* Joins a descriptor the loop just made for itself (the timerfd) to its set,
   readable and edge-triggered, its events tagged `data`; a registration
   under that number, for a file closed behind its source's back, is
   forgotten first. False only out of memory or room (ENOMEM, ENOSPC);
   anything else is fatal, naming `object`. */
bool rl_wait_set_join_own(RLRunLoopRef rl, int fd, uint64_t data, const char *object);
/* Before a wait in m: remakes the kernel objects if the process forked,
   rebuilds a stale set, arms exactly m's version-1 sources. */
void rl_wait_set_prepare_locked(RLRunLoopRef rl, rl_mode *m);
/* The source's registration in this loop, -1 if none. */
long rl_wait_set_reg_find_locked(RLRunLoopRef rl, RLRunLoopSourceRef s);
/* Registers `s` watching `fd` (unwatched if fd < 0 or epoll refuses it),
   armed if `armed`; -1 when out of memory (or epoll is: ENOMEM, ENOSPC). */
long rl_wait_set_reg_add_locked(RLRunLoopRef rl, RLRunLoopSourceRef s, int fd, bool armed);
void rl_wait_set_reg_remove_locked(RLRunLoopRef rl, long index);
/* The armed mode gained or lost the registration's source. */
void rl_wait_set_reg_set_armed_locked(RLRunLoopRef rl, long index, bool armed);
/* The source's watched events changed: apply them; true if the loop must be
   woken (it may sleep, and the registration is now always ready). */
bool rl_wait_set_reg_refresh_locked(RLRunLoopRef rl, long index);
/* Appends, for the always-ready registrations of m, the events they report
   (after a wait, so perform is called for them); returns the new count. */
int rl_wait_set_add_ready_locked(RLRunLoopRef rl, rl_mode *m, struct epoll_event *events, int n, int max);

#endif
