/*
 * rl_lock.h: what rl_lock.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_LOCK_H
#define RL_LOCK_H

/* The loop's lock and which thread asks (rl_lock.c). Taken by the loop's own
   thread, it is rl_loop_relock. */
void rl_loop_lock(RLRunLoopRef rl);
/* The loop's own thread taking its lock back after a callout or the wait.
   Its wait is bounded: only the callers already queued for the lock go
   first (glibc mutexes are not fair; see rl_lock.c). */
void rl_loop_relock(RLRunLoopRef rl);
/* Once per pass, the loop's thread (holding its lock): callers queued for
   the lock have it first, then the loop's thread takes it back, so a busy
   loop cannot starve callers of the API. Nothing when none is queued. */
void rl_loop_let_callers_in(RLRunLoopRef rl);
/* A pause instruction for spin-waits. */
static inline void rl_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}
/* Unlocks, then finalizes whatever died under the lock. */
void rl_loop_unlock(RLRunLoopRef rl);
/* Releases obj while holding rl's lock: finalization waits for the unlock. */
void rl_loop_release_locked(RLRunLoopRef rl, const void *obj);
bool rl_loop_is_current_thread(RLRunLoopRef rl);
/* Whether the calling thread is the process's main thread (gettid == getpid),
   asked of the kernel once per thread. */
bool rl_on_process_main_thread(void);

#endif
