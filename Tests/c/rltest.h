/*
 * rltest.h: the C test harness. Each test runs in its own forked process with
 * a time limit, so a hang or crash fails that test alone. Assertions print
 * both values. The program ends by printing "N passed, N failed".
 *
 *   static void timer_fires_once(void) { ... RL_ASSERT_EQ_INT(count, 1); }
 *   int main(int argc, char **argv) {
 *       static const rl_test tests[] = { RL_TEST(timer_fires_once), ... };
 *       return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
 *   }
 *
 * RL_TEST_TIMEOUT (seconds, default 30) and RL_TEST_SLOW (a multiplier, for
 * valgrind) scale the per-test limit. argv[1], if given, runs only the tests
 * whose name contains it.
 *
 * Include <CRunLoop.h> before this header to get the run-loop helpers at the
 * end (rl_test_log, rl_test_source0, rl_test_keep_mode, rl_test_timer, ...).
 */
#ifndef RLTEST_H
#define RLTEST_H

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name;
    void (*fn)(void);
} rl_test;

#define RL_TEST(fn)                                                                                                    \
    { #fn, fn }
#define RL_TEST_COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define RL_FAIL_(...)                                                                                                  \
    do {                                                                                                               \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                                              \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fputc('\n', stderr);                                                                                           \
        fflush(stderr);                                                                                                \
        _exit(1);                                                                                                      \
    } while (0)

#define RL_ASSERT(cond)                                                                                                \
    do {                                                                                                               \
        if (!(cond)) RL_FAIL_("assertion failed: %s", #cond);                                                          \
    } while (0)
#define RL_ASSERT_EQ_INT(a, b)                                                                                         \
    do {                                                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                            \
        if (a_ != b_) RL_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);                                              \
    } while (0)
#define RL_ASSERT_NE_INT(a, b)                                                                                         \
    do {                                                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                            \
        if (a_ == b_) RL_FAIL_("%s != %s: both %lld", #a, #b, a_);                                                     \
    } while (0)
#define RL_ASSERT_GE_INT(a, b)                                                                                         \
    do {                                                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                            \
        if (a_ < b_) RL_FAIL_("%s >= %s: %lld < %lld", #a, #b, a_, b_);                                                \
    } while (0)
#define RL_ASSERT_LE_INT(a, b)                                                                                         \
    do {                                                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                            \
        if (a_ > b_) RL_FAIL_("%s <= %s: %lld > %lld", #a, #b, a_, b_);                                                \
    } while (0)
#define RL_ASSERT_EQ_DBL(a, b)                                                                                         \
    do {                                                                                                               \
        double a_ = (double)(a), b_ = (double)(b);                                                                     \
        if (!(a_ == b_)) RL_FAIL_("%s == %s: %.9f != %.9f", #a, #b, a_, b_);                                           \
    } while (0)
#define RL_ASSERT_GE_DBL(a, b)                                                                                         \
    do {                                                                                                               \
        double a_ = (double)(a), b_ = (double)(b);                                                                     \
        if (!(a_ >= b_)) RL_FAIL_("%s >= %s: %.9f < %.9f", #a, #b, a_, b_);                                            \
    } while (0)
#define RL_ASSERT_LE_DBL(a, b)                                                                                         \
    do {                                                                                                               \
        double a_ = (double)(a), b_ = (double)(b);                                                                     \
        if (!(a_ <= b_)) RL_FAIL_("%s <= %s: %.9f > %.9f", #a, #b, a_, b_);                                            \
    } while (0)
#define RL_ASSERT_STR_EQ(a, b)                                                                                         \
    do {                                                                                                               \
        const char *a_ = (a), *b_ = (b);                                                                               \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                                                         \
            RL_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                    \
    } while (0)

/* Monotonic seconds, for lower-bound timing checks only. */
static inline double rl_test_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline unsigned rl_test_timeout(void) {
    const char *t = getenv("RL_TEST_TIMEOUT");
    const char *s = getenv("RL_TEST_SLOW");
    unsigned base = t ? (unsigned)atoi(t) : 30;
    unsigned slow = s ? (unsigned)atoi(s) : 1;
    return (base ? base : 30) * (slow ? slow : 1);
}

/* Scales an iteration count down under valgrind (RL_TEST_SLOW > 1). */
static inline long rl_test_scaled(long n) {
    const char *s = getenv("RL_TEST_SLOW");
    long slow = s ? atol(s) : 1;
    if (slow <= 1) return n;
    long m = n / slow;
    return m > 0 ? m : 1;
}

/* How many file descriptors this process has open, as /proc/self/fd lists
   them (-1 without /proc); compare two counts, not a count with a literal. */
static inline int rl_test_open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* The lowest descriptor whose /proc/self/fd link reads `kind` (e.g.
   "anon_inode:[eventpoll]"), or -1: how a test finds the loop's own kernel
   objects without reaching into the library. */
static inline int rl_test_find_fd(const char *kind) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], link[256];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len < 0) continue;
        link[len] = '\0';
        int fd = atoi(e->d_name);
        if (strcmp(link, kind) == 0 && fd != dirfd(d) && (found < 0 || fd < found)) found = fd;
    }
    closedir(d);
    return found;
}

/* Runs fn in a child process that must abort (SIGABRT) after printing, on
   stderr, a message holding every string of the NULL-terminated `needles`;
   fails (printing what the child wrote) otherwise. */
static inline void rl_test_expect_abort_(void (*fn)(void), const char *const *needles, const char *file, int line) {
    int out[2];
    if (pipe(out) != 0) RL_FAIL_("pipe");
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) RL_FAIL_("fork");
    if (pid == 0) {
        close(out[0]);
        dup2(out[1], 2);
        close(out[1]);
        fn();
        _exit(0);
    }
    close(out[1]);
    char text[8192];
    size_t used = 0;
    for (;;) { /* to the end: a child that keeps writing must not block */
        char spill[512];
        int full = used == sizeof text - 1;
        ssize_t n = full ? read(out[0], spill, sizeof spill) : read(out[0], text + used, sizeof text - 1 - used);
        if (n > 0 && !full) used += (size_t)n;
        if (n == 0 || (n < 0 && errno != EINTR)) break;
    }
    text[used] = '\0';
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    int aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    int missing = -1;
    for (int i = 0; needles[i]; i++)
        if (!strstr(text, needles[i])) missing = i;
    if (aborted && missing < 0) return;
    fprintf(stderr, "  %s:%d: expected an abort saying", file, line);
    for (int i = 0; needles[i]; i++) fprintf(stderr, " \"%s\"", needles[i]);
    if (WIFSIGNALED(status)) fprintf(stderr, "; child died of signal %d", WTERMSIG(status));
    else fprintf(stderr, "; child exited with %d", WEXITSTATUS(status));
    fprintf(stderr, "; it wrote (%zu bytes):\n%.2000s\n", used, text);
    fflush(stderr);
    _exit(1);
}

#define RL_EXPECT_ABORT(fn, ...)                                                                                       \
    do {                                                                                                               \
        const char *const needles_[] = {__VA_ARGS__, NULL};                                                            \
        rl_test_expect_abort_((fn), needles_, __FILE__, __LINE__);                                                     \
    } while (0)

static inline int rl_test_run_one(const rl_test *t) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 0;
    }
    if (pid == 0) {
        alarm(rl_test_timeout());
        t->fn();
        fflush(stdout);
        exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok   %s\n", t->name);
        return 1;
    }
    if (WIFSIGNALED(status))
        printf("FAIL %s (signal %d%s)\n", t->name, WTERMSIG(status), WTERMSIG(status) == SIGALRM ? ", timed out" : "");
    else printf("FAIL %s (exit %d)\n", t->name, WEXITSTATUS(status));
    return 0;
}

