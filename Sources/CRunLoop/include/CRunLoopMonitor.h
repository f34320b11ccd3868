/*
 * CRunLoopMonitor.h: the hang monitor and idle tasks (included by CRunLoop.h).
 *
 * Both are built on the public API alone (observers, RLRunLoopWakeUp, a
 * version-0 source) plus POSIX, as an application could build them; they are
 * the two classic recipes built on a run loop's observers, done properly:
 *
 *  - RLHangMonitor (a stall or "jank" monitor): observers record when each
 *    activity of a loop happens, a watchdog thread notices when the loop has
 *    been awake too long since its last activity and reports the stall, with
 *    the loop thread's backtrace, the mode and the activity it is stuck after.
 *  - RLIdleQueue (idle-time work, as UI toolkits do it): tasks that run in
 *    kRLRunLoopBeforeWaiting, i.e. only when the loop has nothing else to do
 *    and is about to sleep, a bounded slice per pass.
 *
 * Every function is thread-safe and accepts NULL and invalidated objects
 * (what it does then is written next to it).
 */
#ifndef CRUNLOOP_MONITOR_H
#define CRUNLOOP_MONITOR_H

#include "CRunLoopCore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * RLHangMonitor
 *
 * What counts as a stall: the loop's thread is awake (inside a run of the
 * loop and not sleeping in it) and no activity has happened for longer than
 * the threshold: one segment of a pass (BeforeSources -> BeforeWaiting,
 * AfterWaiting -> BeforeWaiting, a callout between two activities, ...) took
 * too long. Time asleep in kRLRunLoopBeforeWaiting -> kRLRunLoopAfterWaiting,
 * and time outside every run of the loop (after the outermost
 * kRLRunLoopExit), is never a stall. A stall is reported once the threshold
 * has passed, then again every `threshold` seconds while it lasts, with the
 * duration so far; it ends at the loop's next activity. A monitor started
 * while its loop runs on a manual clock (CRunLoopClock.h) measures on the
 * loop's time: only a callout that advances the clock by more than the
 * threshold is a stall (the watchdog waits for such advances instead of
 * timing out); switch the loop's clock while the monitor is stopped.
 *
 * How it watches: two observers per watched mode (order LONG_MIN for Entry,
 * BeforeTimers, BeforeSources and AfterWaiting, so the clock restarts before
 * other observers run; order LONG_MAX for BeforeWaiting and Exit, so other
 * observers' work there counts as awake). Each callout reads the monotonic
 * clock and stores one 64-bit word (time, activity, mode) atomically; it
 * takes a lock only when the watchdog thread is parked and must be woken (at
 * most once per sleep of the watchdog). The watchdog thread waits on a
 * condition variable: until the threshold passes after the last activity
 * while the loop is awake, with no timeout while it sleeps; it never polls.
 *
 * The backtrace: the watchdog sends the real-time signal
 * RLHangMonitorGetSignal() (SIGRTMIN + 6) to the loop's thread with tgkill;
 * the handler (installed with SA_RESTART|SA_SIGINFO while at least one
 * monitor is started, the previous action restored when the last one stops)
 * calls backtrace() into a preallocated buffer; the watchdog symbolises it
 * with backtrace_symbols. Consequences a user should know:
 *  - the handler briefly interrupts the stalled thread; system calls that
 *    are never restarted after a handler (nanosleep, poll, epoll_wait,
 *    select, ...) return EINTR (or the time left) in it, as with any signal.
 *    Only a thread found stalled is signalled, once per report.
 *  - do not use that signal for anything else (RLSignalSourceCreate with it,
 *    or a handler of your own) while a monitor is started.
 *  - if the thread blocks the signal, the report comes after about a second
 *    without a backtrace (frameCount 0).
 *  - names come from the dynamic symbol table: functions of a shared library
 *    are named; those of the executable only if it was linked with -rdynamic
 *    (static functions never). Unnamed frames show module(+offset), which
 *    addr2line resolves. The core's callouts (RL_IS_CALLING_OUT_TO_A_TIMER_
 *    CALLBACK_FUNCTION, ..._A_SOURCE0_PERFORM_FUNCTION, ...) are global, so a
 *    stall's stack names the phase the loop was in.
 * ======================================================================== */

