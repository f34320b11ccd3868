/*
 * rl_socket.c: RLSocket (CFSocket) on a version-1 source that watches the
 * socket in its loop's own wait set, as rl_file_descriptor.c does; no
 * helper thread: reading, accepting and finishing a connect happen in the
 * source's perform, on the loop's thread.
 *
 * Over 500 lines: creation, connecting, enabling, callouts, the accept
 * retry timer and reading all keep the invariants below on one private
 * struct under two locks; one file keeps them in view.
 *
 * Invariants:
 *  - The source watches (RLRunLoopSourceSetWatchedEvents) exactly what
 *    should_watch() says while the socket is valid; push_watched() makes it
 *    so whenever that differs from `pushed`, under `sync_lock`, reading the
 *    state under `lock`, so the last push carries the latest state.
 *  - `types` are the types the socket was made with; `disabled` the ones
 *    switched off (by the user, or one-shot after a callout). A reading type
 *    that re-enables itself is never switched off, so the user's own disable
 *    from inside the callback sticks.
 *  - No callout starts once the socket is invalid; info is released once,
 *    at invalidation or after the last callout in progress (`callouts`).
 *  - The accept retry timer, when set, holds a reference to the socket and
 *    the socket one to the timer, until it fires or the socket is
 *    invalidated.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CRunLoopSocket.h"
#include "rl_extras.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>

#define READ_CLASS     3u /* read, accept or data: a value in the low two bits */
#define ALL_TYPES      (READ_CLASS | kRLSocketConnectCallBack | kRLSocketWriteCallBack)
#define DEFAULT_FLAGS  (kRLSocketAutomaticallyReenableDataCallBack | kRLSocketCloseOnInvalidate)
#define LISTEN_BACKLOG 256

struct __RLSocket {
    rl_object base;
    pthread_mutex_t lock;
    pthread_mutex_t sync_lock; /* orders pushes of the watched events */
    int fd;
    int socket_type; /* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
    bool valid;
    bool info_released;
    bool connecting;     /* a background connect waits to be reported */
    bool reading_over;   /* the final read/data callout was made, or the descriptor is gone */
    bool accept_paused;  /* out of descriptors: waiting for the retry timer */
    RLOptionFlags types; /* made with */
    RLOptionFlags disabled;
    RLOptionFlags flags;
    RLOptionFlags pushed; /* watched events the latest push carries (~0: none yet) */
    int callouts;
    RLSocketCallBack callout;
    RLSocketContext context;
    RLRunLoopSourceRef source; /* strong; cleared at invalidation */
    RLRunLoopTimerRef retry;   /* strong while set */
    RLCFDataRef peer;          /* the peer's address, once known */
};

static char *copy_socket_description(RLSocketRef s);

static RLOptionFlags read_type(RLSocketRef s) {
    return s->types & READ_CLASS;
}

static bool is_connection_oriented(RLSocketRef s) {
    return s->socket_type != SOCK_DGRAM;
}

/* Whether `type` (one bit, or the reading type) is enabled; `lock` held. */
static bool enabled(RLSocketRef s, RLOptionFlags type) {
    return type && (s->types & type) == type && (s->disabled & type) == 0;
}

static bool reads_now(RLSocketRef s) {
    return enabled(s, read_type(s)) && !s->reading_over && !s->accept_paused;
}

static bool write_side_wanted(RLSocketRef s) {
    if (s->connecting) return enabled(s, kRLSocketConnectCallBack) || enabled(s, kRLSocketWriteCallBack);
    return enabled(s, kRLSocketWriteCallBack);
}

static RLOptionFlags should_watch(RLSocketRef s) {
    if (!s->valid) return 0;
    return (reads_now(s) ? kRLRunLoopSourceReadable : 0) | (write_side_wanted(s) ? kRLRunLoopSourceWritable : 0);
}

static bool needs_push(RLSocketRef s) {
    return s->source && should_watch(s) != s->pushed;
}

static RLSocketRef sock_retain(RLSocketRef s) {
    RLRetain(s);
    return s;
}

static void sock_release(RLSocketRef s) {
    RLRelease(s);
}

/* Makes the source watch what should be watched now. Called without `lock`
   by a caller holding a reference. */