static inline int rl_test_main(int argc, char **argv, const rl_test *tests, size_t count) {
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < count; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        if (rl_test_run_one(&tests[i])) passed++;
        else failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* ---------------------------------------------------------------------------
 * Run-loop helpers. Available when <CRunLoop.h> is included before "rltest.h".
 */
#ifdef CRUNLOOP_H

#include <stdatomic.h>

/* Sleeps `s` seconds (restarting on EINTR). */
static inline void rl_test_sleep(double s) {
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {}
}

/* An ordered record of events (activities, callout ids), filled from callouts
   on the loop's own thread. */
typedef struct {
    int n;
    long ev[4096];
} rl_test_log;

static inline void rl_test_log_add(rl_test_log *log, long ev) {
    if (log->n < (int)(sizeof(log->ev) / sizeof(log->ev[0]))) log->ev[log->n] = ev;
    log->n++;
}

/* Fails unless the log holds exactly the `n` events of `want`. */
#define RL_ASSERT_LOG(log, ...)                                                                                        \
    do {                                                                                                               \
        const long want_[] = {__VA_ARGS__};                                                                            \
        rl_test_log_expect_((log), want_, (int)(sizeof(want_) / sizeof(long)), __FILE__, __LINE__);                    \
    } while (0)

static inline void rl_test_log_expect_(const rl_test_log *log, const long *want, int n, const char *file, int line) {
    int ok = log->n == n;
    for (int i = 0; ok && i < n; i++) ok = log->ev[i] == want[i];
    if (ok) return;
    fprintf(stderr, "  %s:%d: log mismatch\n    want:", file, line);
    for (int i = 0; i < n; i++) fprintf(stderr, " %ld", want[i]);
    fprintf(stderr, "\n    got: ");
    for (int i = 0; i < log->n && i < 4096; i++) fprintf(stderr, " %ld", log->ev[i]);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(1);
}

/* Observer callout that appends the activity to the rl_test_log in info. */
static inline void rl_test_log_activity(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    rl_test_log_add((rl_test_log *)info, (long)a);
}

/* A repeating observer of `activities` that logs into `log`; the caller
   releases it. */
static inline RLRunLoopObserverRef rl_test_log_observer(RLOptionFlags activities, RLIndex order, rl_test_log *log) {
    RLRunLoopObserverContext ctx = {0, log, NULL, NULL, NULL};
    return RLRunLoopObserverCreate(activities, true, order, rl_test_log_activity, &ctx);
}

/* Runs `mode` of the current loop for `seconds`; returns how many times it
   woke from a sleep (kRLRunLoopAfterWaiting), the run's result in *result. */
static inline int rl_test_count_sleeps(RLRunLoopMode mode, double seconds, RLRunLoopRunResult *result) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    rl_test_log log = {0};
    RLRunLoopObserverRef o = rl_test_log_observer(kRLRunLoopAfterWaiting, 0, &log);
    RLRunLoopAddObserver(rl, o, mode);
    *result = RLRunLoopRunInMode(mode, seconds, false);
    RLRunLoopRemoveObserver(rl, o, mode);
    RLRelease(o);
    return log.n;
}

