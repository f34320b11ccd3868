/* test_description.c: RLCopyDescription of run loops (every mode with its
   sources0, sources1, observers and timers) and of each object type. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static void nothing(void *info) {
    (void)info;
}
static void timer_nothing(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}
static void obs_nothing(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}
static char *desc_of(const void *info) {
    return strdup((const char *)info);
}
static int fd_of(void *info) {
    (void)info;
    return -1;
} /* unwatched */

#define RL_ASSERT_CONTAINS(hay, needle)                                                                                \
    do {                                                                                                               \
        const char *h_ = (hay), *n_ = (needle);                                                                        \
        if (!h_ || !strstr(h_, n_)) RL_FAIL_("\"%s\" not in description:\n%s", n_, h_ ? h_ : "(null)");                \
    } while (0)

static RLRunLoopSourceRef described_source0(const char *text) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = (void *)text;
    c.copyDescription = desc_of;
    c.perform = nothing;
    return RLRunLoopSourceCreate(3, &c);
}

static RLRunLoopSourceRef described_source1(const char *text) {
    RLRunLoopSourceContext1 c;
    memset(&c, 0, sizeof c);
    c.version = 1;
    c.info = (void *)text;
    c.copyDescription = desc_of;
    c.getFileDescriptor = fd_of;
    c.perform = nothing;
    return RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&c);
}

static void null_is_described_as_null(void) {
    char *d = RLCopyDescription(NULL);
    RL_ASSERT_STR_EQ(d, "(null)");
    free(d);
}

static void each_object_type_has_a_description_with_its_info(void) {
    RLRunLoopSourceRef s0 = described_source0("info-of-source-zero");
    RLRunLoopSourceRef s1 = described_source1("info-of-source-one");
    RLRunLoopObserverContext oc = {0, (void *)"info-of-observer", NULL, NULL, desc_of};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, obs_nothing, &oc);
    RLRunLoopTimerContext tc = {0, (void *)"info-of-timer", NULL, NULL, desc_of};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 100, 2, 0, 0, timer_nothing, &tc);
    char *d;
    d = RLCopyDescription(s0);
    RL_ASSERT_CONTAINS(d, "info-of-source-zero");
    free(d);
    d = RLCopyDescription(s1);
    RL_ASSERT_CONTAINS(d, "info-of-source-one");
    free(d);
    d = RLCopyDescription(o);
    RL_ASSERT_CONTAINS(d, "info-of-observer");
    free(d);
    d = RLCopyDescription(t);
    RL_ASSERT_CONTAINS(d, "info-of-timer");
    free(d);
    /* Invalidated objects still describe themselves. */
    RLRunLoopSourceInvalidate(s0);
    RLRunLoopTimerInvalidate(t);
    RLRunLoopObserverInvalidate(o);
    d = RLCopyDescription(s0);
    RL_ASSERT(d && *d);
    free(d);
    d = RLCopyDescription(t);
    RL_ASSERT(d && *d);
    free(d);
    d = RLCopyDescription(o);
    RL_ASSERT(d && *d);
    free(d);
    RLRelease(s0);
    RLRelease(s1);
    RLRelease(o);
    RLRelease(t);
}

static void objects_without_copy_description_are_described(void) {
    RLRunLoopSourceRef s = rl_test_source0(0, nothing, NULL);
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, obs_nothing, NULL);
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, timer_nothing, NULL);
    const void *objs[] = {s, o, t, RLRunLoopGetCurrent()};
    for (int i = 0; i < 4; i++) {
        char *d = RLCopyDescription(objs[i]);
        RL_ASSERT(d != NULL);
        RL_ASSERT(strlen(d) > 0);
        free(d);
    }
    RLRelease(s);
    RLRelease(o);
    RLRelease(t);
}

static void run_loop_description_lists_modes_and_their_items(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s0 = described_source0("zero-in-desc-mode");
    RLRunLoopSourceRef s1 = described_source1("one-in-desc-mode");
    RLRunLoopObserverContext oc = {0, (void *)"observer-in-desc-mode", NULL, NULL, desc_of};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopEntry, true, 0, obs_nothing, &oc);
    RLRunLoopTimerContext tc = {0, (void *)"timer-in-desc-mode", NULL, NULL, desc_of};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 100, 0, 0, 0, timer_nothing, &tc);
    RLRunLoopSourceRef common = described_source0("common-item");
    RLRunLoopAddSource(rl, s0, "DescMode");
    RLRunLoopAddSource(rl, s1, "DescMode");
    RLRunLoopAddObserver(rl, o, "DescMode");
    RLRunLoopAddTimer(rl, t, "DescMode");
    RLRunLoopAddSource(rl, common, kRLRunLoopCommonModes);
    char *d = RLCopyDescription(rl);
    RL_ASSERT_CONTAINS(d, "kCFRunLoopDefaultMode");
    RL_ASSERT_CONTAINS(d, "DescMode");
    RL_ASSERT_CONTAINS(d, "sources0");
    RL_ASSERT_CONTAINS(d, "sources1");
    RL_ASSERT_CONTAINS(d, "observers");
    RL_ASSERT_CONTAINS(d, "timers");
    RL_ASSERT_CONTAINS(d, "zero-in-desc-mode");
    RL_ASSERT_CONTAINS(d, "one-in-desc-mode");
    RL_ASSERT_CONTAINS(d, "observer-in-desc-mode");
    RL_ASSERT_CONTAINS(d, "timer-in-desc-mode");
    RL_ASSERT_CONTAINS(d, "common-item");
    free(d);
    /* Removed items leave the description. */
    RLRunLoopRemoveSource(rl, s0, "DescMode");
    RLRunLoopTimerInvalidate(t);
    d = RLCopyDescription(rl);
    RL_ASSERT(strstr(d, "zero-in-desc-mode") == NULL);
    RL_ASSERT(strstr(d, "timer-in-desc-mode") == NULL);
    RL_ASSERT_CONTAINS(d, "one-in-desc-mode");
    free(d);
    RLRunLoopSourceInvalidate(s1);
    RLRunLoopSourceInvalidate(common);
    RLRunLoopObserverInvalidate(o);
    RLRelease(s0);
    RLRelease(s1);
    RLRelease(o);
    RLRelease(t);
    RLRelease(common);
}

