/* test_observers.c: observers are called in `order` (ties in the order
   added), only for their activities; non-repeating ones once; invalidation
   and removal from inside their own callout; one run loop per observer. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static RLRunLoopObserverRef obs(RLOptionFlags act, bool repeats, RLIndex order, RLRunLoopObserverCallBack cb,
                                long info) {
    RLRunLoopObserverContext c = {0, (void *)(intptr_t)info, NULL, NULL, NULL};
    return RLRunLoopObserverCreate(act, repeats, order, cb, &c);
}

static void observers_are_called_by_order_then_insertion(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static const RLIndex orders[] = {3, 1, 3, 2, 1, -5, 3, 0};
    enum { N = sizeof orders / sizeof orders[0] };
    RLRunLoopObserverRef o[N];
    for (int i = 0; i < N; i++) {
        o[i] = obs(kRLRunLoopBeforeTimers, true, orders[i], rl_test_log_observe, i);
        RLRunLoopAddObserver(rl, o[i], kRLRunLoopDefaultMode);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 5, 7, 1, 4, 3, 0, 2, 6);
    /* Removing and re-adding puts it last among its order. */
    RLRunLoopRemoveObserver(rl, o[1], kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, o[1], kRLRunLoopDefaultMode);
    rl_test_callouts.n = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 5, 7, 4, 1, 3, 0, 2, 6);
    for (int i = 0; i < N; i++) {
        RLRunLoopObserverInvalidate(o[i]);
        RLRelease(o[i]);
    }
    RLRelease(keep);
}

static void log_activity(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)info;
    rl_test_log_add(&rl_test_callouts, (long)a);
}

static void observers_get_only_the_activities_they_asked_for(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopBeforeWaiting | kRLRunLoopExit, true, 0, log_activity, 0);
    RLRunLoopObserverRef none = obs(0, true, 0, log_activity, 0);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, none, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false), kRLRunLoopRunTimedOut);
    RL_ASSERT(rl_test_callouts.n >= 2);
    for (int i = 0; i < rl_test_callouts.n - 1; i++) RL_ASSERT_EQ_INT(rl_test_callouts.ev[i], kRLRunLoopBeforeWaiting);
    RL_ASSERT_EQ_INT(rl_test_callouts.ev[rl_test_callouts.n - 1], kRLRunLoopExit);
    rl_test_callouts.n = 0;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopExit);
    RLRelease(o);
    RLRelease(none);
    RLRelease(keep);
}

static RLRunLoopObserverRef g_obs;
static void check_args(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    RL_ASSERT(o == g_obs);
    RL_ASSERT(info == &rl_test_callouts);
    rl_test_log_add(&rl_test_callouts, (long)a);
}

static void callout_gets_the_observer_activity_and_info(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverContext c = {0, &rl_test_callouts, NULL, NULL, NULL};
    g_obs = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, check_args, &c);
    RLRunLoopAddObserver(rl, g_obs, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry, kRLRunLoopBeforeTimers, kRLRunLoopBeforeSources, kRLRunLoopExit);
    RLRelease(g_obs);
    RLRelease(keep);
}

static void non_repeating_observer_is_invalidated_after_its_first_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopBeforeTimers | kRLRunLoopExit, false, 0, log_activity, 0);
    RL_ASSERT(!RLRunLoopObserverDoesRepeat(o));
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopBeforeTimers);
    RL_ASSERT(!RLRunLoopObserverIsValid(o));
    RL_ASSERT(!RLRunLoopContainsObserver(rl, o, kRLRunLoopDefaultMode));
    RLRelease(o);
    RLRelease(keep);
}

static void invalidate_self(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, (long)a);
    RLRunLoopObserverInvalidate(o);
    RL_ASSERT(!RLRunLoopObserverIsValid(o));
}

static void observer_can_invalidate_itself_in_its_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopAllActivities, true, 0, invalidate_self, 0);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, o, "other");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry);
    RL_ASSERT(!RLRunLoopContainsObserver(rl, o, kRLRunLoopDefaultMode));
    RL_ASSERT(!RLRunLoopContainsObserver(rl, o, "other"));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry);
    RLRelease(o);
    RLRelease(keep);
}

static void remove_self(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)info;
    rl_test_log_add(&rl_test_callouts, (long)a);
    RLRunLoopRemoveObserver(RLRunLoopGetCurrent(), o, kRLRunLoopDefaultMode);
}

static void observer_can_remove_itself_in_its_callout(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopBeforeTimers | kRLRunLoopBeforeSources, true, 0, remove_self, 0);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRelease(o); /* the loop holds it while it calls out */
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopBeforeTimers);
    RLRelease(keep);
}

static void removed_observer_is_still_valid_and_can_be_added_again(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopEntry, true, 0, log_activity, 0);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopObserverIsValid(o));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRelease(keep);
}

/* ---- one loop per observer ---- */

static void *add_to_own_loop(void *arg) {
    RLRunLoopObserverRef o = arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(rl, o, kRLRunLoopCommonModes);
    intptr_t bad = RLRunLoopContainsObserver(rl, o, kRLRunLoopDefaultMode) ||
                   RLRunLoopContainsObserver(rl, o, kRLRunLoopCommonModes);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    return (void *)bad;
}