static void push_watched(RLSocketRef s) {
    pthread_mutex_lock(&s->sync_lock);
    pthread_mutex_lock(&s->lock);
    RLRunLoopSourceRef src = s->source;
    RLOptionFlags want = should_watch(s);
    s->pushed = want;
    if (src) RLRetain(src);
    pthread_mutex_unlock(&s->lock);
    if (src) {
        RLRunLoopSourceSetWatchedEvents(src, want);
        RLRelease(src);
    }
    pthread_mutex_unlock(&s->sync_lock);
}

static void push_if_needed(RLSocketRef s) {
    pthread_mutex_lock(&s->lock);
    bool push = needs_push(s);
    pthread_mutex_unlock(&s->lock);
    if (push) push_watched(s);
}

static void release_info_locked(RLSocketRef s, void (**rel)(const void *), void **info) {
    *rel = NULL;
    *info = NULL;
    if (!s->info_released && s->callouts == 0) {
        s->info_released = true;
        *rel = s->context.release;
        *info = s->context.info;
        s->context.info = NULL;
    }
}

static void sock_finalize(rl_object *obj) {
    RLSocketRef s = (RLSocketRef)obj;
    if (s->valid) {
        s->valid = false;
        if (s->flags & kRLSocketCloseOnInvalidate) close(s->fd);
        if (!s->info_released && s->context.release) s->context.release(s->context.info);
    }
    if (s->peer) RLCFRelease(s->peer);
    pthread_mutex_destroy(&s->sync_lock);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static char *sock_describe(const rl_object *obj) {
    return copy_socket_description((RLSocketRef)obj);
}

static const rl_class socket_class = {
    .name = "RLSocket",
    .finalize = sock_finalize,
    .copy_description = sock_describe,
};

/* ---- creation ------------------------------------------------------------------ */

static bool allocator_ok(RLCFAllocatorRef allocator, const char *function) {
    return rl_cf_allocator_accepted(allocator, function) && allocator != kRLCFAllocatorNull;
}

static void set_nonblocking(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && !(fl & O_NONBLOCK)) (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

RLSocketRef RLSocketCreateWithNative(RLCFAllocatorRef allocator, RLSocketNativeHandle sock, RLOptionFlags callBackTypes,
                                     RLSocketCallBack callout, const RLSocketContext *context) {
    if (!allocator_ok(allocator, "CFSocketCreateWithNative") || sock < 0) return NULL;
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) < 0) return NULL; /* closed, or not a socket */
    RLSocketRef s = calloc(1, sizeof *s);
    if (!s) return NULL;
    rl_object_init(&s->base, &socket_class);
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->sync_lock, NULL);
    s->fd = sock;
    s->socket_type = type;
    s->valid = true;
    s->types = callout ? callBackTypes & ALL_TYPES : 0;
    s->flags = DEFAULT_FLAGS;
    s->pushed = ~(RLOptionFlags)0;
    s->callout = callout;
    if (read_type(s) == kRLSocketAcceptCallBack) set_nonblocking(sock);
    if (context) {
        s->context = *context;
        if (s->context.retain) s->context.info = (void *)s->context.retain(s->context.info);
    }
    return s;
}

RLSocketRef RLSocketCreate(RLCFAllocatorRef allocator, int32_t protocolFamily, int32_t socketType, int32_t protocol,
                           RLOptionFlags callBackTypes, RLSocketCallBack callout, const RLSocketContext *context) {
    if (!allocator_ok(allocator, "CFSocketCreate")) return NULL;
    int family = protocolFamily > 0 ? protocolFamily : PF_INET;
    int type = socketType > 0 ? socketType : SOCK_STREAM;
    int fd = socket(family, type, protocol > 0 ? protocol : 0);
    if (fd < 0) return NULL;
    RLSocketRef s = RLSocketCreateWithNative(allocator, fd, callBackTypes, callout, context);
    if (!s) close(fd);
    return s;
}

static RLSocketRef create_for_signature(RLCFAllocatorRef allocator, const RLSocketSignature *signature,
                                        RLOptionFlags callBackTypes, RLSocketCallBack callout,
                                        const RLSocketContext *context) {
    if (!signature || !signature->address) return NULL;
    return RLSocketCreate(allocator, signature->protocolFamily, signature->socketType, signature->protocol,
                          callBackTypes, callout, context);
}

