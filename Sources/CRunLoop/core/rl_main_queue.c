/*
 * rl_main_queue.c: draining libdispatch's main queue from the main run loop.
 *
 * libdispatch is found at run time (dlsym), so C programs never link it. When
 * it is in the process, its main-queue handle (an eventfd it writes on every
 * main-queue enqueue, and never reads) becomes a version-1 source in the main
 * loop's common modes, as CF does on Linux.
 *
 * Invariants:
 *  - _dispatch_main_queue_callback_4CF is called only on the process's main
 *    thread (gettid() == getpid()) and never re-entrantly: a nested run of the
 *    main loop from inside a main-queue block consumes the eventfd (so it does
 *    not spin) and records that a drain is owed; the outermost drain re-writes
 *    the eventfd when it returns, so no main-queue work is lost.
 *  - The perform always consumes the eventfd before calling libdispatch, so a
 *    block enqueued during the drain (libdispatch pokes again) wakes the loop
 *    once more rather than being missed.
 *  - The source is made once per process and never freed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rl_main_queue.h"
#include "rl_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*get_handle_fn)(void);
typedef void (*callback_fn)(void *msg);

static struct {
    int fd;
    callback_fn callback;
    RLRunLoopSourceRef source;
} mq = {.fd = -1, .callback = NULL, .source = NULL};

static _Thread_local bool draining; /* inside _dispatch_main_queue_callback_4CF */
static _Thread_local bool owed;     /* a nested perform consumed a wake-up */

static void *find_symbol(const char *name) {
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p) return p;
    /* Loaded with RTLD_LOCAL (dlopen by a plugin or a test): look inside it
       without loading anything new. */
    static const char *const names[] = {"libdispatch.so", "libdispatch.so.0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        p = dlsym(h, name);
        dlclose(h);
        if (p) return p;
    }
    return NULL;
}

static void poke(int fd) {
    uint64_t one = 1;
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {}
}

static int mq_fd(void *info) {
    (void)info;
    return mq.fd;
}

static char *mq_describe(const void *info) {
    (void)info;
    char *s = NULL;
    if (asprintf(&s, "<main dispatch queue fd=%d>", mq.fd) < 0) s = NULL;
    return s;
}

/* __CFRunLoopRun's dispatchPort branch: _dispatch_main_queue_callback_4CF.
   While it drains, the source is inert in the main loop (`info`): CF then
   treats the queue as absent, so a nested run of the main loop with nothing
   else to do finishes instead of waiting. */
static void mq_perform(void *info) {
    RLRunLoopRef main_loop = info;
    if (!rl_on_process_main_thread()) return; /* cannot happen: only the main loop has the source */
    uint64_t v;
    while (read(mq.fd, &v, sizeof v) < 0 && errno == EINTR) {}
    if (draining) {
        owed = true; /* libdispatch would return at once anyway */
        return;
    }
    draining = true;
    rl_loop_set_main_queue_inert(main_loop, mq.source);
    RL_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE(main_loop, mq.callback, NULL);
    rl_loop_set_main_queue_inert(main_loop, NULL);
    draining = false;
    if (owed) {
        owed = false;
        poke(mq.fd);
    }
}

bool rl_main_queue_install(RLRunLoopRef main_loop) {
    static atomic_bool installed = false;
    static pthread_mutex_t installing = PTHREAD_MUTEX_INITIALIZER;
    if (!main_loop) return false;
    if (atomic_load(&installed)) return true;
    pthread_mutex_lock(&installing);
    if (!atomic_load(&installed)) {
        get_handle_fn get_handle = (get_handle_fn)find_symbol("_dispatch_get_main_queue_handle_4CF");
        callback_fn callback = (callback_fn)find_symbol("_dispatch_main_queue_callback_4CF");
        int fd = get_handle && callback ? get_handle() : -1;
        if (fd >= 0) {
            mq.fd = fd;
            mq.callback = callback;
            RLRunLoopSourceContext1 ctx = {
                .version = 1,
                .info = main_loop, /* lives as long as the process */
                .copyDescription = mq_describe,
                .getFileDescriptor = mq_fd,
                .perform = mq_perform,
            };
            RLRunLoopSourceRef src = RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&ctx);
            if (src) {
                mq.source = src; /* the loop keeps it for the life of the process */
                RLRunLoopAddSource(main_loop, src, kRLRunLoopCommonModes);
                RLRelease(src);
                atomic_store(&installed, true);
            }
        }
    }
    pthread_mutex_unlock(&installing);
    return atomic_load(&installed);
}
