/*
 * cf_names_blocks.c: CF's block variants through CRunLoopCFNames.h
 * (CFRunLoopTimerCreateWithHandler, CFRunLoopObserverCreateWithHandler,
 * CFRunLoopPerformBlock). Needs clang -fblocks and a blocks runtime: `make
 * test-c` builds and runs it when both are there (the Swift toolchain's).
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

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(handlers_and_blocks_run),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
