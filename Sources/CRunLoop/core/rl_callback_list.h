/*
 * rl_callback_list.h: schedule and cancel callouts of version-0 sources,
 * collected under a loop's lock and run after it (rl_callback_list.c).
 */
#ifndef RL_CALLBACK_LIST_H
#define RL_CALLBACK_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include "CRunLoop.h"

typedef struct rl_mode rl_mode;

/* Membership changes of one item in one mode; loop locked. */
typedef struct {
    rl_mode *mode;
    RLRunLoopSourceRef source;
} rl_pending_callback;
/* Schedule/cancel callouts owed, collected under the lock and run after it.
   The first entries live inline, so the usual single add or remove never
   allocates; an add reserves its entry before it changes anything (out of
   memory it fails whole), and a removal that finds no room runs the
   callouts owed so far (unlocking for them) rather than lose one. */
#define RL_CALLBACKS_INLINE 8
typedef struct {
    rl_pending_callback *items; /* NULL: the entries are in `small` */
    size_t count, capacity;     /* capacity of `items` */
    rl_pending_callback small[RL_CALLBACKS_INLINE];
} rl_callback_list;
bool rl_callback_list_reserve(rl_callback_list *list, size_t count);
void rl_callback_list_add(rl_callback_list *list, rl_mode *m, RLRunLoopSourceRef source);
void rl_callback_list_run_schedule(RLRunLoopRef rl, rl_callback_list *list);
void rl_callback_list_run_cancel(RLRunLoopRef rl, rl_callback_list *list);

#endif
