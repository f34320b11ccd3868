/*
 * CRunLoopCore.h: CoreFoundation's run loop (CFRunLoop) for Linux, in C: the
 * loop, its modes, sources, observers and timers. Include CRunLoop.h, which
 * adds the Linux extras, threads, the hang monitor and embedding to it.
 *
 * The model is CF's: a run loop per thread, running in one named mode at a
 * time, servicing the version-0 sources (signalled by hand), version-1
 * sources (file descriptors), timers and queued functions/blocks added to
 * that mode, and telling observers about each activity of a pass.
 *
 * Every public name is CF's with an `RL` prefix. Where this header is silent
 * the behaviour is CFRunLoop's on macOS. Bad input never crashes the process
 * and never corrupts a loop: each function says what it does with it.
 *
 * Thread safety: every function may be called from any thread, including from
 * inside a callout of the loop it touches, except the run functions
 * (RLRunLoopRun, RLRunLoopRunInMode), which always run the calling thread's
 * own loop.
 *
 * Callouts (perform, observer and timer callbacks, queued functions, schedule
 * and cancel) run with no lock held and may do anything: run the loop again,
 * add, remove or invalidate any item, including the one being called out.
 * The small context callbacks (retain, release, equal, hash,
 * getFileDescriptor) may run while the loop's lock is held: they must only do
 * their one job and must not call this library for the same loop.
 * copyDescription always runs with no lock held, and may call this library
 * (a loop's description copies what it prints under the lock and formats it
 * afterwards; CF calls it under its own locks).
 * A callout that unwinds with longjmp or a C++ exception leaves the loop
 * corrupted; that is not supported.
 *
 * Fairness: API callers never keep a loop's own thread from its lock for
 * long (it waits for at most the callers already queued, one short critical
 * section each), and a busy loop lets queued callers in once per pass, so
 * RLRunLoopRunInMode returns close to its timeout however hard other threads
 * use the API on its loop.
 *
 * Signals: a signal handled on a loop's thread does not end its sleep (as
 * with CF's Mach wait): the wait resumes for the time left.
 *
 * The loop's own descriptors: each loop owns an epoll set, a wake eventfd
 * and (from its first timer or timed run) a timerfd, all close-on-exec.
 * They belong to the library: closing them or putting another file under
 * their numbers (close(), dup2(), a routine that closes every descriptor
 * above 2) is a program error, and the loop aborts at the next call that
 * finds it, printing the call, the object, its number and errno (CF likewise
 * halts when its own port wait fails). Running out of descriptors or memory
 * is not an error of this kind: each function documents how it does without.
 *
 * fork(): the child inherits the loops as they were (their modes, sources,
 * timers and observers), but never the kernel objects behind them: the
 * first time the child uses a loop (runs it, wakes it, adds or removes an
 * item), the loop makes its own epoll set, eventfd and timerfd, closing the
 * child's copies of the parent's. Nothing the child does to a loop touches
 * the parent's loops. A loop whose thread does not exist in the child (every
 * thread but the one that forked) can still be changed there but never runs;
 * waking it does nothing. (CF does not support using a run loop after fork
 * without exec.) Message ports and signal sources: see "fork()" in
 * CRunLoopLinux.h; an RLFileDescriptor's fd is the caller's, shared as any
 * inherited fd is. As with any fork of a threaded process, a lock held by
 * another thread at fork time stays held in the child: fork while no other
 * thread is inside this library, or only exec in the child.
 */
#ifndef CRUNLOOP_CORE_H
#define CRUNLOOP_CORE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef long          RLIndex;
typedef unsigned long RLOptionFlags;
typedef double        RLTimeInterval; /* seconds */
typedef double        RLAbsoluteTime; /* seconds since 2001-01-01 00:00:00 UTC, like CFAbsoluteTime */
typedef const char   *RLRunLoopMode;  /* mode names are C strings, equal by content */

