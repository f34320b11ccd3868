/*
 * test_file_descriptor.c: RLFileDescriptor (CFFileDescriptor) on the run loop:
 * one-shot read/write callbacks, EOF/hang-up/error reported as readiness,
 * closed and invalid fds, invalidation (also from the callback), modes,
 * no spinning while idle, and a many-threads stress that counts.
 */
#include <CRunLoop.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

typedef struct {
    int calls;
    RLOptionFlags last;
    RLOptionFlags all;
    RLFileDescriptorRef f;
    int action; /* what the callback does, see cb() */
    ssize_t read_rc;
    int read_errno;
} probe;

enum { ACT_NONE, ACT_READ, ACT_REENABLE_READ, ACT_INVALIDATE, ACT_READ_AND_STOP };

static void cb(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    probe *p = info;
    p->calls++;
    p->last = types;
    p->all |= types;
    RL_ASSERT(f == p->f);
    char buf[64];
    switch (p->action) {
    case ACT_READ:
    case ACT_READ_AND_STOP:
        p->read_rc = read(RLFileDescriptorGetNativeDescriptor(f), buf, sizeof buf);
        p->read_errno = p->read_rc < 0 ? errno : 0;
        if (p->action == ACT_READ_AND_STOP) RLRunLoopStop(RLRunLoopGetCurrent());
        break;
    case ACT_REENABLE_READ:
        p->read_rc = read(RLFileDescriptorGetNativeDescriptor(f), buf, 1);
        RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
        break;
    case ACT_INVALIDATE: RLFileDescriptorInvalidate(f); break;
    }
}

/* Counts the times the loop woke from a sleep. */
static int wakes;
static RLRunLoopObserverRef add_wake_counter(RLRunLoopMode mode) {
    return rl_test_wake_counter(RLRunLoopGetCurrent(), mode, &wakes);
}

static RLFileDescriptorRef make(int fd, bool close_on_inv, probe *p, RLRunLoopMode mode) {
    RLFileDescriptorContext ctx = {0, p, NULL, NULL, NULL};
    RLFileDescriptorRef f = RLFileDescriptorCreate(fd, close_on_inv, cb, &ctx);
    RL_ASSERT(f != NULL);
    p->f = f;
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RL_ASSERT(s != NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, mode);
    RLRelease(s);
    return f;
}

/* A new pipe whose read end is watched for reading in the default mode
   (closed on invalidation). */
static RLFileDescriptorRef watch_pipe(int p2[2], probe *p) {
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    RLFileDescriptorRef f = make(p2[0], true, p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    return f;
}

static void done(RLFileDescriptorRef f) {
    RLFileDescriptorInvalidate(f);
    RLRelease(f);
}

/* One run of the default mode returns after a callout, the callout count now
   `calls` and the types it reported `last` (ANY_TYPES: not checked). */
#define ANY_TYPES ((RLOptionFlags)0)
static void expect_callout(probe *p, int calls, RLOptionFlags last) {
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p->calls, calls);
    if (last != ANY_TYPES) RL_ASSERT_EQ_INT(p->last, last);
}

/* The default mode runs `seconds` with no callout: the count stays `calls`. */
static void expect_no_callout(probe *p, double seconds, int calls) {
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, seconds, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p->calls, calls);
}

/* The same, the whole time, and the loop does not spin: it wakes from its
   sleep at most `max_wakes` times (counted by add_wake_counter's observer). */
static void expect_quiet(probe *p, double seconds, int calls, int max_wakes) {
    wakes = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, seconds, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(p->calls, calls);
    RL_ASSERT_LE_INT(wakes, max_wakes);
}

static void fd_read_callback_fires_once_per_enable(void) {
    int p2[2];
    probe p = {0};
    RLFileDescriptorRef f = watch_pipe(p2, &p);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    expect_callout(&p, 1, kRLFileDescriptorReadCallBack);
    /* Not read and not re-enabled: never again, and no spin. */
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    expect_quiet(&p, 0.2, 1, 1);
    /* Re-enabled: fires again for the same pending byte. */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    expect_callout(&p, 2, ANY_TYPES);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    done(f);
    close(p2[1]);
}

static void fd_reenable_in_callback_keeps_watching(void) {
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    probe p = {.action = ACT_REENABLE_READ};
    RLFileDescriptorRef f = make(sv[0], true, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(write(sv[1], "abcde", 5), 5);
    for (int i = 0; i < 5; i++) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 5);
    expect_no_callout(&p, 0.05, 5);
    done(f);
    close(sv[1]);
}

