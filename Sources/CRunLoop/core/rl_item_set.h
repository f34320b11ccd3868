/*
 * rl_item_set.h: the ordered item set and the index map (rl_item_set.c),
 * the containers a mode keeps its items in.
 */
#ifndef RL_ITEM_SET_H
#define RL_ITEM_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "CRunLoop.h"

/* An ordered set of items (rl_item_set.c): walked by order, then in the
   order added; add O(log n) expected, remove O(log n) expected, contains
   O(1). Walk it with rl_item_set_first / node->next[0]. */
#define RL_ITEM_SET_LEVELS 16
typedef struct rl_item_node rl_item_node;
struct rl_item_node {
    void *item;
    RLIndex order;
    uint64_t seq; /* order among equal orders */
    unsigned levels;
    rl_item_node *next[]; /* one per level */
};
typedef struct {
    rl_item_node *head[RL_ITEM_SET_LEVELS];
    size_t count;
    uint64_t next_seq;
    uint64_t rng;          /* node heights */
    rl_item_node **table;  /* item -> node, open addressing */
    size_t table_capacity; /* 0 or a power of two */
} rl_item_set;

/* false if the item is already there (nothing changes) or out of memory. */
bool rl_item_set_insert(rl_item_set *s, void *item, RLIndex order);
bool rl_item_set_remove(rl_item_set *s, const void *item);
bool rl_item_set_contains(const rl_item_set *s, const void *item);
rl_item_node *rl_item_set_find(const rl_item_set *s, const void *item); /* NULL when absent */
void rl_item_set_free(rl_item_set *s);
static inline rl_item_node *rl_item_set_first(const rl_item_set *s) {
    return s->head[0];
}
#define RL_ITEM_SET_FOREACH(node, set) for (rl_item_node *node = (set)->head[0]; node; node = node->next[0])

/* A map from a key (a pointer, or a small number plus one; never 0) to a
   32-bit index: O(1) expected put, get and delete (rl_item_set.c). */
typedef struct {
    uintptr_t key; /* 0: empty */
    uint32_t value;
} rl_index_map_entry;
typedef struct {
    rl_index_map_entry *entries;
    size_t count;
    size_t capacity; /* 0 or a power of two, at most half full */
} rl_index_map;
bool rl_index_map_reserve(rl_index_map *m, size_t count);              /* room for `count` keys */
bool rl_index_map_put(rl_index_map *m, uintptr_t key, uint32_t value); /* false: out of memory */
long rl_index_map_get(const rl_index_map *m, uintptr_t key);           /* -1 when absent */
void rl_index_map_delete(rl_index_map *m, uintptr_t key);
void rl_index_map_free(rl_index_map *m);

#endif
