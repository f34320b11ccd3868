/*
 * CRunLoopSocket.h: RLSocket, CoreFoundation's CFSocket for this library: a
 * BSD socket (TCP, UDP, UNIX domain; IPv4 and IPv6) whose readiness is
 * reported through a version-1 run-loop source. CRunLoopCFNames.h maps CF's
 * CFSocket names onto these, so a macOS program that talks over CFSocket
 * builds here with its CoreFoundation include changed.
 *
 * Addresses are data objects (RLCFDataRef, CRunLoopCFTypes.h) holding a
 * struct sockaddr of the socket's family (sockaddr_in, sockaddr_in6,
 * sockaddr_un), as in CF.
 *
 * Callback types. A socket is made with at most one of the three reading
 * types, which are values, not bits (read 1, accept 2, data 3), plus any of
 * the connect (4) and write (8) bits:
 *   - read:    called when the socket is readable (data, a connection to
 *              accept, end of stream); the callback does the reading.
 *              address and data are NULL.
 *   - accept:  one connection is accepted per callout; data points to its
 *              RLSocketNativeHandle (the callback owns that descriptor),
 *              address is the peer's address.
 *   - data:    the library reads for you, up to RL_SOCKET_READ_BUFFER bytes
 *              per callout, and passes them as an RLCFDataRef in data; address
 *              is the peer's address (a datagram socket: the sender's, with
 *              each datagram). On a connection-oriented socket the end of the
 *              stream (the peer closed, reset or vanished) comes as one final
 *              callout with empty data.
 *   - connect: after RLSocketConnectToAddress with a negative timeout, once,
 *              when the connection is made (data NULL) or failed (data points
 *              to an int32_t errno value).
 *   - write:   the socket has room to write.
 * address and data are valid during the callout only: retain or copy them to
 * keep them.
 *
 * Enabling. The types given at creation are enabled. Read, accept and data
 * are re-enabled automatically after each callout, write is not, connect
 * happens once (RLSocketSetSocketFlags changes the first two). A type that is
 * not re-enabled stays disabled until RLSocketEnableCallBacks; types the
 * socket was not made with are ignored by Enable and Disable. A connection-
 * oriented socket gets one final read or data callout at the end of its
 * stream and none after it (not even when enabled again).
 *
 * Threads. Every function may be called from any thread, including from the
 * callback. Schedule a socket's source in one loop: in two loops, a reading
 * callout may run on both threads at once, each with its own part of the
 * stream.
 *
 * Where this differs from CF:
 *   - No socket-manager thread: the source watches the descriptor in its
 *     loop's own wait set (RLRunLoopSourceSetWatchedEvents) and each callout
 *     reads, accepts or connects on the loop's thread when the loop wakes.
 *   - RLSocketCreateWithNative always makes a new object; CF hands back the
 *     CFSocket it already has for that descriptor. Make one socket object per
 *     descriptor (two with kRLSocketCloseOnInvalidate close it twice).
 *   - An accepting socket's descriptor is made non-blocking, so that a
 *     connection taken by another accepter never blocks the loop.
 *   - Out of descriptors (EMFILE, ENFILE) or kernel memory while accepting,
 *     the connection waits in the backlog and the socket stops watching for
 *     RL_SOCKET_ACCEPT_RETRY seconds (a timer in the mode the loop ran in)
 *     instead of waking the loop again at once; it then tries again.
 *   - The connect callback is reported only after a background connect
 *     (negative timeout); CF may also report one on a socket that never
 *     connected.
 *   - No SIGPIPE: the library's own sends use MSG_NOSIGNAL. Linux has no
 *     SO_NOSIGPIPE: a program's own write() or send() on the native handle
 *     raises SIGPIPE on a broken connection unless it passes MSG_NOSIGNAL or
 *     ignores the signal (as on macOS without SO_NOSIGPIPE).
 *   - fork(): the native handle is inherited as any descriptor is (not
 *     close-on-exec, as in CF). The child's copy of the socket object is
 *     only memory: do not use it or its source there; a child that wants the
 *     connection makes a new socket object with RLSocketCreateWithNative on
 *     the inherited handle. With kRLSocketCloseOnInvalidate the parent's
 *     invalidation closes the parent's descriptor only; the connection stays
 *     open while the child's copy is.
 *   - The name registry (CFSocketRegisterValue ...) is not provided.
 */
#ifndef CRUNLOOP_SOCKET_H
#define CRUNLOOP_SOCKET_H

#include <stdint.h>
#include "CRunLoopCFTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct __RLSocket *RLSocketRef;
typedef int                RLSocketNativeHandle;

typedef RLIndex RLSocketError;
enum { kRLSocketSuccess = 0, kRLSocketError = -1, kRLSocketTimeout = -2 };

typedef RLOptionFlags RLSocketCallBackType;
enum {
    kRLSocketNoCallBack      = 0,
    kRLSocketReadCallBack    = 1,
    kRLSocketAcceptCallBack  = 2,
    kRLSocketDataCallBack    = 3,
    kRLSocketConnectCallBack = 4,
    kRLSocketWriteCallBack   = 8
};

/* Socket flags. The default is kRLSocketAutomaticallyReenableReadCallBack,
   ...AcceptCallBack, ...DataCallBack (the reading type the socket has) and
   kRLSocketCloseOnInvalidate. */
enum {
    kRLSocketAutomaticallyReenableReadCallBack   = 1,
    kRLSocketAutomaticallyReenableAcceptCallBack = 2,
    kRLSocketAutomaticallyReenableDataCallBack   = 3,
    kRLSocketAutomaticallyReenableWriteCallBack  = 8,
    kRLSocketLeaveErrors                         = 64, /* else a write callout clears SO_ERROR first */
    kRLSocketCloseOnInvalidate                   = 128
};

