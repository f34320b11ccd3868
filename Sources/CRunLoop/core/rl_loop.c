/*
 * rl_loop.c: run loops themselves: one per thread, made on first use and torn
 * down at thread exit; the main thread's loop; wake-up and stop. The lock
 * is rl_lock.c's, the per-depth scratch space rl_scratch.c's, the mode
 * names rl_mode.c's, the sleep and the wake-up rl_wait.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rl_internal.h"
#include "rl_signal_inbox.h"
#include "rl_main_queue.h"

static pthread_key_t current_loop_key;
static atomic_bool current_loop_key_made;
static pthread_mutex_t current_loop_key_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(RLRunLoopRef) main_loop;
static pthread_t main_thread;
static bool main_thread_known;

static void finalize_loop(rl_object *obj);
const rl_class rl_loop_class = {"RLRunLoop", finalize_loop, rl_description_of_loop};

__attribute__((constructor)) static void remember_main_thread(void) {
    if (rl_on_process_main_thread()) {
        main_thread = pthread_self();
        main_thread_known = true;
    }
}

static RLRunLoopRef create_loop(pthread_t thread) {
    RLRunLoopRef rl = calloc(1, sizeof *rl);
    if (!rl) return NULL;
    /* With default attributes it fails only for lack of resources. */
    if (pthread_mutex_init(&rl->lock, NULL) != 0) {
        free(rl);
        return NULL;
    }
    if (!rl_wait_set_open(rl)) {
        pthread_mutex_destroy(&rl->lock);
        free(rl);
        return NULL;
    }
    rl_object_init(&rl->base, &rl_loop_class);
    rl->thread = thread;
    rl->wait.multiprocessor = sysconf(_SC_NPROCESSORS_ONLN) > 1;
    rl->wait.last_sleep_ns = RL_NEVER;
    rl->timers.slack_ns = -1;
    atomic_init(&rl->wait.sleeping, false);
    atomic_init(&rl->wait.wake_pending, false);
    /* The default mode is modes[0] for the loop's whole life (rl_mode_find
       relies on it), and always common. */
    rl_mode *def = rl_mode_find_or_create(rl, kRLRunLoopDefaultMode);
    if (!def) {
        RLRelease(rl);
        return NULL;
    }
    def->is_common = true;
    /* The first run's scratch space: its passes then never need memory. */
    if (!rl_scratch_reserve(rl, 1)) {
        RLRelease(rl);
        return NULL;
    }
    return rl;
}

static void finalize_loop(rl_object *obj) {
    RLRunLoopRef rl = (RLRunLoopRef)obj;
    rl_block_queue left = rl_blocks_take_all(rl);
    rl_blocks_dispose(&left);
    rl_blocks_free(rl);
    rl_modes_free(rl);
    rl_scratch_free(rl);
    rl_signal_inbox_free(rl);
    rl_item_set_free(&rl->common_sources);
    rl_item_set_free(&rl->common_observers);
    rl_item_set_free(&rl->common_timers);
    rl_wait_set_close(rl);
    rl_clock_free(rl);
    pthread_mutex_destroy(&rl->lock);
    free(rl);
}

/* Thread exit: every item leaves the loop, queued work is dropped. */
static void tear_down_loop(void *value) {
    RLRunLoopRef rl = value;
    rl_callback_list cancelled = {0};
    rl_loop_lock(rl);
    rl->dead = true;
    rl_loop_remove_all_items_locked(rl, &cancelled);
    rl_block_queue dropped = rl_blocks_take_all(rl);
    rl_loop_unlock(rl);
    rl_blocks_dispose(&dropped);
    rl_callback_list_run_cancel(rl, &cancelled);
    if (!rl->is_main) RLRelease(rl); /* the main loop lives as long as the process */
}

/* False while the process has no thread-specific key left for the library
   (EAGAIN, or ENOMEM): no loop can be current then, and the key is tried
   again at the next call. */
static bool have_current_loop_key(void) {
    if (atomic_load_explicit(&current_loop_key_made, memory_order_acquire)) return true;
    pthread_mutex_lock(&current_loop_key_lock);
    bool made = atomic_load_explicit(&current_loop_key_made, memory_order_relaxed) ||
                pthread_key_create(&current_loop_key, tear_down_loop) == 0;
    atomic_store_explicit(&current_loop_key_made, made, memory_order_release);
    pthread_mutex_unlock(&current_loop_key_lock);
    return made;
}

