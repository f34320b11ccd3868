/*
 * rl_file_descriptor.c: RLFileDescriptor (CFFileDescriptor) on private epolls.
 *
 * Layout: the run-loop source (version 1) watches f->outer, an epoll holding
 * f->inner (an epoll holding the user fd) and, when needed, a "kick".
 *
 * Invariants (all under f->lock):
 *  - f->outer is readable only when a callout may be due, and perform
 *    consumes what made it so (epoll_wait on inner, and on outer for a kick);
 *    the registrations are level-triggered, so consumed readiness is gone.
 *  - The user fd is in f->inner with exactly the events `reg_events` (0: not
 *    in it). sync() makes reg_events match the enabled types; it is called by
 *    enable/disable, after each callout, and by a perform that saw events
 *    nobody enabled. A callback that re-enables what just fired (the usual
 *    pattern) therefore costs no epoll_ctl at all.
 *  - A registration that cannot be removed any more (the user closed the fd
 *    behind our back while the file lives on elsewhere) is dropped with the
 *    whole of f->inner, which is replaced: it can never make a loop spin.
 *  - The kick, a ONESHOT registration in f->outer of a process-wide,
 *    always-readable eventfd, carries readiness the kernel cannot report: an
 *    fd epoll refuses (a regular file: always ready, as poll() says) or a
 *    closed fd (ready once per enable, so the callback's I/O sees EBADF).
 *    Those types are in `forced`. The kick fd is made before any user fd can
 *    be closed behind our back and never closed, so its number is never one
 *    the user closed.
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
#include "rl_internal.h"

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
#define INNER_TAG 1

struct __RLFileDescriptor {
    rl_object base;                /* RLRetain/RLRelease/RLCopyDescription */
    pthread_mutex_t lock;
    int fd;
    int outer;                     /* the source's fd */
    int inner;                     /* holds the user fd */
    bool kick_registered;          /* the always-ready fd is in outer */
    bool kick_armed;               /* ...and its ONESHOT has not fired */
    bool close_on_invalidate;
    bool valid;
    uint32_t reg_events;           /* the user fd's events in inner; 0: absent */
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
static _Atomic int always_ready_fd = -1;
static pthread_mutex_t always_ready_lock = PTHREAD_MUTEX_INITIALIZER;

/* Made on first use; out of descriptors, a later call tries again. */
static int always_ready(void) {
    int fd = atomic_load(&always_ready_fd);
    if (fd >= 0) return fd;
    pthread_mutex_lock(&always_ready_lock);
    fd = atomic_load(&always_ready_fd);
    if (fd < 0) {
        fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
        if (fd >= 0) atomic_store(&always_ready_fd, fd);
    }
    pthread_mutex_unlock(&always_ready_lock);
    return fd;
}

/* Makes outer readable once (ONESHOT registration of the always-ready fd). */
static int kick(RLFileDescriptorRef f) {
    if (f->kick_armed) return 0;
    if (always_ready_fd < 0) return -EMFILE;
    struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = KICK_TAG };
    int rc = epoll_ctl(f->outer, f->kick_registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, always_ready_fd, &ev);
    if (rc < 0) return -errno;
    f->kick_registered = f->kick_armed = true;
    return 0;
}

/* Takes back a kick not yet consumed. */
static void drain_kick(RLFileDescriptorRef f) {
    if (!f->kick_armed) return;
    struct epoll_event ev = { .events = EPOLLONESHOT, .data.u64 = KICK_TAG };
    epoll_ctl(f->outer, EPOLL_CTL_MOD, always_ready_fd, &ev);
    f->kick_armed = false;
}

/* Replaces inner with a new, empty epoll, dropping a registration that
   cannot be removed. Keeps the old one if out of descriptors. */
static void rebuild_inner(RLFileDescriptorRef f) {
    int n = epoll_create1(EPOLL_CLOEXEC);
    if (n < 0) return;
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = INNER_TAG };
    if (epoll_ctl(f->outer, EPOLL_CTL_ADD, n, &ev) < 0) {
        close(n);
        return;
    }
    epoll_ctl(f->outer, EPOLL_CTL_DEL, f->inner, NULL);
    close(f->inner);
    f->inner = n;
    f->reg_events = 0;
}

