/*
 * rl_wait.c: the sleep/wake handshake: RLRunLoopWakeUp and
 * RLRunLoopIsWaiting, the spin before a sleep, and the sleep itself, the
 * library's only blocking epoll_wait (the end of this file); and the
 * timerfd that ends a sleep at its deadline. The run computes the deadline;
 * the set the loop sleeps on, and the version-1 sources registered in it,
 * are rl_wait_set.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "rl_internal.h"

/* ---- timer --------------------------------------------------------------- */

/* A run that returns after each handled source and is entered again asks
   for its timeout from a fresh "now" each time, so the deadline creeps later
   by a few microseconds per entry. An expiry already armed a little earlier
   than the new deadline, and far enough ahead that the difference is small
   beside the time left, is kept: it can only end a sleep early (the pass
   then finds nothing due and arms the real deadline), and it saves a system
   call per entry. */
static bool armed_expiry_will_do(RLRunLoopRef rl, int64_t deadline) {
    if (rl->wait.timer_fd < 0 || rl->wait.armed_ns == RL_NEVER || deadline == RL_NEVER || deadline < rl->wait.armed_ns)
        return false;
    int64_t now = rl_mono_now();
    return rl->wait.armed_ns > now && deadline - rl->wait.armed_ns <= (rl->wait.armed_ns - now) / 16;
}

bool rl_wait_arm_timer_locked(RLRunLoopRef rl, int64_t deadline) {
    rl_wait_set_own_kernel_objects_locked(rl);
    if (deadline == rl->wait.armed_ns) return rl->wait.timer_fd >= 0 || deadline == RL_NEVER;
    if (armed_expiry_will_do(rl, deadline)) return true;
    if (rl->wait.timer_fd < 0) {
        if (deadline == RL_NEVER) return true;
        if (rl->wait_set.epoll_fd < 0) return false;
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (tfd < 0) return false; /* out of descriptors: the wait times out by itself */
        if (!rl_wait_set_join_own(rl, tfd, RL_EVENT_TIMER, "the loop's timerfd")) {
            close(tfd); /* out of memory: as without a timerfd, tried again next time */
            return false;
        }
        rl->wait.timer_fd = tfd;
    }
    struct itimerspec spec = {0};
    if (deadline != RL_NEVER) {
        int64_t at = deadline < 1 ? 1 : deadline; /* 0 would disarm; the past fires at once */
        spec.it_value.tv_sec = at / 1000000000;
        spec.it_value.tv_nsec = at % 1000000000;
    }
    /* Its only failures are bugs (a timerfd that is no longer one). */
    int rc;
    while ((rc = timerfd_settime(rl->wait.timer_fd, TFD_TIMER_ABSTIME, &spec, NULL)) < 0 && errno == EINTR) {}
    if (rc < 0) rl_fatal_errno("timerfd_settime", "the loop's timerfd", rl->wait.timer_fd, errno);
    rl->wait.armed_ns = deadline; /* what the kernel accepted */
    return true;
}

/* ---- wake-up ------------------------------------------------------------- */

void rl_wait_signal(RLRunLoopRef rl) {
    /* A loop not remade since a fork has never slept in this process; its
       eventfd is the parent's. */
    if (rl_wait_set_inherited(rl)) return;
    int fd = rl->wait_set.wake_fd;
    if (fd < 0) return;
    rl_eventfd_signal(fd, "the loop's wake eventfd");
}

/* ---- the wait ------------------------------------------------------------ */

/* Without an epoll set (out of descriptors): sleeps in short slices, watching
   for a wake-up, so the loop neither spins nor misses its deadline. */
static int sleep_without_a_set(RLRunLoopRef rl, int timeout_ms) {
    int slice = timeout_ms < 0 || timeout_ms > 10 ? 10 : timeout_ms;
    struct timespec ts = {0, (long)slice * 1000000};
    if (slice > 0 && !atomic_load(&rl->wait.wake_pending)) nanosleep(&ts, NULL);
    return 0;
}

