/* rl_array.c: the growth rule of every array (rl_array.h), and the growable
   pointer array used for every list in the core. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

size_t rl_grown_capacity(size_t capacity, size_t needed, size_t first) {
    size_t cap = capacity ? capacity : first;
    while (cap < needed) cap *= 2;
    return cap;
}

bool rl_array_reserve(void *items, size_t size, size_t *capacity, size_t needed, size_t first) {
    if (needed <= *capacity) return true;
    size_t cap = rl_grown_capacity(*capacity, needed, first);
    if (cap > SIZE_MAX / size) return false;
    void *old;
    memcpy(&old, items, sizeof old); /* *items, whatever T * it is */
    void *grown = realloc(old, cap * size);
    if (!grown) return false;
    memcpy(items, &grown, sizeof grown);
    *capacity = cap;
    return true;
}

bool rl_ptr_array_reserve(rl_ptr_array *a, size_t capacity) {
    return rl_array_reserve(&a->items, sizeof *a->items, &a->capacity, capacity, 4);
}

bool rl_ptr_array_insert(rl_ptr_array *a, size_t index, void *item) {
    if (!rl_ptr_array_reserve(a, a->count + 1)) return false;
    memmove(&a->items[index + 1], &a->items[index], (a->count - index) * sizeof *a->items);
    a->items[index] = item;
    a->count++;
    return true;
}

bool rl_ptr_array_append(rl_ptr_array *a, void *item) {
    return rl_ptr_array_insert(a, a->count, item);
}

void rl_ptr_array_remove_at(rl_ptr_array *a, size_t index) {
    memmove(&a->items[index], &a->items[index + 1], (a->count - index - 1) * sizeof *a->items);
    a->count--;
}

long rl_ptr_array_index_of(const rl_ptr_array *a, const void *item) {
    for (size_t i = 0; i < a->count; i++)
        if (a->items[i] == item) return (long)i;
    return -1;
}

bool rl_ptr_array_remove(rl_ptr_array *a, const void *item) {
    long i = rl_ptr_array_index_of(a, item);
    if (i < 0) return false;
    rl_ptr_array_remove_at(a, (size_t)i);
    return true;
}

void rl_ptr_array_free(rl_ptr_array *a) {
    free(a->items);
    a->items = NULL;
    a->count = a->capacity = 0;
}
