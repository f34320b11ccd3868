/*
 * rl_cf_context.h: contexts typed as CF types them (CRunLoopCFTypes.h). Such
 * a context is stored as the RL context it mirrors, field for field, with
 * RL_CONTEXT_CF_TYPED set in its version: its copyDescription returns a
 * string object and a version-0 source's schedule and cancel take the mode
 * as one. Whoever calls those callbacks goes through the two functions
 * below, which read the flag; everything else only masks it off.
 */
#ifndef RL_CF_CONTEXT_H
#define RL_CF_CONTEXT_H

#include <stdbool.h>
#include "CRunLoop.h"

#define RL_CONTEXT_CF_TYPED ((RLIndex)1 << 30)

/* The version the caller gave, without the flag. */
static inline RLIndex rl_context_version(RLIndex version) {
    return version & ~RL_CONTEXT_CF_TYPED;
}
static inline bool rl_context_is_cf_typed(RLIndex version) {
    return (version & RL_CONTEXT_CF_TYPED) != 0;
}

/* The text a context's copyDescription gives for info, malloc'd (the
   caller frees it); NULL when there is no copyDescription or it gave
   nothing. A CF-typed one's string is read and released here. */
char *rl_context_copy_description(RLIndex version, char *(*copy)(const void *info), const void *info);

/* Calls a version-0 source's schedule or cancel callback: with the mode's
   name, or for a CF-typed context with a string of it made for the call
   (NULL if that cannot be made) and released after. */
void rl_context_call_with_mode(RLIndex version, void (*callback)(void *info, RLRunLoopRef rl, RLRunLoopMode mode),
                               void *info, RLRunLoopRef rl, RLRunLoopMode mode);

/* Whether `allocator` is one of the library's (NULL included); prints, for
   `function`, why another is refused. */
bool rl_cf_allocator_accepted(const void *allocator, const char *function);

#endif