static void adding_an_observer_to_a_second_run_loop_is_ignored(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopEntry, true, 0, log_activity, 0);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    pthread_t th;
    void *bad = (void *)1;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, add_to_own_loop, o), 0);
    pthread_join(th, &bad);
    RL_ASSERT(bad == NULL);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0); /* not called by the other thread's loop */
    RL_ASSERT(RLRunLoopContainsObserver(rl, o, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, kRLRunLoopEntry);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRelease(keep);
}

/* ---- getters, context, info lifetime ---- */

static rl_test_counted g_info;
static char *info_desc(const void *info) {
    (void)info;
    return strdup("obs-info");
}

static void getters_and_context(void) {
    RLRunLoopObserverContext c = {0, &g_info, rl_test_counted_retain, rl_test_counted_release, info_desc};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry | kRLRunLoopExit, true, 42, log_activity, &c);
    RL_ASSERT(o != NULL);
    RL_ASSERT_EQ_INT(RLRunLoopObserverGetActivities(o), kRLRunLoopEntry | kRLRunLoopExit);
    RL_ASSERT(RLRunLoopObserverDoesRepeat(o));
    RL_ASSERT_EQ_INT(RLRunLoopObserverGetOrder(o), 42);
    RL_ASSERT(RLRunLoopObserverIsValid(o));
    RLRunLoopObserverContext got;
    memset(&got, 0, sizeof got);
    RLRunLoopObserverGetContext(o, &got);
    RL_ASSERT(got.info == &g_info);
    RL_ASSERT(got.retain == rl_test_counted_retain);
    RL_ASSERT(got.release == rl_test_counted_release);
    RL_ASSERT(got.copyDescription == info_desc);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    RLRelease(o);
    RL_ASSERT_EQ_INT(g_info.refs, 0);

    /* NULL context: info is NULL. */
    RLRunLoopObserverRef o2 = RLRunLoopObserverCreate(kRLRunLoopEntry, false, -1, log_activity, NULL);
    RL_ASSERT(o2 != NULL);
    RLRunLoopObserverGetContext(o2, &got);
    RL_ASSERT(got.info == NULL);
    RL_ASSERT(!RLRunLoopObserverDoesRepeat(o2));
    RL_ASSERT_EQ_INT(RLRunLoopObserverGetOrder(o2), -1);
    RLRelease(o2);
}

static void invalidate_releases_the_info(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopObserverContext c = {0, &g_info, rl_test_counted_retain, rl_test_counted_release, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, log_activity, &c);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(g_info.refs, 1);
    RLRunLoopObserverInvalidate(o);
    RL_ASSERT_EQ_INT(g_info.refs, 0);
    RL_ASSERT(!RLRunLoopObserverIsValid(o));
    RLRunLoopObserverInvalidate(o);
    RL_ASSERT_EQ_INT(g_info.releases, g_info.retains);
    RLRelease(o);
    RL_ASSERT_EQ_INT(g_info.releases, g_info.retains);
    RL_ASSERT_EQ_INT(g_info.refs, 0);
}

/* An observer in another mode is not called. */
static void observer_in_another_mode_is_not_called(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverRef o = obs(kRLRunLoopAllActivities, true, 0, log_activity, 0);
    RLRunLoopAddObserver(rl, o, "other");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.02, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_callouts.n, 0);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
    RLRelease(keep);
}

/* Another thread invalidates an observer while its callout runs: the info
   the callout is using stays retained until the callout returns (as for
   timers), and is released exactly once, after it. */
static atomic_int mid_releases;
static atomic_int mid_stage; /* 1: callout waiting; 2: invalidated */
static int mid_released_during_callout = -1;
static void mid_release(const void *info) {
    (void)info;
    atomic_fetch_add(&mid_releases, 1);
}
static void mid_callout(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    if (mid_released_during_callout >= 0) return;
    atomic_store(&mid_stage, 1);
    while (atomic_load(&mid_stage) != 2) sched_yield();
    mid_released_during_callout = atomic_load(&mid_releases);
}
static void *mid_invalidator(void *arg) {
    while (atomic_load(&mid_stage) != 1) sched_yield();
    RLRunLoopObserverInvalidate(arg);
    atomic_store(&mid_stage, 2);
    return NULL;
}

static void invalidation_from_another_thread_waits_for_the_callout_to_release_info(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopObserverContext c = {0, &mid_stage, NULL, mid_release, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeTimers, true, 0, mid_callout, &c);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, mid_invalidator, o), 0);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.05, true);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(mid_released_during_callout, 0);
    RL_ASSERT_EQ_INT(atomic_load(&mid_releases), 1);
    RL_ASSERT(!RLRunLoopObserverIsValid(o));
    RLRelease(o);
    RL_ASSERT_EQ_INT(atomic_load(&mid_releases), 1);
    RLRelease(keep);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(observers_are_called_by_order_then_insertion),
        RL_TEST(observers_get_only_the_activities_they_asked_for),
        RL_TEST(callout_gets_the_observer_activity_and_info),
        RL_TEST(non_repeating_observer_is_invalidated_after_its_first_callout),
        RL_TEST(observer_can_invalidate_itself_in_its_callout),
        RL_TEST(observer_can_remove_itself_in_its_callout),
        RL_TEST(removed_observer_is_still_valid_and_can_be_added_again),
        RL_TEST(adding_an_observer_to_a_second_run_loop_is_ignored),
        RL_TEST(getters_and_context),
        RL_TEST(invalidate_releases_the_info),
        RL_TEST(observer_in_another_mode_is_not_called),
        RL_TEST(invalidation_from_another_thread_waits_for_the_callout_to_release_info),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
