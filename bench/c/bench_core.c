/*
 * bench_core.c: the workloads W1-W7 on our C core (libcrunloop).
 *
 *   bench_core                 every workload, medians of 3 runs (fresh process each)
 *   bench_core w1 100000       one workload; prints one "RESULT w1 key=value ..." line
 *
 * W1 cross-thread wake-up ping-pong: RLRunLoopPerformFunction + RLRunLoopWakeUp
 *    to the other loop and back.
 * W2 N one-shot timers spread over 1 s (create + add + release per timer).
 * W3 one 1 ms repeating timer.
 * W4 N same-thread RLRunLoopPerformFunction calls, then the loop drains them.
 * W5 socketpair ping-pong between two loops (a version-1 source per end).
 * W6 an idle loop (one far-future timer) for `arg` seconds.
 * W7 system calls per pass: a sleeping loop woken by another thread; an awake
 *    (busy) loop being woken; mallocs per hot-path operation come from W1/W2/W4
 *    when malloc_count.so is preloaded.
 * W11 how late 10 ms runs return while other threads churn items in the loop
 *    and describe it.
 * W12 TCP echo over loopback between two loops through RLSocket (CFSocket):
 *    accept and data callbacks, RLSocketSendData.
 */
#define _GNU_SOURCE
#include "benchlib.h"
#include <CRunLoop.h>
#include <CRunLoopSocket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sched.h>
#include <unistd.h>

#define MODE kRLRunLoopDefaultMode

static void noop(void *info) {
    (void)info;
}

/* A version-0 source that is never signalled: keeps a mode from being empty. */
static RLRunLoopSourceRef keepalive_add(RLRunLoopRef rl) {
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.perform = noop;
    RLRunLoopSourceRef s = RLRunLoopSourceCreate(0, &c);
    RLRunLoopAddSource(rl, s, MODE);
    return s;
}