static void fd_write_callback_fires_when_writable(void) {
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    probe p = {0};
    RLFileDescriptorRef f = make(sv[0], true, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 1, kRLFileDescriptorWriteCallBack);
    done(f);
    close(sv[1]);
}

static void fd_read_and_write_are_reported_separately(void) {
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    probe p = {0};
    RLFileDescriptorRef f = make(sv[0], true, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 1, kRLFileDescriptorWriteCallBack);
    /* Read is still armed: nothing until the peer writes. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(sv[1], "y", 1), 1);
    expect_callout(&p, 2, kRLFileDescriptorReadCallBack);
    /* Both ready at once: one callout with both. */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 3, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
    done(f);
    close(sv[1]);
}

static void fd_disable_prevents_callback(void) {
    int p2[2];
    probe p = {0};
    RLFileDescriptorRef f = watch_pipe(p2, &p);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    RLFileDescriptorDisableCallBacks(f, kRLFileDescriptorReadCallBack);
    expect_no_callout(&p, 0.1, 0);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack | 0xF0); /* stray bits ignored */
    expect_callout(&p, 1, kRLFileDescriptorReadCallBack);
    done(f);
    close(p2[1]);
}

static void fd_eof_is_reported_as_read_without_spinning(void) {
    int p2[2];
    probe p = {.action = ACT_READ};
    RLFileDescriptorRef f = watch_pipe(p2, &p);
    close(p2[1]);
    expect_callout(&p, 1, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(p.read_rc, 0); /* EOF */
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    expect_quiet(&p, 0.25, 1, 1);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    done(f);
}

static void fd_socket_hangup_wakes_reader_and_writer(void) {
    signal(SIGPIPE, SIG_IGN);
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    probe p = {0};
    RLFileDescriptorRef f = make(sv[0], true, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    close(sv[1]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.last, kRLFileDescriptorReadCallBack);
    /* A write to a hung-up socket fails at once, so it is write-ready too. */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 2, kRLFileDescriptorWriteCallBack);
    RL_ASSERT(write(sv[0], "z", 1) < 0);
    done(f);
}

static void fd_error_on_pipe_is_reported_as_write(void) {
    signal(SIGPIPE, SIG_IGN);
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    probe p = {0};
    RLFileDescriptorRef f = make(p2[1], true, &p, DEF);
    close(p2[0]); /* no reader: EPOLLERR on the write end */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 1, kRLFileDescriptorWriteCallBack);
    errno = 0;
    RL_ASSERT(write(p2[1], "z", 1) < 0 && errno == EPIPE);
    expect_no_callout(&p, 0.1, 1);
    done(f);
}

/* A pipe whose read end has a high number, so that closing it behind the
   object's back does not hand the number to the next fd anyone opens. */
static void high_pipe(int p2[2]) {
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    int hi = fcntl(p2[0], F_DUPFD_CLOEXEC, 700);
    RL_ASSERT(hi >= 700);
    close(p2[0]);
    p2[0] = hi;
}

