/*
 * rl_lock.c: a run loop's lock, and which thread is asking.
 *
 * Every file of the core that changes a loop takes its lock through here.
 * Objects whose last reference is dropped under the lock are parked on the
 * loop's graveyard and finalized by the unlock, after the mutex is released:
 * a finalizer may call user code, which may call back into the loop.
 *
 * The lock is a plain mutex, and glibc's mutexes are not fair: a thread that
 * unlocks and locks again at once usually beats the threads queued for the
 * lock, which go back to the end of the queue. Left alone, a few threads
 * calling the API in a tight loop could keep the loop's own thread from its
 * lock for seconds (it takes the lock back after every callout), and a busy
 * loop could keep callers out. So:
 * - The loop's own thread waits a bounded time for its lock. When it finds
 *   the lock taken it raises `owner_waits`; callers arriving while it is up
 *   wait (spinning briefly, then on a futex) until the loop's thread has had
 *   the lock. Only the callers already queued go first, one critical section
 *   each, and every caller's critical section is short (no user code, no
 *   system call that blocks; a description copies what it needs and prints
 *   it unlocked).
 * - Callers get their turn once per pass (rl_loop_let_callers_in): if any is
 *   queued, the loop's thread lets the queued ones have the lock, newcomers
 *   held back as above, and takes it again (bounded).
 *
 * A default mutex fails only when it is corrupt (EINVAL: the loop's memory
 * was overwritten or freed). Going on without the lock would corrupt the
 * loop silently, so every call is checked and a failure aborts, naming the
 * call (rl_fatal_lock): one branch, never taken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "rl_internal.h"

static inline void checked(const char *call, int rc) {
    if (__builtin_expect(rc != 0, 0)) rl_fatal_lock(call, rc);
}

/* ---- the loop's thread first ---------------------------------------------- */
/* owner_waits: 0, or 1 while the loop's thread waits for its lock, or 2 if
   also a caller sleeps on the futex until that wait is over. */
#define OWNER_WAITS          1
#define OWNER_WAITS_SLEEPERS 2

static void owner_stops_waiting(RLRunLoopRef rl) {
    if (atomic_exchange_explicit(&rl->owner_waits, 0, memory_order_release) == OWNER_WAITS_SLEEPERS)
        syscall(SYS_futex, (void *)&rl->owner_waits, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The loop's thread takes its lock: if it is taken, the callers already
   queued for it go first, and no one else. */
static void owner_lock(RLRunLoopRef rl) {
    int rc = pthread_mutex_trylock(&rl->lock);
    if (rc == 0) return;
    if (rc != EBUSY) rl_fatal_lock("pthread_mutex_trylock", rc);
    atomic_store_explicit(&rl->owner_waits, OWNER_WAITS, memory_order_relaxed);
    checked("pthread_mutex_lock", pthread_mutex_lock(&rl->lock));
    owner_stops_waiting(rl);
}

/* A caller arriving while the loop's thread waits for its lock lets it go
   first. A lost race (the flag read just before it went up) costs the loop's
   thread one critical section, no more. */
static void wait_while_the_owner_waits(RLRunLoopRef rl) {
    for (int spin = 0; spin < 64; spin++) {
        if (!atomic_load_explicit(&rl->owner_waits, memory_order_acquire)) return;
        rl_cpu_relax();
    }
    unsigned state;
    while ((state = atomic_load_explicit(&rl->owner_waits, memory_order_acquire)) != 0) {
        if (state == OWNER_WAITS &&
            !atomic_compare_exchange_weak_explicit(&rl->owner_waits, &state, OWNER_WAITS_SLEEPERS, memory_order_acquire,
                                                   memory_order_acquire))
            continue;
        syscall(SYS_futex, (void *)&rl->owner_waits, FUTEX_WAIT_PRIVATE, OWNER_WAITS_SLEEPERS, NULL, NULL, 0);
    }
}

static void caller_lock(RLRunLoopRef rl) {
    if (atomic_load_explicit(&rl->owner_waits, memory_order_relaxed)) wait_while_the_owner_waits(rl);
    int rc = pthread_mutex_trylock(&rl->lock);
    if (rc == 0) return;
    if (rc != EBUSY) rl_fatal_lock("pthread_mutex_trylock", rc);
    atomic_fetch_add_explicit(&rl->lock_waiters, 1, memory_order_relaxed);
    checked("pthread_mutex_lock", pthread_mutex_lock(&rl->lock));
    atomic_fetch_sub_explicit(&rl->lock_waiters, 1, memory_order_relaxed);
}

void rl_loop_lock(RLRunLoopRef rl) {
    if (rl_loop_is_current_thread(rl)) owner_lock(rl);
    else caller_lock(rl);
}

void rl_loop_relock(RLRunLoopRef rl) {
    owner_lock(rl);
    rl_stats_batch_end(&rl->stats, rl->depth);
}

/* How long the loop's thread waits, once per pass, for the callers queued
   for its lock to have it. Bounded by time, not by a number of yields: on a
   loaded machine one sched_yield may hand the CPU to another process for a
   whole time slice, and a hundred of them made a pass last a second. */
#define LET_CALLERS_IN_NS 50000

void rl_loop_let_callers_in(RLRunLoopRef rl) {
    if (!atomic_load_explicit(&rl->lock_waiters, memory_order_relaxed)) return;
    /* The graveyard stays parked: whoever unlocks next finalizes it. */
    atomic_store_explicit(&rl->owner_waits, OWNER_WAITS, memory_order_relaxed);
    checked("pthread_mutex_unlock", pthread_mutex_unlock(&rl->lock));
    /* A queued caller that does not get a CPU in time does not stall the
       loop (it still goes first if it was ahead in the mutex's queue). */
    int64_t until = rl_mono_now() + LET_CALLERS_IN_NS;
    for (unsigned spin = 0; atomic_load_explicit(&rl->lock_waiters, memory_order_relaxed); spin++) {
        if (spin < 64) {
            rl_cpu_relax();
            continue;
        }
        if (rl_mono_now() >= until) break;
        sched_yield();
    }
    checked("pthread_mutex_lock", pthread_mutex_lock(&rl->lock));
    owner_stops_waiting(rl);
}

void rl_loop_unlock(RLRunLoopRef rl) {
    rl_object *dead = rl->graveyard;
    rl->graveyard = NULL;
    checked("pthread_mutex_unlock", pthread_mutex_unlock(&rl->lock));
    while (dead) {
        rl_object *next = dead->next_dead;
        dead->cls->finalize(dead);
        dead = next;
    }
}

void rl_loop_release_locked(RLRunLoopRef rl, const void *obj) {
    rl_object *o = (rl_object *)obj;
    if (rl_object_release_is_last(o)) {
        o->next_dead = rl->graveyard;
        rl->graveyard = o;
    }
}

bool rl_loop_is_current_thread(RLRunLoopRef rl) {
    return pthread_equal(rl->thread, pthread_self());
}

bool rl_on_process_main_thread(void) {
    static _Thread_local int is_main = -1; /* asked once per thread: gettid is a system call */
    if (is_main < 0) is_main = (pid_t)syscall(SYS_gettid) == getpid();
    return is_main;
}
