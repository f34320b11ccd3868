/*
 * test_main_queue.c: the main run loop drains libdispatch's main queue
 * (DispatchQueue.main, and so Swift's @MainActor) without dispatch_main().
 *
 * This program does not link libdispatch: each test dlopen()s it inside its
 * own forked child, before the main run loop is made (libdispatch binds the
 * main queue to the thread that loads it, and forbids use after fork). When
 * libdispatch cannot be found the tests that need it pass with a note.
 * RL_LIBDISPATCH may name the library; otherwise the Swift toolchain's copy is
 * looked for next to `swift`, then in /opt/swift and /usr/lib/swift.
 */
#include <CRunLoop.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

typedef void *dq_t;
typedef void (*fn_t)(void *);
static struct {
    void (*async_f)(dq_t q, void *ctx, fn_t fn);
    dq_t (*global_queue)(long identifier, unsigned long flags);
    int (*handle)(void);
    dq_t main_q;
} d;

static bool on_main_thread(void) {
    return (pid_t)syscall(SYS_gettid) == getpid();
}

static void *open_dispatch(int mode) {
    const char *env = getenv("RL_LIBDISPATCH");
    if (env) return dlopen(env, mode);
    void *h = dlopen("libdispatch.so", mode);
    if (h) return h;
    static const char *const paths[] = {
        "/opt/swift/usr/lib/swift/linux/libdispatch.so",
        "/usr/lib/swift/linux/libdispatch.so",
        "/usr/share/swift/usr/lib/swift/linux/libdispatch.so",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if ((h = dlopen(paths[i], mode))) return h;
    /* Next to the swift driver on PATH: <toolchain>/usr/bin/swift. */
    FILE *p = popen("readlink -f \"$(command -v swift)\" 2>/dev/null", "r");
    char buf[4096];
    if (p && fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\n")] = 0;
        char *bin = strstr(buf, "/bin/swift");
        if (bin) {
            strcpy(bin, "/lib/swift/linux/libdispatch.so");
            h = dlopen(buf, mode);
        }
    }
    if (p) pclose(p);
    return h;
}

/* Loads libdispatch (before the main loop exists). false: not available. */
static bool load(int mode) {
    void *h = open_dispatch(mode | RTLD_NOW);
    if (!h) {
        fprintf(stderr, "    (libdispatch not found: %s; skipped)\n", dlerror());
        return false;
    }
    *(void **)&d.async_f = dlsym(h, "dispatch_async_f");
    *(void **)&d.global_queue = dlsym(h, "dispatch_get_global_queue");
    *(void **)&d.handle = dlsym(h, "_dispatch_get_main_queue_handle_4CF");
    d.main_q = dlsym(h, "_dispatch_main_q");
    RL_ASSERT(d.async_f && d.global_queue && d.handle && d.main_q);
    return true;
}

static int wakes;
static RLRunLoopObserverRef add_wake_counter(RLRunLoopMode mode) {
    return rl_test_wake_counter(RLRunLoopGetMain(), mode, &wakes);
}

/* ---- work items ----------------------------------------------------------- */

static atomic_int ran;
static int order[200];
static atomic_bool wrong_thread;

static void record(void *ctx) {
    if (!on_main_thread()) atomic_store(&wrong_thread, true);
    int n = atomic_fetch_add(&ran, 1);
    if (n < 200) order[n] = (int)(intptr_t)ctx;
}

static void record_and_stop(void *ctx) {
    record(ctx);
    RLRunLoopStop(RLRunLoopGetMain());
}

static void mainq_async_from_main_thread_runs_on_main_loop_in_order(void) {
    if (!load(RTLD_LOCAL)) return; /* RTLD_LOCAL: found without being global */
    RL_ASSERT(RLRunLoopGetCurrent() == RLRunLoopGetMain());
    for (int i = 0; i < 100; i++) d.async_f(d.main_q, (void *)(intptr_t)i, record);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 5, true), kRLRunLoopRunHandledSource);
    double t0 = rl_test_now();
    while (atomic_load(&ran) < 100 && rl_test_now() - t0 < 5) RLRunLoopRunInMode(DEF, 1, true);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 100);
    for (int i = 0; i < 100; i++) RL_ASSERT_EQ_INT(order[i], i);
    RL_ASSERT(!atomic_load(&wrong_thread));
}

static void bounce_to_main(void *ctx) {
    RL_ASSERT(!on_main_thread());
    d.async_f(d.main_q, ctx, record_and_stop);
}

static void mainq_async_from_a_dispatch_worker_wakes_the_sleeping_main_loop(void) {
    if (!load(RTLD_GLOBAL)) return;
    RLRunLoopRef main = RLRunLoopGetMain();
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    d.async_f(d.global_queue(0, 0), (void *)(intptr_t)7, bounce_to_main);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 1);
    RL_ASSERT_EQ_INT(order[0], 7);
    RL_ASSERT(!atomic_load(&wrong_thread));
    RL_ASSERT_GE_INT(wakes, 1);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    (void)main;
}

