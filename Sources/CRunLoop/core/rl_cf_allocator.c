/*
 * rl_cf_allocator.c: CF's allocators. Every object of the library is made
 * with malloc, so the default, system-default and malloc allocators are
 * the same; the null allocator allocates nothing. They are static objects
 * whose count starts too high ever to reach zero, so they live for the
 * process whoever retains or releases them. Custom allocators are refused.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "rl_cf.h"

struct __RLCFAllocator {
    rl_object base;
    const char *name;
};

static void allocator_finalize(rl_object *obj) {
    (void)obj; /* never reached: the count never falls to zero */
}

static char *allocator_describe(const rl_object *obj) {
    const struct __RLCFAllocator *a = (const struct __RLCFAllocator *)obj;
    return rl_strdup_printf("<CFAllocator %p>{name = %s}", (const void *)a, a->name);
}

const rl_class rl_cf_allocator_class = {"RLCFAllocator", allocator_finalize, allocator_describe};

/* Halfway up the live counts (rl_object.h): no retains or releases a program
   makes can take it out of that range, so the object never dies. */
#define IMMORTAL_COUNT ((long)(RL_REFCOUNT_LIVE_MAX / 2))
static struct __RLCFAllocator system_default = {{{IMMORTAL_COUNT}, &rl_cf_allocator_class},
                                                "kCFAllocatorSystemDefault"};
static struct __RLCFAllocator malloc_allocator = {{{IMMORTAL_COUNT}, &rl_cf_allocator_class}, "kCFAllocatorMalloc"};
static struct __RLCFAllocator null_allocator = {{{IMMORTAL_COUNT}, &rl_cf_allocator_class}, "kCFAllocatorNull"};

const RLCFAllocatorRef kRLCFAllocatorSystemDefault = &system_default;
const RLCFAllocatorRef kRLCFAllocatorMalloc = &malloc_allocator;
const RLCFAllocatorRef kRLCFAllocatorNull = &null_allocator;

bool rl_cf_is_allocator(const void *cf) {
    return rl_object_is(cf, &rl_cf_allocator_class);
}

bool rl_cf_allocator_accepted(const void *allocator, const char *function) {
    if (!allocator || allocator == &system_default || allocator == &malloc_allocator || allocator == &null_allocator)
        return true;
    fprintf(stderr,
            "CRunLoop: %s: %p is not an allocator of this library; custom allocators are not supported "
            "(use kCFAllocatorDefault)\n",
            function, allocator);
    return false;
}

RLCFAllocatorRef RLCFAllocatorCreate(RLCFAllocatorRef allocator, RLCFAllocatorContext *context) {
    (void)allocator;
    (void)context;
    fprintf(stderr, "CRunLoop: CFAllocatorCreate: custom allocators are not supported; returning NULL, the default "
                    "allocator (malloc)\n");
    return NULL;
}

RLCFAllocatorRef RLCFAllocatorGetDefault(void) {
    return kRLCFAllocatorSystemDefault;
}

void RLCFAllocatorSetDefault(RLCFAllocatorRef allocator) {
    (void)rl_cf_allocator_accepted(allocator, "CFAllocatorSetDefault");
}

void *RLCFAllocatorAllocate(RLCFAllocatorRef allocator, RLIndex size, RLOptionFlags hint) {
    (void)hint;
    if (!rl_cf_allocator_accepted(allocator, "CFAllocatorAllocate") || allocator == kRLCFAllocatorNull || size <= 0)
        return NULL;
    return malloc((size_t)size);
}

void *RLCFAllocatorReallocate(RLCFAllocatorRef allocator, void *ptr, RLIndex newsize, RLOptionFlags hint) {
    (void)hint;
    if (!rl_cf_allocator_accepted(allocator, "CFAllocatorReallocate") || allocator == kRLCFAllocatorNull) return NULL;
    if (!ptr) return newsize > 0 ? malloc((size_t)newsize) : NULL;
    if (newsize <= 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, (size_t)newsize);
}

void RLCFAllocatorDeallocate(RLCFAllocatorRef allocator, void *ptr) {
    if (rl_cf_allocator_accepted(allocator, "CFAllocatorDeallocate") && allocator != kRLCFAllocatorNull) free(ptr);
}

RLIndex RLCFAllocatorGetPreferredSizeForSize(RLCFAllocatorRef allocator, RLIndex size, RLOptionFlags hint) {
    (void)allocator;
    (void)hint;
    return size;
}