static void fd_closed_behind_our_back_fires_once_per_enable(void) {
    int p2[2];
    high_pipe(p2);
    probe p = {.action = ACT_READ};
    RLFileDescriptorRef f = make(p2[0], false, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    close(p2[0]); /* before the loop ever watched it */
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    /* The loop finds it closed when it starts watching: ready once (poll()'s
       POLLNVAL), and the read sees EBADF. */
    expect_callout(&p, 1, ANY_TYPES);
    RL_ASSERT_EQ_INT(p.read_rc, -1);
    RL_ASSERT_EQ_INT(p.read_errno, EBADF);
    expect_quiet(&p, 0.2, 1, 1);
    /* Each enable: once more. */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    expect_callout(&p, 2, ANY_TYPES);
    RL_ASSERT_EQ_INT(p.read_errno, EBADF);
    expect_quiet(&p, 0.2, 2, 1);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    done(f);
    close(p2[1]);
}

static void fd_closed_while_file_lives_on_does_not_spin(void) {
    int p2[2];
    high_pipe(p2);
    int keep = dup(p2[0]);
    probe p = {.action = ACT_READ};
    RLFileDescriptorRef f = make(p2[0], false, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    close(p2[0]); /* the file lives on through `keep`, and so does the registration */
    /* Disabling cannot remove the registration (EBADF): it stays armed, and
       fires once into a perform that ignores it (ONESHOT), then is quiet. */
    RLFileDescriptorDisableCallBacks(f, kRLFileDescriptorReadCallBack);
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    expect_quiet(&p, 0.2, 0, 2);
    /* Enabled again: the closed fd is reported ready once, read sees EBADF. */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    expect_callout(&p, 1, ANY_TYPES);
    RL_ASSERT_EQ_INT(p.read_errno, EBADF);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    expect_quiet(&p, 0.2, 1, 2);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    done(f);
    close(keep);
    close(p2[1]);
}

/* dup2 over the watched number: from the next enable on, the object
   watches the file the number names now. */
static void fd_number_replaced_with_dup2_is_watched_from_next_enable(void) {
    int a[2], b[2];
    high_pipe(a);
    RL_ASSERT_EQ_INT(pipe(b), 0);
    probe p = {.action = ACT_READ};
    RLFileDescriptorRef f = make(a[0], false, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(write(a[1], "a", 1), 1);
    expect_callout(&p, 1, ANY_TYPES);
    RL_ASSERT_EQ_INT(p.read_rc, 1);
    RL_ASSERT_EQ_INT(dup2(b[0], a[0]), a[0]); /* the old file goes, the number stays */
    close(b[0]);
    RL_ASSERT_EQ_INT(write(b[1], "bb", 2), 2);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    expect_callout(&p, 2, ANY_TYPES);
    RL_ASSERT_EQ_INT(p.read_rc, 2);
    /* And it keeps watching the new file. */
    RL_ASSERT_EQ_INT(write(b[1], "c", 1), 1);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    expect_callout(&p, 3, ANY_TYPES);
    RL_ASSERT_EQ_INT(p.read_rc, 1);
    done(f);
    close(a[0]);
    close(a[1]);
    close(b[1]);
}

static void fd_regular_file_is_always_ready(void) {
    char path[] = "/tmp/rl_fd_test_XXXXXX";
    int fd = mkstemp(path);
    RL_ASSERT(fd >= 0);
    unlink(path);
    probe p = {0};
    RLFileDescriptorRef f = make(fd, true, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 1, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
    expect_no_callout(&p, 0.05, 1);
    done(f);
    RL_ASSERT(fcntl(fd, F_GETFD) < 0); /* closeOnInvalidate */
}

static void fd_bad_input_is_ignored(void) {
    probe p = {0};
    RLFileDescriptorContext ctx = {0, &p, NULL, NULL, NULL};
    RL_ASSERT(RLFileDescriptorCreate(-1, false, cb, &ctx) == NULL);
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    close(p2[0]);
    RL_ASSERT(RLFileDescriptorCreate(p2[0], true, cb, &ctx) == NULL);    /* closed fd */
    RL_ASSERT(RLFileDescriptorCreate(100000, true, cb, &ctx) == NULL);   /* never opened */
    RL_ASSERT(RLFileDescriptorCreate(p2[1], false, NULL, &ctx) == NULL); /* no callout */
    RL_ASSERT(fcntl(p2[1], F_GETFD) >= 0);                               /* not closed by the failure */
    RL_ASSERT_EQ_INT(RLFileDescriptorGetNativeDescriptor(NULL), -1);
    RLFileDescriptorEnableCallBacks(NULL, kRLFileDescriptorReadCallBack);
    RLFileDescriptorDisableCallBacks(NULL, kRLFileDescriptorReadCallBack);
    RLFileDescriptorInvalidate(NULL);
    RL_ASSERT(!RLFileDescriptorIsValid(NULL));
    RL_ASSERT(RLFileDescriptorCreateRunLoopSource(NULL, 0) == NULL);
    RLFileDescriptorGetContext(NULL, &ctx);
    /* NULL context is fine. */
    RLFileDescriptorRef f = RLFileDescriptorCreate(p2[1], false, cb, NULL);
    RL_ASSERT(f != NULL);
    RLFileDescriptorGetContext(f, NULL);
    RLFileDescriptorContext got = {9, (void *)1, NULL, NULL, NULL};
    RLFileDescriptorGetContext(f, &got);
    RL_ASSERT(got.info == NULL);
    RLFileDescriptorInvalidate(f);
    RLFileDescriptorInvalidate(f);                                      /* idempotent */
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorWriteCallBack); /* invalid: ignored */
    RL_ASSERT(RLFileDescriptorCreateRunLoopSource(f, 0) == NULL);
    RL_ASSERT_EQ_INT(RLFileDescriptorGetNativeDescriptor(f), p2[1]);
    RLRelease(f);
    close(p2[1]);
}

static void fd_invalidate_from_callback_stops_everything(void) {
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    probe p = {.action = ACT_INVALIDATE};
    RLFileDescriptorRef f = make(sv[0], true, &p, DEF);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, "other");
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack | kRLFileDescriptorWriteCallBack);
    expect_callout(&p, 1, ANY_TYPES);
    RL_ASSERT(!RLFileDescriptorIsValid(f));
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, DEF));
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, "other"));
    RL_ASSERT(fcntl(sv[0], F_GETFD) < 0); /* closed on invalidate */
    RL_ASSERT_EQ_INT(send(sv[1], "x", 1, MSG_NOSIGNAL), -1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RLRelease(s);
    RLRelease(f);
    close(sv[1]);
}