static void keepalive_remove(RLRunLoopSourceRef s) {
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* ---- a second thread running its own loop ------------------------------- */

typedef struct {
    pthread_t thread;
    RLRunLoopRef rl;
    atomic_int ready, stop;
    long long sc;        /* system calls made by the thread while running */
    void (*setup)(void); /* optional, run on the thread before its loop */
    RLRunLoopMode mode;  /* the mode it runs (MODE unless set before peer_start's setup returns) */
} peer_thread;

static void *peer_main(void *arg) {
    peer_thread *p = arg;
    p->rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(p->rl);
    if (p->setup) p->setup();
    bl_sc_span span = bl_sc_begin();
    atomic_store(&p->ready, 1);
    while (!atomic_load(&p->stop)) RLRunLoopRunInMode(p->mode, 1.0, false);
    p->sc = bl_sc_end(&span);
    keepalive_remove(ka);
    return NULL;
}

static void peer_start(peer_thread *p, void (*setup)(void)) {
    memset(p, 0, sizeof *p);
    p->setup = setup;
    p->mode = MODE;
    pthread_create(&p->thread, NULL, peer_main, p);
    while (!atomic_load(&p->ready)) bl_spin_pause();
}

/* Stops the thread; its system calls while it ran, or -1. */
static long long peer_stop(peer_thread *p) {
    atomic_store(&p->stop, 1);
    RLRunLoopStop(p->rl);
    RLRunLoopWakeUp(p->rl);
    pthread_join(p->thread, NULL);
    return p->sc;
}

/* ---- W1: cross-thread wake-up ping-pong ---------------------------------- */

static bl_w1 w1;
static RLRunLoopRef w1_a;
static peer_thread w1_b;
static RLRunLoopMode w1_mode; /* both loops run it: NULL for MODE, or one of W9c's modes */

static RLRunLoopMode w1_running(void) {
    return w1_mode ? w1_mode : MODE;
}

static void w1_on_a(void *info);
static void w1_on_b(void *info) {
    (void)info;
    RLRunLoopPerformFunction(w1_a, w1_running(), w1_on_a, NULL);
    RLRunLoopWakeUp(w1_a);
}

static void w1_wake_b(void) {
    RLRunLoopPerformFunction(w1_b.rl, w1_running(), w1_on_b, NULL);
    RLRunLoopWakeUp(w1_b.rl);
}

static void w1_on_a(void *info) {
    (void)info;
    if (bl_w1_back(&w1)) RLRunLoopStop(w1_a);
    else w1_wake_b();
}

static void w1_run(void) {
    while (w1.i < w1.n) RLRunLoopRunInMode(w1_running(), 10.0, false);
}

static long long w1_stop_b(void) {
    return peer_stop(&w1_b);
}

static void run_w1(double arg) {
    bl_w1_begin(&w1, (long)arg);
    w1_a = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(w1_a);
    peer_start(&w1_b, NULL);
    bl_run_w1(&w1, w1_wake_b, w1_run, w1_stop_b);
    keepalive_remove(ka);
    free(w1.rtt);
}

/* ---- W2: N one-shot timers spread over 1 s ------------------------------- */

static struct {
    long n, fired;
    uint64_t t0;
    uint64_t t_last;
    double *late;
} w2;

static void w2_fire(RLRunLoopTimerRef timer, void *info) {
    (void)timer;
    long i = (long)(intptr_t)info;
    uint64_t now = bl_now_ns();
    double target = (double)w2.t0 + bl_spread(i) * 1e9;
    w2.late[i] = ((double)now - target) / 1e3;
    w2.t_last = now;
    if (++w2.fired == w2.n) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void run_w2(double arg) {
    w2.n = (long)arg;
    w2.fired = 0;
    w2.late = calloc((size_t)w2.n, sizeof(double));
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(rl);

    bl_usage u0 = bl_usage_now(false);
    long long m0 = bl_mallocs();
    w2.t0 = bl_now_ns();
    RLAbsoluteTime abs0 = RLAbsoluteTimeGetCurrent();
    for (long i = 0; i < w2.n; i++) {
        RLRunLoopTimerContext ctx = {0, (void *)(intptr_t)i, NULL, NULL, NULL};
        RLRunLoopTimerRef t = RLRunLoopTimerCreate(abs0 + bl_spread(i), 0, 0, 0, w2_fire, &ctx);
        RLRunLoopAddTimer(rl, t, MODE);
        RLRelease(t);
    }
    uint64_t t_added = bl_now_ns();
    long long m1 = bl_mallocs();
    uint64_t deadline = w2.t0 + 120ull * 1000000000ull;
    while (w2.fired < w2.n && bl_now_ns() < deadline) RLRunLoopRunInMode(MODE, 1.0, false);
    bl_usage u1 = bl_usage_now(false);

    bl_report_w2(w2.n, w2.t0, t_added, w2.t_last, w2.fired, w2.late, u0, u1, m0, m1);
    keepalive_remove(ka);
    free(w2.late);
}

/* ---- W3: one 1 ms repeating timer ----------------------------------------- */

#define W3_INTERVAL 0.001
static bl_w3 w3;

static void w3_fire(RLRunLoopTimerRef timer, void *info) {
    (void)timer;
    (void)info;
    bl_w3_fired(&w3);
}

/* Starts W3's timer on this thread's loop (the run is the caller's). */
static RLRunLoopTimerRef w3_start(double secs, uint64_t *t0, bl_usage *u0) {
    bl_w3_begin(&w3, secs);
    *u0 = bl_usage_now(false);
    *t0 = bl_now_ns();
    w3.first = *t0 + (uint64_t)(W3_INTERVAL * 1e9);
    RLRunLoopTimerRef t =
        RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + W3_INTERVAL, W3_INTERVAL, 0, 0, w3_fire, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, MODE);
    return t;
}

static void w3_stop(RLRunLoopTimerRef t) {
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    free(w3.jit);
}

static void run_w3(double secs) {
    uint64_t t0;
    bl_usage u0;
    RLRunLoopTimerRef t = w3_start(secs, &t0, &u0);
    RLRunLoopRunInMode(MODE, secs, false);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w3("w3", w3.fires, w3.cap, w3.jit, w3.first, t0, t1, u0, u1, -1);
    w3_stop(t);
}

/* ---- W4: same-thread perform ---------------------------------------------- */

static long w4_done, w4_n;
static void w4_fn(void *info) {
    (void)info;
    if (++w4_done == w4_n) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void run_w4(double arg) {
    w4_n = (long)arg;
    w4_done = 0;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(rl);
    long long m0 = bl_mallocs();
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < w4_n; i++) RLRunLoopPerformFunction(rl, MODE, w4_fn, NULL);
    uint64_t t1 = bl_now_ns();
    while (w4_done < w4_n) RLRunLoopRunInMode(MODE, 10.0, false);
    uint64_t t2 = bl_now_ns();
    long long m1 = bl_mallocs();
    bl_report_w4(w4_n, t0, t1, t2, m0, m1);
    keepalive_remove(ka);
}

/* ---- W5: socketpair ping-pong between two loops ---------------------------- */

static bl_w5 w5;
static RLRunLoopSourceRef w5_src_b;
static peer_thread w5_b;

/* A version-1 source watching fd, whose info is the fd itself. */
static int fd_of(void *info) {
    return (int)(intptr_t)info;
}

static void w5_perform_b(void *info) {
    bl_w5_echo((int)(intptr_t)info);
}

static void w5_perform_a(void *info) {
    (void)info;
    if (bl_w5_answered(&w5)) RLRunLoopStop(RLRunLoopGetCurrent());
}

static RLRunLoopSourceRef fd_source(int fd, void (*perform)(void *)) {
    RLRunLoopSourceContext1 c;
    memset(&c, 0, sizeof c);
    c.version = 1;
    c.info = (void *)(intptr_t)fd;
    c.getFileDescriptor = fd_of;
    c.perform = perform;
    return RLRunLoopSourceCreate(0, (RLRunLoopSourceContext *)&c);
}

static void w5_setup_b(void) {
    w5_src_b = fd_source(w5.sv[1], w5_perform_b);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), w5_src_b, MODE);
}

/* The timed part of W5 and its report, for either kind of source: loop b's
   thread is set up by `setup_b`, this thread's source is already added. */
static void w5_run(void) {
    while (w5.i < w5.n) RLRunLoopRunInMode(MODE, 10.0, false);
}

static long long w5_stop_b(void) {
    return peer_stop(&w5_b);
}

static void w5_ping_pong(const char *name, void (*setup_b)(void)) {
    peer_start(&w5_b, setup_b);
    bl_run_w5(name, &w5, w5_run, w5_stop_b);
}

