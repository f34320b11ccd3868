/*
 * rl_extras.h: everything the extras (linux/, threads/, monitor/) may use of
 * the core beyond the public headers. The core's own structures and the
 * functions its files share stay in core/rl_internal.h, which the extras
 * cannot include (their include path has core_api/ only). Needing more of
 * the core here is a design question: ask whether the public API should
 * offer it instead.
 */
#ifndef RL_EXTRAS_H
#define RL_EXTRAS_H

#include <pthread.h>
#include "CRunLoop.h"
#include "rl_array.h"
#include "rl_cf_context.h"
#include "rl_object.h"
#include "rl_time.h"

/* A system call failed on one of the library's own kernel objects with an
   errno that only a bug can cause (EBADF, EINVAL, EFAULT: the object was
   closed or replaced behind the library's back, or the call is wrong):
   prints the call, the object, its number and errno, and aborts. Resource
   errors (ENOMEM, EMFILE...) never come here: see "Errors" in
   docs/ARCHITECTURE.md. */
_Noreturn void rl_fatal_errno(const char *call, const char *object, int fd, int error);

/* Signals an eventfd the library owns (`object` names it for
   rl_fatal_errno): retried on EINTR; a full counter (EAGAIN) is already
   signalled; anything else is fatal. */
void rl_eventfd_signal(int fd, const char *object);
/* Resets an eventfd the library owns to zero: retried on EINTR; EAGAIN
   (already zero) is fine; anything else is fatal. */
void rl_eventfd_reset(int fd, const char *object);

/* The loop's time in ns, any thread: CLOCK_MONOTONIC on real time, the
   manual clock's loop time (ns since 2001) on a manual clock
   (CRunLoopClock.h). Differences of two readings are durations on the
   clock the loop runs on; readings across a switch of clocks mean nothing. */
int64_t rl_loop_time_ns(RLRunLoopRef rl);
/* Whether the loop runs on a manual clock. Any thread. */
bool rl_loop_clock_is_manual(RLRunLoopRef rl);
/* Calls moved(info) each time an advance made inside one of the loop's runs,
   on its own thread, moves the loop's time (time passing while a callout
   works); on that thread, no loop lock held, but with the listeners' own
   lock: moved must only signal (not listen, unlisten or use the loop).
   False when out of memory. */
bool rl_loop_clock_listen(RLRunLoopRef rl, void (*moved)(void *info), void *info);
/* Stops calling moved(info); once this returns it is not running either. */
void rl_loop_clock_unlisten(RLRunLoopRef rl, void (*moved)(void *info), void *info);

/* The calling thread's loop if it has one already; never makes one. */
RLRunLoopRef rl_loop_current_if_made(void);

/* Installs, once, the fork handler that rl_fork_generation counts with;
   false when it cannot (pthread_atfork out of memory): then an object that
   must notice a fork is not made (as out of memory), and a later call tries
   again. */
bool rl_fork_watch(void);
/* The process image this runs in: bumped in a child by fork(). Objects that
   own kernel objects, made after rl_fork_watch returned true, record it
   when made and compare it to notice they were inherited. */
unsigned rl_fork_generation(void);

/* The version-1 source an object (a file descriptor, a message port) makes
   once and hands to every caller, retained: made from `context` on first
   use, outside `lock`, and kept in `*cache` (guarded by `lock`) while
   is_valid(owner), which is called with `lock` held. NULL once invalid. */
RLRunLoopSourceRef rl_cached_source_copy(pthread_mutex_t *lock, RLRunLoopSourceRef *cache,
                                         bool (*is_valid)(const void *owner), const void *owner, RLIndex order,
                                         const RLRunLoopSourceContext1 *context);

/* Queues fn(info) for `mode` (RLRunLoopPerformFunction), saying why an item
   was not queued: refused (bad input, or the loop's thread has exited: it
   never will be) or out of memory (try later). dispose(info) runs after fn,
   or when the item is dropped; when not queued it is the caller's to call. */
typedef enum { RL_QUEUED, RL_QUEUE_REFUSED, RL_QUEUE_NO_MEMORY } rl_queue_status;
rl_queue_status rl_enqueue_block_status(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *), void *info,
                                        void (*dispose)(void *));

#endif
