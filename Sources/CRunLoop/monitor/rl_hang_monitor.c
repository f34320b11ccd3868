/*
 * rl_hang_monitor.c: RLHangMonitor, a stall monitor built on the public
 * API plus POSIX.
 *
 * Over 500 lines: the observers, the watchdog and the backtrace capture
 * share the one-word `state` protocol below; it reads best in one place.
 *
 * Invariants:
 *  - `state` is the only thing the loop's thread writes per activity: one
 *    64-bit word, read from `clock` (the coarse monotonic clock when its
 *    tick is under threshold / 20), (time since `epoch_ns` in 1024 ns units << 16 | mode index
 *    << 4 | awake << 3 | activity bit index), stored seq_cst. The watchdog
 *    reads it; equal words mean "no activity since".
 *  - The watchdog sleeps on `cv` (CLOCK_MONOTONIC): timed while the loop is
 *    awake, untimed ("parked") while it sleeps or is idle. `parked` is set
 *    under `mu` before the watchdog re-reads `state` and waits; an observer
 *    that stores an awake word and then exchanges `parked` from true takes
 *    `mu` and signals. Both sides use seq_cst, so one always sees the other.
 *  - The monitor is a held RL object (rl_object.h): its last reference
 *    invalidates it. Its holds are the references' one, the watchdog
 *    thread's, and the observers' (their context retains every mode record,
 *    and a record's hold is on the monitor); memory is freed at the last
 *    hold, so an observer callout in progress or a detached watchdog never
 *    touches freed memory.
 *  - Mode records are appended, never removed, until the monitor is freed;
 *    `modes` (the array) is read and grown under `mu`.
 *  - One backtrace capture at a time in the process (`capture.lock`); the
 *    handler writes the buffer only after it claimed the request by
 *    exchanging `armed` from 1 to 0, and the watchdog reads it only after the
 *    handler's sem_post, or after it cancelled the request itself.
 *  - No lock of this file is held across a user callback or a call that takes
 *    a loop's lock, except `mu` around RLRunLoopAddObserver/Invalidate (order
 *    mu -> loop lock; the loop never calls us with its lock held).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "CRunLoop.h"
#include "rl_extras.h"

#define SIGNAL_OFFSET      6
#define CAPTURE_TIMEOUT_NS 1000000000LL
#define MODE_INDEX_MAX     4095u

#define W_ACTIVITY_MASK 0x7u
#define W_AWAKE         0x8u
#define W_MODE_SHIFT    4
#define W_TIME_SHIFT    16
#define TIME_UNIT_SHIFT 10 /* 1024 ns per unit: 48 bits last 9 years */

typedef struct hang_mode hang_mode;

struct __RLHangMonitor {
    rl_held_object base;
    RLRunLoopRef rl;
    int64_t epoch_ns;
    int64_t threshold_ns;
    clockid_t clock;     /* CLOCK_MONOTONIC, or _COARSE when its tick is < threshold / 20 */
    _Atomic bool manual; /* started on a loop with a manual clock: time is the loop's (set under mu at Start) */
    RLHangMonitorCallBack callback;
    RLHangMonitorContext context;

    /* written by the loop's thread (observers) */
    _Atomic uint64_t state;
    _Atomic int depth; /* runs entered minus exited, as observed */
    _Atomic pid_t tid; /* the loop's thread, once seen */

    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic bool parked;
    bool started;           /* under mu */
    bool quit;              /* under mu */
    bool has_thread;        /* under mu */
    bool handler_installed; /* under mu */
    bool release_info_on_exit;
    pthread_t thread;
    hang_mode **modes; /* under mu */
    size_t mode_count, mode_capacity;
    _Atomic bool valid;
    _Atomic uint64_t stalls;
    _Atomic uint64_t reports;
};

struct hang_mode {
    RLHangMonitorRef monitor;
    uint32_t index;
    char *name;
    RLRunLoopObserverRef early; /* Entry, BeforeTimers, BeforeSources, AfterWaiting */
    RLRunLoopObserverRef late;  /* BeforeWaiting, Exit */
};