int rl_wait_events(RLRunLoopRef rl, struct epoll_event *events, int max, int timeout_ms) {
    if (rl->wait_set.epoll_fd < 0) return sleep_without_a_set(rl, timeout_ms);
    /* Without a wake eventfd (none could be made) no wake-up can end the
       sleep: sleep in slices, and try to make one before the next. */
    if (rl->wait_set.wake_fd < 0 && (timeout_ms < 0 || timeout_ms > 10)) timeout_ms = 10;
    int n = epoll_wait(rl->wait_set.epoll_fd, events, max, timeout_ms);
    if (n < 0 && errno != EINTR) rl_fatal_errno("epoll_wait", "the loop's epoll set", rl->wait_set.epoll_fd, errno);
    return n;
}

/* ---- sleeping and waking --------------------------------------------------
 * CF's ignore-wake-ups, done with two atomics: the loop sets `sleeping` then
 * reads `wake_pending` before it waits; a waker sets `wake_pending` then
 * reads `sleeping`. Both sequentially consistent, so at least one side sees
 * the other: either the loop skips its sleep, or the waker writes the
 * eventfd. Only the waker that turns `wake_pending` on may write, so a burst
 * of wake-ups costs one system call, and a wake-up of a loop that is awake
 * costs none. */

void RLRunLoopWakeUp(RLRunLoopRef rl) {
    if (!rl) return;
    if (atomic_exchange(&rl->wait.wake_pending, true)) return;
    bool asleep = atomic_load(&rl->wait.sleeping);
    RL_PROBE2(wakeup_send, rl, asleep);
    if (asleep) rl_wait_signal(rl);
}

bool RLRunLoopIsWaiting(RLRunLoopRef rl) {
    return rl && atomic_load(&rl->wait.sleeping);
}

/* ---- the loop's sleep (its thread, locked on entry and exit) -------------- */

static bool has_wake_event(const struct epoll_event *events, int n) {
    for (int i = 0; i < n; i++)
        if (events[i].data.u64 == RL_EVENT_WAKE) return true;
    return false;
}

/* Only the wake eventfd's edge, and no wake-up pending: an edge written for
   a sleep that already ended for another reason (the waker saw `sleeping`
   just before the loop woke). The wake-up it carried was for that sleep. */
static bool only_stale_wake(RLRunLoopRef rl, const struct epoll_event *events, int n) {
    for (int i = 0; i < n; i++)
        if (events[i].data.u64 != RL_EVENT_WAKE && events[i].data.u64 != RL_EVENT_DISARMED) return false;
    return !atomic_load(&rl->wait.wake_pending);
}

/* epoll_wait's timeout for `deadline`, rounded up (never early). */
static int timeout_ms_until(int64_t deadline) {
    if (deadline == RL_NEVER) return -1;
    int64_t left = deadline - rl_mono_now();
    if (left <= 0) return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 1000000000 ? 1000000000 : (int)ms;
}

/* The sleep (or the poll) itself, unlocked. `deadline` is RL_NEVER when the
   timerfd ends it. Neither a signal (EINTR) nor a stale wake-up ends it: CF's
   wait is not interrupted by signals, so it is resumed for what is left. */
static int sleep_until_event(RLRunLoopRef rl, struct epoll_event *events, int max, bool poll, int64_t deadline) {
    for (;;) {
        int timeout = poll ? 0 : timeout_ms_until(deadline);
        int n = rl_wait_events(rl, events, max, timeout);
        if (n > 0 && !poll && only_stale_wake(rl, events, n)) {
            rl_trace_resumed(rl, kRLRunLoopWakeReasonWakeUp);
            continue;
        }
        if (n >= 0) return n; /* else EINTR: any other failure was fatal */
        if (!poll) rl_trace_resumed(rl, kRLRunLoopWakeReasonSignal);
    }
}

/* Adaptive spinning: a loop whose last sleep was ended by a wake-up within
   a few microseconds (a conversation with another thread) first waits a
   little awake, with `sleeping` off, so the answer costs neither thread a
   system call nor a context switch. Loops that sleep longer never spin, so
   an idle or timer-driven loop costs nothing more; a single CPU never spins. */
#define SPIN_IF_LAST_SLEEP_NS 50000
#define SPIN_FOR_NS           20000

