/*
 * test_scale.c: many items in one loop. Adding and removing a hundred
 * thousand version-0 sources, observers and timers, in a mode and in the
 * common modes, keeps the order of performs and callouts exactly (by order,
 * equal orders in the order added (sources: signalled, here in the order
 * added), a re-added item after its equals), keeps
 * membership answers right, and keeps the description in that order.
 * (How long it takes is measured by bench: `bench_core scale N`.)
 */
#include <CRunLoop.h>
#include <sys/eventfd.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

/* A scrambled visit of 0..n-1: a stride coprime with n. */
static long scrambled(long i, long n) {
    return (long)(((unsigned long long)i * 7919ULL) % (unsigned long long)n);
}
static long coprime_count(long n) {
    return n % 7919 == 0 ? n + 1 : n;
}

typedef struct {
    long *calls;
    long count;
} call_log;
static call_log the_log;

typedef struct {
    long id;
    RLIndex order;
    long added; /* when it was (last) added: the tie-break */
    bool present;
} item_info;

static void perform_logs(void *info) {
    item_info *it = info;
    the_log.calls[the_log.count++] = it->id;
}

static void observe_logs(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    item_info *it = info;
    the_log.calls[the_log.count++] = it->id;
}

/* Checks that the log holds exactly the present items, by (order, added). */
static void expect_order(const item_info *items, long n) {
    long present = 0;
    for (long i = 0; i < n; i++) present += items[i].present;
    RL_ASSERT_EQ_INT(the_log.count, present);
    for (long k = 0; k < the_log.count; k++) RL_ASSERT(items[the_log.calls[k]].present);
    for (long k = 1; k < the_log.count; k++) {
        const item_info *a = &items[the_log.calls[k - 1]], *b = &items[the_log.calls[k]];
        bool before = a->order < b->order || (a->order == b->order && a->added < b->added);
        if (!before)
            RL_FAIL_("call %ld: item %ld (order %ld, added %ld) after item %ld (order %ld, added %ld)", k, b->id,
                     (long)b->order, b->added, a->id, (long)a->order, a->added);
    }
    the_log.count = 0;
}

static RLIndex order_of(long i) {
    return (RLIndex)((i * 37) % 11) - 5;
}

static void sources_in(RLRunLoopMode add_mode, RLRunLoopMode run_mode) {
    long n = coprime_count(rl_test_scaled(100000));
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    item_info *items = calloc((size_t)n, sizeof *items);
    RLRunLoopSourceRef *sources = calloc((size_t)n, sizeof *sources);
    long *by_added = calloc((size_t)(2 * n), sizeof *by_added);
    the_log.calls = calloc((size_t)n, sizeof *the_log.calls);
    long clock = 0;
    for (long i = 0; i < n; i++) {
        items[i] = (item_info){.id = i, .order = order_of(i)};
        RLRunLoopSourceContext c = {.info = &items[i], .perform = perform_logs};
        sources[i] = RLRunLoopSourceCreate(items[i].order, &c);
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        RLRunLoopAddSource(rl, sources[i], add_mode);
        by_added[clock] = i;
        items[i].added = clock++;
        items[i].present = true;
    }
    /* Remove two in three, scrambled; add back every tenth of those. */
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        if (i % 3 == 0) continue;
        RLRunLoopRemoveSource(rl, sources[i], add_mode);
        items[i].present = false;
    }
    for (long i = 0; i < n; i += 10) {
        if (items[i].present) continue;
        RLRunLoopAddSource(rl, sources[i], add_mode);
        by_added[clock] = i;
        items[i].added = clock++;
        items[i].present = true;
    }
    for (long i = 0; i < n; i++) {
        RL_ASSERT_EQ_INT(RLRunLoopContainsSource(rl, sources[i], add_mode), items[i].present);
        RL_ASSERT_EQ_INT(RLRunLoopContainsSource(rl, sources[i], run_mode), items[i].present);
    }
    /* Equal orders perform by signal time, then the order added: signalled
       in the order added, both say the same. */
    for (long c = 0; c < clock; c++) {
        long i = by_added[c];
        if (items[i].present && items[i].added == c) RLRunLoopSourceSignal(sources[i]);
    }
    for (long i = 0; i < n; i++)
        if (!items[i].present) RLRunLoopSourceSignal(sources[i]);
    RLRunLoopRunInMode(run_mode, 0, false); /* one pass performs every signalled source */
    expect_order(items, n);
    for (long i = 0; i < n; i++) {
        RLRunLoopSourceInvalidate(sources[i]);
        RLRelease(sources[i]);
    }
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, run_mode));
    free(the_log.calls);
    free(by_added);
    free(sources);
    free(items);
}

