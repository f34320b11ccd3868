/*
 * rl_array.h: the one growth rule of the library's arrays. An array that is
 * full doubles (a first one gets a size its owner picks), so adding n items
 * costs O(n) copies in all; failure leaves the array as it was.
 */
#ifndef RL_ARRAY_H
#define RL_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/* The capacity that holds `needed` elements: `capacity` (or `first` when it
   is 0) doubled as often as needed. */
size_t rl_grown_capacity(size_t capacity, size_t needed, size_t first);

/* Makes room for `needed` elements of `size` bytes in the heap array whose
   address is `items` (a T ** passed as void *) and whose capacity is
   *capacity, growing it by rl_grown_capacity. False, with the array and
   *capacity untouched, when out of memory. */
bool rl_array_reserve(void *items, size_t size, size_t *capacity, size_t needed, size_t first);

#endif
