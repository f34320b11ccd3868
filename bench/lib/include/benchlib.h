/*
 * benchlib.h: helpers shared by every benchmark program (C and Swift).
 *
 * Clocks, per-thread system-call counters (perf tracepoint raw_syscalls:sys_enter),
 * rusage snapshots, malloc counts (when malloc_count.so is preloaded), statistics
 * and the "RESULT key=value ..." line every program prints for the driver.
 */
#ifndef BENCHLIB_H
#define BENCHLIB_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
uint64_t bl_now_ns(void);
/* Spread of the i-th of n timers over [0, 1): a deterministic scramble (golden ratio). */
double bl_spread(long i);

/* Per-thread system-call counter. bl_sc_open() opens one for the calling thread
   (-1 when perf events are unavailable); bl_sc_read() returns the count so far
   minus the read calls made by bl_sc_read itself; -1 on error. */
int bl_sc_open(void);
long long bl_sc_read(int fd);
void bl_sc_close(int fd);
bool bl_sc_available(void);
/* A thread's system calls over a stretch: bl_sc_begin opens a counter and
   reads it; bl_sc_end returns the calls since (-1 when not countable) and
   closes it. */
typedef struct {
    int fd;
    long long start;
} bl_sc_span;
bl_sc_span bl_sc_begin(void);
long long bl_sc_end(bl_sc_span *s);

/* malloc-family calls so far in the process, or -1 when malloc_count.so is not preloaded. */
long long bl_mallocs(void);

/* Resource usage of the whole process (thread=false) or the calling thread. */
typedef struct {
    double cpu_us;
    long vcsw, ivcsw;
} bl_usage;
bl_usage bl_usage_now(bool thread);
/* Threads in the process (from /proc/self/status). */
int bl_threads(void);

/* Statistics on an array of doubles (sorted in place). */
double bl_median(double *v, long n);
double bl_percentile(double *v, long n, double p); /* p in [0,100]; sorts */
double bl_mean(const double *v, long n);

/* Result lines: bl_result_begin("w1"); bl_result("rt_per_s", x); ...; bl_result_end(); */
void bl_result_begin(const char *workload);
void bl_result(const char *key, double value);
void bl_result_end(void);

/* The reports every peer shares, so each metric is computed the same way for
   all of them. */
/* W1: n round trips in `secs`, their RTTs (us), the thread's usage and
   malloc counts around them, and system calls (this thread: sc0..sc1, plus
   the peer thread's; negative when not countable). */
void bl_report_w1(long n, double secs, double *rtt, bl_usage u0, bl_usage u1, long long m0, long long m1, long long sc0,
                  long long sc1, long long peer_sc);
/* W2: n timers added from t0 to t_added, `fired` of them, the last at t_last,
   their lateness (us), usage and malloc counts around the adding. */
void bl_report_w2(long n, uint64_t t0, uint64_t t_added, uint64_t t_last, long fired, double *late, bl_usage u0,
                  bl_usage u1, long long m0, long long m1);

/* W3: a 1 ms repeating timer whose first fire was due at `first`, run from t0
   to t1; `fires` fires, the lateness of the first `cap` in jit (us). `name` is
   the row (w3, or e3 for the embedded variant, which passes its host's
   wake-ups; negative: not reported). */
void bl_report_w3(const char *name, long fires, long cap, double *jit, uint64_t first, uint64_t t0, uint64_t t1,
                  bl_usage u0, bl_usage u1, long host_wakeups);
/* W4: n blocks queued from t0 to t1 and drained by t2, malloc counts around. */
void bl_report_w4(long n, uint64_t t0, uint64_t t1, uint64_t t2, long long m0, long long m1);
/* W5 (and its variants, named by `name`): n round trips from t0 to t1, their
   RTTs (us), system calls as in bl_report_w1. */
void bl_report_w5(const char *name, long n, uint64_t t0, uint64_t t1, double *rtt, long long sc0, long long sc1,
                  long long peer_sc);