RLSocketRef RLSocketCreateWithSocketSignature(RLCFAllocatorRef allocator, const RLSocketSignature *signature,
                                              RLOptionFlags callBackTypes, RLSocketCallBack callout,
                                              const RLSocketContext *context) {
    RLSocketRef s = create_for_signature(allocator, signature, callBackTypes, callout, context);
    if (s && RLSocketSetAddress(s, signature->address) != kRLSocketSuccess) {
        RLSocketInvalidate(s);
        RLRelease(s);
        return NULL;
    }
    return s;
}

RLSocketRef RLSocketCreateConnectedToSocketSignature(RLCFAllocatorRef allocator, const RLSocketSignature *signature,
                                                     RLOptionFlags callBackTypes, RLSocketCallBack callout,
                                                     const RLSocketContext *context, RLTimeInterval timeout) {
    RLSocketRef s = create_for_signature(allocator, signature, callBackTypes, callout, context);
    if (s && RLSocketConnectToAddress(s, signature->address, timeout) != kRLSocketSuccess) {
        RLSocketInvalidate(s);
        RLRelease(s);
        return NULL;
    }
    return s;
}

/* ---- addresses -------------------------------------------------------------------- */

/* The sockaddr in `address`, or NULL when it cannot be one. */
static const struct sockaddr *sockaddr_of(RLCFDataRef address, socklen_t *len) {
    RLIndex n = address ? RLCFDataGetLength(address) : 0;
    if (n < (RLIndex)sizeof(sa_family_t) || n > (RLIndex)sizeof(struct sockaddr_storage)) return NULL;
    *len = (socklen_t)n;
    return (const struct sockaddr *)(const void *)RLCFDataGetBytePtr(address);
}

static bool usable(RLSocketRef s) {
    return s && RLSocketIsValid(s);
}

RLSocketError RLSocketSetAddress(RLSocketRef s, RLCFDataRef address) {
    socklen_t len = 0;
    const struct sockaddr *sa = sockaddr_of(address, &len);
    if (!usable(s) || !sa) return kRLSocketError;
    if (bind(s->fd, sa, len) < 0) return kRLSocketError;
    if (is_connection_oriented(s) && listen(s->fd, LISTEN_BACKLOG) < 0) return kRLSocketError;
    return kRLSocketSuccess;
}

static RLCFDataRef data_of_sockaddr(const struct sockaddr_storage *ss, socklen_t len) {
    if (len > sizeof *ss) len = sizeof *ss;
    return RLCFDataCreate(NULL, (const uint8_t *)ss, (RLIndex)len);
}

RLCFDataRef RLSocketCopyAddress(RLSocketRef s) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (!usable(s) || getsockname(s->fd, (struct sockaddr *)&ss, &len) < 0) return NULL;
    return data_of_sockaddr(&ss, len);
}

/* The peer's address, remembered once getpeername gave it; a new reference. */
RLCFDataRef RLSocketCopyPeerAddress(RLSocketRef s) {
    if (!usable(s)) return NULL;
    pthread_mutex_lock(&s->lock);
    RLCFDataRef known = s->peer ? (RLCFDataRef)RLCFRetain(s->peer) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (known) return known;
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getpeername(s->fd, (struct sockaddr *)&ss, &len) < 0) return NULL;
    RLCFDataRef peer = data_of_sockaddr(&ss, len);
    if (!peer) return NULL;
    pthread_mutex_lock(&s->lock);
    if (!s->peer) s->peer = (RLCFDataRef)RLCFRetain(peer);
    pthread_mutex_unlock(&s->lock);
    return peer;
}

/* ---- connecting and sending -------------------------------------------------------- */

static int remaining_ms(RLAbsoluteTime deadline) {
    if (deadline <= 0) return -1;
    double left = deadline - RLAbsoluteTimeGetCurrent();
    if (left <= 0) return 0;
    return left > 86400.0 ? 86400000 : (int)(left * 1000.0) + 1;
}

/* Waits for `events` on fd until deadline (0: no deadline). 1 ready,
   0 timed out, -1 error. */
static int wait_for(int fd, short events, RLAbsoluteTime deadline) {
    for (;;) {
        int ms = remaining_ms(deadline);
        if (ms == 0) return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, ms);
        if (r > 0) return (p.revents & POLLNVAL) ? -1 : 1;
        if (r == 0 && deadline > 0) return 0;
        if (r < 0 && errno != EINTR) return -1;
    }
}

static RLAbsoluteTime deadline_for(RLTimeInterval timeout) {
    return timeout > 0 ? RLAbsoluteTimeGetCurrent() + timeout : 0;
}