static void fd_invalidate_without_close_leaves_fd_open(void) {
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    probe p = {0};
    RLFileDescriptorRef f = make(p2[0], false, &p, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    done(f);
    RL_ASSERT(fcntl(p2[0], F_GETFD) >= 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(p.calls, 0);
    close(p2[0]);
    close(p2[1]);
}

static void never_fires(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RL_FAIL_("the far timer fired");
}

static void fd_fires_only_in_modes_it_was_added_to(void) {
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    probe p = {0};
    RLFileDescriptorRef f = make(p2[0], true, &p, "fdmode");
    /* Keep the default mode non-empty with a far timer. */
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 1000, 0, 0, 0, never_fires, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, DEF);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    expect_quiet(&p, 0.2, 0, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("fdmode", 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    done(f);
    close(p2[1]);
}

static void fd_context_is_retained_and_released_at_invalidation(void) {
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    probe p = {0};
    RLFileDescriptorContext ctx = {0, &p, rl_test_ctx_retain, rl_test_ctx_release, rl_test_ctx_describe};
    RLFileDescriptorRef f = RLFileDescriptorCreate(p2[0], true, cb, &ctx);
    RL_ASSERT_EQ_INT(rl_test_ctx_retains, 1);
    RLRunLoopSourceRef s1 = RLFileDescriptorCreateRunLoopSource(f, 3);
    RLRunLoopSourceRef s2 = RLFileDescriptorCreateRunLoopSource(f, 3);
    RL_ASSERT(s1 == s2); /* one source per descriptor */
    RL_ASSERT_EQ_INT(RLRunLoopSourceGetOrder(s1), 3);
    RLRetain(f);
    RLRelease(f);
    char *d = RLCopyDescription(f);
    RL_ASSERT(d && strstr(d, "RLFileDescriptor") && strstr(d, "test-context"));
    free(d);
    d = RLCopyDescription(s1);
    RL_ASSERT(d != NULL);
    free(d);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 0);
    RLFileDescriptorInvalidate(f);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 1);
    RL_ASSERT(fcntl(p2[0], F_GETFD) < 0);
    RLRelease(s1);
    RLRelease(s2);
    RLRelease(f);
    RL_ASSERT_EQ_INT(rl_test_ctx_retains, 1);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 1);
    close(p2[1]);
}

static void fd_release_without_source_closes_when_asked(void) {
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    RLFileDescriptorContext ctx = {0, NULL, rl_test_ctx_retain, rl_test_ctx_release, NULL};
    RLFileDescriptorRef f = RLFileDescriptorCreate(p2[0], true, cb, &ctx);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RLRelease(f); /* never invalidated: the last release does it */
    RL_ASSERT(fcntl(p2[0], F_GETFD) < 0);
    close(p2[1]);
}

/* ---- threads -------------------------------------------------------------- */

typedef struct {
    RLRunLoopRef rl;
    atomic_int ready;
    int fd;
} enabler;

static void *enable_later(void *arg) {
    enabler *e = arg;
    while (!RLRunLoopIsWaiting(e->rl)) usleep(1000);
    usleep(20000);
    RL_ASSERT_EQ_INT(write(e->fd, "q", 1), 1);
    return NULL;
}

