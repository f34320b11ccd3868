/*
 * rl_cf_object.c: what CF does for any object (CRunLoopCFTypes.h): retain
 * and release that leave constant strings alone, the retain count, type
 * identity, equality, hashing and descriptions, over every object of the
 * library, and the array callbacks for objects.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "CRunLoopSocket.h"
#include "rl_cf.h"
#include "CRunLoopCFMessagePort.h"

RLCFTypeRef RLCFRetain(RLCFTypeRef cf) {
    if (cf && !rl_cf_is_constant_string(cf)) RLRetain(cf);
    return cf;
}

void RLCFRelease(RLCFTypeRef cf) {
    if (cf && !rl_cf_is_constant_string(cf)) RLRelease(cf);
}

RLIndex RLCFGetRetainCount(RLCFTypeRef cf) {
    if (!cf) return 0;
    if (rl_cf_is_constant_string(cf) || rl_cf_is_allocator(cf)) return LONG_MAX;
    return atomic_load_explicit(&((rl_object *)(uintptr_t)cf)->refcount, memory_order_relaxed);
}

/* ---- types ----------------------------------------------------------------- */

/* Each type by the name of its class, and the name CF (or RL, for types CF
   does not have) gives it. Classes outside the core are known by name only,
   since the core never reaches into the layers above it. */
static const struct {
    const char *class_name;
    RLCFStringRef type_name;
} types[RL_CF_TYPE_COUNT] = {
    [RL_CF_TYPE_ALLOCATOR] = {"RLCFAllocator", RLCFSTR("CFAllocator")},
    [RL_CF_TYPE_STRING] = {"RLCFString", RLCFSTR("CFString")},
    [RL_CF_TYPE_ARRAY] = {"RLCFArray", RLCFSTR("CFArray")},
    [RL_CF_TYPE_DATA] = {"RLCFData", RLCFSTR("CFData")},
    [RL_CF_TYPE_RUN_LOOP] = {"RLRunLoop", RLCFSTR("CFRunLoop")},
    [RL_CF_TYPE_SOURCE] = {"RLRunLoopSource", RLCFSTR("CFRunLoopSource")},
    [RL_CF_TYPE_OBSERVER] = {"RLRunLoopObserver", RLCFSTR("CFRunLoopObserver")},
    [RL_CF_TYPE_TIMER] = {"RLRunLoopTimer", RLCFSTR("CFRunLoopTimer")},
    [RL_CF_TYPE_FILE_DESCRIPTOR] = {"RLFileDescriptor", RLCFSTR("CFFileDescriptor")},
    [RL_CF_TYPE_MESSAGE_PORT] = {"RLMessagePort", RLCFSTR("RLMessagePort")},
    [RL_CF_TYPE_SIGNAL_WATCHER] = {"RLSignalWatcher", RLCFSTR("RLSignalWatcher")},
    [RL_CF_TYPE_PERFORM_REQUEST] = {"RLPerformRequest", RLCFSTR("RLPerformRequest")},
    [RL_CF_TYPE_THREAD] = {"RLThread", RLCFSTR("RLThread")},
    [RL_CF_TYPE_HANG_MONITOR] = {"RLHangMonitor", RLCFSTR("RLHangMonitor")},
    [RL_CF_TYPE_IDLE_QUEUE] = {"RLIdleQueue", RLCFSTR("RLIdleQueue")},
    [RL_CF_TYPE_SOCKET] = {"RLSocket", RLCFSTR("CFSocket")},
    [RL_CF_TYPE_CF_MESSAGE_PORT] = {"RLCFMessagePort", RLCFSTR("CFMessagePort")},
};

RLCFTypeID RLCFGetTypeID(RLCFTypeRef cf) {
    if (!cf) return RL_CF_TYPE_NONE;
    if (rl_cf_is_constant_string(cf)) return RL_CF_TYPE_STRING;
    const char *name = ((const rl_object *)cf)->cls->name;
    for (RLCFTypeID t = RL_CF_TYPE_NONE + 1; t < RL_CF_TYPE_COUNT; t++)
        if (strcmp(types[t].class_name, name) == 0) return t;
    return RL_CF_TYPE_NONE;
}

RLCFStringRef RLCFCopyTypeIDDescription(RLCFTypeID type_id) {
    return type_id > RL_CF_TYPE_NONE && type_id < RL_CF_TYPE_COUNT ? types[type_id].type_name : NULL;
}

RLCFAllocatorRef RLCFGetAllocator(RLCFTypeRef cf) {
    return cf ? kRLCFAllocatorSystemDefault : NULL;
}

RLCFTypeID RLCFAllocatorGetTypeID(void) {
    return RL_CF_TYPE_ALLOCATOR;
}
RLCFTypeID RLCFStringGetTypeID(void) {
    return RL_CF_TYPE_STRING;
}
RLCFTypeID RLCFArrayGetTypeID(void) {
    return RL_CF_TYPE_ARRAY;
}
RLCFTypeID RLCFDataGetTypeID(void) {
    return RL_CF_TYPE_DATA;
}
RLCFTypeID RLCFRunLoopGetTypeID(void) {
    return RL_CF_TYPE_RUN_LOOP;
}
RLCFTypeID RLCFRunLoopSourceGetTypeID(void) {
    return RL_CF_TYPE_SOURCE;
}
RLCFTypeID RLCFRunLoopObserverGetTypeID(void) {
    return RL_CF_TYPE_OBSERVER;
}
RLCFTypeID RLCFRunLoopTimerGetTypeID(void) {
    return RL_CF_TYPE_TIMER;
}
RLCFTypeID RLCFFileDescriptorGetTypeID(void) {
    return RL_CF_TYPE_FILE_DESCRIPTOR;
}
RLCFTypeID RLCFSocketGetTypeID(void) {
    return RL_CF_TYPE_SOCKET;
}

