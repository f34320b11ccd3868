/*
 * rl_callback_list.c: the schedule and cancel callouts of version-0 sources,
 * collected under a loop's lock and run after it.
 */
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

static rl_pending_callback *callback_entries(rl_callback_list *list) {
    return list->items ? list->items : list->small;
}

bool rl_callback_list_reserve(rl_callback_list *list, size_t count) {
    size_t room = list->items ? list->capacity : RL_CALLBACKS_INLINE;
    if (count <= room) return true;
    size_t cap = rl_grown_capacity(room, count, RL_CALLBACKS_INLINE);
    rl_pending_callback *grown = realloc(list->items, cap * sizeof *grown);
    if (!grown) return false;
    if (!list->items) memcpy(grown, list->small, list->count * sizeof *grown);
    list->items = grown;
    list->capacity = cap;
    return true;
}

/* The caller made room (rl_callback_list_reserve). */
void rl_callback_list_add(rl_callback_list *list, rl_mode *m, RLRunLoopSourceRef source) {
    if (!rl_callback_list_reserve(list, list->count + 1)) return; /* not reached: room was made */
    RLRetain(source);
    callback_entries(list)[list->count++] = (rl_pending_callback){m, source};
}

static void run_callbacks(RLRunLoopRef rl, rl_callback_list *list, bool schedule) {
    rl_pending_callback *entries = callback_entries(list);
    for (size_t i = 0; i < list->count; i++) {
        RLRunLoopSourceRef s = entries[i].source;
        RLRunLoopSourceContext *c = &s->context.v0;
        if (schedule && c->schedule)
            rl_context_call_with_mode(c->version, c->schedule, c->info, rl, entries[i].mode->name);
        if (!schedule && c->cancel)
            rl_context_call_with_mode(c->version, c->cancel, c->info, rl, entries[i].mode->name);
        RLRelease(s);
    }
    free(list->items);
    list->items = NULL;
    list->count = list->capacity = 0;
}

void rl_callback_list_run_schedule(RLRunLoopRef rl, rl_callback_list *list) {
    run_callbacks(rl, list, true);
}

void rl_callback_list_run_cancel(RLRunLoopRef rl, rl_callback_list *list) {
    run_callbacks(rl, list, false);
}
