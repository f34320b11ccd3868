/*
 * rl_cf_array.c: immutable arrays (CRunLoopCFTypes.h): values kept in the
 * object, retained and released with the callbacks given at creation (none:
 * kept as they are), compared with their equal callback (none: identity).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_cf.h"

struct __RLCFArray {
    rl_object base;
    RLIndex count;
    RLCFArrayCallBacks callbacks; /* all NULL when made without */
    const void *values[];
};

static void array_finalize(rl_object *obj) {
    struct __RLCFArray *a = (struct __RLCFArray *)obj;
    if (a->callbacks.release)
        for (RLIndex i = 0; i < a->count; i++) a->callbacks.release(kRLCFAllocatorDefault, a->values[i]);
    free(a);
}

static char *value_text(RLCFArrayRef a, const void *value) {
    char *text = a->callbacks.copyDescription ? rl_cf_take_text(a->callbacks.copyDescription(value)) : NULL;
    return text ? text : rl_strdup_printf("<%p>", value);
}

static char *array_describe(const rl_object *obj) {
    RLCFArrayRef a = (RLCFArrayRef)obj;
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);
    if (!out) return NULL;
    fprintf(out, "<CFArray %p>{type = immutable, count = %ld, values = (\n", (const void *)a, a->count);
    for (RLIndex i = 0; i < a->count; i++) {
        char *text = value_text(a, a->values[i]);
        fprintf(out, "\t%ld : %s\n", i, text ? text : "(out of memory)");
        free(text);
    }
    fprintf(out, ")}");
    bool failed = ferror(out) != 0;
    if (fclose(out) != 0 || failed) {
        free(buf);
        return NULL;
    }
    return buf;
}

const rl_class rl_cf_array_class = {"RLCFArray", array_finalize, array_describe};

static bool is_array(RLCFArrayRef a) {
    return a && rl_object_is(a, &rl_cf_array_class);
}

RLCFArrayRef RLCFArrayCreate(RLCFAllocatorRef allocator, const void **values, RLIndex numValues,
                             const RLCFArrayCallBacks *callBacks) {
    if (!rl_cf_can_allocate(allocator, "CFArrayCreate")) return NULL;
    if (numValues < 0 || (!values && numValues > 0)) return NULL;
    if ((size_t)numValues > (SIZE_MAX - sizeof(struct __RLCFArray)) / sizeof(void *)) return NULL;
    struct __RLCFArray *a = malloc(sizeof *a + (size_t)numValues * sizeof(void *));
    if (!a) return NULL;
    rl_object_init(&a->base, &rl_cf_array_class);
    a->count = numValues;
    a->callbacks = callBacks ? *callBacks : (RLCFArrayCallBacks){0, NULL, NULL, NULL, NULL};
    for (RLIndex i = 0; i < numValues; i++)
        a->values[i] = a->callbacks.retain ? a->callbacks.retain(allocator, values[i]) : values[i];
    return a;
}

RLCFArrayRef RLCFArrayCreateCopy(RLCFAllocatorRef allocator, RLCFArrayRef theArray) {
    if (!rl_cf_can_allocate(allocator, "CFArrayCreateCopy") || !is_array(theArray)) return NULL;
    RLRetain(theArray);
    return theArray;
}

RLIndex RLCFArrayGetCount(RLCFArrayRef theArray) {
    return is_array(theArray) ? theArray->count : 0;
}

const void *RLCFArrayGetValueAtIndex(RLCFArrayRef theArray, RLIndex idx) {
    return is_array(theArray) && idx >= 0 && idx < theArray->count ? theArray->values[idx] : NULL;
}

/* The part of `range` inside the array, as [*start, *end). */
static void clamp(RLCFArrayRef a, RLCFRange range, RLIndex *start, RLIndex *end) {
    RLIndex count = RLCFArrayGetCount(a);
    *start = range.location < 0 ? 0 : range.location > count ? count : range.location;
    *end = range.length < 0 || range.length > count - *start ? count : *start + range.length;
}

void RLCFArrayGetValues(RLCFArrayRef theArray, RLCFRange range, const void **values) {
    RLIndex start, end;
    clamp(theArray, range, &start, &end);
    if (values && start < end) memcpy(values, &theArray->values[start], (size_t)(end - start) * sizeof(void *));
}

static bool values_equal(RLCFArrayRef a, const void *x, const void *y) {
    return x == y || (a->callbacks.equal && a->callbacks.equal(x, y));
}

RLIndex RLCFArrayGetFirstIndexOfValue(RLCFArrayRef theArray, RLCFRange range, const void *value) {
    RLIndex start, end;
    clamp(theArray, range, &start, &end);
    for (RLIndex i = start; i < end; i++)
        if (values_equal(theArray, theArray->values[i], value)) return i;
    return kRLCFNotFound;
}

bool RLCFArrayContainsValue(RLCFArrayRef theArray, RLCFRange range, const void *value) {
    return RLCFArrayGetFirstIndexOfValue(theArray, range, value) != kRLCFNotFound;
}

bool rl_cf_array_equal(RLCFArrayRef a, RLCFArrayRef b) {
    if (a->count != b->count) return false;
    for (RLIndex i = 0; i < a->count; i++)
        if (!values_equal(a, a->values[i], b->values[i])) return false;
    return true;
}
