/*
 * rl_description.c: RLCopyDescription's text for loops and their items, laid
 * out like CF's dump of `po [NSRunLoop currentRunLoop]`: the loop, its common
 * modes and items, then every mode with its sources0, sources1, observers and
 * timers (with next fire dates). Reads everything under the loop's lock.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_internal.h"

static const char *yes_no(bool b) {
    return b ? "Yes" : "No";
}

static void print_info(FILE *out, char *(*copy)(const void *), const void *info) {
    if (copy && info) {
        char *text = copy(info);
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
        print_info(out, s->context.v0.copyDescription, s->context.v0.info);
        fprintf(out, ", callout = %p}}", (void *)(uintptr_t)s->context.v0.perform);
    } else {
        fprintf(out, "<RLRunLoopSource context>{version = 1, info = ");
        print_info(out, s->context.v1.copyDescription, s->context.v1.info);
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
    print_info(out, o->context.copyDescription, o->context.info);
    fprintf(out, "}");
}

static void print_timer(FILE *out, RLRunLoopTimerRef t) {
    rl_item_lock_acquire(&t->lock);
    bool firing = t->firing;
    RLAbsoluteTime date = t->fire_date;
    RLTimeInterval tolerance = rl_timer_tolerance(t);
    rl_item_lock_release(&t->lock);
    /* Order and context functions live in the timer's extra part, if made
       (read here, not through rl_timer.c: a timer's class names this file). */
    const rl_timer_extra *x = rl_timer_extra_of(t);
    fprintf(out,
            "<RLRunLoopTimer %p>{valid = %s, firing = %s, interval = %g, tolerance = %g, "
            "next fire date = %.6f (%+.6f s from now), order = %ld, callout = %p, context = ",
            (void *)t, yes_no(atomic_load(&t->valid)), yes_no(firing), rl_timer_interval(t), tolerance, date,
            date - (t->rl ? rl_loop_date_now(t->rl) : RLAbsoluteTimeGetCurrent()), x ? x->order : 0,
            (void *)(uintptr_t)t->callout);
    print_info(out, x ? x->copy_description : NULL, t->info);
    fprintf(out, "}");
}

static void print_mode(FILE *out, RLRunLoopRef rl, rl_mode *m) {
    fprintf(out, "\t<RLRunLoopMode %p>{name = %s, common = %s, armed = %s, queued blocks = %zu,\n", (void *)m, m->name,
            yes_no(m->is_common), yes_no(rl->armed_mode == m),
            m->pending_blocks + (m->is_common ? rl->pending_common_blocks : 0));
    fprintf(out, "\tsources0 = %s{\n", m->sources0.count ? "" : "(null) ");
    size_t index = 0;
    RL_ITEM_SET_FOREACH(node, &m->sources0) {
        fprintf(out, "\t\t%zu : ", index++);
        print_source(out, node->item);
        fprintf(out, "\n");
    }
    fprintf(out, "\t},\n\tsources1 = %s{\n", m->v1_count ? "" : "(null) ");
    for (uint32_t i = 0; i < m->v1_count; i++) {
        const rl_v1_reg *r = &rl->regs[m->v1[i]];
        fprintf(out, "\t\t%u : fd %d = ", i, r->fd);
        print_source(out, r->source);
        fprintf(out, "\n");
    }
    fprintf(out, "\t},\n\tobservers = %s(\n", m->observers.count ? "" : "(null) ");
    index = 0;
    RL_ITEM_SET_FOREACH(node, &m->observers) {
        fprintf(out, "\t\t%zu : ", index++);
        print_observer(out, node->item);
        fprintf(out, "\n");
    }
    fprintf(out, "\t),\n\ttimers = %s(\n", m->timer_count ? "" : "(null) ");
    for (size_t i = 0; i < m->timers.count; i++) {
        fprintf(out, "\t\t%zu : ", i);
        const rl_timer_slot *slot = rl_heap_item(&m->timers, m->timers.entries[i].handle);
        print_timer(out, rl_timer_slot_timer(slot));
        fprintf(out, "\n");
    }
    int64_t next = rl_mode_next_deadline(m);
    if (next == RL_NEVER) fprintf(out, "\t),\n\tcurrently %.6f (no deadline)\n\t},\n", rl_loop_date_now(rl));
    else
        fprintf(out, "\t),\n\tcurrently %.6f (next deadline in %.6f s)\n\t},\n", rl_loop_date_now(rl),
                (double)(next - rl_loop_now(rl)) * 1e-9);
}

/* The buffer is only complete once the stream is closed. */
static char *finish(FILE *out, char **buf) {
    fclose(out);
    return *buf;
}

char *rl_loop_copy_description(const rl_object *obj) {
    RLRunLoopRef rl = (RLRunLoopRef)obj;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) return NULL;
    rl_loop_lock(rl);
    fprintf(out,
            "<RLRunLoop %p [%s]>{wakeup port = %d, port set = %d, timer port = %d, stopped = %s, sleeping = %s, main = "
            "%s, thread exited = %s,\n",
            (void *)rl, "linux", rl->wake_fd, rl->epoll_fd, rl->timer_fd,
            yes_no(rl->current_run && (rl->current_run->stopped & RL_RUN_STOP_ASKED)),
            yes_no(atomic_load(&rl->sleeping)), yes_no(rl->is_main), yes_no(rl->dead));
    fprintf(out, "current mode = %s,\n", rl->current_run ? rl->current_run->mode->name : "(none)");
    rl_manual_clock *clock = rl_loop_manual_clock(rl);
    if (clock)
        fprintf(out, "manual clock = {loop time = %.6f, clock time = %.6f},\n", rl_loop_date_now(rl),
                (double)atomic_load(&clock->target) / 1e9);
    fprintf(out, "common modes = {\n");
    for (size_t i = 0, n = 0; i < rl->mode_count; i++)
        if (rl->modes[i]->is_common) fprintf(out, "\t%zu : %s\n", n++, rl->modes[i]->name);
    fprintf(out, "},\ncommon mode items = {\n");
    RL_ITEM_SET_FOREACH(node, &rl->common_sources) {
        fprintf(out, "\t");
        print_source(out, node->item);
        fprintf(out, "\n");
    }
    RL_ITEM_SET_FOREACH(node, &rl->common_observers) {
        fprintf(out, "\t");
        print_observer(out, node->item);
        fprintf(out, "\n");
    }
    RL_ITEM_SET_FOREACH(node, &rl->common_timers) {
        fprintf(out, "\t");
        print_timer(out, node->item);
        fprintf(out, "\n");
    }
    fprintf(out, "},\nmodes = {\n");
    for (size_t i = 0; i < rl->mode_count; i++) print_mode(out, rl, rl->modes[i]);
    fprintf(out, "}}\n");
    rl_loop_unlock(rl);
    return finish(out, &buf);
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

static void print_source_item(FILE *out, const void *item) {
    print_source(out, (RLRunLoopSourceRef)item);
}
static void print_observer_item(FILE *out, const void *item) {
    print_observer(out, (RLRunLoopObserverRef)item);
}
static void print_timer_item(FILE *out, const void *item) {
    print_timer(out, (RLRunLoopTimerRef)item);
}

char *rl_source_copy_description(const rl_object *obj) {
    return describe_item(obj, print_source_item);
}
char *rl_observer_copy_description(const rl_object *obj) {
    return describe_item(obj, print_observer_item);
}
char *rl_timer_copy_description(const rl_object *obj) {
    return describe_item(obj, print_timer_item);
}
