/*
 * rl_cf_message_port.c: CFMessagePort (CRunLoopCFMessagePort.h) over UNIX
 * stream sockets in the user's own directory.
 *
 * Over 500 lines: one port's pieces (frames, connections, listener, local
 * and remote sides, sending) share the port's private struct and its three
 * locks; split across files they would need that struct and its lock order
 * in a header of their own. Its sections follow the seams for a later split.
 *
 * Pieces:
 *  - A local port with a name holds `name.lock` (flock) for its whole life
 *    and listens on `name.sock`; the lock tells a live owner from a stale
 *    socket file, and the kernel drops it when the owner dies.
 *  - Each connection is a `conn`: its socket, an input buffer of partial
 *    frames, an output buffer (local side: replies the peer has no room for
 *    yet), and a version-1 source watching the socket.
 *  - The user's source of a local port is a version-0 source that is never
 *    signalled: its schedule and cancel callouts tell where the user put it
 *    (`members`), and the listener's and every connection's version-1
 *    sources are added to exactly those loops and modes.
 *  - A remote port is one client `conn`. Its source joins a loop only while
 *    a thread waits there for a reply; each waiter has a `pending` record
 *    and a version-0 `waker` source the reader signals, so the waiting run
 *    returns whichever loop read the reply.
 *
 * Locks: `lock` guards the port's state and its conns' buffers; it is held
 * for short system calls on our own sockets, never across a callout or a
 * call into a loop. `sched_lock` orders the changes of where the internal
 * sources are and what they watch (it is taken around calls into loops,
 * never by a context callback). `write_lock` keeps a remote port's messages
 * whole on the wire. Order: sched_lock -> lock; write_lock alone.
 *
 * fork(): every descriptor this file opens is in `owned_fds`, closed in the
 * child by an atfork handler; ports made before the fork see a different
 * rl_fork_generation() and act as invalid without touching descriptors.
 */
#define _GNU_SOURCE
#include "CRunLoopCFMessagePort.h"
#include "rl_extras.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- frames ------------------------------------------------------------------ */

#define FRAME_MAGIC 0x524c4d31u /* "RLM1": the protocol's version is in it */
enum { FLAG_HELLO = 1u, FLAG_WANTS_REPLY = 2u, FLAG_IS_REPLY = 4u };

/* Host byte order: both ends are on this machine. */
typedef struct {
    uint32_t magic;
    uint32_t length; /* payload bytes after the header */
    int32_t msgid;
    uint32_t flags;
    uint64_t request; /* pairs a reply with its request */
} frame_header;

#define READ_CHUNK      65536
#define READS_PER_CALL  16
#define ACCEPTS_PER_RUN 64
#define MAX_OUTPUT      (2 * (RLCF_MESSAGE_PORT_MAX_SIZE + (long)sizeof(frame_header)))

typedef struct {
    uint8_t *bytes;
    size_t start, end, cap; /* unread bytes are [start, end) */
} buffer;

static void buffer_free(buffer *b) {
    free(b->bytes);
    *b = (buffer){0};
}

static size_t buffer_used(const buffer *b) {
    return b->end - b->start;
}

/* Room for `more` bytes after end; false out of memory. */
static bool buffer_reserve(buffer *b, size_t more) {
    if (b->start > 0 && b->start == b->end) b->start = b->end = 0;
    if (b->cap - b->end >= more) return true;
    if (b->start > 0) {
        memmove(b->bytes, b->bytes + b->start, b->end - b->start);
        b->end -= b->start;
        b->start = 0;
        if (b->cap - b->end >= more) return true;
    }
    size_t cap = b->cap ? b->cap : READ_CHUNK;
    while (cap - b->end < more) cap *= 2;
    uint8_t *bytes = realloc(b->bytes, cap);
    if (!bytes) return false;
    b->bytes = bytes;
    b->cap = cap;
    return true;
}

static bool buffer_append(buffer *b, const void *bytes, size_t len) {
    if (!buffer_reserve(b, len)) return false;
    if (len) memcpy(b->bytes + b->end, bytes, len);
    b->end += len;
    return true;
}

/* ---- descriptors, and what a fork does to them ------------------------------------ */

static pthread_mutex_t owned_lock = PTHREAD_MUTEX_INITIALIZER;
static int *owned_fds;
static size_t owned_count, owned_cap;
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;
static bool fork_handlers_installed;

static void before_fork(void) {
    pthread_mutex_lock(&owned_lock);
}
static void after_fork_in_parent(void) {
    pthread_mutex_unlock(&owned_lock);
}
/* The child must not keep the parent's names, listeners or connections
   alive, nor write into the parent's streams. */
static void after_fork_in_child(void) {
    for (size_t i = 0; i < owned_count; i++) close(owned_fds[i]);
    owned_count = 0;
    pthread_mutex_unlock(&owned_lock);
}
static void install_fork_handlers(void) {
    fork_handlers_installed = pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
}
static bool watch_forks(void) {
    pthread_once(&fork_handlers_once, install_fork_handlers);
    return fork_handlers_installed && rl_fork_watch();
}

/* owned_lock held. False (fd closed) out of memory. */
static bool own_locked(int fd) {
    if (owned_count == owned_cap) {
        size_t cap = owned_cap ? owned_cap * 2 : 16;
        int *fds = realloc(owned_fds, cap * sizeof *fds);
        if (!fds) {
            close(fd);
            return false;
        }
        owned_fds = fds;
        owned_cap = cap;
    }
    owned_fds[owned_count++] = fd;
    return true;
}

static int owned_socket(void) {
    pthread_mutex_lock(&owned_lock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && !own_locked(fd)) fd = -1;
    pthread_mutex_unlock(&owned_lock);
    return fd;
}

static int owned_accept(int listen_fd) {
    pthread_mutex_lock(&owned_lock);
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    int error = errno;
    if (fd >= 0 && !own_locked(fd)) fd = -1, error = ENOMEM;
    pthread_mutex_unlock(&owned_lock);
    errno = error;
    return fd;
}

static int owned_open(const char *path) {
    pthread_mutex_lock(&owned_lock);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 && !own_locked(fd)) fd = -1;
    pthread_mutex_unlock(&owned_lock);
    return fd;
}

static void owned_close(int fd) {
    if (fd < 0) return;
    pthread_mutex_lock(&owned_lock);
    for (size_t i = 0; i < owned_count; i++)
        if (owned_fds[i] == fd) {
            owned_fds[i] = owned_fds[--owned_count];
            close(fd);
            break;
        }
    pthread_mutex_unlock(&owned_lock);
}

