/*
 * macos_style.c: a run-loop program written for macOS's CoreFoundation that
 * builds here unchanged but for its include (CRunLoopCFNames.h).
 *
 * A repeating CFRunLoopTimer writes a line into a pipe every 50 ms; a
 * CFFileDescriptor on the pipe's read end wakes the loop and prints each line;
 * an observer counts how often the loop went to sleep and woke up. After the
 * third line the descriptor's callback stops the loop.
 *
 * On macOS: cc macos_style.c -framework CoreFoundation
 */
#ifdef __APPLE__
#include <CoreFoundation/CoreFoundation.h>
#else
#include <CRunLoopCFNames.h>
#endif
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int write_fd;
    int written;
    int lines_read;
    int sleeps;
    int wakes;
} Demo;

static void tick(CFRunLoopTimerRef timer, void *info) {
    Demo *demo = info;
    char line[32];
    int length = snprintf(line, sizeof line, "tick %d\n", ++demo->written);
    if (write(demo->write_fd, line, (size_t)length) != length) CFRunLoopTimerInvalidate(timer);
}

static void readable(CFFileDescriptorRef f, CFOptionFlags callBackTypes, void *info) {
    Demo *demo = info;
    char buffer[64];
    ssize_t n = read(CFFileDescriptorGetNativeDescriptor(f), buffer, sizeof buffer - 1);
    if (n <= 0 || !(callBackTypes & kCFFileDescriptorReadCallBack)) return;
    buffer[n] = '\0';
    CFRunLoopMode mode = CFRunLoopCopyCurrentMode(CFRunLoopGetCurrent());
    int in_default_mode = mode != NULL && CFEqual(mode, kCFRunLoopDefaultMode);
    if (mode != NULL) CFRelease(mode);
    for (char *line = strtok(buffer, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        demo->lines_read++;
        printf("  read \"%s\" from the pipe (%s)\n", line, in_default_mode ? "default mode" : "another mode");
    }
    if (demo->lines_read >= 3) CFRunLoopStop(CFRunLoopGetCurrent());
    else CFFileDescriptorEnableCallBacks(f, kCFFileDescriptorReadCallBack); /* one-shot: re-arm */
}

static void count_sleeps(CFRunLoopObserverRef observer, CFRunLoopActivity activity, void *info) {
    (void)observer;
    Demo *demo = info;
    if (activity == kCFRunLoopBeforeWaiting) demo->sleeps++;
    if (activity == kCFRunLoopAfterWaiting) demo->wakes++;
}

int main(void) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    Demo demo = {fds[1], 0, 0, 0, 0};
    CFRunLoopRef rl = CFRunLoopGetCurrent();

    CFFileDescriptorContext fd_context = {0, &demo, NULL, NULL, NULL};
    CFFileDescriptorRef f = CFFileDescriptorCreate(kCFAllocatorDefault, fds[0], true, readable, &fd_context);
    CFFileDescriptorEnableCallBacks(f, kCFFileDescriptorReadCallBack);
    CFRunLoopSourceRef source = CFFileDescriptorCreateRunLoopSource(kCFAllocatorDefault, f, 0);
    CFRunLoopAddSource(rl, source, kCFRunLoopDefaultMode);

    CFRunLoopTimerContext timer_context = {0, &demo, NULL, NULL, NULL};
    CFRunLoopTimerRef timer =
        CFRunLoopTimerCreate(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 0.05, 0.05, 0, 0, tick, &timer_context);
    CFRunLoopTimerSetTolerance(timer, 0.005);
    CFRunLoopAddTimer(rl, timer, kCFRunLoopCommonModes);

    CFRunLoopObserverContext observer_context = {0, &demo, NULL, NULL, NULL};
    CFRunLoopObserverRef observer =
        CFRunLoopObserverCreate(kCFAllocatorDefault, kCFRunLoopBeforeWaiting | kCFRunLoopAfterWaiting, true, 0,
                                count_sleeps, &observer_context);
    CFRunLoopAddObserver(rl, observer, kCFRunLoopDefaultMode);

    printf("macos_style: a CF timer feeds a pipe that a CFFileDescriptor reads\n");
    CFRunLoopRun(); /* until the descriptor's callback stops it */
    printf("  stopped after %d lines; the loop slept %d times and woke %d times\n", demo.lines_read, demo.sleeps,
           demo.wakes);

    CFRunLoopObserverInvalidate(observer);
    CFRunLoopTimerInvalidate(timer);
    CFFileDescriptorInvalidate(f); /* closes fds[0] */
    CFRelease(observer);
    CFRelease(timer);
    CFRelease(source);
    CFRelease(f);
    close(fds[1]);
    return demo.lines_read == 3 ? 0 : 1;
}
