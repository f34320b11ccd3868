/*
 * test_timer_heap.c: the timer heap on its own, against a reference model.
 *
 * Random sequences of insert / remove / re-key / pop / collect, each step
 * checked against a plain array of the live items (the model: every answer
 * computed by a linear scan) and followed by the heap's own verifier, so a
 * broken sift or position table fails at the step that broke it. Deadlines
 * come from a small range, so ties (ordered by sequence) are common.
 */
#include <errno.h>
#include <stdatomic.h>
#include "../../../Sources/CRunLoop/core/rl_timer_heap.h"
#include "rltest.h"

/* realloc, replaced so a test can refuse growth (not under a sanitizer,
   which owns the allocator; under valgrind the replacement is not called,
   and the test says it skipped). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HEAP_INTERPOSE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HEAP_INTERPOSE 0
#endif
#endif
#ifndef HEAP_INTERPOSE
#define HEAP_INTERPOSE 1
#endif
static _Atomic int refuse_growth;
static _Atomic long refused;
#if HEAP_INTERPOSE
extern void *__libc_realloc(void *p, size_t size);
void *realloc(void *p, size_t size) {
    if (size && atomic_load(&refuse_growth)) {
        atomic_fetch_add(&refused, 1);
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, size);
}
#endif

#define MAX_LIVE 600

typedef struct {
    int id; /* the item is &ids[id]; stable */
    int64_t deadline;
    uint64_t sequence;
    rl_heap_handle handle;
    uint32_t leeway;
} model_item;

typedef struct {
    rl_timer_heap heap;
    rl_heap_key_buffer keys;
    model_item live[MAX_LIVE];
    int count;
    int ids[MAX_LIVE * 4];
    int next_id;
    uint64_t next_sequence;
    uint64_t rng;
    int64_t deadline_range;
} model;

static uint64_t next_random(model *m) {
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng;
}

static int random_below(model *m, int n) {
    return (int)(next_random(m) % (uint64_t)n);
}

static bool model_before(const model_item *a, const model_item *b) {
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->sequence < b->sequence);
}

/* Tolerance of an item, derived from its id so the heap and model agree. */
static int64_t tolerance_of_id(int id) {
    return (id % 5) * 3;
}

static int64_t tolerance_of_item(const void *item) {
    return tolerance_of_id(*(const int *)item);
}

static int model_earliest(const model *m) {
    int best = -1;
    for (int i = 0; i < m->count; i++)
        if (best < 0 || model_before(&m->live[i], &m->live[best])) best = i;
    return best;
}

static void check(model *m, const char *step, int n) {
    const char *broken = rl_heap_check(&m->heap);
    if (broken) RL_FAIL_("step %d (%s): %s", n, step, broken);
    RL_ASSERT_EQ_INT(rl_heap_count(&m->heap), m->count);
    for (int i = 0; i < m->count; i++)
        if (rl_heap_item(&m->heap, m->live[i].handle) != &m->ids[m->live[i].id])
            RL_FAIL_("step %d (%s): handle %u names another item", n, step, m->live[i].handle);
    int e = model_earliest(m);
    const rl_heap_entry *top = rl_heap_top(&m->heap);
    if (e < 0) {
        RL_ASSERT(top == NULL);
        return;
    }
    RL_ASSERT(top != NULL);
    RL_ASSERT_EQ_INT(top->handle, m->live[e].handle);
    RL_ASSERT_EQ_INT(top->deadline_ns, m->live[e].deadline);
}

static void insert_one(model *m) {
    if (m->count == MAX_LIVE || m->next_id == (int)RL_TEST_COUNT(m->ids)) return;
    model_item *it = &m->live[m->count];
    it->id = m->next_id++;
    m->ids[it->id] = it->id;
    it->deadline = random_below(m, (int)m->deadline_range);
    it->sequence = ++m->next_sequence;
    it->handle = rl_heap_insert(&m->heap, &m->ids[it->id], it->deadline, it->sequence);
    RL_ASSERT_NE_INT(it->handle, RL_HEAP_NO_HANDLE);
    it->leeway = 0;
    if (random_below(m, 2)) {
        it->leeway = (uint32_t)random_below(m, 8);
        rl_heap_set_leeway(&m->heap, it->handle, it->leeway);
    }
    m->count++;
}

