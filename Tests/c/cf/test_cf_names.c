/*
 * test_cf_names.c: CoreFoundation's run-loop names (CRunLoopCFNames.h).
 *
 * Written the macOS way: only CF names, CF's positional context initializers
 * and CF's numeric values, so a mapping onto the wrong function, a context
 * field out of CF's order or a constant with another value fails here.
 * test_cf_types.c covers the strings, arrays, data and allocators.
 */
#include <CRunLoopCFNames.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>

/* CF programs name their modes in file-scope constants. */
static CFStringRef kTrackingMode = CFSTR("Tracking");
static const CFRunLoopMode kWatchedModes[] = {CFSTR("SourceMode"), kCFRunLoopDefaultMode};

static const char *text(CFStringRef string) {
    return CFStringGetCStringPtr(string, kCFStringEncodingUTF8);
}

/* ---- names and values ------------------------------------------------------ */

static void constants_have_cf_values(void) {
    RL_ASSERT_EQ_INT(kCFRunLoopRunFinished, 1);
    RL_ASSERT_EQ_INT(kCFRunLoopRunStopped, 2);
    RL_ASSERT_EQ_INT(kCFRunLoopRunTimedOut, 3);
    RL_ASSERT_EQ_INT(kCFRunLoopRunHandledSource, 4);
    RL_ASSERT_EQ_INT(kCFRunLoopEntry, 1);
    RL_ASSERT_EQ_INT(kCFRunLoopBeforeTimers, 2);
    RL_ASSERT_EQ_INT(kCFRunLoopBeforeSources, 4);
    RL_ASSERT_EQ_INT(kCFRunLoopBeforeWaiting, 32);
    RL_ASSERT_EQ_INT(kCFRunLoopAfterWaiting, 64);
    RL_ASSERT_EQ_INT(kCFRunLoopExit, 128);
    RL_ASSERT_EQ_INT(kCFRunLoopAllActivities, 0x0FFFFFFF);
    RL_ASSERT_EQ_INT(kCFFileDescriptorReadCallBack, 1);
    RL_ASSERT_EQ_INT(kCFFileDescriptorWriteCallBack, 2);
    RL_ASSERT_STR_EQ(text(kCFRunLoopDefaultMode), "kCFRunLoopDefaultMode");
    RL_ASSERT_STR_EQ(text(kCFRunLoopCommonModes), "kCFRunLoopCommonModes");
    RL_ASSERT_STR_EQ(text(kTrackingMode), "Tracking");
    RL_ASSERT(kWatchedModes[1] == kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(sizeof(Boolean), 1);
    RL_ASSERT_EQ_INT(sizeof(CFIndex), sizeof(long));
    RL_ASSERT_EQ_INT(sizeof(CFOptionFlags), sizeof(unsigned long));
    RL_ASSERT_EQ_INT(sizeof(CFHashCode), sizeof(unsigned long));
    RL_ASSERT_EQ_INT(sizeof(CFAbsoluteTime), sizeof(double));
    RL_ASSERT_EQ_INT(kCFAbsoluteTimeIntervalSince1970, 978307200);
    RL_ASSERT_EQ_INT(kCFAbsoluteTimeIntervalSince1904, 3061152000LL);
    RL_ASSERT(kCFAllocatorDefault == NULL);
    RL_ASSERT_EQ_INT(sizeof(SInt32), 4);
    RL_ASSERT_EQ_INT(sizeof(UInt64), 8);
    RL_ASSERT_EQ_INT(TRUE, 1);
    RL_ASSERT_EQ_INT(FALSE, 0);
}

static void absolute_time_counts_from_2001(void) {
    double unix_now = (double)time(NULL);
    CFAbsoluteTime now = CFAbsoluteTimeGetCurrent();
    RL_ASSERT(fabs(now + kCFAbsoluteTimeIntervalSince1970 - unix_now) < 5.0);
}

/* ---- timers ---------------------------------------------------------------- */

typedef struct {
    int fired;
    int stop_after;
    CFRunLoopTimerRef last_timer;
} timer_state;

static void count_timer(CFRunLoopTimerRef timer, void *info) {
    timer_state *state = info;
    state->last_timer = timer;
    if (++state->fired == state->stop_after) CFRunLoopStop(CFRunLoopGetCurrent());
}

static void repeating_timer_fires_and_stops_the_run(void) {
    timer_state state = {0, 3, NULL};
    CFRunLoopTimerContext context = {0, &state, NULL, NULL, NULL};
    CFRunLoopTimerRef timer =
        CFRunLoopTimerCreate(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 0.01, 0.01, 0, 0, count_timer, &context);
    RL_ASSERT(timer != NULL);
    RL_ASSERT(CFRunLoopTimerIsValid(timer));
    RL_ASSERT(CFRunLoopTimerDoesRepeat(timer));
    RL_ASSERT_EQ_DBL(CFRunLoopTimerGetInterval(timer), 0.01);
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopAddTimer(rl, timer, kCFRunLoopDefaultMode);
    RL_ASSERT(CFRunLoopContainsTimer(rl, timer, kCFRunLoopDefaultMode));
    RL_ASSERT(!CFRunLoopContainsTimer(rl, timer, CFSTR("OtherMode")));
    RL_ASSERT_EQ_DBL(CFRunLoopGetNextTimerFireDate(rl, kCFRunLoopDefaultMode), CFRunLoopTimerGetNextFireDate(timer));
    SInt32 result = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, FALSE); /* older CF code's spelling */
    RL_ASSERT_EQ_INT(result, kCFRunLoopRunStopped);
    RL_ASSERT_EQ_INT(state.fired, 3);
    RL_ASSERT(state.last_timer == timer);
    CFRunLoopTimerInvalidate(timer);
    RL_ASSERT(!CFRunLoopTimerIsValid(timer));
    RL_ASSERT(!CFRunLoopContainsTimer(rl, timer, kCFRunLoopDefaultMode));
    CFRelease(timer);
}

