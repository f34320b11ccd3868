/*
 * rl_blocks_abi.c: the block-taking API (RLRunLoopPerformBlock,
 * RLRunLoopObserverCreateWithHandler, RLRunLoopTimerCreateWithHandler).
 *
 * The library is built by compilers without blocks support too (gcc), so a
 * block is handled through its documented ABI: a pointer to a literal whose
 * `invoke` function takes the block itself first. _Block_copy/_Block_release
 * are looked up at run time: any program that makes a block links the blocks
 * runtime, and C programs that make none never need it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include "rl_internal.h"

#if __BLOCKS__
typedef void (^rl_void_block)(void);
typedef void (^rl_observer_block)(RLRunLoopObserverRef, RLRunLoopActivity);
typedef void (^rl_timer_block)(RLRunLoopTimerRef);
#else
typedef void *rl_void_block;
typedef void *rl_observer_block;
typedef void *rl_timer_block;
RLRunLoopObserverRef RLRunLoopObserverCreateWithHandler(RLOptionFlags activities, bool repeats, RLIndex order,
                                                        rl_observer_block block);
RLRunLoopTimerRef RLRunLoopTimerCreateWithHandler(RLAbsoluteTime fireDate, RLTimeInterval interval, RLOptionFlags flags,
                                                  RLIndex order, rl_timer_block block);
void RLRunLoopPerformBlock(RLRunLoopRef rl, RLRunLoopMode mode, rl_void_block block);
#endif

struct block_literal {
    void *isa;
    int flags;
    int reserved;
    void (*invoke)(void *block, ...);
};

typedef void *(*block_copy_fn)(const void *);
typedef void (*block_release_fn)(const void *);

static void *copy_block(const void *block) {
    block_copy_fn copy = (block_copy_fn)dlsym(RTLD_DEFAULT, "_Block_copy");
    return copy ? copy(block) : NULL;
}

static const void *retain_block(const void *block) {
    return copy_block(block);
}

static void release_block(const void *block) {
    block_release_fn release = (block_release_fn)dlsym(RTLD_DEFAULT, "_Block_release");
    if (release && block) release(block);
}

static void dispose_block(void *block) {
    release_block(block);
}

static void call_void_block(void *block) {
    ((void (*)(void *))((struct block_literal *)block)->invoke)(block);
}

static void call_observer_block(RLRunLoopObserverRef o, RLRunLoopActivity activity, void *block) {
    ((void (*)(void *, RLRunLoopObserverRef, RLRunLoopActivity))((struct block_literal *)block)->invoke)(block, o,
                                                                                                         activity);
}

static void call_timer_block(RLRunLoopTimerRef t, void *block) {
    ((void (*)(void *, RLRunLoopTimerRef))((struct block_literal *)block)->invoke)(block, t);
}

void RLRunLoopPerformBlock(RLRunLoopRef rl, RLRunLoopMode mode, rl_void_block block) {
    if (!block) return;
    void *copy = copy_block((const void *)block);
    if (copy && !rl_enqueue_block(rl, mode, call_void_block, copy, dispose_block)) release_block(copy);
}

RLRunLoopObserverRef RLRunLoopObserverCreateWithHandler(RLOptionFlags activities, bool repeats, RLIndex order,
                                                        rl_observer_block block) {
    if (!block) return NULL;
    RLRunLoopObserverContext context = {0, (void *)block, retain_block, release_block, NULL};
    return RLRunLoopObserverCreate(activities, repeats, order, call_observer_block, &context);
}

RLRunLoopTimerRef RLRunLoopTimerCreateWithHandler(RLAbsoluteTime fireDate, RLTimeInterval interval, RLOptionFlags flags,
                                                  RLIndex order, rl_timer_block block) {
    if (!block) return NULL;
    RLRunLoopTimerContext context = {0, (void *)block, retain_block, release_block, NULL};
    return RLRunLoopTimerCreate(fireDate, interval, flags, order, call_timer_block, &context);
}
