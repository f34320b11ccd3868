/*
 * test_message_port.c: RLMessagePort, messages between threads: FIFO delivery
 * with bytes intact, many messages per wake-up, the per-perform bound, the
 * bounded queue (-EAGAIN), invalidation (-EPIPE, from the callback too), bad
 * input, a port keeping a worker thread's loop alive, no spin while idle, and
 * K senders x N messages received in order per sender, send order kept when
 * callbacks run the loop re-entrantly, and what invalidation guarantees.
 */
#include <CRunLoop.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "rltest.h"

#define DEF kRLRunLoopDefaultMode

typedef struct {
    long calls;
    int32_t ids[1024];
    char text[1024][16];
    int invalidate_at; /* 1-based; 0: never */
    int send_back;     /* messages to send to itself from the callback */
    long stop_at;
} probe;

static void cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    probe *p = info;
    if (p->calls < 1024) {
        p->ids[p->calls] = msgid;
        size_t n = len < 15 ? len : 15;
        if (n) memcpy(p->text[p->calls], bytes, n);
        p->text[p->calls][n] = 0;
    }
    if (len == 0) RL_ASSERT(bytes == NULL);
    p->calls++;
    if (p->invalidate_at && p->calls == p->invalidate_at) RLMessagePortInvalidate(port);
    if (p->send_back > 0) {
        p->send_back--;
        RL_ASSERT_EQ_INT(RLMessagePortSend(port, msgid + 1, "again", 5), 0);
    }
    if (p->stop_at && p->calls == p->stop_at) RLRunLoopStop(RLRunLoopGetCurrent());
}

static RLMessagePortRef make(probe *p, RLIndex capacity, RLRunLoopMode mode) {
    RLMessagePortContext ctx = {0, p, NULL, NULL, NULL};
    RLMessagePortRef port = RLMessagePortCreate(cb, &ctx, capacity);
    RL_ASSERT(port != NULL);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(port, 0);
    RL_ASSERT(s != NULL);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, mode);
    RLRelease(s);
    return port;
}

static void done(RLMessagePortRef port) {
    RLMessagePortInvalidate(port);
    RLRelease(port);
}

static int wakes, passes;
static void count(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)info;
    if (a == kRLRunLoopAfterWaiting) wakes++;
    if (a == kRLRunLoopBeforeSources) passes++;
}
static RLRunLoopObserverRef add_counter(RLRunLoopMode mode) {
    RLRunLoopObserverRef o =
        RLRunLoopObserverCreate(kRLRunLoopAfterWaiting | kRLRunLoopBeforeSources, true, 0, count, NULL);
    RLRunLoopAddObserver(RLRunLoopGetCurrent(), o, mode);
    return o;
}
static void drop(RLRunLoopObserverRef o) {
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

static void port_delivers_in_fifo_order_with_bytes_intact(void) {
    probe p = {0};
    RLMessagePortRef port = make(&p, 0, DEF);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(port), RL_MESSAGE_PORT_DEFAULT_CAPACITY);
    char big[4096];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, "one", 3), 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 2, NULL, 0), 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 3, big, sizeof big), 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, -4, "four", 4), 0);
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(port), 4);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 4); /* all of them in one perform */
    RL_ASSERT_EQ_INT(p.ids[0], 1);
    RL_ASSERT_EQ_INT(p.ids[1], 2);
    RL_ASSERT_EQ_INT(p.ids[2], 3);
    RL_ASSERT_EQ_INT(p.ids[3], -4);
    RL_ASSERT_STR_EQ(p.text[0], "one");
    RL_ASSERT_STR_EQ(p.text[1], "");
    RL_ASSERT_STR_EQ(p.text[2], "abcdefghijklmno");
    RL_ASSERT_STR_EQ(p.text[3], "four");
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(port), 0);
    done(port);
}

static void port_many_messages_per_wake_up_and_bounded_per_perform(void) {
    probe p = {0};
    RLMessagePortRef port = make(&p, 0, DEF);
    for (int i = 0; i < 200; i++) RL_ASSERT_EQ_INT(RLMessagePortSend(port, i, &i, sizeof i), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, RL_MESSAGE_PORT_BATCH);
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(port), 200 - RL_MESSAGE_PORT_BATCH);
    RLRunLoopObserverRef o = add_counter(DEF);
    while (p.calls < 200) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 200);
    for (int i = 0; i < 200 && i < 1024; i++) RL_ASSERT_EQ_INT(p.ids[i], i);
    RL_ASSERT_LE_INT(passes, 3); /* (200 - 64) / 64 rounded up */
    drop(o);
    done(port);
}