static void timer_accessors(void) {
    timer_state state = {0, 1, NULL};
    CFRunLoopTimerContext context = {0, &state, NULL, NULL, NULL};
    CFAbsoluteTime when = CFAbsoluteTimeGetCurrent() + 1000.0;
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, when, 0, 0, 7, count_timer, &context);
    RL_ASSERT(!CFRunLoopTimerDoesRepeat(timer));
    RL_ASSERT_EQ_INT(CFRunLoopTimerGetOrder(timer), 7);
    RL_ASSERT_EQ_DBL(CFRunLoopTimerGetNextFireDate(timer), when);
    CFRunLoopTimerSetNextFireDate(timer, when + 5.0);
    RL_ASSERT_EQ_DBL(CFRunLoopTimerGetNextFireDate(timer), when + 5.0);
    CFRunLoopTimerSetTolerance(timer, 0.25);
    RL_ASSERT_EQ_DBL(CFRunLoopTimerGetTolerance(timer), 0.25);
    CFRunLoopTimerContext copy = {0};
    CFRunLoopTimerGetContext(timer, &copy);
    RL_ASSERT(copy.info == &state);
    /* A one-shot timer moved to now fires once, then is invalid. */
    CFRunLoopTimerSetNextFireDate(timer, CFAbsoluteTimeGetCurrent());
    CFRunLoopAddTimer(CFRunLoopGetCurrent(), timer, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT_EQ_INT(state.fired, 1);
    RL_ASSERT(!CFRunLoopTimerIsValid(timer));
    CFRelease(timer);
}

/* CFRetain/CFRelease/CFCopyDescription fit a context, as on macOS when info
   is a CF object. ASan and valgrind see a missing retain or release. */
static int object_timer_fired;

static void object_timer(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    if (CFRunLoopSourceIsValid((CFRunLoopSourceRef)info)) object_timer_fired++;
    CFRunLoopStop(CFRunLoopGetCurrent());
}

static void cf_object_as_context_info(void) {
    CFRunLoopSourceContext source_context = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    CFRunLoopSourceRef object = CFRunLoopSourceCreate(NULL, 0, &source_context);
    CFRunLoopTimerContext context = {0, (void *)object, CFRetain, CFRelease, CFCopyDescription};
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent(), 0, 0, 0, object_timer, &context);
    CFRelease(object); /* the timer keeps it alive */
    CFStringRef description = CFCopyDescription(timer);
    RL_ASSERT(description != NULL && strstr(text(description), "RunLoopSource") != NULL);
    CFRelease(description);
    CFRunLoopAddTimer(CFRunLoopGetCurrent(), timer, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT_EQ_INT(object_timer_fired, 1);
    CFRunLoopTimerContext copy;
    CFRunLoopTimerGetContext(timer, &copy);
    RL_ASSERT(copy.retain == CFRetain && copy.release == CFRelease);
    CFRelease(timer);
}

/* ---- version-0 sources ------------------------------------------------------ */

typedef struct {
    int scheduled, cancelled, performed, released;
    CFRunLoopRef scheduled_in;
    char mode[64];
} source_state;

static const void *source_retain(const void *info) {
    return info;
}
static void source_release(const void *info) {
    ((source_state *)(uintptr_t)info)->released++;
}
static Boolean source_equal(const void *a, const void *b) {
    return a == b;
}
static CFHashCode source_hash(const void *info) {
    return (CFHashCode)info;
}
static void source_schedule(void *info, CFRunLoopRef rl, CFRunLoopMode mode) {
    source_state *state = info;
    state->scheduled++;
    state->scheduled_in = rl;
    if (!CFStringGetCString(mode, state->mode, sizeof state->mode, kCFStringEncodingUTF8)) state->mode[0] = '\0';
}
static void source_cancel(void *info, CFRunLoopRef rl, CFRunLoopMode mode) {
    (void)rl;
    (void)mode;
    ((source_state *)info)->cancelled++;
}
static void source_perform(void *info) {
    ((source_state *)info)->performed++;
}

