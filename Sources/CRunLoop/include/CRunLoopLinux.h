/*
 * CRunLoopLinux.h: Linux sources for the run loop (included by CRunLoop.h).
 *
 *  - RLFileDescriptor: a file descriptor watched for reading and/or writing,
 *    modelled on macOS's CFFileDescriptor (callbacks are one-shot per enable).
 *  - Signal sources: UNIX signals delivered as run-loop sources (a handler
 *    of the library's forwards them to the loops).
 *  - RLMessagePort: a thread message port in the spirit of NSPort/NSMachPort;
 *    any thread sends, the loop(s) it is scheduled in receive in FIFO order.
 *
 * (The fourth Linux extra, draining DispatchQueue.main from the main run loop,
 * needs no API: it is automatic when libdispatch is in the process.)
 *
 * All three objects are built on version-1 run-loop sources, so they behave
 * like any other source: they fire only in the modes they were added to, wake
 * a sleeping loop, and make RLRunLoopRunInMode(..., true) return
 * kRLRunLoopRunHandledSource. Every function is thread-safe and accepts bad
 * input (NULL objects, invalid fds, invalidated objects) without crashing;
 * what it does then is written next to it.
 */
#ifndef CRUNLOOP_LINUX_H
#define CRUNLOOP_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include "CRunLoopCore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * RLFileDescriptor (CFFileDescriptor)
 *
 * Wraps an fd. Each callback type (read, write) is enabled one-shot: when the
 * fd becomes ready for it the callback is called once with that type, and the
 * type is disabled; re-enable it (typically from inside the callback) to keep
 * watching. Readiness is poll()'s: end-of-file (or a peer's shutdown) is
 * reported as read readiness, a hang-up or an error as readiness for every
 * enabled type, so the callback's read()/write() sees the condition. When
 * both types are ready at once, one callout reports both. An fd the
 * kernel cannot poll (a regular file) is always ready, as for poll(); an fd
 * that was closed behind the object's back is reported ready once per enable
 * (the callback's read() then fails with EBADF) and never makes a loop spin,
 * even when its file lives on elsewhere (a dup, a child process).
 * The object holds no descriptor of its own: its source watches the fd in
 * each loop's one wait set (RLRunLoopSourceSetWatchedEvents), so N objects
 * cost no descriptor beyond their N fds, and one epoll_wait serves them all.
 * The kernel says nothing when a watched number is closed or replaced
 * (dup2) while a type stays enabled: the loop notices when the watched
 * types next change (an enable after a callout that did not re-enable what
 * fired, or a disable). From then on a closed fd is ready once per enable,
 * and a number that names a new file is watched for that file. (As with any fd API: invalidate before
 * closing.)
 *
 * Lifetime: RLFileDescriptorCreate returns one reference; RLRetain, RLRelease
 * and RLCopyDescription work on descriptors as on every object. The last
 * release closes the fd when closeOnInvalidate and it was not invalidated.
 * A run-loop source made from it keeps it alive, and it keeps
 * its source, until RLFileDescriptorInvalidate: as with CF, invalidate a
 * descriptor that has a source when you are done with it, or both leak.
 * ======================================================================== */

typedef struct __RLFileDescriptor *RLFileDescriptorRef;
typedef int                        RLFileDescriptorNativeDescriptor;
enum { kRLFileDescriptorReadCallBack = 1UL << 0, kRLFileDescriptorWriteCallBack = 1UL << 1 };
typedef void (*RLFileDescriptorCallBack)(RLFileDescriptorRef f, RLOptionFlags callBackTypes, void *info);
typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
} RLFileDescriptorContext;

/* Creates a descriptor object for `fd` with no callback enabled. The context
   is copied and retain(info) called; release(info) is called at invalidation
   (after any callout in progress returns). closeOnInvalidate: close(fd) when
   the object is invalidated. Returns NULL (and never closes fd) when fd is
   negative or not an open descriptor, when callout is NULL, or when the
   system is out of memory or descriptors. NULL context: info is NULL. */