static void scale_sources_in_a_mode_keep_their_order(void) {
    sources_in(DEF, DEF);
}

static void scale_sources_in_the_common_modes_keep_their_order(void) {
    RLRunLoopAddCommonMode(RLRunLoopGetCurrent(), "other");
    sources_in(kRLRunLoopCommonModes, "other");
}

static void observers_in(RLRunLoopMode add_mode, RLRunLoopMode run_mode) {
    long n = coprime_count(rl_test_scaled(100000));
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    item_info *items = calloc((size_t)n, sizeof *items);
    RLRunLoopObserverRef *observers = calloc((size_t)n, sizeof *observers);
    the_log.calls = calloc((size_t)n, sizeof *the_log.calls);
    long clock = 0;
    for (long i = 0; i < n; i++) {
        items[i] = (item_info){.id = i, .order = order_of(i)};
        RLRunLoopObserverContext c = {.info = &items[i]};
        observers[i] = RLRunLoopObserverCreate(kRLRunLoopEntry, true, items[i].order, observe_logs, &c);
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        RLRunLoopAddObserver(rl, observers[i], add_mode);
        items[i].added = clock++;
        items[i].present = true;
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        if (i % 3 == 0) continue;
        RLRunLoopRemoveObserver(rl, observers[i], add_mode);
        items[i].present = false;
    }
    for (long i = 0; i < n; i += 10) {
        if (items[i].present) continue;
        RLRunLoopAddObserver(rl, observers[i], add_mode);
        items[i].added = clock++;
        items[i].present = true;
    }
    for (long i = 0; i < n; i++) {
        RL_ASSERT_EQ_INT(RLRunLoopContainsObserver(rl, observers[i], add_mode), items[i].present);
        RL_ASSERT_EQ_INT(RLRunLoopContainsObserver(rl, observers[i], run_mode), items[i].present);
    }
    /* Entry observers are called once the mode has something to run. */
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, run_mode);
    RLRunLoopRunInMode(run_mode, 0, false);
    expect_order(items, n);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
    for (long i = 0; i < n; i++) {
        RLRunLoopObserverInvalidate(observers[i]);
        RLRelease(observers[i]);
    }
    free(the_log.calls);
    free(observers);
    free(items);
}

static void scale_observers_in_a_mode_keep_their_order(void) {
    observers_in(DEF, DEF);
}

static void scale_observers_in_the_common_modes_keep_their_order(void) {
    RLRunLoopAddCommonMode(RLRunLoopGetCurrent(), "other");
    observers_in(kRLRunLoopCommonModes, "other");
}

static void never(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}

/* Common-mode timers: a mode made common later gets exactly those left. */
static void scale_common_timers_add_remove_and_a_new_common_mode(void) {
    long n = coprime_count(rl_test_scaled(100000));
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef *timers = calloc((size_t)n, sizeof *timers);
    RLAbsoluteTime far = RLAbsoluteTimeGetCurrent() + 3600;
    for (long i = 0; i < n; i++) {
        timers[i] = RLRunLoopTimerCreate(far + (double)i, 0, 0, 0, never, NULL);
        RLRunLoopAddTimer(rl, timers[i], kRLRunLoopCommonModes);
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        if (i % 2) RLRunLoopRemoveTimer(rl, timers[i], kRLRunLoopCommonModes);
    }
    RLRunLoopAddCommonMode(rl, "later");
    for (long i = 0; i < n; i++) {
        bool in = i % 2 == 0;
        RL_ASSERT_EQ_INT(RLRunLoopContainsTimer(rl, timers[i], kRLRunLoopCommonModes), in);
        RL_ASSERT_EQ_INT(RLRunLoopContainsTimer(rl, timers[i], "later"), in);
        RL_ASSERT_EQ_INT(RLRunLoopContainsTimer(rl, timers[i], DEF), in);
    }
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, "later"), far);
    for (long i = 0; i < n; i++) {
        RLRunLoopTimerInvalidate(timers[i]);
        RLRelease(timers[i]);
    }
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "later"));
    free(timers);
}

/* The description lists a mode's sources and observers in the order they
   run, after many adds and removes. */
static char *name_of(const void *info) {
    char *s = NULL;
    if (asprintf(&s, "item-%06ld", ((const item_info *)info)->id) < 0) return NULL;
    return s;
}

