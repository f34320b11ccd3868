/* test_objects.c: one object model. Hang monitors, idle queues, perform
   requests and run-loop threads are RL objects like run loops and their items:
   RLRetain, RLRelease and RLCopyDescription work on them, the type-specific
   retain/release names act on the same count, and the last release tears the
   object down exactly once, whichever name and whichever thread drops it. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

static void expect_description(const void *obj, const char *const *needles) {
    char *text = RLCopyDescription(obj);
    RL_ASSERT(text != NULL);
    for (const char *const *n = needles; *n; n++)
        if (!strstr(text, *n)) RL_FAIL_("\"%s\" not in description:\n%s", *n, text);
    free(text);
}

static atomic_int g_released;
static void count_release(const void *info) {
    (void)info;
    atomic_fetch_add(&g_released, 1);
}
static void count_task_release(void *info) {
    count_release(info);
}
static atomic_int g_ran;
static void count_run(void *info) {
    (void)info;
    atomic_fetch_add(&g_ran, 1);
}

static RLHangMonitorRef counted_monitor(double threshold) {
    RLHangMonitorContext ctx = {0, NULL, NULL, count_release, NULL};
    return RLHangMonitorCreate(RLRunLoopGetCurrent(), threshold, NULL, &ctx);
}

/* A loop whose thread has exited refuses work: it is dropped at once. */
static bool loop_is_dead(RLRunLoopRef rl) {
    return RLRunLoopPerformRequest(rl, NULL, 0, NULL, count_run, NULL, NULL, false, 0) == kRLPerformRequestDropped;
}

/* ---- each type ------------------------------------------------------------ */

static void hang_monitor_is_an_rl_object(void) {
    RLHangMonitorRef m = counted_monitor(100);
    RL_ASSERT(RLRetain(m) == m);
    RLHangMonitorRelease(m); /* one of two references */
    RL_ASSERT(RLHangMonitorIsValid(m));
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 0);
    expect_description(m, (const char *const[]){"<RLHangMonitor ", "threshold = 100.000 s", "stopped", NULL});
    RL_ASSERT(RLHangMonitorStart(m));
    expect_description(m, (const char *const[]){"started", "stalls = 0", "reports = 0", NULL});
    RLRelease(m); /* the last: invalidates, joins the watchdog */
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 1);
    struct sigaction sa;
    sigaction(RLHangMonitorGetSignal(), NULL, &sa);
    RL_ASSERT(sa.sa_handler == SIG_DFL); /* stopped: the handler is gone */

    m = counted_monitor(100);
    RLHangMonitorInvalidate(m);
    expect_description(m, (const char *const[]){"[invalid]", NULL});
    RLRelease(m);
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 2);
}

static void idle_queue_is_an_rl_object(void) {
    RLIdleQueueRef q = RLIdleQueueCreate(RLRunLoopGetCurrent(), "objects.idle", 0);
    RL_ASSERT(RLIdleQueueSubmit(q, count_run, NULL, count_task_release) != 0);
    RL_ASSERT(RLRetain(q) == q);
    RLIdleQueueRelease(q); /* one of two references */
    RL_ASSERT(RLIdleQueueIsValid(q));
    RL_ASSERT_EQ_INT(RLIdleQueueGetPendingCount(q), 1);
    expect_description(q, (const char *const[]){"<RLIdleQueue ", "mode = \"objects.idle\"", "pending = 1",
                                                "completed = 0", "valid", NULL});
    RLRelease(q); /* the last: invalidates, drops the task */
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 1);
    RL_ASSERT_EQ_INT(atomic_load(&g_ran), 0);
    q = RLIdleQueueCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0.5);
    RLIdleQueueInvalidate(q);
    expect_description(q, (const char *const[]){"[invalid]", "slice = 0.500000 s", "pending = 0", NULL});
    RLIdleQueueRelease(q);
}

static void perform_request_is_an_rl_object(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLPerformRequestRef r =
        RLRunLoopPerformRequestAfterDelay(rl, 1000, NULL, 0, NULL, count_run, NULL, count_task_release);
    RL_ASSERT(RLRetain(r) == r);
    RL_ASSERT(RLPerformRequestRetain(r) == r);
    RLPerformRequestRelease(r);
    RLRelease(r); /* releasing never cancels */
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestPending);
    expect_description(r, (const char *const[]){"<RLPerformRequest ", "pending", "delayed", NULL});
    RL_ASSERT(RLPerformRequestCancel(r));
    expect_description(r, (const char *const[]){"cancelled", NULL});
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 1);
    RLRelease(r);
}

static void thread_is_an_rl_object(void) {
    RLThreadRef t = RLThreadCreate("objects.thread");
    RL_ASSERT(RLRetain(t) == t);
    expect_description(t, (const char *const[]){"<RLThread ", "\"objects.thread\"", "not started", NULL});
    RLThreadRelease(t); /* one of two references */
    RL_ASSERT(RLThreadStart(t));
    RLRunLoopRef rl = (RLRunLoopRef)RLRetain(RLThreadGetRunLoop(t));
    expect_description(t, (const char *const[]){"running", "run loop = 0x", NULL});
    RLRelease(t); /* the last: stops and joins */
    RL_ASSERT(loop_is_dead(rl));
    RLRelease(rl);

    t = RLThreadCreate(NULL);
    RL_ASSERT(RLThreadStart(t));
    RLThreadStop(t);
    expect_description(t, (const char *const[]){"[exited]", "\"RLThread\"", NULL});
    RLThreadRelease(t);
}