RLFileDescriptorRef RLFileDescriptorCreate(RLFileDescriptorNativeDescriptor fd, bool closeOnInvalidate,
                                           RLFileDescriptorCallBack callout, const RLFileDescriptorContext *context);
/* The wrapped fd (still returned after invalidation, even if it was closed);
   -1 for NULL. */
RLFileDescriptorNativeDescriptor RLFileDescriptorGetNativeDescriptor(RLFileDescriptorRef f);
/* Arms the callback types in `callBackTypes` (a mask of kRLFileDescriptor*
   CallBack; other bits are ignored). Enabling a type already enabled does
   nothing. From any thread, including the callback. NULL or invalid f:
   ignored. */
void RLFileDescriptorEnableCallBacks(RLFileDescriptorRef f, RLOptionFlags callBackTypes);
/* Disarms the given callback types; a readiness already seen for them but not
   yet called out is dropped. NULL or invalid f: ignored. */
void RLFileDescriptorDisableCallBacks(RLFileDescriptorRef f, RLOptionFlags callBackTypes);
/* Stops the descriptor for good: its run-loop source is invalidated (removed
   from every mode of every loop), no callback is called after this returns
   (except one already running on another thread), the context's release is
   called, and fd is closed if closeOnInvalidate. Idempotent; safe from inside
   the callback. NULL: ignored. */
void RLFileDescriptorInvalidate(RLFileDescriptorRef f);
/* false after invalidation and for NULL. */
bool RLFileDescriptorIsValid(RLFileDescriptorRef f);
/* The descriptor's version-1 run-loop source (one per descriptor, made on the
   first call; every call returns a new reference the caller releases with
   RLRelease). Add it to the modes the callbacks should fire in. NULL for NULL
   or invalid f. */
RLRunLoopSourceRef RLFileDescriptorCreateRunLoopSource(RLFileDescriptorRef f, RLIndex order);
/* Copies the context (info and callbacks) into *context. NULL args: ignored. */
void RLFileDescriptorGetContext(RLFileDescriptorRef f, RLFileDescriptorContext *context);

/* ===========================================================================
 * Signal sources
 *
 * RLSignalSourceCreate returns a version-1 run-loop source whose callback is
 * called, in the loop's thread, after the signal arrived, with the number of
 * arrivals since its last callout. Any number of sources, in any number of
 * loops, may watch the same signal: each arrival is reported to every one of
 * them.
 *
 * How: while at least one source for a signal exists, a handler of the
 * library's is the signal's disposition (installed by the first source with
 * sigaction, SA_RESTART | SA_SIGINFO | SA_ONSTACK). It runs in whichever
 * thread the kernel picks, counts the arrival and writes an eventfd that
 * wakes the loops holding sources for the signal; it only uses atomics and
 * write(), so it is async-signal-safe and takes no lock. No thread's signal
 * mask is needed or changed: a source works whatever threads exist, made
 * before or after it, and whichever of them the signal is sent to (kill,
 * pthread_kill, raise, sigqueue). The state behind this is process-wide, as
 * a disposition is: one slot per signal number, under one lock.
 *
 * Counts: every source counts each run of the handler exactly once, from
 * its creation on (arrivals before it was made are not reported; arrivals
 * while it is in no loop, or in a mode that is not running, are reported
 * when it next performs). Arrivals between two callouts are reported as one
 * callout with their number. The kernel keeps at most one instance of a
 * standard signal (1-31) pending: instances sent while one is pending (not
 * yet handled by any thread, for example while every thread blocks it)
 * merge into it, so a burst of kill()s may be reported as a smaller count,
 * never as none. Real-time signals are queued and counted one by one.
 *
 * The program's own handling:
 *  - A disposition the program had set (a handler, SIG_IGN or SIG_DFL) is
 *    saved by the first source and put back when the last source for the
 *    signal is freed (its last reference released, typically after
 *    RLRunLoopSourceInvalidate and removal). Meanwhile its handler is not
 *    called, and an ignored signal is reported.
 *  - A handler the program installs while sources exist replaces the
 *    library's: the sources hear nothing from then on, and the program's
 *    handler stays in place when the last source goes.
 *  - A signal the program blocks in every thread (to take it with sigwait or
 *    a signalfd of its own, say) stays pending and is reported only if a
 *    thread unblocks it. Likewise a signal sent to one thread (raise,
 *    pthread_kill) that blocks it stays pending on that thread. (libdispatch's
 *    worker threads block most signals, and threads inherit their creator's
 *    mask.) Nothing is blocked or unblocked by the library.
 *  - The handler interrupts whatever the thread it runs in was doing, as
 *    any handler does: a system call the kernel cannot restart (epoll_wait,
 *    poll, nanosleep, sem_timedwait...) returns EINTR there.
 *  - A fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGTRAP raised by the CPU
 *    for an instruction of the process) is not reported: the handler puts
 *    the previous disposition back so the faulting instruction meets it
 *    when it runs again (by default the process dies, as without a source).
 *    The same signals sent with kill or sigqueue are reported.
 *  (On macOS a dispatch signal source watches a signal beside its
 *  disposition, which the program sets to SIG_IGN itself; here the
 *  library's handler is the disposition while sources exist.)
 *
 * Before this design the sources read the signal with a signalfd, which
 * needs it blocked in every thread: a source made after other threads
 * existed let the signal run its default action in one of them (SIGINT then
 * killed the process), and a signal sent to one thread was seen only by a
 * loop on that thread. Both work now; a signal blocked before stays
 * blocked, and the pending instances are no longer discarded when the last
 * source goes (there are none to discard unless the program blocks it).
 *
 * fork(): a signal source belongs to each process that has it. In a forked
 * child an inherited source reports the child's signals (the child starts
 * with none pending, as POSIX says), never the parent's, and nothing the
 * child does takes or hides a signal from the parent's sources. Arrivals the
 * parent had caught but not yet reported stay the parent's. The child keeps
 * the parent's dispositions, so the library's handler stays installed there
 * while the inherited sources live.
 * ======================================================================== */