/* A hang monitor is an RL object: RLRetain/RLRelease/RLCopyDescription work on
   it (the description shows its state, loop, threshold and counts). */
typedef struct __RLHangMonitor *RLHangMonitorRef;

/* RLRunLoopStatistics, in CRunLoopStatistics.h. */
struct RLRunLoopStatistics;

/* One report of a stall. Every pointer in it is valid only during the
   callback. */
typedef struct {
    RLRunLoopRef       runLoop;      /* the loop being watched */
    RLTimeInterval     duration;     /* seconds awake since `activity`, so far */
    RLTimeInterval     threshold;    /* the monitor's threshold */
    RLRunLoopActivity  activity;     /* the last activity before the stall */
    const char        *mode;         /* the mode of that activity */
    uint64_t           stallNumber;  /* 1 for the first stall this monitor saw, then 2, ... */
    uint32_t           reportNumber; /* 1 for the first report of this stall, then 2, ... */
    int                frameCount;   /* frames captured; 0 when the stack could not be had */
    const char *const *frames;       /* symbolised frames, innermost first (frameCount of them) */
    void *const       *addresses;    /* their return addresses */
    /* The loop's statistics when the report was made (RLRunLoopCopyStatistics,
       read from the watchdog thread while the loop is stalled: the callout
       that stalls it is not in them yet); NULL if they could not be read. */
    const struct RLRunLoopStatistics *statistics;
} RLHangReport;

/* Called on the watchdog thread (never on the loop's thread) for each report.
   It may call any function of this library, including Stop, Invalidate and
   Release of this monitor. The loop goes on meanwhile: by the time it runs the
   stall may have ended. */
typedef void (*RLHangMonitorCallBack)(RLHangMonitorRef monitor, const RLHangReport *report, void *info);

typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    char *(*copyDescription)(const void *info);
} RLHangMonitorContext;

/* The most frames a report holds. */
#define RL_HANG_MONITOR_MAX_FRAMES 64

/* Makes a stopped monitor of `rl` (which may belong to any thread) that
   reports a stall after `threshold` seconds awake, to `callback`, or when
   callback is NULL to RLHangReportWrite(report, 2) (stderr). The context is
   copied and retain(info) called; release(info) is called at invalidation,
   after the last callback returned. `threshold` below 0.001 is raised to
   0.001, above 1e6 lowered to 1e6. Returns NULL for a NULL rl, a NaN or
   non-positive threshold, or when out of memory. The caller owns the
   returned reference (RLHangMonitorRelease or RLRelease). */
RLHangMonitorRef RLHangMonitorCreate(RLRunLoopRef rl, RLTimeInterval threshold, RLHangMonitorCallBack callback,
                                     const RLHangMonitorContext *context);
/* Starts watching: adds the observers to every mode the loop has now
   (RLRunLoopCopyAllModes) and to kRLRunLoopDefaultMode, starts the watchdog
   thread on first use and installs the signal handler. Modes made later are
   watched once passed to RLHangMonitorAddMode (or after a Stop and a Start);
   a run in a mode not watched counts as part of the callout that runs it,
   except while it sleeps (the watchdog checks RLRunLoopIsWaiting before it
   reports). Starting a started monitor does nothing. Returns false for NULL,
   an invalidated monitor, or when the thread or observers cannot be made. */
bool RLHangMonitorStart(RLHangMonitorRef monitor);
/* Also watches `mode` (a no-op if it is watched already); takes effect at
   once when started, else at the next Start. kRLRunLoopCommonModes: every
   mode the loop has now. NULL, empty mode or invalidated monitor: ignored. */
