/*
 * test_soak.c: many passes of one loop busy with every kind of item (a
 * signalled source, a repeating timer, observers of every activity, queued
 * functions, a descriptor object on a pipe, a message port, a delayed perform
 * request), with the items themselves made and freed again every so often.
 * Open descriptors must be the same at the end as after the warm-up, and the
 * resident size must stay flat.
 *
 * RL_SOAK_PASSES sets the number of passes (default 200,000, scaled down by
 * RL_TEST_SLOW); `make soak` runs 10,000,000. Under ASan or valgrind the
 * resident size is not checked (their allocators keep freed memory).
 */
#include <fcntl.h>
#include <CRunLoop.h>
#include <CRunLoopLinux.h>
#include <CRunLoopThread.h>
#include "rltest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SOAK_CHECK_RSS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SOAK_CHECK_RSS 0
#endif
#endif
#ifndef SOAK_CHECK_RSS
#define SOAK_CHECK_RSS 1
#endif

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- the items ------------------------------------------------------------- */

static long blocks_run, fd_reads, requests_run;

static void block_fn(void *info) {
    (void)info;
    blocks_run++;
}
static void request_fn(void *info) {
    (void)info;
    requests_run++;
}

static void fd_callout(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)types;
    (void)info;
    char buf[64];
    ssize_t n;
    while ((n = read(RLFileDescriptorGetNativeDescriptor(f), buf, sizeof buf)) > 0) fd_reads += n;
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack); /* one-shot, as CF's */
}

typedef struct {
    RLRunLoopSourceRef source;
    RLRunLoopTimerRef timer;
    RLRunLoopObserverRef observer;
    RLFileDescriptorRef fd;
    int pipe_write;
    RLMessagePortRef port;
} item_set;

static void items_make(RLRunLoopRef rl, item_set *s) {
    RLRunLoopSourceContext sc;
    memset(&sc, 0, sizeof sc);
    sc.perform = rl_test_count_perform;
    s->source = RLRunLoopSourceCreate(0, &sc);
    RLRunLoopAddSource(rl, s->source, kRLRunLoopCommonModes);

    RLRunLoopTimerContext tc = {0, NULL, NULL, NULL, NULL};
    s->timer = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 1e-6, 0, 0, rl_test_count_fire, &tc);
    RLRunLoopAddTimer(rl, s->timer, kRLRunLoopDefaultMode);

    s->observer = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, rl_test_count_observe, NULL);
    RLRunLoopAddObserver(rl, s->observer, kRLRunLoopCommonModes);

    int p[2];
    RL_ASSERT_EQ_INT(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    s->fd = RLFileDescriptorCreate(p[0], true, fd_callout, NULL);
    RL_ASSERT(s->fd != NULL);
    s->pipe_write = p[1];
    RLFileDescriptorEnableCallBacks(s->fd, kRLFileDescriptorReadCallBack);
    RLRunLoopSourceRef fs = RLFileDescriptorCreateRunLoopSource(s->fd, 0);
    RLRunLoopAddSource(rl, fs, kRLRunLoopDefaultMode);
    RLRelease(fs);

    s->port = RLMessagePortCreate(rl_test_count_message, NULL, 0);
    RLRunLoopSourceRef ps = RLMessagePortCreateRunLoopSource(s->port, 0);
    RLRunLoopAddSource(rl, ps, kRLRunLoopDefaultMode);
    RLRelease(ps);
}

static void items_free(item_set *s) {
    RLRunLoopSourceInvalidate(s->source);
    RLRelease(s->source);
    RLRunLoopTimerInvalidate(s->timer);
    RLRelease(s->timer);
    RLRunLoopObserverInvalidate(s->observer);
    RLRelease(s->observer);
    RLFileDescriptorInvalidate(s->fd);
    RLRelease(s->fd);
    close(s->pipe_write);
    RLMessagePortInvalidate(s->port);
    RLRelease(s->port);
}

/* One pass with work for every item. */
static void busy_pass(RLRunLoopRef rl, item_set *s, long i) {
    RLRunLoopSourceSignal(s->source);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, block_fn, NULL);
    if ((i & 7) == 0 && write(s->pipe_write, "x", 1) != 1) RL_FAIL_("write");
    if ((i & 7) == 4) RLMessagePortSend(s->port, 1, "msg", 3);
    if ((i & 255) == 0)
        RLPerformRequestRelease(RLRunLoopPerformRequestAfterDelay(rl, 0, NULL, 0, NULL, request_fn, NULL, NULL));
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
}

static long soak_passes(void) {
    const char *env = getenv("RL_SOAK_PASSES");
    return rl_test_scaled(env ? atol(env) : 200000);
}

static void soak_fds_and_rss_stay_flat(void) {
    long passes = soak_passes();
    long warmup = passes / 10 > 20000 ? 20000 : passes / 10;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    item_set s;
    items_make(rl, &s);
    long fds_before = -1, rss_before = -1;
    double started = rl_test_now();
    for (long i = 0; i < passes; i++) {
        if (i == warmup) {
            fds_before = rl_test_open_fds();
            rss_before = rss_kb();
        }
        /* Every item made and freed again now and then: nothing may stay behind. */
        if (i % 5000 == 4999) {
            items_free(&s);
            items_make(rl, &s);
        }
        busy_pass(rl, &s, i);
    }
    double took = rl_test_now() - started;
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    long fds_after = rl_test_open_fds(), rss_after = rss_kb();
    printf("  %ld passes in %.1f s: %ld performs, %ld timer fires, %ld observer calls, %ld functions, "
           "%ld bytes read, %ld messages, %ld requests; fds %ld -> %ld, RSS %ld -> %ld KiB\n",
           passes, took, rl_test_performed, rl_test_fired, rl_test_observed, blocks_run, fd_reads, rl_test_messages,
           requests_run, fds_before, fds_after, rss_before, rss_after);
    items_free(&s);
    RL_ASSERT_EQ_INT(fds_after, fds_before);
    RL_ASSERT_GE_INT(rl_test_performed, passes - passes / 100);
    RL_ASSERT_GE_INT(blocks_run, passes);
    RL_ASSERT_GE_INT(rl_test_fired, 1);
    RL_ASSERT_GE_INT(fd_reads, passes / 8 - 2 * (passes / 5000 + 1)); /* bytes left unread at each remake */
    RL_ASSERT_GE_INT(rl_test_messages, passes / 8 - 2 * (passes / 5000 + 1));
    /* Flat: a few pages of slack for the allocator's own bookkeeping. */
    if (SOAK_CHECK_RSS && !getenv("RL_TEST_WRAPPER")) RL_ASSERT_LE_INT(rss_after - rss_before, 512);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(soak_fds_and_rss_stay_flat),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