static void run_w5(double arg) {
    bl_w5_open(&w5, (long)arg);
    RLRunLoopRef a = RLRunLoopGetCurrent();
    RLRunLoopSourceRef src_a = fd_source(w5.sv[0], w5_perform_a);
    RLRunLoopAddSource(a, src_a, MODE);
    w5_ping_pong("w5", w5_setup_b);
    RLRunLoopSourceInvalidate(src_a);
    RLRelease(src_a);
    RLRunLoopSourceInvalidate(w5_src_b);
    RLRelease(w5_src_b);
    close(w5.sv[0]);
    close(w5.sv[1]);
    free(w5.rtt);
}

/* ---- W5 through RLFileDescriptor (read callbacks re-enabled each time) --- */

static struct {
    RLFileDescriptorRef fb;
    RLRunLoopSourceRef src_b;
} w5fd;

static void w5fd_on_b(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)types;
    (void)info;
    w5_perform_b((void *)(intptr_t)RLFileDescriptorGetNativeDescriptor(f));
    RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
}

static void w5fd_on_a(RLFileDescriptorRef f, RLOptionFlags types, void *info) {
    (void)types;
    (void)info;
    w5_perform_a((void *)(intptr_t)RLFileDescriptorGetNativeDescriptor(f));
    if (w5.i < w5.n) RLFileDescriptorEnableCallBacks(f, kRLFileDescriptorReadCallBack);
}

static void w5fd_setup_b(void) {
    w5fd.fb = RLFileDescriptorCreate(w5.sv[1], false, w5fd_on_b, NULL);
    w5fd.src_b = RLFileDescriptorCreateRunLoopSource(w5fd.fb, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), w5fd.src_b, MODE);
    RLFileDescriptorEnableCallBacks(w5fd.fb, kRLFileDescriptorReadCallBack);
}

static void run_w5fd(double arg) {
    bl_w5_open(&w5, (long)arg);
    RLRunLoopRef a = RLRunLoopGetCurrent();
    RLFileDescriptorRef fa = RLFileDescriptorCreate(w5.sv[0], false, w5fd_on_a, NULL);
    RLRunLoopSourceRef src_a = RLFileDescriptorCreateRunLoopSource(fa, 0);
    RLRunLoopAddSource(a, src_a, MODE);
    RLFileDescriptorEnableCallBacks(fa, kRLFileDescriptorReadCallBack);
    w5_ping_pong("w5fd", w5fd_setup_b);
    RLFileDescriptorInvalidate(fa);
    RLRelease(fa);
    RLRelease(src_a);
    RLFileDescriptorInvalidate(w5fd.fb);
    RLRelease(w5fd.fb);
    RLRelease(w5fd.src_b);
    close(w5.sv[0]);
    close(w5.sv[1]);
    free(w5.rtt);
}

/* ---- W12: TCP echo over loopback through RLSocket (CFSocket) --------------- */
/* Written as a CFSocket program is: the peer loop's listening socket accepts
   in its accept callback and wraps the connection with a data callback that
   sends each chunk back; the client's data callback records the round trip
   and sends the byte back again. */

static struct {
    bl_w1 rt;
    peer_thread b;
    RLSocketRef listener, server, client;
    RLRunLoopSourceRef listener_src, server_src, client_src;
    struct sockaddr_in address;
    atomic_int accepted;
} w12;

static void w12_echo(RLSocketRef s, RLSocketCallBackType type, RLCFDataRef address, const void *data, void *info) {
    (void)address;
    (void)info;
    if (type == kRLSocketDataCallBack && RLCFDataGetLength(data) > 0) RLSocketSendData(s, NULL, data, 0);
}

static void w12_accepted(RLSocketRef s, RLSocketCallBackType type, RLCFDataRef address, const void *data, void *info) {
    (void)s;
    (void)address;
    (void)info;
    if (type != kRLSocketAcceptCallBack) return;
    RLSocketNativeHandle fd = *(const RLSocketNativeHandle *)data;
    bl_tcp_nodelay(fd);
    w12.server = RLSocketCreateWithNative(NULL, fd, kRLSocketDataCallBack, w12_echo, NULL);
    w12.server_src = RLSocketCreateRunLoopSource(NULL, w12.server, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), w12.server_src, MODE);
    atomic_store(&w12.accepted, 1);
}

static void w12_listen_b(void) {
    bl_w12_listen_address(&w12.address);
    RLCFDataRef address = RLCFDataCreate(NULL, (const uint8_t *)&w12.address, sizeof w12.address);
    RLSocketSignature signature = {PF_INET, SOCK_STREAM, IPPROTO_TCP, address};
    w12.listener = RLSocketCreateWithSocketSignature(NULL, &signature, kRLSocketAcceptCallBack, w12_accepted, NULL);
    RLCFRelease(address);
    if (!w12.listener) {
        perror("w12: listen");
        exit(1);
    }
    RLCFDataRef bound = RLSocketCopyAddress(w12.listener);
    memcpy(&w12.address, RLCFDataGetBytePtr(bound), sizeof w12.address);
    RLCFRelease(bound);
    w12.listener_src = RLSocketCreateRunLoopSource(NULL, w12.listener, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), w12.listener_src, MODE);
}