/* The main loop is made on first use; a failure (no memory or descriptors)
   leaves it unmade, so a later call tries again. */
static pthread_mutex_t main_loop_lock = PTHREAD_MUTEX_INITIALIZER;

RLRunLoopRef RLRunLoopGetMain(void) {
    RLRunLoopRef rl = atomic_load_explicit(&main_loop, memory_order_acquire);
    if (rl) return rl;
    pthread_mutex_lock(&main_loop_lock);
    rl = atomic_load_explicit(&main_loop, memory_order_relaxed);
    if (!rl && (rl = create_loop(main_thread_known ? main_thread : pthread_self())) != NULL) {
        rl->is_main = true;
        rl->main_queue_attached = rl_main_queue_install(rl);
        rl->main_queue_next_try_ns = rl_mono_now() + 1000000000;
        atomic_store_explicit(&main_loop, rl, memory_order_release);
    }
    pthread_mutex_unlock(&main_loop_lock);
    return rl;
}

RLRunLoopRef rl_loop_current_if_made(void) {
    return have_current_loop_key() ? pthread_getspecific(current_loop_key) : NULL;
}

RLRunLoopRef RLRunLoopGetCurrent(void) {
    if (!have_current_loop_key()) return NULL; /* retried next call */
    RLRunLoopRef rl = pthread_getspecific(current_loop_key);
    if (rl) return rl;
    bool is_main = main_thread_known ? pthread_equal(pthread_self(), main_thread) : rl_on_process_main_thread();
    if (is_main) {
        rl = RLRunLoopGetMain();
        if (!rl) return NULL;
        rl->thread = pthread_self();
        if (pthread_setspecific(current_loop_key, rl) != 0) return NULL; /* retried next call */
        return rl;
    }
    rl = create_loop(pthread_self());
    if (!rl) return NULL;
    if (pthread_setspecific(current_loop_key, rl) != 0) {
        /* Out of memory for the thread's key data: the loop would never be
           torn down; give it up (nothing has seen it yet). */
        RLRelease(rl);
        return NULL;
    }
    return rl;
}

/* ---- stop, state ---------------------------------------------------------- */

void RLRunLoopStop(RLRunLoopRef rl) {
    if (!rl) return;
    rl_loop_lock(rl);
    bool running = rl->current_run != NULL;
    if (running) rl->current_run->stopped |= RL_RUN_STOP_ASKED;
    rl_loop_unlock(rl);
    if (running) RLRunLoopWakeUp(rl);
}

char *RLRunLoopCopyCurrentMode(RLRunLoopRef rl) {
    if (!rl) return NULL;
    rl_loop_lock(rl);
    char *name = rl->current_run ? strdup(rl->current_run->mode->name) : NULL;
    rl_loop_unlock(rl);
    return name;
}

char **RLRunLoopCopyAllModes(RLRunLoopRef rl) {
    if (!rl) return NULL;
    rl_loop_lock(rl);
    char **names = calloc(rl->mode_count + 1, sizeof *names);
    size_t copied = 0;
    while (names && copied < rl->mode_count && (names[copied] = strdup(rl->modes[copied]->name))) copied++;
    rl_loop_unlock(rl);
    if (names && copied < rl->mode_count) { /* out of memory: no list rather than a short one */
        while (copied) free(names[--copied]);
        free(names);
        names = NULL;
    }
    return names;
}

void RLRunLoopAddCommonMode(RLRunLoopRef rl, RLRunLoopMode mode) {
    if (!rl || !rl_mode_name_is_valid(mode) || rl_mode_name_is_common(mode)) return;
    rl_callback_list scheduled = {0};
    rl_loop_lock(rl);
    rl_mode *m = rl->dead ? NULL : rl_mode_find_or_create(rl, mode);
    if (m && !m->is_common) {
        m->is_common = true;
        m->common_incomplete = true;
        rl_loop_complete_common_mode_locked(rl, m, &scheduled);
    }
    rl_loop_unlock(rl);
    rl_callback_list_run_schedule(rl, &scheduled);
}