static void port_full_queue_rejects_with_eagain(void) {
    probe p = {0};
    RLMessagePortRef port = make(&p, 4, DEF);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(port), 4);
    for (int i = 0; i < 4; i++) RL_ASSERT_EQ_INT(RLMessagePortSend(port, i, "m", 1), 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 99, "m", 1), -EAGAIN);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 99, "big message beyond the inline buffer ............", 50), -EAGAIN);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 4);
    for (int i = 0; i < 4; i++) RL_ASSERT_EQ_INT(p.ids[i], i);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 5, "m", 1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.ids[4], 5);
    done(port);
}

static void port_bad_input_and_invalidated_port(void) {
    probe p = {0};
    RL_ASSERT(RLMessagePortCreate(NULL, NULL, 0) == NULL);
    RL_ASSERT(RLMessagePortCreate(cb, NULL, -1) == NULL);
    RLMessagePortRef huge = RLMessagePortCreate(cb, NULL, 1L << 40);
    RL_ASSERT(huge != NULL);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(huge), RL_MESSAGE_PORT_MAX_CAPACITY);
    RLRelease(huge);
    RL_ASSERT_EQ_INT(RLMessagePortSend(NULL, 1, "x", 1), -EINVAL);
    RL_ASSERT(RLMessagePortCreateRunLoopSource(NULL, 0) == NULL);
    RLMessagePortInvalidate(NULL);
    RL_ASSERT(!RLMessagePortIsValid(NULL));
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(NULL), 0);
    RL_ASSERT_EQ_INT(RLMessagePortGetCapacity(NULL), 0);
    RLMessagePortGetContext(NULL, NULL);

    RLMessagePortRef port = make(&p, 8, DEF);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, NULL, 3), -EINVAL);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, "x", RL_MESSAGE_PORT_MAX_SIZE + 1), -EMSGSIZE);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, "x", 1), 0);
    RL_ASSERT(RLMessagePortIsValid(port));
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(port, 0);
    RLMessagePortInvalidate(port);
    RLMessagePortInvalidate(port); /* idempotent */
    RL_ASSERT(!RLMessagePortIsValid(port));
    RL_ASSERT(!RLRunLoopSourceIsValid(s));
    RL_ASSERT(!RLRunLoopContainsSource(RLRunLoopGetCurrent(), s, DEF));
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(port), 0); /* dropped */
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 2, "x", 1), -EPIPE);
    RL_ASSERT(RLMessagePortCreateRunLoopSource(port, 0) == NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(p.calls, 0);
    RLRelease(s);
    RLRelease(port);
}

static void port_invalidate_from_callback_drops_the_rest(void) {
    probe p = {.invalidate_at = 3};
    RLMessagePortRef port = make(&p, 0, DEF);
    for (int i = 0; i < 10; i++) RL_ASSERT_EQ_INT(RLMessagePortSend(port, i, "x", 1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 3);
    RL_ASSERT(!RLMessagePortIsValid(port));
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 11, "x", 1), -EPIPE);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(p.calls, 3);
    RLRelease(port);
}

static void port_send_from_callback_arrives_in_a_later_perform(void) {
    probe p = {.send_back = 3};
    RLMessagePortRef port = make(&p, 0, DEF);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 10, "x", 1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 1);
    for (int i = 0; i < 3; i++) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 4);
    RL_ASSERT_EQ_INT(p.ids[3], 13);
    RL_ASSERT_STR_EQ(p.text[3], "again");
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.05, true), kRLRunLoopRunTimedOut);
    done(port);
}

static void port_idle_does_not_spin(void) {
    probe p = {0};
    RLMessagePortRef port = make(&p, 0, DEF);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, "x", 1), 0);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RLRunLoopObserverRef o = add_counter(DEF);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 0.3, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LE_INT(wakes, 1);
    RL_ASSERT_LE_INT(passes, 2);
    RL_ASSERT_EQ_INT(p.calls, 1);
    drop(o);
    done(port);
}