/* A version-0 source calling perform(info); the caller releases it. */
static inline RLRunLoopSourceRef rl_test_source0(RLIndex order, void (*perform)(void *), void *info) {
    RLRunLoopSourceContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.version = 0;
    ctx.info = info;
    ctx.perform = perform;
    return RLRunLoopSourceCreate(order, &ctx);
}

/* A version-1 source watching get_fd(info), calling perform(info); the caller
   releases it. */
static inline RLRunLoopSourceRef rl_test_source1(RLIndex order, int (*get_fd)(void *), void (*perform)(void *),
                                                 void *info) {
    RLRunLoopSourceContext1 ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.version = 1;
    ctx.info = info;
    ctx.getFileDescriptor = get_fd;
    ctx.perform = perform;
    return RLRunLoopSourceCreate(order, (RLRunLoopSourceContext *)&ctx);
}

/* What a version-1 source made by rl_test_fd_source sees: the fd it
   watches, and how often it performed (draining the fd first when drain). */
typedef struct {
    int fd;
    int performed;
    bool drain;
} rl_test_fd_info;

static inline int rl_test_fd_of(void *info) {
    return ((rl_test_fd_info *)info)->fd;
}

static inline void rl_test_fd_perform(void *info) {
    rl_test_fd_info *v = info;
    v->performed++;
    if (v->drain) {
        char buf[64];
        while (read(v->fd, buf, sizeof buf) > 0) {}
    }
}

/* A version-1 source watching info->fd, counting (and draining) in info. */
static inline RLRunLoopSourceRef rl_test_fd_source(rl_test_fd_info *info) {
    return rl_test_source1(0, rl_test_fd_of, rl_test_fd_perform, info);
}

static inline void rl_test_nothing(void *info) {
    (void)info;
}

/* An info that counts the references its context callbacks hold, and their
   retains and releases. */
typedef struct {
    int refs, retains, releases;
} rl_test_counted;

static inline const void *rl_test_counted_retain(const void *info) {
    ((rl_test_counted *)info)->refs++;
    ((rl_test_counted *)info)->retains++;
    return info;
}