void RLHangMonitorAddMode(RLHangMonitorRef monitor, RLRunLoopMode mode);
/* Stops watching: removes the observers; the watchdog thread stays, parked.
   A report already being made is still delivered. Idempotent; from any
   thread, including the callback. NULL: ignored. */
void RLHangMonitorStop(RLHangMonitorRef monitor);
/* Whether the monitor is started. false for NULL. */
bool RLHangMonitorIsRunning(RLHangMonitorRef monitor);
/* Stops the monitor for good: Stop, end the watchdog thread (waiting for a
   callback in progress, unless called from the callback itself, in which case
   the thread ends when it returns) and release the context's info. Idempotent;
   from any thread. NULL: ignored. */
void RLHangMonitorInvalidate(RLHangMonitorRef monitor);
/* false after RLHangMonitorInvalidate and for NULL. */
bool RLHangMonitorIsValid(RLHangMonitorRef monitor);
/* Stalls seen so far (each counted once, however many reports it had); 0 for NULL. */
uint64_t RLHangMonitorGetStallCount(RLHangMonitorRef monitor);
/* Reports delivered so far; 0 for NULL. */
uint64_t RLHangMonitorGetReportCount(RLHangMonitorRef monitor);
/* The threshold after clamping; 0 for NULL. */
RLTimeInterval RLHangMonitorGetThreshold(RLHangMonitorRef monitor);
/* RLRelease for a monitor: gives up the caller's reference. The last
   reference (dropped by either name, from any thread, including the
   callback) invalidates the monitor first, as RLHangMonitorInvalidate; the
   memory is freed once the observers and the watchdog thread are done with
   it. The reference must not be used afterwards. NULL: ignored; an object
   that is not a monitor: aborts. */
void RLHangMonitorRelease(RLHangMonitorRef monitor);
/* The signal used to capture backtraces: SIGRTMIN + 6. */
int RLHangMonitorGetSignal(void);
/* Writes a report as the default callback does, to file descriptor `fd`:
     RLHangMonitor: run loop 0x... stalled 0.301 s (threshold 0.100 s, stall 1, report 1)
       in mode "kCFRunLoopDefaultMode" after kRLRunLoopBeforeSources; stack:
       #0  /lib/x86_64-linux-gnu/libc.so.6(clock_nanosleep+0xd9) [0x7f...]
       ...
       loop statistics:
       passes 12, sleeps 9; woken by timer 3, descriptor 0, wake-up 6, signal 0, timeout 0
       callouts: observer 40, timer 3, source0 0, source1 0, block 6, main queue 0
       longest callout: 4.000 ms, timer 0x55...
       timers: 3 fired, 0 later than their tolerance (latest 0.061 ms after its date)
   (the statistics as RLRunLoopStatisticsCopyDescription writes them).
   NULL report or a bad fd: nothing is written. */
void RLHangReportWrite(const RLHangReport *report, int fd);
/* The name of one activity ("kRLRunLoopBeforeSources", ...), "unknown" for
   anything else. Static storage. */
const char *RLRunLoopActivityGetName(RLRunLoopActivity activity);