static bool spin_for_wake_up(RLRunLoopRef rl, int64_t deadline) {
    int64_t start = rl_mono_now();
    int64_t until = start + SPIN_FOR_NS < deadline ? start + SPIN_FOR_NS : deadline;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&rl->wait.wake_pending, memory_order_acquire)) return true;
        if ((i & 63) == 0 && rl_mono_now() >= until) return false;
        rl_cpu_relax();
    }
}

/* A spin that is not answered (the other thread did not get a CPU: an
   oversubscribed machine, or threads sharing one CPU) burned its time for
   nothing and took that CPU from the threads that needed it. Each failure
   doubles the number of short sleeps taken without spinning before the next
   try (up to SPIN_BACKOFF_MAX); an answered spin resets it. */
#define SPIN_BACKOFF_MAX 1024

static bool should_spin(RLRunLoopRef rl) {
    if (!rl->wait.multiprocessor || rl->wait.last_sleep_ns >= SPIN_IF_LAST_SLEEP_NS) return false;
    if (rl->wait.spin_skips_left > 0) {
        rl->wait.spin_skips_left--;
        return false;
    }
    return true;
}

static void note_spin_result(RLRunLoopRef rl, bool answered) {
    if (answered) {
        rl->wait.spin_backoff = 0;
        return;
    }
    rl->wait.spin_backoff = rl->wait.spin_backoff ? rl->wait.spin_backoff * 2 : 1;
    if (rl->wait.spin_backoff > SPIN_BACKOFF_MAX) rl->wait.spin_backoff = SPIN_BACKOFF_MAX;
    rl->wait.spin_skips_left = rl->wait.spin_backoff;
}

rl_spin_result rl_wait_spin_locked(RLRunLoopRef rl, int64_t deadline) {
    if (!should_spin(rl)) return RL_SPIN_SKIPPED;
    rl_loop_unlock(rl);
    bool woken = spin_for_wake_up(rl, deadline);
    rl_loop_relock(rl);
    note_spin_result(rl, woken);
    if (woken) return RL_SPIN_ANSWERED;
    /* The conversation is over: sleep, and do not spin again until a sleep
       is short once more. */
    rl->wait.last_sleep_ns = RL_NEVER;
    return RL_SPIN_UNANSWERED;
}

void rl_wait_take_wake_up_locked(RLRunLoopRef rl) {
    rl_embed_fd_stop_waiting_locked(rl); /* as rl_wait_set_prepare_locked: the loop runs by itself */
    atomic_store(&rl->wait.wake_pending, false);
}

int rl_wait_sleep_locked(RLRunLoopRef rl, rl_mode *m, bool poll, int64_t deadline, struct epoll_event *events,
                         int max) {
    rl_wait_set_prepare_locked(rl, m);
    if (rl->wait_set.ready_regs) poll = true; /* a source is always ready (poll()'s answer for its fd) */
    int64_t timeout_deadline = RL_NEVER;      /* the timerfd ends the sleep */
    if (!poll) {
        if (!rl_wait_arm_timer_locked(rl, deadline)) timeout_deadline = deadline;
        atomic_store(&rl->wait.sleeping, true);
        if (atomic_load(&rl->wait.wake_pending)) {
            poll = true;
            atomic_store(&rl->wait.sleeping, false);
        }
    }
    if (!poll) rl_trace_sleep(rl, deadline);
    rl_loop_unlock(rl);
    int64_t slept_at = poll ? 0 : rl_mono_now();
    int n = sleep_until_event(rl, events, max, poll, timeout_deadline);
    int64_t woke_at = poll ? 0 : rl_mono_now();
    rl_loop_relock(rl);
    atomic_store(&rl->wait.sleeping, false);
    bool woken = atomic_exchange(&rl->wait.wake_pending, false) && has_wake_event(events, n);
    if (!poll) rl->wait.last_sleep_ns = woken ? woke_at - slept_at : RL_NEVER;
    if (!poll) rl_trace_woke(rl, m, events, n);
    n = rl_wait_set_add_ready_locked(rl, m, events, n, max);
    for (int i = 0; i < n; i++)
        if (events[i].data.u64 == RL_EVENT_TIMER) rl->wait.armed_ns = RL_NEVER; /* it expired */
    return n;
}