typedef void (*RLSignalCallBack)(int signo, uint32_t count, void *info);
typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
} RLSignalSourceContext;

/* Creates a source that reports `signo`. The context is copied and
   retain(info) called; release(info) is called when the source is freed.
   Returns NULL (and changes no disposition) when signo is not a signal that
   can be caught (<= 0, >= _NSIG, SIGKILL, SIGSTOP, or one reserved by the C
   library), when callout is NULL, or when out of memory or descriptors.
   The caller owns the returned reference (RLRelease). */
RLRunLoopSourceRef RLSignalSourceCreate(int signo, RLIndex order, RLSignalCallBack callout,
                                        const RLSignalSourceContext *context);
/* The signal a source made by RLSignalSourceCreate reports; 0 for NULL or any
   other source. */
int RLSignalSourceGetSignal(RLRunLoopSourceRef source);

/* ===========================================================================
 * RLMessagePort (NSPort / NSMachPort)
 *
 * A bounded FIFO queue of messages (an int32 id and a copy of some bytes)
 * that any thread sends to and whose run-loop source delivers them, in the
 * order they were sent, to the callback on the thread of the loop that
 * services it. Each perform delivers at most RL_MESSAGE_PORT_BATCH messages
 * (and none sent after it began), then lets the loop service its other
 * sources before delivering more, so a busy port cannot starve a loop. Each
 * message leaves the queue just before its own callback, so a callback that
 * runs the loop re-entrantly sees the following messages delivered inside
 * that run, still in send order. Senders never block: when the queue holds
 * `capacity` messages, RLMessagePortSend fails with -EAGAIN and the message
 * is not queued (the sender decides to drop, retry later or slow down);
 * messages already queued are never dropped until invalidation.
 *
 * Lifetime as for RLFileDescriptor: RLRetain, RLRelease and RLCopyDescription
 * work on ports; the port's source keeps the port alive
 * (so a port added to a thread's loop lives while it is there) and the port
 * keeps its source until RLMessagePortInvalidate.
 *
 * fork(): a port belongs to the process that made it. In a forked child an
 * inherited port is invalid: RLMessagePortSend fails with -EPIPE (the child
 * cannot reach the parent's queue, and never wakes the parent's loops),
 * RLMessagePortIsValid is false, RLMessagePortGetQueuedCount is 0 and
 * RLMessagePortCreateRunLoopSource returns NULL. The messages queued at the
 * fork stay the parent's: the child delivers none of them and never consumes
 * the parent's wake-up for them. An inherited source of the port that sits
 * in a loop the child runs may wake that loop once (when the parent's port
 * becomes non-empty); it then invalidates the child's copy of the port
 * (calling the context's release in the child) and leaves the child's loops,
 * so it never makes them spin. RLMessagePortInvalidate and the last
 * RLRelease in the child free the child's copy only. (An NSMachPort's
 * receive right is not inherited by a child either.)
 * ======================================================================== */