/* The wall-clock time now, in seconds since 2001-01-01 00:00:00 UTC. */
RLAbsoluteTime RLAbsoluteTimeGetCurrent(void);

extern const RLRunLoopMode kRLRunLoopDefaultMode; /* "kCFRunLoopDefaultMode" */
extern const RLRunLoopMode kRLRunLoopCommonModes; /* "kCFRunLoopCommonModes" */

typedef struct __RLRunLoop         *RLRunLoopRef;
typedef struct __RLRunLoopSource   *RLRunLoopSourceRef;
typedef struct __RLRunLoopObserver *RLRunLoopObserverRef;
typedef struct __RLRunLoopTimer    *RLRunLoopTimerRef;

/*
 * Reference counting. Every object of this library is an RL object: run
 * loops, sources, observers, timers, and also file descriptors, message
 * ports, perform requests, run-loop threads, hang monitors and idle queues.
 * RLRetain, RLRelease and RLCopyDescription work on each of them; retain and
 * release are thread-safe. Create functions return an object the caller owns
 * (one reference). A type's own retain/release names (RLThreadRelease, ...)
 * act on the same count, so they mix freely with these. RLRetain(NULL) returns
 * NULL; RLRelease(NULL) does nothing. Passing anything that is not one of
 * this library's objects is undefined.
 * A retain or release of a dead object (its last reference already dropped)
 * whose memory malloc has not handed out again aborts, printing one line:
 * "CRunLoop: RLRelease of an object with no references (0x...)" (RLRetain,
 * or the type's own name, such as RLThreadRelease, in place of RLRelease).
 * It costs one compare on the count the call changes anyway. The window that
 * remains: once malloc reuses the memory, the call acts on whatever lives
 * there now (undefined, as in CF); and a chunk freed into the low heap of a
 * program not built position-independent may keep a value that looks like a
 * count. AddressSanitizer and valgrind report every such call as a
 * use-after-free.
 */
const void *RLRetain(const void *obj);
void        RLRelease(const void *obj);

/*
 * A malloc'd, human-readable description of any object (caller frees).
 * For a run loop it lists every mode with its sources0, sources1, observers
 * and timers (with their next fire dates), like CF's dump of
 * `po [NSRunLoop currentRunLoop]`: a snapshot taken under the loop's lock,
 * formatted (items' copyDescription callbacks included) after it is dropped.
 * RLCopyDescription(NULL) returns "(null)"; NULL when out of memory.
 */
char *RLCopyDescription(const void *obj);

typedef enum {
    kRLRunLoopRunFinished      = 1,
    kRLRunLoopRunStopped       = 2,
    kRLRunLoopRunTimedOut      = 3,
    kRLRunLoopRunHandledSource = 4,
    /* Only a loop on a manual clock (CRunLoopClock.h): the run had nothing
       left to do until its clock is advanced. Not in CF. */
    kRLRunLoopRunIdle = 5
} RLRunLoopRunResult;

typedef enum {
    kRLRunLoopEntry         = (1UL << 0),
    kRLRunLoopBeforeTimers  = (1UL << 1),
    kRLRunLoopBeforeSources = (1UL << 2),
    kRLRunLoopBeforeWaiting = (1UL << 5),
    kRLRunLoopAfterWaiting  = (1UL << 6),
    kRLRunLoopExit          = (1UL << 7),
    kRLRunLoopAllActivities = 0x0FFFFFFFU
} RLRunLoopActivity;

/* ---------------------------------------------------------------------------
 * Run loops: one per thread, made on first use, torn down at thread exit
 * (every source, observer and timer is removed from it then, and queued
 * functions are dropped without being called).
 */

