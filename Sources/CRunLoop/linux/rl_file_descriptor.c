/*
 * rl_file_descriptor.c: RLFileDescriptor (CFFileDescriptor) on a version-1
 * source that watches the fd itself, in the loop's own wait set.
 *
 * Invariants:
 *  - The source watches (RLRunLoopSourceSetWatchedEvents) exactly the enabled
 *    types while the object is valid. push_watched() makes it so; it is
 *    called by enable/disable, after each callout, and by a perform that saw
 *    readiness nobody enabled, whenever what should be watched differs from
 *    `pushed` (what the latest push carries). A callback that re-enables what
 *    just fired (the usual pattern) therefore costs nothing at all: perform
 *    disables the type without pushing, the callback enables it again, and
 *    the watched events never changed.
 *  - push_watched() runs under `sync_lock` (never under `lock`: the core may
 *    call our copyDescription with a loop locked, which takes `lock`) and
 *    reads the enabled types under `lock`, so the last push always carries
 *    the latest state.
 *  - Readiness the kernel cannot report (a closed fd, a regular file) is
 *    poll()'s answer, given by the core to sources that set their events:
 *    the callback is called for it once per enable, and its I/O sees EBADF.
 *  - A callout happens only for types still enabled when perform runs; the
 *    types it reports are disabled before it starts (one-shot per enable).
 *  - info is released once, at invalidation, or after the last callout in
 *    progress when invalidation raced with one (`callouts`).
 * The object holds no descriptor of its own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CRunLoop.h"
#include "rl_extras.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FD_TYPES (kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack)

struct __RLFileDescriptor {
    rl_object base; /* RLRetain/RLRelease/RLCopyDescription */
    pthread_mutex_t lock;
    pthread_mutex_t sync_lock; /* orders pushes of the watched events */
    int fd;
    bool close_on_invalidate;
    bool valid;
    bool info_released;
    RLOptionFlags enabled; /* types the user armed and that have not fired */
    RLOptionFlags pushed;  /* watched events the latest push carries (~0: none yet) */
    int callouts;          /* callbacks running now */
    RLFileDescriptorCallBack callout;
    RLFileDescriptorContext context;
    RLRunLoopSourceRef source; /* strong; cleared at invalidation */
};

static char *copy_fd_description(RLFileDescriptorRef f);

static RLOptionFlags watched_for(RLOptionFlags types) {
    RLOptionFlags ev = 0;
    if (types & kRLFileDescriptorReadCallBack) ev |= kRLRunLoopSourceReadable;
    if (types & kRLFileDescriptorWriteCallBack) ev |= kRLRunLoopSourceWritable;
    return ev;
}

static RLOptionFlags types_for(RLOptionFlags ready) {
    RLOptionFlags t = 0;
    if (ready & kRLRunLoopSourceReadable) t |= kRLFileDescriptorReadCallBack;
    if (ready & kRLRunLoopSourceWritable) t |= kRLFileDescriptorWriteCallBack;
    return t;
}

static RLOptionFlags should_watch(RLFileDescriptorRef f) {
    return f->valid ? watched_for(f->enabled) : 0;
}

/* Whether the source watches something else than it should; `lock` held. */
static bool needs_push(RLFileDescriptorRef f) {
    return f->source && should_watch(f) != f->pushed;
}

/* Makes the source watch what is enabled now. Called without `lock`, by a
   caller that holds a reference. */
static void push_watched(RLFileDescriptorRef f) {
    pthread_mutex_lock(&f->sync_lock);
    pthread_mutex_lock(&f->lock);
    RLRunLoopSourceRef src = f->source;
    RLOptionFlags want = should_watch(f);
    f->pushed = want; /* a change after this point pushes again, after us */
    if (src) RLRetain(src);
    pthread_mutex_unlock(&f->lock);
    if (src) {
        RLRunLoopSourceSetWatchedEvents(src, want);
        RLRelease(src); /* may be the last (invalidation raced): the caller still holds f */
    }
    pthread_mutex_unlock(&f->sync_lock);
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
    pthread_mutex_destroy(&f->sync_lock);
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
    RLFileDescriptorRef f = calloc(1, sizeof *f);
    if (!f) return NULL;
    rl_object_init(&f->base, &fd_class);
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->sync_lock, NULL);
    f->fd = fd;
    f->close_on_invalidate = closeOnInvalidate;
    f->valid = true;
    f->pushed = ~(RLOptionFlags)0;
    f->callout = callout;
    if (context) {
        f->context = *context;
        if (f->context.retain) f->context.info = (void *)f->context.retain(f->context.info); /* NULL info too */
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
    if (f->valid) f->enabled |= callBackTypes;
    bool push = needs_push(f);
    pthread_mutex_unlock(&f->lock);
    if (push) push_watched(f);
}

