/*
 * rl_signal_source.c: UNIX signals as version-1 run-loop sources. While a
 * signal has sources, a handler of the library's catches it in whichever
 * thread the kernel picks, counts it and wakes the loops through an eventfd;
 * no thread's signal mask is needed or changed.
 *
 * The process-wide part is one slot per signal number (`slots`) and
 * sig_lock: a disposition is process-wide, so its state cannot live in a
 * loop. sig_lock guards everything in a slot except the three atomics the
 * handler uses (caught, wake, handlers_running). Invariants:
 *  - slots[signo].watchers counts the live watchers, linked in .list. While
 *    it is > 0, forward_signal is signo's disposition (unless the program
 *    installed another since), .previous holds the disposition it replaced
 *    and .wake is an eventfd.
 *  - forward_signal adds one to .caught and writes .wake; it uses only
 *    atomics and write(), so it is async-signal-safe, and takes no lock, so
 *    it runs as well in a thread that holds sig_lock.
 *  - A watcher reports .caught - w->seen and then moves w->seen up to it: so
 *    every watcher of signo, in any loop, counts each run of the handler
 *    since it was made exactly once.
 *  - A watcher's source fd is a private epoll set holding .wake and its own
 *    eventfd `nudge`. The perform that reads .wake (resetting it) writes the
 *    nudge of every other watcher of signo, so the loops that did not read it
 *    still wake; each perform drains its own nudge.
 *  - When the last watcher of signo goes, .previous is put back if the
 *    library's handler is still the disposition, and .wake is retired: set
 *    to -1, then closed once no run of the handler is between loading and
 *    writing it (.handlers_running), so a late run never writes a closed or
 *    reused number.
 *  - fork(): the forking thread blocks the watched signals and holds
 *    sig_lock across the fork, so no handler runs in the child before its
 *    atfork handler has given it its own eventfds and epoll sets under the
 *    old numbers (the child shares the parent's open files) and set every
 *    watcher's seen to caught: arrivals the parent had caught but not yet
 *    reported stay the parent's. A loop remade in the child registers the
 *    new files.
 *  - A watcher is an internal RL object (rl_object.h): the source's context
 *    retains and releases it with RLRetain/RLRelease, and the last release
 *    detaches it from its signal and frees it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CRunLoop.h"
#include "rl_extras.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The handler's counter must be lock-free to be used in a handler. */
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "signal counts need lock-free atomics");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal counts need lock-free atomics");

typedef struct watcher watcher;

struct watcher {
    rl_object base; /* held by the source (its info) */
    int signo;
    int epfd;           /* the source's fd */
    int nudge;          /* eventfd: another loop read the slot's wake */
    unsigned long seen; /* the slot's caught when last reported; under sig_lock */
    watcher *next;      /* under sig_lock */
    RLSignalCallBack callout;
    RLSignalSourceContext context;
};

typedef struct {
    int watchers;
    watcher *list;
    struct sigaction previous;
    atomic_ulong caught;         /* runs of the handler, ever (wraps) */
    atomic_int wake;             /* eventfd the handler writes; -1: none */
    atomic_int handlers_running; /* runs between their load of wake and their write */
} signal_slot;

static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static signal_slot slots[_NSIG];
static sigset_t mask_before_fork; /* the forking thread's; under sig_lock */

static bool signal_is_watchable(int signo) {
    if (signo <= 0 || signo >= _NSIG) return false;
    if (signo == SIGKILL || signo == SIGSTOP) return false;
    if (signo > 31 && signo < SIGRTMIN) return false; /* reserved by the C library */
    return true;
}

/* ---- the handler ---------------------------------------------------------- */

/* A fault the CPU raised for the instruction that was running: returning
   would run it again, and fault again, forever. */
static bool is_fault(int signo, const siginfo_t *info) {
    bool synchronous = signo == SIGSEGV || signo == SIGBUS || signo == SIGFPE || signo == SIGILL || signo == SIGTRAP;
    return synchronous && info && info->si_code > 0; /* kill, sigqueue, tgkill: <= 0 */
}

static void forward_signal(int signo, siginfo_t *info, void *context) {
    (void)context;
    int saved_errno = errno;
    signal_slot *s = &slots[signo];
    if (is_fault(signo, info)) {
        /* Hand the fault to what handled it before: the faulting
           instruction runs again on return, and meets that disposition. */
        sigaction(signo, &s->previous, NULL);
    } else {
        atomic_fetch_add(&s->handlers_running, 1);
        atomic_fetch_add(&s->caught, 1);
        int fd = atomic_load(&s->wake);
        if (fd >= 0) {
            uint64_t one = 1;
            ssize_t written = write(fd, &one, sizeof one); /* never blocks: non-blocking eventfd */
            (void)written;
        }
        atomic_fetch_sub(&s->handlers_running, 1);
    }
    errno = saved_errno;
}

static bool is_library_handler(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == forward_signal;
}

/* ---- the slot's eventfd ----------------------------------------------------- */

