/*
 * rl_cf_data.c: byte buffers (CRunLoopCFTypes.h). An immutable data keeps
 * its copy of the bytes in the object, or uses the caller's (NoCopy); a
 * mutable one keeps them in a buffer of its own that doubles as it grows.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_cf.h"

struct __RLCFData {
    rl_object base;
    bool is_mutable;
    bool frees_bytes; /* bytes is a buffer freed with the data */
    RLIndex length;
    size_t capacity; /* of a mutable data's buffer */
    uint8_t *bytes;
    uint8_t inline_bytes[];
};

#define FIRST_CAPACITY 16

static void data_finalize(rl_object *obj) {
    struct __RLCFData *d = (struct __RLCFData *)obj;
    if (d->frees_bytes) free(d->bytes);
    free(d);
}

/* Shows the first bytes, as CF does. */
static char *data_describe(const rl_object *obj) {
    RLCFDataRef d = (RLCFDataRef)obj;
    char hex[2 * 24 + 4] = "";
    RLIndex shown = d->length < 24 ? d->length : 24;
    for (RLIndex i = 0; i < shown; i++) snprintf(hex + 2 * i, 3, "%02x", d->bytes[i]);
    if (shown < d->length) strcat(hex, "...");
    return rl_strdup_printf("<CFData %p>{length = %ld, capacity = %zu, bytes = 0x%s}", (const void *)d, d->length,
                            d->is_mutable ? d->capacity : (size_t)d->length, hex);
}

const rl_class rl_cf_data_class = {"RLCFData", data_finalize, data_describe};

static bool is_data(RLCFDataRef d) {
    return d && rl_object_is(d, &rl_cf_data_class);
}

static bool is_mutable(RLCFDataRef d) {
    return is_data(d) && d->is_mutable;
}

static struct __RLCFData *data_new(size_t inline_size) {
    if (inline_size > SIZE_MAX - sizeof(struct __RLCFData)) return NULL;
    struct __RLCFData *d = calloc(1, sizeof *d + inline_size);
    if (d) rl_object_init(&d->base, &rl_cf_data_class);
    return d;
}

RLCFDataRef RLCFDataCreate(RLCFAllocatorRef allocator, const uint8_t *bytes, RLIndex length) {
    if (!rl_cf_can_allocate(allocator, "CFDataCreate") || length < 0 || (!bytes && length > 0)) return NULL;
    struct __RLCFData *d = data_new((size_t)length);
    if (!d) return NULL;
    d->length = length;
    d->bytes = d->inline_bytes;
    if (length) memcpy(d->bytes, bytes, (size_t)length);
    return d;
}

RLCFDataRef RLCFDataCreateWithBytesNoCopy(RLCFAllocatorRef allocator, const uint8_t *bytes, RLIndex length,
                                          RLCFAllocatorRef bytesDeallocator) {
    if (!rl_cf_can_allocate(allocator, "CFDataCreateWithBytesNoCopy") || length < 0 || (!bytes && length > 0))
        return NULL;
    if (!rl_cf_allocator_accepted(bytesDeallocator, "CFDataCreateWithBytesNoCopy")) return NULL;
    struct __RLCFData *d = data_new(0);
    if (!d) return NULL;
    d->length = length;
    d->bytes = bytes ? (uint8_t *)(uintptr_t)bytes : d->inline_bytes;
    d->frees_bytes = bytes && bytesDeallocator != kRLCFAllocatorNull;
    return d;
}

RLCFDataRef RLCFDataCreateCopy(RLCFAllocatorRef allocator, RLCFDataRef theData) {
    if (!is_data(theData)) return NULL;
    return RLCFDataCreate(allocator, theData->bytes, theData->length);
}

RLCFMutableDataRef RLCFDataCreateMutable(RLCFAllocatorRef allocator, RLIndex capacity) {
    if (!rl_cf_can_allocate(allocator, "CFDataCreateMutable") || capacity < 0) return NULL;
    struct __RLCFData *d = data_new(0);
    if (!d) return NULL;
    d->capacity = (size_t)capacity > FIRST_CAPACITY ? (size_t)capacity : FIRST_CAPACITY;
    d->bytes = malloc(d->capacity);
    if (!d->bytes) {
        free(d);
        return NULL;
    }
    d->is_mutable = d->frees_bytes = true;
    return d;
}

RLCFMutableDataRef RLCFDataCreateMutableCopy(RLCFAllocatorRef allocator, RLIndex capacity, RLCFDataRef theData) {
    if (!is_data(theData)) return NULL;
    RLCFMutableDataRef d = RLCFDataCreateMutable(allocator, capacity > theData->length ? capacity : theData->length);
    if (d) RLCFDataAppendBytes(d, theData->bytes, theData->length);
    return d;
}