void RLFileDescriptorDisableCallBacks(RLFileDescriptorRef f, RLOptionFlags callBackTypes) {
    if (!f) return;
    callBackTypes &= FD_TYPES;
    pthread_mutex_lock(&f->lock);
    if (f->valid) f->enabled &= ~callBackTypes;
    bool push = needs_push(f);
    pthread_mutex_unlock(&f->lock);
    if (push) push_watched(f);
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
    f->enabled = 0;
    RLRunLoopSourceRef src = f->source;
    f->source = NULL;
    void (*rel)(const void *);
    void *info;
    release_info_locked(f, &rel, &info);
    pthread_mutex_unlock(&f->lock);

    if (src) {
        RLRunLoopSourceInvalidate(src); /* out of every loop before fd may be closed */
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

/* `may_push`: false for copyDescription, which the core may call with a loop
   locked; pushing goes through the loops that hold the source and would
   wait for that lock. Whoever changed what is enabled pushes it itself. */
static void end_callout(RLFileDescriptorRef f, bool may_push) {
    pthread_mutex_lock(&f->lock);
    f->callouts--;
    void (*rel)(const void *) = NULL;
    void *relinfo = NULL;
    bool push = may_push && f->valid && needs_push(f); /* what fired and was not re-enabled */
    if (!f->valid) release_info_locked(f, &rel, &relinfo);
    pthread_mutex_unlock(&f->lock);
    if (push) push_watched(f);
    if (rel) rel(relinfo);
    fd_release(f);
}

static char *copy_fd_description(RLFileDescriptorRef f) {
    if (!f) return strdup("(null)");
    pthread_mutex_lock(&f->lock);
    RLOptionFlags en = f->enabled;
    bool valid = f->valid;
    char *(*describe)(const void *) = f->context.copyDescription;
    RLIndex version = f->context.version;
    void *info = f->context.info;
    bool pinned = describe && begin_callout(f);
    pthread_mutex_unlock(&f->lock);

    char *inner = pinned ? rl_context_copy_description(version, describe, info) : NULL;
    if (pinned) end_callout(f, false);
    char *s = NULL;
    if (asprintf(
            &s, "<RLFileDescriptor %p [%s] fd=%d enabled=%s%s%s closeOnInvalidate=%s context=%s>", (void *)f,
            valid ? "valid" : "invalid", f->fd, en ? "" : "none", (en & kRLFileDescriptorReadCallBack) ? "read" : "",
            (en & kRLFileDescriptorWriteCallBack) ? ((en & kRLFileDescriptorReadCallBack) ? "|write" : "write") : "",
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
    return ((RLFileDescriptorRef)info)->fd;
}

/* Calls out the enabled types the loop saw ready. */
static void src_perform(void *info) {
    RLFileDescriptorRef f = info;
    pthread_mutex_lock(&f->lock);
    RLOptionFlags ready = f->source ? types_for(RLRunLoopSourceGetReadyEvents(f->source)) : 0;
    if (!f->valid) {
        pthread_mutex_unlock(&f->lock);
        return;
    }
    RLOptionFlags fired = ready & f->enabled;
    f->enabled &= ~fired;
    if (!fired) {
        /* Readiness nobody asked for (a callout on another thread has the
           types): make the loop stop reporting it. */
        bool push = needs_push(f);
        pthread_mutex_unlock(&f->lock);
        if (push) push_watched(f);
        return;
    }
    /* The watch stays as it is during the callout: if the callback
       re-enables what fired, nothing needs to change (end_callout pushes). */
    RLFileDescriptorCallBack cb = f->callout;
    void *cbinfo = f->context.info;
    begin_callout(f); /* valid implies info is still held */
    pthread_mutex_unlock(&f->lock);

    cb(f, fired, cbinfo);
    end_callout(f, true);
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
    RLRunLoopSourceRef s = rl_cached_source_copy(&f->lock, &f->source, fd_is_valid, f, order, &ctx);
    if (s) push_watched(f); /* a new source watches what is enabled (maybe nothing) */
    return s;
}
