/* RLRunLoopPerformFunctionWithRelease: info is released exactly once, whether
   the function ran, was dropped at thread exit, or was never queued. */
#include <pthread.h>
#include <stdatomic.h>
#include "rltest.h"
#include <CRunLoop.h>

typedef struct {
    atomic_int ran;
    atomic_int released;
    atomic_int ran_before_release;
} tally;

static void note_run(void *info) {
    tally *t = info;
    atomic_fetch_add(&t->ran, 1);
}

static void note_release(void *info) {
    tally *t = info;
    if (atomic_load(&t->ran)) atomic_fetch_add(&t->ran_before_release, 1);
    atomic_fetch_add(&t->released, 1);
}

static void release_follows_the_run(void) {
    static tally t;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    for (int i = 0; i < 3; i++)
        RLRunLoopPerformFunctionWithRelease(rl, kRLRunLoopDefaultMode, note_run, &t, note_release);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 3);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 3);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran_before_release), 3);
}

static void *queue_and_exit(void *arg) {
    RLRunLoopPerformFunctionWithRelease(RLRunLoopGetCurrent(), "never-run", note_run, arg, note_release);
    RLRunLoopPerformFunctionWithRelease(RLRunLoopGetCurrent(), kRLRunLoopCommonModes, note_run, arg, note_release);
    return NULL;
}

static void dropped_work_is_released_at_thread_exit(void) {
    static tally t;
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, queue_and_exit, &t), 0);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 2);
}

static void bad_input_releases_at_once(void) {
    static tally t;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunctionWithRelease(NULL, kRLRunLoopDefaultMode, note_run, &t, note_release);
    RLRunLoopPerformFunctionWithRelease(rl, NULL, note_run, &t, note_release);
    RLRunLoopPerformFunctionWithRelease(rl, "", note_run, &t, note_release);
    RLRunLoopPerformFunctionWithRelease(rl, kRLRunLoopDefaultMode, NULL, &t, note_release);
    RLRunLoopPerformFunctionWithRelease(rl, kRLRunLoopDefaultMode, note_run, &t, NULL); /* runs, nothing to release */
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 4);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 4);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(release_follows_the_run),
        RL_TEST(dropped_work_is_released_at_thread_exit),
        RL_TEST(bad_input_releases_at_once),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