static int pending_error(int fd) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return errno;
    return err;
}

static RLSocketError finish_connect_waiting(int fd, RLTimeInterval timeout) {
    int r = wait_for(fd, POLLOUT, deadline_for(timeout));
    if (r == 0) return kRLSocketTimeout;
    if (r < 0) return kRLSocketError;
    int err = pending_error(fd);
    if (err) {
        errno = err;
        return kRLSocketError;
    }
    return kRLSocketSuccess;
}

/* connect(2) on a descriptor made non-blocking for the call. */
static RLSocketError connect_nonblocking(int fd, const struct sockaddr *sa, socklen_t len, RLTimeInterval timeout,
                                         bool *background) {
    *background = false;
    if (connect(fd, sa, len) == 0) {
        *background = timeout < 0;
        return kRLSocketSuccess;
    }
    if (errno != EINPROGRESS && errno != EINTR) return kRLSocketError;
    if (timeout < 0) {
        *background = true;
        return kRLSocketSuccess;
    }
    return finish_connect_waiting(fd, timeout);
}

RLSocketError RLSocketConnectToAddress(RLSocketRef s, RLCFDataRef address, RLTimeInterval timeout) {
    socklen_t len = 0;
    const struct sockaddr *sa = sockaddr_of(address, &len);
    if (!usable(s) || !sa) return kRLSocketError;
    int fl = fcntl(s->fd, F_GETFL);
    if (fl < 0) return kRLSocketError;
    if (!(fl & O_NONBLOCK)) (void)fcntl(s->fd, F_SETFL, fl | O_NONBLOCK);
    bool background;
    RLSocketError result = connect_nonblocking(s->fd, sa, len, timeout, &background);
    int saved = errno;
    if (!(fl & O_NONBLOCK)) (void)fcntl(s->fd, F_SETFL, fl);
    errno = saved;
    if (background) { /* even a connect made at once is reported, as the caller waits for it */
        pthread_mutex_lock(&s->lock);
        s->connecting = s->valid;
        pthread_mutex_unlock(&s->lock);
        push_if_needed(s);
    }
    return result;
}