/* ---- time and words --------------------------------------------------------- */

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t mono_ns(void) {
    return clock_ns(CLOCK_MONOTONIC);
}

/* The time a stall is measured in: the loop's own on a manual clock (only
   a callout's advance makes time pass while it is awake), else `clock`. */
static int64_t monitor_now(RLHangMonitorRef m) {
    if (atomic_load_explicit(&m->manual, memory_order_relaxed)) return rl_loop_time_ns(m->rl);
    return clock_ns(m->clock);
}

static int64_t word_time_ns(uint64_t w) {
    return (int64_t)((w >> W_TIME_SHIFT) << TIME_UNIT_SHIFT);
}

static unsigned activity_index(RLRunLoopActivity a) {
    return a ? (unsigned)__builtin_ctzl((unsigned long)a) & W_ACTIVITY_MASK : 0;
}

const char *RLRunLoopActivityGetName(RLRunLoopActivity activity) {
    switch (activity) {
    case kRLRunLoopEntry: return "kRLRunLoopEntry";
    case kRLRunLoopBeforeTimers: return "kRLRunLoopBeforeTimers";
    case kRLRunLoopBeforeSources: return "kRLRunLoopBeforeSources";
    case kRLRunLoopBeforeWaiting: return "kRLRunLoopBeforeWaiting";
    case kRLRunLoopAfterWaiting: return "kRLRunLoopAfterWaiting";
    case kRLRunLoopExit: return "kRLRunLoopExit";
    default: return "unknown";
    }
}

int RLHangMonitorGetSignal(void) {
    return SIGRTMIN + SIGNAL_OFFSET;
}

/* ---- references -------------------------------------------------------------- */

static void monitor_hold(RLHangMonitorRef m) {
    rl_object_hold(&m->base);
}

static void monitor_unhold(RLHangMonitorRef m) {
    rl_object_unhold(&m->base);
}

