/*
 * rl_signal_source.c: UNIX signals as version-1 run-loop sources (signalfd).
 *
 * Invariants (all under sig_lock):
 *  - sigs[signo].watchers counts the live watchers of signo, linked in
 *    sigs[signo].list; while it is > 0 sigs[signo].sfd is one non-blocking
 *    signalfd for signo shared by them, and the signal is blocked in the
 *    thread that made the first watcher (plus every thread that made one).
 *  - Whoever reads an instance of signo from the shared signalfd credits it to
 *    every watcher (w->pending), so each watcher hears of each arrival no
 *    matter which loop read it.
 *  - A watcher's eventfd is readable exactly when its pending count is > 0
 *    (set on 0 -> n by the crediting thread, drained by its own perform).
 *  - A watcher's source fd is a private epoll holding the shared signalfd and
 *    its eventfd, so it is readable when a signal is pending in the kernel or
 *    credited to it; its perform consumes both before calling out.
 *  - When the last watcher of signo goes, the instances still pending are
 *    read and dropped, then, on the very thread that blocked it (known by an
 *    identity never reused, unlike pthread_t values), the signal's previous
 *    blocked/unblocked state is restored; no other thread's mask changes.
 *  - fork(): a signalfd reads the signals of the process that reads it, but
 *    epoll learns of them only through the process that added it to the
 *    epoll set; and a watcher's epoll set and eventfd are open files the
 *    child shares with the parent. So in the child (atfork handler, sig_lock
 *    held across the fork) every watcher gets a new epoll set and eventfd
 *    under its old numbers (dup3), watching the signalfd for the child's
 *    signals, with nothing credited: the parent's arrivals stay the
 *    parent's. A loop remade in the child registers the new files.
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
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

typedef struct watcher watcher;

struct watcher {
    rl_object base; /* held by the source (its info) */
    int signo;
    int epfd;         /* the source's fd */
    int efd;          /* credit eventfd */
    uint64_t pending; /* under sig_lock */
    watcher *next;    /* under sig_lock */
    RLSignalCallBack callout;
    RLSignalSourceContext context;
};

typedef struct {
    int watchers;
    int sfd;
    bool restore;     /* unblock when the last watcher goes */
    uint64_t blocker; /* thread_identity() of the thread that blocked it */
    watcher *list;
} sigstate;

static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static sigstate sigs[_NSIG];

/* A number for the calling thread, never given to another thread of the
   process (a pthread_t or a tid is reused once its thread has exited). */
static uint64_t thread_identity(void) {
    static _Atomic uint64_t next_identity = 1;
    static _Thread_local uint64_t identity;
    if (!identity) identity = atomic_fetch_add_explicit(&next_identity, 1, memory_order_relaxed);
    return identity;
}

static bool signal_is_watchable(int signo) {
    if (signo <= 0 || signo >= _NSIG) return false;
    if (signo == SIGKILL || signo == SIGSTOP) return false;
    if (signo > 31 && signo < SIGRTMIN) return false; /* reserved by the C library */
    return true;
}

static void drain_eventfd(int fd) {
    uint64_t v;
    while (read(fd, &v, sizeof v) < 0 && errno == EINTR) {}
}

/* Reads every instance of signo pending in the kernel (that this thread may
   read) and credits it to every watcher. Under sig_lock. */
static void collect_locked(int signo, const watcher *self) {
    sigstate *s = &sigs[signo];
    struct signalfd_siginfo si[16];
    uint64_t got = 0;
    for (;;) {
        ssize_t n = read(s->sfd, si, sizeof si);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (uint64_t)n / sizeof si[0];
        if ((size_t)n < sizeof si) break;
    }
    if (!got) return;
    for (watcher *w = s->list; w; w = w->next) {
        bool was_zero = w->pending == 0;
        w->pending += got;
        if (was_zero && w != self) {
            uint64_t one = 1;
            while (write(w->efd, &one, sizeof one) < 0 && errno == EINTR) {}
        }
    }
}

