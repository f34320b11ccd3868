/*
 * rl_description.c: RLCopyDescription's text for loops and their items, laid
 * out like CF's dump of `po [NSRunLoop currentRunLoop]`: the loop, its common
 * modes and items, then every mode with its sources0, sources1, observers and
 * timers (with next fire dates).
 *
 * A loop's description holds the loop's lock only to take a snapshot: the
 * loop's and each mode's fields, and every item, retained. The text is
 * written afterwards, unlocked, from the snapshot and the items themselves
 * (what it prints of an item is fixed at creation, atomic, or read under the
 * item's own lock). So a description of a big loop keeps neither the loop's
 * thread nor other callers waiting while it formats, and user copyDescription
 * callbacks run with no lock held (they may take their time, or call into
 * the loop).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

static const char *yes_no(bool b) {
    return b ? "Yes" : "No";
}

static void print_info(FILE *out, RLIndex version, char *(*copy)(const void *), const void *info) {
    if (copy && info) {
        char *text = rl_context_copy_description(version, copy, info);
        if (text) {
            fprintf(out, "%s", text);
            free(text);
            return;
        }
    }
    fprintf(out, "%p", info);
}

static void print_source(FILE *out, RLRunLoopSourceRef s) {
    fprintf(out, "<RLRunLoopSource %p [%s]>{signalled = %s, valid = %s, order = %ld, context = ", (void *)s,
            s->version == 0 ? "version 0" : "version 1", yes_no(atomic_load(&s->signalled)),
            yes_no(atomic_load(&s->valid)), s->order);
    if (s->version == 0) {
        fprintf(out, "<RLRunLoopSource context>{version = 0, info = ");
        print_info(out, s->context.v0.version, s->context.v0.copyDescription, s->context.v0.info);
        fprintf(out, ", callout = %p}}", (void *)(uintptr_t)s->context.v0.perform);
    } else {
        fprintf(out, "<RLRunLoopSource context>{version = 1, info = ");
        print_info(out, s->context.v1.version, s->context.v1.copyDescription, s->context.v1.info);
        fprintf(out, ", callout = %p}}", (void *)(uintptr_t)s->context.v1.perform);
    }
}

static void print_activities(FILE *out, RLOptionFlags a) {
    if (a == kRLRunLoopAllActivities) {
        fprintf(out, "AllActivities");
        return;
    }
    static const struct {
        RLOptionFlags bit;
        const char *name;
    } names[] = {{kRLRunLoopEntry, "Entry"},
                 {kRLRunLoopBeforeTimers, "BeforeTimers"},
                 {kRLRunLoopBeforeSources, "BeforeSources"},
                 {kRLRunLoopBeforeWaiting, "BeforeWaiting"},
                 {kRLRunLoopAfterWaiting, "AfterWaiting"},
                 {kRLRunLoopExit, "Exit"}};
    bool first = true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(a & names[i].bit)) continue;
        fprintf(out, "%s%s", first ? "" : " | ", names[i].name);
        first = false;
    }
    if (first) fprintf(out, "0x%lx", a);
}

static void print_observer(FILE *out, RLRunLoopObserverRef o) {
    fprintf(out, "<RLRunLoopObserver %p [%#lx]>{valid = %s, activities = ", (void *)o, o->activities,
            yes_no(atomic_load(&o->valid)));
    print_activities(out, o->activities);
    fprintf(out, ", repeats = %s, order = %ld, callout = %p, context = ", yes_no(o->repeats), o->order,
            (void *)(uintptr_t)o->callout);
    print_info(out, o->context.version, o->context.copyDescription, o->context.info);
    fprintf(out, "}");
}

static void print_timer(FILE *out, RLRunLoopTimerRef t) {
    rl_item_lock_acquire(&t->lock);
    bool firing = t->firing;
    RLAbsoluteTime date = t->fire_date;
    RLTimeInterval tolerance = rl_timer_tolerance(t);
    /* Its loop is alive while the timer names it (under the timer's lock),
       and a manual loop's time is read without the loop's lock. */
    RLAbsoluteTime now = t->rl ? rl_loop_date_now(t->rl) : RLAbsoluteTimeGetCurrent();
    rl_item_lock_release(&t->lock);
    /* Order and context functions live in the timer's extra part, if made
       (read here, not through rl_timer.c: a timer's class names this file). */
    const rl_timer_extra *x = rl_timer_extra_of(t);
    fprintf(out,
            "<RLRunLoopTimer %p>{valid = %s, firing = %s, interval = %g, tolerance = %g, "
            "next fire date = %.6f (%+.6f s from now), order = %ld, callout = %p, context = ",
            (void *)t, yes_no(atomic_load(&t->valid)), yes_no(firing), rl_timer_interval(t), tolerance, date,
            date - now, x ? x->order : 0, (void *)(uintptr_t)t->callout);
    print_info(out, x ? x->context_version : 0, x ? x->copy_description : NULL, t->info);
    fprintf(out, "}");
}