static void w12_answered(RLSocketRef s, RLSocketCallBackType type, RLCFDataRef address, const void *data, void *info) {
    (void)address;
    (void)info;
    if (type != kRLSocketDataCallBack || RLCFDataGetLength(data) == 0) return;
    if (bl_w1_back(&w12.rt)) RLRunLoopStop(RLRunLoopGetCurrent());
    else RLSocketSendData(s, NULL, data, 0);
}

static void w12_send_first(void) {
    RLCFDataRef byte = RLCFDataCreate(NULL, (const uint8_t *)"x", 1);
    RLSocketSendData(w12.client, NULL, byte, 0);
    RLCFRelease(byte);
}

static void w12_run(void) {
    while (w12.rt.i < w12.rt.n) RLRunLoopRunInMode(MODE, 10.0, false);
}

static long long w12_stop_b(void) {
    return peer_stop(&w12.b);
}

static void w12_connect(void) {
    RLCFDataRef address = RLCFDataCreate(NULL, (const uint8_t *)&w12.address, sizeof w12.address);
    RLSocketSignature signature = {PF_INET, SOCK_STREAM, IPPROTO_TCP, address};
    w12.client =
        RLSocketCreateConnectedToSocketSignature(NULL, &signature, kRLSocketDataCallBack, w12_answered, NULL, 10.0);
    RLCFRelease(address);
    if (!w12.client) {
        perror("w12: connect");
        exit(1);
    }
    bl_tcp_nodelay(RLSocketGetNative(w12.client));
    w12.client_src = RLSocketCreateRunLoopSource(NULL, w12.client, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), w12.client_src, MODE);
    while (!atomic_load(&w12.accepted)) bl_spin_pause();
}

static void w12_close(RLSocketRef s, RLRunLoopSourceRef src) {
    RLSocketInvalidate(s);
    RLRelease(src);
    RLRelease(s);
}

static void run_w12(double arg) {
    bl_w1_begin(&w12.rt, (long)arg);
    peer_start(&w12.b, w12_listen_b);
    w12_connect();
    bl_run_w12(&w12.rt, w12_send_first, w12_run, w12_stop_b);
    w12_close(w12.client, w12.client_src);
    w12_close(w12.server, w12.server_src);
    w12_close(w12.listener, w12.listener_src);
    free(w12.rt.rtt);
}

/* ---- W6: idle loop ---------------------------------------------------------- */

static void never(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}

static void run_w6(double secs) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 3600, 0, 0, 0, never, NULL);
    RLRunLoopAddTimer(rl, t, MODE);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    bl_usage u0 = bl_usage_now(false);
    RLRunLoopRunInMode(MODE, secs, false);
    bl_usage u1 = bl_usage_now(false);
    long long sc1 = bl_sc_read(sc);
    int threads = bl_threads();
    bl_report_w6(u0, u1, threads, sc0, sc1);
    bl_sc_close(sc);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* ---- E3, E6: W3 and W6 with the loop inside a host's poll() loop ------------ */
/* The host sleeps in poll() on the embedding descriptor (CRunLoopEmbed.h) and
   runs one non-blocking pass when it is readable. E3 is W3's 1 ms timer that
   way (lateness against running the loop directly), E6 is W6's idle loop
   (the host must never wake). Both count the host's wake-ups. */

static long embed_host_loop(RLRunLoopRef rl, uint64_t until_ns) {
    int fd = RLRunLoopEmbedGetFD(rl);
    long wakeups = 0;
    for (;;) {
        uint64_t now = bl_now_ns();
        if (now >= until_ns) return wakeups;
        int timeout;
        RLRunLoopEmbedPrepare(rl, MODE, &timeout);
        int left_ms = (int)((until_ns - now + 999999) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, left_ms) > 0) { /* the host's own deadline only; no timeout from the loop */
            wakeups++;
            RLRunLoopRunInMode(MODE, 0, false);
        }
    }
}

static void run_e3(double secs) {
    uint64_t t0;
    bl_usage u0;
    RLRunLoopTimerRef t = w3_start(secs, &t0, &u0);
    long wakeups = embed_host_loop(RLRunLoopGetCurrent(), t0 + (uint64_t)(secs * 1e9));
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w3("e3", w3.fires, w3.cap, w3.jit, w3.first, t0, t1, u0, u1, wakeups);
    w3_stop(t);
}

static void run_e6(double secs) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 3600, 0, 0, 0, never, NULL);
    RLRunLoopAddTimer(rl, t, MODE);
    RLRunLoopEmbedGetFD(rl);
    int sc = bl_sc_open();
    long long sc0 = bl_sc_read(sc);
    bl_usage u0 = bl_usage_now(false);
    long wakeups = embed_host_loop(rl, bl_now_ns() + (uint64_t)(secs * 1e9));
    bl_usage u1 = bl_usage_now(false);
    long long sc1 = bl_sc_read(sc);
    bl_result_begin("e6");
    bl_result("host_wakeups", (double)wakeups);
    bl_result("cpu_us", u1.cpu_us - u0.cpu_us);
    bl_result("vcsw", (double)(u1.vcsw - u0.vcsw));
    if (sc0 >= 0) bl_result("syscalls", (double)(sc1 - sc0));
    bl_result_end();
    bl_sc_close(sc);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* ---- W7: system calls per pass ------------------------------------------------ */

static peer_thread w7_b;