/* Resets an eventfd of the library's; true when it was signalled. */
static bool drain(int fd, const char *object) {
    if (fd < 0) return false; /* a forked child could not remake it */
    uint64_t value;
    ssize_t n;
    while ((n = read(fd, &value, sizeof value)) < 0 && errno == EINTR) {}
    if (n < 0 && errno != EAGAIN) rl_fatal_errno("read", object, fd, errno);
    return n > 0;
}

static void nudge_others_locked(const signal_slot *s, const watcher *self) {
    for (const watcher *w = s->list; w; w = w->next)
        if (w != self && w->nudge >= 0) rl_eventfd_signal(w->nudge, "a signal watcher's eventfd");
}

/* Closes the slot's eventfd once no run of the handler can still write it. */
static void retire_wake_locked(signal_slot *s) {
    int fd = atomic_exchange(&s->wake, -1);
    while (atomic_load(&s->handlers_running) > 0) sched_yield(); /* runs in other threads: a few instructions */
    if (fd >= 0) close(fd);
}

/* The first watcher of signo: the slot's eventfd, then the handler. */
static bool start_forwarding_locked(int signo) {
    signal_slot *s = &slots[signo];
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return false;
    atomic_store(&s->wake, fd);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, &s->previous) != 0) {
        retire_wake_locked(s);
        return false;
    }
    return true;
}

/* The last watcher of signo went: the previous disposition comes back,
   unless the program installed a handler of its own since. */
static void stop_forwarding_locked(int signo) {
    signal_slot *s = &slots[signo];
    struct sigaction current;
    if (sigaction(signo, NULL, &current) == 0 && is_library_handler(&current)) sigaction(signo, &s->previous, NULL);
    retire_wake_locked(s);
}

/* ---- watchers --------------------------------------------------------------- */

static void watcher_free(rl_object *obj) {
    watcher *w = (watcher *)obj;
    pthread_mutex_lock(&sig_lock);
    signal_slot *s = &slots[w->signo];
    for (watcher **p = &s->list; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (--s->watchers == 0) stop_forwarding_locked(w->signo);
    pthread_mutex_unlock(&sig_lock);
    if (w->epfd >= 0) close(w->epfd);
    if (w->nudge >= 0) close(w->nudge);
    if (w->context.release) w->context.release(w->context.info);
    free(w);
}

static char *w_describe(const void *info) {
    const watcher *w = info;
    char *inner = w->context.copyDescription ? w->context.copyDescription(w->context.info) : NULL;
    char *s = NULL;
    if (asprintf(&s, "<RLSignalSource signo=%d context=%s>", w->signo, inner ? inner : "(none)") < 0) s = NULL;
    free(inner);
    return s;
}

static char *watcher_copy_description(const rl_object *obj) {
    return w_describe(obj);
}

static const rl_class watcher_class = {"RLSignalWatcher", watcher_free, watcher_copy_description};

static int w_fd(void *info) {
    return ((watcher *)info)->epfd;
}

static void w_perform(void *info) {
    watcher *w = info;
    pthread_mutex_lock(&sig_lock);
    signal_slot *s = &slots[w->signo];
    /* Drained before caught is read: the handler counts before it writes,
       so what woke this loop is in the count. */
    if (drain(atomic_load(&s->wake), "a signal's eventfd")) nudge_others_locked(s, w);
    drain(w->nudge, "a signal watcher's eventfd");
    unsigned long now = atomic_load(&s->caught);
    unsigned long count = now - w->seen;
    w->seen = now;
    pthread_mutex_unlock(&sig_lock);
    if (count) w->callout(w->signo, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count, w->context.info);
}

/* Puts w's epoll set in front of the slot's eventfd and its own nudge. */
static bool watch_wake_and_nudge(const watcher *w, int wake) {
    struct epoll_event on_wake = {.events = EPOLLIN, .data.u32 = 0};
    struct epoll_event on_nudge = {.events = EPOLLIN, .data.u32 = 1};
    return epoll_ctl(w->epfd, EPOLL_CTL_ADD, wake, &on_wake) == 0 &&
           epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->nudge, &on_nudge) == 0;
}

/* Adds a watcher of its signal, installing the handler for the first one.
   Returns false (nothing changed) on failure. */
static bool attach(watcher *w) {
    pthread_mutex_lock(&sig_lock);
    signal_slot *s = &slots[w->signo];
    bool first = s->watchers == 0;
    bool ok = !first || start_forwarding_locked(w->signo);
    if (ok && !watch_wake_and_nudge(w, atomic_load(&s->wake))) {
        if (first) stop_forwarding_locked(w->signo);
        ok = false;
    }
    if (ok) {
        w->seen = atomic_load(&s->caught);
        s->watchers++;
        w->next = s->list;
        s->list = w;
    }
    pthread_mutex_unlock(&sig_lock);
    return ok;
}

/* ---- fork -------------------------------------------------------------------- */

