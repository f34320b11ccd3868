/*
 * rl_message_port.c: RLMessagePort, a bounded FIFO of messages between
 * threads, delivered by a version-1 source on an eventfd.
 *
 * Invariants (all under p->lock):
 *  - The messages queued are ring[head .. head+count) (mod capacity), in the
 *    order their RLMessagePortSend calls took the lock; count <= capacity.
 *  - p->efd (EFD_NONBLOCK) is readable exactly when count > 0: a send that
 *    makes the queue non-empty writes it, a perform that empties it drains it.
 *    So a sleeping loop wakes for the first message of a burst only, and a
 *    perform that stopped at RL_MESSAGE_PORT_BATCH leaves it readable (the
 *    loop comes back after servicing its other sources).
 *  - A message leaves the queue only under the lock, while the port is
 *    valid, right before its own callback; `callouts` counts callbacks whose
 *    message has left and that have not returned yet.
 *  - After invalidation the queue is empty, sends fail with -EPIPE, and no
 *    callout starts; info is released once, after the last callout in
 *    progress (`callouts`).
 *  - p->efd is closed only when the last reference goes, so a sender or a
 *    perform holding a reference never writes a reused descriptor.
 *  - In a forked child the eventfd is the parent's (the same open file): the
 *    child never reads or writes it. There the port is invalid (made_here
 *    fails), its source watches nothing new, and its first perform (the
 *    shared eventfd woke the child's loop) invalidates the child's copy, so
 *    the source leaves the child's loops and cannot make them spin.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CRunLoop.h"
#include "rl_extras.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define INLINE_BYTES 48

typedef struct {
    int32_t msgid;
    size_t len;
    union {
        unsigned char inline_bytes[INLINE_BYTES];
        void *heap;
    } u;
} message;

struct __RLMessagePort {
    rl_object base; /* RLRetain/RLRelease/RLCopyDescription */
    pthread_mutex_t lock;
    int efd;
    unsigned made_in; /* rl_fork_generation() at creation */
    atomic_bool valid;
    bool info_released;
    int callouts;
    size_t capacity;
    size_t head;
    size_t count;
    message *ring;
    uint64_t sent; /* statistics, for the description */
    uint64_t delivered;
    uint64_t taken; /* messages ever taken out for delivery */
    RLMessagePortCallBack callout;
    RLMessagePortContext context;
    RLRunLoopSourceRef source; /* strong; cleared at invalidation */
};

static const void *msg_bytes(const message *m) {
    if (m->len == 0) return NULL;
    return m->len <= INLINE_BYTES ? (const void *)m->u.inline_bytes : m->u.heap;
}

static void msg_free(message *m) {
    if (m->len > INLINE_BYTES) free(m->u.heap);
}

static void efd_write(int fd) {
    rl_eventfd_signal(fd, "a message port's eventfd");
}

static void efd_drain(int fd) {
    rl_eventfd_reset(fd, "a message port's eventfd");
}

/* False in a forked child: the eventfd and the queued messages are the
   parent's. */
static bool made_here(RLMessagePortRef p) {
    return p->made_in == rl_fork_generation();
}

static bool usable(RLMessagePortRef p) {
    return atomic_load(&p->valid) && made_here(p);
}

static void release_info_locked(RLMessagePortRef p, void (**rel)(const void *), void **info) {
    *rel = NULL;
    *info = NULL;
    if (!p->info_released && p->callouts == 0) {
        p->info_released = true;
        *rel = p->context.release;
        *info = p->context.info;
        p->context.info = NULL;
    }
}

/* Pins the port and its info for a call outside the lock. Locked. */
static void begin_callout(RLMessagePortRef p) {
    p->callouts++;
    RLRetain(p);
}

/* Called with the lock held after the last callout of a stretch: drops the
   lock, releases info if the port was invalidated meanwhile (the last
   callout to end does it), and the reference the callouts held. */
static void unlock_after_callouts(RLMessagePortRef p) {
    void (*rel)(const void *) = NULL;
    void *relinfo = NULL;
    if (!atomic_load(&p->valid)) release_info_locked(p, &rel, &relinfo);
    pthread_mutex_unlock(&p->lock);
    if (rel) rel(relinfo);
    RLRelease(p);
}

/* Ends a callout begun with begin_callout. Unlocked. */
static void end_callout(RLMessagePortRef p) {
    pthread_mutex_lock(&p->lock);
    p->callouts--;
    unlock_after_callouts(p);
}