static void source0_in_cf_field_order(void) {
    source_state state = {0};
    CFRunLoopSourceContext context = {0,           &state,          source_retain, source_release, NULL, source_equal,
                                      source_hash, source_schedule, source_cancel, source_perform};
    CFRunLoopSourceRef source = CFRunLoopSourceCreate(kCFAllocatorDefault, 3, &context);
    RL_ASSERT(source != NULL);
    RL_ASSERT_EQ_INT(CFRunLoopSourceGetOrder(source), 3);
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopMode mode = kWatchedModes[0];
    CFRunLoopAddSource(rl, source, mode);
    RL_ASSERT(CFRunLoopContainsSource(rl, source, mode));
    RL_ASSERT_EQ_INT(state.scheduled, 1);
    RL_ASSERT(state.scheduled_in == rl);
    RL_ASSERT_STR_EQ(state.mode, "SourceMode");

    /* Not signalled: the run times out; signalled: handled once. */
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(mode, 0, true), kCFRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(state.performed, 0);
    CFRunLoopSourceSignal(source);
    CFRunLoopWakeUp(rl);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(mode, 30.0, true), kCFRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(state.performed, 1);

    CFRunLoopSourceContext copy;
    CFRunLoopSourceGetContext(source, &copy);
    RL_ASSERT(copy.info == &state && copy.perform == source_perform && copy.schedule == source_schedule);

    CFRunLoopRemoveSource(rl, source, mode);
    RL_ASSERT_EQ_INT(state.cancelled, 1);
    RL_ASSERT(!CFRunLoopContainsSource(rl, source, mode));
    RL_ASSERT(CFRunLoopSourceIsValid(source));
    CFRunLoopSourceInvalidate(source);
    RL_ASSERT(!CFRunLoopSourceIsValid(source));
    RL_ASSERT_EQ_INT(state.released, 0);
    CFRelease(source); /* the last reference: the context is released */
    RL_ASSERT_EQ_INT(state.released, 1);
}

/* ---- version-1 sources (a file descriptor here) ------------------------------ */

typedef struct {
    int fd;
    int performed;
} pipe_state;

static int pipe_fd(void *info) {
    return ((pipe_state *)info)->fd;
}
static void pipe_drain(void *info) {
    pipe_state *state = info;
    char buffer[16];
    while (read(state->fd, buffer, sizeof buffer) > 0) state->performed++;
}

static void source1_watches_a_descriptor(void) {
    int fds[2];
    RL_ASSERT(pipe2(fds, O_NONBLOCK) == 0);
    pipe_state state = {fds[0], 0};
    CFRunLoopSourceContext1 context = {1, &state, NULL, NULL, NULL, NULL, NULL, pipe_fd, pipe_drain};
    CFRunLoopSourceRef source = CFRunLoopSourceCreate(NULL, 0, (CFRunLoopSourceContext *)&context);
    RL_ASSERT(source != NULL);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true), kCFRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(write(fds[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, true), kCFRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(state.performed, 1);
    CFRunLoopSourceContext1 copy;
    CFRunLoopSourceGetContext(source, (CFRunLoopSourceContext *)&copy);
    RL_ASSERT(copy.version == 1 && copy.getFileDescriptor == pipe_fd);
    CFRunLoopSourceInvalidate(source);
    CFRelease(source);
    close(fds[0]);
    close(fds[1]);
}

/* ---- observers ---------------------------------------------------------------- */

typedef struct {
    CFRunLoopActivity seen[64];
    int count;
} activity_log;

static void log_activity(CFRunLoopObserverRef observer, CFRunLoopActivity activity, void *info) {
    (void)observer;
    activity_log *log = info;
    if (log->count < 64) log->seen[log->count++] = activity;
}

static void stop_now(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    (void)info;
    CFRunLoopStop(CFRunLoopGetCurrent());
}

static void observer_sees_a_pass(void) {
    activity_log log = {{0}, 0};
    CFRunLoopObserverContext context = {0, &log, NULL, NULL, NULL};
    CFRunLoopObserverRef observer =
        CFRunLoopObserverCreate(kCFAllocatorDefault, kCFRunLoopAllActivities, true, 5, log_activity, &context);
    RL_ASSERT(observer != NULL);
    RL_ASSERT_EQ_INT(CFRunLoopObserverGetActivities(observer), kCFRunLoopAllActivities);
    RL_ASSERT(CFRunLoopObserverDoesRepeat(observer));
    RL_ASSERT_EQ_INT(CFRunLoopObserverGetOrder(observer), 5);
    CFRunLoopObserverContext copy;
    CFRunLoopObserverGetContext(observer, &copy);
    RL_ASSERT(copy.info == &log);

    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopAddObserver(rl, observer, kCFRunLoopDefaultMode);
    RL_ASSERT(CFRunLoopContainsObserver(rl, observer, kCFRunLoopDefaultMode));
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent() + 0.01, 0, 0, 0, stop_now, NULL);
    CFRunLoopAddTimer(rl, timer, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, false), kCFRunLoopRunStopped);

    RL_ASSERT(log.count >= 4);
    RL_ASSERT_EQ_INT(log.seen[0], kCFRunLoopEntry);
    RL_ASSERT_EQ_INT(log.seen[1], kCFRunLoopBeforeTimers);
    RL_ASSERT_EQ_INT(log.seen[2], kCFRunLoopBeforeSources);
    RL_ASSERT_EQ_INT(log.seen[log.count - 1], kCFRunLoopExit);

    CFRunLoopObserverRef once = CFRunLoopObserverCreate(NULL, kCFRunLoopExit, false, 0, log_activity, &context);
    RL_ASSERT(!CFRunLoopObserverDoesRepeat(once) && CFRunLoopObserverIsValid(once));
    CFRelease(once);

    CFRunLoopRemoveObserver(rl, observer, kCFRunLoopDefaultMode);
    RL_ASSERT(!CFRunLoopContainsObserver(rl, observer, kCFRunLoopDefaultMode));
    CFRunLoopObserverInvalidate(observer);
    RL_ASSERT(!CFRunLoopObserverIsValid(observer));
    CFRelease(observer);
    CFRelease(timer);
}

