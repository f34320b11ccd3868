/*
 * bl_node_queue.h: W4's perform queue for the peers that have none of their
 * own (libev, libuv): what their users write by hand, a mutex-protected list
 * of malloc'd nodes, drained by an idle watcher. Header-only, so that each
 * peer's W4 inlines it as it did when it was written into each peer.
 */
#ifndef BL_NODE_QUEUE_H
#define BL_NODE_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct bl_node {
    void (*fn)(void *);
    void *info;
    struct bl_node *next;
} bl_node;
typedef struct {
    pthread_mutex_t lock;
    bl_node *head, *tail;
} bl_node_queue;
#define BL_NODE_QUEUE_INIT                                                                                             \
    { PTHREAD_MUTEX_INITIALIZER, NULL, NULL }

/* Queues fn(info); true when the queue was empty (the idle watcher may need
   starting). */
static inline bool bl_node_queue_push(bl_node_queue *q, void (*fn)(void *), void *info) {
    bl_node *nd = malloc(sizeof *nd);
    nd->fn = fn;
    nd->info = info;
    nd->next = NULL;
    pthread_mutex_lock(&q->lock);
    bool was_empty = q->head == NULL;
    if (q->tail) q->tail->next = nd;
    else q->head = nd;
    q->tail = nd;
    pthread_mutex_unlock(&q->lock);
    return was_empty;
}

/* Takes every queued node, in order. */
static inline bl_node *bl_node_queue_take(bl_node_queue *q) {
    pthread_mutex_lock(&q->lock);
    bl_node *list = q->head;
    q->head = q->tail = NULL;
    pthread_mutex_unlock(&q->lock);
    return list;
}

/* Calls and frees the nodes taken; true when more were queued meanwhile. */
static inline bool bl_node_queue_run(bl_node_queue *q, bl_node *list) {
    while (list) {
        bl_node *next = list->next;
        list->fn(list->info);
        free(list);
        list = next;
    }
    pthread_mutex_lock(&q->lock);
    bool more = q->head != NULL;
    pthread_mutex_unlock(&q->lock);
    return more;
}

#endif