static sigset_t watched_signals_locked(void) {
    sigset_t set;
    sigemptyset(&set);
    for (int signo = 1; signo < _NSIG; signo++)
        if (slots[signo].watchers > 0) sigaddset(&set, signo);
    return set;
}

static void lock_for_fork(void) {
    pthread_mutex_lock(&sig_lock);
    sigset_t watched = watched_signals_locked();
    pthread_sigmask(SIG_BLOCK, &watched, &mask_before_fork);
}

static void unlock_after_fork(void) {
    pthread_sigmask(SIG_SETMASK, &mask_before_fork, NULL);
    pthread_mutex_unlock(&sig_lock);
}

/* Puts a new file made by `made` (or -1) under the number `fd`. */
static bool replace_under(int fd, int made) {
    if (made < 0) return false;
    bool ok = dup3(made, fd, O_CLOEXEC) == fd;
    close(made);
    return ok;
}

/* In a forked child: the slot's eventfd becomes the child's own; -1 (the
   child's signals go uncounted by no loop) when out of descriptors. */
static void remake_wake_in_child(signal_slot *s) {
    atomic_store(&s->handlers_running, 0); /* runs in threads the child does not have */
    int fd = atomic_load(&s->wake);
    if (fd >= 0 && !replace_under(fd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))) {
        close(fd);
        atomic_store(&s->wake, -1);
    }
}

/* In a forked child: w's epoll set and nudge become the child's own, with
   nothing to report. If that fails (out of descriptors) w hears nothing in
   the child, and never touches the parent's files. */
static void remake_watcher_in_child(watcher *w, const signal_slot *s) {
    w->seen = atomic_load(&s->caught);
    int wake = atomic_load(&s->wake);
    if (wake >= 0 && replace_under(w->epfd, epoll_create1(EPOLL_CLOEXEC)) &&
        replace_under(w->nudge, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) && watch_wake_and_nudge(w, wake))
        return;
    close(w->epfd);
    close(w->nudge);
    w->epfd = -1;
    w->nudge = -1;
}

static void remake_in_child_and_unlock(void) {
    for (int signo = 1; signo < _NSIG; signo++) {
        signal_slot *s = &slots[signo];
        if (s->watchers == 0) continue;
        remake_wake_in_child(s);
        for (watcher *w = s->list; w; w = w->next) remake_watcher_in_child(w, s);
    }
    unlock_after_fork();
}

/* Installs the fork handlers once; false (try again later) when
   pthread_atfork is out of memory: a watcher made without them would share
   its files with a child. Never under sig_lock, which fork's prepare
   handler takes while the C library holds its own fork lock. */
static bool watch_forks_for_signals(void) {
    static atomic_bool installed;
    static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
    if (atomic_load_explicit(&installed, memory_order_acquire)) return true;
    pthread_mutex_lock(&install_lock);
    bool ok = atomic_load_explicit(&installed, memory_order_relaxed) ||
              pthread_atfork(lock_for_fork, unlock_after_fork, remake_in_child_and_unlock) == 0;
    if (ok) atomic_store_explicit(&installed, true, memory_order_release);
    pthread_mutex_unlock(&install_lock);
    return ok;
}

/* ---- public ------------------------------------------------------------------ */

RLRunLoopSourceRef RLSignalSourceCreate(int signo, RLIndex order, RLSignalCallBack callout,
                                        const RLSignalSourceContext *context) {
    if (!signal_is_watchable(signo) || !callout) return NULL;
    if (!watch_forks_for_signals()) return NULL;
    watcher *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    rl_object_init(&w->base, &watcher_class);
    w->signo = signo;
    w->callout = callout;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->nudge = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->epfd < 0 || w->nudge < 0 || !attach(w)) {
        if (w->epfd >= 0) close(w->epfd);
        if (w->nudge >= 0) close(w->nudge);
        free(w);
        return NULL;
    }
    if (context) {
        w->context = *context;
        if (w->context.retain) w->context.info = (void *)w->context.retain(w->context.info); /* NULL info too */
    }
    RLRunLoopSourceContext1 ctx = {
        .version = 1,
        .info = w,
        .retain = RLRetain,
        .release = RLRelease,
        .copyDescription = RLCopyDescription,
        .getFileDescriptor = w_fd,
        .perform = w_perform,
    };
    RLRunLoopSourceRef src = RLRunLoopSourceCreate(order, (RLRunLoopSourceContext *)&ctx);
    RLRelease(w); /* the source holds it now (or nobody does) */
    return src;
}

int RLSignalSourceGetSignal(RLRunLoopSourceRef source) {
    if (!source) return 0;
    union {
        RLRunLoopSourceContext v0;
        RLRunLoopSourceContext1 v1;
    } ctx;
    memset(&ctx, 0, sizeof ctx);
    RLRunLoopSourceGetContext(source, &ctx.v0);
    if (ctx.v1.version != 1 || ctx.v1.perform != w_perform || !ctx.v1.info) return 0;
    return ((watcher *)ctx.v1.info)->signo;
}
