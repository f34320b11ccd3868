/*
 * CRunLoopCFMessagePort.h: CFMessagePort under RLCF names (CRunLoopCFNames.h
 * gives them CF's names): a named port that other threads and processes of
 * the same user send messages to, with or without a reply.
 *
 * Not the thread message port RLMessagePort (CRunLoopLinux.h): that one is
 * an in-process queue; this one is CF's IPC port.
 *
 * How it works here. A local port with a name listens on a UNIX stream
 * socket in the user's own directory: $XDG_RUNTIME_DIR/rlcf-message-ports
 * when XDG_RUNTIME_DIR names a directory of this user with mode 0700, else
 * /tmp/rlcf-message-ports-<uid>, made with mode 0700 (a directory there that
 * is not this user's or is open to others makes every named port fail: no
 * other user can squat or reach a name). Both ends check the other's uid
 * (SO_PEERCRED) and drop a peer of another user. A lock file held for the
 * port's life tells a live owner from a dead one, so a name is free again
 * the moment its owner exits, even by a crash. A remote port is one
 * connection to it. Messages are length-prefixed frames (id, request id,
 * flags); a connection that sends anything else, or a frame larger than
 * RLCF_MESSAGE_PORT_MAX_SIZE, is dropped, and the port goes on serving the
 * others. The local port's run-loop source watches the listening socket and
 * each connection (a version-1 source each, added wherever the port's source
 * is); there are no helper threads. Writes never raise SIGPIPE. Out of
 * descriptors, a connection waits in the listener's backlog: the listener
 * stops being watched and looks again 0.1 s later, in the mode the loop
 * runs then, so the loop never spins on it.
 *
 * Where this differs from CF:
 *   - Names are per user, not per login session or bootstrap namespace.
 *   - Creating a local port with a name a live port already has (in this
 *     process or another) returns NULL (CF returns the existing port when it
 *     is in the same process).
 *   - A remote port notices that its local port went away (its owner
 *     invalidated it, or died) when its connection says so: at the next
 *     send (which then returns kRLCFMessagePortIsInvalid), at
 *     RLCFMessagePortIsValid, or while a thread waits for a reply on it
 *     (kRLCFMessagePortBecameInvalidError). Its invalidation callback runs
 *     then, on that thread; nothing watches an idle remote port.
 *   - Messages travel through a socket, not the kernel's message queue: a
 *     message larger than the socket's buffer, sent to a port served only by
 *     the sending thread's own loop, cannot be written while that thread
 *     waits to write it (kRLCFMessagePortSendTimeout).
 *   - RLCFMessagePortSendRequest on a local port returns
 *     kRLCFMessagePortIsInvalid. No dispatch-queue variant, no SetName after
 *     creation (RLCFMessagePortSetName returns false), no per-PID ports.
 *   - fork(): the child's copies of the parent's ports are invalid (IsValid
 *     false, sends return kRLCFMessagePortIsInvalid, no callback runs for
 *     them in the child; the invalidation callback does not run either, the
 *     ports were not invalidated in the parent). Their descriptors are closed
 *     in the child at the fork, so the parent's names, listeners and
 *     connections stay the parent's alone. RLCFMessagePortInvalidate and the
 *     last release free the child's copy.
 */
#ifndef CRUNLOOP_CF_MESSAGE_PORT_H
#define CRUNLOOP_CF_MESSAGE_PORT_H

#include <stdint.h>
#include "CRunLoopCFTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct __RLCFMessagePort *RLCFMessagePortRef;

/* What RLCFMessagePortSendRequest returns (CF's numbers). */
enum {
    kRLCFMessagePortSuccess            = 0,
    kRLCFMessagePortSendTimeout        = -1, /* not sent within sendTimeout */
    kRLCFMessagePortReceiveTimeout     = -2, /* no reply within rcvTimeout */
    kRLCFMessagePortIsInvalid          = -3, /* the port is (or turned out to be) invalid, or is local */
    kRLCFMessagePortTransportError     = -4, /* could not send (too large, out of memory) */
    kRLCFMessagePortBecameInvalidError = -5  /* invalidated while waiting for the reply */
};

/* The largest message, in bytes, either way. */
#define RLCF_MESSAGE_PORT_MAX_SIZE (64L << 20)
/* The longest name, in bytes of UTF-8. */
#define RLCF_MESSAGE_PORT_MAX_NAME 255

typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
} RLCFMessagePortContext;

