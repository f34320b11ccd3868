/*
 * rl_fatal.h: what rl_fatal.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_FATAL_H
#define RL_FATAL_H

/* A pthread_mutex_* call on a loop's lock failed with `error`: prints the
   call and errno, the way rl_fatal_errno does, and aborts (rl_fatal.c). */
_Noreturn void rl_fatal_lock(const char *call, int error);

#endif
