/*
 * rl_description.h: what rl_description.c lends the rest of the core. Included by
 * rl_internal.h after the core's types (it uses them); "_locked": the
 * caller holds the loop's lock.
 */
#ifndef RL_DESCRIPTION_H
#define RL_DESCRIPTION_H

/* Descriptions of the parts of a loop. */
char *rl_description_of_source(const rl_object *obj);
char *rl_description_of_observer(const rl_object *obj);
char *rl_description_of_timer(const rl_object *obj);
char *rl_description_of_loop(const rl_object *obj);

#endif
