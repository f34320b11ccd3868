/*
 * embed_poll.c: the loop inside a host's own poll() loop, the way GLib,
 * libuv or a game loop would carry it. The host also watches a pipe of its
 * own; the loop brings a repeating timer and a source signalled from another
 * thread. The host sleeps only in poll(): it wakes once per event, never
 * for nothing, and runs one non-blocking pass of the loop when the loop's
 * descriptor is readable.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <CRunLoopEmbed.h>

static int ticks, performs;

static void tick(RLRunLoopTimerRef t, void *info) {
    (void)info;
    printf("  loop: timer tick %d\n", ++ticks);
    if (ticks == 3) RLRunLoopTimerInvalidate(t);
}

static void perform(void *info) {
    (void)info;
    printf("  loop: source signalled by another thread performed\n");
    performs++;
}

typedef struct {
    RLRunLoopRef rl;
    RLRunLoopSourceRef source;
    int pipe_out;
} helper_args;

static void *helper(void *arg) {
    helper_args *a = arg;
    struct timespec ts = {0, 70 * 1000 * 1000};
    nanosleep(&ts, NULL);
    RLRunLoopSourceSignal(a->source);
    RLRunLoopWakeUp(a->rl);
    nanosleep(&ts, NULL);
    (void)!write(a->pipe_out, "!", 1); /* the host's own event */
    return NULL;
}

int main(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerContext tctx = {0};
    RLRunLoopTimerRef timer = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 0.05, 0.05, 0, 0, tick, &tctx);
    RLRunLoopAddTimer(rl, timer, kRLRunLoopDefaultMode);
    RLRunLoopSourceContext sctx = {.perform = perform};
    RLRunLoopSourceRef source = RLRunLoopSourceCreate(0, &sctx);
    RLRunLoopAddSource(rl, source, kRLRunLoopDefaultMode);

    int host_pipe[2];
    if (pipe(host_pipe) != 0) return 1;
    helper_args args = {rl, source, host_pipe[1]};
    pthread_t thread;
    pthread_create(&thread, NULL, helper, &args);

    int fd = RLRunLoopEmbedGetFD(rl);
    int wakeups = 0, host_events = 0;
    while (ticks < 3 || performs < 1 || host_events < 1) {
        int timeout;
        RLRunLoopEmbedPrepare(rl, kRLRunLoopDefaultMode, &timeout);
        struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = host_pipe[0], .events = POLLIN}};
        poll(fds, 2, timeout);
        wakeups++;
        if (fds[1].revents & POLLIN) {
            char c;
            (void)!read(host_pipe[0], &c, 1);
            printf("host: its own pipe is readable\n");
            host_events++;
        }
        if (fds[0].revents & POLLIN) RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    }
    pthread_join(thread, NULL);
    printf("host: %d wake-ups for %d loop events and %d of its own\n", wakeups, ticks + performs, host_events);
    RLRelease(timer);
    RLRelease(source);
    close(host_pipe[0]);
    close(host_pipe[1]);
    return 0;
}
