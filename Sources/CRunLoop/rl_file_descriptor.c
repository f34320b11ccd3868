/*
 * rl_file_descriptor.c: RLFileDescriptor (CFFileDescriptor) on a private epoll.
 *
 * Invariants (all under f->lock):
 *  - f->epfd is a private epoll instance; its run-loop source is a version-1
 *    source watching f->epfd, which is readable only when a callout may be
 *    due, and whose perform always consumes what made it readable.
 *  - The user fd is in f->epfd with EPOLLONESHOT and the events of the enabled
 *    callback types (`armed`), or disarmed (its ONESHOT fired), or not at all
 *    (`registered` false). ONESHOT means a registration the object can no
 *    longer reach (the fd was closed behind our back while dup'ed elsewhere)
 *    fires at most once: no spin.
 *  - A ONESHOT registration of a process-wide, always-readable eventfd in
 *    f->epfd (a "kick") carries readiness the kernel cannot report: an fd
 *    epoll refuses (a regular file: always ready, as poll() says) or a closed
 *    fd (ready once per enable, so the callback's I/O sees EBADF). Those
 *    types are in `forced`. The kick fd is never closed, so its number is
 *    never one the user closed.
 *  - A callout happens only for types still enabled when perform runs; the
 *    types it reports are disabled before it starts (one-shot per enable).
 *  - info is released once, at invalidation, or after the last callout in
 *    progress when invalidation raced with one (`callouts`).
 *  - The private fds are closed only when the last reference goes, so a
 *    perform that still holds a reference never sees them reused.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CRunLoop.h"
#include "rl_object.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define FD_TYPES (kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack)
#define KICK_TAG UINT64_MAX

struct __RLFileDescriptor {
    rl_object base;                /* RLRetain/RLRelease/RLCopyDescription */
    pthread_mutex_t lock;
    int fd;
    int epfd;
    bool kick_registered;          /* the always-ready fd is in epfd */
    bool kick_armed;               /* ...and its ONESHOT has not fired */
    bool close_on_invalidate;
    bool valid;
    bool registered;               /* fd is in epfd */
    bool armed;                    /* ...and its ONESHOT has not fired yet */
    bool info_released;
    RLOptionFlags enabled;         /* types the user armed and that have not fired */
    RLOptionFlags forced;          /* enabled types reported ready through the kick */
    int callouts;                  /* callbacks running now */
    RLFileDescriptorCallBack callout;
    RLFileDescriptorContext context;
    RLRunLoopSourceRef source;     /* strong; cleared at invalidation */
};

static char *copy_fd_description(RLFileDescriptorRef f);

static uint32_t events_for(RLOptionFlags types) {
    uint32_t ev = 0;
    if (types & kRLFileDescriptorReadCallBack) ev |= EPOLLIN | EPOLLRDHUP;
    if (types & kRLFileDescriptorWriteCallBack) ev |= EPOLLOUT;
    return ev;
}

/* poll() semantics: EOF/hang-up wakes readers, errors wake both. */
static RLOptionFlags types_for(uint32_t ev) {
    RLOptionFlags t = 0;
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLPRI)) t |= kRLFileDescriptorReadCallBack;
    if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) t |= kRLFileDescriptorWriteCallBack;
    return t;
}

/* One process-wide eventfd that is always readable (its count is never
   read). Made by the first RLFileDescriptorCreate (while the user's fd is
   still open) and never closed, so its number cannot be one a user closed
   behind our back. */
static int always_ready_fd = -1;
static pthread_once_t always_ready_once = PTHREAD_ONCE_INIT;

static void make_always_ready(void) {
    always_ready_fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
}

/* Makes epfd readable once (ONESHOT registration of the always-ready fd). */
static int kick(RLFileDescriptorRef f) {
    if (f->kick_armed) return 0;
    if (always_ready_fd < 0) return -EMFILE;
    struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = KICK_TAG };
    int rc = epoll_ctl(f->epfd, f->kick_registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, always_ready_fd, &ev);
    if (rc < 0) return -errno;
    f->kick_registered = f->kick_armed = true;
    return 0;
}

