/* test_dead_objects.c: a retain or release of an object that is already dead
   (its last reference dropped, its memory freed and not reused yet) aborts
   with one line, "CRunLoop: <function> of an object with no references
   (<address>)", for every type of object, through the generic names and
   through each type's own, instead of going on silently (a second release
   used to scribble on malloc's free list). Each case runs in a child
   process.

   Touching freed memory is exactly what AddressSanitizer and valgrind report
   (and ThreadSanitizer's allocator keeps freed memory its own way), so under
   them the tests only check that the objects die cleanly, and say so. */
#include <CRunLoop.h>
#include "rltest.h"

#include <fcntl.h>
#include <pthread.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

/* Whether something watches every access to freed memory: the tests must
   not touch it then. */
static bool freed_memory_is_watched(void) {
    if (UNDER_SANITIZER) return true;
#ifdef RUNNING_ON_VALGRIND
    if (RUNNING_ON_VALGRIND) return true;
#endif
    const char *preload = getenv("LD_PRELOAD"); /* valgrind preloads its own malloc */
    return preload && strstr(preload, "vgpreload");
}

/* ---- making dead objects, one per type ---------------------------------------- */

static void nothing(void *info) {
    (void)info;
}
static void timer_nothing(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}
static void observer_nothing(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}
static void fd_nothing(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)f;
    (void)types;
    (void)info;
}
static void port_nothing(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)msgid;
    (void)bytes;
    (void)len;
    (void)info;
}

static const void *dead_source(void) {
    RLRunLoopSourceRef s = rl_test_source0(0, nothing, NULL);
    RLRelease(s);
    return s;
}

static const void *dead_observer(void) {
    RLRunLoopObserverRef o = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, observer_nothing, NULL);
    RLRelease(o);
    return o;
}

static const void *dead_timer(void) {
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 60, 0, 0, 0, timer_nothing, NULL);
    RLRelease(t);
    return t;
}

static void *retain_own_loop(void *arg) {
    *(RLRunLoopRef *)arg = (RLRunLoopRef)RLRetain(RLRunLoopGetCurrent());
    return NULL;
}

/* A loop outlives its thread only through a reference: the last one ends it. */
static const void *dead_loop(void) {
    RLRunLoopRef rl = NULL;
    pthread_t th;
    RL_ASSERT_EQ_INT(pthread_create(&th, NULL, retain_own_loop, &rl), 0);
    pthread_join(th, NULL);
    RL_ASSERT(rl != NULL);
    RLRelease(rl);
    return rl;
}

static const void *dead_file_descriptor(void) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    RL_ASSERT(fd >= 0);
    RLFileDescriptorRef f = RLFileDescriptorCreate(fd, true, fd_nothing, NULL);
    RL_ASSERT(f != NULL);
    RLFileDescriptorInvalidate(f);
    RLRelease(f);
    return f;
}

static const void *dead_message_port(void) {
    RLMessagePortRef p = RLMessagePortCreate(port_nothing, NULL, 0);
    RL_ASSERT(p != NULL);
    RLMessagePortInvalidate(p);
    RLRelease(p);
    return p;
}

static const void *dead_perform_request(void) {
    RLPerformRequestRef r =
        RLRunLoopPerformRequestAfterDelay(RLRunLoopGetCurrent(), 1000, NULL, 0, NULL, nothing, NULL, NULL);
    RL_ASSERT(r != NULL);
    RL_ASSERT(RLPerformRequestCancel(r)); /* the loop lets go of it */
    RLPerformRequestRelease(r);
    return r;
}

static const void *dead_thread(void) {
    RLThreadRef t = RLThreadCreate("dead.thread");
    RL_ASSERT(t != NULL);
    RL_ASSERT(RLThreadStart(t));
    RLThreadRelease(t); /* stops and joins it */
    return t;
}

static const void *dead_hang_monitor(void) {
    RLHangMonitorRef m = RLHangMonitorCreate(RLRunLoopGetCurrent(), 100, NULL, NULL);
    RL_ASSERT(m != NULL);
    RL_ASSERT(RLHangMonitorStart(m));
    RLHangMonitorRelease(m); /* invalidates it, joins its watchdog */
    return m;
}

static const void *dead_idle_queue(void) {
    RLIdleQueueRef q = RLIdleQueueCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode, 0);
    RL_ASSERT(q != NULL);
    RLIdleQueueRelease(q);
    return q;
}

