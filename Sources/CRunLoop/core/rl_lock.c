/*
 * rl_lock.c: a run loop's lock, and which thread is asking.
 *
 * Every file of the core that changes a loop takes its lock through here.
 * Objects whose last reference is dropped under the lock are parked on the
 * loop's graveyard and finalized by the unlock, after the mutex is released:
 * a finalizer may call user code, which may call back into the loop.
 *
 * The lock is a plain mutex, but the loop's own thread, when it takes the
 * lock back after a callout or the wait, first lets API callers that are
 * waiting for it go first (glibc mutexes are not fair).
 *
 * A default mutex fails only when it is corrupt (EINVAL: the loop's memory
 * was overwritten or freed). Going on without the lock would corrupt the
 * loop silently, so every call is checked and a failure aborts, naming the
 * call (rl_fatal_lock): one branch, never taken.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "rl_internal.h"

static inline void checked(const char *call, int rc) {
    if (__builtin_expect(rc != 0, 0)) rl_fatal_lock(call, rc);
}

void rl_loop_lock(RLRunLoopRef rl) {
    int rc = pthread_mutex_trylock(&rl->lock);
    if (rc == 0) return;
    if (rc != EBUSY) rl_fatal_lock("pthread_mutex_trylock", rc);
    atomic_fetch_add_explicit(&rl->lock_waiters, 1, memory_order_relaxed);
    checked("pthread_mutex_lock", pthread_mutex_lock(&rl->lock));
    atomic_fetch_sub_explicit(&rl->lock_waiters, 1, memory_order_relaxed);
}

void rl_loop_relock(RLRunLoopRef rl) {
    /* Bounded: a waiter that does not show up in ~50 us does not stall the loop. */
    for (int spin = 0; spin < 100 && atomic_load_explicit(&rl->lock_waiters, memory_order_relaxed); spin++) {
        if (spin < 20) rl_cpu_relax();
        else sched_yield();
    }
    checked("pthread_mutex_lock", pthread_mutex_lock(&rl->lock));
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