RLSocketError RLSocketSendData(RLSocketRef s, RLCFDataRef address, RLCFDataRef data, RLTimeInterval timeout) {
    socklen_t alen = 0;
    const struct sockaddr *sa = address ? sockaddr_of(address, &alen) : NULL;
    if (!usable(s) || !data || (address && !sa)) return kRLSocketError;
    const uint8_t *bytes = RLCFDataGetBytePtr(data);
    size_t size = (size_t)RLCFDataGetLength(data), sent = 0;
    RLAbsoluteTime deadline = deadline_for(timeout);
    do {
        ssize_t n = sendto(s->fd, bytes + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT, sa, alen);
        if (n >= 0) {
            sent += (size_t)n;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return kRLSocketError;
        int r = wait_for(s->fd, POLLOUT, deadline);
        if (r == 0) return kRLSocketTimeout;
        if (r < 0) return kRLSocketError;
    } while (sent < size);
    return kRLSocketSuccess;
}

/* ---- enabling, flags, validity ----------------------------------------------------- */

void RLSocketEnableCallBacks(RLSocketRef s, RLOptionFlags callBackTypes) {
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    if (s->valid) s->disabled &= ~(callBackTypes & s->types);
    bool push = needs_push(s);
    pthread_mutex_unlock(&s->lock);
    if (push) push_watched(s);
}

void RLSocketDisableCallBacks(RLSocketRef s, RLOptionFlags callBackTypes) {
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    if (s->valid) s->disabled |= callBackTypes & s->types;
    bool push = needs_push(s);
    pthread_mutex_unlock(&s->lock);
    if (push) push_watched(s);
}

RLOptionFlags RLSocketGetSocketFlags(RLSocketRef s) {
    if (!s) return 0;
    pthread_mutex_lock(&s->lock);
    RLOptionFlags f = s->flags;
    pthread_mutex_unlock(&s->lock);
    return f;
}

void RLSocketSetSocketFlags(RLSocketRef s, RLOptionFlags flags) {
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->flags = flags;
    pthread_mutex_unlock(&s->lock);
}

bool RLSocketIsValid(RLSocketRef s) {
    if (!s) return false;
    pthread_mutex_lock(&s->lock);
    bool v = s->valid;
    pthread_mutex_unlock(&s->lock);
    return v;
}

RLSocketNativeHandle RLSocketGetNative(RLSocketRef s) {
    return s ? s->fd : -1;
}

void RLSocketGetContext(RLSocketRef s, RLSocketContext *context) {
    if (!s || !context) return;
    pthread_mutex_lock(&s->lock);
    *context = s->context;
    pthread_mutex_unlock(&s->lock);
}

void RLSocketInvalidate(RLSocketRef s) {
    if (!s) return;
    sock_retain(s);
    pthread_mutex_lock(&s->lock);
    if (!s->valid) {
        pthread_mutex_unlock(&s->lock);
        sock_release(s);
        return;
    }
    s->valid = false;
    RLRunLoopSourceRef src = s->source;
    s->source = NULL;
    RLRunLoopTimerRef retry = s->retry;
    s->retry = NULL;
    bool close_it = (s->flags & kRLSocketCloseOnInvalidate) != 0;
    void (*rel)(const void *);
    void *info;
    release_info_locked(s, &rel, &info);
    pthread_mutex_unlock(&s->lock);

    if (retry) {
        RLRunLoopTimerInvalidate(retry);
        RLRelease(retry);
    }
    if (src) {
        RLRunLoopSourceInvalidate(src); /* out of every loop before the descriptor may be closed */
        RLRelease(src);
    }
    if (close_it) close(s->fd);
    if (rel) rel(info);
    sock_release(s);
}

/* ---- callouts ---------------------------------------------------------------------- */

static bool begin_callout(RLSocketRef s) {
    if (s->info_released) return false;
    s->callouts++;
    sock_retain(s);
    return true;
}

static void end_callout(RLSocketRef s, bool may_push) {
    pthread_mutex_lock(&s->lock);
    s->callouts--;
    void (*rel)(const void *) = NULL;
    void *relinfo = NULL;
    bool push = may_push && s->valid && needs_push(s);
    if (!s->valid) release_info_locked(s, &rel, &relinfo);
    pthread_mutex_unlock(&s->lock);
    if (push) push_watched(s);
    if (rel) rel(relinfo);
    sock_release(s);
}

/* Calls the callback unless the socket was invalidated meanwhile. */
static void call_out(RLSocketRef s, RLSocketCallBackType type, RLCFDataRef address, const void *data) {
    pthread_mutex_lock(&s->lock);
    bool go = s->valid && begin_callout(s);
    void *info = s->context.info;
    pthread_mutex_unlock(&s->lock);
    if (!go) return;
    s->callout(s, type, address, data, info);
    end_callout(s, true);
}

static const char *read_type_name(RLOptionFlags t) {
    static const char *const names[] = {"", "read", "accept", "data"};
    return names[t & READ_CLASS];
}

static char *copy_socket_description(RLSocketRef s) {
    if (!s) return strdup("(null)");
    pthread_mutex_lock(&s->lock);
    RLOptionFlags types = s->types, disabled = s->disabled, flags = s->flags;
    bool valid = s->valid;
    RLCFStringRef (*describe)(const void *) = s->context.copyDescription;
    void *info = s->context.info;
    bool pinned = describe && begin_callout(s);
    pthread_mutex_unlock(&s->lock);

    char *inner = pinned ? rl_context_copy_description(RL_CONTEXT_CF_TYPED,
                                                       (char *(*)(const void *))(void (*)(void))describe, info)
                         : NULL;
    if (pinned) end_callout(s, false);
    char *d = NULL;
    if (asprintf(&d, "<RLSocket %p [%s] fd=%d types=%s%s%s disabled=0x%lx flags=0x%lx context=%s>", (void *)s,
                 valid ? "valid" : "invalid", s->fd, read_type_name(types),
                 (types & kRLSocketConnectCallBack) ? "|connect" : "", (types & kRLSocketWriteCallBack) ? "|write" : "",
                 disabled, flags, inner ? inner : "(none)") < 0)
        d = NULL;
    free(inner);
    return d;
}

/* ---- the accept retry timer --------------------------------------------------------- */

static const void *timer_retain(const void *info) {
    return sock_retain((RLSocketRef)(uintptr_t)info);
}

static void timer_release(const void *info) {
    sock_release((RLSocketRef)(uintptr_t)info);
}

static void retry_accepting(RLRunLoopTimerRef timer, void *info) {
    RLSocketRef s = info;
    pthread_mutex_lock(&s->lock);
    bool ours = s->retry == timer;
    if (ours) {
        s->retry = NULL;
        s->accept_paused = false;
    }
    pthread_mutex_unlock(&s->lock);
    if (!ours) return;
    RLRelease(timer); /* the socket's reference; the loop still holds it while it fires */
    push_if_needed(s);
}

/* Out of descriptors: the pending connection stays in the backlog, where
   level-triggered readiness would wake the loop at once again. Stop watching
   and try again a little later, in the mode the loop runs in now. */
static void pause_accepting(RLSocketRef s) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    char *mode = rl ? RLRunLoopCopyCurrentMode(rl) : NULL;
    RLRunLoopTimerContext ctx = {0, s, timer_retain, timer_release, NULL};
    RLRunLoopTimerRef timer =
        mode ? RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + RL_SOCKET_ACCEPT_RETRY, 0, 0, 0, retry_accepting, &ctx)
             : NULL;
    if (!timer) { /* cannot wait (out of memory): keep trying each pass */
        free(mode);
        return;
    }
    pthread_mutex_lock(&s->lock);
    bool keep = s->valid && !s->retry;
    if (keep) {
        s->retry = timer;
        s->accept_paused = true;
    }
    pthread_mutex_unlock(&s->lock);
    if (keep) {
        RLRunLoopAddTimer(rl, timer, mode);
        push_if_needed(s);
    } else {
        RLRunLoopTimerInvalidate(timer);
        RLRelease(timer);
    }
    free(mode);
}

