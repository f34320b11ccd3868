/*
 * cf_names_compile.c: CRunLoopCFNames.h must also compile as C++ (where mode
 * arguments and the refusal of C strings as objects are overloads instead of
 * _Generic macros) and, with clang -fblocks, with CF's block variants. Compiled, not run, by
 * `make test-c`; test_cf_names.c checks the behaviour.
 */
#include <CRunLoopCFNames.h>

/* CoreFoundation.h brings libdispatch along: so does this header, where the
   compiler finds it (the Makefile points clang at the Swift toolchain's). */
#if defined(RLCF_EXPECT_DISPATCH) && !defined(DISPATCH_API_VERSION)
#error "CRunLoopCFNames.h did not include <dispatch/dispatch.h>"
#endif

static void tick(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    (void)info;
    CFRunLoopStop(CFRunLoopGetCurrent());
}

static void observe(CFRunLoopObserverRef observer, CFRunLoopActivity activity, void *info) {
    (void)observer;
    (void)activity;
    (void)info;
}

static void readable(CFFileDescriptorRef f, CFOptionFlags callBackTypes, void *info) {
    (void)callBackTypes;
    (void)info;
    CFFileDescriptorEnableCallBacks(f, kCFFileDescriptorReadCallBack);
}

int cf_names_compile(void);
int cf_names_compile(void) {
    CFRunLoopRef rl = CFRunLoopGetCurrent();
    CFRunLoopTimerContext timer_context = {0, NULL, CFRetain, CFRelease, CFCopyDescription};
    CFRunLoopTimerRef timer =
        CFRunLoopTimerCreate(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent(), 1.0, 0, 0, tick, &timer_context);
    CFRunLoopAddTimer(rl, timer, kCFRunLoopCommonModes);
    CFRunLoopObserverContext observer_context = {0, NULL, NULL, NULL, NULL};
    CFRunLoopObserverRef observer =
        CFRunLoopObserverCreate(NULL, kCFRunLoopAllActivities, true, 0, observe, &observer_context);
    CFRunLoopAddObserver(rl, observer, CFSTR("Tracking"));
    CFFileDescriptorRef f = CFFileDescriptorCreate(NULL, 0, false, readable, NULL);
    CFRunLoopSourceRef source = CFFileDescriptorCreateRunLoopSource(NULL, f, 0);
    CFRunLoopAddSource(rl, source, kCFRunLoopDefaultMode);
    CFRunLoopRunResult result = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true);

    CFRunLoopMode mode = CFRunLoopCopyCurrentMode(rl);
    Boolean is_default = mode != NULL && CFEqual(mode, kCFRunLoopDefaultMode);
    if (mode != NULL) CFRelease(mode);
    CFArrayRef modes = CFRunLoopCopyAllModes(rl);
    if (CFArrayGetCount(modes) > 0) CFShow((CFStringRef)CFArrayGetValueAtIndex(modes, 0));
    CFRelease(modes);
    CFStringRef description = CFCopyDescription(timer);
    CFRelease(description);
    CFShow(rl);
    Boolean same = CFEqual(timer, timer);

#if __BLOCKS__
    __block int count = 0;
    CFRunLoopTimerRef block_timer =
        CFRunLoopTimerCreateWithHandler(NULL, CFAbsoluteTimeGetCurrent(), 0, 0, 0, ^(CFRunLoopTimerRef t) {
          (void)t;
          count++;
        });
    CFRunLoopObserverRef block_observer = CFRunLoopObserverCreateWithHandler(
        NULL, kCFRunLoopEntry, false, 0, ^(CFRunLoopObserverRef o, CFRunLoopActivity a) {
          (void)o;
          (void)a;
          count++;
        });
    CFRunLoopPerformBlock(rl, kCFRunLoopDefaultMode, ^{ count++; });
    CFRelease(block_timer);
    CFRelease(block_observer);
    same = same && count == 0;
#endif

    CFFileDescriptorInvalidate(f);
    CFRelease(source);
    CFRelease(f);
    CFRunLoopObserverInvalidate(observer);
    CFRelease(observer);
    CFRunLoopTimerInvalidate(timer);
    CFRelease(timer);
    return (int)result + is_default + same;
}