static bool peer_is_us(int fd) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

/* ---- names and paths ---------------------------------------------------------------- */

/* The user's directory for port sockets, malloc'd; NULL when it cannot be
   made or is not the user's alone. */
static char *ports_directory(void) {
    uid_t uid = geteuid();
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    char *dir = NULL;
    if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
        (st.st_mode & 077) == 0)
        dir = rl_strdup_printf("%s/rlcf-message-ports", xdg);
    else dir = rl_strdup_printf("/tmp/rlcf-message-ports-%u", (unsigned)uid);
    if (!dir) return NULL;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) goto unsafe;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0) goto unsafe;
    return dir;
unsafe:
    free(dir);
    return NULL;
}

/* The file name for a port name: safe bytes kept, others as %XX; a hash
   when that would not fit a socket address (the hello carries the full
   name, which the owner checks). */
static char *file_stem(const char *dir, const char *name) {
    size_t room = sizeof(((struct sockaddr_un *)0)->sun_path) - strlen(dir) - sizeof "/.sock";
    char stem[3 * RLCF_MESSAGE_PORT_MAX_NAME + 1];
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        bool safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                    *c == '_' || (*c == '.' && c != (const unsigned char *)name);
        n += safe ? (size_t)snprintf(stem + n, 2, "%c", *c) : (size_t)snprintf(stem + n, 4, "%%%02X", *c);
    }
    if (n > room || room > sizeof stem) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 1099511628211ull;
        snprintf(stem, sizeof stem, "h-%016llx", (unsigned long long)h);
    }
    return rl_strdup_printf("%s/%s", dir, stem);
}

static bool address_of(const char *base, struct sockaddr_un *addr) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    return snprintf(addr->sun_path, sizeof addr->sun_path, "%s.sock", base) < (int)sizeof addr->sun_path;
}

/* The name's text, if it is a usable port name. */
static const char *name_text(RLCFStringRef name) {
    if (!name || RLCFGetTypeID(name) != RLCFStringGetTypeID()) return NULL;
    const char *text = RLCFStringGetCStringPtr(name, kRLCFStringEncodingUTF8);
    return text && text[0] && strlen(text) <= RLCF_MESSAGE_PORT_MAX_NAME ? text : NULL;
}

/* ---- objects ---------------------------------------------------------------------- */

typedef struct conn conn;
typedef struct membership {
    RLRunLoopRef rl; /* retained */
    char *mode;
    struct membership *next;
} membership;

typedef struct pending {
    uint64_t request;
    RLRunLoopRef rl;          /* the waiting thread's loop */
    RLRunLoopSourceRef waker; /* signalled when done */
    bool done;
    RLCFDataRef reply;
    struct pending *next;
} pending;

struct __RLCFMessagePort {
    rl_held_object base; /* references: the user's; holds: the internal sources' */
    pthread_mutex_t lock;
    pthread_mutex_t sched_lock;
    pthread_mutex_t write_lock;
    bool remote;
    bool valid;
    bool info_released;
    unsigned made_in; /* rl_fork_generation() */
    int callouts;     /* message callbacks running now */
    RLCFStringRef name;
    char *base_path; /* socket and lock file, without their suffixes */
    int lock_fd, listen_fd;
    RLRunLoopSourceRef listen_source;
    RLRunLoopSourceRef user_source;
    RLIndex order;
    membership *members;
    conn *conns;
    pending *pendings;
    uint64_t next_request;
    RLCFMessagePortCallBack callout;
    RLCFMessagePortContext context;
    RLCFMessagePortInvalidationCallBack on_invalid;
};

struct conn {
    _Atomic long refs;       /* the port's list, and the source's info */
    RLCFMessagePortRef port; /* held */
    int fd;
    bool dead;
    bool greeted; /* a local port's conn: the hello came */
    buffer in, out;
    RLRunLoopSourceRef source; /* strong, until the conn is dropped */
    RLRunLoopSourceRef ending; /* the source, taken out by invalidation for it to end */
    RLOptionFlags watching;
    conn *next;
};

static bool inherited(RLCFMessagePortRef p) {
    return p->made_in != rl_fork_generation();
}

static void port_hold(RLCFMessagePortRef p) {
    rl_object_hold(&p->base);
}
static void port_unhold(RLCFMessagePortRef p) {
    rl_object_unhold(&p->base);
}

static void conn_unref(conn *c) {
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    if (!inherited(c->port)) owned_close(c->fd);
    buffer_free(&c->in);
    buffer_free(&c->out);
    port_unhold(c->port);
    free(c);
}

static const void *conn_source_retain(const void *info) {
    atomic_fetch_add_explicit(&((conn *)info)->refs, 1, memory_order_relaxed);
    return info;
}
static void conn_source_release(const void *info) {
    conn_unref((conn *)info);
}
static int conn_source_fd(void *info) {
    return ((conn *)info)->fd;
}
static char *conn_source_describe(const void *info) {
    const conn *c = info;
    return rl_strdup_printf("<RLCFMessagePort connection fd=%d of %p>", c->fd, (void *)c->port);
}

static void conn_perform(void *info);

static const void *port_hold_info(const void *info) {
    port_hold((RLCFMessagePortRef)info);
    return info;
}
static void port_unhold_info(const void *info) {
    port_unhold((RLCFMessagePortRef)info);
}

/* A version-1 source for an internal fd, holding `info` with the given
   callbacks. */
static RLRunLoopSourceRef fd_source(void *info, RLIndex order, const void *(*retain)(const void *),
                                    void (*release)(const void *), int (*get_fd)(void *), void (*perform)(void *),
                                    char *(*describe)(const void *)) {
    RLRunLoopSourceContext1 ctx = {
        .version = 1,
        .info = info,
        .retain = retain,
        .release = release,
        .copyDescription = describe,
        .getFileDescriptor = get_fd,
        .perform = perform,
    };
    return RLRunLoopSourceCreate(order, (RLRunLoopSourceContext *)&ctx);
}

/* Adds or removes `src` wherever the user's source is; sched_lock held. */
static void mirror_memberships(RLCFMessagePortRef p, RLRunLoopSourceRef src, bool add) {
    pthread_mutex_lock(&p->lock);
    size_t n = 0;
    for (membership *m = p->members; m; m = m->next) n++;
    membership *copy = n ? calloc(n, sizeof *copy) : NULL;
    size_t i = 0;
    for (membership *m = p->members; copy && m; m = m->next, i++) {
        copy[i].rl = (RLRunLoopRef)RLRetain(m->rl);
        copy[i].mode = strdup(m->mode);
    }
    pthread_mutex_unlock(&p->lock);
    for (i = 0; copy && i < n; i++) {
        if (copy[i].mode) {
            if (add) RLRunLoopAddSource(copy[i].rl, src, copy[i].mode);
            else RLRunLoopRemoveSource(copy[i].rl, src, copy[i].mode);
        }
        free(copy[i].mode);
        RLRelease(copy[i].rl);
    }
    free(copy);
}