/* Takes back a kick not yet consumed. */
static void drain_kick(RLFileDescriptorRef f) {
    if (!f->kick_armed) return;
    struct epoll_event ev = { .events = EPOLLONESHOT, .data.u64 = KICK_TAG };
    epoll_ctl(f->epfd, EPOLL_CTL_MOD, always_ready_fd, &ev);
    f->kick_armed = false;
}

/* Makes the epoll registration match f->enabled (minus what is forced). */
static void rearm(RLFileDescriptorRef f) {
    RLOptionFlags want = f->enabled & ~f->forced;
    if (!want) {
        /* A disarmed ONESHOT registration reports nothing: keep it, so the
           next enable costs one MOD. An armed one goes. EBADF here means the
           fd was closed: the registration went with it, or (if the file lives
           on elsewhere) can fire once, into a perform that ignores it. */
        if (f->registered && f->armed) {
            epoll_ctl(f->epfd, EPOLL_CTL_DEL, f->fd, NULL);
            f->registered = false;
        }
        f->armed = false;
        return;
    }
    struct epoll_event ev = { .events = events_for(want) | EPOLLONESHOT, .data.u64 = (uint64_t)(unsigned)f->fd };
    int rc = -1;
    if (f->registered) rc = epoll_ctl(f->epfd, EPOLL_CTL_MOD, f->fd, &ev);
    if (rc < 0) rc = epoll_ctl(f->epfd, EPOLL_CTL_ADD, f->fd, &ev);
    if (rc < 0 && errno == EEXIST) rc = epoll_ctl(f->epfd, EPOLL_CTL_MOD, f->fd, &ev);
    if (rc == 0) {
        f->registered = f->armed = true;
        return;
    }
    /* EPERM: a file epoll cannot watch (always ready for poll()); EBADF: the
       fd is closed (poll() says POLLNVAL). Either way: ready now, once. */
    f->registered = f->armed = false;
    f->forced |= want;
    kick(f);
}

static void release_info_locked(RLFileDescriptorRef f, void (**rel)(const void *), void **info) {
    *rel = NULL;
    *info = NULL;
    if (!f->info_released && f->callouts == 0) {
        f->info_released = true;
        *rel = f->context.release;
        *info = f->context.info;
        f->context.info = NULL;
    }
}

static RLFileDescriptorRef fd_retain(RLFileDescriptorRef f) {
    RLRetain(f);
    return f;
}

static void fd_release(RLFileDescriptorRef f) {
    RLRelease(f);
}

/* Last reference: nobody can call in any more. A valid descriptor with a
   source cannot get here (the source holds a reference). */