/* ---- modes -------------------------------------------------------------------- */

typedef struct {
    CFRunLoopMode expected;
    int matched;
} mode_check;

static void check_current_mode(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    mode_check *check = info;
    CFRunLoopMode mode = CFRunLoopCopyCurrentMode(CFRunLoopGetCurrent());
    if (CFEqual(mode, check->expected)) check->matched++;
    CFRelease(mode);
    CFRunLoopStop(CFRunLoopGetCurrent());
}

static int modes_contain(CFArrayRef modes, CFRunLoopMode name) {
    for (CFIndex i = 0; i < CFArrayGetCount(modes); i++)
        if (CFEqual((CFStringRef)CFArrayGetValueAtIndex(modes, i), name)) return 1;
    return 0;
}

static void custom_and_common_modes(void) {
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    RL_ASSERT(CFRunLoopCopyCurrentMode(rl) == NULL);
    mode_check check = {kTrackingMode, 0};
    CFRunLoopTimerContext context = {0, &check, NULL, NULL, NULL};
    CFRunLoopTimerRef timer =
        CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent(), 0.001, 0, 0, check_current_mode, &context);
    CFRunLoopAddCommonMode(rl, kTrackingMode);
    CFRunLoopAddTimer(rl, timer, kCFRunLoopCommonModes);
    RL_ASSERT(CFRunLoopContainsTimer(rl, timer, kCFRunLoopCommonModes));

    /* A mode name built at run time is the same mode (equal by content). */
    CFStringRef name = CFStringCreateWithFormat(NULL, NULL, CFSTR("%s%s"), "Track", "ing");
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(name, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT_EQ_INT(check.matched, 1);
    CFRelease(name);

    check.expected = kCFRunLoopDefaultMode;
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT_EQ_INT(check.matched, 2);

    CFArrayRef modes = CFRunLoopCopyAllModes(rl);
    RL_ASSERT(CFArrayGetCount(modes) >= 2);
    RL_ASSERT(modes_contain(modes, CFSTR("Tracking")));
    for (CFIndex i = 0; i < CFArrayGetCount(modes); i++)
        RL_ASSERT(CFGetTypeID(CFArrayGetValueAtIndex(modes, i)) == CFStringGetTypeID());
    RL_ASSERT(modes_contain(modes, kCFRunLoopDefaultMode));
    RL_ASSERT(!modes_contain(modes, CFSTR("Nowhere")));
    RL_ASSERT(CFArrayGetValueAtIndex(modes, CFArrayGetCount(modes)) == NULL);
    CFRelease(modes);

    /* A mode with nothing in it finishes at once. */
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(CFSTR("Empty"), 30.0, false), kCFRunLoopRunFinished);
    CFRunLoopTimerInvalidate(timer);
    CFRelease(timer);
}

/* ---- CFFileDescriptor ----------------------------------------------------------- */

typedef struct {
    int reads;
    CFOptionFlags last_types;
    int released;
} fd_state;

static void fd_release(void *info) {
    ((fd_state *)info)->released++;
}

static void fd_readable(CFFileDescriptorRef f, CFOptionFlags callBackTypes, void *info) {
    fd_state *state = info;
    char byte;
    state->last_types = callBackTypes;
    if (read(CFFileDescriptorGetNativeDescriptor(f), &byte, 1) == 1) state->reads++;
    CFFileDescriptorEnableCallBacks(f, kCFFileDescriptorReadCallBack);
}