/* Makes the user fd's registration match the enabled, not forced, types. */
static void sync_registration(RLFileDescriptorRef f) {
    uint32_t want = events_for(f->enabled & ~f->forced);
    if (want == f->reg_events) return;
    if (!want) {
        /* EBADF/ENOENT: the fd was closed (and maybe its number reused).
           The registration went with the file, or lives on with it: drop
           inner to be sure. */
        if (epoll_ctl(f->inner, EPOLL_CTL_DEL, f->fd, NULL) < 0) rebuild_inner(f);
        f->reg_events = 0;
        return;
    }
    struct epoll_event ev = { .events = want, .data.u64 = (uint64_t)(unsigned)f->fd };
    int rc;
    if (f->reg_events) {
        rc = epoll_ctl(f->inner, EPOLL_CTL_MOD, f->fd, &ev);
        if (rc < 0) {
            rebuild_inner(f);
            rc = epoll_ctl(f->inner, EPOLL_CTL_ADD, f->fd, &ev);
        }
    } else {
        rc = epoll_ctl(f->inner, EPOLL_CTL_ADD, f->fd, &ev);
        if (rc < 0 && errno == EEXIST) rc = epoll_ctl(f->inner, EPOLL_CTL_MOD, f->fd, &ev);
    }
    if (rc == 0) {
        f->reg_events = want;
        return;
    }
    /* EPERM: a file epoll cannot watch (always ready for poll()); EBADF: the
       fd is closed (poll() says POLLNVAL). Either way: ready now, once. */
    f->reg_events = 0;
    f->forced = f->enabled;
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
    close(f->inner);
    close(f->outer);
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
    if (always_ready() < 0) return NULL;
    RLFileDescriptorRef f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->outer = epoll_create1(EPOLL_CLOEXEC);
    f->inner = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = INNER_TAG };
    if (f->outer < 0 || f->inner < 0 || epoll_ctl(f->outer, EPOLL_CTL_ADD, f->inner, &ev) < 0) {
        if (f->outer >= 0) close(f->outer);
        if (f->inner >= 0) close(f->inner);
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
        if (f->context.retain) f->context.info = (void *)f->context.retain(f->context.info);   /* NULL info too */
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
        sync_registration(f);
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
        sync_registration(f);
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
    if (f->reg_events) epoll_ctl(f->inner, EPOLL_CTL_DEL, f->fd, NULL);   /* or dies with inner */
    f->reg_events = 0;
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
    if (f->valid) sync_registration(f);   /* disarm what fired and was not re-enabled */
    else release_info_locked(f, &rel, &relinfo);
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
    return ((RLFileDescriptorRef)info)->outer;
}

static int epoll_poll(int epfd, struct epoll_event *evs, int max) {
    int n;
    do {
        n = epoll_wait(epfd, evs, max, 0);
    } while (n < 0 && errno == EINTR);
    return n;
}

/* Consumes what made outer readable, then calls out the types that fired. */
static void src_perform(void *info) {
    RLFileDescriptorRef f = info;
    struct epoll_event evs[2];
    RLOptionFlags ready = 0;

    pthread_mutex_lock(&f->lock);
    int n = epoll_poll(f->inner, evs, 1);
    if (n == 1) ready = types_for(evs[0].events);
    if (f->kick_armed) {
        n = epoll_poll(f->outer, evs, 2);
        for (int i = 0; i < n; i++)
            if (evs[i].data.u64 == KICK_TAG) f->kick_armed = false;   /* ONESHOT fired */
        if (!f->kick_armed) ready |= f->forced;
    }
    if (!f->valid) {
        pthread_mutex_unlock(&f->lock);
        return;
    }
    RLOptionFlags fired = ready & f->enabled;
    f->enabled &= ~fired;
    f->forced &= f->enabled;
    if (!fired) {
        /* Readiness nobody asked for (a callout on another thread has the
           types; or a stale registration): make the kernel stop reporting. */
        sync_registration(f);
        pthread_mutex_unlock(&f->lock);
        return;
    }
    /* The registration stays armed during the callout: if the callback
       re-enables what fired, nothing needs to change (end_callout syncs). */
    RLFileDescriptorCallBack cb = f->callout;
    void *cbinfo = f->context.info;
    begin_callout(f);              /* valid implies info is still held */
    pthread_mutex_unlock(&f->lock);

    cb(f, fired, cbinfo);
    end_callout(f);
}

static bool fd_is_valid(const void *owner) {
    return ((RLFileDescriptorRef)owner)->valid;
}

RLRunLoopSourceRef RLFileDescriptorCreateRunLoopSource(RLFileDescriptorRef f, RLIndex order) {
    if (!f) return NULL;
    const RLRunLoopSourceContext1 ctx = {
        .version = 1,
        .info = f,
        .retain = src_retain,
        .release = src_release,
        .copyDescription = src_describe,
        .getFileDescriptor = src_fd,
        .perform = src_perform,
    };
    return rl_cached_source_copy(&f->lock, &f->source, fd_is_valid, f, order, &ctx);
}
