/*
 * rl_cf.h: what the core's CF object files (rl_cf_*.c, rl_string.c) share:
 * the classes and layouts of strings, arrays, data and allocators, and the
 * type numbers RLCFGetTypeID answers.
 */
#ifndef RL_CF_H
#define RL_CF_H

#include <stdbool.h>
#include <stddef.h>
#include "CRunLoopCFTypes.h"
#include "rl_extras.h"

/* Type numbers; 0 is no type. */
enum {
    RL_CF_TYPE_NONE,
    RL_CF_TYPE_ALLOCATOR,
    RL_CF_TYPE_STRING,
    RL_CF_TYPE_ARRAY,
    RL_CF_TYPE_DATA,
    RL_CF_TYPE_RUN_LOOP,
    RL_CF_TYPE_SOURCE,
    RL_CF_TYPE_OBSERVER,
    RL_CF_TYPE_TIMER,
    RL_CF_TYPE_FILE_DESCRIPTOR,
    RL_CF_TYPE_MESSAGE_PORT,
    RL_CF_TYPE_SIGNAL_WATCHER,
    RL_CF_TYPE_PERFORM_REQUEST,
    RL_CF_TYPE_THREAD,
    RL_CF_TYPE_HANG_MONITOR,
    RL_CF_TYPE_IDLE_QUEUE,
    RL_CF_TYPE_SOCKET,
    RL_CF_TYPE_CF_MESSAGE_PORT,
    RL_CF_TYPE_COUNT
};

extern const rl_class rl_cf_string_class;
extern const rl_class rl_cf_array_class;
extern const rl_class rl_cf_data_class;
extern const rl_class rl_cf_allocator_class;

/* ---- strings (rl_string.c) ---- */

/* Whether cf (not NULL) is a constant string (RLCFSTR and the like). */
bool rl_cf_is_constant_string(const void *cf);
/* Whether cf (not NULL) is a string, constant or not. */
bool rl_cf_is_string(const void *cf);
/* A string's text and its size in bytes (without the NUL). */
const char *rl_cf_string_text(RLCFStringRef s, size_t *size);
/* A new string of `size` bytes of text, taken as they are (not checked as
   UTF-8; no NUL among them). NULL out of memory. */
RLCFStringRef rl_cf_string_make(const char *text, size_t size);
/* The same from a malloc'd NUL-terminated text, which this frees (also when
   it fails). NULL text: NULL. */
RLCFStringRef rl_cf_string_adopt(char *text);
bool rl_cf_string_equal(RLCFStringRef a, RLCFStringRef b);
RLCFHashCode rl_cf_string_hash(RLCFStringRef s);
/* `<CFString 0x...>{contents = "..."}`, malloc'd. */
char *rl_cf_string_copy_description(RLCFStringRef s);
/* Drops a reference to a string (none to drop for a constant one). */
void rl_cf_string_release(RLCFStringRef s);
/* The text of the string a description callback returned, malloc'd, and
   the string released. NULL for NULL, a non-string, or out of memory. */
char *rl_cf_take_text(RLCFStringRef s);

/* ---- modes as strings (rl_cf_context.c) ---- */

/* A mode name as a string: the constants for the default and common modes,
   a new string for any other; NULL for NULL or out of memory. */
RLCFStringRef rl_cf_mode_string(const char *name);

/* ---- allocators (rl_cf_allocator.c) ---- */

/* Whether cf (not NULL) is one of the allocator objects. */
bool rl_cf_is_allocator(const void *cf);
/* Whether an object may be made with `allocator`: one of the library's
   (another is refused, saying so for `function`) that allocates. */
static inline bool rl_cf_can_allocate(RLCFAllocatorRef allocator, const char *function) {
    return rl_cf_allocator_accepted(allocator, function) && allocator != kRLCFAllocatorNull;
}

/* ---- arrays and data (rl_cf_array.c, rl_cf_data.c) ---- */
bool rl_cf_array_equal(RLCFArrayRef a, RLCFArrayRef b);
bool rl_cf_data_equal(RLCFDataRef a, RLCFDataRef b);
RLCFHashCode rl_cf_data_hash(RLCFDataRef d);

#endif