static void forget(model *m, int i) {
    m->live[i] = m->live[--m->count];
}

static void remove_one(model *m) {
    if (!m->count) return;
    int i = random_below(m, m->count);
    rl_heap_remove(&m->heap, m->live[i].handle);
    forget(m, i);
}

static void rekey_one(model *m) {
    if (!m->count) return;
    model_item *it = &m->live[random_below(m, m->count)];
    it->deadline = random_below(m, (int)m->deadline_range);
    it->sequence = ++m->next_sequence;
    rl_heap_update(&m->heap, it->handle, it->deadline, it->sequence);
    if (random_below(m, 2)) { /* else it keeps its leeway */
        it->leeway = (uint32_t)random_below(m, 8);
        rl_heap_set_leeway(&m->heap, it->handle, it->leeway);
    }
}

static void pop_one(model *m) {
    int e = model_earliest(m);
    if (e < 0) return;
    const rl_heap_entry *top = rl_heap_top(&m->heap);
    RL_ASSERT_EQ_INT(top->handle, m->live[e].handle);
    rl_heap_remove(&m->heap, top->handle);
    forget(m, e);
}

/* The due entries, in key order, match the model's. */
static void collect_due(model *m) {
    int64_t limit = random_below(m, (int)m->deadline_range + 2) - 1;
    RL_ASSERT(rl_heap_collect_due(&m->heap, limit, &m->keys));
    model_item due[MAX_LIVE];
    int n = 0;
    for (int i = 0; i < m->count; i++)
        if (m->live[i].deadline <= limit) {
            int j = n++;
            for (; j > 0 && model_before(&m->live[i], &due[j - 1]); j--) due[j] = due[j - 1];
            due[j] = m->live[i];
        }
    RL_ASSERT_EQ_INT(m->keys.count, n);
    for (int i = 0; i < n; i++) {
        RL_ASSERT_EQ_INT(m->keys.items[i].handle, due[i].handle);
        RL_ASSERT_EQ_INT(m->keys.items[i].deadline_ns, due[i].deadline);
        RL_ASSERT_EQ_INT(m->keys.items[i].sequence, due[i].sequence);
    }
}

