/*
 * test_fd_reuse.c: a version-1 source's registration belongs to the file it
 * watched, not to the number: closing the number (while the file lives on
 * elsewhere) or reusing it never disturbs another source or makes a loop spin;
 * a source removed and added again, or a descriptor object, watches the file
 * that has the number now.
 */
#include <CRunLoop.h>
#include <fcntl.h>
#include "rltest.h"
#include "rltest_badinput.h"

/* A new non-blocking pipe p whose read end a version-1 source in `mode`
   watches (draining it when asked), counting into info. */
static RLRunLoopSourceRef add_pipe_source(RLRunLoopRef rl, RLRunLoopMode mode, int p[2], rl_test_fd_info *info,
                                          bool drain) {
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK), 0);
    *info = (rl_test_fd_info){.fd = p[0], .drain = drain};
    RLRunLoopSourceRef s = rl_test_fd_source(info);
    RLRunLoopAddSource(rl, s, mode);
    return s;
}

static void drop(RLRunLoopSourceRef s) {
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* One run of `mode` returns after a perform, the count now `performed`. */
static void expect_perform(RLRunLoopMode mode, const int *count, int performed) {
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(mode, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(*count, performed);
}

/* A run of `mode` for `seconds` times out, sleeping at most max_sleeps times. */
static void expect_no_spin(RLRunLoopMode mode, double seconds, int max_sleeps) {
    RLRunLoopRunResult r;
    int sleeps = rl_test_count_sleeps(mode, seconds, &r);
    RL_ASSERT_EQ_INT(r, kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(sleeps, max_sleeps);
}

/* The old source's number comes to name the new source's file, and the old
   source leaves the loop (taken out by `leave`): that must not unregister
   the new one. With also_in_a, the old source was in mode "A" too. */
static void old_source_leaves_after_its_number_was_reused(void (*leave)(RLRunLoopRef, RLRunLoopSourceRef),
                                                          bool also_in_a) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int p1[2], p2[2];
    rl_test_fd_info old, now;
    RLRunLoopSourceRef a = add_pipe_source(rl, also_in_a ? "A" : kRLRunLoopDefaultMode, p1, &old, true);
    if (also_in_a) RLRunLoopAddSource(rl, a, kRLRunLoopDefaultMode);
    else RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    close(p1[0]);
    close(p1[1]);
    RLRunLoopSourceRef b = add_pipe_source(rl, kRLRunLoopDefaultMode, p2, &now, true);
    RL_ASSERT_EQ_INT(p2[0], old.fd); /* the number is reused */
    leave(rl, a);
    RL_ASSERT_EQ_INT(write(p2[1], "x", 1), 1);
    expect_perform(kRLRunLoopDefaultMode, &now.performed, 1);
    RL_ASSERT_EQ_INT(old.performed, 0);
    drop(a);
    drop(b);
    close(p2[0]);
    close(p2[1]);
}

static void invalidate(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    (void)rl;
    RLRunLoopSourceInvalidate(s);
}

static void remove_from_a_and_default(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    RLRunLoopRemoveSource(rl, s, "A");
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
}

static void remove_from_default(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
}

static void invalidating_a_source_whose_number_was_reused(void) {
    old_source_leaves_after_its_number_was_reused(invalidate, false);
}

/* Same, with the old source in another mode too, removed by hand. */
static void removing_a_source_whose_number_was_reused(void) {
    old_source_leaves_after_its_number_was_reused(remove_from_a_and_default, true);
}

/* The number is closed, then the source leaves the default mode (taken out
   by `leave`) while the file stays open through a dup and has data: nothing
   of it may stay in the wait, and the default mode must not spin. With
   also_in_other, the source stays in mode "other". */
static void closed_number_of_a_live_file_leaves(void (*leave)(RLRunLoopRef, RLRunLoopSourceRef), bool also_in_other) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    int p[2];
    rl_test_fd_info info;
    RLRunLoopSourceRef a = add_pipe_source(rl, kRLRunLoopDefaultMode, p, &info, false);
    if (also_in_other) RLRunLoopAddSource(rl, a, "other");
    int alive = dup(p[0]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    close(p[0]);
    leave(rl, a);
    expect_no_spin(kRLRunLoopDefaultMode, 0.5, 2);
    RL_ASSERT_EQ_INT(info.performed, 0);
    drop(a);
    drop(keep);
    close(alive);
    close(p[1]);
}

static void closed_number_of_a_live_file_does_not_spin(void) {
    closed_number_of_a_live_file_leaves(invalidate, false);
}

/* Same when the source leaves one of two modes: the mode armed next (the
   one it left) must not keep the live file's readiness. */
static void closed_number_removed_from_one_of_two_modes(void) {
    closed_number_of_a_live_file_leaves(remove_from_default, true);
}

/* A readable source of another mode neither wakes nor spins a run of this
   one, and performs as soon as its own mode runs. */
static void readable_source_of_another_mode_stays_quiet(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "B");
    int p[2];
    rl_test_fd_info info;
    RLRunLoopSourceRef a = add_pipe_source(rl, "A", p, &info, true);
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    expect_no_spin("B", 0.3, 1);
    RL_ASSERT_EQ_INT(info.performed, 0);
    expect_perform("A", &info.performed, 1);
    /* And back: B still quiet, A still served after B ran. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("B", 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(p[1], "y", 1), 1);
    expect_perform("A", &info.performed, 2);
    drop(a);
    drop(keep);
    close(p[0]);
    close(p[1]);
}

/* A nested run in another mode, from a perform, then back to the outer mode:
   the outer mode's sources are served again. */
typedef struct {
    rl_test_fd_info v;
    int nested_result;
} nesting_info;

static void nest_in_b(void *info) {
    nesting_info *n = info;
    rl_test_fd_perform(&n->v);
    if (n->v.performed == 1) n->nested_result = RLRunLoopRunInMode("B", 0.05, false);
}

static void nested_run_in_another_mode_then_back(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, "B");
    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK), 0);
    nesting_info n = {.v = {.fd = p[0], .drain = true}};
    RLRunLoopSourceRef a = rl_test_source1(0, rl_test_fd_of, nest_in_b, &n);
    RLRunLoopAddSource(rl, a, "A");
    RL_ASSERT_EQ_INT(write(p[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("A", 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(n.nested_result, kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(p[1], "y", 1), 1);
    expect_perform("A", &n.v.performed, 2);
    drop(a);
    drop(keep);
    close(p[0]);
    close(p[1]);
}

/* The closed number is reused by the loop itself (its timerfd, made on
   first need): removing the source must not remove the loop's timer. */
static void closed_number_reused_by_the_loop(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    int p[2];
    rl_test_fd_info info;
    RLRunLoopSourceRef a = add_pipe_source(rl, kRLRunLoopDefaultMode, p, &info, true);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    close(p[0]); /* the lowest free number: the loop's timerfd will get it */
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, rl_test_count_fire, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 1);
    drop(a);
    RLRelease(t);
    /* The loop's timer still ends sleeps: a timer and the run's timeout. */
    t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0, rl_test_count_fire, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_fired, 2);
    RLRelease(t);
    drop(keep);
    close(p[1]);
}

/* ---- a number closed and reused while a source or object watches it ---- */

static int g_fd;
static int read_fd(void *info) {
    (void)info;
    return g_fd;
}
static char g_got;
static void read_one(void *info) {
    (void)info;
    char b;
    if (read(g_fd, &b, 1) == 1) g_got = b;
    rl_test_calls++;
}

/* A version-1 source watches the open file its fd named when it was added
   to the mode (the fd is asked for at each add, CRunLoop.h). Closing it
   behind the loop's back and opening another file on the same number must
   not crash or spin; removing and re-adding the source watches the new
   file. */
/* Makes the loop's own descriptors (the mode's timerfd) before the test
   recycles fd numbers, so a recycled number is never one of the loop's. */
static void warm_up_loop(RLRunLoopRef rl) {
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.001, false), kRLRunLoopRunTimedOut);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* Closes the file behind fd `num` and opens a new pipe whose read end takes
   the same number, in one step (dup3), so no other open can take it. The
   old pipe's write end is closed too. */
