/*
 * rl_fork.c: the process generation, bumped in every child right after
 * fork(), so that a loop or port made before a fork knows its kernel
 * objects are its parent's (rl_wait_set.c, the message ports).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "rl_internal.h"

/* Bumped in every child right after fork(), once the handler is installed. */
static _Atomic unsigned process_generation;
static _Atomic bool watching_forks;
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;

static void forked_child(void) {
    atomic_fetch_add(&process_generation, 1);
}

/* pthread_atfork fails only for lack of memory (ENOMEM). Ignoring that would
   leave every loop blind to fork: a child would steal its parent's wake-ups,
   disarm its timers and delete its registrations. So nothing that must
   notice a fork is made without the handler (a loop or a message port is
   not made, as out of memory), and a later call tries again; pthread_once
   could not. */
bool rl_fork_watch(void) {
    if (atomic_load_explicit(&watching_forks, memory_order_acquire)) return true;
    pthread_mutex_lock(&watch_lock);
    bool watching =
        atomic_load_explicit(&watching_forks, memory_order_relaxed) || pthread_atfork(NULL, NULL, forked_child) == 0;
    if (watching) atomic_store_explicit(&watching_forks, true, memory_order_release);
    pthread_mutex_unlock(&watch_lock);
    return watching;
}

unsigned rl_fork_generation(void) {
    return atomic_load_explicit(&process_generation, memory_order_relaxed);
}
