/*
 * rl_item_set.c: the ordered sets of items a mode or a loop holds (version-0
 * sources and observers by order, the loop's common items).
 *
 * A pass walks a set in order, and users add and remove items one by one,
 * sometimes hundreds of thousands of them: a sorted array makes each add and
 * remove cost a search and a shift of the whole array. Here a skip list keeps
 * the order (order, then the sequence in which items were added: CF's order
 * for equal orders), so adding costs O(log n) expected, and a hash table from
 * item to node makes "is it here?" O(1) and lets a removal find its node
 * without a walk (then O(log n) expected to unlink it).
 *
 * Invariants: `count` nodes, each in the list at levels 0 .. levels-1 and
 * once in the table; the table is a power of two at most half full (linear
 * probing, deletion by backward shift, so no tombstones).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

static size_t hash_slot(const rl_item_set *s, const void *item) {
    uint64_t h = (uint64_t)(uintptr_t)item * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (s->table_capacity - 1);
}

static rl_item_node **table_find(const rl_item_set *s, const void *item) {
    if (s->table_capacity == 0) return NULL;
    for (size_t i = hash_slot(s, item);; i = (i + 1) & (s->table_capacity - 1)) {
        rl_item_node **entry = &s->table[i];
        if (!*entry || (*entry)->item == item) return entry;
    }
}

static void table_put(rl_item_set *s, rl_item_node *node) {
    size_t i = hash_slot(s, node->item);
    while (s->table[i]) i = (i + 1) & (s->table_capacity - 1);
    s->table[i] = node;
}

static bool table_reserve(rl_item_set *s, size_t count) {
    if (count * 2 <= s->table_capacity) return true;
    size_t cap = rl_grown_capacity(s->table_capacity, count * 2, 8);
    rl_item_node **old = s->table;
    size_t old_cap = s->table_capacity;
    rl_item_node **grown = calloc(cap, sizeof *grown);
    if (!grown) return false;
    s->table = grown;
    s->table_capacity = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) table_put(s, old[i]);
    free(old);
    return true;
}

/* Empties the entry, then moves back the entries after it that probing
   would no longer reach. */
static void table_delete(rl_item_set *s, rl_item_node **entry) {
    size_t mask = s->table_capacity - 1;
    size_t hole = (size_t)(entry - s->table);
    s->table[hole] = NULL;
    for (size_t i = (hole + 1) & mask; s->table[i]; i = (i + 1) & mask) {
        size_t home = hash_slot(s, s->table[i]->item);
        /* It may fill the hole if the hole lies between its home and i. */
        bool movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
        if (movable) {
            s->table[hole] = s->table[i];
            s->table[i] = NULL;
            hole = i;
        }
    }
}

/* A node's height: 1, and one more with probability 1/4 each time. */
static unsigned random_levels(rl_item_set *s) {
    if (s->rng == 0) s->rng = 0x2545F4914F6CDD1DULL ^ (uint64_t)(uintptr_t)s;
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    uint64_t bits = s->rng;
    unsigned levels = 1;
    while (levels < RL_ITEM_SET_LEVELS && (bits & 3) == 0) {
        levels++;
        bits >>= 2;
    }
    return levels;
}

static bool node_before(const rl_item_node *n, RLIndex order, uint64_t seq) {
    return n->order < order || (n->order == order && n->seq < seq);
}

/* Fills links[i] with the level-i pointer after which (order, seq) belongs:
   a pointer of the last node before it, or of the head. */
static void find_links(rl_item_set *s, RLIndex order, uint64_t seq, rl_item_node ***links) {
    rl_item_node *prev = NULL; /* NULL: the head; a node reached at level l has level l */
    for (int level = RL_ITEM_SET_LEVELS - 1; level >= 0; level--) {
        rl_item_node **link = prev ? &prev->next[level] : &s->head[level];
        while (*link && node_before(*link, order, seq)) {
            prev = *link;
            link = &prev->next[level];
        }
        links[level] = link;
    }
}

bool rl_item_set_contains(const rl_item_set *s, const void *item) {
    rl_item_node **entry = table_find(s, item);
    return entry && *entry;
}