/* The internal sources, retained, NULL-terminated; `lock` held. */
static RLRunLoopSourceRef *internal_sources_locked(RLCFMessagePortRef p) {
    size_t n = p->listen_source ? 1 : 0;
    for (conn *c = p->conns; c; c = c->next) n += c->source != NULL;
    RLRunLoopSourceRef *all = calloc(n + 1, sizeof *all);
    if (!all) return NULL;
    size_t i = 0;
    if (p->listen_source) all[i++] = (RLRunLoopSourceRef)RLRetain(p->listen_source);
    for (conn *c = p->conns; c; c = c->next)
        if (c->source) all[i++] = (RLRunLoopSourceRef)RLRetain(c->source);
    return all;
}

static void release_sources(RLRunLoopSourceRef *all) {
    for (size_t i = 0; all && all[i]; i++) RLRelease(all[i]);
    free(all);
}

/* The user's source joined (rl, mode): so do the internal ones. */
static void user_source_schedule(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    RLCFMessagePortRef p = info;
    membership *m = calloc(1, sizeof *m);
    if (m) m->mode = strdup(mode);
    if (!m || !m->mode) {
        free(m);
        return; /* out of memory: the port is not served in this mode */
    }
    m->rl = (RLRunLoopRef)RLRetain(rl);
    pthread_mutex_lock(&p->sched_lock);
    pthread_mutex_lock(&p->lock);
    m->next = p->members;
    p->members = m;
    RLRunLoopSourceRef *all = internal_sources_locked(p);
    pthread_mutex_unlock(&p->lock);
    for (size_t i = 0; all && all[i]; i++) RLRunLoopAddSource(rl, all[i], mode);
    pthread_mutex_unlock(&p->sched_lock);
    release_sources(all);
}

static void user_source_cancel(void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    RLCFMessagePortRef p = info;
    pthread_mutex_lock(&p->sched_lock);
    pthread_mutex_lock(&p->lock);
    membership *found = NULL;
    for (membership **m = &p->members; *m; m = &(*m)->next)
        if ((*m)->rl == rl && strcmp((*m)->mode, mode) == 0) {
            found = *m;
            *m = found->next;
            break;
        }
    RLRunLoopSourceRef *all = internal_sources_locked(p);
    pthread_mutex_unlock(&p->lock);
    for (size_t i = 0; all && all[i]; i++) RLRunLoopRemoveSource(rl, all[i], mode);
    pthread_mutex_unlock(&p->sched_lock);
    release_sources(all);
    if (found) {
        RLRelease(found->rl);
        free(found->mode);
        free(found);
    }
}

/* ---- the port object ----------------------------------------------------------------- */

static void port_invalidate(RLCFMessagePortRef p, bool call_back);
static char *port_describe(const rl_object *obj);

static void port_last_reference(rl_object *obj) {
    RLCFMessagePortRef p = (RLCFMessagePortRef)obj;
    port_invalidate(p, true);
    port_unhold(p);
}

static void port_free_memory(rl_object *obj) {
    RLCFMessagePortRef p = (RLCFMessagePortRef)obj;
    while (p->members) {
        membership *m = p->members;
        p->members = m->next;
        RLRelease(m->rl);
        free(m->mode);
        free(m);
    }
    RLCFRelease(p->name);
    free(p->base_path);
    pthread_mutex_destroy(&p->write_lock);
    pthread_mutex_destroy(&p->sched_lock);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static const rl_held_class port_class = {
    {"RLCFMessagePort", port_last_reference, port_describe},
    port_free_memory,
};

static RLCFMessagePortRef port_new(bool remote, RLCFStringRef name) {
    if (!watch_forks()) return NULL;
    RLCFMessagePortRef p = calloc(1, sizeof *p);
    if (!p) return NULL;
    rl_held_object_init(&p->base, &port_class);
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->sched_lock, NULL);
    pthread_mutex_init(&p->write_lock, NULL);
    p->remote = remote;
    p->valid = true;
    p->info_released = true; /* until a context is taken */
    p->made_in = rl_fork_generation();
    p->lock_fd = p->listen_fd = -1;
    p->name = name ? RLCFStringCreateCopy(NULL, name) : NULL;
    return p;
}

static bool port_usable(RLCFMessagePortRef p) {
    return p && rl_object_is(p, &port_class.base);
}

/* ---- callouts and the context's info ---------------------------------------------- */

/* Pins the info for a callback outside the lock; `lock` held. */
static bool begin_callout_locked(RLCFMessagePortRef p) {
    if (!p->valid || p->info_released) return false;
    p->callouts++;
    return true;
}

/* The context's release, once, when the port is invalid and no callback
   uses the info any more; `lock` held. */
static void take_info_release_locked(RLCFMessagePortRef p, void (**release)(const void *), void **info) {
    *release = NULL;
    *info = NULL;
    if (p->valid || p->info_released || p->callouts > 0) return;
    p->info_released = true;
    *release = p->context.release;
    *info = p->context.info;
}

static void end_callout(RLCFMessagePortRef p) {
    void (*release)(const void *);
    void *info;
    pthread_mutex_lock(&p->lock);
    p->callouts--;
    take_info_release_locked(p, &release, &info);
    pthread_mutex_unlock(&p->lock);
    if (release) release(info);
}

static char *port_describe(const rl_object *obj) {
    RLCFMessagePortRef p = (RLCFMessagePortRef)obj;
    pthread_mutex_lock(&p->lock);
    bool valid = p->valid;
    RLIndex version = p->context.version | RL_CONTEXT_CF_TYPED;
    char *(*describe)(const void *) = (char *(*)(const void *))(void (*)(void))p->context.copyDescription;
    void *info = p->context.info;
    bool pinned = describe && begin_callout_locked(p);
    pthread_mutex_unlock(&p->lock);
    char *inner = pinned ? rl_context_copy_description(version, describe, info) : NULL;
    if (pinned) end_callout(p);
    const char *name = p->name ? RLCFStringGetCStringPtr(p->name, kRLCFStringEncodingUTF8) : NULL;
    char *s = rl_strdup_printf("<CFMessagePort %p [%s] %s name = %s%s%s, context = %s>", (void *)p,
                               valid ? "valid" : "invalid", p->remote ? "remote" : "local", name ? "\"" : "",
                               name ? name : "(none)", name ? "\"" : "", inner ? inner : "(none)");
    free(inner);
    return s;
}