static void w7_on_b(void *info) {
    (void)info;
    bl_w7_handled();
}
static void w7_spin_b(void *info) {
    (void)info;
    bl_w7_hold();
}

static void w7_send(void) {
    RLRunLoopPerformFunction(w7_b.rl, MODE, w7_on_b, NULL);
    RLRunLoopWakeUp(w7_b.rl);
}

/* Lets the loop go back to sleep. */
static void w7_settle(void) {
    uint64_t until = bl_now_ns() + 1000000;
    while (!RLRunLoopIsWaiting(w7_b.rl) && bl_now_ns() < until) bl_spin_pause();
}

static void w7_hold(void) {
    RLRunLoopPerformFunction(w7_b.rl, MODE, w7_spin_b, NULL);
    RLRunLoopWakeUp(w7_b.rl);
}

static void w7_wake(void) {
    RLRunLoopWakeUp(w7_b.rl);
}

/* b.sc: every system call the loop thread made from start to stop, which is
   n woken passes + the busy pass + the stop; subtract nothing, divide by n. */
static long long w7_stop(void) {
    return peer_stop(&w7_b);
}

static void run_w7(double arg) {
    static const bl_w7_peer peer = {w7_send, w7_settle, w7_hold, w7_wake, w7_stop};
    peer_start(&w7_b, NULL);
    bl_run_w7((long)arg, &peer);
}

/* ---- scale: adding and removing many items (ours only) --------------------- */

static void scale_perform(void *info) {
    (void)info;
}
/* Version-1 sources without a descriptor: what their membership costs, with
   no system call in the measurement. */
static int scale_no_fd(void *info) {
    (void)info;
    return -1;
}
static void scale_observe(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}

/* Removal visits the items in a scrambled order (a stride coprime with n), so
   neither the first nor the last item is always the one removed. */
static long scale_index(long i, long n) {
    return (long)(((unsigned long long)i * 7919ULL) % (unsigned long long)n);
}

static double scale_ns_per(uint64_t t0, uint64_t t1, long n) {
    return (double)(t1 - t0) / (double)n;
}

/* The items' membership calls, through one signature. */
typedef void (*scale_op)(RLRunLoopRef rl, void *item, RLRunLoopMode mode);
static void add_source(RLRunLoopRef rl, void *s, RLRunLoopMode mode) {
    RLRunLoopAddSource(rl, s, mode);
}
static void remove_source(RLRunLoopRef rl, void *s, RLRunLoopMode mode) {
    RLRunLoopRemoveSource(rl, s, mode);
}
static void add_observer(RLRunLoopRef rl, void *o, RLRunLoopMode mode) {
    RLRunLoopAddObserver(rl, o, mode);
}
static void remove_observer(RLRunLoopRef rl, void *o, RLRunLoopMode mode) {
    RLRunLoopRemoveObserver(rl, o, mode);
}
static void add_timer(RLRunLoopRef rl, void *t, RLRunLoopMode mode) {
    RLRunLoopAddTimer(rl, t, mode);
}
static void remove_timer(RLRunLoopRef rl, void *t, RLRunLoopMode mode) {
    RLRunLoopRemoveTimer(rl, t, mode);
}

/* Times adding the n items to `mode` and removing them (in a scrambled
   order), releases them, and reports <kind>_add_ns_<what> and
   <kind>_remove_ns_<what>. */
static void scale_time(RLRunLoopRef rl, RLRunLoopMode mode, const char *kind, const char *what, void **items, long n,
                       scale_op add, scale_op remove) {
    uint64_t t0 = bl_now_ns();
    for (long i = 0; i < n; i++) add(rl, items[i], mode);
    uint64_t t1 = bl_now_ns();
    for (long i = 0; i < n; i++) remove(rl, items[scale_index(i, n)], mode);
    uint64_t t2 = bl_now_ns();
    for (long i = 0; i < n; i++) RLRelease(items[i]);
    char key[64];
    snprintf(key, sizeof key, "%s_add_ns_%s", kind, what);
    bl_result(key, scale_ns_per(t0, t1, n));
    snprintf(key, sizeof key, "%s_remove_ns_%s", kind, what);
    bl_result(key, scale_ns_per(t1, t2, n));
}

static void run_scale(double arg) {
    long n = (long)arg;
    if (n % 7919 == 0) n++;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    void **items = calloc((size_t)n, sizeof *items);
    bl_result_begin("scale");
    bl_result("n", (double)n);

    for (int common = 0; common < 2; common++) {
        RLRunLoopMode mode = common ? kRLRunLoopCommonModes : MODE;
        const char *what = common ? "common" : "mode";

        for (long i = 0; i < n; i++) {
            RLRunLoopSourceContext c = {.perform = scale_perform};
            items[i] = RLRunLoopSourceCreate(i % 3, &c);
        }
        scale_time(rl, mode, "source0", what, items, n, add_source, remove_source);

        for (long i = 0; i < n; i++) {
            RLRunLoopSourceContext1 c = {.version = 1, .getFileDescriptor = scale_no_fd, .perform = scale_perform};
            items[i] = RLRunLoopSourceCreate(i % 3, (RLRunLoopSourceContext *)&c);
        }
        scale_time(rl, mode, "source1", what, items, n, add_source, remove_source);

        for (long i = 0; i < n; i++)
            items[i] = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting, true, i % 3, scale_observe, NULL);
        scale_time(rl, mode, "observer", what, items, n, add_observer, remove_observer);

        RLAbsoluteTime far = RLAbsoluteTimeGetCurrent() + 3600;
        for (long i = 0; i < n; i++) items[i] = RLRunLoopTimerCreate(far + (double)i, 0, 0, 0, never, NULL);
        scale_time(rl, mode, "timer", what, items, n, add_timer, remove_timer);
    }
    bl_result_end();
    free(items);
}