static inline void rl_test_counted_release(const void *info) {
    ((rl_test_counted *)info)->refs--;
    ((rl_test_counted *)info)->releases++;
}

/* Context callbacks counting in globals, for contexts whose info is
   something else (a probe the callout fills); the description is
   "test-context". */
static int rl_test_ctx_retains __attribute__((unused));
static int rl_test_ctx_releases __attribute__((unused));

static inline const void *rl_test_ctx_retain(const void *info) {
    rl_test_ctx_retains++;
    return info;
}

static inline void rl_test_ctx_release(const void *info) {
    (void)info;
    rl_test_ctx_releases++;
}

static inline char *rl_test_ctx_describe(const void *info) {
    (void)info;
    return strdup("test-context");
}

/* Callouts that only count their calls, whatever their info: each kind in
   its own counter, and every call in rl_test_calls (which a test's own
   callouts may count in too). A test resets them as it needs. */
static long rl_test_calls __attribute__((unused));
static long rl_test_performed __attribute__((unused));
static long rl_test_fired __attribute__((unused));
static long rl_test_observed __attribute__((unused));
static long rl_test_messages __attribute__((unused));

static inline void rl_test_count_perform(void *info) {
    (void)info;
    rl_test_performed++;
    rl_test_calls++;
}

static inline void rl_test_count_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_fired++;
    rl_test_calls++;
}

static inline void rl_test_count_observe(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    rl_test_observed++;
    rl_test_calls++;
}

static inline void rl_test_count_message(RLMessagePortRef p, int32_t id, const void *bytes, size_t len, void *info) {
    (void)p;
    (void)id;
    (void)bytes;
    (void)len;
    (void)info;
    rl_test_messages++;
    rl_test_calls++;
}

/* Callouts that log their info (a small number cast to a pointer) in
   rl_test_callouts, so a test can check which ran in what order with
   RL_ASSERT_LOG(&rl_test_callouts, ...); a test's own callouts may log there
   too. */
static rl_test_log rl_test_callouts __attribute__((unused));

static inline void rl_test_log_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
}

static inline void rl_test_log_perform(void *info) {
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
}

static inline void rl_test_log_observe(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    rl_test_log_add(&rl_test_callouts, (long)(intptr_t)info);
}

/* What a timer calling rl_test_note_fire saw: how often it fired, and when
   it last did (its loop's time, RLRunLoopGetCurrentTime, and rl_test_now()). */
typedef struct {
    int fired;
    RLAbsoluteTime at;
    double mono_at;
} rl_test_fire_note;

/* Timer callout noting its fire in the rl_test_fire_note that info points
   to (and counting it in rl_test_fired and rl_test_calls). */
static inline void rl_test_note_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    rl_test_fire_note *note = info;
    note->at = RLRunLoopGetCurrentTime(RLRunLoopGetCurrent());
    note->mono_at = rl_test_now();
    note->fired++;
    rl_test_fired++;
    rl_test_calls++;
}

/* Observer callout counting its calls in the int that info points to. */
static inline void rl_test_count_call(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (*(int *)info)++;
}

/* An observer of `activities` in `mode` of rl counting its calls in *count;
   the caller releases it. */
static inline RLRunLoopObserverRef rl_test_counting_observer(RLRunLoopRef rl, RLRunLoopMode mode,
                                                             RLOptionFlags activities, int *count) {
    RLRunLoopObserverContext ctx = {0, count, NULL, NULL, NULL};
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(activities, true, 0, rl_test_count_call, &ctx);
    RLRunLoopAddObserver(rl, o, mode);
    return o;
}

/* One counting the times the loop woke from a sleep. */
static inline RLRunLoopObserverRef rl_test_wake_counter(RLRunLoopRef rl, RLRunLoopMode mode, int *count) {
    return rl_test_counting_observer(rl, mode, kRLRunLoopAfterWaiting, count);
}

/* Adds a never-signalled version-0 source to `mode` of `rl` so that the mode
   is not empty; returns it (the caller releases it). */
static inline RLRunLoopSourceRef rl_test_keep_mode(RLRunLoopRef rl, RLRunLoopMode mode) {
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_nothing, NULL);
    RLRunLoopAddSource(rl, s, mode);
    return s;
}

/* A timer calling callout with info; the caller releases it. */
static inline RLRunLoopTimerRef rl_test_timer(RLAbsoluteTime fire, RLTimeInterval interval,
                                              RLRunLoopTimerCallBack callout, void *info) {
    RLRunLoopTimerContext ctx = {0, info, NULL, NULL, NULL};
    return RLRunLoopTimerCreate(fire, interval, 0, 0, callout, &ctx);
}

