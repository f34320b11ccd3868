/*
 * cfsocket_echo_client.c: a TCP echo client written for macOS's
 * CoreFoundation that builds here unchanged but for its include
 * (CRunLoopCFNames.h).
 *
 * It connects in the background (CFSocketConnectToAddress with a negative
 * timeout); the connect callback sends each line, the data callback prints
 * what comes back, and when every byte has come back the client stops.
 *
 *   cfsocket_echo_client port [line ...]
 *
 * On macOS: cc cfsocket_echo_client.c -framework CoreFoundation
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
    int argc;
    char **argv;
    CFIndex expected;
    CFIndex received;
    int failed;
} Client;

static void send_lines(CFSocketRef s, Client *client) {
    for (int i = 0; i < client->argc; i++) {
        CFDataRef line =
            CFDataCreate(kCFAllocatorDefault, (const UInt8 *)client->argv[i], (CFIndex)strlen(client->argv[i]));
        if (CFSocketSendData(s, NULL, line, 5.0) == kCFSocketSuccess) client->expected += CFDataGetLength(line);
        CFRelease(line);
    }
}

static void callback(CFSocketRef s, CFSocketCallBackType type, CFDataRef address, const void *data, void *info) {
    Client *client = (Client *)info;
    (void)address;
    if (type == kCFSocketConnectCallBack) {
        if (data != NULL) { /* a pointer to the error */
            fprintf(stderr, "client: connect failed: %s\n", strerror((int)*(const SInt32 *)data));
            client->failed = 1;
            CFRunLoopStop(CFRunLoopGetCurrent());
            return;
        }
        send_lines(s, client);
        if (client->expected == 0) CFRunLoopStop(CFRunLoopGetCurrent());
    } else if (type == kCFSocketDataCallBack) {
        CFDataRef chunk = (CFDataRef)data;
        if (CFDataGetLength(chunk) == 0) { /* the server went away */
            CFRunLoopStop(CFRunLoopGetCurrent());
            return;
        }
        printf("echo: %.*s\n", (int)CFDataGetLength(chunk), (const char *)CFDataGetBytePtr(chunk));
        client->received += CFDataGetLength(chunk);
        if (client->received >= client->expected) CFRunLoopStop(CFRunLoopGetCurrent());
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s port [line ...]\n", argv[0]);
        return 2;
    }
    static char *default_lines[] = {"hello", "from a CFSocket client"};
    Client client = {argc > 2 ? argc - 2 : 2, argc > 2 ? argv + 2 : default_lines, 0, 0, 0};
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)atoi(argv[1]));
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CFDataRef address = CFDataCreate(kCFAllocatorDefault, (const UInt8 *)&sin, sizeof sin);

    CFSocketContext context = {0, &client, NULL, NULL, NULL};
    CFSocketRef s = CFSocketCreate(kCFAllocatorDefault, PF_INET, SOCK_STREAM, IPPROTO_TCP,
                                   kCFSocketConnectCallBack | kCFSocketDataCallBack, callback, &context);
    CFRunLoopSourceRef source = CFSocketCreateRunLoopSource(kCFAllocatorDefault, s, 0);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode);
    if (CFSocketConnectToAddress(s, address, -1) != kCFSocketSuccess) client.failed = 1;
    else CFRunLoopRunInMode(kCFRunLoopDefaultMode, 10.0, false);
    CFRelease(address);
    CFSocketInvalidate(s);
    CFRelease(s);
    CFRelease(source);
    return client.failed || client.received < client.expected;
}
