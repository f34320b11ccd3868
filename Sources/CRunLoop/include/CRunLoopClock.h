/*
 * CRunLoopClock.h: running a loop on a manual clock, for tests (included by
 * CRunLoop.h).
 *
 * A loop on a manual clock never sleeps, and its timers fire only as far as
 * the program has advanced the clock: a debounce, a retry with back-off or a
 * five-minute timeout is tested in microseconds, in the same order every
 * time, and a loaded machine cannot make a timer late. Everything else is
 * the loop's ordinary model: modes, version-0 and version-1 sources,
 * observers (BeforeWaiting and AfterWaiting still bracket the point where it
 * would sleep), queued functions and blocks, nested runs, RLRunLoopStop and
 * RLRunLoopWakeUp. (SwiftNIO's EmbeddedEventLoop in spirit, with CF's whole
 * model.)
 *
 *     RLRunLoopRef rl = RLRunLoopGetCurrent();
 *     RLRunLoopUseManualClock(rl, 0);              // the loop's time: date 0
 *     RLRunLoopTimerRef retry = RLRunLoopTimerCreate(RLRunLoopGetCurrentTime(rl) + 30, 0, 0, 0, fire, NULL);
 *     RLRunLoopAddTimer(rl, retry, kRLRunLoopDefaultMode);
 *     RLRunLoopClockAdvance(rl, 29.9);
 *     RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false); // kRLRunLoopRunIdle: not yet
 *     RLRunLoopClockAdvance(rl, 0.1);
 *     RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false); // fires at 30.0, then Finished
 *
 * Two readings.
 *  - The clock's time (RLRunLoopClockGetTime): what the program set.
 *    RLRunLoopClockAdvance and RLRunLoopClockSetTime move it forward, never
 *    back, from any thread.
 *  - The loop's time (RLRunLoopGetCurrentTime): what the loop's timers and
 *    runs, and the library's delayed perform requests, idle slices and hang
 *    monitor measure against. It catches up with the clock's time as the
 *    loop runs; once the loop is idle the two are equal.
 *
 * How the loop's time moves. Where a pass of a real loop would sleep (and
 * where a polling pass would poll), a loop on a manual clock moves its time
 * instead: to the moment the mode's timers next want it awake when that is
 * no later than the clock's time, else to the clock's time, and never past
 * the run's own deadline. It then polls the mode's descriptors (epoll_wait
 * with no timeout) and the pass goes on: the timers due then fire, in date
 * order, each callout seeing the loop's time at that wake-up. Advancing ten
 * seconds over a timer that repeats every second fires it ten times, each
 * on its grid point, and a timer a callout schedules on the way fires on the
 * way too, in its place. Only a pass moves the loop's time (a run of an
 * empty mode returns kRLRunLoopRunFinished at once, as always, and moves
 * nothing). Tolerance, the implicit leeway and the thread's
 * timer slack group timers into wake-ups exactly as on real time (see
 * RLRunLoopTimerSetTolerance): two timers 10 us apart share one wake-up, at
 * the later date.
 *
 * Time passing inside a callout. An advance made on the loop's own thread
 * while a run of the loop is active (from a callout: the program's work
 * takes that long) moves the loop's time at once, as real time passes while
 * a callout works: timers that became due fire late, in the next pass, and
 * a repeating timer fires once and skips to its grid, as on real time. An
 * advance from another thread, or on the loop's thread between runs, is
 * caught up with when the loop next runs, as above.
 *
 * What a run returns. The `seconds` of RLRunLoopRunInMode are the clock's:
 * the run returns kRLRunLoopRunTimedOut when the loop's time reaches its
 * start + seconds. A run never blocks: it returns kRLRunLoopRunIdle at the
 * end of a pass that found, at the point where a real loop would have
 * slept, all of these:
 *  - the loop's time has caught up with the clock's time;
 *  - no timer of the mode is due;
 *  - no descriptor of the mode is ready;
 *  - no wake-up is pending (RLRunLoopWakeUp, RLRunLoopStop, an advance or a
 *    change to the mode's timers made by another thread wake the loop);
 * and the pass neither polled (a run with seconds <= 0 makes one pass and
 * returns kRLRunLoopRunTimedOut, as on real time) nor performed a version-0
 * source. The exit checks come in CF's order, Idle last: HandledSource,
 * TimedOut, Stopped, Finished, Idle. RLRunLoopRun returns on Idle. A nested
 * run goes idle by the same rule and returns to the callout that ran it.
 *
 * Other threads. Any thread may read the clock and advance it; an advance
 * wakes the loop, so that a run in progress catches up before it goes idle.
 * A run that went idle just before another thread's advance does not see
 * it: the program runs the loop again (a manual loop waits for no one).
 *
 * Dates. RLAbsoluteTimeGetCurrent stays the real wall clock (it names no
 * loop); date a manual loop's timers on its time: RLRunLoopGetCurrentTime(rl)
 * + delay. A manual clock counts nanoseconds since 2001 (the real clock's
 * deadlines are CLOCK_MONOTONIC's): near date 0 (a clock started at 0) the
 * loop's time and timer dates are exact to the nanosecond and compare equal;
 * near today's date they have a double's precision there (~0.1 us).
 *
 * Timers and the two kinds of clock. A timer keeps its date, whichever
 * loop it is in. A timer is in one loop at a time (adding it to a second
 * loop is ignored, as always); removed from a real loop and added to a
 * manual one, or back, it is due when that loop's time reaches its date
 * (a date more than ~16 years ahead of that time is scheduled 16 years
 * ahead, as on real time: a timer dated on the wall clock and added to a
 * loop whose manual clock reads 0 waits 16 years). One that its own callout moves to a loop
 * on the other kind of clock is dated there the same way (a repeating one
 * goes on from the date it fired for, on its grid). Switching a loop's
 * clock keeps every timer's date and takes its deadline again, timers of
 * equal dates keeping their order.
 *
 * The rest of the library on a manual clock:
 *  - RLRunLoopPerformRequestAfterDelay dates its timer on the loop's time.
 *  - RLIdleQueue measures its slices on the loop's time: only an advance made
 *    by a task ends a slice early.
 *  - RLHangMonitor, started while the loop is on a manual clock, measures
 *    time awake on the loop's time: a callout that advances the clock by
 *    more than the threshold is a stall, reported on the watchdog thread as
 *    usual (its backtrace is of wherever the loop's thread is when the signal
 *    lands, possibly past that callout). Switch the clock while the monitor
 *    is stopped.
 *  - Embedding (CRunLoopEmbed.h): RLRunLoopEmbedPrepare's timeout is -1
 *    unless a timer is due by the clock's time (then 0, and the descriptor
 *    is readable); each polling pass moves the loop's time one wake-up on.
 *  - What real threads wait for stays real time: a perform request's
 *    waitUntilDone timeout, RLThreadStop, the hang monitor's one-second wait
 *    for a backtrace.
 *
 * Differs from CF: CF has no manual clock (nor kRLRunLoopRunIdle).
 */