/* Empties the queue (under the lock); the caller frees `out` entries. */
static void clear_locked(RLMessagePortRef p) {
    while (p->count) {
        msg_free(&p->ring[p->head]);
        p->head = (p->head + 1) % p->capacity;
        p->count--;
    }
    if (made_here(p)) efd_drain(p->efd);
}

static void port_finalize(rl_object *obj) {
    RLMessagePortRef p = (RLMessagePortRef)obj;
    clear_locked(p);
    if (!p->info_released && p->context.release) p->context.release(p->context.info);
    close(p->efd);
    free(p->ring);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static char *port_describe(const rl_object *obj) {
    RLMessagePortRef p = (RLMessagePortRef)obj;
    pthread_mutex_lock(&p->lock);
    bool valid = usable(p);
    size_t count = p->count, cap = p->capacity;
    uint64_t sent = p->sent, delivered = p->delivered;
    char *(*describe)(const void *) = p->context.copyDescription;
    void *info = p->context.info;
    bool pinned = describe && !p->info_released;
    if (pinned) begin_callout(p);
    pthread_mutex_unlock(&p->lock);

    char *inner = pinned ? describe(info) : NULL;
    if (pinned) end_callout(p);
    char *s = NULL;
    if (asprintf(&s, "<RLMessagePort %p [%s] queued=%zu/%zu sent=%llu delivered=%llu context=%s>", (void *)p,
                 valid ? "valid" : "invalid", count, cap, (unsigned long long)sent, (unsigned long long)delivered,
                 inner ? inner : "(none)") < 0)
        s = NULL;
    free(inner);
    return s;
}

static const rl_class port_class = {
    .name = "RLMessagePort",
    .finalize = port_finalize,
    .copy_description = port_describe,
};

RLMessagePortRef RLMessagePortCreate(RLMessagePortCallBack callout, const RLMessagePortContext *context,
                                     RLIndex capacity) {
    if (!callout || capacity < 0) return NULL;
    if (capacity == 0) capacity = RL_MESSAGE_PORT_DEFAULT_CAPACITY;
    if (capacity > RL_MESSAGE_PORT_MAX_CAPACITY) capacity = RL_MESSAGE_PORT_MAX_CAPACITY;
    if (!rl_fork_watch()) return NULL; /* out of memory: a port must tell a child it is inherited */
    RLMessagePortRef p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->ring = malloc((size_t)capacity * sizeof *p->ring);
    p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!p->ring || p->efd < 0) {
        if (p->efd >= 0) close(p->efd);
        free(p->ring);
        free(p);
        return NULL;
    }
    rl_object_init(&p->base, &port_class);
    p->made_in = rl_fork_generation();
    pthread_mutex_init(&p->lock, NULL);
    atomic_init(&p->valid, true);
    p->capacity = (size_t)capacity;
    p->callout = callout;
    if (context) {
        p->context = *context;
        if (p->context.retain) p->context.info = (void *)p->context.retain(p->context.info); /* NULL info too */
    }
    return p;
}

int RLMessagePortSend(RLMessagePortRef p, int32_t msgid, const void *bytes, size_t len) {
    if (!p || (!bytes && len > 0)) return -EINVAL;
    if (len > RL_MESSAGE_PORT_MAX_SIZE) return -EMSGSIZE;
    if (!atomic_load_explicit(&p->valid, memory_order_relaxed) || !made_here(p)) return -EPIPE;
    message m = {.msgid = msgid, .len = len};
    if (len > INLINE_BYTES) {
        m.u.heap = malloc(len);
        if (!m.u.heap) return -ENOMEM;
        memcpy(m.u.heap, bytes, len);
    } else if (len) {
        memcpy(m.u.inline_bytes, bytes, len);
    }
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    if (!atomic_load_explicit(&p->valid, memory_order_relaxed)) {
        rc = -EPIPE;
    } else if (p->count == p->capacity) {
        rc = -EAGAIN;
    } else {
        p->ring[(p->head + p->count) % p->capacity] = m;
        if (p->count++ == 0) efd_write(p->efd);
        p->sent++;
    }
    pthread_mutex_unlock(&p->lock);
    if (rc) msg_free(&m);
    return rc;
}

static const void *src_retain(const void *info) {
    return RLRetain(info);
}

static void src_release(const void *info) {
    RLRelease(info);
}

