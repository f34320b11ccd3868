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

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
uint64_t bl_now_ns(void);
/* Spread of the i-th of n timers over [0, 1): a deterministic scramble (golden ratio). */
double   bl_spread(long i);

/* Per-thread system-call counter. bl_sc_open() opens one for the calling thread
   (-1 when perf events are unavailable); bl_sc_read() returns the count so far
   minus the read calls made by bl_sc_read itself; -1 on error. */
int       bl_sc_open(void);
long long bl_sc_read(int fd);
void      bl_sc_close(int fd);
bool      bl_sc_available(void);

/* malloc-family calls so far in the process, or -1 when malloc_count.so is not preloaded. */
long long bl_mallocs(void);

/* Resource usage of the whole process (thread=false) or the calling thread. */
typedef struct { double cpu_us; long vcsw, ivcsw; } bl_usage;
bl_usage bl_usage_now(bool thread);
/* Threads in the process (from /proc/self/status). */
int      bl_threads(void);

/* Statistics on an array of doubles (sorted in place). */
double bl_median(double *v, long n);
double bl_percentile(double *v, long n, double p);  /* p in [0,100]; sorts */
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
void bl_report_w1(long n, double secs, double *rtt, bl_usage u0, bl_usage u1, long long m0, long long m1,
                  long long sc0, long long sc1, long long peer_sc);
/* W2: n timers added from t0 to t_added, `fired` of them, the last at t_last,
   their lateness (us), usage and malloc counts around the adding. */
void bl_report_w2(long n, uint64_t t0, uint64_t t_added, uint64_t t_last, long fired, double *late, bl_usage u0,
                  bl_usage u1, long long m0, long long m1);

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
typedef struct { const char *name; void (*fn)(double arg); double default_arg; } bl_workload;
/* Runs argv[1] with argv[2] (or its default). With no arguments, runs every
   workload `runs` times (each in a child process, via /proc/self/exe) and prints
   the median of every reported value. Returns the exit status. */
int bl_main(int argc, char **argv, const bl_workload *wl, int nwl, int runs);
#ifdef __cplusplus
}
#endif
#endif
