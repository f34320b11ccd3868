/*
 * rl_clock.h: what rl_clock.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_CLOCK_H
#define RL_CLOCK_H

/* A manual clock's part of a pass (rl_clock.c); loop locked, its own
   thread. Where a real loop would sleep (or poll) in m, moves the loop's
   time toward the clock's (to the mode's next wake-up if that comes first,
   and no further than `run_deadline`), then polls the mode's descriptors
   into `events` (at most `max`; *count of them) and takes any pending
   wake-up. Returns whether the pass found nothing (unless `poll`): nothing
   due, no descriptor ready, no wake-up, and the loop's time has caught up
   with the clock's: a real loop would sleep with nothing to end its sleep
   but time, which only the program moves. */
bool rl_clock_wait(RLRunLoopRef rl, rl_mode *m, bool poll, int64_t run_deadline, struct epoll_event *events, int max,
                   int *count);
/* The loop's finalization: frees its clock and listeners. */
void rl_clock_free(RLRunLoopRef rl);

#endif
