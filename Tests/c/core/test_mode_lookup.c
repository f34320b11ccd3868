/*
 * test_mode_lookup.c: modes found by name. CF keeps a loop's modes in a set
 * hashed by name, so a run, an add or a queued function in a mode finds it
 * in constant time however many modes the loop has, and each name names one
 * mode. Here: thousands of modes, each found (and only once), runs in the
 * last one made, and the work of a lookup: how many names it compares.
 *
 * strcmp, strncmp and memcmp are replaced in this program (they count, then
 * compare), so every name comparison the library makes is seen.
 */
#include <CRunLoop.h>
#include <stdatomic.h>
#include "rltest.h"

static atomic_long compares;

int strcmp(const char *a, const char *b) {
    atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    while (*x && *x == *y) x++, y++;
    return *x - *y;
}

int strncmp(const char *a, const char *b, size_t n) {
    atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (; n && *x && *x == *y; n--) x++, y++;
    return n ? *x - *y : 0;
}

int memcmp(const void *a, const void *b, size_t n) {
    atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}

#define MODES 10000

static void mode_name(char *buf, size_t size, int i) {
    snprintf(buf, size, "lookup.mode.%d", i);
}

/* MODES modes, each made by adding its own source (signalled); the caller
   releases them with release_sources. */
static RLRunLoopSourceRef *make_modes(RLRunLoopRef rl) {
    RLRunLoopSourceRef *sources = calloc(MODES, sizeof *sources);
    RL_ASSERT(sources != NULL);
    for (int i = 0; i < MODES; i++) {
        char name[32];
        mode_name(name, sizeof name, i);
        sources[i] = rl_test_source0(0, rl_test_count_perform, NULL);
        RLRunLoopAddSource(rl, sources[i], name);
        RLRunLoopSourceSignal(sources[i]);
    }
    return sources;
}

/* Each source leaves its mode by name (invalidating it would visit every
   mode of the loop). */
static void release_sources(RLRunLoopRef rl, RLRunLoopSourceRef *sources) {
    for (int i = 0; i < MODES; i++) {
        char name[32];
        mode_name(name, sizeof name, i);
        RLRunLoopRemoveSource(rl, sources[i], name);
        RLRelease(sources[i]);
    }
    free(sources);
}

/* Every mode is found by its name, with its own source; the loop lists each
   name once (the default mode and MODES others). */
static void each_of_many_modes_is_found_by_its_name(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef *sources = make_modes(rl);
    for (int i = 0; i < MODES; i++) {
        char name[32];
        mode_name(name, sizeof name, i);
        RL_ASSERT(RLRunLoopContainsSource(rl, sources[i], name));
        RL_ASSERT(!RLRunLoopContainsSource(rl, sources[(i + 1) % MODES], name));
        RL_ASSERT(!RLRunLoopModeIsEmpty(rl, name));
    }
    char **names = RLRunLoopCopyAllModes(rl);
    RL_ASSERT(names != NULL);
    int count = 0, default_seen = 0;
    for (char **n = names; *n; n++) {
        count++;
        if (strcmp(*n, kRLRunLoopDefaultMode) == 0) default_seen++;
        free(*n);
    }
    free(names);
    RL_ASSERT_EQ_INT(count, MODES + 1);
    RL_ASSERT_EQ_INT(default_seen, 1);
    /* Names near one made, and the default mode's name in another string. */
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "lookup.mode."));
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "lookup.mode.100000"));
    RL_ASSERT(RLRunLoopModeIsEmpty(rl, "lookup.mode.1x"));
    char default_copy[64];
    snprintf(default_copy, sizeof default_copy, "%s", kRLRunLoopDefaultMode);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, default_copy);
    RL_ASSERT(RLRunLoopContainsSource(rl, keep, kRLRunLoopDefaultMode));
    RLRelease(keep);
    release_sources(rl, sources);
}

/* Running the last of many modes performs its source, and only its. */
static void run_in_the_last_made_of_many_modes(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef *sources = make_modes(rl);
    char last[32];
    mode_name(last, sizeof last, MODES - 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(last, 0, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(rl_test_performed, 1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(last, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(rl_test_performed, 1);
    release_sources(rl, sources);
}

static long compares_of(void (*step)(void *), void *arg) {
    long before = atomic_load(&compares);
    step(arg);
    return atomic_load(&compares) - before;
}

static void run_last_mode(void *name) {
    RLRunLoopRunInMode(name, 0, false);
}

static void queue_for_last_mode(void *name) {
    RLRunLoopPerformFunction(RLRunLoopGetCurrent(), name, rl_test_count_perform, NULL);
}

static void make_one_more_mode(void *source) {
    RLRunLoopAddSource(RLRunLoopGetCurrent(), source, "lookup.one.more");
}

/* Finding or making a mode compares its name with the one mode of that name
   (a hash table), not with every mode: a run in the last of MODES modes, a
   function queued for it, and the making of one more each compare a handful
   of names at most, where a scan compares MODES. */
static void finding_a_mode_among_many_compares_a_few_names(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef *sources = make_modes(rl);
    char last[32];
    mode_name(last, sizeof last, MODES - 1);
    RLRunLoopRunInMode(last, 0, false); /* its source performs: the next runs are plain passes */
    long run = compares_of(run_last_mode, last);
    long queue = compares_of(queue_for_last_mode, last);
    RLRunLoopSourceRef more = rl_test_source0(0, rl_test_nothing, NULL);
    long make = compares_of(make_one_more_mode, more);
    printf("  names compared with %d modes: %ld by a run, %ld by queueing, %ld by making one more\n", MODES, run, queue,
           make);
    RL_ASSERT_LE_INT(run, 50);
    RL_ASSERT_LE_INT(queue, 50);
    RL_ASSERT_LE_INT(make, 50);
    RL_ASSERT(RLRunLoopContainsSource(rl, more, "lookup.one.more"));
    RLRunLoopRemoveSource(rl, more, "lookup.one.more");
    RLRelease(more);
    release_sources(rl, sources);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(each_of_many_modes_is_found_by_its_name),
        RL_TEST(run_in_the_last_made_of_many_modes),
        RL_TEST(finding_a_mode_among_many_compares_a_few_names),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