/* The last release, through the generic name, on the thread itself: it stops
   and detaches (it cannot join itself). */
static void release_thread(void *info) {
    RLRelease(info);
}
static void thread_last_generic_release_on_its_own_thread(void) {
    RLThreadRef t = RLThreadCreate("objects.detach");
    RL_ASSERT(RLThreadStart(t));
    RLRunLoopRef rl = (RLRunLoopRef)RLRetain(RLThreadGetRunLoop(t));
    RLRunLoopPerformRequest(rl, NULL, 0, NULL, release_thread, t, NULL, false, 0);
    double end = rl_test_now() + 20;
    while (!loop_is_dead(rl) && rl_test_now() < end) rl_test_sleep(0.001);
    RL_ASSERT(loop_is_dead(rl));
    RLRelease(rl);
    rl_test_sleep(0.05); /* let the detached thread finish exiting */
}

/* The signal watcher behind a signal source is an internal object: the
   source's description shows it. */
static void signal_noted(int signo, uint32_t count, void *info) {
    (void)signo;
    (void)count;
    (void)info;
}
static void signal_source_describes_its_watcher(void) {
    RLRunLoopSourceRef s = RLSignalSourceCreate(SIGUSR2, 0, signal_noted, NULL);
    RL_ASSERT(s != NULL);
    expect_description(s, (const char *const[]){"<RLRunLoopSource ", "RLSignalSource signo=", NULL});
    RL_ASSERT(RLRetain(s) == s);
    RLRelease(s);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* A type's own names refuse another type's object (it would corrupt memory):
   the process aborts with a message. */
static bool aborts(void (*fn)(const void *), const void *obj) {
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 2);
        fn(obj);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}
static void thread_release_any(const void *obj) {
    RLThreadRelease((RLThreadRef)obj);
}
static void thread_retain_any(const void *obj) {
    RLThreadRetain((RLThreadRef)obj);
}
static void monitor_release_any(const void *obj) {
    RLHangMonitorRelease((RLHangMonitorRef)obj);
}
static void queue_release_any(const void *obj) {
    RLIdleQueueRelease((RLIdleQueueRef)obj);
}
static void request_release_any(const void *obj) {
    RLPerformRequestRelease((RLPerformRequestRef)obj);
}
static void request_retain_any(const void *obj) {
    RLPerformRequestRetain((RLPerformRequestRef)obj);
}

static void type_specific_names_refuse_other_objects(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLThreadRef t = RLThreadCreate("objects.type");
    RL_ASSERT(aborts(thread_release_any, rl));
    RL_ASSERT(aborts(thread_retain_any, rl));
    RL_ASSERT(aborts(monitor_release_any, t));
    RL_ASSERT(aborts(queue_release_any, t));
    RL_ASSERT(aborts(request_release_any, t));
    RL_ASSERT(aborts(request_retain_any, t));
    RL_ASSERT(!aborts(thread_retain_any, t)); /* the right type: fine */
    RLThreadRelease(t);
}

/* ---- concurrency: many threads retain and release; zero is reached once ------ */

enum { HAMMERS = 4 };

typedef struct {
    const void *obj;
    void (*alias_release)(const void *obj);
    long rounds;
    atomic_int *go;
} hammer_arg;

static void *hammer(void *p) {
    hammer_arg *a = p;
    while (!atomic_load(a->go)) {}
    for (long i = 0; i < a->rounds; i++) {
        RLRetain(a->obj);
        RLRetain(a->obj);
        if (a->alias_release) a->alias_release(a->obj);
        else RLRelease(a->obj);
        RLRelease(a->obj);
    }
    return NULL;
}

/* Retains and releases `obj` from HAMMERS threads at once, half of them
   releasing through the type's own name; the caller's reference remains. */
static void hammer_object(const void *obj, void (*alias_release)(const void *obj)) {
    atomic_int go = 0;
    pthread_t th[HAMMERS];
    hammer_arg args[HAMMERS];
    long rounds = rl_test_scaled(20000);
    for (int i = 0; i < HAMMERS; i++) {
        args[i] = (hammer_arg){obj, i % 2 ? alias_release : NULL, rounds, &go};
        RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, hammer, &args[i]), 0);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < HAMMERS; i++) pthread_join(th[i], NULL);
}

static void monitor_release(const void *m) {
    RLHangMonitorRelease((RLHangMonitorRef)m);
}
static void queue_release(const void *q) {
    RLIdleQueueRelease((RLIdleQueueRef)q);
}
static void request_release(const void *r) {
    RLPerformRequestRelease((RLPerformRequestRef)r);
}
static void thread_release(const void *t) {
    RLThreadRelease((RLThreadRef)t);
}

