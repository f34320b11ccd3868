/*
 * CRunLoopEmbed.h: running a loop inside another event loop (GLib, libuv,
 * Foundation's RunLoop, a hand-written poll() loop), without polling and
 * without a thread of its own.
 *
 * A loop offers one descriptor. After RLRunLoopEmbedPrepare(rl, mode), it is
 * readable exactly when a pass of `rl` in `mode` has work: a version-1 source
 * of the mode ready, a timer of the mode due, a wake-up (RLRunLoopWakeUp), a
 * signalled version-0 source or a queued block. The host sleeps on it (with
 * the timeout Prepare gave, if it likes), then runs one pass that never
 * blocks: RLRunLoopRunInMode(mode, 0, false), on the loop's thread.
 *
 *     #include <CRunLoopEmbed.h>
 *     #include <poll.h>
 *
 *     RLRunLoopRef rl = RLRunLoopGetCurrent();
 *     int fd = RLRunLoopEmbedGetFD(rl);              // once; never changes
 *     for (;;) {
 *         int timeout;
 *         RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout);
 *         struct pollfd p = {.fd = fd, .events = POLLIN};
 *         poll(&p, 1, timeout);                      // the host's own sleep
 *         RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
 *     }
 *
 * Costs: an idle loop never makes the descriptor readable, so it costs the
 * host no wake-up at all; a timer costs one wake-up when it is due (the
 * loop's timerfd is inside the descriptor); a wake-up from another thread is
 * one write, as when the loop sleeps by itself. Prepare is a few atomic
 * operations and, when the mode's next timer changed, one timerfd_settime;
 * for a mode with nothing in it, one epoll_wait that takes leftover edges
 * off (its pass returns before it would); and, when the host is about to
 * sleep (no work now), one epoll_ctl that checks the descriptor is still the
 * loop's (well under a microsecond, beside the sleep it guards).
 *
 * Where this differs from CF (which has no such API):
 * - A pass that polls skips the BeforeWaiting and AfterWaiting observers (as
 *   CF's RunInMode(mode, 0) does), so they never run while a host drives the
 *   loop; Entry, BeforeTimers, BeforeSources and Exit run in every pass. Work
 *   hung on BeforeWaiting (RLIdleQueue) waits until the loop sleeps by itself.
 * - While the host sleeps after Prepare, RLRunLoopIsWaiting(rl) is true.
 */
#ifndef CRUNLOOP_EMBED_H
#define CRUNLOOP_EMBED_H

#include "CRunLoopCore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The loop's embedding descriptor: an epoll descriptor the loop owns. Watch
   it for readability (POLLIN, EPOLLIN, G_IO_IN), level-triggered; never read,
   write or close it. Made on the first call, then the same number for the
   loop's whole life (a forked child that uses the loop gets its own
   descriptor under the same number). Any thread.
   Closing it, or putting another file under its number (dup2, a routine
   that closes every descriptor), is a program error, as for the loop's
   other own descriptors (CRunLoopCore.h): the host would sleep on that file
   (/dev/null is always readable) or on a dead number, and spin. The next
   RLRunLoopEmbedPrepare that would let the host sleep notices it and aborts
   with one line naming the call, "the loop's embedding set", its number and
   errno. It never hands out a new descriptor: the host holds the number it
   was given, and a quiet replacement would hide the bug.
   -1: rl NULL, the loop's thread has exited, or out of descriptors (call
   again later). */
int RLRunLoopEmbedGetFD(RLRunLoopRef rl);

/* On rl's own thread, before every sleep of the host: aims the descriptor
   at `mode` (that mode's version-1 sources and its next timer; other modes'
   never make it readable) and stores in *timeout_ms the time until the
   mode's next timer, in milliseconds rounded up: -1 when it has none, 0 when
   there is work now. timeout_ms may be NULL: the descriptor alone is enough
   (the loop's timerfd is inside it). Only if the loop could make no timerfd
   or epoll set (out of descriptors) must the host honour the timeout, which
   is then at most 10 ms while the set is missing.
   Returns true when the loop knows of work now (a due timer, a signalled
   version-0 source, a queued block, a wake-up): the descriptor is then
   already readable. Ready version-1 sources make it readable too but do not
   count in the result (the host's poll sees them).
   Calls no user code and takes the loop's lock briefly. A mode named for
   the first time is made (as naming a mode anywhere does).
   Bad input (rl NULL, mode NULL, empty or the common-modes marker, not
   called on rl's thread, thread exited): returns false, *timeout_ms = -1,
   nothing else happens. */
bool RLRunLoopEmbedPrepare(RLRunLoopRef rl, RLRunLoopMode mode, int *timeout_ms);

/* The host no longer sleeps on the descriptor (it stops embedding, or runs
   the loop by itself from now on): wake-ups stop writing to it. Prepare
   starts embedding again. Optional. rl's thread; NULL or another thread:
   nothing happens. */
void RLRunLoopEmbedCancel(RLRunLoopRef rl);

#ifdef __cplusplus
}
#endif

#endif