static void monitor_free(rl_object *obj) {
    RLHangMonitorRef m = (RLHangMonitorRef)obj;
    for (size_t i = 0; i < m->mode_count; i++) {
        free(m->modes[i]->name);
        free(m->modes[i]);
    }
    free(m->modes);
    RLRelease(m->rl);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* The last reference is gone: the monitor stops for good; the watchdog and
   the observers let go of the memory when they are done. */
static void monitor_last_reference(rl_object *obj) {
    RLHangMonitorRef m = (RLHangMonitorRef)obj;
    RLHangMonitorInvalidate(m);
    monitor_unhold(m);
}

static char *monitor_copy_description(const rl_object *obj);

static const rl_held_class monitor_class = {
    {"RLHangMonitor", monitor_last_reference, monitor_copy_description},
    monitor_free,
};

static const void *mode_retain(const void *info) {
    monitor_hold(((const hang_mode *)info)->monitor);
    return info;
}

static void mode_release(const void *info) {
    monitor_unhold(((const hang_mode *)info)->monitor);
}

/* ---- the observers (the loop's thread) ---------------------------------------- */

static void wake_watchdog(RLHangMonitorRef m) {
    pthread_mutex_lock(&m->mu);
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

static void observe(RLRunLoopObserverRef o, RLRunLoopActivity activity, void *info) {
    (void)o;
    hang_mode *hm = info;
    RLHangMonitorRef m = hm->monitor;
    bool awake = true;
    if (activity == kRLRunLoopEntry) {
        atomic_fetch_add_explicit(&m->depth, 1, memory_order_relaxed);
        if (atomic_load_explicit(&m->tid, memory_order_relaxed) == 0)
            atomic_store_explicit(&m->tid, (pid_t)syscall(SYS_gettid), memory_order_relaxed);
    } else if (activity == kRLRunLoopExit) {
        /* Back in the callout that ran this (nested) run, or out of the loop. */
        int depth = atomic_fetch_sub_explicit(&m->depth, 1, memory_order_relaxed) - 1;
        if (depth <= 0) {
            atomic_store_explicit(&m->depth, 0, memory_order_relaxed);
            awake = false;
        }
    } else if (activity == kRLRunLoopBeforeWaiting) {
        awake = false;
    }
    uint64_t units = (uint64_t)(monitor_now(m) - m->epoch_ns) >> TIME_UNIT_SHIFT;
    uint64_t w = (units << W_TIME_SHIFT) | ((uint64_t)hm->index << W_MODE_SHIFT) | (awake ? W_AWAKE : 0) |
                 activity_index(activity);
    atomic_store(&m->state, w);
    if (awake && atomic_load(&m->parked) && atomic_exchange(&m->parked, false)) wake_watchdog(m);
}

/* ---- modes -------------------------------------------------------------------- */

/* Under mu. The record for `name`, made if new; NULL when out of memory. */
static hang_mode *mode_record(RLHangMonitorRef m, const char *name) {
    for (size_t i = 0; i < m->mode_count; i++)
        if (strcmp(m->modes[i]->name, name) == 0) return m->modes[i];
    if (!rl_array_reserve(&m->modes, sizeof *m->modes, &m->mode_capacity, m->mode_count + 1, 4)) return NULL;
    hang_mode *hm = calloc(1, sizeof *hm);
    if (!hm || !(hm->name = strdup(name))) {
        free(hm);
        return NULL;
    }
    hm->monitor = m;
    hm->index = m->mode_count < MODE_INDEX_MAX ? (uint32_t)m->mode_count : MODE_INDEX_MAX;
    m->modes[m->mode_count++] = hm;
    return hm;
}

/* Under mu, started. Adds the record's observers to the loop. */
static bool watch(RLHangMonitorRef m, hang_mode *hm) {
    if (hm->early) return true;
    RLRunLoopObserverContext ctx = {0, hm, mode_retain, mode_release, NULL};
    hm->early = RLRunLoopObserverCreate(kRLRunLoopEntry | kRLRunLoopBeforeTimers | kRLRunLoopBeforeSources |
                                            kRLRunLoopAfterWaiting,
                                        true, LONG_MIN, observe, &ctx);
    hm->late = RLRunLoopObserverCreate(kRLRunLoopBeforeWaiting | kRLRunLoopExit, true, LONG_MAX, observe, &ctx);
    if (!hm->early || !hm->late) {
        RLRunLoopObserverInvalidate(hm->early);
        RLRunLoopObserverInvalidate(hm->late);
        RLRelease(hm->early);
        RLRelease(hm->late);
        hm->early = hm->late = NULL;
        return false;
    }
    RLRunLoopAddObserver(m->rl, hm->early, hm->name);
    RLRunLoopAddObserver(m->rl, hm->late, hm->name);
    return true;
}

static void unwatch(hang_mode *hm) {
    if (!hm->early) return;
    RLRunLoopObserverInvalidate(hm->early);
    RLRunLoopObserverInvalidate(hm->late);
    RLRelease(hm->early);
    RLRelease(hm->late);
    hm->early = hm->late = NULL;
}

/* Under mu: records every mode the loop has now (and the default mode). */
static void record_all_modes(RLHangMonitorRef m) {
    mode_record(m, kRLRunLoopDefaultMode);
    char **all = RLRunLoopCopyAllModes(m->rl);
    for (char **p = all; p && *p; p++) {
        mode_record(m, *p);
        free(*p);
    }
    free(all);
}

/* ---- backtrace capture -------------------------------------------------------- */

static struct {
    pthread_mutex_t lock; /* one capture at a time; guards the fields below it */
    int users;            /* started monitors */
    bool installed;
    bool keep_handler; /* a signal may still be pending: never restore */
    struct sigaction previous;
    sem_t done;
    _Atomic int armed;
    _Atomic pid_t target;
    _Atomic uintptr_t pc;
    _Atomic int count;
    void *frames[RL_HANG_MONITOR_MAX_FRAMES + 8];
} capture = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t capture_once = PTHREAD_ONCE_INIT;

static void capture_init(void) {
    sem_init(&capture.done, 0, 0);
    /* backtrace() loads its unwinder on first use (dlopen, malloc): do it
       here, not in the signal handler. */
    void *warm[4];
    backtrace(warm, 4);
}

static uintptr_t interrupted_pc(void *uctx) {
    ucontext_t *uc = uctx;
    (void)uc;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

/* Async-signal-safe apart from backtrace(), which is warmed up beforehand. */
static void capture_handler(int sig, siginfo_t *si, void *uctx) {
    (void)sig;
    (void)si;
    int saved_errno = errno;
    if (atomic_load(&capture.target) == (pid_t)syscall(SYS_gettid) && atomic_exchange(&capture.armed, 0) == 1) {
        atomic_store(&capture.pc, interrupted_pc(uctx));
        int n = backtrace(capture.frames, (int)(sizeof capture.frames / sizeof capture.frames[0]));
        atomic_store(&capture.count, n);
        sem_post(&capture.done);
    }
    errno = saved_errno;
}

/* Under capture.lock. */
static void install_handler(void) {
    capture.users++;
    if (capture.installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = capture_handler;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(RLHangMonitorGetSignal(), &sa, &capture.previous) == 0) capture.installed = true;
}

static void uninstall_handler(void) {
    if (capture.users > 0) capture.users--;
    if (capture.users > 0 || !capture.installed || capture.keep_handler) return;
    sigaction(RLHangMonitorGetSignal(), &capture.previous, NULL);
    capture.installed = false;
}

static bool sem_wait_until(sem_t *sem, int64_t deadline_ns) {
    struct timespec ts = {(time_t)(deadline_ns / 1000000000LL), (long)(deadline_ns % 1000000000LL)};
    for (;;) {
        if (sem_clockwait(sem, CLOCK_MONOTONIC, &ts) == 0) return true;
        if (errno != EINTR) return false;
    }
}

/* Captures the stack of thread `tid`; returns the number of frames copied into
   `out`, the interrupted frame first (0 when it could not be had). */
static int capture_stack(pid_t tid, void **out, int max) {
    pthread_once(&capture_once, capture_init);
    pthread_mutex_lock(&capture.lock);
    int n = 0;
    if (capture.installed && tid > 0) {
        while (sem_trywait(&capture.done) == 0) {}
        atomic_store(&capture.target, tid);
        atomic_store(&capture.count, 0);
        atomic_store(&capture.pc, 0);
        atomic_store(&capture.armed, 1);
        bool ok = syscall(SYS_tgkill, getpid(), tid, RLHangMonitorGetSignal()) == 0;
        if (ok && !sem_wait_until(&capture.done, mono_ns() + CAPTURE_TIMEOUT_NS)) {
            if (atomic_exchange(&capture.armed, 0) == 1) {
                ok = false; /* never delivered: it may be later */
                capture.keep_handler = true;
            } else {
                sem_wait(&capture.done); /* the handler claimed it: it is nearly done */
            }
        } else if (!ok) {
            atomic_store(&capture.armed, 0);
        }
        if (ok) {
            int count = atomic_load(&capture.count);
            uintptr_t pc = atomic_load(&capture.pc);
            /* Skip the handler's own frames: start at the interrupted pc when
               it is found, else after the handler and the signal trampoline. */
            int first = count > 2 ? 2 : 0;
            for (int i = 0; pc && i < count; i++) {
                if ((uintptr_t)capture.frames[i] == pc) {
                    first = i;
                    break;
                }
            }
            for (int i = first; i < count && n < max; i++) out[n++] = capture.frames[i];
        }
        atomic_store(&capture.target, 0);
    }
    pthread_mutex_unlock(&capture.lock);
    return n;
}

/* ---- reports ------------------------------------------------------------------ */

/* The loop's statistics under the stack, each line indented. */
static void write_statistics(const RLRunLoopStatistics *s, int fd) {
    char *text = s ? RLRunLoopStatisticsCopyDescription(s) : NULL;
    if (!text) return;
    dprintf(fd, "  loop statistics:\n");
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) dprintf(fd, "  %s\n", line);
    free(text);
}

void RLHangReportWrite(const RLHangReport *r, int fd) {
    if (!r || fd < 0) return;
    dprintf(fd,
            "RLHangMonitor: run loop %p stalled %.3f s (threshold %.3f s, stall %llu, report %u)\n"
            "  in mode \"%s\" after %s; stack:\n",
            (void *)r->runLoop, r->duration, r->threshold, (unsigned long long)r->stallNumber, r->reportNumber,
            r->mode ? r->mode : "(unknown)", RLRunLoopActivityGetName(r->activity));
    if (r->frameCount <= 0) dprintf(fd, "  (no backtrace: the thread did not answer the signal)\n");
    for (int i = 0; i < r->frameCount; i++)
        dprintf(fd, "  #%-2d %s\n", i, r->frames && r->frames[i] ? r->frames[i] : "?");
    write_statistics(r->statistics, fd);
}

/* Without mu. Captures, symbolises and delivers one report. */
static void deliver(RLHangMonitorRef m, uint64_t w, int64_t now, uint64_t stall, uint32_t report_number) {
    void *addresses[RL_HANG_MONITOR_MAX_FRAMES];
    int n = capture_stack(atomic_load(&m->tid), addresses, RL_HANG_MONITOR_MAX_FRAMES);
    char **symbols = n > 0 ? backtrace_symbols(addresses, n) : NULL;

    pthread_mutex_lock(&m->mu);
    uint32_t index = (uint32_t)((w >> W_MODE_SHIFT) & MODE_INDEX_MAX);
    char *mode = index < m->mode_count && index < MODE_INDEX_MAX ? strdup(m->modes[index]->name) : NULL;
    pthread_mutex_unlock(&m->mu);

    RLRunLoopStatistics statistics = {.size = sizeof statistics};
    bool have_statistics = RLRunLoopCopyStatistics(m->rl, &statistics);
    RLHangReport report = {
        .runLoop = m->rl,
        .duration = (double)(now - word_time_ns(w)) * 1e-9,
        .threshold = (double)m->threshold_ns * 1e-9,
        .activity = (RLRunLoopActivity)(1UL << (w & W_ACTIVITY_MASK)),
        .mode = mode,
        .stallNumber = stall,
        .reportNumber = report_number,
        .frameCount = symbols ? n : 0,
        .frames = (const char *const *)symbols,
        .addresses = addresses,
        .statistics = have_statistics ? &statistics : NULL,
    };
    atomic_fetch_add(&m->reports, 1);
    if (m->callback) {
        m->callback(m, &report, m->context.info);
    } else {
        RLHangReportWrite(&report, STDERR_FILENO);
    }
    free(mode);
    free(symbols);
}

/* ---- the watchdog thread ------------------------------------------------------- */

static void timed_wait(RLHangMonitorRef m, int64_t deadline_ns) {
    struct timespec ts = {(time_t)(deadline_ns / 1000000000LL), (long)(deadline_ns % 1000000000LL)};
    pthread_cond_timedwait(&m->cv, &m->mu, &ts);
}

/* A callout advanced the manual clock of the loop (rl_loop_clock_listen):
   the watchdog, which waits for that rather than for a timeout, looks. */
static void clock_moved(void *info) {
    wake_watchdog(info);
}

static void *watchdog_main(void *arg) {
    RLHangMonitorRef m = arg;
    pthread_once(&capture_once, capture_init);
    uint64_t current = 0; /* the word being timed */
    int64_t due = 0;      /* when it is (next) reported, absolute ns */
    uint32_t report_number = 0;
    uint64_t stall = 0;
    pthread_mutex_lock(&m->mu);
    while (!m->quit) {
        if (!m->started) {
            pthread_cond_wait(&m->cv, &m->mu);
            continue;
        }
        uint64_t w = atomic_load(&m->state);
        if (!(w & W_AWAKE)) {
            atomic_store(&m->parked, true);
            if (atomic_load(&m->state) == w) pthread_cond_wait(&m->cv, &m->mu);
            atomic_store(&m->parked, false);
            continue;
        }
        if (w != current) {
            current = w;
            due = m->epoch_ns + word_time_ns(w) + m->threshold_ns;
            report_number = 0;
        }
        int64_t now = monitor_now(m);
        if (now < due) {
            if (atomic_load(&m->manual)) pthread_cond_wait(&m->cv, &m->mu); /* until clock_moved */
            else timed_wait(m, due);
            continue;
        }
        due = now + m->threshold_ns;
        /* Asleep in a mode we do not watch: not a stall. */
        if (RLRunLoopIsWaiting(m->rl)) continue;
        if (report_number == 0) {
            stall = atomic_fetch_add(&m->stalls, 1) + 1;
        }
        report_number++;
        pthread_mutex_unlock(&m->mu);
        deliver(m, w, now - m->epoch_ns, stall, report_number);
        pthread_mutex_lock(&m->mu);
    }
    bool release_info = m->release_info_on_exit;
    pthread_mutex_unlock(&m->mu);
    if (release_info && m->context.release) m->context.release(m->context.info);
    monitor_unhold(m);
    return NULL;
}

/* ---- public API ------------------------------------------------------------------ */

RLHangMonitorRef RLHangMonitorCreate(RLRunLoopRef rl, RLTimeInterval threshold, RLHangMonitorCallBack callback,
                                     const RLHangMonitorContext *context) {
    if (!rl || isnan(threshold) || threshold <= 0) return NULL;
    if (threshold < 0.001) threshold = 0.001;
    if (threshold > 1e6) threshold = 1e6;
    RLHangMonitorRef m = calloc(1, sizeof *m);
    if (!m) return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&m->mu, NULL);
    rl_held_object_init(&m->base, &monitor_class);
    atomic_init(&m->valid, true);
    m->rl = (RLRunLoopRef)RLRetain(rl); /* its memory outlives its thread while we use it */
    m->threshold_ns = (int64_t)(threshold * 1e9);
    /* The coarse clock costs a quarter of the precise one per activity; it
       lags by at most one tick, which is fine when the tick is small beside
       the threshold. Both are CLOCK_MONOTONIC's timebase, so the watchdog's
       timed waits (on CLOCK_MONOTONIC) agree with it. */
    struct timespec res;
    m->clock = CLOCK_MONOTONIC;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 &&
        ((int64_t)res.tv_sec * 1000000000LL + res.tv_nsec) * 20 <= m->threshold_ns)
        m->clock = CLOCK_MONOTONIC_COARSE;
    m->epoch_ns = clock_ns(m->clock);
    m->callback = callback;
    if (context) {
        m->context = *context;
        if (m->context.retain) m->context.info = (void *)m->context.retain(m->context.info); /* NULL info too */
    }
    if (rl == rl_loop_current_if_made()) atomic_store(&m->tid, (pid_t)syscall(SYS_gettid));
    if (!rl_loop_clock_listen(rl, clock_moved, m)) {
        RLRelease(m); /* out of memory */
        return NULL;
    }
    return m;
}

