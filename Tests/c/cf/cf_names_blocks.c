/*
 * cf_names_blocks.c: CF's block variants through CRunLoopCFNames.h
 * (CFRunLoopTimerCreateWithHandler, CFRunLoopObserverCreateWithHandler,
 * CFRunLoopPerformBlock, in a mode or an array of modes). Needs clang -fblocks
 * and a blocks runtime: `make test-c` builds and runs it when both are there
 * (the Swift toolchain's).
 */
#include <CRunLoopCFNames.h>
#include "rltest.h"

static void handlers_and_blocks_run(void) {
    __block int timer_fired = 0, entries = 0, performed = 0;
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopTimerRef timer = CFRunLoopTimerCreateWithHandler(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent(), 0, 0, 0,
                                                              ^(CFRunLoopTimerRef t) {
                                                                RL_ASSERT(CFRunLoopTimerIsValid(t));
                                                                timer_fired++;
                                                                CFRunLoopStop(CFRunLoopGetCurrent());
                                                              });
    CFRunLoopObserverRef observer = CFRunLoopObserverCreateWithHandler(
        kCFAllocatorDefault, kCFRunLoopEntry, true, 0, ^(CFRunLoopObserverRef o, CFRunLoopActivity activity) {
          (void)o;
          if (activity == kCFRunLoopEntry) entries++;
        });
    CFRunLoopAddTimer(rl, timer, kCFRunLoopDefaultMode);
    CFRunLoopAddObserver(rl, observer, kCFRunLoopDefaultMode);
    CFRunLoopPerformBlock(rl, kCFRunLoopDefaultMode, ^{ performed++; });
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 30.0, false), kCFRunLoopRunStopped);
    RL_ASSERT_EQ_INT(timer_fired, 1);
    RL_ASSERT_EQ_INT(entries, 1);
    RL_ASSERT_EQ_INT(performed, 1);
    CFRunLoopObserverInvalidate(observer);
    CFRelease(observer);
    CFRelease(timer);
}

/* As CF documents: the modes may be one mode or an array of them; a block
   queued for several modes runs once, in the first of them to run. */
static void a_block_for_several_modes_runs_once(void) {
    __block int once = 0, single = 0;
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFStringRef tracking = CFStringCreateWithCString(NULL, "Tracking", kCFStringEncodingUTF8);
    const void *modes[] = {tracking, kCFRunLoopDefaultMode};
    CFArrayRef array = CFArrayCreate(NULL, modes, 2, &kCFTypeArrayCallBacks);
    CFRunLoopPerformBlock(rl, array, ^{
      CFStringRef mode = CFRunLoopCopyCurrentMode(CFRunLoopGetCurrent());
      RL_ASSERT(CFEqual(mode, CFSTR("Tracking")));
      CFRelease(mode);
      once++;
    });
    CFRelease(array);
    CFRunLoopPerformBlock(rl, tracking, ^{ single++; });
    CFRunLoopPerformBlock(rl, "Tracking", ^{ single++; }); /* a C string names a mode too */
    CFRelease(tracking);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(CFSTR("Tracking"), 0, false), kCFRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(once, 1);
    RL_ASSERT_EQ_INT(single, 2);
    /* Its copy queued for the default mode is still there, and does nothing. */
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, false), kCFRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(once, 1);
    RL_ASSERT_EQ_INT(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, false), kCFRunLoopRunFinished);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(handlers_and_blocks_run),
        RL_TEST(a_block_for_several_modes_runs_once),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
