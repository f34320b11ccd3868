/* test_observers.c: observers are called in `order` (ties in the order
   added), only for their activities; non-repeating ones once; invalidation
   and removal from inside their own callout; one run loop per observer, and
   an observer moved to another loop by its own callout is called there; CF's
   ownership rules for the context info (released once, never bracketed
   around a callout). */
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

/* Two loops bounce observers (of BeforeWaiting and AfterWaiting) between
   them from the observers' own callouts: each callout runs on the loop its
   observer is in. */
typedef struct {
    RLRunLoopRef loops[2];
    atomic_int calls;
    atomic_int wrong_loop;
} obs_bounce_rec;
static obs_bounce_rec g_obs_bounce;

static void bounce_observer(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)a;
    (void)info;
    RLRunLoopRef cur = RLRunLoopGetCurrent();
    int side = cur == g_obs_bounce.loops[1];
    if (cur != g_obs_bounce.loops[side]) atomic_fetch_add(&g_obs_bounce.wrong_loop, 1);
    atomic_fetch_add(&g_obs_bounce.calls, 1);
    RLRunLoopRemoveObserver(cur, o, kRLRunLoopDefaultMode);
    RLRunLoopAddObserver(g_obs_bounce.loops[!side], o, kRLRunLoopDefaultMode);
    RLRunLoopWakeUp(g_obs_bounce.loops[!side]);
}

static void observers_bounced_between_two_loops_by_their_callouts(void) {
    RLThreadRef th[2];
    rl_test_start_loops_on_threads(2, th, g_obs_bounce.loops);
    enum { N = 8 };
    RLRunLoopObserverRef o[N];
    for (int i = 0; i < N; i++) {
        o[i] =
            RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting | kRLRunLoopAfterWaiting, true, i, bounce_observer, NULL);
        RLRunLoopAddObserver(g_obs_bounce.loops[i & 1], o[i], kRLRunLoopDefaultMode);
        RLRunLoopWakeUp(g_obs_bounce.loops[i & 1]);
    }
    int want = (int)rl_test_scaled(4000);
    double end = rl_test_now() + 60;
    while (atomic_load(&g_obs_bounce.calls) < want && rl_test_now() < end) rl_test_sleep(0.005);
    RL_ASSERT_GE_INT(atomic_load(&g_obs_bounce.calls), want);
    for (int i = 0; i < N; i++) RLRunLoopObserverInvalidate(o[i]);
    RL_ASSERT_EQ_INT(atomic_load(&g_obs_bounce.wrong_loop), 0);
    rl_test_stop_loops_on_threads(2, th, g_obs_bounce.loops);
    for (int i = 0; i < N; i++) RLRelease(o[i]);
}

/* The info is freed by its release: an observer must not touch it after
   that, nor release it per callout (CF never brackets observer callouts). */
typedef struct {
    int calls;
} heap_info;
static int g_heap_info_frees;
static void heap_info_free(const void *info) {
    g_heap_info_frees++;
    free((void *)info);
}
static void observe_heap_info(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    heap_info *h = info;
    h->calls++;
    if (h->calls == 5) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void observer_context_with_release_but_no_retain_is_released_once(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    heap_info *h = calloc(1, sizeof *h);
    RLRunLoopObserverContext c = {0, h, NULL, heap_info_free, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeSources, true, 0, observe_heap_info, &c);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    for (int i = 0; i < 8 && g_heap_info_frees == 0; i++) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RL_ASSERT_EQ_INT(g_heap_info_frees, 0);
    RLRunLoopObserverInvalidate(o);
    RL_ASSERT_EQ_INT(g_heap_info_frees, 1);
    RLRelease(o);
    RL_ASSERT_EQ_INT(g_heap_info_frees, 1);
    RLRelease(keep);
}

/* An info counting its retains and releases (rl_test_counted's callbacks
   take it for the rl_test_counted it starts with) and its callouts. */
typedef struct {
    rl_test_counted counted;
    int calls;
} owned;

static void observe_owned(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    ((owned *)info)->calls++;
}

/* Even with retain, an observer callout is not bracketed. */
static void observer_context_retain_is_called_once_at_creation(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static owned ow;
    RLRunLoopObserverContext c = {0, &ow, rl_test_counted_retain, rl_test_counted_release, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopBeforeSources, true, 0, observe_owned, &c);
    RLRunLoopAddObserver(rl, o, kRLRunLoopDefaultMode);
    for (int i = 0; i < 5; i++) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RL_ASSERT_EQ_INT(ow.calls, 5);
    RL_ASSERT_EQ_INT(ow.counted.retains, 1);
    RL_ASSERT_EQ_INT(ow.counted.releases, 0);
    RLRelease(o);
    RLRunLoopRemoveObserver(rl, o, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(ow.counted.releases, 1);
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
        RL_TEST(observers_bounced_between_two_loops_by_their_callouts),
        RL_TEST(observer_context_with_release_but_no_retain_is_released_once),
        RL_TEST(observer_context_retain_is_called_once_at_creation),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