rl_item_node *rl_item_set_find(const rl_item_set *s, const void *item) {
    rl_item_node **entry = table_find(s, item);
    return entry ? *entry : NULL;
}

bool rl_item_set_insert(rl_item_set *s, void *item, RLIndex order) {
    if (rl_item_set_contains(s, item) || !table_reserve(s, s->count + 1)) return false;
    unsigned levels = random_levels(s);
    rl_item_node *node = malloc(sizeof *node + levels * sizeof node->next[0]);
    if (!node) return false;
    node->item = item;
    node->order = order;
    node->seq = s->next_seq++;
    node->levels = levels;
    rl_item_node **links[RL_ITEM_SET_LEVELS];
    find_links(s, order, node->seq, links);
    for (unsigned i = 0; i < levels; i++) {
        node->next[i] = *links[i];
        *links[i] = node;
    }
    table_put(s, node);
    s->count++;
    return true;
}

bool rl_item_set_remove(rl_item_set *s, const void *item) {
    rl_item_node **entry = table_find(s, item);
    if (!entry || !*entry) return false;
    rl_item_node *node = *entry;
    table_delete(s, entry);
    rl_item_node **links[RL_ITEM_SET_LEVELS];
    find_links(s, node->order, node->seq, links);
    for (unsigned i = 0; i < node->levels; i++) *links[i] = node->next[i];
    s->count--;
    free(node);
    return true;
}

void rl_item_set_free(rl_item_set *s) {
    for (rl_item_node *n = s->head[0], *next; n; n = next) {
        next = n->next[0];
        free(n);
    }
    free(s->table);
    memset(s, 0, sizeof *s);
}

/* ---- index maps: a key (never 0) to a 32-bit index ------------------------ */

static size_t map_slot(const rl_index_map *m, uintptr_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 17) & (m->capacity - 1);
}

static rl_index_map_entry *map_find(const rl_index_map *m, uintptr_t key) {
    if (m->capacity == 0) return NULL;
    for (size_t i = map_slot(m, key);; i = (i + 1) & (m->capacity - 1)) {
        rl_index_map_entry *e = &m->entries[i];
        if (e->key == 0 || e->key == key) return e;
    }
}

bool rl_index_map_reserve(rl_index_map *m, size_t count) {
    if (count * 2 <= m->capacity) return true;
    size_t cap = rl_grown_capacity(m->capacity, count * 2, 8);
    rl_index_map_entry *grown = calloc(cap, sizeof *grown);
    if (!grown) return false;
    rl_index_map old = *m;
    m->entries = grown;
    m->capacity = cap;
    for (size_t i = 0; i < old.capacity; i++)
        if (old.entries[i].key) *map_find(m, old.entries[i].key) = old.entries[i];
    free(old.entries);
    return true;
}

bool rl_index_map_put(rl_index_map *m, uintptr_t key, uint32_t value) {
    rl_index_map_entry *e = map_find(m, key);
    if (e && e->key) {
        e->value = value;
        return true;
    }
    if (!rl_index_map_reserve(m, m->count + 1)) return false;
    e = map_find(m, key);
    *e = (rl_index_map_entry){key, value};
    m->count++;
    return true;
}

long rl_index_map_get(const rl_index_map *m, uintptr_t key) {
    const rl_index_map_entry *e = map_find(m, key);
    return e && e->key ? (long)e->value : -1;
}

void rl_index_map_delete(rl_index_map *m, uintptr_t key) {
    rl_index_map_entry *e = map_find(m, key);
    if (!e || !e->key) return;
    size_t mask = m->capacity - 1;
    size_t hole = (size_t)(e - m->entries);
    m->entries[hole].key = 0;
    m->count--;
    /* Backward shift, as for the item sets' table. */
    for (size_t i = (hole + 1) & mask; m->entries[i].key; i = (i + 1) & mask) {
        size_t home = map_slot(m, m->entries[i].key);
        bool movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
        if (movable) {
            m->entries[hole] = m->entries[i];
            m->entries[i].key = 0;
            hole = i;
        }
    }
}

void rl_index_map_free(rl_index_map *m) {
    free(m->entries);
    memset(m, 0, sizeof *m);
}
