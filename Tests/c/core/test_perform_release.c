/* RLRunLoopPerformFunctionWithRelease: info is released exactly once, whether
   the function ran, was dropped at thread exit, or was never queued.
   RLRunLoopPerformPayload: its function sees the item's own copy of the
   payload exactly once, told whether it runs or is dropped. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
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
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
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
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 4);
}

/* A payload: a tally to count into and a tag, as two words. */
typedef struct {
    tally *t;
    void *tag;
} payload;

static int payload_order[8];
static atomic_int payload_count;

/* Run or dropped: counted in the payload's tally either way. */
static void payload_fn(void *p, bool run) {
    payload copy;
    memcpy(&copy, p, sizeof copy);
    if (!run) {
        atomic_fetch_add(&copy.t->released, 1);
        return;
    }
    atomic_fetch_add(&copy.t->ran, 1);
    payload_order[atomic_fetch_add(&payload_count, 1) % 8] = (int)(intptr_t)copy.tag;
}

static void note_order(void *info) {
    payload_order[atomic_fetch_add(&payload_count, 1) % 8] = (int)(intptr_t)info;
}

static void payload_is_copied_runs_once_in_order_and_is_not_dropped(void) {
    static tally t;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    _Static_assert(sizeof(payload) <= RL_PERFORM_PAYLOAD_SIZE, "payload fits");
    payload p = {&t, (void *)1};
    RLRunLoopPerformPayload(rl, kRLRunLoopDefaultMode, payload_fn, &p);
    p.tag = (void *)99; /* the item kept its own copy */
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, note_order, (void *)2);
    p.tag = (void *)3;
    RLRunLoopPerformPayload(rl, kRLRunLoopCommonModes, payload_fn, &p);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&payload_count), 3);
    RL_ASSERT_EQ_INT(payload_order[0], 1);
    RL_ASSERT_EQ_INT(payload_order[1], 2);
    RL_ASSERT_EQ_INT(payload_order[2], 3);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 2);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 0);
}

static void *queue_payloads_and_exit(void *arg) {
    payload p = {arg, NULL};
    RLRunLoopPerformPayload(RLRunLoopGetCurrent(), "never-run", payload_fn, &p);
    RLRunLoopPerformPayload(RLRunLoopGetCurrent(), kRLRunLoopCommonModes, payload_fn, &p);
    return NULL;
}

static void dropped_payload_is_dropped_at_thread_exit(void) {
    static tally t;
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, queue_payloads_and_exit, &t), 0);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 0);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 2);
}

static void payload_with_bad_input_is_dropped_at_once(void) {
    static tally t;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    payload p = {&t, NULL};
    RLRunLoopPerformPayload(NULL, kRLRunLoopDefaultMode, payload_fn, &p);
    RLRunLoopPerformPayload(rl, NULL, payload_fn, &p);
    RLRunLoopPerformPayload(rl, "", payload_fn, &p);
    RLRunLoopPerformPayload(rl, kRLRunLoopDefaultMode, NULL, &p);         /* no function: ignored */
    RLRunLoopPerformPayload(rl, kRLRunLoopDefaultMode, payload_fn, NULL); /* no payload: ignored */
    RLRunLoopPerformPayload(rl, kRLRunLoopDefaultMode, payload_fn, &p);   /* runs */
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 3);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&t.ran), 1);
    RL_ASSERT_EQ_INT(atomic_load(&t.released), 3);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(release_follows_the_run),
        RL_TEST(dropped_work_is_released_at_thread_exit),
        RL_TEST(bad_input_releases_at_once),
        RL_TEST(payload_is_copied_runs_once_in_order_and_is_not_dropped),
        RL_TEST(dropped_payload_is_dropped_at_thread_exit),
        RL_TEST(payload_with_bad_input_is_dropped_at_once),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
