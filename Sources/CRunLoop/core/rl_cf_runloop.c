/*
 * rl_cf_runloop.c: the run loop's items made from contexts typed as CF
 * types them, and its modes as strings (CRunLoopCFTypes.h). A CF context is
 * stored as the RL context it mirrors field for field, flagged in its
 * version (rl_cf_context.h), so the library calls its description, schedule
 * and cancel callbacks with strings; its GetContext gives back what was
 * given.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "rl_cf.h"

/* A function pointer stored as another type with the same representation. */
#define AS(type, fn) ((type)(void (*)(void))(fn))

typedef char *(*rl_copy_description)(const void *info);
typedef RLCFStringRef (*cf_copy_description)(const void *info);
typedef void (*rl_mode_callback)(void *info, RLRunLoopRef rl, RLRunLoopMode mode);
typedef void (*cf_mode_callback)(void *info, RLRunLoopRef rl, RLCFStringRef mode);

/* A context's version as stored: flagged when it has a callback whose CF
   type differs from the RL one (without, the RL context is the same, and a
   timer needs no room for its context's functions). */
static RLIndex stored_version(RLIndex version, bool has_cf_callbacks) {
    return has_cf_callbacks ? version | RL_CONTEXT_CF_TYPED : version;
}

/* ---- sources ------------------------------------------------------------------ */

RLRunLoopSourceRef RLCFRunLoopSourceCreate(RLCFAllocatorRef allocator, RLIndex order,
                                           RLCFRunLoopSourceContext *context) {
    if (!rl_cf_can_allocate(allocator, "CFRunLoopSourceCreate") || !context) return NULL;
    if (context->version == 1) {
        const RLCFRunLoopSourceContext1 *c = (const RLCFRunLoopSourceContext1 *)context;
        RLRunLoopSourceContext1 rl_context = {stored_version(1, c->copyDescription != NULL),
                                              c->info,
                                              c->retain,
                                              c->release,
                                              AS(rl_copy_description, c->copyDescription),
                                              c->equal,
                                              c->hash,
                                              c->getFileDescriptor,
                                              c->perform};
        return RLRunLoopSourceCreate(order, (RLRunLoopSourceContext *)&rl_context);
    }
    bool cf_callbacks = context->copyDescription || context->schedule || context->cancel;
    RLRunLoopSourceContext rl_context = {stored_version(context->version, cf_callbacks),
                                         context->info,
                                         context->retain,
                                         context->release,
                                         AS(rl_copy_description, context->copyDescription),
                                         context->equal,
                                         context->hash,
                                         AS(rl_mode_callback, context->schedule),
                                         AS(rl_mode_callback, context->cancel),
                                         context->perform};
    return RLRunLoopSourceCreate(order, &rl_context);
}

void RLCFRunLoopSourceGetContext(RLRunLoopSourceRef source, RLCFRunLoopSourceContext *context) {
    if (!source || !context) return;
    union {
        RLRunLoopSourceContext v0;
        RLRunLoopSourceContext1 v1;
    } c;
    RLRunLoopSourceGetContext(source, &c.v0);
    RLIndex version = rl_context_version(c.v0.version);
    if (version == 1) {
        *(RLCFRunLoopSourceContext1 *)context =
            (RLCFRunLoopSourceContext1){version,
                                        c.v1.info,
                                        c.v1.retain,
                                        c.v1.release,
                                        AS(cf_copy_description, c.v1.copyDescription),
                                        c.v1.equal,
                                        c.v1.hash,
                                        c.v1.getFileDescriptor,
                                        c.v1.perform};
        return;
    }
    *context = (RLCFRunLoopSourceContext){version,
                                          c.v0.info,
                                          c.v0.retain,
                                          c.v0.release,
                                          AS(cf_copy_description, c.v0.copyDescription),
                                          c.v0.equal,
                                          c.v0.hash,
                                          AS(cf_mode_callback, c.v0.schedule),
                                          AS(cf_mode_callback, c.v0.cancel),
                                          c.v0.perform};
}