static void concurrent_retain_release_of_a_monitor(void) {
    RLHangMonitorRef m = counted_monitor(100);
    RL_ASSERT(RLHangMonitorStart(m));
    hammer_object(m, monitor_release);
    RL_ASSERT(RLHangMonitorIsValid(m));
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 0);
    RLRelease(m);
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 1);
}

static void concurrent_retain_release_of_an_idle_queue(void) {
    RLIdleQueueRef q = RLIdleQueueCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0);
    RLIdleQueueSubmit(q, count_run, NULL, count_task_release);
    hammer_object(q, queue_release);
    RL_ASSERT(RLIdleQueueIsValid(q));
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 0);
    RLIdleQueueRelease(q);
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 1);
}

static void concurrent_retain_release_of_a_request(void) {
    RLPerformRequestRef r = RLRunLoopPerformRequestAfterDelay(RLRunLoopGetCurrent(), 1000, NULL, 0, NULL, count_run,
                                                              NULL, count_task_release);
    hammer_object(r, request_release);
    RL_ASSERT_EQ_INT(RLPerformRequestGetStatus(r), kRLPerformRequestPending);
    RL_ASSERT(RLPerformRequestCancel(r));
    RL_ASSERT_EQ_INT(atomic_load(&g_released), 1);
    RLRelease(r);
}

static void concurrent_retain_release_of_a_thread(void) {
    RLThreadRef t = RLThreadCreate("objects.hammer");
    RL_ASSERT(RLThreadStart(t));
    RLRunLoopRef rl = (RLRunLoopRef)RLRetain(RLThreadGetRunLoop(t));
    hammer_object(t, thread_release);
    RL_ASSERT(!RLThreadHasExited(t));
    RL_ASSERT(!loop_is_dead(rl));
    RLThreadRelease(t);
    RL_ASSERT(loop_is_dead(rl));
    RLRelease(rl);
}

/* Several threads drop the last references at the same moment, half through
   the type's own name: the teardown runs once, on one of them. */
typedef struct {
    const void *obj;
    void (*release)(const void *obj);
    atomic_int *ready;
    atomic_int *go;
} last_arg;

static void *drop_one(void *p) {
    last_arg *a = p;
    atomic_fetch_add(a->ready, 1);
    while (!atomic_load(a->go)) {}
    a->release(a->obj);
    return NULL;
}

static void generic_release(const void *obj) {
    RLRelease(obj);
}

/* Hands the creator's reference and HAMMERS - 1 more to as many threads,
   which drop them together. */
static void drop_together(const void *obj, void (*alias_release)(const void *obj)) {
    atomic_int ready = 0, go = 0;
    pthread_t th[HAMMERS];
    last_arg args[HAMMERS];
    for (int i = 0; i < HAMMERS; i++) {
        if (i > 0) RLRetain(obj);
        args[i] = (last_arg){obj, i % 2 ? alias_release : generic_release, &ready, &go};
        RL_ASSERT_EQ_INT(pthread_create(&th[i], NULL, drop_one, &args[i]), 0);
    }
    while (atomic_load(&ready) < HAMMERS) {}
    atomic_store(&go, 1);
    for (int i = 0; i < HAMMERS; i++) pthread_join(th[i], NULL);
}

static void last_references_dropped_together_tear_down_once(void) {
    for (int round = 0; round < rl_test_scaled(50); round++) {
        atomic_store(&g_released, 0);
        RLHangMonitorRef m = counted_monitor(100);
        RL_ASSERT(RLHangMonitorStart(m));
        drop_together(m, monitor_release);
        RL_ASSERT_EQ_INT(atomic_load(&g_released), 1); /* invalidated once */

        RLIdleQueueRef q = RLIdleQueueCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0);
        RLIdleQueueSubmit(q, count_run, NULL, count_task_release);
        drop_together(q, queue_release);
        RL_ASSERT_EQ_INT(atomic_load(&g_released), 2); /* its task dropped once */
    }
    for (int round = 0; round < rl_test_scaled(20); round++) {
        RLThreadRef t = RLThreadCreate("objects.last");
        RL_ASSERT(RLThreadStart(t));
        RLRunLoopRef rl = (RLRunLoopRef)RLRetain(RLThreadGetRunLoop(t));
        drop_together(t, thread_release);
        RL_ASSERT(loop_is_dead(rl)); /* stopped and joined */
        RLRelease(rl);
    }
    RL_ASSERT_EQ_INT(atomic_load(&g_ran), 0);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(hang_monitor_is_an_rl_object),
        RL_TEST(idle_queue_is_an_rl_object),
        RL_TEST(perform_request_is_an_rl_object),
        RL_TEST(thread_is_an_rl_object),
        RL_TEST(thread_last_generic_release_on_its_own_thread),
        RL_TEST(signal_source_describes_its_watcher),
        RL_TEST(type_specific_names_refuse_other_objects),
        RL_TEST(concurrent_retain_release_of_a_monitor),
        RL_TEST(concurrent_retain_release_of_an_idle_queue),
        RL_TEST(concurrent_retain_release_of_a_request),
        RL_TEST(concurrent_retain_release_of_a_thread),
        RL_TEST(last_references_dropped_together_tear_down_once),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