RLIndex RLCFDataGetLength(RLCFDataRef theData) {
    return is_data(theData) ? theData->length : 0;
}

const uint8_t *RLCFDataGetBytePtr(RLCFDataRef theData) {
    return is_data(theData) ? theData->bytes : NULL;
}

uint8_t *RLCFDataGetMutableBytePtr(RLCFMutableDataRef theData) {
    return is_mutable(theData) ? theData->bytes : NULL;
}

/* The part of `range` inside the data, as [*start, *end). */
static void clamp(RLCFDataRef d, RLCFRange range, RLIndex *start, RLIndex *end) {
    RLIndex length = RLCFDataGetLength(d);
    *start = range.location < 0 ? 0 : range.location > length ? length : range.location;
    *end = range.length < 0 || range.length > length - *start ? length : *start + range.length;
}

void RLCFDataGetBytes(RLCFDataRef theData, RLCFRange range, uint8_t *buffer) {
    RLIndex start, end;
    clamp(theData, range, &start, &end);
    if (buffer && start < end) memcpy(buffer, theData->bytes + start, (size_t)(end - start));
}

/* Room for `length` bytes in a mutable data; false (unchanged) out of memory. */
static bool reserve(RLCFMutableDataRef d, RLIndex length) {
    return rl_array_reserve(&d->bytes, 1, &d->capacity, (size_t)length, FIRST_CAPACITY);
}

/* Replaces [start, end) with `size` bytes: `bytes`, or zeros for NULL. */
static void replace(RLCFMutableDataRef d, RLIndex start, RLIndex end, const uint8_t *bytes, RLIndex size) {
    if (size > INTPTR_MAX - (d->length - (end - start))) return;
    RLIndex length = d->length - (end - start) + size;
    /* New bytes from the data's own buffer would move under a realloc. */
    uint8_t *own_copy = NULL;
    uintptr_t at = (uintptr_t)bytes, own = (uintptr_t)d->bytes;
    if (bytes && size && at >= own && at < own + d->capacity) {
        if (!(own_copy = malloc((size_t)size))) return;
        bytes = memcpy(own_copy, bytes, (size_t)size);
    }
    if (reserve(d, length)) {
        memmove(d->bytes + start + size, d->bytes + end, (size_t)(d->length - end));
        if (bytes) memcpy(d->bytes + start, bytes, (size_t)size);
        else memset(d->bytes + start, 0, (size_t)size);
        d->length = length;
    }
    free(own_copy);
}

void RLCFDataReplaceBytes(RLCFMutableDataRef theData, RLCFRange range, const uint8_t *newBytes, RLIndex newLength) {
    if (!is_mutable(theData) || newLength < 0 || (!newBytes && newLength > 0)) return;
    RLIndex start, end;
    clamp(theData, range, &start, &end);
    replace(theData, start, end, newBytes, newLength);
}

void RLCFDataAppendBytes(RLCFMutableDataRef theData, const uint8_t *bytes, RLIndex length) {
    if (!is_mutable(theData) || length <= 0 || !bytes) return;
    replace(theData, theData->length, theData->length, bytes, length);
}

void RLCFDataDeleteBytes(RLCFMutableDataRef theData, RLCFRange range) {
    if (!is_mutable(theData)) return;
    RLIndex start, end;
    clamp(theData, range, &start, &end);
    replace(theData, start, end, NULL, 0);
}

void RLCFDataSetLength(RLCFMutableDataRef theData, RLIndex length) {
    if (!is_mutable(theData) || length < 0) return;
    if (length < theData->length) replace(theData, length, theData->length, NULL, 0);
    else replace(theData, theData->length, theData->length, NULL, length - theData->length);
}

void RLCFDataIncreaseLength(RLCFMutableDataRef theData, RLIndex extraLength) {
    if (!is_mutable(theData) || extraLength <= 0) return;
    replace(theData, theData->length, theData->length, NULL, extraLength);
}

bool rl_cf_data_equal(RLCFDataRef a, RLCFDataRef b) {
    return a->length == b->length && (a->length == 0 || memcmp(a->bytes, b->bytes, (size_t)a->length) == 0);
}

/* FNV-1a over the length and the first 80 bytes (as CF, a long data hashes
   by its start). */
RLCFHashCode rl_cf_data_hash(RLCFDataRef d) {
    uint64_t hash = 14695981039346656037u ^ (uint64_t)d->length;
    for (RLIndex i = 0; i < d->length && i < 80; i++) hash = (hash ^ d->bytes[i]) * 1099511628211u;
    return (RLCFHashCode)hash;
}