static int64_t largest(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* The window questions, with and without tolerances, and the wake-up they
   give (rl_mode.c's rule): never before the earliest deadline, inside the
   window of every entry due by it, and an entry alone in its window is
   taken on its deadline. */
static void ask_deadlines(model *m) {
    int64_t limit = random_below(m, (int)m->deadline_range + 2) - 1;
    int64_t floor = random_below(m, 5);
    int64_t latest = INT64_MIN, end_tolerant = INT64_MAX, end_plain = INT64_MAX;
    for (int i = 0; i < m->count; i++) {
        const model_item *it = &m->live[i];
        if (it->deadline <= limit && it->deadline > latest) latest = it->deadline;
        int64_t plain = it->deadline + largest(floor, it->leeway);
        int64_t tolerant = it->deadline + largest(largest(floor, it->leeway), tolerance_of_id(it->id));
        if (plain < end_plain) end_plain = plain;
        if (tolerant < end_tolerant) end_tolerant = tolerant;
    }
    RL_ASSERT_EQ_INT(rl_heap_latest_deadline_until(&m->heap, limit), latest);
    RL_ASSERT_EQ_INT(rl_heap_earliest_latest(&m->heap, floor, tolerance_of_item), end_tolerant);
    RL_ASSERT_EQ_INT(rl_heap_earliest_latest(&m->heap, floor, NULL), end_plain);
    int e = model_earliest(m);
    if (e < 0) return;
    int64_t wake = rl_heap_latest_deadline_until(&m->heap, end_plain);
    RL_ASSERT_GE_INT(wake, m->live[e].deadline);
    int due = 0;
    for (int i = 0; i < m->count; i++) {
        const model_item *it = &m->live[i];
        if (it->deadline > wake) continue;
        due++;
        RL_ASSERT_LE_INT(wake, it->deadline + largest(floor, it->leeway));
    }
    if (due == 1 || m->count == 1) RL_ASSERT_EQ_INT(wake, m->live[e].deadline);
}

/* `steps` random operations, the mix leaning to inserts until `grow_until`
   steps, then to removals, so the heap grows deep and then drains. */
static void run_model(uint64_t seed, int steps, int grow_until, int64_t deadline_range) {
    model *m = calloc(1, sizeof *m);
    RL_ASSERT(m != NULL);
    m->rng = seed;
    m->deadline_range = deadline_range;
    static const char *names[] = {"insert", "remove", "re-key", "pop", "collect", "deadlines"};
    for (int n = 0; n < steps; n++) {
        int op = random_below(m, 10);
        if (n < grow_until ? op < 4 : op < 1) op = 0;
        else op = 1 + op % 5;
        switch (op) {
        case 0: insert_one(m); break;
        case 1: remove_one(m); break;
        case 2: rekey_one(m); break;
        case 3: pop_one(m); break;
        case 4: collect_due(m); break;
        default: ask_deadlines(m); break;
        }
        check(m, names[op], n);
    }
    while (m->count) {
        pop_one(m);
        check(m, "drain", -1);
    }
    rl_heap_key_buffer_free(&m->keys);
    rl_heap_free(&m->heap);
    free(m);
}

static void random_operations_keep_the_heap_and_the_model_equal(void) {
    for (uint64_t seed = 1; seed <= 12; seed++) run_model(seed * 0x9E3779B97F4A7C15ull, 4000, 2500, 50);
}

static void many_ties_come_out_in_sequence_order(void) {
    for (uint64_t seed = 1; seed <= 4; seed++) run_model(seed * 7919, 3000, 2000, 3);
}

static void distinct_deadlines_over_a_wide_range(void) {
    run_model(42, 6000, 4000, 1 << 30);
}

/* Handles are reused after removal and never collide with live ones. */
static void handles_are_reused_and_stay_distinct(void) {
    rl_timer_heap h = {0};
    int items[64];
    rl_heap_handle handles[64];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 64; i++) {
            items[i] = i;
            handles[i] = rl_heap_insert(&h, &items[i], (i * 37) % 11, (uint64_t)(round * 64 + i));
            RL_ASSERT_NE_INT(handles[i], RL_HEAP_NO_HANDLE);
        }
        rl_heap_verify(&h);
        for (int i = 0; i < 64; i++)
            for (int j = i + 1; j < 64; j++) RL_ASSERT_NE_INT(handles[i], handles[j]);
        for (int i = 0; i < 64; i += 2) rl_heap_remove(&h, handles[i]);
        rl_heap_verify(&h);
        for (int i = 1; i < 64; i += 2) rl_heap_remove(&h, handles[i]);
        rl_heap_verify(&h);
        RL_ASSERT_EQ_INT(rl_heap_count(&h), 0);
    }
    RL_ASSERT_LE_INT(h.handle_capacity, 64); /* the freed handles were reused */
    rl_heap_free(&h);
}

/* Out of memory for more keys, collecting keeps the earliest due entries
   that fit, in order, and says the list is partial; the heap is untouched. */