/* Called on the loop that services the local port, once per message. `data`
   lives until the callback returns (copy it to keep it). The data returned
   is sent back as the reply (NULL: an empty one) and released by the port. */
typedef RLCFDataRef (*RLCFMessagePortCallBack)(RLCFMessagePortRef local, int32_t msgid, RLCFDataRef data, void *info);
/* Called once when the port is invalidated; info is the context's for a
   local port, NULL for a remote one. */
typedef void (*RLCFMessagePortInvalidationCallBack)(RLCFMessagePortRef ms, void *info);

/* The type id of message ports, as RLCFGetTypeID returns it for them. */
RLCFTypeID RLCFMessagePortGetTypeID(void);

/* A local port receiving with `callout`, published under `name` (NULL: an
   unnamed port nobody can reach). The context is copied and retain(info)
   called. NULL (and *shouldFreeInfo true: the context's info was not taken)
   when the name is taken by a live port of this user, is longer than
   RLCF_MESSAGE_PORT_MAX_NAME bytes or empty, callout is NULL, the user's
   directory is unsafe (see above), or out of memory or descriptors.
   shouldFreeInfo may be NULL. */
RLCFMessagePortRef RLCFMessagePortCreateLocal(RLCFAllocatorRef allocator, RLCFStringRef name,
                                              RLCFMessagePortCallBack callout, RLCFMessagePortContext *context,
                                              bool *shouldFreeInfo);
/* A port sending to the local port called `name` (of this process or
   another of this user). NULL when there is none, it belongs to another
   user, or out of resources. Connecting does not wait for the local port's
   loop to run. */
RLCFMessagePortRef RLCFMessagePortCreateRemote(RLCFAllocatorRef allocator, RLCFStringRef name);

/* Whether the port was made by RLCFMessagePortCreateRemote; false for NULL. */
bool RLCFMessagePortIsRemote(RLCFMessagePortRef ms);
/* The name (not retained; valid while the port lives); NULL when unnamed. */
RLCFStringRef RLCFMessagePortGetName(RLCFMessagePortRef ms);
/* Renaming is not supported: false. */
bool RLCFMessagePortSetName(RLCFMessagePortRef ms, RLCFStringRef newName);
/* The context given at creation (a remote port's is all zeros). */
void RLCFMessagePortGetContext(RLCFMessagePortRef ms, RLCFMessagePortContext *context);
/* Stops the port: a local one stops listening and frees its name, drops its
   connections (their remote ports become invalid) and invalidates its
   source; a remote one closes its connection (waiters get
   kRLCFMessagePortBecameInvalidError). Then the invalidation callback runs,
   then the context's release. Idempotent; safe from any callback. The last
   release of a valid port invalidates it. */
void                                RLCFMessagePortInvalidate(RLCFMessagePortRef ms);
bool                                RLCFMessagePortIsValid(RLCFMessagePortRef ms); /* false for NULL */
RLCFMessagePortInvalidationCallBack RLCFMessagePortGetInvalidationCallBack(RLCFMessagePortRef ms);
/* Runs callout at once when the port is already invalid (as CF). NULL
   removes it. */
void RLCFMessagePortSetInvalidationCallBack(RLCFMessagePortRef ms, RLCFMessagePortInvalidationCallBack callout);

/* Sends `data` (NULL: empty) with msgid to a remote port's local port.
   replyMode NULL: one way, returns once the message is written. Otherwise
   waits for the reply by running the calling thread's loop in replyMode
   (other sources of that mode keep running) for up to rcvTimeout seconds,
   and stores it in *returnData (the caller releases it; NULL returnData:
   the reply is dropped). sendTimeout bounds the wait for room in the
   connection. See the codes above; a send that finds the local port gone
   invalidates the remote port (its callback runs) and returns
   kRLCFMessagePortIsInvalid. A send that times out halfway through a
   message leaves the connection unusable: the port is invalidated too. */
int32_t RLCFMessagePortSendRequest(RLCFMessagePortRef remote, int32_t msgid, RLCFDataRef data,
                                   RLTimeInterval sendTimeout, RLTimeInterval rcvTimeout, RLCFStringRef replyMode,
                                   RLCFDataRef *returnData);

/* A local port's run-loop source (one per port; each call returns a new
   reference). Add it to loops and modes as any source: the port accepts
   connections and calls back there. NULL for remote, invalid or NULL ports. */
RLRunLoopSourceRef RLCFMessagePortCreateRunLoopSource(RLCFAllocatorRef allocator, RLCFMessagePortRef local,
                                                      RLIndex order);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_CF_MESSAGE_PORT_H */
