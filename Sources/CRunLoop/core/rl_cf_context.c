/*
 * rl_cf_context.c: calling the callbacks of contexts typed as CF types them
 * (rl_cf_context.h), and mode names as strings. The two mode names CF
 * defines are constant strings here, which the loop hands back for those
 * modes, so they compare equal by pointer as they do on macOS.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "rl_cf.h"

const char kRLCFRunLoopDefaultModeStorage[] = RLCF_CONSTANT_STRING_HEADER "kCFRunLoopDefaultMode";
const char kRLCFRunLoopCommonModesStorage[] = RLCF_CONSTANT_STRING_HEADER "kCFRunLoopCommonModes";

RLCFStringRef rl_cf_mode_string(const char *name) {
    if (!name) return NULL;
    if (strcmp(name, rl_cf_string_text(kRLCFRunLoopDefaultMode, NULL)) == 0) return kRLCFRunLoopDefaultMode;
    if (strcmp(name, rl_cf_string_text(kRLCFRunLoopCommonModes, NULL)) == 0) return kRLCFRunLoopCommonModes;
    return rl_cf_string_make(name, strlen(name));
}

/* The callbacks were stored as the RL types; they are called as what they
   are (through void (*)(void), the type any function pointer converts
   through without a warning). */
typedef RLCFStringRef (*cf_copy_description)(const void *info);
typedef void (*cf_mode_callback)(void *info, RLRunLoopRef rl, RLCFStringRef mode);

char *rl_context_copy_description(RLIndex version, char *(*copy)(const void *info), const void *info) {
    if (!copy) return NULL;
    if (!rl_context_is_cf_typed(version)) return copy(info);
    return rl_cf_take_text(((cf_copy_description)(void (*)(void))copy)(info));
}

void rl_context_call_with_mode(RLIndex version, void (*callback)(void *info, RLRunLoopRef rl, RLRunLoopMode mode),
                               void *info, RLRunLoopRef rl, RLRunLoopMode mode) {
    if (!rl_context_is_cf_typed(version)) {
        callback(info, rl, mode);
        return;
    }
    RLCFStringRef name = rl_cf_mode_string(mode);
    ((cf_mode_callback)(void (*)(void))callback)(info, rl, name);
    rl_cf_string_release(name);
}