/* ---- reading ------------------------------------------------------------------------ */

static bool resource_shortage(int err) {
    return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

static void end_reading(RLSocketRef s) {
    pthread_mutex_lock(&s->lock);
    s->reading_over = true;
    pthread_mutex_unlock(&s->lock);
}

static void accept_one(RLSocketRef s) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept(s->fd, (struct sockaddr *)&ss, &len);
    if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) return;
        if (resource_shortage(errno)) pause_accepting(s);
        else end_reading(s); /* closed, not a socket, not listening: nothing to accept, ever */
        return;
    }
    RLCFDataRef address = data_of_sockaddr(&ss, len);
    RLSocketNativeHandle handle = fd;
    call_out(s, kRLSocketAcceptCallBack, address, &handle);
    if (address) RLCFRelease(address);
}

static bool descriptor_gone(int err) {
    return err == EBADF || err == ENOTSOCK;
}

/* One recv of up to RL_SOCKET_READ_BUFFER bytes, handed over as data: a
   datagram with its sender, a connection's bytes with its peer; the end of a
   connection (closed, reset, failed) as empty data, once. */
static void read_data(RLSocketRef s) {
    uint8_t *buffer = malloc(RL_SOCKET_READ_BUFFER);
    if (!buffer) return; /* out of memory: the readiness stays, the next pass tries again */
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    bool datagram = !is_connection_oriented(s);
    ssize_t n;
    do {
        n = recvfrom(s->fd, buffer, RL_SOCKET_READ_BUFFER, MSG_DONTWAIT, datagram ? (struct sockaddr *)&ss : NULL,
                     datagram ? &len : NULL);
    } while (n < 0 && errno == EINTR);
    int err = n < 0 ? errno : 0;
    bool nothing_now = err == EAGAIN || err == EWOULDBLOCK || (datagram && err && !descriptor_gone(err));
    if (nothing_now || (datagram && err)) { /* a datagram socket's error (a refused port) is read and gone */
        free(buffer);
        if (err && descriptor_gone(err)) end_reading(s);
        return;
    }
    RLCFDataRef data = RLCFDataCreate(NULL, buffer, n > 0 ? (RLIndex)n : 0);
    free(buffer);
    if (!data) return;
    if (!datagram && n <= 0) end_reading(s);
    RLCFDataRef address = datagram ? data_of_sockaddr(&ss, len) : RLSocketCopyPeerAddress(s);
    call_out(s, kRLSocketDataCallBack, address, data);
    if (address) RLCFRelease(address);
    RLCFRelease(data);
}

/* Whether nothing is left to read and never will be: the descriptor is
   closed, or a connection's peer shut down, hung up or failed with no byte
   buffered. Asked without reading, so the callback still sees the error. */