static void collecting_without_memory_keeps_the_earliest_in_order(void) {
    enum { N = 300, ROOM = 16 };
    rl_timer_heap h = {0};
    rl_heap_key_buffer keys = {0};
    static int items[N];
    model_item all[N];
    uint64_t rng = 12345;
    for (int i = 0; i < N; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        all[i] = (model_item){i, (int64_t)(rng >> 58), (uint64_t)i + 1, 0, 0}; /* deadlines 0..63: ties */
        all[i].handle = rl_heap_insert(&h, &items[i], all[i].deadline, all[i].sequence);
        RL_ASSERT_NE_INT(all[i].handle, RL_HEAP_NO_HANDLE);
    }
    RL_ASSERT(rl_heap_key_buffer_reserve(&keys, ROOM));
    atomic_store(&refuse_growth, 1);
    bool complete = rl_heap_collect_due(&h, 40, &keys);
    atomic_store(&refuse_growth, 0);
    if (atomic_load(&refused) == 0) {
        printf("  (skipped: realloc is not ours here, growth cannot be refused)\n");
        rl_heap_key_buffer_free(&keys);
        rl_heap_free(&h);
        return;
    }
    RL_ASSERT(!complete);
    RL_ASSERT_EQ_INT(keys.count, ROOM);
    /* The model: the due entries sorted by key, the first ROOM of them. */
    for (int i = 1; i < N; i++)
        for (int j = i; j > 0 && model_before(&all[j], &all[j - 1]); j--) {
            model_item t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
        }
    for (int i = 0; i < ROOM; i++) {
        RL_ASSERT(all[i].deadline <= 40);
        RL_ASSERT_EQ_INT(keys.items[i].handle, all[i].handle);
        RL_ASSERT_EQ_INT(keys.items[i].sequence, all[i].sequence);
    }
    rl_heap_verify(&h);
    RL_ASSERT_EQ_INT(rl_heap_count(&h), N);
    RL_ASSERT(rl_heap_collect_due(&h, 40, &keys)); /* with memory: all of them */
    RL_ASSERT_GE_INT(keys.count, ROOM + 1);
    rl_heap_key_buffer_free(&keys);
    rl_heap_free(&h);
}

/* The verifier itself: each kind of damage is reported. */
static void the_verifier_reports_a_broken_heap(void) {
    rl_timer_heap h = {0};
    int items[40];
    for (int i = 0; i < 40; i++) {
        items[i] = i;
        rl_heap_insert(&h, &items[i], 40 - i, (uint64_t)i);
    }
    RL_ASSERT(rl_heap_check(&h) == NULL);

    rl_heap_entry saved = h.entries[0];
    h.entries[0] = h.entries[39]; /* a late entry on top: order and positions */
    RL_ASSERT(rl_heap_check(&h) != NULL);
    h.entries[0] = saved;
    RL_ASSERT(rl_heap_check(&h) == NULL);

    h.entries[5].deadline_ns = -1; /* a child before its parent */
    RL_ASSERT(rl_heap_check(&h) != NULL);
    h.entries[5].deadline_ns = saved.deadline_ns + 100;
    rl_heap_update(&h, h.entries[5].handle, 3, 1000);
    RL_ASSERT(rl_heap_check(&h) == NULL);

    uint32_t position = h.positions[h.entries[7].handle];
    h.positions[h.entries[7].handle] = 8; /* a handle pointing elsewhere */
    RL_ASSERT(rl_heap_check(&h) != NULL);
    h.positions[h.entries[7].handle] = position;
    RL_ASSERT(rl_heap_check(&h) == NULL);

    rl_heap_remove(&h, h.entries[3].handle);
    rl_heap_handle freed = h.free_handle;
    h.free_handle = RL_HEAP_NO_HANDLE; /* a free handle lost */
    RL_ASSERT(rl_heap_check(&h) != NULL);
    h.free_handle = h.entries[0].handle; /* a handle in use on the free list */
    RL_ASSERT(rl_heap_check(&h) != NULL);
    h.free_handle = freed;
    RL_ASSERT(rl_heap_check(&h) == NULL);
    rl_heap_free(&h);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(random_operations_keep_the_heap_and_the_model_equal),
        RL_TEST(many_ties_come_out_in_sequence_order),
        RL_TEST(distinct_deadlines_over_a_wide_range),
        RL_TEST(handles_are_reused_and_stay_distinct),
        RL_TEST(collecting_without_memory_keeps_the_earliest_in_order),
        RL_TEST(the_verifier_reports_a_broken_heap),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