/* ---- what is done to them ------------------------------------------------------ */

typedef const void *(*dead_maker)(void);
static dead_maker g_make;

static void release_it(void) {
    RLRelease(g_make());
}
static void retain_it(void) {
    RLRetain(g_make());
}
static void release_thread(void) {
    RLThreadRelease((RLThreadRef)g_make());
}
static void retain_thread(void) {
    RLThreadRetain((RLThreadRef)g_make());
}
static void release_monitor(void) {
    RLHangMonitorRelease((RLHangMonitorRef)g_make());
}
static void release_queue(void) {
    RLIdleQueueRelease((RLIdleQueueRef)g_make());
}
static void release_request(void) {
    RLPerformRequestRelease((RLPerformRequestRef)g_make());
}
static void retain_request(void) {
    RLPerformRequestRetain((RLPerformRequestRef)g_make());
}

#define NO_REFERENCES " of an object with no references ("

/* Before: silent in a plain build (a release decremented malloc's free-list
   link: the next allocations of that size went wrong later, far away). */
static void expect_dead(dead_maker make, void (*act)(void), const char *function) {
    g_make = make;
    if (freed_memory_is_watched()) {
        make(); /* dies cleanly; touching it is the checker's business */
        printf("  (skipped: freed memory is watched by a sanitizer or valgrind)\n");
        return;
    }
    char message[128];
    snprintf(message, sizeof message, "CRunLoop: %s%s", function, NO_REFERENCES);
    RL_EXPECT_ABORT(act, message);
}

#define DEAD_TESTS(type)                                                                                               \
    static void releasing_a_dead_##type##_aborts(void) {                                                               \
        expect_dead(dead_##type, release_it, "RLRelease");                                                             \
    }                                                                                                                  \
    static void retaining_a_dead_##type##_aborts(void) {                                                               \
        expect_dead(dead_##type, retain_it, "RLRetain");                                                               \
    }

DEAD_TESTS(source)
DEAD_TESTS(observer)
DEAD_TESTS(timer)
DEAD_TESTS(loop)
DEAD_TESTS(file_descriptor)
DEAD_TESTS(message_port)
DEAD_TESTS(perform_request)
DEAD_TESTS(thread)
DEAD_TESTS(hang_monitor)
DEAD_TESTS(idle_queue)

/* The type's own names check the type first: a dead object's class word may
   be malloc's by then, and the message must still say it is dead. */
static void type_specific_names_say_a_dead_object_is_dead(void) {
    expect_dead(dead_thread, release_thread, "RLThreadRelease");
    expect_dead(dead_thread, retain_thread, "RLThreadRetain");
    expect_dead(dead_hang_monitor, release_monitor, "RLHangMonitorRelease");
    expect_dead(dead_idle_queue, release_queue, "RLIdleQueueRelease");
    expect_dead(dead_perform_request, release_request, "RLPerformRequestRelease");
    expect_dead(dead_perform_request, retain_request, "RLPerformRequestRetain");
}

/* Live objects at the edges of the check: many references, and the last one
   dropped normally, never abort. */
static void live_objects_with_many_references_are_fine(void) {
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 60, 0, 0, 0, timer_nothing, NULL);
    for (int i = 0; i < 100000; i++) RLRetain(t);
    for (int i = 0; i < 100000; i++) RLRelease(t);
    RLRelease(t);
}

#define DEAD_TEST_ENTRIES(type) RL_TEST(releasing_a_dead_##type##_aborts), RL_TEST(retaining_a_dead_##type##_aborts)

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        DEAD_TEST_ENTRIES(source),
        DEAD_TEST_ENTRIES(observer),
        DEAD_TEST_ENTRIES(timer),
        DEAD_TEST_ENTRIES(loop),
        DEAD_TEST_ENTRIES(file_descriptor),
        DEAD_TEST_ENTRIES(message_port),
        DEAD_TEST_ENTRIES(perform_request),
        DEAD_TEST_ENTRIES(thread),
        DEAD_TEST_ENTRIES(hang_monitor),
        DEAD_TEST_ENTRIES(idle_queue),
        RL_TEST(type_specific_names_say_a_dead_object_is_dead),
        RL_TEST(live_objects_with_many_references_are_fine),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
