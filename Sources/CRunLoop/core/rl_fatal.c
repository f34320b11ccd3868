/*
 * rl_fatal.c: the library's error policy in code (docs/ARCHITECTURE.md,
 * "Errors"). A system call failing on one of the library's own kernel
 * objects with an errno only a bug can cause (EBADF, EINVAL, EFAULT: the
 * object was closed or replaced behind its back, or the call is wrong)
 * ends the process with one line that names the call, the object, its
 * number and errno: carrying on would spin, lose wake-ups or drop timers.
 * Resource errors never come here; each caller documents how it does
 * without. A run loop's lock failing (only a corrupt one can) ends it the
 * same way. A leaf: calls nothing else of the library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rl_internal.h"

static _Noreturn void fatal(const char *call, const char *object, int error, const char *why) {
    char reason[128];
    const char *text = strerror_r(error, reason, sizeof reason); /* GNU: may return its own */
    fprintf(stderr, "CRunLoop: fatal: %s on %s failed: %s (errno %d). %s\n", call, object, text, error, why);
    fflush(stderr);
    abort();
}

_Noreturn void rl_fatal_errno(const char *call, const char *object, int fd, int error) {
    char named[160];
    snprintf(named, sizeof named, "%s (fd %d)", object, fd);
    fatal(call, named, error, "The library's own descriptor was closed or replaced behind its back.");
}

_Noreturn void rl_fatal_lock(const char *call, int error) {
    fatal(call, "a run loop's lock", error, "Only a corrupt lock fails: the loop's memory was overwritten or freed.");
}