static void port_context_retain_release_and_description(void) {
    probe p = {0};
    RLMessagePortContext ctx = {0, &p, rl_test_ctx_retain, rl_test_ctx_release, rl_test_ctx_describe};
    RLMessagePortRef port = RLMessagePortCreate(cb, &ctx, 16);
    RL_ASSERT_EQ_INT(rl_test_ctx_retains, 1);
    RLMessagePortContext got;
    RLMessagePortGetContext(port, &got);
    RL_ASSERT(got.info == &p);
    RLRunLoopSourceRef a = RLMessagePortCreateRunLoopSource(port, 2);
    RLRunLoopSourceRef b = RLMessagePortCreateRunLoopSource(port, 2);
    RL_ASSERT(a == b);
    RL_ASSERT(RLRetain(port) == port);
    RLRelease(port);
    char *d = RLCopyDescription(port);
    RL_ASSERT(d && strstr(d, "RLMessagePort") && strstr(d, "test-context"));
    free(d);
    d = RLCopyDescription(a);
    RL_ASSERT(d != NULL);
    free(d);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, "queued and never delivered", 26), 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 2, "a message long enough to be stored on the heap", 46), 0);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 0);
    RLMessagePortInvalidate(port);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 1);
    RLRelease(a);
    RLRelease(b);
    RLRelease(port);
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 1);
}

static void port_released_without_invalidation_frees_queue(void) {
    RLMessagePortContext ctx = {0, NULL, rl_test_ctx_retain, rl_test_ctx_release, NULL};
    RLMessagePortRef port = RLMessagePortCreate(cb, &ctx, 0);
    char buf[1000] = {0};
    for (int i = 0; i < 10; i++) RL_ASSERT_EQ_INT(RLMessagePortSend(port, i, buf, sizeof buf), 0);
    RLRelease(port); /* no source: the last reference frees the queued messages */
    RL_ASSERT_EQ_INT(rl_test_ctx_releases, 1);
}

/* ---- threads -------------------------------------------------------------- */

typedef struct {
    RLMessagePortRef port;
    atomic_int ready;
    long received;
    RLRunLoopRunResult result;
} worker;

static void worker_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)bytes;
    (void)len;
    worker *w = info;
    if (msgid == -1) {
        RLRunLoopStop(RLRunLoopGetCurrent());
        return;
    }
    RL_ASSERT_EQ_INT(msgid, w->received);
    w->received++;
}

static void *worker_thread(void *arg) {
    worker *w = arg;
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(w->port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    atomic_store(&w->ready, 1);
    /* The port is the only thing in the worker's loop: it keeps it running. */
    w->result = RLRunLoopRunInMode(DEF, 30, false);
    return NULL;
}

static void port_keeps_a_worker_loop_alive_and_talks_to_it(void) {
    worker w = {0};
    RLMessagePortContext ctx = {0, &w, NULL, NULL, NULL};
    w.port = RLMessagePortCreate(worker_cb, &ctx, 0);
    pthread_t th;
    pthread_create(&th, NULL, worker_thread, &w);
    while (!atomic_load(&w.ready)) usleep(1000);
    usleep(20000);
    for (int i = 0; i < 100; i++) {
        RL_ASSERT_EQ_INT(RLMessagePortSend(w.port, i, "hi", 2), 0);
        if (i % 10 == 0) usleep(1000);
    }
    RL_ASSERT_EQ_INT(RLMessagePortSend(w.port, -1, NULL, 0), 0);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(w.result, kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(w.received, 100);
    done(w.port);
}

#define K_SENDERS 8
typedef struct {
    RLMessagePortRef port;
    int32_t sender;
    long n;
    long eagain;
} sender_arg;

typedef struct {
    long next[K_SENDERS];
    long total;
    long expected;
} tally;

static void *sender(void *arg) {
    sender_arg *a = arg;
    for (long i = 0; i < a->n; i++) {
        uint64_t payload[2] = {(uint64_t)a->sender, (uint64_t)i};
        int rc;
        while ((rc = RLMessagePortSend(a->port, a->sender, payload, sizeof payload)) == -EAGAIN) {
            a->eagain++;
            sched_yield();
        }
        RL_ASSERT_EQ_INT(rc, 0);
    }
    return NULL;
}

static void tally_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    tally *t = info;
    RL_ASSERT_EQ_INT(len, 16);
    uint64_t payload[2];
    memcpy(payload, bytes, sizeof payload);
    RL_ASSERT(msgid >= 0 && msgid < K_SENDERS);
    RL_ASSERT_EQ_INT(payload[0], msgid);
    RL_ASSERT_EQ_INT(payload[1], t->next[msgid]); /* in order per sender */
    t->next[msgid]++;
    if (++t->total == t->expected) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void port_many_senders_stress_counts_in_order_per_sender(void) {
    long n = rl_test_scaled(40000);
    tally t = {.expected = n * K_SENDERS};
    RLMessagePortContext ctx = {0, &t, NULL, NULL, NULL};
    RLMessagePortRef port = RLMessagePortCreate(tally_cb, &ctx, 256); /* small: exercises -EAGAIN */
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    sender_arg args[K_SENDERS];
    pthread_t th[K_SENDERS];
    for (int k = 0; k < K_SENDERS; k++) {
        args[k] = (sender_arg){.port = port, .sender = k, .n = n};
        pthread_create(&th[k], NULL, sender, &args[k]);
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 120, false), kRLRunLoopRunStopped);
    for (int k = 0; k < K_SENDERS; k++) {
        pthread_join(th[k], NULL);
        RL_ASSERT_EQ_INT(t.next[k], n);
    }
    RL_ASSERT_EQ_INT(t.total, n * K_SENDERS);
    RL_ASSERT_EQ_INT(RLMessagePortGetQueuedCount(port), 0);
    done(port);
}

/* Senders racing with invalidation from another thread: every send returns
   0 or -EPIPE, nothing crashes, nothing is delivered after invalidation. */
typedef struct {
    RLMessagePortRef port;
    atomic_long ok, epipe;
} racer_arg;

static void *racer(void *arg) {
    racer_arg *a = arg;
    for (;;) {
        int rc = RLMessagePortSend(a->port, 1, "r", 1);
        if (rc == -EPIPE) {
            atomic_fetch_add(&a->epipe, 1);
            return NULL;
        }
        RL_ASSERT(rc == 0 || rc == -EAGAIN);
        if (rc == 0) atomic_fetch_add(&a->ok, 1);
        else sched_yield();
    }
}

static void count_only(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)msgid;
    (void)bytes;
    (void)len;
    RL_ASSERT(RLMessagePortIsValid(port));
    (*(long *)info)++;
}