static void scale_description_lists_items_in_order(void) {
    long n = coprime_count(rl_test_scaled(3000));
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    item_info *items = calloc((size_t)n, sizeof *items);
    RLRunLoopSourceRef *sources = calloc((size_t)n, sizeof *sources);
    long clock = 0;
    for (long i = 0; i < n; i++) {
        items[i] = (item_info){.id = i, .order = order_of(i)};
        RLRunLoopSourceContext c = {.info = &items[i], .perform = perform_logs, .copyDescription = name_of};
        sources[i] = RLRunLoopSourceCreate(items[i].order, &c);
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        RLRunLoopAddSource(rl, sources[i], DEF);
        items[i].added = clock++;
        items[i].present = true;
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        if (i % 4 == 1) {
            RLRunLoopRemoveSource(rl, sources[i], DEF);
            items[i].present = false;
        }
    }
    char *d = RLCopyDescription(rl);
    RL_ASSERT(d != NULL);
    the_log.calls = calloc((size_t)n, sizeof *the_log.calls);
    for (const char *p = strstr(d, "item-"); p; p = strstr(p + 1, "item-"))
        the_log.calls[the_log.count++] = atol(p + 5);
    expect_order(items, n);
    free(d);
    for (long i = 0; i < n; i++) {
        RLRunLoopSourceInvalidate(sources[i]);
        RLRelease(sources[i]);
    }
    free(the_log.calls);
    free(sources);
    free(items);
}

/* Version-1 sources: many without a descriptor, and some hundreds of
   eventfds among them; after scrambled removals exactly the remaining
   eventfd sources perform when their fd becomes readable. */
/* Here `added` holds the source's eventfd, or -1 for none. */
static int fd_of(void *info) {
    return (int)((item_info *)info)->added;
}

static void perform_v1(void *info) {
    item_info *it = info;
    uint64_t v;
    if (read((int)it->added, &v, sizeof v) != sizeof v) RL_FAIL_("item %ld: nothing to read", it->id);
    the_log.calls[the_log.count++] = it->id;
}

static void scale_version1_sources_add_remove_and_watch(void) {
    long n = coprime_count(rl_test_scaled(100000));
    long with_fd = 300;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    item_info *items = calloc((size_t)n, sizeof *items);
    RLRunLoopSourceRef *sources = calloc((size_t)n, sizeof *sources);
    the_log.calls = calloc((size_t)n, sizeof *the_log.calls);
    for (long i = 0; i < n; i++) {
        items[i] = (item_info){.id = i, .added = -1};
        if (i % (n / with_fd) == 0) items[i].added = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        RLRunLoopSourceContext1 c = {
            .version = 1, .info = &items[i], .getFileDescriptor = fd_of, .perform = perform_v1};
        sources[i] = RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&c);
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        RLRunLoopAddSource(rl, sources[i], DEF);
        items[i].present = true;
    }
    for (long k = 0; k < n; k++) {
        long i = scrambled(k, n);
        if (i % 2 == 0) continue;
        RLRunLoopRemoveSource(rl, sources[i], DEF);
        items[i].present = false;
    }
    long expected = 0;
    for (long i = 0; i < n; i++) {
        RL_ASSERT_EQ_INT(RLRunLoopContainsSource(rl, sources[i], DEF), items[i].present);
        if (items[i].added >= 0) {
            uint64_t one = 1;
            RL_ASSERT_EQ_INT(write((int)items[i].added, &one, sizeof one), sizeof one);
            expected += items[i].present;
        }
    }
    while (the_log.count < expected) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RLRunLoopRunInMode(DEF, 0, false);
    RL_ASSERT_EQ_INT(the_log.count, expected);
    for (long k = 0; k < the_log.count; k++) RL_ASSERT(items[the_log.calls[k]].present);
    for (long i = 0; i < n; i++) {
        RLRunLoopSourceInvalidate(sources[i]);
        RLRelease(sources[i]);
        if (items[i].added >= 0) close((int)items[i].added);
    }
    free(the_log.calls);
    free(sources);
    free(items);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(scale_sources_in_a_mode_keep_their_order),
        RL_TEST(scale_sources_in_the_common_modes_keep_their_order),
        RL_TEST(scale_observers_in_a_mode_keep_their_order),
        RL_TEST(scale_observers_in_the_common_modes_keep_their_order),
        RL_TEST(scale_common_timers_add_remove_and_a_new_common_mode),
        RL_TEST(scale_description_lists_items_in_order),
        RL_TEST(scale_version1_sources_add_remove_and_watch),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