static void watcher_free(rl_object *obj) {
    watcher *w = (watcher *)obj;
    pthread_mutex_lock(&sig_lock);
    sigstate *s = &sigs[w->signo];
    for (watcher **p = &s->list; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (--s->watchers == 0) {
        /* Drop what is still pending so unblocking does not run the
           signal's disposition (often: terminate) for an arrival that was
           meant for the watchers. */
        collect_locked(w->signo, NULL);
        close(s->sfd);
        s->sfd = -1;
        if (s->restore && s->blocker == thread_identity()) {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, w->signo);
            pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        }
        s->restore = false;
    }
    pthread_mutex_unlock(&sig_lock);
    close(w->epfd);
    close(w->efd);
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
    collect_locked(w->signo, w);
    drain_eventfd(w->efd);
    uint64_t count = w->pending;
    w->pending = 0;
    pthread_mutex_unlock(&sig_lock);
    if (count) w->callout(w->signo, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count, w->context.info);
}

/* ---- fork ---------------------------------------------------------------- */

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void lock_for_fork(void) {
    pthread_mutex_lock(&sig_lock);
}

static void unlock_in_parent(void) {
    pthread_mutex_unlock(&sig_lock);
}

/* Puts a new file made by `made` (or -1) under the number `fd`. */
static bool replace_under(int fd, int made) {
    if (made < 0) return false;
    bool ok = dup3(made, fd, O_CLOEXEC) == fd;
    close(made);
    return ok;
}

/* In a forked child: w's epoll set and eventfd become the child's own. If
   that fails (out of descriptors) w hears nothing in the child, and never
   touches the parent's files. */
static void remake_in_child(watcher *w, int sfd) {
    w->pending = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
    struct epoll_event ev2 = {.events = EPOLLIN, .data.u32 = 1};
    if (replace_under(w->epfd, epoll_create1(EPOLL_CLOEXEC)) &&
        replace_under(w->efd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) &&
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, sfd, &ev) == 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev2) == 0)
        return;
    close(w->epfd);
    close(w->efd);
    w->epfd = -1;
    w->efd = -1;
}

static void remake_in_child_and_unlock(void) {
    for (int signo = 1; signo < _NSIG; signo++)
        for (watcher *w = sigs[signo].list; w; w = w->next) remake_in_child(w, sigs[signo].sfd);
    pthread_mutex_unlock(&sig_lock);
}

static void install_atfork(void) {
    pthread_atfork(lock_for_fork, unlock_in_parent, remake_in_child_and_unlock);
}

/* Adds a watcher of signo: makes the shared signalfd and blocks the signal
   for the first one. Returns false (nothing changed) on failure. */
static bool attach(watcher *w) {
    int signo = w->signo;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, signo);

    pthread_mutex_lock(&sig_lock);
    sigstate *s = &sigs[signo];
    bool first = s->watchers == 0;
    if (first) {
        s->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (s->sfd < 0) {
            pthread_mutex_unlock(&sig_lock);
            return false;
        }
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0};
    struct epoll_event ev2 = {.events = EPOLLIN, .data.u32 = 1};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s->sfd, &ev) < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev2) < 0) {
        if (first) {
            close(s->sfd);
            s->sfd = -1;
        }
        pthread_mutex_unlock(&sig_lock);
        return false;
    }
    /* Every creating thread blocks it (so a kill() is not run by its
       disposition there); the first one remembers how to undo it. */
    pthread_sigmask(SIG_BLOCK, &set, &old);
    if (first) {
        s->restore = !sigismember(&old, signo);
        s->blocker = thread_identity();
    }
    s->watchers++;
    w->next = s->list;
    s->list = w;
    pthread_mutex_unlock(&sig_lock);
    return true;
}

RLRunLoopSourceRef RLSignalSourceCreate(int signo, RLIndex order, RLSignalCallBack callout,
                                        const RLSignalSourceContext *context) {
    if (!signal_is_watchable(signo) || !callout) return NULL;
    pthread_once(&atfork_once, install_atfork);
    watcher *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    rl_object_init(&w->base, &watcher_class);
    w->signo = signo;
    w->callout = callout;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->epfd < 0 || w->efd < 0 || !attach(w)) {
        if (w->epfd >= 0) close(w->epfd);
        if (w->efd >= 0) close(w->efd);
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