/* ---- connections ----------------------------------------------------------------------- */

static conn *conn_new(RLCFMessagePortRef p, int fd) {
    conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    atomic_init(&c->refs, 1);
    c->port = p;
    port_hold(p);
    c->fd = fd;
    c->watching = kRLRunLoopSourceReadable;
    c->source = fd_source(c, p->order, conn_source_retain, conn_source_release, conn_source_fd, conn_perform,
                          conn_source_describe);
    if (!c->source) {
        c->fd = -1; /* the caller closes it */
        conn_unref(c);
        return NULL;
    }
    return c;
}

/* Out of the port's list (`lock` held): the source, for the caller to
   invalidate and release, or NULL when already dropped. */
static RLRunLoopSourceRef conn_detach_locked(conn *c) {
    if (c->dead) return NULL;
    c->dead = true;
    for (conn **at = &c->port->conns; *at; at = &(*at)->next)
        if (*at == c) {
            *at = c->next;
            break;
        }
    c->next = NULL;
    if (!inherited(c->port)) shutdown(c->fd, SHUT_RDWR); /* the peer sees the end now, not at the last unref */
    RLRunLoopSourceRef src = c->source;
    c->source = NULL;
    return src;
}

/* Ends a connection the list held: its source leaves every loop. */
static void conn_finish(conn *c, RLRunLoopSourceRef src) {
    if (src) {
        RLRunLoopSourceInvalidate(src);
        RLRelease(src);
    }
    conn_unref(c);
}

static void conn_drop(conn *c) {
    pthread_mutex_lock(&c->port->lock);
    RLRunLoopSourceRef src = conn_detach_locked(c);
    pthread_mutex_unlock(&c->port->lock);
    if (src) conn_finish(c, src);
}

/* Makes the source watch for room when replies wait to go out. */
static void conn_update_watch(conn *c) {
    RLCFMessagePortRef p = c->port;
    pthread_mutex_lock(&p->sched_lock);
    pthread_mutex_lock(&p->lock);
    RLOptionFlags want = c->dead ? 0 : kRLRunLoopSourceReadable | (buffer_used(&c->out) ? kRLRunLoopSourceWritable : 0);
    RLRunLoopSourceRef src = want != c->watching ? (RLRunLoopSourceRef)RLRetain(c->source) : NULL;
    c->watching = want;
    pthread_mutex_unlock(&p->lock);
    if (src) {
        RLRunLoopSourceSetWatchedEvents(src, want);
        RLRelease(src);
    }
    pthread_mutex_unlock(&p->sched_lock);
}

/* Reads what the socket has (bounded); `lock` held. 1: more may come, 0:
   the peer closed, -1: failed. */
