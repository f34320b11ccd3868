/*
 * cfsocket_echo_server.c: a TCP echo server written for macOS's
 * CoreFoundation (CFSocket on the run loop) that builds here unchanged but
 * for its include (CRunLoopCFNames.h).
 *
 * A listening CFSocket accepts each connection in its accept callback and
 * wraps it in a CFSocket with a data callback, which sends every chunk back
 * and closes the connection at its end (empty data). With a count argument
 * the server stops after that many connections ended.
 *
 *   cfsocket_echo_server [port [connections]]     (port 0: any; it prints it)
 *
 * On macOS: cc cfsocket_echo_server.c -framework CoreFoundation
 */
#ifdef __APPLE__
#include <CoreFoundation/CoreFoundation.h>
#else
#include <CRunLoopCFNames.h>
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct {
    int ended;
    int stop_after;
} Server;

static void connection_data(CFSocketRef s, CFSocketCallBackType type, CFDataRef address, const void *data, void *info) {
    Server *server = (Server *)info;
    (void)address;
    if (type != kCFSocketDataCallBack) return;
    CFDataRef chunk = (CFDataRef)data;
    if (CFDataGetLength(chunk) == 0) { /* the client closed its end */
        CFSocketInvalidate(s);
        CFRelease(s);
        if (++server->ended == server->stop_after) CFRunLoopStop(CFRunLoopGetCurrent());
        return;
    }
    if (CFSocketSendData(s, NULL, chunk, 5.0) != kCFSocketSuccess) fprintf(stderr, "server: send failed\n");
}

static void accepted(CFSocketRef listener, CFSocketCallBackType type, CFDataRef address, const void *data, void *info) {
    (void)listener;
    (void)address;
    if (type != kCFSocketAcceptCallBack) return;
    CFSocketNativeHandle handle = *(const CFSocketNativeHandle *)data;
    CFSocketContext context = {0, info, NULL, NULL, NULL};
    CFSocketRef connection =
        CFSocketCreateWithNative(kCFAllocatorDefault, handle, kCFSocketDataCallBack, connection_data, &context);
    if (connection == NULL) return;
    CFRunLoopSourceRef source = CFSocketCreateRunLoopSource(kCFAllocatorDefault, connection, 0);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode);
    CFRelease(source); /* the loop holds it until the connection is invalidated */
}

int main(int argc, char **argv) {
    Server server = {0, argc > 2 ? atoi(argv[2]) : -1};
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)(argc > 1 ? atoi(argv[1]) : 0));
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CFDataRef address = CFDataCreate(kCFAllocatorDefault, (const UInt8 *)&sin, sizeof sin);
    CFSocketSignature signature = {PF_INET, SOCK_STREAM, IPPROTO_TCP, address};
    CFSocketContext context = {0, &server, NULL, NULL, NULL};
    CFSocketRef listener =
        CFSocketCreateWithSocketSignature(kCFAllocatorDefault, &signature, kCFSocketAcceptCallBack, accepted, &context);
    CFRelease(address);
    if (listener == NULL) {
        perror("server: cannot listen");
        return 1;
    }
    CFDataRef bound = CFSocketCopyAddress(listener);
    const struct sockaddr_in *where = (const struct sockaddr_in *)(const void *)CFDataGetBytePtr(bound);
    printf("%d\n", ntohs(where->sin_port)); /* the port, first line: a client script reads it */
    fflush(stdout);
    CFRelease(bound);

    CFRunLoopSourceRef source = CFSocketCreateRunLoopSource(kCFAllocatorDefault, listener, 0);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode);
    CFRunLoopRun();
    fprintf(stderr, "server: %d connection(s) served\n", server.ended);
    CFSocketInvalidate(listener);
    CFRelease(listener);
    CFRelease(source);
    return 0;
}