/* ---- W8: oversubscribed ping-pong: 4 pairs of loops on their own threads -- */

#define W8_PAIRS 4

typedef struct w8_pair {
    bl_pair base; /* first: the driver fills it */
    RLRunLoopRef a, b;
    atomic_int stop_b;
} w8_pair;

static w8_pair w8[W8_PAIRS];

static void w8_on_a(void *info);
static void w8_on_b(void *info) {
    w8_pair *p = info;
    RLRunLoopPerformFunction(p->a, MODE, w8_on_a, p);
    RLRunLoopWakeUp(p->a);
}

static void w8_on_a(void *info) {
    w8_pair *p = info;
    if (++p->base.done == p->base.n) {
        RLRunLoopStop(p->a);
        return;
    }
    RLRunLoopPerformFunction(p->b, MODE, w8_on_b, p);
    RLRunLoopWakeUp(p->b);
}

static void *w8_b_main(void *arg) {
    w8_pair *p = arg;
    p->b = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(p->b);
    bl_pair_ready();
    while (!atomic_load(&p->stop_b)) RLRunLoopRunInMode(MODE, 1.0, false);
    keepalive_remove(ka);
    return NULL;
}

static void *w8_a_main(void *arg) {
    w8_pair *p = arg;
    p->a = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(p->a);
    bl_pair_ready();
    bl_pair_wait_go();
    RLRunLoopPerformFunction(p->b, MODE, w8_on_b, p);
    RLRunLoopWakeUp(p->b);
    while (p->base.done < p->base.n) RLRunLoopRunInMode(MODE, 10.0, false);
    keepalive_remove(ka);
    return NULL;
}

static void w8_stop_b(void *pair) {
    w8_pair *p = pair;
    atomic_store(&p->stop_b, 1);
    RLRunLoopStop(p->b);
    RLRunLoopWakeUp(p->b);
}

static void run_w8(double arg) {
    bl_run_w8((long)arg, w8, W8_PAIRS, sizeof *w8, w8_a_main, w8_b_main, w8_stop_b);
}

/* ---- W9 scale ----------------------------------------------------------- */

/* (a) N registered fds, one active: the active eventfd's perform reads it and
   writes it again, so every pass handles exactly one event. */
static struct {
    int active_fd;
    long events, want;
} w9a;

static void w9a_idle(void *info) {
    (void)info;
}
static void w9a_active(void *info) {
    int fd = (int)(intptr_t)info;
    uint64_t v;
    if (read(fd, &v, sizeof v) != sizeof v) return;
    if (++w9a.events == w9a.want) {
        RLRunLoopStop(RLRunLoopGetCurrent());
        return;
    }
    v = 1;
    if (write(fd, &v, sizeof v) != sizeof v) perror("write");
}

static void run_w9a(double arg) {
    long n = (long)arg;
    w9a.want = 50000;
    w9a.events = 0;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    int fds_before = bl_open_fds();
    int *fds = calloc((size_t)n, sizeof(int));
    RLRunLoopSourceRef *srcs = calloc((size_t)n, sizeof *srcs);
    for (long i = 0; i < n; i++) {
        fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fds[i] < 0) {
            perror("eventfd");
            exit(1);
        }
        srcs[i] = fd_source(fds[i], i == n / 2 ? w9a_active : w9a_idle);
        RLRunLoopAddSource(rl, srcs[i], MODE);
    }
    RLRunLoopRunInMode(MODE, 0, false);
    int fds_after = bl_open_fds();
    uint64_t v = 1;
    if (write(fds[n / 2], &v, sizeof v) != sizeof v) perror("write");
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    while (w9a.events < w9a.want) RLRunLoopRunInMode(MODE, 10.0, false);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_report_w9a(w9a.events, t0, t1, u0, u1, fds_after - fds_before - n);
    for (long i = 0; i < n; i++) {
        RLRunLoopSourceInvalidate(srcs[i]);
        RLRelease(srcs[i]);
        close(fds[i]);
    }
    free(srcs);
    free(fds);
}

/* (b) N version-0 sources, one signalled per pass (its perform signals it
   again, so every pass performs exactly one). */
static struct {
    long performs, want;
    RLRunLoopSourceRef active;
} w9b;

static void w9b_idle(void *info) {
    (void)info;
}
static void w9b_active(void *info) {
    (void)info;
    if (++w9b.performs == w9b.want) {
        RLRunLoopStop(RLRunLoopGetCurrent());
        return;
    }
    RLRunLoopSourceSignal(w9b.active);
}