static int conn_fill_locked(conn *c) {
    for (int i = 0; i < READS_PER_CALL; i++) {
        if (!buffer_reserve(&c->in, READ_CHUNK)) return -1;
        ssize_t n = recv(c->fd, c->in.bytes + c->in.end, READ_CHUNK, MSG_DONTWAIT);
        if (n > 0) {
            c->in.end += (size_t)n;
            continue;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
    }
    return 1;
}

/* Writes what waits in the output buffer; `lock` held. false: failed. */
static bool conn_flush_locked(conn *c) {
    while (buffer_used(&c->out)) {
        ssize_t n = send(c->fd, c->out.bytes + c->out.start, buffer_used(&c->out), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->out.start += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    return true;
}

/* The next whole frame, out of the input buffer; `lock` held. 1: *h and
   *data (the payload, the caller's), 0: none yet, -1: garbage or out of
   memory. */
static int conn_pop_frame_locked(conn *c, frame_header *h, RLCFDataRef *data) {
    if (buffer_used(&c->in) < sizeof *h) return 0;
    memcpy(h, c->in.bytes + c->in.start, sizeof *h);
    if (h->magic != FRAME_MAGIC || h->length > RLCF_MESSAGE_PORT_MAX_SIZE ||
        (h->flags & ~(FLAG_HELLO | FLAG_WANTS_REPLY | FLAG_IS_REPLY)))
        return -1;
    if (buffer_used(&c->in) < sizeof *h + h->length) return 0;
    *data = RLCFDataCreate(NULL, c->in.bytes + c->in.start + sizeof *h, h->length);
    if (!*data) return -1;
    c->in.start += sizeof *h + h->length;
    return 1;
}

static bool frame_append(buffer *b, uint32_t flags, int32_t msgid, uint64_t request, RLCFDataRef data) {
    frame_header h = {FRAME_MAGIC, (uint32_t)RLCFDataGetLength(data), msgid, flags, request};
    size_t before = b->end;
    if (buffer_append(b, &h, sizeof h) && buffer_append(b, RLCFDataGetBytePtr(data), h.length)) return true;
    b->end = before;
    return false;
}

/* ---- the local side ------------------------------------------------------------------------ */

static bool is_hello_for(RLCFMessagePortRef p, const frame_header *h, RLCFDataRef data) {
    const char *name = p->name ? RLCFStringGetCStringPtr(p->name, kRLCFStringEncodingUTF8) : NULL;
    return h->flags == FLAG_HELLO && name && (size_t)RLCFDataGetLength(data) == strlen(name) &&
           memcmp(RLCFDataGetBytePtr(data), name, strlen(name)) == 0;
}

/* One frame a client sent; false: drop the connection. */
static bool serve_frame(conn *c, const frame_header *h, RLCFDataRef data) {
    RLCFMessagePortRef p = c->port;
    if (!c->greeted) {
        pthread_mutex_lock(&p->lock);
        c->greeted = is_hello_for(p, h, data);
        pthread_mutex_unlock(&p->lock);
        return c->greeted;
    }
    if (h->flags & ~FLAG_WANTS_REPLY) return false;
    pthread_mutex_lock(&p->lock);
    bool pinned = begin_callout_locked(p);
    RLCFMessagePortCallBack callout = p->callout;
    void *info = p->context.info;
    pthread_mutex_unlock(&p->lock);
    if (!pinned) return true; /* invalidated: the connection is going anyway */

    RLCFDataRef reply = callout(p, h->msgid, data, info);
    bool ok = true;
    if (h->flags & FLAG_WANTS_REPLY) {
        pthread_mutex_lock(&p->lock);
        ok = !c->dead && buffer_used(&c->out) + sizeof *h + (size_t)RLCFDataGetLength(reply) <= MAX_OUTPUT &&
             frame_append(&c->out, FLAG_IS_REPLY, h->msgid, h->request, reply) && conn_flush_locked(c);
        pthread_mutex_unlock(&p->lock);
    }
    RLCFRelease(reply);
    end_callout(p);
    return ok;
}

/* ---- the remote side ------------------------------------------------------------------------ */

/* A reply came: its waiter's run returns. false: not a reply. */
static bool take_reply(conn *c, const frame_header *h, RLCFDataRef data) {
    RLCFMessagePortRef p = c->port;
    if (h->flags != FLAG_IS_REPLY) return false;
    pthread_mutex_lock(&p->lock);
    pending *w = p->pendings;
    while (w && (w->request != h->request || w->done)) w = w->next;
    RLRunLoopSourceRef waker = NULL;
    RLRunLoopRef rl = NULL;
    if (w) {
        w->done = true;
        w->reply = data;
        data = NULL;
        waker = (RLRunLoopSourceRef)RLRetain(w->waker);
        rl = (RLRunLoopRef)RLRetain(w->rl);
    }
    pthread_mutex_unlock(&p->lock);
    RLCFRelease(data); /* a reply nobody waits for any more (it timed out) */
    if (waker) {
        RLRunLoopSourceSignal(waker);
        RLRunLoopWakeUp(rl);
        RLRelease(waker);
        RLRelease(rl);
    }
    return true;
}

/* ---- a connection's source -------------------------------------------------------------------- */

/* A source the child inherited leaves the child's loops; the descriptor
   under it was closed at the fork. */
static void leave_inherited(RLRunLoopSourceRef src) {
    if (src) RLRunLoopSourceInvalidate(src);
}

static void conn_perform(void *info) {
    conn *c = info;
    RLCFMessagePortRef p = c->port;
    if (inherited(p)) {
        leave_inherited(c->source);
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (c->dead) {
        pthread_mutex_unlock(&p->lock);
        return;
    }
    bool flushed = conn_flush_locked(c);
    int more = conn_fill_locked(c);
    pthread_mutex_unlock(&p->lock);

    bool broken = !flushed || more < 0;
    while (!broken) {
        frame_header h;
        RLCFDataRef data = NULL;
        pthread_mutex_lock(&p->lock);
        int got = c->dead ? 0 : conn_pop_frame_locked(c, &h, &data);
        pthread_mutex_unlock(&p->lock);
        if (got == 0) break;
        if (got < 0) {
            broken = true;
            break;
        }
        if (p->remote) {
            broken = !take_reply(c, &h, data);
            if (broken) RLCFRelease(data);
        } else {
            broken = !serve_frame(c, &h, data);
            RLCFRelease(data);
        }
    }
    if (broken || more == 0) {
        /* A remote port lost its local port; a local port just loses this
           client (after serving what it sent before it closed). */
        if (p->remote) port_invalidate(p, true);
        else conn_drop(c);
        return;
    }
    conn_update_watch(c);
}

/* ---- the listener ---------------------------------------------------------------------------- */

static int listen_source_fd(void *info) {
    return ((RLCFMessagePortRef)info)->listen_fd;
}

static char *listen_source_describe(const void *info) {
    return rl_strdup_printf("<RLCFMessagePort listener of %p>", info);
}

/* Adds a new client's connection wherever the port is served. */
static void adopt_client(RLCFMessagePortRef p, int fd) {
    conn *c = conn_new(p, fd);
    if (!c) {
        owned_close(fd);
        return;
    }
    pthread_mutex_lock(&p->sched_lock);
    pthread_mutex_lock(&p->lock);
    bool valid = p->valid;
    if (valid) {
        c->next = p->conns;
        p->conns = c;
    }
    pthread_mutex_unlock(&p->lock);
    if (valid) mirror_memberships(p, c->source, true);
    pthread_mutex_unlock(&p->sched_lock);
    if (!valid) {
        c->dead = true;
        conn_finish(c, c->source);
    }
}

/* How long a listener out of descriptors waits before it looks again. */
#define ACCEPT_RETRY_SECONDS 0.1

static RLRunLoopSourceRef copy_listen_source(RLCFMessagePortRef p) {
    pthread_mutex_lock(&p->lock);
    RLRunLoopSourceRef s = p->valid && p->listen_source ? (RLRunLoopSourceRef)RLRetain(p->listen_source) : NULL;
    pthread_mutex_unlock(&p->lock);
    return s;
}

static void resume_listening(RLRunLoopTimerRef timer, void *info) {
    (void)timer;
    RLRunLoopSourceRef s = copy_listen_source((RLCFMessagePortRef)info);
    if (!s) return;
    RLRunLoopSourceSetWatchedEvents(s, kRLRunLoopSourceReadable);
    RLRelease(s);
}

/* Out of descriptors: the connection waits in the backlog, which keeps the
   listener readable, so the loop would come straight back here. Stop
   watching it and look again a little later, in the mode the loop runs now.
   Out of memory for the timer, it keeps trying each pass. */
static void pause_listening(RLCFMessagePortRef p) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    char *mode = rl ? RLRunLoopCopyCurrentMode(rl) : NULL;
    RLRunLoopTimerContext ctx = {0, p, port_hold_info, port_unhold_info, NULL};
    RLRunLoopTimerRef timer =
        mode ? RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + ACCEPT_RETRY_SECONDS, 0, 0, 0, resume_listening, &ctx)
             : NULL;
    RLRunLoopSourceRef s = timer ? copy_listen_source(p) : NULL;
    if (s) {
        RLRunLoopSourceSetWatchedEvents(s, 0);
        RLRunLoopAddTimer(rl, timer, mode);
        RLRelease(s);
    }
    if (timer) RLRelease(timer); /* the loop holds it until it fires */
    free(mode);
}

static bool out_of_descriptors(int err) {
    return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

static void listen_perform(void *info) {
    RLCFMessagePortRef p = info;
    if (inherited(p)) {
        leave_inherited(p->listen_source);
        return;
    }
    for (int i = 0; i < ACCEPTS_PER_RUN; i++) {
        pthread_mutex_lock(&p->lock);
        bool valid = p->valid;
        int fd = valid ? owned_accept(p->listen_fd) : -1;
        int error = errno;
        pthread_mutex_unlock(&p->lock);
        if (fd < 0) {
            if (valid && out_of_descriptors(error)) pause_listening(p);
            return;
        }
        if (!peer_is_us(fd)) {
            owned_close(fd);
            continue;
        }
        adopt_client(p, fd);
    }
}

/* ---- invalidation ------------------------------------------------------------------------------- */

typedef struct {
    RLRunLoopSourceRef user, listen;
    conn *conns;
    int listen_fd, lock_fd;
    RLCFMessagePortInvalidationCallBack on_invalid;
    void *callback_info;
    void (*release)(const void *);
    void *release_info;
} teardown;

/* Takes everything invalidation ends out of the port; `lock` held. */
static void take_for_teardown_locked(RLCFMessagePortRef p, teardown *t) {
    p->valid = false;
    t->user = p->user_source;
    p->user_source = NULL;
    t->listen = p->listen_source;
    p->listen_source = NULL;
    t->conns = p->conns;
    for (conn *c = p->conns; c; c = c->next) {
        c->dead = true;
        if (!inherited(p)) shutdown(c->fd, SHUT_RDWR);
        c->ending = c->source;
        c->source = NULL;
    }
    p->conns = NULL;
    t->listen_fd = p->listen_fd;
    t->lock_fd = p->lock_fd;
    p->listen_fd = p->lock_fd = -1;
    t->on_invalid = p->on_invalid;
    t->callback_info = p->remote ? NULL : p->context.info;
    take_info_release_locked(p, &t->release, &t->release_info);
}

static void wake_waiters(RLCFMessagePortRef p) {
    pthread_mutex_lock(&p->lock);
    size_t n = 0;
    for (pending *w = p->pendings; w; w = w->next) n++;
    pending *copy = n ? calloc(n, sizeof *copy) : NULL;
    size_t i = 0;
    for (pending *w = p->pendings; copy && w; w = w->next, i++) {
        copy[i].waker = (RLRunLoopSourceRef)RLRetain(w->waker);
        copy[i].rl = (RLRunLoopRef)RLRetain(w->rl);
    }
    pthread_mutex_unlock(&p->lock);
    for (i = 0; copy && i < n; i++) {
        RLRunLoopSourceSignal(copy[i].waker);
        RLRunLoopWakeUp(copy[i].rl);
        RLRelease(copy[i].waker);
        RLRelease(copy[i].rl);
    }
    free(copy);
}

static void port_invalidate(RLCFMessagePortRef p, bool call_back) {
    port_hold(p); /* releasing the sources below may drop the last reference */
    teardown t = {0};
    pthread_mutex_lock(&p->lock);
    bool was_valid = p->valid;
    if (was_valid) take_for_teardown_locked(p, &t);
    pthread_mutex_unlock(&p->lock);
    if (!was_valid) {
        port_unhold(p);
        return;
    }
    bool child = inherited(p);
    if (t.user) {
        RLRunLoopSourceInvalidate(t.user); /* its cancel callouts take the others out of those modes */
        RLRelease(t.user);
    }
    if (t.listen) {
        RLRunLoopSourceInvalidate(t.listen);
        RLRelease(t.listen);
    }
    for (conn *c = t.conns, *next; c; c = next) {
        next = c->next;
        c->next = NULL;
        RLRunLoopSourceRef src = c->ending;
        c->ending = NULL;
        conn_finish(c, src);
    }
    if (!child) {
        if (t.listen_fd >= 0) {
            struct sockaddr_un addr;
            if (address_of(p->base_path, &addr)) unlink(addr.sun_path); /* the name is free; the lock file stays */
        }
        owned_close(t.listen_fd);
        owned_close(t.lock_fd);
    }
    wake_waiters(p);
    if (call_back && !child && t.on_invalid) t.on_invalid(p, t.callback_info);
    if (t.release) t.release(t.release_info);
    port_unhold(p);
}

/* ---- making ports ---------------------------------------------------------------------------------- */

/* Takes the name for a new local port: its lock, then its socket. */
static bool claim_name(RLCFMessagePortRef p, const char *text) {
    char *dir = ports_directory();
    p->base_path = dir ? file_stem(dir, text) : NULL;
    free(dir);
    if (!p->base_path) return false;
    char *lock_path = rl_strdup_printf("%s.lock", p->base_path);
    p->lock_fd = lock_path ? owned_open(lock_path) : -1;
    free(lock_path);
    if (p->lock_fd < 0 || flock(p->lock_fd, LOCK_EX | LOCK_NB) != 0) return false; /* a live owner has it */
    struct sockaddr_un addr;
    if (!address_of(p->base_path, &addr)) return false;
    unlink(addr.sun_path); /* a dead owner's */
    p->listen_fd = owned_socket();
    if (p->listen_fd < 0) return false;
    if (bind(p->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(p->listen_fd, SOMAXCONN) != 0)
        return false;
    p->listen_source =
        fd_source(p, 0, port_hold_info, port_unhold_info, listen_source_fd, listen_perform, listen_source_describe);
    return p->listen_source != NULL;
}

/* A port that was never handed out: no callback, no context release. */
static void discard(RLCFMessagePortRef p) {
    p->on_invalid = NULL;
    p->info_released = true;
    RLRelease(p);
}

RLCFMessagePortRef RLCFMessagePortCreateLocal(RLCFAllocatorRef allocator, RLCFStringRef name,
                                              RLCFMessagePortCallBack callout, RLCFMessagePortContext *context,
                                              bool *shouldFreeInfo) {
    if (shouldFreeInfo) *shouldFreeInfo = true;
    if (!rl_cf_allocator_accepted(allocator, "CFMessagePortCreateLocal") || allocator == kRLCFAllocatorNull)
        return NULL;
    const char *text = name ? name_text(name) : NULL;
    if (!callout || (name && !text)) return NULL;
    RLCFMessagePortRef p = port_new(false, name);
    if (!p) return NULL;
    if ((name && !p->name) || (text && !claim_name(p, text))) {
        discard(p);
        return NULL;
    }
    p->callout = callout;
    p->info_released = false; /* callbacks may run from now on, with or without a context */
    if (context) {
        p->context = *context;
        if (p->context.retain) p->context.info = (void *)p->context.retain(p->context.info);
    }
    if (shouldFreeInfo) *shouldFreeInfo = false;
    return p;
}

static int write_frame(int fd, uint32_t flags, int32_t msgid, uint64_t request, const void *bytes, size_t len,
                       RLTimeInterval timeout, size_t *sent);

RLCFMessagePortRef RLCFMessagePortCreateRemote(RLCFAllocatorRef allocator, RLCFStringRef name) {
    if (!rl_cf_allocator_accepted(allocator, "CFMessagePortCreateRemote") || allocator == kRLCFAllocatorNull)
        return NULL;
    const char *text = name_text(name);
    if (!text) return NULL;
    char *dir = ports_directory();
    char *base = dir ? file_stem(dir, text) : NULL;
    free(dir);
    struct sockaddr_un addr;
    bool addressed = base && address_of(base, &addr);
    free(base);
    if (!addressed) return NULL;
    RLCFMessagePortRef p = port_new(true, name);
    if (!p) return NULL;
    int fd = p->name ? owned_socket() : -1;
    size_t sent = 0;
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || !peer_is_us(fd) ||
        write_frame(fd, FLAG_HELLO, 0, 0, text, strlen(text), 0, &sent) != 0) {
        owned_close(fd);
        discard(p);
        return NULL;
    }
    conn *c = conn_new(p, fd);
    if (!c) {
        owned_close(fd);
        discard(p);
        return NULL;
    }
    p->conns = c;
    return p;
}

/* ---- questions -------------------------------------------------------------------------------------- */

bool RLCFMessagePortIsRemote(RLCFMessagePortRef ms) {
    return port_usable(ms) && ms->remote;
}

RLCFStringRef RLCFMessagePortGetName(RLCFMessagePortRef ms) {
    return port_usable(ms) ? ms->name : NULL;
}

bool RLCFMessagePortSetName(RLCFMessagePortRef ms, RLCFStringRef newName) {
    (void)ms;
    (void)newName;
    return false;
}

void RLCFMessagePortGetContext(RLCFMessagePortRef ms, RLCFMessagePortContext *context) {
    if (!port_usable(ms) || !context) return;
    pthread_mutex_lock(&ms->lock);
    *context = ms->context;
    pthread_mutex_unlock(&ms->lock);
}

void RLCFMessagePortInvalidate(RLCFMessagePortRef ms) {
    if (port_usable(ms)) port_invalidate(ms, true);
}

/* A remote port whose peer hung up is invalidated now. */
static void notice_hang_up(RLCFMessagePortRef p) {
    pthread_mutex_lock(&p->lock);
    int fd = p->valid && p->remote && p->conns ? p->conns->fd : -1;
    struct pollfd pfd = {fd, POLLRDHUP, 0};
    bool gone = fd >= 0 && poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLRDHUP));
    pthread_mutex_unlock(&p->lock);
    if (gone) port_invalidate(p, true);
}

bool RLCFMessagePortIsValid(RLCFMessagePortRef ms) {
    if (!port_usable(ms) || inherited(ms)) return false;
    notice_hang_up(ms);
    pthread_mutex_lock(&ms->lock);
    bool valid = ms->valid;
    pthread_mutex_unlock(&ms->lock);
    return valid;
}

RLCFMessagePortInvalidationCallBack RLCFMessagePortGetInvalidationCallBack(RLCFMessagePortRef ms) {
    if (!port_usable(ms)) return NULL;
    pthread_mutex_lock(&ms->lock);
    RLCFMessagePortInvalidationCallBack callout = ms->on_invalid;
    pthread_mutex_unlock(&ms->lock);
    return callout;
}

void RLCFMessagePortSetInvalidationCallBack(RLCFMessagePortRef ms, RLCFMessagePortInvalidationCallBack callout) {
    if (!port_usable(ms)) return;
    pthread_mutex_lock(&ms->lock);
    bool valid = ms->valid && !inherited(ms);
    ms->on_invalid = callout;
    bool pinned = !valid && !ms->remote && !ms->info_released && (ms->callouts++, true);
    void *info = ms->remote ? NULL : ms->context.info;
    pthread_mutex_unlock(&ms->lock);
    if (!valid && callout) callout(ms, pinned || ms->remote ? info : NULL);
    if (pinned) end_callout(ms);
}

/* ---- the run-loop source ---------------------------------------------------------------------------- */

static const void *user_source_retain(const void *info) {
    return RLRetain(info);
}
static void user_source_release(const void *info) {
    RLRelease(info);
}
static char *user_source_describe(const void *info) {
    return RLCopyDescription(info);
}

RLRunLoopSourceRef RLCFMessagePortCreateRunLoopSource(RLCFAllocatorRef allocator, RLCFMessagePortRef local,
                                                      RLIndex order) {
    if (!rl_cf_allocator_accepted(allocator, "CFMessagePortCreateRunLoopSource") || allocator == kRLCFAllocatorNull)
        return NULL;
    if (!port_usable(local) || local->remote || inherited(local)) return NULL;
    pthread_mutex_lock(&local->lock);
    RLRunLoopSourceRef existing = local->valid ? (RLRunLoopSourceRef)RLRetain(local->user_source) : NULL;
    bool valid = local->valid;
    pthread_mutex_unlock(&local->lock);
    if (existing || !valid) return existing;

    RLRunLoopSourceContext ctx = {
        .version = 0,
        .info = local,
        .retain = user_source_retain,
        .release = user_source_release,
        .copyDescription = user_source_describe,
        .schedule = user_source_schedule,
        .cancel = user_source_cancel,
    };
    RLRunLoopSourceRef made = RLRunLoopSourceCreate(order, &ctx);
    if (!made) return NULL;
    pthread_mutex_lock(&local->lock);
    RLRunLoopSourceRef kept = local->valid ? local->user_source : NULL;
    if (local->valid && !kept) {
        kept = local->user_source = made; /* the port's own reference */
        made = NULL;
        local->order = order;
    }
    RLRetain(kept);
    pthread_mutex_unlock(&local->lock);
    if (made) {
        RLRunLoopSourceInvalidate(made);
        RLRelease(made);
    }
    return kept;
}

/* ---- sending ------------------------------------------------------------------------------------------- */

static int64_t deadline_after(RLTimeInterval seconds) {
    if (!(seconds > 0)) return rl_mono_now();
    if (seconds > RL_INTERVAL_LIMIT) return RL_NEVER;
    return rl_mono_now() + rl_seconds_to_ns(seconds);
}

/* Waits for room until the deadline; false when it passed. */
static bool wait_writable(int fd, int64_t deadline) {
    for (;;) {
        int64_t left = deadline == RL_NEVER ? 3600000000000LL : deadline - rl_mono_now();
        if (left <= 0) return false;
        struct pollfd pfd = {fd, POLLOUT, 0};
        int ms = (int)((left + 999999) / 1000000);
        int n = poll(&pfd, 1, ms > 3600000 ? 3600000 : ms);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return true; /* let the send report it */
    }
}

/* Writes a whole frame: 0, ETIMEDOUT (*sent tells whether some of it went),
   or the errno of the failure. */
static int write_frame(int fd, uint32_t flags, int32_t msgid, uint64_t request, const void *bytes, size_t len,
                       RLTimeInterval timeout, size_t *sent) {
    frame_header h = {FRAME_MAGIC, (uint32_t)len, msgid, flags, request};
    size_t total = sizeof h + len;
    int64_t deadline = deadline_after(timeout);
    *sent = 0;
    while (*sent < total) {
        struct iovec iov[2];
        int n_iov = 0;
        if (*sent < sizeof h) iov[n_iov++] = (struct iovec){(uint8_t *)&h + *sent, sizeof h - *sent};
        size_t body_done = *sent > sizeof h ? *sent - sizeof h : 0;
        if (len > body_done) iov[n_iov++] = (struct iovec){(uint8_t *)(uintptr_t)bytes + body_done, len - body_done};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n_iov};
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            *sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_writable(fd, deadline)) return ETIMEDOUT;
            continue;
        }
        return n < 0 ? errno : EPIPE;
    }
    return 0;
}