/* W6: an idle loop's usage and system calls around its run, `threads` in the
   process. */
void bl_report_w6(bl_usage u0, bl_usage u1, int threads, long long sc0, long long sc1);
/* W7: n wake-ups; `counted` false when system calls are not countable. waker:
   the waker's system calls over the n wake-ups of a sleeping loop, loop_sc the
   woken loop's; a0..a1 the waker's and t0..t1 its time over n wake-ups of a
   loop that is awake. */
void bl_report_w7(long n, bool counted, long long waker, long long loop_sc, long long a0, long long a1, uint64_t t0,
                  uint64_t t1);
/* W9a: `events` events handled from t0 to t1, and the descriptors the peer
   opened beyond the n it was given. */
void bl_report_w9a(long events, uint64_t t0, uint64_t t1, bl_usage u0, bl_usage u1, int extra_fds);

/* Descriptors open in the process (not counting the one used to count them);
   -1 when /proc is not readable. */
int bl_open_fds(void);

/* W8: `pairs` pairs of threads, each with its own loop, ping-ponging n round
   trips. For pair k, the driver runs b_main(pair(k, n)) on one thread, then
   a_main on another; each calls bl_pair_ready() once its loop is ready, and
   a_main calls bl_pair_wait_go() before its first send and returns after its
   n round trips. Timed from go until every a_main has returned; then
   stop_b(pair) makes b_main return. Each pair, of `size` bytes in the array
   `pairs`, starts with a bl_pair, which the driver fills (the rest zeroed).
   Prints the w8 row. */
typedef struct {
    long n, done;
} bl_pair;
void bl_run_w8(long n, void *pairs, int count, size_t size, void *(*a_main)(void *), void *(*b_main)(void *),
               void (*stop_b)(void *pair));
void bl_pair_ready(void);
void bl_pair_wait_go(void);

/* W9d: `arg` loops on as many threads (1 to max), all woken by this thread
   round after round; each round waits until every loop has called
   bl_w9d_handled() for its wake-up. start(i)/stop(i) start and stop loop i,
   wake(i) wakes it. Prints the w9d row. */
void bl_run_w9d(double arg, int max, void (*start)(int i), void (*wake)(int i), void (*stop)(int i));
void bl_w9d_handled(void);

/* W1: n cross-thread round trips: this thread's loop wakes the peer's loop,
   which wakes this one back. From the callback of the wake-up back,
   bl_w1_back records a round trip and returns true after the n-th (the peer
   stops its loop), else the caller wakes the peer again. bl_run_w1 times it:
   wake_b() sends the first, run() returns once bl_w1_back said true, stop_b()
   stops the peer loop and returns its system calls (or -1). Prints the w1
   row. */
typedef struct {
    long n, i;
    double *rtt;
    uint64_t t_send;
} bl_w1;
void bl_w1_begin(bl_w1 *w, long n);
bool bl_w1_back(bl_w1 *w);
void bl_run_w1(bl_w1 *w, void (*wake_b)(void), void (*run)(void), long long (*stop_b)(void));

/* W2's record: n timers, the i-th due bl_spread(i) seconds after t0 (which
   the peer sets right before adding them). bl_w2_fired(i) from timer i's
   callback records its lateness; returns true when all n have fired. */
typedef struct {
    long n, fired;
    uint64_t t0, t_last;
    double *late;
} bl_w2;
void bl_w2_begin(bl_w2 *w, long n);
bool bl_w2_fired(bl_w2 *w, long i);

/* W3's record: a 1 ms timer run for `secs`, its fires' lateness against the
   1 ms grid that starts at `first` (set by the peer). bl_w3_fired from the
   timer's callback. */
typedef struct {
    uint64_t first;
    long fires, cap;
    double *jit;
} bl_w3;
void bl_w3_begin(bl_w3 *w, double secs);
void bl_w3_fired(bl_w3 *w);

