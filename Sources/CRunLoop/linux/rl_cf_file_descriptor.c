/*
 * rl_cf_file_descriptor.c: RLFileDescriptor made from a context typed as
 * CF's CFFileDescriptorContext (CRunLoopCFTypes.h): its callbacks take
 * `void *`, and its copyDescription returns a string. It is stored as the
 * RL context, flagged in its version (rl_cf_context.h), so the descriptor's
 * description reads the string; GetContext gives back what was given.
 */
#define _GNU_SOURCE
#include "CRunLoopCFTypes.h"
#include "rl_extras.h"

/* A function pointer stored as another type with the same representation. */
#define AS(type, fn) ((type)(void (*)(void))(fn))

typedef const void *(*rl_retain)(const void *info);
typedef void (*rl_release)(const void *info);
typedef char *(*rl_copy_description)(const void *info);
typedef void *(*cf_retain)(void *info);
typedef void (*cf_release)(void *info);
typedef RLCFStringRef (*cf_copy_description)(void *info);

RLFileDescriptorRef RLCFFileDescriptorCreate(RLCFAllocatorRef allocator, RLFileDescriptorNativeDescriptor fd,
                                             bool closeOnInvalidate, RLFileDescriptorCallBack callout,
                                             const RLCFFileDescriptorContext *context) {
    if (!rl_cf_allocator_accepted(allocator, "CFFileDescriptorCreate") || allocator == kRLCFAllocatorNull) return NULL;
    if (!context) return RLFileDescriptorCreate(fd, closeOnInvalidate, callout, NULL);
    RLIndex version = context->copyDescription ? context->version | RL_CONTEXT_CF_TYPED : context->version;
    RLFileDescriptorContext rl_context = {version, context->info, AS(rl_retain, context->retain),
                                          AS(rl_release, context->release),
                                          AS(rl_copy_description, context->copyDescription)};
    return RLFileDescriptorCreate(fd, closeOnInvalidate, callout, &rl_context);
}

void RLCFFileDescriptorGetContext(RLFileDescriptorRef f, RLCFFileDescriptorContext *context) {
    if (!f || !context) return;
    RLFileDescriptorContext c;
    RLFileDescriptorGetContext(f, &c);
    *context = (RLCFFileDescriptorContext){rl_context_version(c.version), c.info, AS(cf_retain, c.retain),
                                           AS(cf_release, c.release), AS(cf_copy_description, c.copyDescription)};
}

RLRunLoopSourceRef RLCFFileDescriptorCreateRunLoopSource(RLCFAllocatorRef allocator, RLFileDescriptorRef f,
                                                         RLIndex order) {
    if (!rl_cf_allocator_accepted(allocator, "CFFileDescriptorCreateRunLoopSource") || allocator == kRLCFAllocatorNull)
        return NULL;
    return RLFileDescriptorCreateRunLoopSource(f, order);
}
