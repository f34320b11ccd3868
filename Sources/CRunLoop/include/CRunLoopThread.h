/*
 * CRunLoopThread.h (included by CRunLoop.h): perform requests across threads
 * and run-loop threads.
 *
 * Perform requests are the C form of Cocoa's "perform selector sources"
 * (performSelector:onThread:withObject:waitUntilDone:modes:,
 * performSelector:withObject:afterDelay:inModes:,
 * cancelPreviousPerformRequestsWithTarget:): a function and its info handed
 * to a run loop, to run once on that loop's thread when the loop runs in one
 * of the request's modes. They are built on the public API only
 * (RLRunLoopPerformFunctionWithRelease, RLRunLoopWakeUp, one-shot timers).
 *
 * Every request runs at most once. Its `release(info)` (if not NULL) is
 * called exactly once, when the request is settled: right after fn(info)
 * returned, or, without fn, when the request is cancelled, times out, is
 * dropped (the loop's thread exited) or was refused (bad input).
 *
 * Ordering: immediate requests made by one thread to one loop run in the
 * order they were made (among those that can run in the mode the loop runs
 * in). Delayed requests to one loop with equal fire dates run in the order
 * they were made.
 *
 * Run-loop threads (RLThread) are the guide's advice for secondary threads as
 * an object: a thread running its loop, kept alive by a version-0 source so
 * the loop sleeps instead of returning, with a planned, clean exit.
 */
#ifndef CRUNLOOP_THREAD_H
#define CRUNLOOP_THREAD_H

#include "CRunLoopCore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Perform requests
 */

/* A request's state, and the outcome of RLRunLoopPerformRequest. */
typedef enum {
    kRLPerformRequestInvalid   = -1, /* bad input: nothing was queued (release(info) was called) */
    kRLPerformRequestPending   = 0,  /* queued (or timer armed), has not started */
    kRLPerformRequestRunning   = 1,  /* fn is running on the loop's thread */
    kRLPerformRequestDone      = 2,  /* fn ran and returned */
    kRLPerformRequestCancelled = 3,  /* cancelled before it started; never runs */
    kRLPerformRequestTimedOut  = 4,  /* the waiter's timeout passed before the loop started it; never runs */
    kRLPerformRequestDropped   = 5   /* the loop's thread exited (before or while it was queued); never ran */
} RLPerformRequestStatus;

/* A delayed request. It is an RL object: RLRetain/RLRelease/RLCopyDescription
   work on it (the description shows its status and loop). */
typedef struct __RLPerformRequest *RLPerformRequestRef;

/*
 * Queues fn(info) on `rl`, to run once, on rl's thread, the first time rl runs
 * its queued work in one of `modes`, and wakes rl.
 *
 * modes, modeCount: the mode names; `modes` NULL or modeCount 0 means
 *   kRLRunLoopCommonModes (Cocoa's default for performSelector:onThread:).
 *   kRLRunLoopCommonModes may be one of them. A name repeated is harmless.
 * target: a key for RLPerformRequestCancelWithTarget (any pointer, never
 *   dereferenced), or NULL for none.
 * waitUntilDone false: returns kRLPerformRequestPending once queued (or
 *   kRLPerformRequestDropped when rl's thread had already exited, or when
 *   out of memory: then release(info) was called and fn never runs).
 * waitUntilDone true: blocks until the request is settled and returns how:
 *   - rl is the calling thread's own loop: fn(info) runs at once, inline,
 *     whatever the modes and whether or not the loop is running (as Cocoa
 *     does), so it never deadlocks; returns kRLPerformRequestDone.
 *   - otherwise kRLPerformRequestDone after fn returned on rl's thread;
 *     kRLPerformRequestDropped when rl's thread exited before running it
 *     (or it could not be queued for lack of memory);
 *     kRLPerformRequestCancelled when RLPerformRequestCancelWithTarget
 *     cancelled it; kRLPerformRequestTimedOut when rl had not started it
 *     within `timeout` seconds (it is withdrawn then and never runs).
 *   `timeout` bounds the wait for the loop to *start* fn: once fn has
 *   started, the call waits for it to return. INFINITY (or more than ~16
 *   years) waits with no limit; NaN or negative counts as 0 (withdrawn at
 *   once unless the loop had already started it). Two threads waiting on
 *   each other's loops deadlock until one of their timeouts passes.
 *   `timeout` is ignored when not waiting.
 *
 * `rl` must stay alive during the call (the calling thread's loop, the main
 * loop, an RLThread's loop, or a loop the caller retains); the request
 * retains it while pending. A loop whose thread has exited is dead: the
 * request is dropped at once.
 *
 * Bad input (NULL rl or fn, modes NULL with a positive count, a negative
 * count, a NULL or empty mode name in `modes`): returns
 * kRLPerformRequestInvalid and calls release(info) at once.
 */
RLPerformRequestStatus RLRunLoopPerformRequest(RLRunLoopRef rl, const RLRunLoopMode *modes, RLIndex modeCount,
                                               const void *target, void (*fn)(void *info), void *info,
                                               void (*release)(void *info), bool waitUntilDone, RLTimeInterval timeout);