/* W5: a one-byte ping-pong over a socketpair; sv[0] is watched by this
   thread's loop, sv[1] by the peer loop's. bl_w5_open makes both ends (non-
   blocking) and room for n round trips (exits when it cannot). When sv[1] is
   readable the peer calls bl_w5_echo(sv[1]); when sv[0] is, this thread calls
   bl_w5_answered, which records a round trip and sends the next byte, and
   returns true after the n-th (the peer stops its loop). bl_run_w5 times it:
   sends the first byte, calls run() (which returns once bl_w5_answered said
   true), calls stop_b() (the peer loop's system calls, or -1), and prints
   the row `name`. */
typedef struct {
    int sv[2];
    long n, i;
    double *rtt;
    uint64_t t_send;
} bl_w5;
void bl_w5_open(bl_w5 *w, long n);
void bl_w5_echo(int fd);
bool bl_w5_answered(bl_w5 *w);
void bl_run_w5(const char *name, bl_w5 *w, void (*run)(void), long long (*stop_b)(void));

/* W12: a TCP echo over loopback, one byte each way, between two loops on two
   threads (W5's shape, each end through its library's socket API): the peer
   thread's loop listens on 127.0.0.1 (bl_w12_listen_address: any port) and
   accepts, this thread's loop connects; both ends set TCP_NODELAY
   (bl_tcp_nodelay). A round trip is recorded in a bl_w1 (bl_w1_begin, and
   bl_w1_back from the client's read callback, which sends the next byte
   unless it returned true). bl_run_w12 times it: send_first() sends the first
   byte, run() returns after the n-th round trip, stop_b() stops the peer loop
   and returns its system calls (or -1); prints the w12 row as W5's. */
struct sockaddr_in;
void bl_w12_listen_address(struct sockaddr_in *sin);
void bl_tcp_nodelay(int fd);
void bl_run_w12(bl_w1 *w, void (*send_first)(void), void (*run)(void), long long (*stop_b)(void));

/* W7: the system calls of a wake-up. A peer names how it reaches its loop
   (started on another thread before bl_run_w7); the driver wakes the sleeping
   loop n times with work (send, then settle if given, until the loop is
   asleep again), then holds the loop in a callout (hold) and wakes it n times
   more (wake), then stops it. The work that send queues calls
   bl_w7_handled(), the work that hold queues calls bl_w7_hold() (it returns
   when the driver is done). A peer whose wake-up is its work (an async
   handle) leaves hold NULL and calls bl_w7_woken() from the wake-up's
   callback: the driver then asks that callback to hold. stop() returns the
   loop thread's system calls, or -1. Prints the w7 row. */
typedef struct {
    void (*send)(void);
    void (*settle)(void);
    void (*hold)(void);
    void (*wake)(void);
    long long (*stop)(void);
} bl_w7_peer;
void bl_run_w7(long n, const bl_w7_peer *peer);
void bl_w7_handled(void);
void bl_w7_hold(void);
void bl_w7_woken(void);

/* Busy-wait helpers. */
void bl_spin_pause(void);
void bl_sleep_us(long us);

#ifdef __cplusplus
}
#endif
#endif

#ifndef BENCHLIB_MAIN_H
#define BENCHLIB_MAIN_H
#ifdef __cplusplus
extern "C" {
#endif
/* One workload entry: name, function taking the size argument (count or seconds). */
typedef struct {
    const char *name;
    void (*fn)(double arg);
    double default_arg;
} bl_workload;
/* Runs argv[1] with argv[2] (or its default). With no arguments, runs every
   workload `runs` times (each in a child process, via /proc/self/exe) and prints
   the median of every reported value. Returns the exit status. */
int bl_main(int argc, char **argv, const bl_workload *wl, int nwl, int runs);
#ifdef __cplusplus
}
#endif
#endif
