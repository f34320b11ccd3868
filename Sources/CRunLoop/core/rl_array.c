/* rl_array.c: the growable pointer array used for every list in the core. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

bool rl_ptr_array_reserve(rl_ptr_array *a, size_t capacity) {
    if (capacity <= a->capacity) return true;
    size_t cap = a->capacity ? a->capacity : 4;
    while (cap < capacity) cap *= 2;
    void **grown = realloc(a->items, cap * sizeof *grown);
    if (!grown) return false;
    a->items = grown;
    a->capacity = cap;
    return true;
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