static void run_w9b(double arg) {
    long n = (long)arg;
    w9b.want = 50000;
    w9b.performs = 0;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef *srcs = calloc((size_t)n, sizeof *srcs);
    for (long i = 0; i < n; i++) {
        RLRunLoopSourceContext c;
        memset(&c, 0, sizeof c);
        c.perform = i == n / 2 ? w9b_active : w9b_idle;
        srcs[i] = RLRunLoopSourceCreate((RLIndex)i, &c);
        RLRunLoopAddSource(rl, srcs[i], MODE);
    }
    w9b.active = srcs[n / 2];
    RLRunLoopSourceSignal(w9b.active);
    bl_usage u0 = bl_usage_now(false);
    uint64_t t0 = bl_now_ns();
    while (w9b.performs < w9b.want) RLRunLoopRunInMode(MODE, 10.0, false);
    uint64_t t1 = bl_now_ns();
    bl_usage u1 = bl_usage_now(false);
    bl_result_begin("w9b");
    bl_result("ns_per_pass", (double)(t1 - t0) / (double)w9b.performs);
    bl_result("cpu_ns_per_pass", (u1.cpu_us - u0.cpu_us) * 1e3 / (double)w9b.performs);
    bl_result_end();
    for (long i = 0; i < n; i++) {
        RLRunLoopSourceInvalidate(srcs[i]);
        RLRelease(srcs[i]);
    }
    free(srcs);
}

/* (c) W1's ping-pong with N other modes in each loop (each holding a source):
   waking a sleeping loop must not cost more with more modes; and the same
   ping-pong run in the last mode made (each loop runs it, each function is
   queued for it): finding a mode by name must not cost more either. */
static long w9c_modes;
static void w9c_mode_name(char *buf, size_t size, long i) {
    snprintf(buf, size, "bench.mode.%ld", i);
}

static RLRunLoopSourceRef *w9c_add_modes(RLRunLoopRef rl, long n) {
    RLRunLoopSourceRef *srcs = calloc((size_t)(n ? n : 1), sizeof *srcs);
    for (long i = 0; i < n; i++) {
        char name[32];
        w9c_mode_name(name, sizeof name, i);
        RLRunLoopSourceContext c;
        memset(&c, 0, sizeof c);
        c.perform = noop;
        srcs[i] = RLRunLoopSourceCreate(0, &c);
        RLRunLoopAddSource(rl, srcs[i], name);
    }
    return srcs;
}

/* Each source leaves its own mode by name: invalidating it would visit
   every mode of the loop. */
static void w9c_drop_modes(RLRunLoopRef rl, RLRunLoopSourceRef *srcs, long n) {
    for (long i = 0; i < n; i++) {
        char name[32];
        w9c_mode_name(name, sizeof name, i);
        RLRunLoopRemoveSource(rl, srcs[i], name);
        RLRelease(srcs[i]);
    }
    free(srcs);
}

static RLRunLoopSourceRef *w9c_b_srcs;
static void w9c_setup_b(void) {
    w9c_b_srcs = w9c_add_modes(RLRunLoopGetCurrent(), w9c_modes);
    w1_b.mode = w1_running();
}

/* One ping-pong of `n` round trips in w1_running(), loop b a new thread with its
   own w9c_modes modes; reports the rate and the median under these keys. */
static void w9c_ping_pong(long n, const char *rate_key, const char *median_key) {
    bl_w1_begin(&w1, n);
    peer_start(&w1_b, w9c_setup_b);
    uint64_t t0 = bl_now_ns();
    w1.t_send = t0;
    w1_wake_b();
    w1_run();
    uint64_t t1 = bl_now_ns();
    peer_stop(&w1_b);
    bl_result(rate_key, (double)n / ((double)(t1 - t0) / 1e9));
    bl_result(median_key, bl_median(w1.rtt, n));
    /* Its loop took them out of its modes when its thread ended. */
    for (long i = 0; i < w9c_modes; i++) RLRelease(w9c_b_srcs[i]);
    free(w9c_b_srcs);
    free(w1.rtt);
}

static void run_w9c(double arg) {
    w9c_modes = (long)arg;
    long n = 20000;
    w1_a = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(w1_a);
    RLRunLoopSourceRef *a_srcs = w9c_add_modes(w1_a, w9c_modes);
    char last[32];
    w9c_mode_name(last, sizeof last, w9c_modes - 1);
    bl_result_begin("w9c");
    w9c_ping_pong(n, "rt_per_s", "rtt_med_us");
    w1_mode = w9c_modes ? last : NULL; /* with no other modes, the default is the last made */
    w9c_ping_pong(n, "rt_per_s_last_mode", "rtt_med_us_last_mode");
    w1_mode = NULL;
    bl_result_end();
    w9c_drop_modes(w1_a, a_srcs, w9c_modes);
    keepalive_remove(ka);
}

/* (d) T loops on T threads, all woken by one thread, round after round (each
   round waits until every loop has handled its wake-up). */
#define W9D_MAX 64
static peer_thread w9d_loops[W9D_MAX];

static void w9d_on(void *info) {
    (void)info;
    bl_w9d_handled();
}

static void w9d_start(int i) {
    peer_start(&w9d_loops[i], NULL);
}
static void w9d_wake(int i) {
    RLRunLoopPerformFunction(w9d_loops[i].rl, MODE, w9d_on, NULL);
    RLRunLoopWakeUp(w9d_loops[i].rl);
}
static void w9d_stop(int i) {
    peer_stop(&w9d_loops[i]);
}

static void run_w9d(double arg) {
    bl_run_w9d(arg, W9D_MAX, w9d_start, w9d_wake, w9d_stop);
}

