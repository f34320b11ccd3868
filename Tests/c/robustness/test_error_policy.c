/*
 * test_error_policy.c: what the loop does when a system call fails.
 *
 * The loop's own kernel objects (its epoll set, its timerfd, its wake
 * eventfd) failing with EBADF or EINVAL means someone closed or replaced
 * them behind the library's back: the loop cannot keep any promise after
 * that, so it aborts at once, naming the call, the object and errno, instead
 * of spinning or sleeping through its work. A user's descriptor failing the
 * same way is the user's business: the loop forgets or reports it and goes
 * on. Each abort test breaks one object in a child process (found through
 * /proc/self/fd, as a careless program would hit it) and checks the message.
 */
#include <CRunLoop.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include "rltest.h"

#define EPOLL_SET "anon_inode:[eventpoll]"
#define TIMERFD   "anon_inode:[timerfd]"
#define EVENTFD   "anon_inode:[eventfd]"

/* Puts /dev/null (opened with `flags`) under the number `fd`. */
static void replace_with_dev_null(int fd, int flags) {
    int null_fd = open("/dev/null", flags | O_CLOEXEC);
    RL_ASSERT(null_fd >= 0);
    RL_ASSERT_EQ_INT(dup2(null_fd, fd), fd);
    close(null_fd);
}

static void *stop_when_sleeping(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 30);
    RLRunLoopStop(rl);
    return NULL;
}

/* A loop on this thread with something in its default mode, that slept once
   (so its timerfd exists: it was armed for the run's deadline). */
static RLRunLoopRef ready_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    pthread_t th;
    pthread_create(&th, NULL, stop_when_sleeping, rl);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RL_ASSERT(rl_test_find_fd(EPOLL_SET) >= 0);
    RL_ASSERT(rl_test_find_fd(TIMERFD) >= 0);
    return rl;
}

static void count_callback(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)f;
    (void)types;
    (*(int *)info)++;
}

/* ---- the loop's epoll set ------------------------------------------------ */

static void sleep_on_replaced_set(void) {
    ready_loop();
    replace_with_dev_null(rl_test_find_fd(EPOLL_SET), O_RDONLY);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
}

/* Before: epoll_wait failed with EINVAL at every pass; the loop printed it,
   treated it as "no event" and spun until the run timed out. */
static void replaced_epoll_set_aborts_naming_epoll_wait(void) {
    RL_EXPECT_ABORT(sleep_on_replaced_set, "epoll_wait", "the loop's epoll set", strerror(EINVAL));
}

static void sleep_on_closed_set(void) {
    ready_loop();
    close(rl_test_find_fd(EPOLL_SET));
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
}

static void closed_epoll_set_aborts(void) {
    RL_EXPECT_ABORT(sleep_on_closed_set, "the loop's epoll set", strerror(EBADF));
}

static void add_source_to_replaced_set(void) {
    RLRunLoopRef rl = ready_loop();
    replace_with_dev_null(rl_test_find_fd(EPOLL_SET), O_RDONLY);
    int p[2];
    RL_ASSERT_EQ_INT(pipe(p), 0);
    static int calls;
    RLFileDescriptorContext ctx = {0, &calls, NULL, NULL, NULL};
    RLFileDescriptorRef f = RLFileDescriptorCreate(p[0], false, count_callback, &ctx);
    RL_ASSERT(f != NULL);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
}

/* Before: registering a user's descriptor in a replaced set failed with
   EINVAL and the source was silently never watched. */
static void registering_in_a_replaced_set_aborts_naming_epoll_ctl(void) {
    RL_EXPECT_ABORT(add_source_to_replaced_set, "epoll_ctl", "the loop's epoll set", strerror(EINVAL));
}

/* ---- the loop's timerfd -------------------------------------------------- */

static void count_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (*(int *)info)++;
}

static void arm_replaced_timerfd(void) {
    RLRunLoopRef rl = ready_loop();
    replace_with_dev_null(rl_test_find_fd(TIMERFD), O_RDONLY);
    static int fired;
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.05, 0, count_fire, &fired);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
}

/* Before: timerfd_settime failed, the loop printed it and slept on
   epoll_wait's timeout instead, as if it were out of descriptors. */
static void replaced_timerfd_aborts_naming_timerfd_settime(void) {
    RL_EXPECT_ABORT(arm_replaced_timerfd, "timerfd_settime", "the loop's timerfd", strerror(EINVAL));
}

/* ---- the loop's wake eventfd --------------------------------------------- */

static void *wake_when_sleeping(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    RLRunLoopWakeUp(rl);
    return NULL;
}