static bool nothing_more_to_read(RLSocketRef s) {
    struct pollfd p = {.fd = s->fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0) return false;
    if (p.revents & POLLNVAL) return true;
    if (!is_connection_oriented(s) || !(p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return false;
    int avail = 0;
    return ioctl(s->fd, FIONREAD, &avail) == 0 && avail == 0;
}

static bool is_listening(int fd) {
    int on = 0;
    socklen_t len = sizeof on;
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

static void do_read_class(RLSocketRef s, RLOptionFlags type) {
    switch (type) {
    case kRLSocketAcceptCallBack: accept_one(s); break;
    case kRLSocketDataCallBack: read_data(s); break;
    default:
        if (!is_listening(s->fd) && nothing_more_to_read(s)) end_reading(s); /* this callout is the final one */
        call_out(s, kRLSocketReadCallBack, NULL, NULL);
        break;
    }
}

/* ---- the version-1 source ------------------------------------------------------------ */

typedef enum { NOTHING, CONNECTED, WRITABLE } write_side;

/* What the write side's readiness means now; switches off what is one-shot.
   `lock` held. */
static write_side take_write_side(RLSocketRef s, RLOptionFlags ready, int32_t *error) {
    if (!(ready & kRLRunLoopSourceWritable)) return NOTHING;
    if (s->connecting) {
        s->connecting = false;
        *error = pending_error(s->fd);
        bool report = enabled(s, kRLSocketConnectCallBack);
        s->disabled |= s->types & kRLSocketConnectCallBack; /* sent once at most */
        return report ? CONNECTED : NOTHING;
    }
    if (!enabled(s, kRLSocketWriteCallBack)) return NOTHING;
    if (!(s->flags & kRLSocketAutomaticallyReenableWriteCallBack)) s->disabled |= kRLSocketWriteCallBack;
    return WRITABLE;
}

static RLOptionFlags take_read_side(RLSocketRef s, RLOptionFlags ready) {
    RLOptionFlags t = read_type(s);
    if (!(ready & kRLRunLoopSourceReadable) || !reads_now(s)) return 0;
    if ((s->flags & t) != t) s->disabled |= t; /* not re-enabled by itself */
    return t;
}

static void src_perform(void *info) {
    RLSocketRef s = info;
    pthread_mutex_lock(&s->lock);
    RLOptionFlags ready = s->source && s->valid ? RLRunLoopSourceGetReadyEvents(s->source) : 0;
    int32_t error = 0;
    write_side w = take_write_side(s, ready, &error);
    RLOptionFlags r = take_read_side(s, ready);
    bool clear_errors = w == WRITABLE && !(s->flags & kRLSocketLeaveErrors);
    bool go = (w != NOTHING || r) && begin_callout(s); /* holds s through both callouts */
    pthread_mutex_unlock(&s->lock);
    if (!go) {
        push_if_needed(s); /* readiness nobody wants any more: stop reporting it */
        return;
    }
    if (clear_errors) (void)pending_error(s->fd);
    if (w == CONNECTED) call_out(s, kRLSocketConnectCallBack, NULL, error ? &error : NULL);
    if (w == WRITABLE) call_out(s, kRLSocketWriteCallBack, NULL, NULL);
    if (r) do_read_class(s, r);
    end_callout(s, true);
}

static const void *src_retain(const void *info) {
    return sock_retain((RLSocketRef)(uintptr_t)info);
}

static void src_release(const void *info) {
    sock_release((RLSocketRef)(uintptr_t)info);
}

static char *src_describe(const void *info) {
    return copy_socket_description((RLSocketRef)(uintptr_t)info);
}

static int src_fd(void *info) {
    return ((RLSocketRef)info)->fd;
}

static bool sock_is_valid(const void *owner) {
    return ((RLSocketRef)(uintptr_t)owner)->valid;
}

RLRunLoopSourceRef RLSocketCreateRunLoopSource(RLCFAllocatorRef allocator, RLSocketRef s, RLIndex order) {
    if (!s || !allocator_ok(allocator, "CFSocketCreateRunLoopSource")) return NULL;
    const RLRunLoopSourceContext1 ctx = {
        .version = 1,
        .info = s,
        .retain = src_retain,
        .release = src_release,
        .copyDescription = src_describe,
        .getFileDescriptor = src_fd,
        .perform = src_perform,
    };
    RLRunLoopSourceRef src = rl_cached_source_copy(&s->lock, &s->source, sock_is_valid, s, order, &ctx);
    if (src) push_watched(s);
    return src;
}