static void never_fires(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}

static void mainq_drains_in_common_modes_only(void) {
    if (!load(RTLD_GLOBAL)) return;
    RLRunLoopRef main = RLRunLoopGetMain();
    RLRunLoopAddCommonMode(main, "common-too");
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 1000, 0, 0, 0, never_fires, NULL);
    RLRunLoopAddTimer(main, t, "private"); /* keeps "private" non-empty */
    RLRunLoopObserverRef o = add_wake_counter("private");
    d.async_f(d.main_q, (void *)(intptr_t)1, record);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("private", 0.25, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 0);
    RL_ASSERT_LE_INT(wakes, 1); /* the ready eventfd is not watched there */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("common-too", 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 1);
    d.async_f(d.main_q, (void *)(intptr_t)2, record);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 2);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

/* A main-queue item that runs the main loop again (nested): as in CF, the
   nested run finishes at once, and the inner item runs after the outer one. */
static atomic_int nested_ran_inner;
static int nested_wakes;
static RLRunLoopRunResult nested_result;

static void inner_item(void *ctx) {
    (void)ctx;
    record(ctx);
    RLRunLoopStop(RLRunLoopGetMain());
}

static void outer_item(void *ctx) {
    record(ctx);
    d.async_f(d.main_q, (void *)(intptr_t)2, inner_item);
    /* Make the eventfd readable for the nested run, as a poke racing with
       this drain would. */
    uint64_t one = 1;
    RL_ASSERT_EQ_INT(write(d.handle(), &one, sizeof one), 8);
    int before = wakes;
    nested_result = RLRunLoopRunInMode(DEF, 0.3, false);
    nested_wakes = wakes - before;
    nested_ran_inner = atomic_load(&ran) > 1;
}

static void mainq_nested_run_neither_spins_nor_loses_work(void) {
    if (!load(RTLD_GLOBAL)) return;
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    d.async_f(d.main_q, (void *)(intptr_t)1, outer_item);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 5, false), kRLRunLoopRunStopped);
    /* As in CF: inside a drain the queue does not count, so the nested run
       of an otherwise empty mode finishes at once; the inner item waits. */
    RL_ASSERT_EQ_INT(nested_result, kRLRunLoopRunFinished);
    RL_ASSERT(!nested_ran_inner);
    RL_ASSERT_LE_INT(nested_wakes, 2); /* consumed, not spinning */
    RL_ASSERT_EQ_INT(atomic_load(&ran), 2);
    RL_ASSERT_EQ_INT(order[0], 1);
    RL_ASSERT_EQ_INT(order[1], 2);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

static void mainq_idle_main_loop_does_not_spin(void) {
    if (!load(RTLD_GLOBAL)) return;
    d.async_f(d.main_q, (void *)(intptr_t)1, record);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RLRunLoopObserverRef o = add_wake_counter(DEF);
    /* The main queue's source keeps the mode non-empty (CF: never empty). */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(wakes, 1);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

static void *other_thread_loop(void *arg) {
    (void)arg;
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 1000, 0, 0, 0, never_fires, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, DEF);
    RLRunLoopRunInMode(DEF, 0.2, false);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    return NULL;
}

static void mainq_other_threads_loops_never_drain_it(void) {
    if (!load(RTLD_GLOBAL)) return;
    RLRunLoopGetMain();
    d.async_f(d.main_q, (void *)(intptr_t)1, record);
    pthread_t th;
    pthread_create(&th, NULL, other_thread_loop, NULL);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(atomic_load(&ran), 1);
    RL_ASSERT(!atomic_load(&wrong_thread));
}

static void mainq_without_libdispatch_the_main_loop_is_plain(void) {
    void *h = dlopen("libdispatch.so", RTLD_LAZY | RTLD_NOLOAD);
    RL_ASSERT(h == NULL);
    RL_ASSERT(RLRunLoopGetCurrent() == RLRunLoopGetMain());
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.1, false), kRLRunLoopRunFinished); /* nothing in it */
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(mainq_async_from_main_thread_runs_on_main_loop_in_order),
        RL_TEST(mainq_async_from_a_dispatch_worker_wakes_the_sleeping_main_loop),
        RL_TEST(mainq_drains_in_common_modes_only),
        RL_TEST(mainq_nested_run_neither_spins_nor_loses_work),
        RL_TEST(mainq_idle_main_loop_does_not_spin),
        RL_TEST(mainq_other_threads_loops_never_drain_it),
        RL_TEST(mainq_without_libdispatch_the_main_loop_is_plain),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