static void print_source_item(FILE *out, const void *item) {
    print_source(out, (RLRunLoopSourceRef)item);
}
static void print_observer_item(FILE *out, const void *item) {
    print_observer(out, (RLRunLoopObserverRef)item);
}
static void print_timer_item(FILE *out, const void *item) {
    print_timer(out, (RLRunLoopTimerRef)item);
}

/* ---- a loop's snapshot ---------------------------------------------------- */

typedef struct {
    const void *item; /* retained */
    int fd;           /* a version-1 source: the number registered */
} item_copy;

typedef struct {
    const rl_mode *mode; /* a loop's modes live as long as the loop */
    const char *name;
    bool is_common, armed;
    size_t queued_blocks;
    size_t timer_count; /* memberships, counting firing timers (in no heap) */
    int64_t next_deadline;
    /* How many of the snapshot's items are the mode's, in this order. */
    size_t sources0, sources1, observers, timers;
} mode_copy;

typedef struct {
    int wake_fd, epoll_fd, timer_fd;
    bool stopped, sleeping, is_main, dead;
    const char *current_mode;
    int64_t now;             /* the loop's time: real, or its manual clock's */
    RLAbsoluteTime date_now; /* the same as a date */
    bool manual;             /* on a manual clock, whose time is: */
    RLAbsoluteTime clock_time;
    size_t common_sources, common_observers, common_timers;
    mode_copy *modes;
    size_t mode_count;
    item_copy *items;
    size_t item_count;
} loop_copy;

static size_t items_in(RLRunLoopRef rl) {
    size_t n = rl->common_sources.count + rl->common_observers.count + rl->common_timers.count;
    for (size_t i = 0; i < rl->mode_count; i++) {
        const rl_mode *m = rl->modes[i];
        n += m->sources0.count + m->v1_count + m->observers.count + m->timers.count;
    }
    return n;
}

static void keep(loop_copy *c, const void *item, int fd) {
    RLRetain(item);
    c->items[c->item_count++] = (item_copy){item, fd};
}

static size_t keep_set(loop_copy *c, const rl_item_set *set) {
    RL_ITEM_SET_FOREACH(node, set) keep(c, node->item, -1);
    return set->count;
}

static void copy_mode(loop_copy *c, RLRunLoopRef rl, rl_mode *m, mode_copy *out) {
    *out = (mode_copy){.mode = m,
                       .name = m->name,
                       .is_common = m->is_common,
                       .armed = rl->wait_set.armed_mode == m,
                       .queued_blocks = m->pending_blocks + (m->is_common ? rl->blocks.pending_common : 0),
                       .timer_count = m->timer_count,
                       .next_deadline = rl_mode_next_deadline(m)};
    out->sources0 = keep_set(c, &m->sources0);
    for (uint32_t i = 0; i < m->v1_count; i++) {
        const rl_v1_reg *r = &rl->wait_set.regs[m->v1[i]];
        keep(c, r->source, r->fd);
    }
    out->sources1 = m->v1_count;
    out->observers = keep_set(c, &m->observers);
    for (size_t i = 0; i < m->timers.count; i++) {
        const rl_timer_slot *slot = rl_heap_item(&m->timers, m->timers.entries[i].handle);
        keep(c, rl_timer_slot_timer(slot), -1);
    }
    out->timers = m->timers.count;
}

/* Under the loop's lock; false when out of memory (nothing kept). */
static bool copy_loop(RLRunLoopRef rl, loop_copy *c) {
    rl_loop_lock(rl);
    *c = (loop_copy){.wake_fd = rl->wait_set.wake_fd,
                     .epoll_fd = rl->wait_set.epoll_fd,
                     .timer_fd = rl->wait.timer_fd,
                     .stopped = rl->current_run && (rl->current_run->stopped & RL_RUN_STOP_ASKED),
                     .sleeping = atomic_load(&rl->wait.sleeping),
                     .is_main = rl->is_main,
                     .dead = rl->dead,
                     .current_mode = rl->current_run ? rl->current_run->mode->name : NULL,
                     .now = rl_loop_now(rl),
                     .date_now = rl_loop_date_now(rl)};
    rl_manual_clock *clock = rl_loop_manual_clock(rl);
    if (clock) {
        c->manual = true;
        c->clock_time = (double)atomic_load(&clock->target) / 1e9;
    }
    size_t items = items_in(rl);
    c->modes = malloc((rl->mode_count ? rl->mode_count : 1) * sizeof *c->modes);
    c->items = malloc((items ? items : 1) * sizeof *c->items);
    if (!c->modes || !c->items) {
        rl_loop_unlock(rl);
        free(c->modes);
        free(c->items);
        return false;
    }
    c->common_sources = keep_set(c, &rl->common_sources);
    c->common_observers = keep_set(c, &rl->common_observers);
    c->common_timers = keep_set(c, &rl->common_timers);
    for (size_t i = 0; i < rl->mode_count; i++) copy_mode(c, rl, rl->modes[i], &c->modes[i]);
    c->mode_count = rl->mode_count;
    rl_loop_unlock(rl);
    return true;
}