static void fd_wakes_a_sleeping_loop_from_another_thread(void) {
    int p2[2];
    probe p = {.action = ACT_READ};
    RLFileDescriptorRef f = watch_pipe(p2, &p);
    enabler e = {.rl = RLRunLoopGetCurrent(), .fd = p2[1]};
    pthread_t th;
    pthread_create(&th, NULL, enable_later, &e);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 5, true), kRLRunLoopRunHandledSource);
    RL_ASSERT(rl_test_now() - t0 < 4);
    RL_ASSERT_EQ_INT(p.calls, 1);
    pthread_join(th, NULL);
    done(f);
    close(p2[1]);
}

/* K writer threads, each on its own socketpair, send N sequence numbers; the
   loop re-enables read in the callback and checks order per sender. */
#define K_WRITERS 6
typedef struct {
    int fd;
    long n;
} writer_arg;

typedef struct {
    RLFileDescriptorRef f;
    long next;
    long n;
    int *open;
    unsigned char buf[sizeof(uint32_t)];
    size_t have;
} reader;

static void *writer(void *arg) {
    writer_arg *w = arg;
    for (long i = 0; i < w->n; i++) {
        uint32_t v = (uint32_t)i;
        const unsigned char *b = (const unsigned char *)&v;
        size_t off = 0;
        while (off < sizeof v) {
            ssize_t r = write(w->fd, b + off, sizeof v - off);
            if (r < 0) {
                RL_ASSERT(errno == EINTR);
                continue;
            }
            off += (size_t)r;
        }
    }
    close(w->fd);
    return NULL;
}

static void reader_cb(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    reader *r = info;
    RL_ASSERT(types & kRLFileDescriptorReadCallBack);
    unsigned char chunk[4096];
    ssize_t n = read(RLFileDescriptorGetNativeDescriptor(f), chunk, sizeof chunk);
    RL_ASSERT(n >= 0);
    if (n == 0) {
        RL_ASSERT_EQ_INT(r->next, r->n);
        RL_ASSERT_EQ_INT(r->have, 0);
        if (--*r->open == 0) RLRunLoopStop(RLRunLoopGetCurrent());
        return; /* EOF: not re-enabled */
    }
    for (ssize_t i = 0; i < n; i++) {
        r->buf[r->have++] = chunk[i];
        if (r->have == sizeof(uint32_t)) {
            uint32_t v;
            memcpy(&v, r->buf, sizeof v);
            RL_ASSERT_EQ_INT(v, r->next);
            r->next++;
            r->have = 0;
        }
    }
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
}

static void fd_many_writer_threads_stress_counts_in_order(void) {
    long n = rl_test_scaled(50000);
    int open_count = K_WRITERS;
    reader readers[K_WRITERS];
    writer_arg args[K_WRITERS];
    pthread_t th[K_WRITERS];
    for (int k = 0; k < K_WRITERS; k++) {
        int sv[2];
        RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        readers[k] = (reader){.n = n, .open = &open_count};
        RLFileDescriptorContext ctx = {0, &readers[k], NULL, NULL, NULL};
        readers[k].f = RLFileDescriptorCreate(sv[0], true, reader_cb, &ctx);
        RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(readers[k].f, k);
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        RLRelease(s);
        RLFileDescriptorEnableCallBacks(readers[k].f, kRLFileDescriptorReadCallBack);
        args[k] = (writer_arg){.fd = sv[1], .n = n};
    }
    for (int k = 0; k < K_WRITERS; k++) pthread_create(&th[k], NULL, writer, &args[k]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 60, false), kRLRunLoopRunStopped);
    for (int k = 0; k < K_WRITERS; k++) {
        pthread_join(th[k], NULL);
        RL_ASSERT_EQ_INT(readers[k].next, n);
        done(readers[k].f);
    }
}

/* Two loops on two threads bounce a byte over a socketpair. */
typedef struct {
    RLFileDescriptorRef f;
    long rounds;
    long count;
    bool initiator;
} pong;

static void pong_cb(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)types;
    pong *p = info;
    char c;
    RL_ASSERT_EQ_INT(read(RLFileDescriptorGetNativeDescriptor(f), &c, 1), 1);
    p->count++;
    if (p->initiator && p->count == p->rounds) {
        RLRunLoopStop(RLRunLoopGetCurrent());
        RL_ASSERT_EQ_INT(write(RLFileDescriptorGetNativeDescriptor(f), "e", 1), 1);
        return;
    }
    if (!p->initiator && c == 'e') {
        RLRunLoopStop(RLRunLoopGetCurrent());
        return;
    }
    RL_ASSERT_EQ_INT(write(RLFileDescriptorGetNativeDescriptor(f), "p", 1), 1);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
}