/* ---- observers and timers ---------------------------------------------------------- */

RLRunLoopObserverRef RLCFRunLoopObserverCreate(RLCFAllocatorRef allocator, RLOptionFlags activities, bool repeats,
                                               RLIndex order, RLRunLoopObserverCallBack callout,
                                               RLCFRunLoopObserverContext *context) {
    if (!rl_cf_can_allocate(allocator, "CFRunLoopObserverCreate")) return NULL;
    if (!context) return RLRunLoopObserverCreate(activities, repeats, order, callout, NULL);
    RLRunLoopObserverContext rl_context = {stored_version(context->version, context->copyDescription != NULL),
                                           context->info, context->retain, context->release,
                                           AS(rl_copy_description, context->copyDescription)};
    return RLRunLoopObserverCreate(activities, repeats, order, callout, &rl_context);
}

void RLCFRunLoopObserverGetContext(RLRunLoopObserverRef observer, RLCFRunLoopObserverContext *context) {
    if (!observer || !context) return;
    RLRunLoopObserverContext c;
    RLRunLoopObserverGetContext(observer, &c);
    *context = (RLCFRunLoopObserverContext){rl_context_version(c.version), c.info, c.retain, c.release,
                                            AS(cf_copy_description, c.copyDescription)};
}

RLRunLoopTimerRef RLCFRunLoopTimerCreate(RLCFAllocatorRef allocator, RLAbsoluteTime fireDate, RLTimeInterval interval,
                                         RLOptionFlags flags, RLIndex order, RLRunLoopTimerCallBack callout,
                                         RLCFRunLoopTimerContext *context) {
    if (!rl_cf_can_allocate(allocator, "CFRunLoopTimerCreate")) return NULL;
    if (!context) return RLRunLoopTimerCreate(fireDate, interval, flags, order, callout, NULL);
    RLRunLoopTimerContext rl_context = {stored_version(context->version, context->copyDescription != NULL),
                                        context->info, context->retain, context->release,
                                        AS(rl_copy_description, context->copyDescription)};
    return RLRunLoopTimerCreate(fireDate, interval, flags, order, callout, &rl_context);
}

void RLCFRunLoopTimerGetContext(RLRunLoopTimerRef timer, RLCFRunLoopTimerContext *context) {
    if (!timer || !context) return;
    RLRunLoopTimerContext c;
    RLRunLoopTimerGetContext(timer, &c);
    *context = (RLCFRunLoopTimerContext){rl_context_version(c.version), c.info, c.retain, c.release,
                                         AS(cf_copy_description, c.copyDescription)};
}

/* ---- modes as strings ------------------------------------------------------------------ */

RLCFStringRef RLCFRunLoopCopyCurrentMode(RLRunLoopRef rl) {
    char *name = RLRunLoopCopyCurrentMode(rl);
    RLCFStringRef mode = rl_cf_mode_string(name);
    free(name);
    return mode;
}

RLCFArrayRef RLCFRunLoopCopyAllModes(RLRunLoopRef rl) {
    char **names = RLRunLoopCopyAllModes(rl);
    if (!names) return NULL;
    RLIndex count = 0;
    while (names[count]) count++;
    const void **modes = calloc((size_t)count + 1, sizeof *modes);
    bool made = modes != NULL;
    for (RLIndex i = 0; made && i < count; i++) made = (modes[i] = rl_cf_mode_string(names[i])) != NULL;
    RLCFArrayRef array = made ? RLCFArrayCreate(NULL, modes, count, &kRLCFTypeArrayCallBacks) : NULL;
    for (RLIndex i = 0; i < count; i++) {
        if (modes) rl_cf_string_release(modes[i]);
        free(names[i]);
    }
    free(modes);
    free(names);
    return array;
}