static void file_descriptor_reads_a_pipe(void) {
    int fds[2];
    RL_ASSERT(pipe(fds) == 0);
    fd_state state = {0, 0, 0};
    CFFileDescriptorContext context = {0, &state, NULL, fd_release, NULL};
    CFFileDescriptorRef f = CFFileDescriptorCreate(kCFAllocatorDefault, fds[0], true, fd_readable, &context);
    RL_ASSERT(f != NULL);
    RL_ASSERT_EQ_INT(CFFileDescriptorGetNativeDescriptor(f), fds[0]);
    RL_ASSERT(CFFileDescriptorIsValid(f));
    CFFileDescriptorContext copy;
    CFFileDescriptorGetContext(f, &copy);
    RL_ASSERT(copy.info == &state);
    CFFileDescriptorEnableCallBacks(f, kCFFileDescriptorReadCallBack);
    CFRunLoopSourceRef source = CFFileDescriptorCreateRunLoopSource(kCFAllocatorDefault, f, 0);
    RL_ASSERT(source != NULL);
    CFRunLoopAddSource(CFRunLoopGetCurrent(), source, kCFRunLoopDefaultMode);

    for (int i = 1; i <= 3; i++) {
        RL_ASSERT_EQ_INT(write(fds[1], "x", 1), 1);
        RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, true), kCFRunLoopRunHandledSource);
        RL_ASSERT_EQ_INT(state.reads, i);
        RL_ASSERT_EQ_INT(state.last_types, kCFFileDescriptorReadCallBack);
    }
    /* Disabled: a pending byte is not reported. */
    CFFileDescriptorDisableCallBacks(f, kCFFileDescriptorReadCallBack);
    RL_ASSERT_EQ_INT(write(fds[1], "x", 1), 1);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.05, true), kCFRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(state.reads, 3);

    CFFileDescriptorInvalidate(f); /* closes fds[0]: closeOnInvalidate */
    RL_ASSERT(!CFFileDescriptorIsValid(f));
    RL_ASSERT_EQ_INT(state.released, 1);
    RL_ASSERT(!CFRunLoopSourceIsValid(source));
    RL_ASSERT(fcntl(fds[0], F_GETFD) == -1);
    CFRelease(source);
    CFRelease(f);
    close(fds[1]);
}

/* ---- stop and wake from another thread ------------------------------------------ */

static void *stop_when_waiting(void *arg) {
    CFRunLoopRef rl = arg;
    RL_ASSERT(CFRunLoopGetMain() == rl);
    RL_ASSERT(CFRunLoopGetCurrent() != rl);
    while (!CFRunLoopIsWaiting(rl)) rl_test_sleep(0.001);
    CFRunLoopStop(rl);
    CFRunLoopWakeUp(rl);
    return NULL;
}

static void never_fires(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    (void)info;
    RL_FAIL_("a timer a year away fired");
}

static void run_stopped_from_another_thread(void) {
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    RL_ASSERT(rl == CFRunLoopGetMain());
    RL_ASSERT(!CFRunLoopIsWaiting(rl));
    CFRunLoopTimerRef keep = CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent() + 3.0e7, 0, 0, 0, never_fires, NULL);
    CFRunLoopAddTimer(rl, keep, kCFRunLoopDefaultMode);
    pthread_t thread;
    RL_ASSERT(pthread_create(&thread, NULL, stop_when_waiting, rl) == 0);
    CFRunLoopRun(); /* returns once stopped */
    pthread_join(thread, NULL);
    CFRunLoopTimerInvalidate(keep);
    CFRelease(keep);
}

/* ---- objects ---------------------------------------------------------------------- */

static void retain_release_and_describe(void) {
    CFRunLoopSourceContext context = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    CFRunLoopSourceRef source = CFRunLoopSourceCreate(NULL, 0, &context);
    RL_ASSERT(CFRetain(source) == source);
    CFRelease(source);
    RL_ASSERT(CFRunLoopSourceIsValid(source)); /* one reference left */
    RL_ASSERT(CFEqual(source, source));
    RL_ASSERT(CFEqual(CFSTR("a"), CFSTR("a")));
    RL_ASSERT(!CFEqual(CFSTR("a"), CFSTR("b")));
    CFRelease(kCFRunLoopDefaultMode); /* CF's constants tolerate a release */
    CFRelease(kCFRunLoopCommonModes);
    RL_ASSERT_STR_EQ(text(kCFRunLoopDefaultMode), "kCFRunLoopDefaultMode");
    CFStringRef description = CFCopyDescription(CFRunLoopGetCurrent());
    RL_ASSERT(description != NULL && strstr(text(description), "kCFRunLoopDefaultMode") != NULL);
    CFRelease(description);
    CFRelease(source);
}

/* ---- CF strings through the loop ---------------------------------------------------------- */

/* A schedule callout gets the mode as a string it may keep (CFRetain), as
   macOS programs keep (loop, mode) pairs to wake or remove later. */