static bool start_thread(RLHangMonitorRef m) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the watchdog blocks every signal */
    monitor_hold(m);
    int err = pthread_create(&m->thread, NULL, watchdog_main, m);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        monitor_unhold(m); /* never the last: the references hold the memory */
        return false;
    }
    pthread_setname_np(m->thread, "rl-hang-watch");
    m->has_thread = true;
    return true;
}

bool RLHangMonitorStart(RLHangMonitorRef m) {
    if (!m || !atomic_load(&m->valid)) return false;
    pthread_once(&capture_once, capture_init);
    pthread_mutex_lock(&m->mu);
    if (m->started || m->quit) {
        bool ok = m->started;
        pthread_mutex_unlock(&m->mu);
        return ok;
    }
    if (!m->has_thread && !start_thread(m)) {
        pthread_mutex_unlock(&m->mu);
        return false;
    }
    if (!m->handler_installed) {
        pthread_mutex_lock(&capture.lock);
        install_handler();
        pthread_mutex_unlock(&capture.lock);
        m->handler_installed = true;
    }
    atomic_store(&m->depth, 0);
    atomic_store(&m->state, 0);
    atomic_store(&m->manual, rl_loop_clock_is_manual(m->rl));
    m->epoch_ns = monitor_now(m);
    record_all_modes(m);
    bool ok = true;
    for (size_t i = 0; i < m->mode_count; i++) ok = watch(m, m->modes[i]) && ok;
    m->started = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return ok;
}