/*
 * Arms a one-shot timer on `rl`, in each of `modes` (NULL or 0: common modes),
 * that calls fn(info) on rl's thread `delay` seconds from now, when rl runs
 * in one of those modes (a timer in no running mode waits, as any timer).
 * "Now" is rl's time (RLRunLoopGetCurrentTime): on a manual clock
 * (CRunLoopClock.h) the request runs once that clock has been advanced by
 * `delay`.
 * Returns a request the caller owns (release it with RLPerformRequestRelease;
 * releasing does not cancel it), or NULL for bad input (then release(info)
 * was called). NaN or negative delay means 0. If rl's thread has exited the
 * request is returned already kRLPerformRequestDropped; so it is when memory
 * runs out after the request was made (release(info) has then been called).
 * Out of memory before that: NULL, and release(info) was called.
 * `target` and bad input as for RLRunLoopPerformRequest. A pending delayed
 * request is dropped (release(info), status kRLPerformRequestDropped) when
 * its loop's thread exits.
 *
 * To notice exits, the first delayed request to a loop queues one inert
 * function in a private mode of that loop named "RLPerformRequestWatchMode"
 * (so RLRunLoopCopyAllModes lists it); never run that mode yourself.
 */
RLPerformRequestRef RLRunLoopPerformRequestAfterDelay(RLRunLoopRef rl, RLTimeInterval delay, const RLRunLoopMode *modes,
                                                      RLIndex modeCount, const void *target, void (*fn)(void *info),
                                                      void *info, void (*release)(void *info));

/* Cancels a pending request: it will never run, its timer is invalidated and
   release(info) is called before this returns. Returns true if this call
   cancelled it; false if it had already started, finished, or been
   cancelled, timed out or dropped (a request cancelled from inside its own
   fn: false). From any thread. NULL: false. */
bool RLPerformRequestCancel(RLPerformRequestRef request);

/* Cancels every pending request (immediate and delayed) made with `target`
   whose loop is `rl`, or on every loop when `rl` is NULL (Cocoa's
   cancelPreviousPerformRequestsWithTarget: works on the current loop only:
   pass RLRunLoopGetCurrent() for that). Requests already running are not
   affected. Returns how many were cancelled. NULL target: returns 0 (requests
   without a target cannot be cancelled by target). */
RLIndex RLPerformRequestCancelWithTarget(const void *target, RLRunLoopRef rl);

/* The request's state now (a snapshot from any thread). A settled request's
   final state is stored just after its release(info) returned (a request
   whose fn returned reads kRLPerformRequestRunning until then). NULL:
   kRLPerformRequestInvalid. */
RLPerformRequestStatus RLPerformRequestGetStatus(RLPerformRequestRef request);

/* RLRetain and RLRelease for requests (the same count, thread-safe; releasing
   never cancels). Retain(NULL) returns NULL; Release(NULL) does nothing; an
   object that is not a request, or releasing more than retained: aborts. */
RLPerformRequestRef RLPerformRequestRetain(RLPerformRequestRef request);
void                RLPerformRequestRelease(RLPerformRequestRef request);

/* ---------------------------------------------------------------------------
 * Run-loop threads
 *
 * RLThreadCreate makes the object; RLThreadStart starts its thread, which
 * adds a version-0 keep-alive source to its loop's common modes and runs the
 * default mode until RLThreadStop. Other threads schedule timers and sources
 * on RLThreadGetRunLoop(t) or hand it work with RLRunLoopPerformRequest.
 * A thread runs once: it cannot be restarted after it stopped (as NSThread).
 */
/* A run-loop thread is an RL object: RLRetain/RLRelease/RLCopyDescription
   work on it (the description shows its name, phase and loop). */
typedef struct __RLThread *RLThreadRef;

/* Makes a thread object, not started, owned by the caller. `name` (may be
   NULL: "RLThread") is copied; Linux shows its first 15 bytes. Returns NULL
   when out of memory. */
RLThreadRef RLThreadCreate(const char *name);

/* Starts the thread and returns once it has made its run loop. Returns false
   (and does nothing) if it was started before; false too when the thread
   cannot be made or cannot make its loop (out of memory or file
   descriptors): it has then ended, RLThreadGetRunLoop returns NULL, and the
   object cannot be started again. NULL: false. */
bool RLThreadStart(RLThreadRef thread);

/* The thread's run loop, blocking until the started thread has made it and
   added its keep-alive source. Not retained: valid as long as the thread
   object. After the thread exited it is a dead loop (perform requests to it
   are dropped, items added are ignored). NULL when the thread was never
   started (or could not start), or for NULL. */
RLRunLoopRef RLThreadGetRunLoop(RLThreadRef thread);

/* Stops the thread and joins it: sets its stop flag, signals its keep-alive
   source, stops its loop's current run and wakes it; the thread finishes
   the callout it is in, leaves its run, invalidates its source and exits,
   and its loop is torn down (items removed, queued work dropped and
   released) before this returns. Idempotent; concurrent callers all return
   after the join. From the thread itself (inside a callout) it only asks the
   thread to stop and returns at once; the join then happens in a later
   RLThreadStop from another thread, or the last RLThreadRelease. A thread
   never started: nothing. NULL: ignored. */
void RLThreadStop(RLThreadRef thread);

/* Whether the calling thread is `thread`'s thread. false for NULL. */
bool RLThreadIsCurrent(RLThreadRef thread);
/* Whether the thread has left its run loop (after a stop). false for NULL. */
bool RLThreadHasExited(RLThreadRef thread);

/* RLRetain and RLRelease for threads (the same count, thread-safe). Releasing
   the last reference to a started thread, by either name, stops and joins it
   first (or, on the thread itself, stops and detaches it). Retain(NULL)
   returns NULL; Release(NULL) does nothing; an object that is not a thread,
   or releasing more than retained: aborts. */
RLThreadRef RLThreadRetain(RLThreadRef thread);
void        RLThreadRelease(RLThreadRef thread);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_THREAD_H */