/* The calling thread's run loop (not retained: it lives as long as the
   thread). Another thread that may use it after this thread exits must
   RLRetain it first; the object then outlives the thread, and adds, queued
   work and runs on it are ignored once the thread has exited.
   NULL when the loop cannot be made (out of memory, file descriptors or,
   before the first loop, thread-specific keys; CF would crash): every function here accepts a NULL loop, and the run
   functions then return kRLRunLoopRunFinished at once. A later call tries
   again. */
RLRunLoopRef RLRunLoopGetCurrent(void);
/* The process main thread's run loop, from any thread (not retained). NULL
   when it cannot be made, as RLRunLoopGetCurrent; a later call tries again. */
RLRunLoopRef RLRunLoopGetMain(void);
/* The name of the mode the loop is running in (innermost run), malloc'd; NULL
   when the loop is not running or rl is NULL. */
char *RLRunLoopCopyCurrentMode(RLRunLoopRef rl);
/* Every mode the loop has (a mode exists once something named it), as a
   malloc'd NULL-terminated array of malloc'd names; free each, then the array.
   NULL when rl is NULL, or out of memory. */
char **RLRunLoopCopyAllModes(RLRunLoopRef rl);
/* Adds `mode` to the loop's set of common modes, and every item added to
   kRLRunLoopCommonModes to it. A mode never leaves the set. NULL rl, NULL or
   empty mode, or kRLRunLoopCommonModes itself: ignored. Out of memory the
   mode may not join the set (call again), or may lack some of the common
   items until memory is back (they join before its next pass). */
void RLRunLoopAddCommonMode(RLRunLoopRef rl, RLRunLoopMode mode);
/* The earliest next fire date of the valid timers in `mode` (for
   kRLRunLoopCommonModes: in any common mode); 0 when there is none, or for a
   NULL rl or unknown mode. As in CF, a timer whose callout is running is
   still in its modes (also one its callout added to a mode of another loop):
   asked from inside the callout of a mode's only timer, this answers that
   timer's date, the one being fired for a repeating timer (it moves on after
   the callout), or the date the callout set. */
RLAbsoluteTime RLRunLoopGetNextTimerFireDate(RLRunLoopRef rl, RLRunLoopMode mode);
/* True when running `mode` on `rl` now would return kRLRunLoopRunFinished at
   once: the mode is unknown, empty (no sources, no timers, no queued work for
   it) or kRLRunLoopCommonModes (CF's private _CFRunLoopFinished). Foundation's
   -runMode:beforeDate: answers NO exactly then. NULL rl or mode, or an empty
   name: true. Asking never creates the mode. */
bool RLRunLoopModeIsEmpty(RLRunLoopRef rl, RLRunLoopMode mode);
/* Runs the current thread's loop in the default mode until it is stopped or
   the default mode is empty (or, on a manual clock, it goes idle:
   kRLRunLoopRunIdle). */
void RLRunLoopRun(void);
/* Runs the current thread's loop in `mode` (one pass of __CFRunLoopRun per
   iteration) until one of the results below. `seconds` <= 0 or NaN: exactly one
   polling pass; more than ~16 years: no time limit. A NULL, empty or unknown
   mode, kRLRunLoopCommonModes, or an empty mode (no sources, no timers, no
   queued work for it) returns kRLRunLoopRunFinished at once with no Entry or
   Exit callout; so does a run when the calling thread has no loop, or a
   nested run when memory for it runs out.
   Each pass handles, after its wait, one thing that ended it, as CF's: the due
   timers, or one ready version-1 source, or the wake-up. Descriptors ready
   together are taken from the kernel in one epoll_wait and handed out one per
   pass (skipping a source removed, disarmed or invalidated since, and dropped
   once a run nested in a callout has waited), so the blocks and version-0
   sources a callout queues run before the next descriptor's callout, and a
   pass that performed a source polls for the next without sleeping. Timers go
   before a ready descriptor, except right after a pass that fired timers (CF's
   order between them is whichever port its wait receives first). Where we
   differ from CF: a wake-up reported together with ready descriptors takes no
   pass of its own (it carries no work; CF spends a pass on it when its port
   comes first). As CF, a pass whose mode is left with nothing but observers
   (its only queued blocks ran) still sleeps, until the timeout, a wake-up or a
   timer added meanwhile; the exit checks then say TimedOut, Stopped or
   Finished, in that order. With returnAfterSourceHandled, a pass that
   performed a version-0 source also performs a version-1 source its poll finds
   ready, then returns kRLRunLoopRunHandledSource.
   On a loop with a manual clock (CRunLoopClock.h), `seconds` are the
   clock's, a pass never sleeps, and a run that would wait for the clock
   returns kRLRunLoopRunIdle instead. */
