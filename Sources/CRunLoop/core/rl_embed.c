/*
 * rl_embed.c: a loop driven by a host's event loop (CRunLoopEmbed.h).
 *
 * The embedding descriptor is an epoll set of its own holding one thing: the
 * loop's wait set (its epoll descriptor), level-triggered. An epoll set is
 * readable while its ready list holds an event, so the descriptor is
 * readable exactly when the loop's own sleep would end now:
 * - the wake eventfd (edge-triggered, never read) is on the ready list from
 *   a write until a pass's epoll_wait reports it;
 * - the timerfd (armed by Prepare for the mode's next timer) from its expiry
 *   until a pass reports it (or it is re-armed);
 * - a version-1 source of the armed mode while its fd is readable; other
 *   modes' registrations are disarmed and never listed.
 * The pass the host runs polls the wait set (epoll_wait, timeout 0), which
 * takes the edges off the ready list: the descriptor goes quiet again by
 * itself. Nothing is ever read, so an idle loop makes no system call and
 * the host no wake-up.
 *
 * The loop's wait set is remade now and then (a closed fd left in it, fd
 * exhaustion, a fork); the embedding set is not, so the host's descriptor
 * never changes: the wait set leaves it before it is closed (rl_embed_fd_detach_locked)
 * and the new one joins it (rl_embed_fd_attach_locked). A forked child replaces its
 * copy of the embedding set (shared with the parent, so touching it would
 * touch the parent's) by a new one under the same number. Those hooks of the
 * wait set are rl_embed_fd.c's, below rl_wait_set.c; this file drives the loop
 * for a host, above it.
 *
 * Work that is no event (a signalled version-0 source, a queued block, a
 * wake-up that came while no one slept) is found by Prepare, which then
 * writes the wake eventfd itself. While the host sleeps, `sleeping` is on,
 * so RLRunLoopWakeUp writes the eventfd as for a loop asleep by itself; the
 * Dekker pairing of `sleeping` and `wake_pending` (rl_wait.c) is the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "CRunLoopEmbed.h"
#include "rl_internal.h"
#include "rl_signal_inbox.h"

/* ---- API ----------------------------------------------------------------- */

int RLRunLoopEmbedGetFD(RLRunLoopRef rl) {
    if (!rl) return -1;
    rl_loop_lock(rl);
    int fd = -1;
    if (!rl->dead) {
        /* In a forked child the number must name the child's own set from
           the first call, never the parent's. */
        rl_wait_set_own_kernel_objects_locked(rl);
        fd = rl_embed_fd_open_locked(rl);
    }
    rl_loop_unlock(rl);
    return fd;
}

/* The mode's timers' wake-up, leaving out the deadline of a run of that
   mode that may be active further out (a host driving the loop from inside
   one of the loop's own callouts): that run's deadline is not the host's. */
static int64_t timers_deadline(rl_mode *m) {
    int64_t run_deadline = m->run_deadline_ns;
    m->run_deadline_ns = RL_NEVER;
    int64_t deadline = rl_mode_next_deadline(m);
    m->run_deadline_ns = run_deadline;
    return deadline;
}

/* An empty mode's pass finishes before it looks at the wait set, so nothing
   would take a leftover edge (a wake-up, an expired timer) off the ready
   list and the host would spin: take them off here. */
static void drain_wait_set(RLRunLoopRef rl) {
    struct epoll_event events[16];
    int n;
    do {
        n = rl_wait_events(rl, events, 16, 0);
        for (int i = 0; i < n; i++)
            if (events[i].data.u64 == RL_EVENT_TIMER) rl->wait.armed_ns = RL_NEVER;
    } while (n == 16 || (n < 0 && errno == EINTR));
}

/* Now, for a host: on a manual clock the clock's time, and a timer not due
   by then never ends the host's sleep (only the program moves the clock,
   and its advance wakes the loop). */
static int64_t host_now(RLRunLoopRef rl, int64_t *deadline) {
    rl_manual_clock *c = rl_loop_manual_clock(rl);
    if (!c) return rl_mono_now();
    int64_t clock_time = atomic_load(&c->target);
    if (*deadline > clock_time) *deadline = RL_NEVER;
    return clock_time;
}

static int timeout_ms_until(int64_t deadline, int64_t now) {
    if (deadline == RL_NEVER) return -1;
    if (deadline <= now) return 0;
    int64_t ms = (deadline - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

bool RLRunLoopEmbedPrepare(RLRunLoopRef rl, RLRunLoopMode mode, int *timeout_ms) {
    if (timeout_ms) *timeout_ms = -1;
    if (!rl || !rl_mode_name_is_valid(mode) || rl_mode_name_is_common(mode) || !rl_loop_is_current_thread(rl))
        return false;
    rl_loop_lock(rl);
    rl_mode *m = rl->dead ? NULL : rl_mode_find_or_create(rl, mode);
    if (!m) {
        rl_loop_unlock(rl);
        return false;
    }
    rl_wait_set_prepare_locked(rl, m); /* arms m's sources; remakes what must be */
    rl_embed_fd_wait_in_locked(rl, m); /* joins the wait set if it could not before */
    int64_t deadline = timers_deadline(m);
    bool timerfd_armed = rl_mode_arm_locked(m, deadline);
    /* From here wakers write the eventfd; what they did before is seen
       below (their changes were made under the lock, before their wake-up). */
    atomic_store(&rl->wait.sleeping, true);
    int64_t now = host_now(rl, &deadline);
    bool work;
    if (rl_mode_is_empty(rl, m)) {
        /* Nothing can run: a pass would finish at once. */
        atomic_store(&rl->wait.wake_pending, false);
        drain_wait_set(rl);
        work = false;
    } else {
        bool timer_due = deadline <= now;
        bool other = rl_mode_has_blocks(rl, m) || rl_signal_inbox_has_signalled_locked(rl, m) ||
                     atomic_load(&rl->wait.wake_pending);
        work = timer_due || other;
        /* A due timer makes the descriptor readable through the timerfd;
           everything else through the eventfd. */
        if (other || (timer_due && !timerfd_armed)) {
            atomic_store(&rl->wait.wake_pending, true);
            rl_wait_signal(rl);
        }
    }
    int timeout = work ? 0 : timeout_ms_until(deadline, now);
    /* The host is about to sleep on the descriptor: it must still be ours
       (one epoll_ctl; with work now the host only polls, and comes back). */
    if (timeout != 0) rl_embed_fd_check_locked(rl);
    /* No set to sleep on, none in the host's descriptor, or no wake
       eventfd to end the sleep: poll. */
    bool in_host_fd = rl_embed_fd_holds_wait_set_locked(rl);
    if ((rl->wait_set.epoll_fd < 0 || !in_host_fd || rl->wait_set.wake_fd < 0) && (timeout < 0 || timeout > 10))
        timeout = 10;
    rl_loop_unlock(rl);
    if (timeout_ms) *timeout_ms = timeout;
    return work;
}

void RLRunLoopEmbedCancel(RLRunLoopRef rl) {
    if (!rl || !rl_loop_is_current_thread(rl)) return;
    rl_loop_lock(rl);
    rl_embed_fd_cancel_locked(rl);
    atomic_store(&rl->wait.sleeping, false);
    rl_loop_unlock(rl);
}