typedef struct {
    CFStringRef scheduled[4], cancelled[4];
    int scheduled_count, cancelled_count;
} kept_modes;

static void keep_scheduled(void *info, CFRunLoopRef rl, CFRunLoopMode mode) {
    (void)rl;
    kept_modes *kept = info;
    if (kept->scheduled_count < 4) kept->scheduled[kept->scheduled_count++] = CFRetain(mode);
}
static void keep_cancelled(void *info, CFRunLoopRef rl, CFRunLoopMode mode) {
    (void)rl;
    kept_modes *kept = info;
    if (kept->cancelled_count < 4) kept->cancelled[kept->cancelled_count++] = CFRetain(mode);
}
static void nothing(void *info) {
    (void)info;
}

static void schedule_and_cancel_get_mode_strings(void) {
    kept_modes kept = {{NULL}, {NULL}, 0, 0};
    CFRunLoopSourceContext context = {0, &kept, NULL, NULL, NULL, NULL, NULL, keep_scheduled, keep_cancelled, nothing};
    CFRunLoopSourceRef source = CFRunLoopSourceCreate(NULL, 0, &context);
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFStringRef custom = CFStringCreateWithCString(NULL, "Custom", kCFStringEncodingUTF8);
    CFRunLoopAddSource(rl, source, kCFRunLoopDefaultMode);
    CFRunLoopAddSource(rl, source, custom);
    CFRunLoopRemoveSource(rl, source, custom);
    CFRunLoopRemoveSource(rl, source, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(kept.scheduled_count, 2);
    RL_ASSERT_EQ_INT(kept.cancelled_count, 2);
    RL_ASSERT(kept.scheduled[0] == kCFRunLoopDefaultMode); /* the very constant, as on macOS */
    RL_ASSERT(CFEqual(kept.scheduled[1], custom) && kept.scheduled[1] != custom);
    RL_ASSERT(CFGetTypeID(kept.scheduled[1]) == CFStringGetTypeID());
    RL_ASSERT_EQ_INT(CFGetRetainCount(kept.scheduled[1]), 1); /* ours alone, after the callout */
    RL_ASSERT(CFEqual(kept.cancelled[0], custom));
    RL_ASSERT(kept.cancelled[1] == kCFRunLoopDefaultMode);
    for (int i = 0; i < 2; i++) {
        CFRelease(kept.scheduled[i]);
        CFRelease(kept.cancelled[i]);
    }
    CFRelease(custom);
    CFRelease(source);
}

static CFStringRef describe_number(const void *info) {
    return CFStringCreateWithFormat(NULL, NULL, CFSTR("<number %d>"), *(const int *)info);
}

static CFStringRef describe_pipe(const void *info) {
    (void)info;
    return CFSTR("<number 42>"); /* a constant: the library's release of it does nothing */
}

static void observe_nothing(CFRunLoopObserverRef observer, CFRunLoopActivity activity, void *info) {
    (void)observer;
    (void)activity;
    (void)info;
}

static void contexts_describe_with_cf_strings(void) {
    int number = 42;
    CFRunLoopSourceContext source_context = {0, &number, NULL, NULL, describe_number, NULL, NULL, NULL, NULL, nothing};
    CFRunLoopSourceRef source = CFRunLoopSourceCreate(NULL, 0, &source_context);
    CFRunLoopTimerContext timer_context = {0, &number, NULL, NULL, describe_number};
    CFRunLoopTimerRef timer =
        CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent() + 1000, 0, 0, 0, never_fires, &timer_context);
    CFRunLoopObserverContext observer_context = {0, &number, NULL, NULL, describe_number};
    CFRunLoopObserverRef observer =
        CFRunLoopObserverCreate(NULL, kCFRunLoopEntry, true, 0, observe_nothing, &observer_context);
    int fds[2];
    RL_ASSERT(pipe(fds) == 0);
    pipe_state pipe_info = {fds[0], 0};
    CFRunLoopSourceContext1 context1 = {1, &pipe_info, NULL, NULL, describe_pipe, NULL, NULL, pipe_fd, pipe_drain};
    CFRunLoopSourceRef source1 = CFRunLoopSourceCreate(NULL, 0, (CFRunLoopSourceContext *)&context1);
    CFTypeRef items[] = {source, timer, observer, source1};
    for (size_t i = 0; i < 4; i++) {
        CFStringRef description = CFCopyDescription(items[i]);
        RL_ASSERT(strstr(text(description), "<number 42>") != NULL);
        CFRelease(description);
    }
    /* In the loop's own description too (its lock held meanwhile). */
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopAddTimer(rl, timer, CFSTR("Described"));
    CFStringRef description = CFCopyDescription(rl);
    RL_ASSERT(strstr(text(description), "<number 42>") != NULL);
    CFRelease(description);

    /* GetContext gives back the context as it was given. */
    CFRunLoopSourceContext source_copy;
    CFRunLoopSourceGetContext(source, &source_copy);
    RL_ASSERT(source_copy.version == 0 && source_copy.copyDescription == describe_number);
    CFRunLoopTimerContext timer_copy;
    CFRunLoopTimerGetContext(timer, &timer_copy);
    RL_ASSERT(timer_copy.version == 0 && timer_copy.copyDescription == describe_number && timer_copy.info == &number);
    CFRunLoopObserverContext observer_copy;
    CFRunLoopObserverGetContext(observer, &observer_copy);
    RL_ASSERT(observer_copy.version == 0 && observer_copy.copyDescription == describe_number);
    CFRunLoopSourceContext1 copy1;
    CFRunLoopSourceGetContext(source1, (CFRunLoopSourceContext *)&copy1);
    RL_ASSERT(copy1.version == 1 && copy1.copyDescription == describe_pipe && copy1.getFileDescriptor == pipe_fd);

    CFRelease(source1);
    close(fds[0]);
    close(fds[1]);

    CFRunLoopTimerInvalidate(timer);
    CFRelease(observer);
    CFRelease(timer);
    CFRelease(source);
}