/* ===========================================================================
 * RLIdleQueue
 *
 * A FIFO of tasks a loop runs only when it is idle: in a kRLRunLoopBeforeWaiting
 * observer (order LONG_MAX - 1, after the application's own BeforeWaiting
 * observers), i.e. on passes that would go to sleep. Each such pass runs one
 * task, or with a slice > 0 tasks until `slice` seconds have passed on the
 * loop's time (RLRunLoopGetCurrentTime: on a manual clock, only the tasks'
 * own advances of it count; the task that crosses the limit finishes: a task
 * is never interrupted), then, while
 * tasks remain, calls RLRunLoopWakeUp so that the loop polls instead of
 * sleeping, services its timers and sources, and comes back for the next
 * slice. So timers and sources wait at most one slice (or one task) for idle
 * work.
 *
 * Policy: idle means "about to sleep", as in CF. A pass that handled a
 * version-0 source, and every pass of a polling run (RLRunLoopRunInMode with
 * seconds <= 0), does not reach BeforeWaiting, so a source signalled every
 * pass starves the queue; the tasks run once the loop has a pass with nothing
 * else to do. Tasks run on the loop's thread, in submission order, with no
 * lock held; they may submit or cancel tasks (a task submitted by a task is
 * queued after the others), run the loop, or invalidate the queue.
 *
 * While tasks are pending the queue keeps a never-signalled version-0 source
 * in its mode, so the mode is not empty and a run does not return
 * kRLRunLoopRunFinished with work left; the source leaves when the queue
 * drains.
 * ======================================================================== */

/* An idle queue is an RL object: RLRetain/RLRelease/RLCopyDescription work on
   it (the description shows its loop, mode, slice and task counts). */
typedef struct __RLIdleQueue *RLIdleQueueRef;
/* Identifies a submitted task; never 0 for a task that was queued. */
typedef uint64_t RLIdleTaskToken;

/* Makes a queue whose tasks run in `mode` of `rl` (kRLRunLoopCommonModes: in
   every common mode). slice <= 0 or NaN: one task per idle pass; otherwise
   clamped to at most 10 seconds. NULL rl, NULL or empty mode, or out of
   memory: NULL. The caller owns the returned reference (RLIdleQueueRelease
   or RLRelease). */
RLIdleQueueRef RLIdleQueueCreate(RLRunLoopRef rl, RLRunLoopMode mode, RLTimeInterval slice);
/* Queues fn(info), from any thread; wakes the loop so that it runs soon if it
   is idle. release(info), if not NULL, is called exactly once: after fn ran,
   or without fn when the task is cancelled, the queue is invalidated, or the
   task was not queued. Returns the task's token; 0 (and release(info) called
   at once) for a NULL fn, a NULL or invalidated queue, or out of memory. */
RLIdleTaskToken RLIdleQueueSubmit(RLIdleQueueRef queue, void (*fn)(void *info), void *info,
                                  void (*release)(void *info));
/* Removes a task that has not started: release(info) is called (fn is not)
   and true returned. false when it already ran, is running, was cancelled,
   for token 0 and for a NULL queue. O(pending tasks). */
bool RLIdleQueueCancel(RLIdleQueueRef queue, RLIdleTaskToken token);
/* Tasks queued and not started; 0 for NULL. */
RLIndex RLIdleQueueGetPendingCount(RLIdleQueueRef queue);
/* Tasks run so far; 0 for NULL. */
uint64_t RLIdleQueueGetCompletedCount(RLIdleQueueRef queue);
/* The slice in seconds (0: one task per idle pass); 0 for NULL. */
RLTimeInterval RLIdleQueueGetSlice(RLIdleQueueRef queue);
/* Changes the slice, clamped as at creation. NULL: ignored. */
void RLIdleQueueSetSlice(RLIdleQueueRef queue, RLTimeInterval slice);
/* Stops the queue for good: its observer and source leave the loop, pending
   tasks are dropped (each release called, fn not), later submissions fail.
   A task running on the loop's thread finishes. Idempotent; from any thread,
   including a task. NULL: ignored. */
void RLIdleQueueInvalidate(RLIdleQueueRef queue);
/* false after invalidation and for NULL. */
bool RLIdleQueueIsValid(RLIdleQueueRef queue);
/* RLRelease for a queue: gives up the caller's reference. The last reference
   (dropped by either name, from any thread, including a task) invalidates the
   queue first, as RLIdleQueueInvalidate; the memory is freed once the loop is
   done with it. NULL: ignored; an object that is not a queue: aborts. */
void RLIdleQueueRelease(RLIdleQueueRef queue);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_MONITOR_H */