RLRunLoopRunResult RLRunLoopRunInMode(RLRunLoopMode mode, RLTimeInterval seconds, bool returnAfterSourceHandled);
/* True while the loop sleeps waiting for an event. false for NULL. */
bool RLRunLoopIsWaiting(RLRunLoopRef rl);
/* Wakes the loop if it sleeps, or makes its next attempt to sleep a polling
   pass if it is awake. No system call when the loop is awake or a wake-up is
   already pending. NULL: ignored. */
void RLRunLoopWakeUp(RLRunLoopRef rl);
/* Makes the innermost active run of the loop return kRLRunLoopRunStopped.
   Does nothing to a loop that is not running. NULL: ignored. */
void RLRunLoopStop(RLRunLoopRef rl);
/* Queues fn(info) to run once, FIFO, the next time the loop runs its queued
   work in `mode` (or in any common mode for kRLRunLoopCommonModes). Does not
   wake the loop (call RLRunLoopWakeUp). Work queued while queued work runs
   waits for the next point. FIFO holds per loop, with one exception CF
   shares: a run nested inside a queued function may run work queued after the
   rest of the outer batch. NULL rl, fn, or mode, or an empty mode: ignored
   (fn is not called). Dropped without a call if the loop's thread exits.
   Out of memory: not queued (fn is not called; nothing to tell, use
   RLRunLoopPerformFunctionWithRelease to know). Once queued, an item is
   never dropped for lack of memory. */
void RLRunLoopPerformFunction(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *info), void *info);
/* RLRunLoopPerformFunction that also owns `info`: release(info) (if not NULL)
   is called exactly once, after fn(info) ran, or without fn when the item is
   dropped (the loop's thread exited) or was not queued (bad input, or out
   of memory: then at once, inside this call, with no lock held). */
void RLRunLoopPerformFunctionWithRelease(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *info), void *info,
                                         void (*release)(void *info));
/* The size of the payload RLRunLoopPerformPayload copies: two pointers. */
#define RL_PERFORM_PAYLOAD_SIZE (2 * sizeof(void *))
/* RLRunLoopPerformFunction for work held in a small value rather than an
   object of its own (a Swift closure, say): the RL_PERFORM_PAYLOAD_SIZE bytes
   at `payload` are copied into the queued item, and fn is called once with
   a pointer to that copy (pointer-aligned, valid during the call): with
   `run` true when the item runs, false when it is dropped unrun (the loop's
   thread exited) or was not queued (bad input, or out of memory: then at
   once, inside this call, with no lock held). Whatever the payload owns is
   fn's to release. Same order and modes as RLRunLoopPerformFunction. NULL
   fn or payload: ignored (fn is not called). */
void RLRunLoopPerformPayload(RLRunLoopRef rl, RLRunLoopMode mode, void (*fn)(void *payload, bool run),
                             const void *payload);
#if __BLOCKS__
/* RLRunLoopPerformFunction for a block (copied, released after it ran or was dropped). */
void RLRunLoopPerformBlock(RLRunLoopRef rl, RLRunLoopMode mode, void (^block)(void));
#endif