#define RL_MESSAGE_PORT_BATCH            64           /* messages per perform, at most */
#define RL_MESSAGE_PORT_DEFAULT_CAPACITY 1024         /* used when capacity is 0 */
#define RL_MESSAGE_PORT_MAX_CAPACITY     (1L << 20)   /* larger capacities are clamped to it */
#define RL_MESSAGE_PORT_MAX_SIZE         (64UL << 20) /* bytes per message, at most */

typedef struct __RLMessagePort *RLMessagePortRef;
/* Called once per message. `bytes` is valid until the callback returns (NULL
   when len is 0). */
typedef void (*RLMessagePortCallBack)(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info);
typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
} RLMessagePortContext;

/* Creates a port whose queue holds up to `capacity` messages (0: the default,
   negative: NULL is returned, beyond the maximum: clamped). The context is
   copied and retain(info) called; release(info) is called at invalidation
   (after any callout in progress returns). NULL callout or out of resources:
   NULL. */
RLMessagePortRef RLMessagePortCreate(RLMessagePortCallBack callout, const RLMessagePortContext *context,
                                     RLIndex capacity);
/* Queues a copy of `len` bytes at `bytes` with id `msgid`, from any thread
   (including the port's own callback). Returns 0, or a negative errno code:
   -EINVAL  NULL port, or NULL bytes with len > 0;
   -EPIPE   the port is invalidated, or was made before fork() in the parent
            of this process (see fork() above);
   -EAGAIN  the queue is full (nothing was queued);
   -EMSGSIZE len > RL_MESSAGE_PORT_MAX_SIZE;
   -ENOMEM  out of memory. */
int RLMessagePortSend(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len);
/* The port's version-1 source (one per port, made on the first call; each call
   returns a new reference the caller releases with RLRelease). NULL for NULL
   or invalid ports. */
RLRunLoopSourceRef RLMessagePortCreateRunLoopSource(RLMessagePortRef port, RLIndex order);
/* Closes the port: later sends fail with -EPIPE, queued messages are dropped
   undelivered, the source is invalidated (removed from every loop) and the
   context's release is called (after the last callback returns).
   Callbacks after it returns: called on the thread of the loop that services
   the port (from a callback, a nested run, any other callout there), none.
   Called from another thread, none starts except the delivery that loop had
   already begun (its message already out of the queue): at most one per loop
   servicing the port, which may still be running or about to call back when
   this returns. It does not wait for it (waiting could deadlock with a
   callback that waits for the caller); the context's release tells when it
   is done. Idempotent; safe from inside the callback. NULL: ignored. */
void RLMessagePortInvalidate(RLMessagePortRef port);
/* false after invalidation and for NULL. */
bool RLMessagePortIsValid(RLMessagePortRef port);
/* Messages queued and not yet delivered; 0 for NULL. */
RLIndex RLMessagePortGetQueuedCount(RLMessagePortRef port);
/* The capacity the port was made with (after defaulting/clamping); 0 for NULL. */
RLIndex RLMessagePortGetCapacity(RLMessagePortRef port);
/* Copies the context into *context. NULL args: ignored. */
void RLMessagePortGetContext(RLMessagePortRef port, RLMessagePortContext *context);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_LINUX_H */