/* Sources compare as CF compares them: through their context's equal and
   hash callbacks. */
static Boolean same_number(const void *a, const void *b) {
    return *(const int *)a == *(const int *)b;
}
static CFHashCode number_hash(const void *info) {
    return (CFHashCode) * (const int *)info;
}

static void sources_compare_through_their_contexts(void) {
    int one = 7, other = 7, third = 8;
    CFRunLoopSourceContext a = {0, &one, NULL, NULL, NULL, same_number, number_hash, NULL, NULL, nothing};
    CFRunLoopSourceContext b = {0, &other, NULL, NULL, NULL, same_number, number_hash, NULL, NULL, nothing};
    CFRunLoopSourceContext c = {0, &third, NULL, NULL, NULL, same_number, number_hash, NULL, NULL, nothing};
    CFRunLoopSourceContext plain = {0, &one, NULL, NULL, NULL, NULL, NULL, NULL, NULL, nothing};
    CFRunLoopSourceRef sa = CFRunLoopSourceCreate(NULL, 0, &a), sb = CFRunLoopSourceCreate(NULL, 0, &b);
    CFRunLoopSourceRef sc = CFRunLoopSourceCreate(NULL, 0, &c), sd = CFRunLoopSourceCreate(NULL, 1, &b);
    CFRunLoopSourceRef p1 = CFRunLoopSourceCreate(NULL, 0, &plain), p2 = CFRunLoopSourceCreate(NULL, 0, &plain);
    RL_ASSERT(CFEqual(sa, sb));
    RL_ASSERT_EQ_INT(CFHash(sa), 7);
    RL_ASSERT_EQ_INT(CFHash(sa), CFHash(sb));
    RL_ASSERT(!CFEqual(sa, sc)); /* unequal infos */
    RL_ASSERT(!CFEqual(sa, sd)); /* another order */
    RL_ASSERT(CFEqual(p1, p2));  /* no equal callback: the same info */
    RL_ASSERT_EQ_INT(CFHash(p1), (CFHashCode)&one);
    RL_ASSERT(!CFEqual(sa, p1)); /* other callbacks */
    CFRunLoopSourceInvalidate(sb);
    RL_ASSERT(!CFEqual(sa, sb)); /* one valid, one not */
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, 0, 0, 0, 0, never_fires, NULL);
    RL_ASSERT(!CFEqual(sa, timer));
    RL_ASSERT_EQ_INT(CFHash(timer), (CFHashCode)timer); /* other items by identity */
    CFRelease(timer);
    CFRelease(sa);
    CFRelease(sb);
    CFRelease(sc);
    CFRelease(sd);
    CFRelease(p1);
    CFRelease(p2);
}

static void mode_identity(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    CFRunLoopMode mode = CFRunLoopCopyCurrentMode(CFRunLoopGetCurrent());
    *(CFRunLoopMode *)info = mode; /* released by the test */
    CFRunLoopStop(CFRunLoopGetCurrent());
}

static void modes_as_strings(void) {
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopMode seen = NULL;
    CFRunLoopTimerContext context = {0, &seen, NULL, NULL, NULL};
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, 0, 0.001, 0, 0, mode_identity, &context);
    CFRunLoopAddTimer(rl, timer, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT(seen == kCFRunLoopDefaultMode); /* pointer-equal, as on macOS */
    CFRelease(seen);

    /* A mode made at run time, retained by a C-style holder and released. */
    CFStringRef made = CFStringCreateWithFormat(NULL, NULL, CFSTR("Mode-%d"), 2);
    CFRunLoopAddTimer(rl, timer, made);
    RL_ASSERT(CFRunLoopContainsTimer(rl, timer, CFSTR("Mode-2")));
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(made, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT(CFEqual(seen, made) && seen != made);
    CFRelease(seen);
    RL_ASSERT(CFRunLoopGetNextTimerFireDate(rl, made) > 0);
    CFRelease(made);

    /* Code written when modes were C strings still builds and runs (C). */
    char name[16];
    snprintf(name, sizeof name, "Mode-%d", 2);
    RL_ASSERT(CFRunLoopContainsTimer(rl, timer, name));
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(name, 30.0, false), kCFRunLoopRunStopped);
    CFRelease(seen);
    RL_ASSERT(CFRunLoopCopyCurrentMode(rl) == NULL);
    CFRunLoopTimerInvalidate(timer);
    CFRelease(timer);
}