/*
 * Adding and removing items. A NULL run loop, item or mode, an empty mode
 * name, or an invalidated item is ignored. Adding an item already in the mode
 * does nothing. kRLRunLoopCommonModes adds to (removes from) every common
 * mode, now and later. An observer or timer belongs to at most one run loop:
 * adding it to a second one is ignored. Sources may be in several loops.
 * Contains with kRLRunLoopCommonModes asks whether the item was added to the
 * common modes as such.
 * Out of memory (or descriptors, for a new mode), or for a version-1 source
 * whose fd epoll has no room for (ENOMEM, or ENOSPC past the user's limit of
 * watched descriptors, fs.epoll.max_user_watches), an add does nothing and
 * calls no schedule callout; Contains with that mode then says false. An add
 * to kRLRunLoopCommonModes may reach only some of the common modes then
 * (Contains with each mode tells which); the others get it before their next
 * pass once memory is back. A removal always succeeds.
 */
bool RLRunLoopContainsSource(RLRunLoopRef rl, RLRunLoopSourceRef source, RLRunLoopMode mode);
void RLRunLoopAddSource(RLRunLoopRef rl, RLRunLoopSourceRef source, RLRunLoopMode mode);
void RLRunLoopRemoveSource(RLRunLoopRef rl, RLRunLoopSourceRef source, RLRunLoopMode mode);
bool RLRunLoopContainsObserver(RLRunLoopRef rl, RLRunLoopObserverRef observer, RLRunLoopMode mode);
void RLRunLoopAddObserver(RLRunLoopRef rl, RLRunLoopObserverRef observer, RLRunLoopMode mode);
void RLRunLoopRemoveObserver(RLRunLoopRef rl, RLRunLoopObserverRef observer, RLRunLoopMode mode);
bool RLRunLoopContainsTimer(RLRunLoopRef rl, RLRunLoopTimerRef timer, RLRunLoopMode mode);
void RLRunLoopAddTimer(RLRunLoopRef rl, RLRunLoopTimerRef timer, RLRunLoopMode mode);
void RLRunLoopRemoveTimer(RLRunLoopRef rl, RLRunLoopTimerRef timer, RLRunLoopMode mode);

/* ---------------------------------------------------------------------------
 * Sources. version 0: signalled by hand. version 1: a file descriptor the
 * loop watches for readability (Linux's stand-in for a Mach port).
 */
typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
    bool (*equal)(const void *info1, const void *info2);
    uintptr_t (*hash)(const void *info);
    void (*schedule)(void *info, RLRunLoopRef rl, RLRunLoopMode mode);
    void (*cancel)(void *info, RLRunLoopRef rl, RLRunLoopMode mode);
    void (*perform)(void *info);
} RLRunLoopSourceContext;

typedef struct {
    RLIndex version; /* 1 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
    bool (*equal)(const void *info1, const void *info2);
    uintptr_t (*hash)(const void *info);
    int (*getFileDescriptor)(void *info); /* watched for readability */
    void (*perform)(void *info);          /* must consume what made it readable */
} RLRunLoopSourceContext1;

/* Creates a source; the context is copied and retain(info) called. Context
   ownership, as CF, for every object in this library that takes a context:
   retain(info) is called once whenever retain is set, even for a NULL info,
   and release(info) whenever release is set, exactly once, even for a NULL
   info (for a source: when it is freed). A version 1
   context is passed cast. NULL context, or a version other than 0 or 1:
   returns NULL. A version-1 source's fd is asked for (getFileDescriptor) when
   it is added to a loop's first mode, and the loop watches the file that fd
   named then, in every mode of that loop that holds the source: if the
   number is later closed and reused, remove the source from the loop's modes
   and add it again to watch the new file. Closing the number while the
   source is in a loop never disturbs another source that reuses the number,
   and never leaves the old file in the loop's wait (even when the file stays
   open elsewhere, through a dup or a child process): the old source is just
   no longer watched. A negative, closed or invalid fd (or a NULL
   getFileDescriptor) leaves it in the mode but unwatched (it never fires).
   The same file under the same fd in two sources of one loop: only the first
   is watched. A NULL perform is allowed: the source is still handled (and
   counts as such). */
