/*
 * test_exhaustion.c: out of file descriptors, every API fails the way its
 * header says (NULL, false or a status), the process lives, and everything
 * works again once descriptors are back. Each test lowers RLIMIT_NOFILE in
 * its own forked process and fills the table.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <CRunLoop.h>
#include <CRunLoopMonitor.h>
#include <CRunLoopThread.h>
#include "rltest.h"

/* ---- an exhausted descriptor table ---------------------------------------- */

static int *hoard;
static int hoarded;

/* Lowers the limit (valgrind refuses: its own, lower, limit serves then)
   and takes every free descriptor. */
static void exhaust_fds(void) {
    struct rlimit lim = {64, 64};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) RL_ASSERT_EQ_INT(getrlimit(RLIMIT_NOFILE, &lim), 0);
    RL_ASSERT_LE_INT(lim.rlim_cur, 1 << 16);
    hoard = malloc(lim.rlim_cur * sizeof *hoard);
    RL_ASSERT(hoard != NULL);
    int fd;
    while ((rlim_t)hoarded < lim.rlim_cur && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) hoard[hoarded++] = fd;
    RL_ASSERT_EQ_INT(errno, EMFILE);
    RL_ASSERT(hoarded > 0);
}

static void give_back_fds(void) {
    while (hoarded > 0) close(hoard[--hoarded]);
    free(hoard);
    hoard = NULL;
}

static void *on_thread(void *(*fn)(void *), void *arg) {
    pthread_t t;
    void *result = NULL;
    RL_ASSERT_EQ_INT(pthread_create(&t, NULL, fn, arg), 0);
    RL_ASSERT_EQ_INT(pthread_join(t, &result), 0);
    return result;
}

static void nothing(void *info) {
    (void)info;
}

/* ---- tests ------------------------------------------------------------------ */

static void *current_loop(void *arg) {
    (void)arg;
    return RLRunLoopGetCurrent();
}

static void *current_loop_twice(void *arg) {
    int *step = arg;
    RLRunLoopRef first = RLRunLoopGetCurrent();
    RLRunLoopRunResult r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    give_back_fds();
    RLRunLoopRef second = RLRunLoopGetCurrent();
    *step = (first == NULL) + 2 * (r == kRLRunLoopRunFinished) + 4 * (second != NULL);
    return NULL;
}

static void get_current_is_null_without_fds_and_recovers(void) {
    exhaust_fds();
    RL_ASSERT(on_thread(current_loop, NULL) == NULL);
    int step = 0;
    on_thread(current_loop_twice, &step);
    RL_ASSERT_EQ_INT(step, 7);
    RL_ASSERT(on_thread(current_loop, NULL) != NULL);
}

static void get_main_is_null_without_fds_and_recovers(void) {
    exhaust_fds();
    RL_ASSERT(RLRunLoopGetMain() == NULL);
    RL_ASSERT(RLRunLoopGetCurrent() == NULL); /* this is the main thread */
    give_back_fds();
    RLRunLoopRef main_loop = RLRunLoopGetMain();
    RL_ASSERT(main_loop != NULL);
    RL_ASSERT(RLRunLoopGetCurrent() == main_loop);
}

static void *perform_and_wait(void *arg) {
    RLRunLoopRef target = arg;
    return (void *)(intptr_t)RLRunLoopPerformRequest(target, NULL, 0, NULL, nothing, NULL, NULL, true, INFINITY);
}

static void perform_and_wait_from_a_thread_without_a_loop(void) {
    RLThreadRef th = RLThreadCreate("target");
    RL_ASSERT(RLThreadStart(th));
    RLRunLoopRef target = RLThreadGetRunLoop(th);
    exhaust_fds();
    /* The caller has no loop and cannot make one: it needs none to wait. */
    RL_ASSERT_EQ_INT((intptr_t)on_thread(perform_and_wait, target), kRLPerformRequestDone);
    give_back_fds();
    RLThreadStop(th);
    RLThreadRelease(th);
}

static void thread_start_fails_without_fds_and_recovers(void) {
    exhaust_fds();
    RLThreadRef th = RLThreadCreate("no-fds");
    RL_ASSERT(th != NULL);
    RL_ASSERT(!RLThreadStart(th));
    RL_ASSERT(RLThreadGetRunLoop(th) == NULL);
    RLThreadStop(th);
    RLThreadRelease(th);
    give_back_fds();
    th = RLThreadCreate("fds-back");
    RL_ASSERT(RLThreadStart(th));
    RLRunLoopRef rl = RLThreadGetRunLoop(th);
    RL_ASSERT(rl != NULL);
    RL_ASSERT_EQ_INT(RLRunLoopPerformRequest(rl, NULL, 0, NULL, nothing, NULL, NULL, true, INFINITY),
                     kRLPerformRequestDone);
    RLThreadStop(th);
    RLThreadRelease(th);
}

static void *make_monitor(void *arg) {
    RLRunLoopRef rl = arg;
    RLHangMonitorRef m = RLHangMonitorCreate(rl, 1.0, NULL, NULL);
    if (m) {
        RLHangMonitorStart(m);
        RLHangMonitorInvalidate(m);
        RLHangMonitorRelease(m);
    }
    return NULL;
}

static void hang_monitor_create_without_fds_lives(void) {
    RLThreadRef th = RLThreadCreate("watched");
    RL_ASSERT(RLThreadStart(th));
    RLRunLoopRef rl = RLThreadGetRunLoop(th);
    exhaust_fds();
    on_thread(make_monitor, rl); /* from a thread that has no loop */
    make_monitor(rl);
    give_back_fds();
    RLThreadStop(th);
    RLThreadRelease(th);
}

/* ---- no thread-specific key left ----------------------------------------- */

/* The process used up its thread-specific keys (PTHREAD_KEYS_MAX) before
   the library made its own, each holding a value on this thread. Before:
   the key's creation failed unnoticed and the library read another key's
   value as this thread's loop (a crash). Now no loop is current (NULL), and
   one is made once a key is free. Runs on a second thread, so the main
   loop (made without the key) is not what is asked for. */
static void *get_current_without_keys(void *arg) {
    (void)arg;
    static pthread_key_t keys[4096];
    int made = 0;
    while (made < 4096 && pthread_key_create(&keys[made], NULL) == 0) {
        pthread_setspecific(keys[made], (void *)(intptr_t)0x5a5a5a5a);
        made++;
    }
    RL_ASSERT(made < 4096);
    RL_ASSERT(RLRunLoopGetCurrent() == NULL);
    pthread_key_delete(keys[--made]);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(rl != NULL);
    RL_ASSERT(RLRunLoopGetCurrent() == rl);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunFinished);
    return NULL;
}

static void get_current_is_null_without_thread_keys_and_recovers(void) {
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, get_current_without_keys, NULL), 0);
    pthread_join(th, NULL);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(get_current_is_null_without_fds_and_recovers),
        RL_TEST(get_main_is_null_without_fds_and_recovers),
        RL_TEST(perform_and_wait_from_a_thread_without_a_loop),
        RL_TEST(thread_start_fails_without_fds_and_recovers),
        RL_TEST(hang_monitor_create_without_fds_lives),
        RL_TEST(get_current_is_null_without_thread_keys_and_recovers),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