static void port_senders_racing_with_invalidation(void) {
    long got = 0;
    RLMessagePortContext ctx = {0, &got, NULL, NULL, NULL};
    racer_arg a = {0};
    a.port = RLMessagePortCreate(count_only, &ctx, 64);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(a.port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    pthread_t th[4];
    for (int k = 0; k < 4; k++) pthread_create(&th[k], NULL, racer, &a);
    RLRunLoopRunInMode(DEF, 0.1, false);
    RLMessagePortInvalidate(a.port);
    for (int k = 0; k < 4; k++) pthread_join(th[k], NULL);
    RL_ASSERT_EQ_INT(atomic_load(&a.epipe), 4);
    RL_ASSERT_LE_INT(got, atomic_load(&a.ok));
    RL_ASSERT_GE_INT(got, 1);
    RLRelease(a.port);
}

/* ---- send order under re-entrant runs, and invalidation ------------------ */

typedef struct {
    long calls;
    int32_t ids[512];
    int nested_runs; /* passes the first callback runs the loop for */
} nesting_probe;

static void nesting_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)bytes;
    (void)len;
    nesting_probe *p = info;
    if (p->calls < 512) p->ids[p->calls] = msgid;
    p->calls++;
    if (p->calls == 1)
        for (int i = 0; i < p->nested_runs; i++) RLRunLoopRunInMode(DEF, 0, true);
}

static void port_reentrant_run_from_callback_keeps_send_order(void) {
    nesting_probe p = {.nested_runs = 3};
    RLMessagePortContext ctx = {0, &p, NULL, NULL, NULL};
    RLMessagePortRef port = RLMessagePortCreate(nesting_cb, &ctx, 0);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    for (int i = 0; i < 300; i++) RL_ASSERT_EQ_INT(RLMessagePortSend(port, i, NULL, 0), 0);
    while (p.calls < 300) RL_ASSERT_EQ_INT(RLRunLoopRunInMode(DEF, 2, true), kRLRunLoopRunHandledSource);
    RL_ASSERT_EQ_INT(p.calls, 300);
    for (int i = 0; i < 300; i++) RL_ASSERT_EQ_INT(p.ids[i], i);
    done(port);
}

/* Invalidation on the loop's own thread, from a version-0 source performed
   in a run nested inside the port's first callback: no callback after it
   returns, neither in the nested run nor back in the outer perform. */
