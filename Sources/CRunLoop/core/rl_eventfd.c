/*
 * rl_eventfd.c: writing and draining the library's own eventfds (a loop's
 * wake-up, a message port's, a signal watcher's). A failure only a bug can
 * cause is fatal (rl_fatal.c); a full or empty counter is not a failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include "rl_internal.h"

void rl_eventfd_signal(int fd, const char *object) {
    uint64_t one = 1;
    ssize_t n;
    while ((n = write(fd, &one, sizeof one)) < 0 && errno == EINTR) {}
    if (n < 0 && errno != EAGAIN) rl_fatal_errno("write", object, fd, errno);
}

void rl_eventfd_reset(int fd, const char *object) {
    uint64_t value;
    ssize_t n;
    while ((n = read(fd, &value, sizeof value)) < 0 && errno == EINTR) {}
    if (n < 0 && errno != EAGAIN) rl_fatal_errno("read", object, fd, errno);
}