static void wake_through_replaced_eventfd(void) {
    RLRunLoopRef rl = ready_loop();
    replace_with_dev_null(rl_test_find_fd(EVENTFD), O_RDONLY); /* a write fails: EBADF */
    pthread_t th;
    pthread_create(&th, NULL, wake_when_sleeping, rl);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2, false);
    pthread_join(th, NULL);
}

/* Before: the write failed silently, the wake-up was lost and the loop slept
   until its run timed out. */
static void replaced_wake_eventfd_aborts_naming_write(void) {
    RL_EXPECT_ABORT(wake_through_replaced_eventfd, "write", "the loop's wake eventfd", strerror(EBADF));
}

/* ---- a message port's eventfd ------------------------------------------- */

static void ignore_message(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port, (void)msgid, (void)bytes, (void)len, (void)info;
}

static void send_through_replaced_port_eventfd(void) {
    RLMessagePortRef port = RLMessagePortCreate(ignore_message, NULL, 0); /* before any loop: its eventfd only */
    RL_ASSERT(port != NULL);
    replace_with_dev_null(rl_test_find_fd(EVENTFD), O_RDONLY);
    RLMessagePortSend(port, 1, NULL, 0);
}

/* Before: the write failed silently; the message sat in the queue and the
   port's loop was never told. */
static void replaced_message_port_eventfd_aborts_naming_write(void) {
    RL_EXPECT_ABORT(send_through_replaced_port_eventfd, "write", "a message port's eventfd", strerror(EBADF));
}

/* ---- a user's descriptors are not the loop's ----------------------------- */

/* A pipe, and an RLFileDescriptor on its read end (left open at
   invalidation) counting its callouts in `calls`, with its run-loop source. */
typedef struct {
    int p[2];
    int calls;
    RLFileDescriptorRef f;
    RLRunLoopSourceRef s;
} counting_pipe;

static void open_counting_pipe(counting_pipe *c) {
    RL_ASSERT_EQ_INT(pipe(c->p), 0);
    c->calls = 0;
    RLFileDescriptorContext ctx = {0, &c->calls, NULL, NULL, NULL};
    c->f = RLFileDescriptorCreate(c->p[0], false, count_callback, &ctx);
    c->s = RLFileDescriptorCreateRunLoopSource(c->f, 0);
}

static void release_counting_pipe(counting_pipe *c) {
    RLFileDescriptorInvalidate(c->f);
    RLRelease(c->s);
    RLRelease(c->f);
}

/* A closed user descriptor fails epoll_ctl with EBADF too: that is the
   user's mistake, reported as poll() would (always ready), never fatal. */
static void closed_user_descriptor_is_not_fatal(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    counting_pipe c;
    open_counting_pipe(&c);
    RLRunLoopAddSource(rl, c.s, kRLRunLoopDefaultMode);
    close(c.p[0]);
    close(c.p[1]);
    RLFileDescriptorEnableCallBacks(c.f, kRLFileDescriptorReadCallBack); /* ctl on a closed number */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(c.calls, 1);
    RLRunLoopRemoveSource(rl, c.s, kRLRunLoopDefaultMode);
    release_counting_pipe(&c);
}

/* A user's number closed while registered: removing it fails epoll_ctl
   (EBADF) on a healthy set; the loop rebuilds its set and keeps working. */
static void removing_a_closed_user_descriptor_is_not_fatal(void) {
    RLRunLoopRef rl = ready_loop();
    counting_pipe c;
    open_counting_pipe(&c);
    RLFileDescriptorEnableCallBacks(c.f, kRLFileDescriptorReadCallBack);
    RLRunLoopAddSource(rl, c.s, kRLRunLoopDefaultMode);
    close(c.p[0]);
    RLRunLoopRemoveSource(rl, c.s, kRLRunLoopDefaultMode);
    static int fired;
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent() + 0.02, 0, count_fire, &fired);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(fired, 1);
    RL_ASSERT_EQ_INT(c.calls, 0);
    close(c.p[1]);
    release_counting_pipe(&c);
    RLRelease(t);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(replaced_epoll_set_aborts_naming_epoll_wait),
        RL_TEST(closed_epoll_set_aborts),
        RL_TEST(registering_in_a_replaced_set_aborts_naming_epoll_ctl),
        RL_TEST(replaced_timerfd_aborts_naming_timerfd_settime),
        RL_TEST(replaced_wake_eventfd_aborts_naming_write),
        RL_TEST(replaced_message_port_eventfd_aborts_naming_write),
        RL_TEST(closed_user_descriptor_is_not_fatal),
        RL_TEST(removing_a_closed_user_descriptor_is_not_fatal),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