static void items_have_type_ids_and_counts(void) {
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    RL_ASSERT(CFGetTypeID(rl) == CFRunLoopGetTypeID());
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent() + 1000, 0, 0, 0, never_fires, NULL);
    RL_ASSERT(CFGetTypeID(timer) == CFRunLoopTimerGetTypeID());
    RL_ASSERT_EQ_INT(CFGetRetainCount(timer), 1);
    CFRunLoopAddTimer(rl, timer, kCFRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(CFGetRetainCount(timer), 2); /* the loop holds it too, as in CF */
    CFRunLoopTimerInvalidate(timer);
    RL_ASSERT_EQ_INT(CFGetRetainCount(timer), 1);
    CFRunLoopObserverRef observer = CFRunLoopObserverCreate(NULL, kCFRunLoopEntry, true, 0, observe_nothing, NULL);
    RL_ASSERT(CFGetTypeID(observer) == CFRunLoopObserverGetTypeID());
    CFRunLoopSourceContext context = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, nothing};
    CFRunLoopSourceRef source = CFRunLoopSourceCreate(NULL, 0, &context);
    RL_ASSERT(CFGetTypeID(source) == CFRunLoopSourceGetTypeID());
    int fds[2];
    RL_ASSERT(pipe(fds) == 0);
    CFFileDescriptorRef f = CFFileDescriptorCreate(NULL, fds[0], true, fd_readable, NULL);
    RL_ASSERT(CFGetTypeID(f) == CFFileDescriptorGetTypeID());
    CFFileDescriptorInvalidate(f);
    close(fds[1]);
    RL_ASSERT(CFRunLoopTimerCreate(kCFAllocatorNull, 0, 0, 0, 0, never_fires, NULL) == NULL); /* allocates nothing */
    CFRelease(f);
    CFRelease(source);
    CFRelease(observer);
    CFRelease(timer);
}

static void *retain_count(void *info) {
    ((fd_state *)info)->reads += 100; /* counts retains here */
    return info;
}
static CFStringRef describe_fd_state(void *info) {
    return CFStringCreateWithFormat(NULL, NULL, CFSTR("<fd state %d>"), ((fd_state *)info)->reads);
}

static void file_descriptor_context_is_cf_typed(void) {
    fd_state state = {0, 0, 0};
    CFFileDescriptorContext context = {0, &state, retain_count, fd_release, describe_fd_state};
    int fds[2];
    RL_ASSERT(pipe(fds) == 0);
    CFFileDescriptorRef f = CFFileDescriptorCreate(NULL, fds[0], true, fd_readable, &context);
    RL_ASSERT_EQ_INT(state.reads, 100);
    CFStringRef description = CFCopyDescription(f);
    RL_ASSERT(strstr(text(description), "<fd state 100>") != NULL);
    CFRelease(description);
    CFFileDescriptorContext copy;
    CFFileDescriptorGetContext(f, &copy);
    RL_ASSERT(copy.version == 0 && copy.retain == retain_count && copy.release == fd_release);
    RL_ASSERT(copy.copyDescription == describe_fd_state && copy.info == &state);
    CFFileDescriptorInvalidate(f);
    RL_ASSERT_EQ_INT(state.released, 1);
    CFRelease(f);
    close(fds[1]);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(constants_have_cf_values),
        RL_TEST(absolute_time_counts_from_2001),
        RL_TEST(repeating_timer_fires_and_stops_the_run),
        RL_TEST(timer_accessors),
        RL_TEST(cf_object_as_context_info),
        RL_TEST(source0_in_cf_field_order),
        RL_TEST(source1_watches_a_descriptor),
        RL_TEST(observer_sees_a_pass),
        RL_TEST(custom_and_common_modes),
        RL_TEST(file_descriptor_reads_a_pipe),
        RL_TEST(run_stopped_from_another_thread),
        RL_TEST(retain_release_and_describe),
        RL_TEST(schedule_and_cancel_get_mode_strings),
        RL_TEST(contexts_describe_with_cf_strings),
        RL_TEST(sources_compare_through_their_contexts),
        RL_TEST(modes_as_strings),
        RL_TEST(items_have_type_ids_and_counts),
        RL_TEST(file_descriptor_context_is_cf_typed),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