/* ---- W11: a short run under API pressure ---------------------------------- */
/* Two threads add batches of W11_BATCH timers (due now), sources and
   observers (of every activity) to the loop's mode, then invalidate and
   release them, as fast as they can, and a third describes the loop over and
   over (RLCopyDescription), while the loop's own thread runs `arg` runs of
   10 ms each: how much later than its 10 ms each run returns (p50, p99,
   max), and how much work the callers got done meanwhile. A run must return
   close to its timeout whatever the callers do. */
#define W11_RUN_S    0.010
#define W11_CHURNERS 2
#define W11_BATCH    100
static struct {
    RLRunLoopRef rl;
    atomic_int stop;
    atomic_long churned, described;
} w11;

static void w11_fired(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
}
static void w11_observed(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
}

static void *w11_churn(void *arg) {
    (void)arg;
    RLRunLoopSourceContext c;
    memset(&c, 0, sizeof c);
    c.perform = noop;
    RLRunLoopTimerRef t[W11_BATCH];
    RLRunLoopSourceRef s[W11_BATCH];
    RLRunLoopObserverRef o[W11_BATCH];
    while (!atomic_load_explicit(&w11.stop, memory_order_relaxed)) {
        for (int i = 0; i < W11_BATCH; i++) {
            t[i] = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0, 0, 0, w11_fired, NULL);
            RLRunLoopAddTimer(w11.rl, t[i], MODE);
            s[i] = RLRunLoopSourceCreate(0, &c);
            RLRunLoopAddSource(w11.rl, s[i], MODE);
            o[i] = RLRunLoopObserverCreate(kRLRunLoopAllActivities, true, 0, w11_observed, NULL);
            RLRunLoopAddObserver(w11.rl, o[i], MODE);
        }
        for (int i = 0; i < W11_BATCH; i++) {
            RLRunLoopTimerInvalidate(t[i]);
            RLRelease(t[i]);
            RLRunLoopSourceInvalidate(s[i]);
            RLRelease(s[i]);
            RLRunLoopObserverInvalidate(o[i]);
            RLRelease(o[i]);
        }
        atomic_fetch_add_explicit(&w11.churned, W11_BATCH, memory_order_relaxed);
    }
    return NULL;
}

static void *w11_describe(void *arg) {
    (void)arg;
    while (!atomic_load_explicit(&w11.stop, memory_order_relaxed)) {
        free(RLCopyDescription(w11.rl));
        atomic_fetch_add_explicit(&w11.described, 1, memory_order_relaxed);
    }
    return NULL;
}

static void run_w11(double arg) {
    long runs = arg < 1 ? 1 : (long)arg;
    w11.rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef ka = keepalive_add(w11.rl);
    double *over = calloc((size_t)runs, sizeof *over);
    pthread_t threads[W11_CHURNERS + 1];
    for (int i = 0; i < W11_CHURNERS; i++) pthread_create(&threads[i], NULL, w11_churn, NULL);
    pthread_create(&threads[W11_CHURNERS], NULL, w11_describe, NULL);
    /* The pressure is on before the first run. */
    while (atomic_load(&w11.churned) < 2 * W11_BATCH || atomic_load(&w11.described) < 2) bl_spin_pause();
    long churned0 = atomic_load(&w11.churned), described0 = atomic_load(&w11.described);
    uint64_t start = bl_now_ns();
    for (long i = 0; i < runs; i++) {
        uint64_t t0 = bl_now_ns();
        RLRunLoopRunInMode(MODE, W11_RUN_S, false);
        over[i] = (double)(bl_now_ns() - t0) / 1e6 - W11_RUN_S * 1e3;
    }
    double secs = (double)(bl_now_ns() - start) / 1e9;
    long churned = atomic_load(&w11.churned) - churned0, described = atomic_load(&w11.described) - described0;
    atomic_store(&w11.stop, 1);
    for (int i = 0; i <= W11_CHURNERS; i++) pthread_join(threads[i], NULL);
    bl_result_begin("w11");
    bl_result("over_med_ms", bl_percentile(over, runs, 50));
    bl_result("over_p99_ms", bl_percentile(over, runs, 99));
    bl_result("over_max_ms", bl_percentile(over, runs, 100));
    bl_result("items_per_s", 3.0 * (double)churned / secs);
    bl_result("descriptions_per_s", (double)described / secs);
    bl_result_end();
    free(over);
    keepalive_remove(ka);
}

static const bl_workload workloads[] = {
    {"w1", run_w1, 100000},  {"w2", run_w2, 1000000},    {"w3", run_w3, 2.0},    {"w4", run_w4, 1000000},
    {"w5", run_w5, 100000},  {"w5fd", run_w5fd, 100000}, {"w6", run_w6, 2.0},    {"w7", run_w7, 20000},
    {"e3", run_e3, 2.0},     {"e6", run_e6, 2.0},        {"w8", run_w8, 100000}, {"w9a", run_w9a, 10000},
    {"w9b", run_w9b, 10000}, {"w9c", run_w9c, 1000},     {"w9d", run_w9d, 8},    {"scale", run_scale, 40000},
    {"w11", run_w11, 200},   {"w12", run_w12, 50000},
};

int main(int argc, char **argv) {
    return bl_main(argc, argv, workloads, (int)(sizeof workloads / sizeof *workloads), 3);
}
