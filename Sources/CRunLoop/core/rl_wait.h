/*
 * rl_wait.h: what rl_wait.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_WAIT_H
#define RL_WAIT_H

/* The sleep/wake handshake and the timerfd (rl_wait.c); loop locked unless
   said otherwise. */
/* Arms the timerfd for `deadline` (RL_NEVER disarms) if that changed; false
   when the loop has no timerfd (then the wait itself must time out). Only a
   deadline the kernel accepted is recorded, so a failed arm (no timerfd
   could be made or joined to the set: out of descriptors or memory) is
   tried again by the next call. */
bool rl_wait_arm_timer_locked(RLRunLoopRef rl, int64_t deadline);
/* The loop's thread, before a sleep in a mode until `deadline`: when its
   last sleep was a quick conversation with another thread, waits a little
   awake for the answer (the lock dropped meanwhile: the caller computes its
   deadline again unless skipped). */
typedef enum { RL_SPIN_SKIPPED, RL_SPIN_ANSWERED, RL_SPIN_UNANSWERED } rl_spin_result;
rl_spin_result rl_wait_spin_locked(RLRunLoopRef rl, int64_t deadline);
/* After an answered spin, instead of a poll: consumes the wake-up (locked). */
void rl_wait_take_wake_up_locked(RLRunLoopRef rl);
/* The loop's thread sleeps (or polls, if `poll`) in m until `deadline`, an
   event of m's version-1 sources or a wake-up; fills `events` (at most
   `max`), returns their count. Locked on entry and exit, not while asleep;
   returns with `sleeping` off and pending wake-ups consumed (CF's
   SetIgnoreWakeUps: the next pass re-scans everything anyway). */
int rl_wait_sleep_locked(RLRunLoopRef rl, rl_mode *m, bool poll, int64_t deadline, struct epoll_event *events, int max);
/* Writes the wake eventfd of a sleeping loop. Any thread, no lock. */
void rl_wait_signal(RLRunLoopRef rl);
/* Waits (timeout_ms as epoll_wait's) for events of the armed mode. Called
   unlocked by the loop's thread, after rl_wait_set_prepare_locked. Returns the number
   of events, or -1 with errno EINTR (a signal: the caller resumes); any
   other failure is a broken set and fatal. */
int rl_wait_events(RLRunLoopRef rl, struct epoll_event *events, int max, int timeout_ms);

#endif