typedef struct {
    RLMessagePortRef port;
    RLRunLoopSourceRef trigger;
    bool invalidated;
    long calls, late;
} inval_probe;

static void inval_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)msgid;
    (void)bytes;
    (void)len;
    inval_probe *p = info;
    p->calls++;
    if (p->invalidated) p->late++;
    if (p->calls == 20) {
        RLRunLoopSourceSignal(p->trigger);
        RLRunLoopWakeUp(RLRunLoopGetCurrent());
    }
    if (p->calls == 1)
        for (int i = 0; i < 5; i++) RLRunLoopRunInMode(DEF, 0, true);
}

static void inval_perform(void *info) {
    inval_probe *p = info;
    RLMessagePortInvalidate(p->port);
    p->invalidated = true;
}

static void port_invalidate_on_loop_thread_in_nested_run_stops_callbacks(void) {
    inval_probe p = {0};
    RLMessagePortContext ctx = {0, &p, NULL, NULL, NULL};
    p.port = RLMessagePortCreate(inval_cb, &ctx, 0);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(p.port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    RLRunLoopSourceContext sctx = {.info = &p, .perform = inval_perform};
    p.trigger = RLRunLoopSourceCreate(0, &sctx);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), p.trigger, DEF);
    for (int i = 0; i < 500; i++) RL_ASSERT_EQ_INT(RLMessagePortSend(p.port, i, NULL, 0), 0);
    RLRunLoopRunInMode(DEF, 0.3, false);
    RL_ASSERT(p.invalidated);
    RL_ASSERT_GE_INT(p.calls, 20);
    RL_ASSERT_LE_INT(p.calls, 20 + RL_MESSAGE_PORT_BATCH);
    RL_ASSERT_EQ_INT(p.late, 0);
    RLRunLoopSourceInvalidate(p.trigger);
    RLRelease(p.trigger);
    RLRelease(p.port);
}

/* Invalidation from another thread while the loop's thread is delivering a
   steady stream, checked in every round: after RLMessagePortInvalidate
   returns, the one loop servicing the port finishes at most the delivery it
   had begun (its message out of the queue, its callback running or about to
   run) and starts no other. So the callbacks ever started, minus those
   finished when it returned, are at most one. In every other round a
   callback is held running until the invalidation has returned, so the
   bound is tested with a delivery under way (otherwise the loop is almost
   always between callbacks then, and a loop that took two messages out at
   a time would pass). Messages arrive in send order without gaps, and the
   context is released once, after the last callback. */
typedef struct {
    RLMessagePortRef port;
    long hold_at; /* the callback of this message waits for `returned`; -1: none */
    _Atomic long started;
    _Atomic long finished;
    _Atomic bool holding;
    _Atomic bool returned;
    _Atomic long late;
    _Atomic long released;
    _Atomic long after_release;
    long next_id;
    long out_of_order;
    _Atomic bool stop;
} cross_probe;

static void cross_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)bytes;
    (void)len;
    cross_probe *p = info;
    atomic_fetch_add(&p->started, 1);
    if (atomic_load(&p->returned)) atomic_fetch_add(&p->late, 1);
    if (atomic_load(&p->released)) atomic_fetch_add(&p->after_release, 1);
    if (msgid != p->next_id) p->out_of_order++;
    p->next_id = msgid + 1;
    if (msgid == p->hold_at) {
        atomic_store(&p->holding, true);
        while (!atomic_load(&p->returned)) sched_yield();
    }
    atomic_fetch_add(&p->finished, 1);
}

static void cross_release(const void *info) {
    cross_probe *p = (cross_probe *)info;
    atomic_fetch_add(&p->released, 1);
}

static void *cross_loop(void *arg) {
    cross_probe *p = arg;
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(p->port, 0);
    if (s) {
        RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
        RLRelease(s);
    }
    while (!atomic_load(&p->stop)) RLRunLoopRunInMode(DEF, 0.01, false);
    return NULL;
}

static bool cross_ready_to_invalidate(cross_probe *p, long target) {
    return p->hold_at >= 0 ? atomic_load(&p->holding) : atomic_load(&p->started) >= target;
}

