/*
 * rl_embed_fd.h: what rl_embed_fd.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_EMBED_FD_H
#define RL_EMBED_FD_H

/* The embedding descriptor's side of the wait set (rl_embed_fd.c); loop locked.
   init/close: with the wait set; detach: the wait set is about to be
   closed; attach: a new wait set was made; after_fork: in a child, before
   its wait set is remade. */
void rl_embed_fd_init_locked(RLRunLoopRef rl);
void rl_embed_fd_close_locked(RLRunLoopRef rl);
void rl_embed_fd_detach_locked(RLRunLoopRef rl);
void rl_embed_fd_attach_locked(RLRunLoopRef rl);
void rl_embed_fd_after_fork_locked(RLRunLoopRef rl);
/* Before a host sleeps on the embedding descriptor: aborts (rl_fatal_errno)
   if its number no longer names the loop's embedding set. */
void rl_embed_fd_check_locked(RLRunLoopRef rl);
/* A host sleeps on the embedding descriptor for mode m (timer changes made
   by other threads must re-arm the timerfd, as for a loop asleep in m). */
bool rl_embed_fd_waits_in_locked(RLRunLoopRef rl, rl_mode *m);
/* The embedding descriptor, made (and joined by the wait set) on first ask;
   -1 if it cannot be made. */
int rl_embed_fd_open_locked(RLRunLoopRef rl);
/* A host is about to sleep on the descriptor for m / the loop waits by
   itself again / the host gave up its wait. */
void rl_embed_fd_wait_in_locked(RLRunLoopRef rl, rl_mode *m);
void rl_embed_fd_stop_waiting_locked(RLRunLoopRef rl);
void rl_embed_fd_cancel_locked(RLRunLoopRef rl);
/* Whether the host's descriptor holds the wait set (or there is none yet). */
bool rl_embed_fd_holds_wait_set_locked(RLRunLoopRef rl);

#endif