RLRunLoopSourceRef RLRunLoopSourceCreate(RLIndex order, RLRunLoopSourceContext *context);
RLIndex            RLRunLoopSourceGetOrder(RLRunLoopSourceRef source); /* 0 for NULL */
/* Removes the source from every mode of every loop (cancel is called for each
   version-0 membership) and clears its signal; it never performs again.
   Safe from inside its own perform. NULL: ignored. */
void RLRunLoopSourceInvalidate(RLRunLoopSourceRef source);
bool RLRunLoopSourceIsValid(RLRunLoopSourceRef source); /* false for NULL */
/* Marks a version-0 source ready to perform; it does not wake the loop.
   Any thread; it never allocates. A pass looks at the signalled sources
   only, so its cost does not grow with the sources added (CF checks every
   source of the mode). Ignored for NULL, invalid or version-1 sources.
   As CF, a pass performs its mode's signalled sources by order, and those
   of equal order earliest-signalled first: the time is taken when the
   source goes from unsignalled to signalled (signalling it again before it
   performs keeps its place); returning after a handled source, only the
   first of them performs. The sources a pass collected perform even if an
   earlier perform of the pass removed them from the mode (not if it
   invalidated them). */
void RLRunLoopSourceSignal(RLRunLoopSourceRef source);
/* Copies the source's context (a RLRunLoopSourceContext1 for version 1; the
   caller passes storage large enough for it). NULL arguments: ignored. */
void RLRunLoopSourceGetContext(RLRunLoopSourceRef source, RLRunLoopSourceContext *context);

/* What a version-1 source's fd is watched for. An extension: CF's version-1
   sources wait on a Mach port, which can only be "readable". */
enum { kRLRunLoopSourceReadable = 1UL << 0, kRLRunLoopSourceWritable = 1UL << 1 };
/* Sets what every loop holding the version-1 source watches its fd for, from
   now on: kRLRunLoopSourceReadable (the default), kRLRunLoopSourceWritable,
   both, or 0 (it stays in its modes, quiet). The watch lives in the loop's
   own wait set (no descriptor of the source's own) and takes effect at once,
   also in a loop sleeping on another thread; setting what is already set
   costs no system call. Readiness is level-triggered: perform is called on
   each pass while the fd is ready for a watched event (see
   RLRunLoopSourceGetReadyEvents), so it must consume it or stop watching it.
   Once a source has called this, it gets poll()'s answers where epoll has
   none: an fd that is closed (POLLNVAL) or that epoll cannot watch (a
   regular file) counts as ready for everything it watches, and when it
   starts watching again after watching nothing, its number is tried again
   (it may name a new file by then). NULL, invalid or version-0 sources:
   ignored; other bits: ignored. */
void RLRunLoopSourceSetWatchedEvents(RLRunLoopSourceRef source, RLOptionFlags events);
/* Inside the source's own version-1 perform: what its fd was seen ready for
   (kRLRunLoopSource* bits; a hang-up or an error counts as both, as with
   poll()). 0 anywhere else, and for NULL. */
RLOptionFlags RLRunLoopSourceGetReadyEvents(RLRunLoopSourceRef source);

/* ---------------------------------------------------------------------------
 * Observers
 */
typedef struct {
    RLIndex version;
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
} RLRunLoopObserverContext;
typedef void (*RLRunLoopObserverCallBack)(RLRunLoopObserverRef observer, RLRunLoopActivity activity, void *info);