void rl_loop_complete_common_mode_locked(RLRunLoopRef rl, rl_mode *m, rl_callback_list *scheduled) {
    if (!m->is_common || !m->common_incomplete) return;
    bool complete = true;
    RL_ITEM_SET_FOREACH(node, &rl->common_sources) {
        rl_source_add_to_mode_locked(rl, m, node->item, scheduled);
        complete = complete && rl_source_in_mode_locked(rl, m, node->item);
    }
    RL_ITEM_SET_FOREACH(node, &rl->common_observers) {
        rl_observer_add_to_mode_locked(rl, m, node->item);
        complete = complete && rl_item_set_contains(&m->observers, node->item);
    }
    RL_ITEM_SET_FOREACH(node, &rl->common_timers) {
        rl_timer_add_to_mode_locked(rl, m, node->item);
        complete = complete && rl_timer_slot_for_mode(node->item, m);
    }
    m->common_incomplete = !complete;
}

/* The earliest of a mode's timers, as a deadline and its date: the heap's
   top, or a timer whose callout runs (CF keeps a firing timer in its modes'
   timer lists; its date is the one being fired, or what its callout set). */
typedef struct {
    int64_t deadline_ns;
    RLAbsoluteTime date;
} next_timer;

static void earliest_timer_of(const rl_mode *m, next_timer *best) {
    const rl_heap_entry *top = rl_heap_top(&m->timers);
    if (top && top->deadline_ns < best->deadline_ns) {
        best->deadline_ns = top->deadline_ns;
        best->date = rl_timer_slot_timer(rl_heap_item(&m->timers, top->handle))->fire_date;
    }
    for (uint32_t i = 0; i < m->firing_count; i++) {
        RLRunLoopTimerRef t = rl_timer_slot_timer(m->firing[i]);
        if (atomic_load(&t->valid) && t->fire_ns < best->deadline_ns) *best = (next_timer){t->fire_ns, t->fire_date};
    }
}

RLAbsoluteTime RLRunLoopGetNextTimerFireDate(RLRunLoopRef rl, RLRunLoopMode mode) {
    if (!rl || !rl_mode_name_is_valid(mode)) return 0;
    next_timer best = {RL_NEVER, 0};
    rl_loop_lock(rl);
    if (rl_mode_name_is_common(mode)) {
        for (size_t i = 0; i < rl->mode_count; i++)
            if (rl->modes[i]->is_common) earliest_timer_of(rl->modes[i], &best);
    } else {
        rl_mode *m = rl_mode_find(rl, mode);
        if (m) earliest_timer_of(m, &best);
    }
    rl_loop_unlock(rl);
    return best.date;
}

void rl_loop_remove_all_items_locked(RLRunLoopRef rl, rl_callback_list *cancelled) {
    while (rl->common_sources.count) rl_source_remove_common_locked(rl, rl_item_set_first(&rl->common_sources)->item);
    while (rl->common_observers.count) {
        RLRunLoopObserverRef o = rl_item_set_first(&rl->common_observers)->item;
        rl_item_set_remove(&rl->common_observers, o);
        rl_item_lock_acquire(&o->lock);
        if (--o->memberships == 0) o->rl = NULL;
        rl_item_lock_release(&o->lock);
        rl_loop_release_locked(rl, o);
    }
    while (rl->common_timers.count) {
        RLRunLoopTimerRef t = rl_item_set_first(&rl->common_timers)->item;
        rl_item_set_remove(&rl->common_timers, t);
        rl_item_lock_acquire(&t->lock);
        t->in_common = false;
        if (rl_timer_slot_count(t) == 0) t->rl = NULL;
        rl_item_lock_release(&t->lock);
        rl_loop_release_locked(rl, t);
    }
    for (size_t i = 0; i < rl->mode_count; i++) {
        rl_mode *m = rl->modes[i];
        while (m->sources0.count)
            rl_source_remove_from_mode_locked(rl, m, rl_item_set_first(&m->sources0)->item, cancelled);
        while (m->v1_count)
            rl_source_remove_from_mode_locked(rl, m, rl->wait_set.regs[m->v1[m->v1_count - 1]].source, cancelled);
        while (m->observers.count) rl_observer_remove_from_mode_locked(rl, m, rl_item_set_first(&m->observers)->item);
        while (rl_heap_count(&m->timers)) {
            const rl_timer_slot *slot =
                rl_heap_item(&m->timers, m->timers.entries[rl_heap_count(&m->timers) - 1].handle);
            rl_timer_remove_from_mode_locked(rl, m, rl_timer_slot_timer(slot));
        }
    }
}