static void replace_with_new_pipe(int num, int old_write, int b[2]) {
    RL_ASSERT_EQ_INT(pipe2(b, O_NONBLOCK | O_CLOEXEC), 0);
    RL_ASSERT_EQ_INT(dup3(b[0], num, O_CLOEXEC), num);
    close(b[0]);
    b[0] = num;
    close(old_write);
}

static void v1_source_fd_closed_and_number_reused(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    warm_up_loop(rl);
    int a[2], b[2];
    RL_ASSERT_EQ_INT(pipe2(a, O_NONBLOCK | O_CLOEXEC), 0);
    g_fd = a[0];
    RLRunLoopSourceRef s = rl_test_source1(0, read_fd, read_one, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(write(a[1], "a", 1), 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(g_got, 'a');
    replace_with_new_pipe(g_fd, a[1], b);
    RL_ASSERT_EQ_INT(write(b[1], "b", 1), 1);
    int before = rl_test_calls;
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false);
    RL_ASSERT(r == kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(rl_test_calls - before, 1); /* no spin whatever it watches */
    RLRunLoopRemoveSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    if (rl_test_calls == before) {
        RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    }
    RL_ASSERT_EQ_INT(g_got, 'b');
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    close(b[0]);
    close(b[1]);
    assert_loop_still_works();
}

static int g_fd_calls;
static RLOptionFlags g_fd_types;
static void fd_callback(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)info;
    g_fd_calls++;
    g_fd_types |= types;
    char b;
    if (read(RLFileDescriptorGetNativeDescriptor(f), &b, 1) == 1) g_got = b;
}

/* CRunLoopLinux.h: "once the closed number is reused by a new open, the
   object watches whatever now has that number". */
static void file_descriptor_number_reused_watches_the_new_file(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    warm_up_loop(rl);
    int a[2], b[2];
    RL_ASSERT_EQ_INT(pipe2(a, O_NONBLOCK | O_CLOEXEC), 0);
    RLFileDescriptorRef f = RLFileDescriptorCreate(a[0], false, fd_callback, NULL);
    RL_ASSERT(f != NULL);
    RLRunLoopSourceRef s = RLFileDescriptorCreateRunLoopSource(f, 0);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    int num = a[0];
    replace_with_new_pipe(num, a[1], b);
    int calls = g_fd_calls;
    RL_ASSERT_EQ_INT(write(b[1], "n", 1), 1);
    g_got = 0;
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(g_fd_calls, calls + 1);
    RL_ASSERT_EQ_INT(g_got, 'n');
    RLFileDescriptorInvalidate(f);
    RLRelease(s);
    RLRelease(f);
    close(b[0]);
    close(b[1]);
    assert_loop_still_works();
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(invalidating_a_source_whose_number_was_reused),
        RL_TEST(removing_a_source_whose_number_was_reused),
        RL_TEST(closed_number_of_a_live_file_does_not_spin),
        RL_TEST(closed_number_removed_from_one_of_two_modes),
        RL_TEST(readable_source_of_another_mode_stays_quiet),
        RL_TEST(nested_run_in_another_mode_then_back),
        RL_TEST(closed_number_reused_by_the_loop),
        RL_TEST(v1_source_fd_closed_and_number_reused),
        RL_TEST(file_descriptor_number_reused_watches_the_new_file),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