static void noop_perform(void *info) {
    (void)info;
}

/* A waiter for the reply to `request`, listed on the port; NULL out of memory. */
static pending *add_waiter(RLCFMessagePortRef p, RLRunLoopRef rl, uint64_t *request) {
    pending *w = calloc(1, sizeof *w);
    RLRunLoopSourceContext ctx = {.version = 0, .perform = noop_perform};
    if (w) w->waker = RLRunLoopSourceCreate(0, &ctx);
    if (!w || !w->waker) {
        free(w);
        return NULL;
    }
    w->rl = (RLRunLoopRef)RLRetain(rl);
    pthread_mutex_lock(&p->lock);
    w->request = *request = ++p->next_request;
    w->next = p->pendings;
    p->pendings = w;
    pthread_mutex_unlock(&p->lock);
    return w;
}

/* Off the list: the reply, if one came (the caller's). */
static RLCFDataRef remove_waiter(RLCFMessagePortRef p, pending *w) {
    pthread_mutex_lock(&p->lock);
    for (pending **at = &p->pendings; *at; at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            break;
        }
    RLCFDataRef reply = w->reply;
    pthread_mutex_unlock(&p->lock);
    RLRunLoopSourceInvalidate(w->waker);
    RLRelease(w->waker);
    RLRelease(w->rl);
    free(w);
    return reply;
}