/* The same timer, due `delay` seconds from rl's time (RLRunLoopGetCurrentTime:
   the wall clock, or its manual clock), added to `mode` of rl; the caller
   releases it. */
static inline RLRunLoopTimerRef rl_test_add_timer(RLRunLoopRef rl, RLRunLoopMode mode, double delay,
                                                  RLTimeInterval interval, RLRunLoopTimerCallBack callout, void *info) {
    RLRunLoopTimerRef t = rl_test_timer(RLRunLoopGetCurrentTime(rl) + delay, interval, callout, info);
    RLRunLoopAddTimer(rl, t, mode);
    return t;
}

/* A one-shot timer due at `date` that logs `index` in rl_test_callouts;
   the caller releases it. */
static inline RLRunLoopTimerRef rl_test_indexed_timer(RLAbsoluteTime date, long index) {
    return rl_test_timer(date, 0, rl_test_log_fire, (void *)(intptr_t)index);
}

/* The current thread's loop, put on a manual clock reading `start`
   (CRunLoopClock.h): its timers fire only as the test advances the clock,
   at once, whatever the machine's load. */
static inline RLRunLoopRef rl_test_manual_loop(RLAbsoluteTime start) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    if (!RLRunLoopUseManualClock(rl, start)) {
        fprintf(stderr, "  could not put the loop on a manual clock\n");
        _exit(1);
    }
    return rl;
}

/* The current loop's time (RLRunLoopGetCurrentTime). */
static inline RLAbsoluteTime rl_test_loop_time(void) {
    return RLRunLoopGetCurrentTime(RLRunLoopGetCurrent());
}

/* Advances the current loop's manual clock by `seconds`. */
static inline void rl_test_advance(double seconds) {
    if (!RLRunLoopClockAdvance(RLRunLoopGetCurrent(), seconds)) {
        fprintf(stderr, "  could not advance the loop's clock\n");
        _exit(1);
    }
}

/* Timer callout that stops the current loop. */
static inline void rl_test_stop_current(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    RLRunLoopStop(RLRunLoopGetCurrent());
}

/* Waits (bounded by `limit` seconds) until *v reaches `want`; the caller
   asserts on the value. */
static inline void rl_test_wait_for(atomic_int *v, int want, double limit) {
    double end = rl_test_now() + limit;
    while (atomic_load(v) < want && rl_test_now() < end) rl_test_sleep(0.001);
}

/* Waits (bounded by `limit` seconds) until rl sleeps; returns whether it does. */
static inline int rl_test_wait_sleeping(RLRunLoopRef rl, double limit) {
    double end = rl_test_now() + limit;
    while (!RLRunLoopIsWaiting(rl)) {
        if (rl_test_now() > end) return 0;
        rl_test_sleep(0.0005);
    }
    return 1;
}

/* n loops, each on a thread of its own (RLThread), retained in loops[]. A
   callout on one loop may still reach another while the threads stop, so
   rl_test_stop_loops_on_threads keeps every loop alive until all the
   threads are gone. */
static inline void rl_test_start_loops_on_threads(int n, RLThreadRef *threads, RLRunLoopRef *loops) {
    for (int k = 0; k < n; k++) {
        threads[k] = RLThreadCreate("rltest");
        RL_ASSERT(RLThreadStart(threads[k]));
        loops[k] = (RLRunLoopRef)RLRetain(RLThreadGetRunLoop(threads[k]));
    }
}

static inline void rl_test_stop_loops_on_threads(int n, RLThreadRef *threads, RLRunLoopRef *loops) {
    for (int k = 0; k < n; k++) RLThreadStop(threads[k]);
    for (int k = 0; k < n; k++) {
        RLThreadRelease(threads[k]);
        RLRelease(loops[k]);
    }
}

/* True when the NULL-terminated list holds `name`. */
static inline int rl_test_list_has(char **list, const char *name) {
    for (char **p = list; p && *p; p++)
        if (strcmp(*p, name) == 0) return 1;
    return 0;
}

static inline void rl_test_free_list(char **list) {
    for (char **p = list; p && *p; p++) free(*p);
    free(list);
}

#endif /* CRUNLOOP_H */

#endif /* RLTEST_H */