static void fd_finalize(rl_object *obj) {
    RLFileDescriptorRef f = (RLFileDescriptorRef)obj;
    if (f->valid) {
        f->valid = false;
        if (f->close_on_invalidate) close(f->fd);
        if (!f->info_released && f->context.release) f->context.release(f->context.info);
    }
    close(f->epfd);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static char *fd_describe(const rl_object *obj) {
    return copy_fd_description((RLFileDescriptorRef)obj);
}

static const rl_class fd_class = {
    .name = "RLFileDescriptor",
    .finalize = fd_finalize,
    .copy_description = fd_describe,
};

RLFileDescriptorRef RLFileDescriptorCreate(RLFileDescriptorNativeDescriptor fd, bool closeOnInvalidate,
                                           RLFileDescriptorCallBack callout, const RLFileDescriptorContext *context) {
    if (fd < 0 || !callout || fcntl(fd, F_GETFD) < 0) return NULL;
    pthread_once(&always_ready_once, make_always_ready);
    if (always_ready_fd < 0) return NULL;
    RLFileDescriptorRef f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (f->epfd < 0) {
        free(f);
        return NULL;
    }
    rl_object_init(&f->base, &fd_class);
    pthread_mutex_init(&f->lock, NULL);
    f->fd = fd;
    f->close_on_invalidate = closeOnInvalidate;
    f->valid = true;
    f->callout = callout;
    if (context) {
        f->context = *context;
        if (f->context.retain && f->context.info) f->context.info = (void *)f->context.retain(f->context.info);
    }
    return f;
}

RLFileDescriptorNativeDescriptor RLFileDescriptorGetNativeDescriptor(RLFileDescriptorRef f) {
    return f ? f->fd : -1;
}

void RLFileDescriptorEnableCallBacks(RLFileDescriptorRef f, RLOptionFlags callBackTypes) {
    if (!f) return;
    callBackTypes &= FD_TYPES;
    pthread_mutex_lock(&f->lock);
    if (f->valid && (callBackTypes & ~f->enabled)) {
        f->enabled |= callBackTypes;
        rearm(f);
    }
    pthread_mutex_unlock(&f->lock);
}

void RLFileDescriptorDisableCallBacks(RLFileDescriptorRef f, RLOptionFlags callBackTypes) {
    if (!f) return;
    callBackTypes &= FD_TYPES;
    pthread_mutex_lock(&f->lock);
    if (f->valid && (callBackTypes & f->enabled)) {
        f->enabled &= ~callBackTypes;
        f->forced &= f->enabled;
        if (!f->forced) drain_kick(f);
        rearm(f);
    }
    pthread_mutex_unlock(&f->lock);
}

void RLFileDescriptorInvalidate(RLFileDescriptorRef f) {
    if (!f) return;
    fd_retain(f);
    pthread_mutex_lock(&f->lock);
    if (!f->valid) {
        pthread_mutex_unlock(&f->lock);
        fd_release(f);
        return;
    }
    f->valid = false;
    f->enabled = f->forced = 0;
    if (f->registered) epoll_ctl(f->epfd, EPOLL_CTL_DEL, f->fd, NULL);
    f->registered = f->armed = false;
    drain_kick(f);
    RLRunLoopSourceRef src = f->source;
    f->source = NULL;
    void (*rel)(const void *);
    void *info;
    release_info_locked(f, &rel, &info);
    pthread_mutex_unlock(&f->lock);

    if (src) {
        RLRunLoopSourceInvalidate(src);
        RLRelease(src);
    }
    if (f->close_on_invalidate) close(f->fd);
    if (rel) rel(info);
    fd_release(f);
}

bool RLFileDescriptorIsValid(RLFileDescriptorRef f) {
    if (!f) return false;
    pthread_mutex_lock(&f->lock);
    bool v = f->valid;
    pthread_mutex_unlock(&f->lock);
    return v;
}

void RLFileDescriptorGetContext(RLFileDescriptorRef f, RLFileDescriptorContext *context) {
    if (!f || !context) return;
    pthread_mutex_lock(&f->lock);
    *context = f->context;
    pthread_mutex_unlock(&f->lock);
}

/* Pins info for a call outside the lock (released later if invalidation
   happened meanwhile). Returns false when info is already gone. */
static bool begin_callout(RLFileDescriptorRef f) {
    if (f->info_released) return false;
    f->callouts++;
    fd_retain(f);
    return true;
}

static void end_callout(RLFileDescriptorRef f) {
    pthread_mutex_lock(&f->lock);
    f->callouts--;
    void (*rel)(const void *) = NULL;
    void *relinfo = NULL;
    if (!f->valid) release_info_locked(f, &rel, &relinfo);
    pthread_mutex_unlock(&f->lock);
    if (rel) rel(relinfo);
    fd_release(f);
}

static char *copy_fd_description(RLFileDescriptorRef f) {
    if (!f) return strdup("(null)");
    pthread_mutex_lock(&f->lock);
    RLOptionFlags en = f->enabled;
    bool valid = f->valid;
    char *(*describe)(const void *) = f->context.copyDescription;
    void *info = f->context.info;
    bool pinned = describe && begin_callout(f);
    pthread_mutex_unlock(&f->lock);

    char *inner = pinned ? describe(info) : NULL;
    if (pinned) end_callout(f);
    char *s = NULL;
    if (asprintf(&s, "<RLFileDescriptor %p [%s] fd=%d enabled=%s%s%s closeOnInvalidate=%s context=%s>", (void *)f,
                 valid ? "valid" : "invalid", f->fd, en ? "" : "none",
                 (en & kRLFileDescriptorReadCallBack) ? "read" : "",
                 (en & kRLFileDescriptorWriteCallBack) ? ((en & kRLFileDescriptorReadCallBack) ? "|write" : "write")
                                                       : "",
                 f->close_on_invalidate ? "yes" : "no", inner ? inner : "(none)") < 0)
        s = NULL;
    free(inner);
    return s;
}

/* ---- the version-1 source ------------------------------------------------ */

static const void *src_retain(const void *info) {
    return fd_retain((RLFileDescriptorRef)info);
}

static void src_release(const void *info) {
    fd_release((RLFileDescriptorRef)info);
}

static char *src_describe(const void *info) {
    return copy_fd_description((RLFileDescriptorRef)info);
}

static int src_fd(void *info) {
    return ((RLFileDescriptorRef)info)->epfd;
}

/* Consumes what made epfd readable, then calls out the types that fired. */
static void src_perform(void *info) {
    RLFileDescriptorRef f = info;
    struct epoll_event evs[2];
    RLOptionFlags fired = 0;

    pthread_mutex_lock(&f->lock);
    int n;
    do {
        n = epoll_wait(f->epfd, evs, 2, 0);
    } while (n < 0 && errno == EINTR);
    bool fd_event = false;
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u64 == KICK_TAG) {
            f->kick_armed = false;   /* ONESHOT fired */
            fired |= f->forced;
            f->forced = 0;
        } else {
            /* ONESHOT: the registration is disarmed until rearm(). */
            fd_event = true;
            f->armed = false;
            fired |= types_for(evs[i].events);
        }
    }
    if (!f->valid) {
        pthread_mutex_unlock(&f->lock);
        return;
    }
    fired &= f->enabled;
    f->enabled &= ~fired;
    f->forced &= f->enabled;
    if (fd_event || fired) rearm(f);
    if (!fired) {
        pthread_mutex_unlock(&f->lock);
        return;
    }
    RLFileDescriptorCallBack cb = f->callout;
    void *cbinfo = f->context.info;
    begin_callout(f);              /* valid implies info is still held */
    pthread_mutex_unlock(&f->lock);

    cb(f, fired, cbinfo);
    end_callout(f);
}