/* Sends one frame; the SendRequest code for how it went. */
static int32_t send_message(RLCFMessagePortRef p, uint32_t flags, int32_t msgid, uint64_t request, RLCFDataRef data,
                            RLTimeInterval timeout) {
    pthread_mutex_lock(&p->lock);
    int fd = p->valid && p->conns ? p->conns->fd : -1;
    pthread_mutex_unlock(&p->lock);
    if (fd < 0) return kRLCFMessagePortIsInvalid;
    size_t sent = 0;
    pthread_mutex_lock(&p->write_lock);
    int error = write_frame(fd, flags, msgid, request, RLCFDataGetBytePtr(data), (size_t)RLCFDataGetLength(data),
                            timeout, &sent);
    pthread_mutex_unlock(&p->write_lock);
    if (error == 0) return kRLCFMessagePortSuccess;
    if (error == ETIMEDOUT && sent == 0) return kRLCFMessagePortSendTimeout;
    port_invalidate(p, true); /* the peer is gone, or half a frame is on the wire */
    if (error == ETIMEDOUT) return kRLCFMessagePortSendTimeout;
    return error == ENOMEM || error == ENOBUFS ? kRLCFMessagePortTransportError : kRLCFMessagePortIsInvalid;
}

/* Runs the calling thread's loop in `mode` until the reply, the deadline
   or the port's end. */