/* Bytes a data callout reads at most; seconds an accepting socket waits
   when out of descriptors. */
#define RL_SOCKET_READ_BUFFER  65536
#define RL_SOCKET_ACCEPT_RETRY 0.1

typedef struct {
    int32_t     protocolFamily; /* <= 0: PF_INET */
    int32_t     socketType;     /* <= 0: SOCK_STREAM */
    int32_t     protocol;       /* <= 0: the family's default */
    RLCFDataRef address;
} RLSocketSignature;

typedef void (*RLSocketCallBack)(RLSocketRef s, RLSocketCallBackType type, RLCFDataRef address, const void *data,
                                 void *info);
/* As CF types it: copyDescription returns a string, which the library
   releases. retain(info) is called at creation, release(info) once, at
   invalidation (after a callout in progress returns) or with the last
   reference of a socket never invalidated. */
typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
} RLSocketContext;

/* A new socket (socket(2) with the signature's defaults above) wrapped as
   RLSocketCreateWithNative does; NULL when the system refuses it. */
RLSocketRef RLSocketCreate(RLCFAllocatorRef allocator, int32_t protocolFamily, int32_t socketType, int32_t protocol,
                           RLOptionFlags callBackTypes, RLSocketCallBack callout, const RLSocketContext *context);
/* Wraps the open socket `sock` with the given callback types enabled
   (callout NULL: no callouts). NULL (sock left alone) when sock is not an
   open socket, or out of memory. */
RLSocketRef RLSocketCreateWithNative(RLCFAllocatorRef allocator, RLSocketNativeHandle sock, RLOptionFlags callBackTypes,
                                     RLSocketCallBack callout, const RLSocketContext *context);
/* A socket of the signature bound to its address (RLSocketSetAddress: a
   connection-oriented one also listens). NULL if anything fails. */
RLSocketRef RLSocketCreateWithSocketSignature(RLCFAllocatorRef allocator, const RLSocketSignature *signature,
                                              RLOptionFlags callBackTypes, RLSocketCallBack callout,
                                              const RLSocketContext *context);
/* A socket of the signature connected to its address
   (RLSocketConnectToAddress with timeout). NULL if anything fails. */
RLSocketRef RLSocketCreateConnectedToSocketSignature(RLCFAllocatorRef allocator, const RLSocketSignature *signature,
                                                     RLOptionFlags callBackTypes, RLSocketCallBack callout,
                                                     const RLSocketContext *context, RLTimeInterval timeout);

/* bind(2)s the socket to address; a stream or seqpacket socket then
   listens (backlog 256). kRLSocketError for a bad address (NULL, too short or
   too long for a sockaddr), an invalid socket, or when bind or listen
   fails (errno tells). */
RLSocketError RLSocketSetAddress(RLSocketRef s, RLCFDataRef address);
/* connect(2)s. timeout < 0: in the background, returning kRLSocketSuccess at
   once; the connect callback (if the socket has it) reports the outcome.
   timeout == 0: waits as long as it takes; > 0: at most timeout seconds, then
   kRLSocketTimeout (the attempt goes on in the background, unreported).
   kRLSocketError when it failed (errno tells) or for bad input. The
   descriptor's blocking mode is what it was before. */
RLSocketError RLSocketConnectToAddress(RLSocketRef s, RLCFDataRef address, RLTimeInterval timeout);
/* Sends data (to address when not NULL, for unconnected datagram sockets),
   all of it: kRLSocketSuccess once sent, kRLSocketTimeout when timeout > 0
   seconds passed first (part may have been sent), kRLSocketError on an error
   (EPIPE, ECONNRESET...: never SIGPIPE) or bad input. timeout <= 0 waits as
   long as the kernel's buffers stay full. Empty data sends an empty datagram. */
RLSocketError RLSocketSendData(RLSocketRef s, RLCFDataRef address, RLCFDataRef data, RLTimeInterval timeout);
/* The local and the peer's address (getsockname, getpeername) as new data;
   NULL when there is none or for an invalid socket. The peer's address is
   remembered once known, so it is still there after the peer vanished. */
RLCFDataRef RLSocketCopyAddress(RLSocketRef s);
RLCFDataRef RLSocketCopyPeerAddress(RLSocketRef s);

/* The version-1 source (one per socket, made on the first call; every call
   returns a new reference). NULL for NULL or invalid s. */
RLRunLoopSourceRef RLSocketCreateRunLoopSource(RLCFAllocatorRef allocator, RLSocketRef s, RLIndex order);
void               RLSocketEnableCallBacks(RLSocketRef s, RLOptionFlags callBackTypes);
void               RLSocketDisableCallBacks(RLSocketRef s, RLOptionFlags callBackTypes);
RLOptionFlags      RLSocketGetSocketFlags(RLSocketRef s); /* 0 for NULL */
void               RLSocketSetSocketFlags(RLSocketRef s, RLOptionFlags flags);
/* Stops the socket for good: its source is invalidated, no callout starts
   after this returns, release(info) is called and, with
   kRLSocketCloseOnInvalidate, the descriptor is closed. Idempotent; safe from
   the callback. As with CF, invalidate a socket that has a source, or both
   leak. */
void                 RLSocketInvalidate(RLSocketRef s);
bool                 RLSocketIsValid(RLSocketRef s);
RLSocketNativeHandle RLSocketGetNative(RLSocketRef s); /* -1 for NULL; still the number after invalidation */
void                 RLSocketGetContext(RLSocketRef s, RLSocketContext *context);
RLCFTypeID           RLCFSocketGetTypeID(void);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_SOCKET_H */