RLRunLoopSourceRef RLFileDescriptorCreateRunLoopSource(RLFileDescriptorRef f, RLIndex order) {
    if (!f) return NULL;
    pthread_mutex_lock(&f->lock);
    RLRunLoopSourceRef s = f->valid ? f->source : NULL;
    if (s) RLRetain(s);
    bool valid = f->valid;
    pthread_mutex_unlock(&f->lock);
    if (s || !valid) return s;

    /* Made outside the lock: the core never runs with f->lock held. */
    RLRunLoopSourceContext1 ctx = {
        .version = 1,
        .info = f,
        .retain = src_retain,
        .release = src_release,
        .copyDescription = src_describe,
        .getFileDescriptor = src_fd,
        .perform = src_perform,
    };
    RLRunLoopSourceRef made = RLRunLoopSourceCreate(order, (RLRunLoopSourceContext *)&ctx);
    if (!made) return NULL;
    pthread_mutex_lock(&f->lock);
    if (f->valid && !f->source) {
        f->source = made;
        made = NULL;
    }
    s = f->valid ? f->source : NULL;
    if (s) RLRetain(s);
    pthread_mutex_unlock(&f->lock);
    if (made) {                    /* lost a race with another call or with invalidation */
        RLRunLoopSourceInvalidate(made);
        RLRelease(made);
    }
    return s;
}
