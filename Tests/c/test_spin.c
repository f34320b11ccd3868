/* The adaptive spin before sleeping: a loop in a conversation with another
   thread answers without sleeping, loses no wake-up, and goes back to real
   sleep (no CPU) once the conversation stops. CPU time, not wall time, is
   asserted, so a loaded machine cannot make these flaky. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <CRunLoop.h>
#include "rltest.h"

static double thread_cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

typedef struct {
    RLRunLoopRef loop;          /* retained */
    atomic_long answered;
    atomic_int running;
    atomic_int done;
    double idle_cpu;            /* CPU the loop thread used while idle */
} chat;

static void answer(void *info) {
    chat *c = info;
    atomic_fetch_add(&c->answered, 1);
}

static void stop_loop(void *info) {
    (void)info;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *loop_thread(void *arg) {
    chat *c = arg;
    c->loop = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    RLRunLoopSourceRef keep = rl_test_keep_mode(c->loop, kRLRunLoopDefaultMode);
    atomic_store(&c->running, 1);
    /* The conversation. */
    while (!atomic_load(&c->done)) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false);
    /* Idle: nobody talks to the loop any more for 300 ms. */
    double cpu0 = thread_cpu_seconds();
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.3, false);
    c->idle_cpu = thread_cpu_seconds() - cpu0;
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    return NULL;
}

static void conversation_loses_nothing_and_then_sleeps(void) {
    static chat c;
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, loop_thread, &c), 0);
    while (!atomic_load(&c.running)) rl_test_sleep(0.001);
    long n = rl_test_scaled(50000);
    for (long i = 0; i < n; i++) {
        RLRunLoopPerformFunction(c.loop, kRLRunLoopDefaultMode, answer, &c);
        RLRunLoopWakeUp(c.loop);
        /* Wait for the answer: a ping-pong, the pattern that makes it spin. */
        while (atomic_load(&c.answered) <= i) sched_yield();
    }
    RL_ASSERT_EQ_INT(atomic_load(&c.answered), n);
    atomic_store(&c.done, 1);
    RLRunLoopWakeUp(c.loop);
    pthread_join(th, NULL);
    /* A spinning loop would burn most of the 300 ms; a sleeping one ~none. */
    RL_ASSERT_LE_DBL(c.idle_cpu, 0.05);
    RLRelease(c.loop);
}

static void *stopper(void *arg) {
    RLRunLoopRef rl = arg;
    for (int i = 0; i < 2000; i++) {
        RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_nothing, NULL);
        RLRunLoopWakeUp(rl);
    }
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, stop_loop, NULL);
    RLRunLoopWakeUp(rl);
    return NULL;
}

static void stop_sent_during_a_spin_is_not_lost(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, stopper, rl), 0);
    /* No time limit: a lost wake-up would hang until the harness kills it. */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(conversation_loses_nothing_and_then_sleeps),
        RL_TEST(stop_sent_during_a_spin_is_not_lost),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
