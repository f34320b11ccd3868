#define _GNU_SOURCE
/* The adaptive spin before sleeping: a loop in a conversation with another
   thread answers without sleeping, loses no wake-up, and goes back to real
   sleep (no CPU) once the conversation stops. CPU time, not wall time, is
   asserted, so a loaded machine cannot make these flaky. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CRunLoop.h>
#include "rltest.h"

static double thread_cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

typedef struct {
    RLRunLoopRef loop; /* retained */
    atomic_long answered;
    atomic_int running;
    atomic_int done;
    double idle_cpu; /* CPU the loop thread used while idle */
} chat;

static void answer(void *info) {
    chat *c = info;
    atomic_fetch_add(&c->answered, 1);
}

/* n round trips: each function queued to the loop is answered before the
   next is sent (a ping-pong, the pattern that makes it spin). */
static void converse(chat *c, long n) {
    for (long i = 0; i < n; i++) {
        RLRunLoopPerformFunction(c->loop, kRLRunLoopDefaultMode, answer, c);
        RLRunLoopWakeUp(c->loop);
        while (atomic_load(&c->answered) <= i) sched_yield();
    }
}

static void pin_to_the_first_cpu(void) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
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
    converse(&c, n);
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

/* On one CPU a spin can never be answered (the other thread cannot run while
   the loop spins): a loop whose spins keep failing must stop spinning, not
   burn its spin time on every other round trip. */
static void *pinned_loop_thread(void *arg) {
    chat *c = arg;
    pin_to_the_first_cpu();
    c->loop = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    RLRunLoopSourceRef keep = rl_test_keep_mode(c->loop, kRLRunLoopDefaultMode);
    atomic_store(&c->running, 1);
    double cpu0 = thread_cpu_seconds();
    while (!atomic_load(&c->done)) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false);
    c->idle_cpu = thread_cpu_seconds() - cpu0;
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    return NULL;
}

static void spins_that_keep_failing_stop(void) {
    static chat c;
    pin_to_the_first_cpu();
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, pinned_loop_thread, &c), 0);
    while (!atomic_load(&c.running)) rl_test_sleep(0.001);
    long n = rl_test_scaled(4000);
    double t0 = thread_cpu_seconds();
    converse(&c, n);
    double waker_cpu = thread_cpu_seconds() - t0;
    atomic_store(&c.done, 1);
    RLRunLoopWakeUp(c.loop);
    pthread_join(th, NULL);
    printf("  pinned to one CPU: loop thread %.1f us of CPU per round trip, waker %.1f us\n",
           c.idle_cpu / (double)n * 1e6, waker_cpu / (double)n * 1e6);
    /* Failing spins cost the loop 20 us each; the sleeps and wake-ups
       themselves cost it less than the waker's side of the round trip.
       Under valgrind (which runs one thread at a time and charges each its
       own instrumentation) CPU times say nothing about spinning: there only
       the round trips themselves are checked. */
    if (rl_test_scaled(2) == 2) RL_ASSERT_LE_DBL(c.idle_cpu, 2 * waker_cpu + 0.01);
    RLRelease(c.loop);
}

/* A loop whose answered spins skip polling its descriptors still polls them
   during a conversation, at least every 64 answered spins (and every
   50 us): a descriptor made ready while another thread keeps the loop
   answering is reported within 65 round trips, whether the loop spins or
   sleeps. Each cycle makes the descriptor ready, then talks with the loop. */
typedef struct {
    chat chat;
    int fd;
    atomic_int ready_seen;
} watched_chat;

static int watched_fd(void *info) {
    return ((watched_chat *)info)->fd;
}

static void descriptor_ready(void *info) {
    watched_chat *w = info;
    uint64_t v;
    RL_ASSERT_EQ_INT(read(w->fd, &v, sizeof v), (int)sizeof v);
    atomic_fetch_add(&w->ready_seen, 1);
}

static void *watching_loop_thread(void *arg) {
    watched_chat *w = arg;
    w->chat.loop = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    RLRunLoopSourceRef src = rl_test_source1(0, watched_fd, descriptor_ready, w);
    RLRunLoopAddSource(w->chat.loop, src, kRLRunLoopDefaultMode);
    atomic_store(&w->chat.running, 1);
    while (!atomic_load(&w->chat.done)) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, false);
    RLRunLoopSourceInvalidate(src);
    RLRelease(src);
    return NULL;
}

static void descriptors_are_polled_during_a_conversation(void) {
    static watched_chat w;
    w.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    RL_ASSERT(w.fd >= 0);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, watching_loop_thread, &w), 0);
    while (!atomic_load(&w.chat.running)) rl_test_sleep(0.001);
    long cycles = rl_test_scaled(2000);
    for (long i = 0; i < cycles; i++) {
        uint64_t one = 1;
        RL_ASSERT_EQ_INT(write(w.fd, &one, sizeof one), (int)sizeof one);
        atomic_store(&w.chat.answered, 0);
        converse(&w.chat, 65);
        RL_ASSERT_EQ_INT(atomic_load(&w.ready_seen), i + 1);
    }
    atomic_store(&w.chat.done, 1);
    RLRunLoopWakeUp(w.chat.loop);
    pthread_join(th, NULL);
    close(w.fd);
    RLRelease(w.chat.loop);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(conversation_loses_nothing_and_then_sleeps),
        RL_TEST(stop_sent_during_a_spin_is_not_lost),
        RL_TEST(spins_that_keep_failing_stop),
        RL_TEST(descriptors_are_polled_during_a_conversation),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