/* Unlocked: the last reference to an item may be the snapshot's. */
static void drop_copy(loop_copy *c) {
    for (size_t i = 0; i < c->item_count; i++) RLRelease(c->items[i].item);
    free(c->items);
    free(c->modes);
}

/* ---- its text -------------------------------------------------------------- */

/* Prints `count` items from the snapshot's cursor, one per line, with
   `prefix` and, if `numbered`, their index. */
static void print_items(FILE *out, const loop_copy *c, size_t *at, size_t count, void (*print)(FILE *, const void *),
                        const char *prefix, bool numbered) {
    for (size_t i = 0; i < count; i++, (*at)++) {
        if (numbered) fprintf(out, "%s%zu : ", prefix, i);
        else fprintf(out, "%s", prefix);
        print(out, c->items[*at].item);
        fprintf(out, "\n");
    }
}

static void print_mode(FILE *out, const loop_copy *c, const mode_copy *m, size_t *at) {
    fprintf(out, "\t<RLRunLoopMode %p>{name = %s, common = %s, armed = %s, queued blocks = %zu,\n",
            (const void *)m->mode, m->name, yes_no(m->is_common), yes_no(m->armed), m->queued_blocks);
    fprintf(out, "\tsources0 = %s{\n", m->sources0 ? "" : "(null) ");
    print_items(out, c, at, m->sources0, print_source_item, "\t\t", true);
    fprintf(out, "\t},\n\tsources1 = %s{\n", m->sources1 ? "" : "(null) ");
    for (size_t i = 0; i < m->sources1; i++, (*at)++) {
        fprintf(out, "\t\t%zu : fd %d = ", i, c->items[*at].fd);
        print_source_item(out, c->items[*at].item);
        fprintf(out, "\n");
    }
    fprintf(out, "\t},\n\tobservers = %s(\n", m->observers ? "" : "(null) ");
    print_items(out, c, at, m->observers, print_observer_item, "\t\t", true);
    fprintf(out, "\t),\n\ttimers = %s(\n", m->timer_count ? "" : "(null) ");
    print_items(out, c, at, m->timers, print_timer_item, "\t\t", true);
    if (m->next_deadline == RL_NEVER) fprintf(out, "\t),\n\tcurrently %.6f (no deadline)\n\t},\n", c->date_now);
    else
        fprintf(out, "\t),\n\tcurrently %.6f (next deadline in %.6f s)\n\t},\n", c->date_now,
                (double)(m->next_deadline - c->now) * 1e-9);
}

/* The buffer is only complete once the stream is closed. */
static char *finish(FILE *out, char **buf) {
    fclose(out);
    return *buf;
}

static void print_loop(FILE *out, RLRunLoopRef rl, const loop_copy *c) {
    fprintf(out,
            "<RLRunLoop %p [%s]>{wakeup port = %d, port set = %d, timer port = %d, stopped = %s, sleeping = %s, main = "
            "%s, thread exited = %s,\n",
            (void *)rl, "linux", c->wake_fd, c->epoll_fd, c->timer_fd, yes_no(c->stopped), yes_no(c->sleeping),
            yes_no(c->is_main), yes_no(c->dead));
    fprintf(out, "current mode = %s,\n", c->current_mode ? c->current_mode : "(none)");
    if (c->manual) fprintf(out, "manual clock = {loop time = %.6f, clock time = %.6f},\n", c->date_now, c->clock_time);
    fprintf(out, "common modes = {\n");
    for (size_t i = 0, n = 0; i < c->mode_count; i++)
        if (c->modes[i].is_common) fprintf(out, "\t%zu : %s\n", n++, c->modes[i].name);
    fprintf(out, "},\ncommon mode items = {\n");
    size_t at = 0;
    print_items(out, c, &at, c->common_sources, print_source_item, "\t", false);
    print_items(out, c, &at, c->common_observers, print_observer_item, "\t", false);
    print_items(out, c, &at, c->common_timers, print_timer_item, "\t", false);
    fprintf(out, "},\nmodes = {\n");
    for (size_t i = 0; i < c->mode_count; i++) print_mode(out, c, &c->modes[i], &at);
    fprintf(out, "}}\n");
}

char *rl_description_of_loop(const rl_object *obj) {
    RLRunLoopRef rl = (RLRunLoopRef)obj;
    loop_copy c;
    if (!copy_loop(rl, &c)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (out) {
        print_loop(out, rl, &c);
        finish(out, &buf);
    }
    drop_copy(&c);
    return buf;
}

typedef void (*item_printer)(FILE *, const void *);

static char *describe_item(const void *item, void (*print)(FILE *, const void *)) {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) return NULL;
    print(out, item);
    return finish(out, &buf);
}

char *rl_description_of_source(const rl_object *obj) {
    return describe_item(obj, print_source_item);
}
char *rl_description_of_observer(const rl_object *obj) {
    return describe_item(obj, print_observer_item);
}
char *rl_description_of_timer(const rl_object *obj) {
    return describe_item(obj, print_timer_item);
}