static char *src_describe(const void *info) {
    return RLCopyDescription(info);
}

static int src_fd(void *info) {
    RLMessagePortRef p = info;
    return made_here(p) ? p->efd : -1; /* a child never watches the parent's eventfd anew */
}

/* Takes the oldest message out for delivery, if the port is valid and it is
   one of those queued before `end` (a count of messages taken out), and
   counts its callout as in progress. Locked. */
static bool take_next_locked(RLMessagePortRef p, uint64_t end, message *out) {
    if (!usable(p) || p->count == 0 || p->taken >= end) return false;
    *out = p->ring[p->head];
    p->taken++;
    p->head = (p->head + 1) % p->capacity;
    if (--p->count == 0) efd_drain(p->efd);
    p->callouts++;
    return true;
}

/* Delivers up to RL_MESSAGE_PORT_BATCH messages, oldest first, one at a
   time: each message leaves the queue, under the lock and only while the
   port is valid, just before its own callback. So a callback that runs the
   loop re-entrantly sees the next messages delivered in send order, and an
   invalidation stops delivery at the next message, whichever thread made it.
   Messages sent after the perform began (by its callbacks, say) wait for a
   later perform, so a callback that sends to its own port cannot keep the
   loop in one perform. One lock hold per message: ending a callout and
   taking the next message out go together. */
static void src_perform(void *info) {
    RLMessagePortRef p = info;
    if (!made_here(p)) { /* the parent's eventfd woke a forked child's loop */
        RLMessagePortInvalidate(p);
        return;
    }
    RLRetain(p);
    pthread_mutex_lock(&p->lock);
    uint64_t end = p->taken + (p->count < RL_MESSAGE_PORT_BATCH ? p->count : RL_MESSAGE_PORT_BATCH);
    message m;
    while (take_next_locked(p, end, &m)) {
        RLMessagePortCallBack cb = p->callout;
        void *cbinfo = p->context.info;
        pthread_mutex_unlock(&p->lock);
        cb(p, m.msgid, msg_bytes(&m), m.len, cbinfo);
        msg_free(&m);
        pthread_mutex_lock(&p->lock);
        p->callouts--;
        p->delivered++;
    }
    unlock_after_callouts(p);
}

static bool port_is_valid(const void *owner) {
    return usable((RLMessagePortRef)owner);
}

RLRunLoopSourceRef RLMessagePortCreateRunLoopSource(RLMessagePortRef p, RLIndex order) {
    if (!p) return NULL;
    const RLRunLoopSourceContext1 ctx = {
        .version = 1,
        .info = p,
        .retain = src_retain,
        .release = src_release,
        .copyDescription = src_describe,
        .getFileDescriptor = src_fd,
        .perform = src_perform,
    };
    return rl_cached_source_copy(&p->lock, &p->source, port_is_valid, p, order, &ctx);
}

void RLMessagePortInvalidate(RLMessagePortRef p) {
    if (!p) return;
    RLRetain(p);
    pthread_mutex_lock(&p->lock);
    if (!atomic_load(&p->valid)) {
        pthread_mutex_unlock(&p->lock);
        RLRelease(p);
        return;
    }
    atomic_store_explicit(&p->valid, false, memory_order_release);
    clear_locked(p);
    RLRunLoopSourceRef src = p->source;
    p->source = NULL;
    void (*rel)(const void *);
    void *info;
    release_info_locked(p, &rel, &info);
    pthread_mutex_unlock(&p->lock);
    if (src) {
        RLRunLoopSourceInvalidate(src);
        RLRelease(src);
    }
    if (rel) rel(info);
    RLRelease(p);
}

bool RLMessagePortIsValid(RLMessagePortRef p) {
    return p && usable(p);
}

RLIndex RLMessagePortGetQueuedCount(RLMessagePortRef p) {
    if (!p) return 0;
    pthread_mutex_lock(&p->lock);
    RLIndex n = made_here(p) ? (RLIndex)p->count : 0;
    pthread_mutex_unlock(&p->lock);
    return n;
}

RLIndex RLMessagePortGetCapacity(RLMessagePortRef p) {
    return p ? (RLIndex)p->capacity : 0;
}

void RLMessagePortGetContext(RLMessagePortRef p, RLMessagePortContext *context) {
    if (!p || !context) return;
    pthread_mutex_lock(&p->lock);
    *context = p->context;
    pthread_mutex_unlock(&p->lock);
}