static int32_t wait_for_reply(RLCFMessagePortRef p, pending *w, const char *mode, int64_t deadline) {
    for (;;) {
        pthread_mutex_lock(&p->lock);
        bool done = w->done, valid = p->valid;
        pthread_mutex_unlock(&p->lock);
        if (done) return kRLCFMessagePortSuccess;
        if (!valid) return kRLCFMessagePortBecameInvalidError;
        int64_t left = deadline == RL_NEVER ? RL_NEVER : deadline - rl_mono_now();
        if (left <= 0) return kRLCFMessagePortReceiveTimeout;
        RLTimeInterval seconds = left == RL_NEVER ? 1e10 : (double)left / 1e9;
        if (RLRunLoopRunInMode(mode, seconds, true) == kRLRunLoopRunFinished) return kRLCFMessagePortTransportError;
    }
}

int32_t RLCFMessagePortSendRequest(RLCFMessagePortRef remote, int32_t msgid, RLCFDataRef data,
                                   RLTimeInterval sendTimeout, RLTimeInterval rcvTimeout, RLCFStringRef replyMode,
                                   RLCFDataRef *returnData) {
    if (returnData) *returnData = NULL;
    if (!port_usable(remote) || !remote->remote || inherited(remote)) return kRLCFMessagePortIsInvalid;
    if (RLCFDataGetLength(data) > RLCF_MESSAGE_PORT_MAX_SIZE) return kRLCFMessagePortTransportError;
    notice_hang_up(remote);
    if (!replyMode) return send_message(remote, 0, msgid, 0, data, sendTimeout);

    const char *mode = RLCFStringGetCStringPtr(replyMode, kRLCFStringEncodingUTF8);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    uint64_t request = 0;
    pending *w = mode && mode[0] && rl ? add_waiter(remote, rl, &request) : NULL;
    if (!w) return kRLCFMessagePortTransportError;
    int32_t result = send_message(remote, FLAG_WANTS_REPLY, msgid, request, data, sendTimeout);
    int64_t deadline = deadline_after(rcvTimeout);
    if (result == kRLCFMessagePortSuccess) {
        pthread_mutex_lock(&remote->lock);
        RLRunLoopSourceRef src = remote->conns ? (RLRunLoopSourceRef)RLRetain(remote->conns->source) : NULL;
        pthread_mutex_unlock(&remote->lock);
        bool added = src && !RLRunLoopContainsSource(rl, src, mode); /* a nested wait in this mode has it already */
        if (added) RLRunLoopAddSource(rl, src, mode);
        RLRunLoopAddSource(rl, w->waker, mode);
        result = wait_for_reply(remote, w, mode, deadline);
        RLRunLoopRemoveSource(rl, w->waker, mode);
        if (added) RLRunLoopRemoveSource(rl, src, mode);
        RLRelease(src);
    }
    RLCFDataRef reply = remove_waiter(remote, w);
    if (result == kRLCFMessagePortSuccess && returnData) *returnData = reply;
    else RLCFRelease(reply);
    return result;
}