/* Creates an observer of `activities` (a mask of RLRunLoopActivity), called in
   `order` (ties: in the order added). A non-repeating observer is invalidated
   after its first callout. An observer is never called while its callout
   runs (nested runs, or another loop it was moved to, skip it). NULL
   callout: returns NULL. NULL context: info is NULL. Context ownership, as
   CF: retain(info) is called once at creation and release(info) exactly
   once, when the observer is invalidated (or freed if it never was); a
   callout is never bracketed with retain/release. Where we differ from CF:
   an observer invalidated while its callout runs (from the callout or from
   another thread) releases its info when that callout returns, not at once,
   so a callout never uses info that another thread released under it. */
RLRunLoopObserverRef RLRunLoopObserverCreate(RLOptionFlags activities, bool repeats, RLIndex order,
                                             RLRunLoopObserverCallBack callout, RLRunLoopObserverContext *context);
#if __BLOCKS__
RLRunLoopObserverRef RLRunLoopObserverCreateWithHandler(RLOptionFlags activities, bool repeats, RLIndex order,
                                                        void (^block)(RLRunLoopObserverRef observer,
                                                                      RLRunLoopActivity    activity));
#endif
RLOptionFlags RLRunLoopObserverGetActivities(RLRunLoopObserverRef observer); /* 0 for NULL */
bool          RLRunLoopObserverDoesRepeat(RLRunLoopObserverRef observer);    /* false for NULL */
RLIndex       RLRunLoopObserverGetOrder(RLRunLoopObserverRef observer);      /* 0 for NULL */
/* Removes the observer from its loop and releases its info (after the
   callout, if one is running). Safe from inside its own callout and from any
   thread. NULL: ignored. */
void RLRunLoopObserverInvalidate(RLRunLoopObserverRef observer);
bool RLRunLoopObserverIsValid(RLRunLoopObserverRef observer); /* false for NULL */
/* Copies the observer's context. NULL arguments: ignored. */
void RLRunLoopObserverGetContext(RLRunLoopObserverRef observer, RLRunLoopObserverContext *context);

/* ---------------------------------------------------------------------------
 * Timers
 */
typedef struct {
    RLIndex version;
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
} RLRunLoopTimerContext;
typedef void (*RLRunLoopTimerCallBack)(RLRunLoopTimerRef timer, void *info);

/* Creates a timer that fires at `fireDate`, then every `interval` seconds on
   the grid fireDate + k * interval (interval <= 0: fires once). Bad input is
   clamped: a NaN fire date means now; fire dates beyond year 2129 or before
   1873 are clamped there; a date more than ~16 years away is scheduled 16
   years away (in the past: due at once, and a repeating timer's next date is
   then taken from its actual schedule); NaN or negative interval means 0 (one-shot); a positive
   interval is clamped to [1e-6, 504911232] seconds. `flags` is ignored, as in
   CF; `order` is kept but does not affect firing. NULL callout: returns NULL.

   Firing, as CF's __CFRunLoopDoTimers: a pass collects the timers of the
   running mode that are due, in date order, then fires them one at a time.
   Timers with equal dates fire in the order they were scheduled; a timer
   added again, re-dated (even to the same date) or moved to its next date
   after firing goes after the others of its date. A timer counts as firing
   only while its own callout runs: a run of the loop nested in that callout
   fires the other due timers, never this one. A timer that an earlier
   callout of the pass invalidated, removed from the running mode (or moved
   to another loop) or re-dated into the future is skipped and left exactly
   as that callout left it. After the callout, a one-shot timer is
   invalidated; a repeating one goes to the first point of its grid
   fireDate + k * interval after now (once, however late it fired), unless
   its callout set a later date, which is kept. An earlier (or the same)
   date set inside the callout is ignored, as in CF: the timer stays on its
   grid. A timer that its callout moved to another loop (removed here, added
   there) is re-scheduled in that loop, which re-arms for it.

   Context ownership, as CF: retain(info) is called once at creation, and
   release(info) exactly once, when the timer is invalidated (or freed if it
   never was). Each callout is bracketed by retain/release only when
   `retain` is set; a context with `release` but no `retain` hands its info
   over to the timer. Where we differ from CF: a timer invalidated while its
   callout runs (from the callout or from another thread) releases its info
   when that callout returns, not at once, so a callout never uses info that
   another thread released under it. */