#ifndef CRUNLOOP_CLOCK_H
#define CRUNLOOP_CLOCK_H

#include "CRunLoopCore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Puts rl on a manual clock reading `date` (both readings), or restarts the
   manual clock of a loop already on one at `date` (any date, earlier too).
   Every timer of the loop keeps its date; its deadline is taken again on
   the new clock. Only on rl's own thread while no run of rl is active (not
   from a callout): false then, and for a NULL rl, a NaN date, a loop whose
   thread has exited, or out of memory, with nothing changed. Dates beyond
   the year 2129 or before 1873 are clamped there, as timer dates are. */
bool RLRunLoopUseManualClock(RLRunLoopRef rl, RLAbsoluteTime date);
/* Puts rl back on real time: its timers keep their dates, measured on the
   wall clock again. Same conditions as RLRunLoopUseManualClock; true for a
   loop already on real time. */
bool RLRunLoopUseRealClock(RLRunLoopRef rl);
/* Whether rl runs on a manual clock; false for NULL. Any thread. */
bool RLRunLoopHasManualClock(RLRunLoopRef rl);
/* The loop's time: on a manual clock, how far the loop has caught up with
   the clock (inside a timer's callout, the time of the wake-up that fires
   it); on real time, and for NULL, RLAbsoluteTimeGetCurrent(). Any thread. */
RLAbsoluteTime RLRunLoopGetCurrentTime(RLRunLoopRef rl);
/* The clock's time: on a manual clock, what the program has advanced it to
   (never behind RLRunLoopGetCurrentTime); on real time, and for NULL,
   RLAbsoluteTimeGetCurrent(). Any thread. */
RLAbsoluteTime RLRunLoopClockGetTime(RLRunLoopRef rl);
/* Advances rl's manual clock by `seconds` (0 moves nothing), from any
   thread; see "How the loop's time moves" and "Time passing inside a
   callout" above. From another thread, wakes the loop. False, nothing done,
   for a NULL rl, a loop on real time, or NaN, negative or infinite seconds.
   The clock stops at the year 2129. */
bool RLRunLoopClockAdvance(RLRunLoopRef rl, RLTimeInterval seconds);
/* RLRunLoopClockAdvance to `date`: by date - RLRunLoopClockGetTime(rl).
   False, nothing done, for a date earlier than the clock's time (a manual
   clock never goes back: restart it with RLRunLoopUseManualClock), NaN, a
   NULL rl or a loop on real time. */
bool RLRunLoopClockSetTime(RLRunLoopRef rl, RLAbsoluteTime date);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_CLOCK_H */
