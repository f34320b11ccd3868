/*
 * test_cf_socket.c: CFSocket through CoreFoundation's names only
 * (CRunLoopCFNames.h), written the macOS way: CF's positional context
 * initializer, CF's numeric constants, CFSocketSignature, a CFSTR-described
 * context, so a name mapped onto the wrong function or a constant with
 * another value fails here. test_socket.c covers the behaviour.
 */
#include <CRunLoopCFNames.h>
#include "rltest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

typedef struct {
    int accepts;
    int datas;
    int connects;
    CFSocketNativeHandle accepted;
    char text[64];
} Log;

static void callback(CFSocketRef s, CFSocketCallBackType type, CFDataRef address, const void *data, void *info) {
    Log *log = (Log *)info;
    (void)s;
    (void)address;
    switch (type) {
    case kCFSocketAcceptCallBack:
        log->accepts++;
        log->accepted = *(const CFSocketNativeHandle *)data;
        break;
    case kCFSocketDataCallBack: {
        CFDataRef d = (CFDataRef)data;
        CFIndex n = CFDataGetLength(d);
        if (n > 0 && n < (CFIndex)sizeof log->text) {
            memcpy(log->text, CFDataGetBytePtr(d), (size_t)n);
            log->text[n] = '\0';
        }
        log->datas++;
        break;
    }
    case kCFSocketConnectCallBack: log->connects++; break;
    default: break;
    }
    CFRunLoopStop(CFRunLoopGetCurrent());
}

static CFStringRef describe(const void *info) {
    (void)info;
    return CFSTR("cf-socket");
}

static void constants_have_cf_values(void) {
    RL_ASSERT_EQ_INT(kCFSocketSuccess, 0);
    RL_ASSERT_EQ_INT(kCFSocketError, -1);
    RL_ASSERT_EQ_INT(kCFSocketTimeout, -2);
    RL_ASSERT_EQ_INT(kCFSocketNoCallBack, 0);
    RL_ASSERT_EQ_INT(kCFSocketReadCallBack, 1);
    RL_ASSERT_EQ_INT(kCFSocketAcceptCallBack, 2);
    RL_ASSERT_EQ_INT(kCFSocketDataCallBack, 3);
    RL_ASSERT_EQ_INT(kCFSocketConnectCallBack, 4);
    RL_ASSERT_EQ_INT(kCFSocketWriteCallBack, 8);
    RL_ASSERT_EQ_INT(kCFSocketAutomaticallyReenableReadCallBack, 1);
    RL_ASSERT_EQ_INT(kCFSocketAutomaticallyReenableAcceptCallBack, 2);
    RL_ASSERT_EQ_INT(kCFSocketAutomaticallyReenableDataCallBack, 3);
    RL_ASSERT_EQ_INT(kCFSocketAutomaticallyReenableWriteCallBack, 8);
    RL_ASSERT_EQ_INT(kCFSocketLeaveErrors, 64);
    RL_ASSERT_EQ_INT(kCFSocketCloseOnInvalidate, 128);
    RL_ASSERT_EQ_INT(sizeof(CFSocketNativeHandle), sizeof(int));
    CFSocketSignature sig = {PF_INET, SOCK_STREAM, IPPROTO_TCP, NULL};
    RL_ASSERT_EQ_INT(sig.protocolFamily, PF_INET);
}

static void echo_over_cf_names(void) {
    Log server = {0}, client = {0};
    CFSocketContext sctx = {0, &server, NULL, NULL, describe};
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CFDataRef any = CFDataCreate(kCFAllocatorDefault, (const UInt8 *)&sin, sizeof sin);
    CFSocketSignature sig = {PF_INET, SOCK_STREAM, IPPROTO_TCP, any};
    CFSocketRef listener =
        CFSocketCreateWithSocketSignature(kCFAllocatorDefault, &sig, kCFSocketAcceptCallBack, callback, &sctx);
    RL_ASSERT(listener != NULL);
    RL_ASSERT(CFGetTypeID(listener) == CFSocketGetTypeID());
    CFStringRef type_name = CFCopyTypeIDDescription(CFSocketGetTypeID());
    RL_ASSERT(CFEqual(type_name, CFSTR("CFSocket")));
    CFStringRef d = CFCopyDescription(listener);
    RL_ASSERT(CFStringFind(d, CFSTR("cf-socket"), 0).location != kCFNotFound);
    CFRelease(d);
    CFRunLoopSourceRef lsrc = CFSocketCreateRunLoopSource(kCFAllocatorDefault, listener, 0);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), lsrc, kCFRunLoopCommonModes);

    CFDataRef address = CFSocketCopyAddress(listener);
    CFSocketContext cctx = {0, &client, NULL, NULL, NULL};
    CFSocketRef conn = CFSocketCreate(kCFAllocatorDefault, PF_INET, SOCK_STREAM, IPPROTO_TCP,
                                      kCFSocketDataCallBack | kCFSocketConnectCallBack, callback, &cctx);
    CFRunLoopSourceRef csrc = CFSocketCreateRunLoopSource(kCFAllocatorDefault, conn, 0);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), csrc, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFSocketConnectToAddress(conn, address, -1), kCFSocketSuccess);
    for (int i = 0; i < 40 && (client.connects == 0 || server.accepts == 0); i++)
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1, true);
    RL_ASSERT_EQ_INT(client.connects, 1);
    RL_ASSERT_EQ_INT(server.accepts, 1);

    CFSocketRef peer = CFSocketCreateWithNative(kCFAllocatorDefault, server.accepted, kCFSocketNoCallBack, NULL, NULL);
    CFDataRef hello = CFDataCreate(NULL, (const UInt8 *)"hello, CF", 9);
    RL_ASSERT_EQ_INT(CFSocketSendData(peer, NULL, hello, 5.0), kCFSocketSuccess);
    for (int i = 0; i < 40 && client.datas == 0; i++) CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1, true);
    RL_ASSERT_STR_EQ(client.text, "hello, CF");
    RL_ASSERT(CFSocketGetSocketFlags(conn) ==
              (kCFSocketAutomaticallyReenableDataCallBack | kCFSocketCloseOnInvalidate));
    CFSocketDisableCallBacks(conn, kCFSocketDataCallBack);
    CFSocketEnableCallBacks(conn, kCFSocketDataCallBack);
    CFSocketSetSocketFlags(conn, CFSocketGetSocketFlags(conn));
    CFSocketContext back;
    CFSocketGetContext(listener, &back);
    RL_ASSERT(back.info == &server && back.copyDescription == describe);
    CFDataRef peer_address = CFSocketCopyPeerAddress(conn);
    RL_ASSERT(CFEqual(peer_address, address));
    RL_ASSERT(CFSocketGetNative(conn) >= 0);

    CFRelease(peer_address);
    CFRelease(hello);
    CFRelease(address);
    CFRelease(any);
    CFRelease(type_name);
    CFSocketInvalidate(peer);
    CFRelease(peer);
    CFSocketInvalidate(conn);
    RL_ASSERT(!CFSocketIsValid(conn));
    CFRelease(conn);
    CFRelease(csrc);
    CFSocketInvalidate(listener);
    CFRelease(listener);
    CFRelease(lsrc);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(constants_have_cf_values),
        RL_TEST(echo_over_cf_names),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