void RLHangMonitorAddMode(RLHangMonitorRef m, RLRunLoopMode mode) {
    if (!m || !mode || !mode[0] || !atomic_load(&m->valid)) return;
    pthread_mutex_lock(&m->mu);
    if (strcmp(mode, kRLRunLoopCommonModes) == 0) {
        record_all_modes(m);
    } else {
        mode_record(m, mode);
    }
    if (m->started)
        for (size_t i = 0; i < m->mode_count; i++) watch(m, m->modes[i]);
    pthread_mutex_unlock(&m->mu);
}

/* Under mu. */
static void stop_locked(RLHangMonitorRef m) {
    if (!m->started) return;
    m->started = false;
    for (size_t i = 0; i < m->mode_count; i++) unwatch(m->modes[i]);
    atomic_store(&m->state, 0);
    if (m->handler_installed) {
        pthread_mutex_lock(&capture.lock);
        uninstall_handler();
        pthread_mutex_unlock(&capture.lock);
        m->handler_installed = false;
    }
    pthread_cond_signal(&m->cv);
}

void RLHangMonitorStop(RLHangMonitorRef m) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    stop_locked(m);
    pthread_mutex_unlock(&m->mu);
}

bool RLHangMonitorIsRunning(RLHangMonitorRef m) {
    if (!m) return false;
    pthread_mutex_lock(&m->mu);
    bool started = m->started;
    pthread_mutex_unlock(&m->mu);
    return started;
}