RLRunLoopTimerRef RLRunLoopTimerCreate(RLAbsoluteTime fireDate, RLTimeInterval interval, RLOptionFlags flags,
                                       RLIndex order, RLRunLoopTimerCallBack callout, RLRunLoopTimerContext *context);
#if __BLOCKS__
RLRunLoopTimerRef RLRunLoopTimerCreateWithHandler(RLAbsoluteTime fireDate, RLTimeInterval interval, RLOptionFlags flags,
                                                  RLIndex order, void (^block)(RLRunLoopTimerRef timer));
#endif
/* The next fire date; 0 for NULL or invalid timers. */
RLAbsoluteTime RLRunLoopTimerGetNextFireDate(RLRunLoopTimerRef timer);
/* Moves the next fire date (clamped as at creation), from any thread; a sleeping
   loop re-arms without needing a wake-up. NULL or invalid: ignored. */
void           RLRunLoopTimerSetNextFireDate(RLRunLoopTimerRef timer, RLAbsoluteTime fireDate);
RLTimeInterval RLRunLoopTimerGetInterval(RLRunLoopTimerRef timer); /* 0 for NULL */
bool           RLRunLoopTimerDoesRepeat(RLRunLoopTimerRef timer);  /* false for NULL */
RLIndex        RLRunLoopTimerGetOrder(RLRunLoopTimerRef timer);    /* 0 for NULL */
/* Removes the timer from its loop and releases its info (after the callout,
   if one is running). Safe from inside its own callout and from any thread.
   NULL: ignored. */
void RLRunLoopTimerInvalidate(RLRunLoopTimerRef timer);
bool RLRunLoopTimerIsValid(RLRunLoopTimerRef timer); /* false for NULL */
/* Tolerance: how late the loop may fire the timer to share a wake-up with
   other timers. 0 by default. NaN or negative is clamped to 0; for a
   repeating timer it is clamped to half the interval. The loop wakes at the
   latest fire date among the timers whose date is no later than the
   earliest date + tolerance of the mode's timers, and fires every due timer
   then: a timer is never late by more than its tolerance, and a timer whose
   window holds no other timer's date fires at its date (tolerance never
   makes a lone timer late). CF arms a soft and a hard deadline instead; the
   effect is the same kind of grouping. Unlike CF, every timer's tolerance
   counts as at least the loop thread's timer slack (prctl PR_GET_TIMERSLACK,
   read when the loop first runs; 50 us by default), the lateness the kernel
   allows itself for any sleep, and at least an implicit leeway of an eighth
   of how far ahead of its date the timer was scheduled (added, re-dated, or
   advanced after firing; measured on the precise clock, so never more),
   capped at 500 us: a timer scheduled 1 ms ahead may
   wait up to 125 us, one scheduled 4 ms or more ahead up to 500 us, for
   others to share its wake-up. macOS's kernel coalesces timers without
   tolerance in the same proportion (with a cap near a millisecond for a
   foreground app); GetTolerance still answers only the tolerance set. So
   dense timers share one wake-up instead of costing one each, none fires
   before its date, and a lone timer still fires at its date. A timer
   keeps a tolerance in memory it makes on first need: out of memory,
   setting a non-zero tolerance leaves the old one. NULL: ignored (0). */
RLTimeInterval RLRunLoopTimerGetTolerance(RLRunLoopTimerRef timer);
void           RLRunLoopTimerSetTolerance(RLRunLoopTimerRef timer, RLTimeInterval tolerance);
/* Copies the timer's context. NULL arguments: ignored. */
void RLRunLoopTimerGetContext(RLRunLoopTimerRef timer, RLRunLoopTimerContext *context);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_CORE_H */