static void port_invalidate_from_another_thread_stress_counts(void) {
    for (int round = 0; round < 60; round++) {
        long target = 200 + (round % 7) * 150;
        cross_probe p = {.next_id = 0, .hold_at = round % 2 ? target : -1};
        RLMessagePortContext ctx = {0, &p, NULL, cross_release, NULL};
        p.port = RLMessagePortCreate(cross_cb, &ctx, 4096);
        pthread_t th;
        pthread_create(&th, NULL, cross_loop, &p);
        int32_t sent = 0;
        while (!cross_ready_to_invalidate(&p, target)) {
            int rc = RLMessagePortSend(p.port, sent, NULL, 0);
            if (rc == 0) sent++;
            else sched_yield();
        }
        RLMessagePortInvalidate(p.port);
        long finished_at_return = atomic_load(&p.finished);
        long started_at_return = atomic_load(&p.started);
        atomic_store(&p.returned, true);
        atomic_store(&p.stop, true);
        pthread_join(th, NULL);
        if (p.hold_at >= 0) RL_ASSERT_EQ_INT(started_at_return - finished_at_return, 1); /* one under way */
        RL_ASSERT_LE_INT(atomic_load(&p.started) - finished_at_return, 1);
        RL_ASSERT_LE_INT(atomic_load(&p.late), 1);
        RL_ASSERT_EQ_INT(p.out_of_order, 0);
        RL_ASSERT_LE_INT(atomic_load(&p.started), sent);
        RL_ASSERT_EQ_INT(atomic_load(&p.released), 1);
        RL_ASSERT_EQ_INT(atomic_load(&p.after_release), 0);
        RL_ASSERT_EQ_INT(RLMessagePortSend(p.port, 0, NULL, 0), -EPIPE);
        RLRelease(p.port);
    }
}

/* A stream from another thread while callbacks run the loop re-entrantly at
   various depths: every message arrives exactly once, in send order. */
typedef struct {
    RLMessagePortRef port;
    long total;
    long next;
    long wrong;
    int depth;
} stream_probe;

static void stream_cb(RLMessagePortRef port, int32_t msgid, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)bytes;
    (void)len;
    stream_probe *p = info;
    if (msgid != p->next) p->wrong++;
    p->next = msgid + 1;
    if (msgid % 7 == 0 && p->depth < 4) {
        p->depth++;
        RLRunLoopRunInMode(DEF, 0, msgid % 2 == 0);
        p->depth--;
    }
}

static void *stream_sender(void *arg) {
    stream_probe *p = arg;
    for (int32_t i = 0; i < p->total;) {
        if (RLMessagePortSend(p->port, i, &i, sizeof i) == 0) i++;
        else sched_yield();
    }
    return NULL;
}

static void port_stream_with_reentrant_runs_keeps_send_order(void) {
    stream_probe p = {.total = rl_test_scaled(200000)};
    RLMessagePortContext ctx = {0, &p, NULL, NULL, NULL};
    p.port = RLMessagePortCreate(stream_cb, &ctx, 256);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(p.port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, DEF);
    RLRelease(s);
    pthread_t th;
    pthread_create(&th, NULL, stream_sender, &p);
    while (p.next < p.total) RLRunLoopRunInMode(DEF, 1, true);
    pthread_join(th, NULL);
    RL_ASSERT_EQ_INT(p.wrong, 0);
    RL_ASSERT_EQ_INT(p.next, p.total);
    done(p.port);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(port_delivers_in_fifo_order_with_bytes_intact),
        RL_TEST(port_many_messages_per_wake_up_and_bounded_per_perform),
        RL_TEST(port_full_queue_rejects_with_eagain),
        RL_TEST(port_bad_input_and_invalidated_port),
        RL_TEST(port_invalidate_from_callback_drops_the_rest),
        RL_TEST(port_send_from_callback_arrives_in_a_later_perform),
        RL_TEST(port_idle_does_not_spin),
        RL_TEST(port_context_retain_release_and_description),
        RL_TEST(port_released_without_invalidation_frees_queue),
        RL_TEST(port_keeps_a_worker_loop_alive_and_talks_to_it),
        RL_TEST(port_many_senders_stress_counts_in_order_per_sender),
        RL_TEST(port_senders_racing_with_invalidation),
        RL_TEST(port_reentrant_run_from_callback_keeps_send_order),
        RL_TEST(port_invalidate_on_loop_thread_in_nested_run_stops_callbacks),
        RL_TEST(port_invalidate_from_another_thread_stress_counts),
        RL_TEST(port_stream_with_reentrant_runs_keeps_send_order),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
