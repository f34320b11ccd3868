/*
 * rl_wait.c: the Linux wait primitives, Mach ports' stand-ins.
 *
 * - The wake eventfd is in every mode's epoll set, edge-triggered: each write
 *   is one edge, so the loop never has to read it back (one system call saved
 *   per wake-up). Its counter cannot realistically overflow.
 * - Each mode's timerfd (CLOCK_MONOTONIC, absolute) is edge-triggered too:
 *   re-arming resets its expiry count, so it is never read either.
 * - Version-1 fds are level-triggered: a perform that does not consume
 *   everything is called again on the next pass.
 * Only programmer errors and resource exhaustion can fail here; they are
 * reported on stderr, never silently turned into a spinning loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "rl_internal.h"

int rl_wait_eventfd_create(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int rl_wait_epoll_create(int wake_fd) {
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) return -1;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = RL_EVENT_WAKE};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, wake_fd, &ev) < 0) {
        close(epfd);
        return -1;
    }
    return epfd;
}

int rl_wait_timerfd_attach(int epoll_fd) {
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (tfd < 0) return -1;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = RL_EVENT_TIMER};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, tfd, &ev) < 0) {
        close(tfd);
        return -1;
    }
    return tfd;
}

void rl_wait_timerfd_set(int timer_fd, int64_t deadline_ns) {
    struct itimerspec spec = {0};
    if (deadline_ns != RL_NEVER) {
        /* 0 would disarm; anything in the past fires at once. */
        if (deadline_ns < 1) deadline_ns = 1;
        spec.it_value.tv_sec = deadline_ns / 1000000000;
        spec.it_value.tv_nsec = deadline_ns % 1000000000;
    }
    if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) < 0)
        fprintf(stderr, "CRunLoop: timerfd_settime(%d): %s\n", timer_fd, strerror(errno));
}

void rl_wait_signal(int wake_fd) {
    uint64_t one = 1;
    while (write(wake_fd, &one, sizeof one) < 0 && errno == EINTR) {}
}

int rl_wait_watch_fd(int epoll_fd, int fd, uint64_t token) {
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = token};
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) return -errno;
    return 0;
}

void rl_wait_unwatch_fd(int epoll_fd, int fd) {
    /* The fd may already be closed (epoll dropped it then): nothing to do. */
    (void)epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}
