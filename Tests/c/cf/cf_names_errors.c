/*
 * cf_names_errors.c: programs CRunLoopCFNames.h must refuse to compile, each
 * with an error that says why. Tests/c/cf/cf_names_errors.sh compiles each
 * CASE and checks the message.
 */
#include <CRunLoopCFNames.h>

void cf_names_error_case(CFRunLoopRef rl, const char *name);
void cf_names_error_case(CFRunLoopRef rl, const char *name) {
    (void)rl;
    (void)name;
#if CASE == 1 /* a block variant without blocks */
    CFRunLoopPerformBlock(rl, kCFRunLoopDefaultMode, ^{
      int a = 1, b = 2;
      (void)a;
      (void)b;
    });
#elif CASE == 2
    CFRunLoopTimerRef timer = CFRunLoopTimerCreateWithHandler(NULL, 0, 0, 0, 0, ^(CFRunLoopTimerRef t) { (void)t; });
    (void)timer;
#elif CASE == 3
    CFRunLoopObserverRef observer = CFRunLoopObserverCreateWithHandler(NULL, kCFRunLoopEntry, false, 0,
                                                                       ^(CFRunLoopObserverRef o, CFRunLoopActivity a) {
                                                                         (void)o;
                                                                         (void)a;
                                                                       });
    (void)observer;
#elif CASE == 4 /* a C string is no CF object */
    CFRelease(name);
#elif CASE == 5
    Boolean same = CFEqual(kCFRunLoopDefaultMode, name);
    (void)same;
#endif
}