static void description_of_a_big_loop_has_every_item(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    enum { N = 300 };
    static char names[N][32];
    RLRunLoopSourceRef s[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "item-%04d-end", i);
        s[i] = described_source0(names[i]);
        RLRunLoopAddSource(rl, s[i], i % 2 ? "odd" : kRLRunLoopDefaultMode);
    }
    char *d = RLCopyDescription(rl);
    for (int i = 0; i < N; i++) RL_ASSERT_CONTAINS(d, names[i]);
    free(d);
    for (int i = 0; i < N; i++) {
        RLRunLoopSourceInvalidate(s[i]);
        RLRelease(s[i]);
    }
}

/* Describing the loop from inside its own callouts does not deadlock, and the
   description names the current mode. */
static int g_ok;
static void describe_from_timer(RLRunLoopTimerRef t, void *info) {
    (void)info;
    char *d = RLCopyDescription(RLRunLoopGetCurrent());
    char *dt = RLCopyDescription(t);
    if (d && strstr(d, "CalloutMode") && dt && *dt) g_ok++;
    free(d);
    free(dt);
}
static void describe_from_observer(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)a;
    (void)info;
    char *d = RLCopyDescription(RLRunLoopGetCurrent());
    char *dobs = RLCopyDescription(o);
    if (d && strstr(d, "CalloutMode") && dobs && *dobs) g_ok++;
    free(d);
    free(dobs);
}
static void describe_from_perform(void *info) {
    RLRunLoopSourceRef self = *(RLRunLoopSourceRef *)info;
    char *d = RLCopyDescription(RLRunLoopGetCurrent());
    char *ds = RLCopyDescription(self);
    if (d && strstr(d, "CalloutMode") && ds && *ds) g_ok++;
    free(d);
    free(ds);
}

static void describing_the_loop_inside_its_callouts_works(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    static RLRunLoopSourceRef s;
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &s;
    c.perform = describe_from_perform;
    s = RLRunLoopSourceCreate(0, &c);
    RLRunLoopAddSource(rl, s, "CalloutMode");
    RLRunLoopTimerRef t = rl_test_timer(RLAbsoluteTimeGetCurrent(), 0, describe_from_timer, NULL);
    RLRunLoopAddTimer(rl, t, "CalloutMode");
    RLRunLoopObserverRef o =
        RLRunLoopObserverCreate(kRLRunLoopEntry | kRLRunLoopExit, true, 0, describe_from_observer, NULL);
    RLRunLoopAddObserver(rl, o, "CalloutMode");
    RLRunLoopSourceSignal(s);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("CalloutMode", 0.1, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(g_ok, 4); /* Entry, perform, timer, Exit */
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
    RLRelease(t);
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

/* Describing a loop from another thread while it runs. */
static RLRunLoopRef g_rl;
static atomic_int g_described;
static void *describe_repeatedly(void *arg) {
    (void)arg;
    /* Stop does nothing to a loop that is not running yet: wait for the run. */
    for (;;) {
        char *m = RLRunLoopCopyCurrentMode(g_rl);
        free(m);
        if (m) break;
        sched_yield();
    }
    for (int i = 0; i < 200; i++) {
        char *d = RLCopyDescription(g_rl);
        if (d && strstr(d, "kCFRunLoopDefaultMode")) atomic_fetch_add(&g_described, 1);
        free(d);
    }
    RLRunLoopStop(g_rl);
    return NULL;
}
static void churn_perform(void *info) {
    RLRunLoopSourceSignal(*(RLRunLoopSourceRef *)info);
}

static void describing_a_running_loop_from_another_thread_works(void) {
    g_rl = RLRunLoopGetCurrent();
    static RLRunLoopSourceRef s;
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.info = &s;
    c.perform = churn_perform;
    s = RLRunLoopSourceCreate(0, &c);
    RLRunLoopAddSource(g_rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s); /* keeps the loop busy */
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, describe_repeatedly, NULL), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 60, false), kRLRunLoopRunStopped);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_described), 200);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(null_is_described_as_null),
        RL_TEST(each_object_type_has_a_description_with_its_info),
        RL_TEST(objects_without_copy_description_are_described),
        RL_TEST(run_loop_description_lists_modes_and_their_items),
        RL_TEST(description_of_a_big_loop_has_every_item),
        RL_TEST(describing_the_loop_inside_its_callouts_works),
        RL_TEST(describing_a_running_loop_from_another_thread_works),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