static void *pong_thread(void *arg) {
    pong *p = arg;
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(p->f, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    RLFileDescriptorEnableCallBacks(p->f, kRLFileDescriptorReadCallBack);
    RLRunLoopRunInMode(DEF, 60, false);
    return NULL;
}

static void fd_ping_pong_between_two_loops(void) {
    int sv[2];
    RL_ASSERT_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    long rounds = rl_test_scaled(20000);
    pong a = {.rounds = rounds, .initiator = true}, b = {.rounds = rounds};
    a.f = RLFileDescriptorCreate(sv[0], true, pong_cb, &(RLFileDescriptorContext){0, &a, NULL, NULL, NULL});
    b.f = RLFileDescriptorCreate(sv[1], true, pong_cb, &(RLFileDescriptorContext){0, &b, NULL, NULL, NULL});
    pthread_t th;
    pthread_create(&th, NULL, pong_thread, &b);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(a.f, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    RLFileDescriptorEnableCallBacks(a.f, kRLFileDescriptorReadCallBack);
    double t0 = rl_test_now();
    RL_ASSERT_EQ_INT(write(sv[0], "p", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 60, false), kRLRunLoopRunStopped);
    double dt = rl_test_now() - t0;
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(a.count, rounds);
    RL_ASSERT_EQ_INT(b.count, rounds + 1); /* + the 'e' */
    fprintf(stderr, "    (ping-pong: %ld round trips in %.3f s = %.0f/s)\n", rounds, dt, rounds / dt);
    done(a.f);
    done(b.f);
}

/* A callback that describes its own loop (logging, say) while what fired is
   not re-enabled yet: the loop's description asks the descriptor's
   copyDescription with the loop locked, which must not go on to re-arm the
   watch through that same loop (it would wait for the lock it runs under). */
static char *describe_probe(const void *info) {
    (void)info;
    return strdup("probe");
}

static int described;
static void describe_loop_cb(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)f;
    (void)types;
    (void)info;
    char *text = RLCopyDescription(RLRunLoopGetCurrent());
    RL_ASSERT(text != NULL);
    if (text && strstr(text, "probe")) described++;
    free(text);
}

static void fd_callback_describing_its_loop_does_not_deadlock(void) {
    int p2[2];
    RL_ASSERT_EQ_INT(pipe(p2), 0);
    RLFileDescriptorContext ctx = {0, NULL, NULL, NULL, describe_probe};
    RLFileDescriptorRef f = RLFileDescriptorCreate(p2[0], true, describe_loop_cb, &ctx);
    RL_ASSERT(f != NULL);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(described, 1);
    /* Not re-enabled: the watch was still dropped after the callback. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.2, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(described, 1);
    done(f);
    close(p2[1]);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(fd_read_callback_fires_once_per_enable),
        RL_TEST(fd_reenable_in_callback_keeps_watching),
        RL_TEST(fd_write_callback_fires_when_writable),
        RL_TEST(fd_read_and_write_are_reported_separately),
        RL_TEST(fd_disable_prevents_callback),
        RL_TEST(fd_eof_is_reported_as_read_without_spinning),
        RL_TEST(fd_socket_hangup_wakes_reader_and_writer),
        RL_TEST(fd_error_on_pipe_is_reported_as_write),
        RL_TEST(fd_closed_behind_our_back_fires_once_per_enable),
        RL_TEST(fd_closed_while_file_lives_on_does_not_spin),
        RL_TEST(fd_number_replaced_with_dup2_is_watched_from_next_enable),
        RL_TEST(fd_regular_file_is_always_ready),
        RL_TEST(fd_bad_input_is_ignored),
        RL_TEST(fd_invalidate_from_callback_stops_everything),
        RL_TEST(fd_invalidate_without_close_leaves_fd_open),
        RL_TEST(fd_fires_only_in_modes_it_was_added_to),
        RL_TEST(fd_context_is_retained_and_released_at_invalidation),
        RL_TEST(fd_release_without_source_closes_when_asked),
        RL_TEST(fd_wakes_a_sleeping_loop_from_another_thread),
        RL_TEST(fd_many_writer_threads_stress_counts_in_order),
        RL_TEST(fd_ping_pong_between_two_loops),
        RL_TEST(fd_callback_describing_its_loop_does_not_deadlock),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
