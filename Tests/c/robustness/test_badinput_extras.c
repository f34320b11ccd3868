/* test_badinput_extras.c: the Linux extras (CRunLoopLinux.h) given bad
   arguments or used after invalidation: RLFileDescriptor, signal sources,
   message ports. Each answers as its header says (NULL, an error number, or
   nothing done), changes no signal mask, and leaves the loop working. */
#include <CRunLoop.h>
#include "rltest.h"
#include "rltest_badinput.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>

static int g_fd_calls;
static RLOptionFlags g_fd_types;
static void fd_callback(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)info;
    g_fd_calls++;
    g_fd_types |= types;
    char b;
    (void)!read(RLFileDescriptorGetNativeDescriptor(f), &b, 1);
}

/* ---- RLFileDescriptor: bad arguments, use after invalidation ---- */

static void file_descriptor_bad_input(void) {
    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_CLOEXEC), 0);
    RL_ASSERT(RLFileDescriptorCreate(-1, true, fd_callback, NULL) == NULL);
    RL_ASSERT(RLFileDescriptorCreate(1 << 30, true, fd_callback, NULL) == NULL);
    RL_ASSERT(RLFileDescriptorCreate(p[0], true, NULL, NULL) == NULL);
    RL_ASSERT(fcntl(p[0], F_GETFD) >= 0); /* never closed on failure */
    int closed[2];
    RL_ASSERT_EQ_INT(pipe2(closed, O_CLOEXEC), 0);
    close(closed[0]);
    close(closed[1]);
    RL_ASSERT(RLFileDescriptorCreate(closed[0], true, fd_callback, NULL) == NULL);
    /* NULL objects: test_file_descriptor.c's fd_bad_input_is_ignored. */
    /* Unknown callback bits are ignored. */
    RLFileDescriptorRef f = RLFileDescriptorCreate(p[0], true, fd_callback, NULL);
    RL_ASSERT(f != NULL);
    RLFileDescriptorGetContext(f, NULL);
    RLFileDescriptorEnableCallBacks(f, ~(RLOptionFlags)0);
    RLFileDescriptorDisableCallBacks(f, ~(RLOptionFlags)3);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RL_ASSERT(s != NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    g_fd_types = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(g_fd_types & ~(RLOptionFlags)3, 0); /* only the two real types are reported */
    /* After invalidation: everything is ignored, the fd is closed once. */
    RLFileDescriptorInvalidate(f);
    RLFileDescriptorInvalidate(f);
    RL_ASSERT(!RLFileDescriptorIsValid(f));
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode));
    RL_ASSERT(fcntl(p[0], F_GETFD) < 0); /* closeOnInvalidate */
    RL_ASSERT_EQ_INT(RLFileDescriptorGetNativeDescriptor(f), p[0]);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RLFileDescriptorDisableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT(RLFileDescriptorCreateRunLoopSource(f, 0) == NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode));
    int calls = g_fd_calls;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(g_fd_calls, calls);
    RLRelease(s);
    RLRelease(f);
    close(p[1]);
    assert_loop_still_works();
}

/* ---- signal sources ---- */

static void signal_cb(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    (void)info;
    rl_test_calls++;
}

static void signal_source_bad_input(void) {
    sigset_t before, after;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    int bad[] = {0, -1, -1000, _NSIG, _NSIG + 1, 1 << 20, SIGKILL, SIGSTOP, 32, 33};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        RL_ASSERT(RLSignalSourceCreate(bad[i], 0, signal_cb, NULL) == NULL);
    RL_ASSERT(RLSignalSourceCreate(SIGUSR1, 0, NULL, NULL) == NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    for (int sig = 1; sig < 32; sig++)
        RL_ASSERT_EQ_INT(sigismember(&before, sig), sigismember(&after, sig)); /* no mask changed */
    RL_ASSERT_EQ_INT(RLSignalSourceGetSignal(NULL), 0);
    RLRunLoopSourceRef plain = rl_test_source0(0, rl_test_count_perform, NULL);
    RL_ASSERT_EQ_INT(RLSignalSourceGetSignal(plain), 0);
    RLRelease(plain);
    /* Invalidated: Signal (for version-1) and adds are ignored; GetSignal still answers. */
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGUSR2, 0, signal_cb, NULL);
    RL_ASSERT(s != NULL);
    RLRunLoopSourceSignal(s); /* version 1: ignored */
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RLRunLoopSourceInvalidate(s);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(RLSignalSourceGetSignal(s), SIGUSR2);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false), kRLRunLoopRunFinished);
    RLRelease(s);
    /* The last source freed: the thread's mask was never changed. */
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    RL_ASSERT_EQ_INT(sigismember(&after, SIGUSR2), sigismember(&before, SIGUSR2));
    RL_ASSERT_EQ_INT(rl_test_calls, 0);
    assert_loop_still_works();
}

/* ---- message ports ---- */

static int g_msgs;
static void port_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)msgid;
    (void)info;
    if (len == 0) RL_ASSERT(bytes == NULL);
    g_msgs++;
}

static void message_port_bad_input(void) {
    RL_ASSERT(RLMessagePortCreate(port_cb, NULL, -1) == NULL);
    RL_ASSERT(RLMessagePortCreate(port_cb, NULL, -(1L << 40)) == NULL);
    RL_ASSERT(RLMessagePortCreate(NULL, NULL, 0) == NULL);
    RLMessagePortRef big = RLMessagePortCreate(port_cb, NULL, 1L << 40);
    RL_ASSERT(big != NULL);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(big), RL_MESSAGE_PORT_MAX_CAPACITY);
    RLMessagePortInvalidate(big);
    RLRelease(big);
    RL_ASSERT_EQ_INT(RLMessagePortSend(NULL, 1, "x", 1), -EINVAL);
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(NULL), 0);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(NULL), 0);
    RL_ASSERT(!RLMessagePortIsValid(NULL));
    RL_ASSERT(RLMessagePortCreateRunLoopSource(NULL, 0) == NULL);
    RLMessagePortInvalidate(NULL);
    RLMessagePortContext ctx;
    RLMessagePortGetContext(NULL, &ctx);

    RLMessagePortRef p = RLMessagePortCreate(port_cb, NULL, 2);
    RL_ASSERT(p != NULL);
    RLMessagePortGetContext(p, NULL);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(p), 2);
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 1, NULL, 5), -EINVAL);
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 1, "x", RL_MESSAGE_PORT_MAX_SIZE + 1), -EMSGSIZE);
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 1, "x", SIZE_MAX), -EMSGSIZE);
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 1, NULL, 0), 0); /* an empty message is fine */
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 2, "y", 1), 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 3, "z", 1), -EAGAIN); /* full */
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(p), 2);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(p, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(g_msgs, 2);
    /* Invalidated: sends fail with -EPIPE, queued messages are dropped. */
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 4, "w", 1), 0);
    RLMessagePortInvalidate(p);
    RLMessagePortInvalidate(p);
    RL_ASSERT(!RLMessagePortIsValid(p));
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 5, "v", 1), -EPIPE);
    RL_ASSERT_EQ_INT(RLMessagePortSend(p, 5, NULL, 0), -EPIPE);
    RL_ASSERT(RLMessagePortCreateRunLoopSource(p, 0) == NULL);
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(g_msgs, 2);
    RLRelease(s);
    RLRelease(p);
    assert_loop_still_works();
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(file_descriptor_bad_input),
        RL_TEST(signal_source_bad_input),
        RL_TEST(message_port_bad_input),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