void RLHangMonitorInvalidate(RLHangMonitorRef m) {
    if (!m || !atomic_exchange(&m->valid, false)) return;
    rl_loop_clock_unlisten(m->rl, clock_moved, m); /* outside mu: clock_moved takes it */
    pthread_mutex_lock(&m->mu);
    stop_locked(m);
    m->quit = true;
    bool has_thread = m->has_thread;
    bool on_watchdog = has_thread && pthread_equal(pthread_self(), m->thread);
    m->release_info_on_exit = on_watchdog;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    if (on_watchdog) {
        pthread_detach(m->thread); /* it ends when the callback returns */
        return;
    }
    if (has_thread) pthread_join(m->thread, NULL);
    if (m->context.release) m->context.release(m->context.info);
}

bool RLHangMonitorIsValid(RLHangMonitorRef m) {
    return m && atomic_load(&m->valid);
}

uint64_t RLHangMonitorGetStallCount(RLHangMonitorRef m) {
    return m ? atomic_load(&m->stalls) : 0;
}

uint64_t RLHangMonitorGetReportCount(RLHangMonitorRef m) {
    return m ? atomic_load(&m->reports) : 0;
}

RLTimeInterval RLHangMonitorGetThreshold(RLHangMonitorRef m) {
    return m ? (double)m->threshold_ns * 1e-9 : 0;
}

static char *monitor_copy_description(const rl_object *obj) {
    RLHangMonitorRef m = (RLHangMonitorRef)obj;
    pthread_mutex_lock(&m->mu);
    const char *state = !atomic_load(&m->valid) ? "invalid" : m->started ? "started" : "stopped";
    size_t modes = m->mode_count;
    pthread_mutex_unlock(&m->mu);
    return rl_strdup_printf("<RLHangMonitor %p [%s]>{run loop = %p, threshold = %.3f s, modes = %zu, "
                            "stalls = %llu, reports = %llu}",
                            (void *)m, state, (void *)m->rl, (double)m->threshold_ns * 1e-9, modes,
                            (unsigned long long)atomic_load(&m->stalls), (unsigned long long)atomic_load(&m->reports));
}

void RLHangMonitorRelease(RLHangMonitorRef m) {
    rl_object_check(m, &monitor_class.base, __func__);
    RLRelease(m);
}