/* Declared with the port (CRunLoopCFMessagePort.h); the number is the core's. */
RLCFTypeID RLCFMessagePortGetTypeID(void) {
    return RL_CF_TYPE_CF_MESSAGE_PORT;
}

/* ---- equality and hashes ------------------------------------------------------ */

/* Room for either version of a source's context. */
typedef union {
    RLRunLoopSourceContext v0;
    RLRunLoopSourceContext1 v1;
} source_context;

static void get_source_context(RLRunLoopSourceRef source, source_context *context) {
    RLRunLoopSourceGetContext(source, &context->v0);
    context->v0.version = rl_context_version(context->v0.version);
}

/* As CF: two sources are alike when they are equally valid, have the same
   order, version, equal, hash and perform callbacks, and infos that their
   equal callback finds equal (the same info, without one). */
static bool sources_equal(RLRunLoopSourceRef a, RLRunLoopSourceRef b) {
    if (RLRunLoopSourceIsValid(a) != RLRunLoopSourceIsValid(b)) return false;
    if (RLRunLoopSourceGetOrder(a) != RLRunLoopSourceGetOrder(b)) return false;
    source_context x, y;
    get_source_context(a, &x);
    get_source_context(b, &y);
    if (x.v0.version != y.v0.version || x.v0.equal != y.v0.equal || x.v0.hash != y.v0.hash) return false;
    if (x.v0.version == 0 ? x.v0.perform != y.v0.perform : x.v1.perform != y.v1.perform) return false;
    return x.v0.equal ? x.v0.equal(x.v0.info, y.v0.info) : x.v0.info == y.v0.info;
}

static RLCFHashCode source_hash(RLRunLoopSourceRef source) {
    source_context c;
    get_source_context(source, &c);
    return c.v0.hash ? c.v0.hash(c.v0.info) : (RLCFHashCode)c.v0.info;
}

bool RLCFEqual(RLCFTypeRef cf1, RLCFTypeRef cf2) {
    if (cf1 == cf2) return true;
    if (!cf1 || !cf2) return false;
    RLCFTypeID type = RLCFGetTypeID(cf1);
    if (type != RLCFGetTypeID(cf2)) return false;
    switch (type) {
    case RL_CF_TYPE_STRING: return rl_cf_string_equal(cf1, cf2);
    case RL_CF_TYPE_ARRAY: return rl_cf_array_equal(cf1, cf2);
    case RL_CF_TYPE_DATA: return rl_cf_data_equal(cf1, cf2);
    case RL_CF_TYPE_SOURCE:
        return sources_equal((RLRunLoopSourceRef)(uintptr_t)cf1, (RLRunLoopSourceRef)(uintptr_t)cf2);
    default: return false;
    }
}

RLCFHashCode RLCFHash(RLCFTypeRef cf) {
    if (!cf) return 0;
    switch (RLCFGetTypeID(cf)) {
    case RL_CF_TYPE_STRING: return rl_cf_string_hash(cf);
    case RL_CF_TYPE_ARRAY: return (RLCFHashCode)RLCFArrayGetCount(cf);
    case RL_CF_TYPE_DATA: return rl_cf_data_hash(cf);
    case RL_CF_TYPE_SOURCE: return source_hash((RLRunLoopSourceRef)(uintptr_t)cf);
    default: return (RLCFHashCode)cf;
    }
}

/* ---- descriptions ---------------------------------------------------------------- */

static char *copy_description_text(RLCFTypeRef cf) {
    return rl_cf_is_string(cf) ? rl_cf_string_copy_description(cf) : RLCopyDescription(cf);
}

RLCFStringRef RLCFCopyDescription(RLCFTypeRef cf) {
    if (!cf) return RLCFSTR("(null)");
    return rl_cf_string_adopt(copy_description_text(cf));
}

void RLCFShow(RLCFTypeRef cf) {
    if (!cf) {
        fprintf(stderr, "(null)\n");
        return;
    }
    if (rl_cf_is_string(cf)) {
        fprintf(stderr, "%s\n", rl_cf_string_text(cf, NULL));
        return;
    }
    char *text = RLCopyDescription(cf);
    fprintf(stderr, "%s\n", text ? text : "(out of memory)");
    free(text);
}

/* ---- array callbacks for objects ------------------------------------------------------ */

static const void *retain_value(RLCFAllocatorRef allocator, const void *value) {
    (void)allocator;
    return RLCFRetain(value);
}

static void release_value(RLCFAllocatorRef allocator, const void *value) {
    (void)allocator;
    RLCFRelease(value);
}

const RLCFArrayCallBacks kRLCFTypeArrayCallBacks = {0, retain_value, release_value, RLCFCopyDescription, RLCFEqual};
