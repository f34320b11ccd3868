/*
 * rl_wait_set.c: the loop's wait set: its epoll set and wake eventfd (made,
 * rebuilt when stale, remade after fork) and the version-1 sources'
 * registrations in it, armed for the mode being waited in. The sleep that
 * waits on the set, the wake-up and the timerfd are rl_wait.c's.
 *
 * Over 500 lines: the set and its registrations rebuild, re-arm and repair
 * each other (a stale set, a fork, a number closed behind a source's back).
 *
 * One epoll set per loop (not per mode) holds:
 * - the wake eventfd, edge-triggered: each write is one edge, so the loop
 *   never reads it back (one system call saved per wake-up). A waker writes
 *   only to a loop it saw sleeping, so an edge that arrives after the loop
 *   already woke for something else is recognised as stale (no wake-up is
 *   pending any more) and slept through.
 * - one timerfd (CLOCK_MONOTONIC, absolute, made on first need), armed for
 *   the deadline of the run that waits; edge-triggered, never read
 *   (re-arming resets it). If none can be made, the wait's own timeout
 *   stands in for it.
 * - one registration per version-1 source in the loop, shared by all the
 *   loop's modes that hold the source, level-triggered, armed only while
 *   the mode being waited in holds it (a disarmed one is edge-triggered with
 *   no events, so even a hang-up is reported at most once, and dropped).
 *   Switching modes costs one epoll_ctl per source that changes state;
 *   running the same mode again costs nothing. A mode costs no descriptor,
 *   and a wake-up is one write whatever the number of modes.
 *
 * Registrations belong to an open file, not to its number (epoll keys them
 * by both). The loop only ever touches a registration through the number it
 * registered, and knows when that number can no longer name its file:
 * - adding a registration under a number another registration of this loop
 *   holds succeeds only if the number now names another file, so the older
 *   registration is stale: it is forgotten, never removed by number (that
 *   would remove the new one);
 * - removing or re-arming through a number that was closed or reused fails
 *   (EBADF, ENOENT): the old registration may live on with its file (a dup,
 *   a child process) and keep reporting it.
 * Either way the set is marked stale and rebuilt, from the registrations
 * known to be good, before the next wait: a new epoll set, so nothing stale
 * can make an idle loop spin. Out of descriptors, the old set is closed first
 * so its number is free for the new one.
 *
 * A source that sets its watched events itself (RLRunLoopSourceSetWatchedEvents)
 * gets poll()'s answers where epoll has none: an fd that is closed (POLLNVAL)
 * or that epoll refuses (a regular file) is "always ready" for what it
 * watches; the loop then polls instead of sleeping and reports it each pass
 * until the source stops watching. When such a source starts watching again,
 * its number is tried again (it may name a new file now). Sources that never
 * set their events keep the old contract: a bad fd is simply unwatched.
 *
 * Errors: the set, the wake eventfd and the timerfd are the loop's own. A
 * call on one of them failing with EBADF, EINVAL or EFAULT means it was
 * closed or replaced behind the loop's back (or a bug here): the loop could
 * only spin or sleep through its work, so it aborts, naming the call and the
 * object (rl_fatal_errno). epoll_ctl on a user's number fails with EBADF
 * too when that number was closed: whose fault it is follows from whether
 * the set itself is still open. Out of descriptors or memory, each call says
 * below how the loop does without.
 *
 * fork() (rl_fork.c counts them): the child shares the parent's epoll set, eventfd and timerfd (open
 * files, not copies); touching them would steal the parent's wake-ups, disarm
 * its timers, delete its registrations. A pthread_atfork handler (installed
 * before the first loop: no loop is made without it) bumps a process
 * generation; a loop made in an older generation remakes its kernel
 * objects (closing the child's copies of the inherited ones) before it next
 * touches any, and never writes an inherited eventfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "rl_internal.h"

static inline bool inherited(RLRunLoopRef rl) {
    return atomic_load_explicit(&rl->wait_set.fork_generation, memory_order_acquire) != rl_fork_generation();
}

bool rl_wait_set_inherited(RLRunLoopRef rl) {
    return inherited(rl);
}

static inline uint64_t token_of(const rl_v1_reg *r, long index) {
    return ((uint64_t)r->generation << 32) | (uint64_t)index;
}

/* ---- errors (the policy: rl_fatal.c) ------------------------------------ */

static const char *const the_set = "the loop's epoll set";

static const char *op_call(int op) {
    return op == EPOLL_CTL_ADD ? "epoll_ctl(ADD)" : op == EPOLL_CTL_MOD ? "epoll_ctl(MOD)" : "epoll_ctl(DEL)";
}

/* epoll_ctl on a user's number failed. EBADF, EPERM, ENOENT, EEXIST and
   ELOOP are about that number (closed, reused, unwatchable) and handled by
   the caller; EINVAL and EFAULT, or EBADF while the set's own number is
   closed, mean the set is broken. Keeps errno for the caller. */
static void check_set_after(int epfd, int op, int error) {
    if (error == EINVAL || error == EFAULT || (error == EBADF && fcntl(epfd, F_GETFD) < 0))
        rl_fatal_errno(op_call(op), the_set, epfd, error);
    errno = error;
}

/* epoll_ctl on a user's number (see check_set_after). */
static int ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev = {.events = events, .data.u64 = data};
    if (epoll_ctl(epfd, op, fd, &ev) == 0) return 0;
    check_set_after(epfd, op, errno);
    return -1;
}

/* Joins one of the loop's own descriptors to its set: false only for lack of
   memory or room (ENOMEM, ENOSPC), which each caller survives. Anything
   else is a broken set (EINVAL: no longer an epoll set; EBADF with its
   number closed) or a broken object of ours. */
static bool join_own(int epfd, int fd, uint32_t events, uint64_t data, const char *object) {
    struct epoll_event ev = {.events = events, .data.u64 = data};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0) return true;
    int error = errno;
    if (error == ENOMEM || error == ENOSPC) return false;
    if (error == EINVAL || fcntl(epfd, F_GETFD) < 0) rl_fatal_errno("epoll_ctl(ADD)", the_set, epfd, error);
    rl_fatal_errno("epoll_ctl(ADD)", object, fd, error);
}

/* What a registration's entry in the set looks like. */
static uint32_t reg_events(const rl_v1_reg *r) {
    return r->armed ? r->armed : EPOLLET;
}

static uint64_t reg_data(const rl_v1_reg *r, long index) {
    return r->armed ? token_of(r, index) : RL_EVENT_DISARMED;
}

/* Always-ready registrations with something to report keep the loop awake. */
static void set_ready_events(RLRunLoopRef rl, rl_v1_reg *r, uint32_t events) {
    bool was = r->always_ready && r->armed;
    r->always_ready = true;
    r->armed = events;
    if (!was && events) rl->wait_set.ready_regs++;
    if (was && !events) rl->wait_set.ready_regs--;
}

static void clear_ready(RLRunLoopRef rl, rl_v1_reg *r) {
    if (r->always_ready && r->armed) rl->wait_set.ready_regs--;
    r->always_ready = false;
    r->armed = 0;
}

/* What the registration should watch now. */
static uint32_t wanted(const rl_v1_reg *r) {
    return r->active ? atomic_load_explicit(&r->source->watch_events, memory_order_relaxed) : 0;
}

static bool gets_poll_answers(const rl_v1_reg *r) {
    return atomic_load_explicit(&r->source->explicit_events, memory_order_relaxed);
}

static uintptr_t fd_key(int fd) {
    return (uintptr_t)fd + 1;
}

/* Sets the number r is registered under, keeping reg_by_fd (its room was
   reserved when r was added). */
static void set_reg_fd(RLRunLoopRef rl, rl_v1_reg *r, int fd) {
    uint32_t index = (uint32_t)(r - rl->wait_set.regs);
    if (r->fd >= 0 && rl_index_map_get(&rl->wait_set.reg_by_fd, fd_key(r->fd)) == (long)index)
        rl_index_map_delete(&rl->wait_set.reg_by_fd, fd_key(r->fd));
    r->fd = fd;
    if (fd >= 0) rl_index_map_put(&rl->wait_set.reg_by_fd, fd_key(fd), index);
}

/* epoll refused the number: closed (EBADF) or a file it cannot watch (EPERM). */
static void refused(RLRunLoopRef rl, rl_v1_reg *r, int error) {
    set_reg_fd(rl, r, -1);
    if ((error == EBADF || error == EPERM) && gets_poll_answers(r)) set_ready_events(rl, r, wanted(r));
    else clear_ready(rl, r);
}

static bool out_of_room(int error) {
    return error == ENOMEM || error == ENOSPC; /* ENOSPC: the user's limit of watched fds */
}

/* epoll had no memory or room for the registration: it is registered again
   before the loop's next wait (or rebuild), never left unwatched for good. */
static void await_room(RLRunLoopRef rl, rl_v1_reg *r) {
    clear_ready(rl, r);
    set_reg_fd(rl, r, -1);
    r->awaits_set = true;
    rl->wait_set.regs_awaiting = true;
}

/* The registration cannot be trusted any more: forget its number. */
static void forget(RLRunLoopRef rl, rl_v1_reg *r) {
    clear_ready(rl, r);
    set_reg_fd(rl, r, -1);
    r->generation++;
    rl->wait_set.set_stale = true;
}

/* The loop just made a descriptor under `fd`: a registration under that
   number was for a file closed behind its source's back. Never touch the
   loop's own descriptor through it. */
static void disown_number(RLRunLoopRef rl, int fd) {
    for (uint32_t i = 0; i < rl->wait_set.reg_capacity; i++) {
        rl_v1_reg *r = &rl->wait_set.regs[i];
        if (!r->source || r->fd != fd) continue;
        forget(rl, r);
        refused(rl, r, EBADF);
    }
}

bool rl_wait_set_join_own(RLRunLoopRef rl, int fd, uint64_t data, const char *object) {
    disown_number(rl, fd); /* before it joins the set under that number */
    return join_own(rl->wait_set.epoll_fd, fd, EPOLLIN | EPOLLET, data, object);
}

/* ---- the set itself ------------------------------------------------------ */

/* A new epoll set; out of descriptors, the old one (if any) is closed first
   so that its number serves. -1 if even that fails. */
static int new_epoll(int *old) {
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0 && *old >= 0 && (errno == EMFILE || errno == ENFILE)) {
        close(*old);
        *old = -1;
        epfd = epoll_create1(EPOLL_CLOEXEC);
    }
    return epfd;
}

static bool try_register(RLRunLoopRef rl, long index);

/* Puts the wake eventfd and every trusted registration into a new set; the
   timerfd is remade on next need (disarmed until then). */
static void rebuild(RLRunLoopRef rl) {
    rl_embed_fd_detach_locked(rl);
    int old = rl->wait_set.epoll_fd;
    int epfd = new_epoll(&old);
    if (old >= 0) close(old);
    if (rl->wait.timer_fd >= 0) close(rl->wait.timer_fd);
    rl->wait.timer_fd = -1;
    rl->wait.armed_ns = RL_NEVER;
    rl->wait_set.epoll_fd = epfd;
    if (epfd < 0) return; /* tried again before the next wait */
    disown_number(rl, epfd);
    rl->wait_set.set_stale = false;
    rl->wait_set.regs_awaiting = false; /* each is tried below */
    if (rl->wait_set.wake_fd >= 0 &&
        !join_own(epfd, rl->wait_set.wake_fd, EPOLLIN | EPOLLET, RL_EVENT_WAKE, "the loop's wake eventfd")) {
        close(epfd); /* out of memory: no set; tried again before the next wait */
        rl->wait_set.epoll_fd = -1;
        return;
    }
    for (uint32_t i = 0; i < rl->wait_set.reg_capacity; i++) {
        rl_v1_reg *r = &rl->wait_set.regs[i];
        if (!r->source) continue;
        if (r->awaits_set) {
            r->awaits_set = false;
            try_register(rl, i);
            continue;
        }
        if (r->fd < 0) continue;
        r->generation++;
        if (ctl(epfd, EPOLL_CTL_ADD, r->fd, reg_events(r), reg_data(r, i)) < 0) {
            if (out_of_room(errno)) await_room(rl, r);
            else refused(rl, r, errno); /* closed since: as if added closed */
        }
    }
    rl_embed_fd_attach_locked(rl);
}

/* In a forked child: the inherited objects are the parent's. Closes the
   child's copies (the parent keeps its own) and makes new ones. */
static void remake_after_fork(RLRunLoopRef rl) {
    rl_embed_fd_after_fork_locked(rl); /* first: the inherited embedding set is the parent's */
    if (rl->wait_set.wake_fd >= 0) close(rl->wait_set.wake_fd);
    rl->wait_set.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (rl->wait_set.wake_fd >= 0) disown_number(rl, rl->wait_set.wake_fd);
    atomic_store(&rl->wait.sleeping, false);
    rebuild(rl);
    atomic_store_explicit(&rl->wait_set.fork_generation, rl_fork_generation(), memory_order_release);
}

/* Every function that touches the kernel objects starts here. */
static void own_kernel_objects(RLRunLoopRef rl) {
    if (inherited(rl)) remake_after_fork(rl);
}

void rl_wait_set_own_kernel_objects_locked(RLRunLoopRef rl) {
    own_kernel_objects(rl);
}

/* Registrations epoll had no room for: tried again (once per wait, so a
   lasting shortage costs a scan per pass, never a spin). */
static void register_awaiting(RLRunLoopRef rl) {
    rl->wait_set.regs_awaiting = false;
    for (uint32_t i = 0; i < rl->wait_set.reg_capacity; i++) {
        rl_v1_reg *r = &rl->wait_set.regs[i];
        if (!r->source || !r->awaits_set) continue;
        r->awaits_set = false;
        try_register(rl, i);
    }
}

/* Only the loop's own thread, before it waits, replaces the set: another
   thread doing so would leave the loop asleep on the old one. Others mark
   the set stale (or leave a registration waiting for a set). */
static void repair_before_wait(RLRunLoopRef rl) {
    own_kernel_objects(rl);
    if (rl->wait_set.wake_fd < 0) {
        rl->wait_set.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (rl->wait_set.wake_fd >= 0) disown_number(rl, rl->wait_set.wake_fd);
        if (rl->wait_set.wake_fd >= 0) rl->wait_set.set_stale = true;
    }
    if (rl->wait_set.set_stale || rl->wait_set.epoll_fd < 0) rebuild(rl);
    else if (rl->wait_set.regs_awaiting) register_awaiting(rl);
}

bool rl_wait_set_open(RLRunLoopRef rl) {
    if (!rl_fork_watch()) return false;
    atomic_init(&rl->wait_set.fork_generation, rl_fork_generation());
    rl->wait.timer_fd = -1;
    rl->wait.armed_ns = RL_NEVER;
    rl->wait_set.reg_free = -1;
    rl->wait_set.epoll_fd = -1;
    rl_embed_fd_init_locked(rl);
    rl->wait_set.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (rl->wait_set.wake_fd < 0) return false;
    rebuild(rl);
    if (rl->wait_set.epoll_fd < 0) {
        close(rl->wait_set.wake_fd);
        return false;
    }
    return true;
}

void rl_wait_set_close(RLRunLoopRef rl) {
    rl_embed_fd_close_locked(rl);
    if (rl->wait.timer_fd >= 0) close(rl->wait.timer_fd);
    if (rl->wait_set.epoll_fd >= 0) close(rl->wait_set.epoll_fd);
    if (rl->wait_set.wake_fd >= 0) close(rl->wait_set.wake_fd);
    free(rl->wait_set.regs);
    rl_index_map_free(&rl->wait_set.reg_by_source);
    rl_index_map_free(&rl->wait_set.reg_by_fd);
}

/* ---- registrations ------------------------------------------------------- */

long rl_wait_set_reg_find_locked(RLRunLoopRef rl, RLRunLoopSourceRef s) {
    return rl_index_map_get(&rl->wait_set.reg_by_source, (uintptr_t)s);
}

static long take_entry(RLRunLoopRef rl) {
    if (rl->wait_set.reg_free < 0) {
        size_t cap = rl->wait_set.reg_capacity;
        if (!rl_array_reserve(&rl->wait_set.regs, sizeof *rl->wait_set.regs, &cap, cap + 1, 8)) return -1;
        for (uint32_t i = rl->wait_set.reg_capacity; i < cap; i++)
            rl->wait_set.regs[i] =
                (rl_v1_reg){.fd = -1, .next_free = i + 1 < cap ? (int32_t)(i + 1) : rl->wait_set.reg_free};
        rl->wait_set.reg_free = (int32_t)rl->wait_set.reg_capacity;
        rl->wait_set.reg_capacity = (uint32_t)cap;
    }
    long index = rl->wait_set.reg_free;
    rl->wait_set.reg_free = rl->wait_set.regs[index].next_free;
    return index;
}

/* `index` was just registered under `fd`: another registration under the
   same number (at most one: reg_by_fd) is for a file that number no longer
   names. */
static void forget_older_under(RLRunLoopRef rl, long index, int fd) {
    long older = rl_index_map_get(&rl->wait_set.reg_by_fd, fd_key(fd));
    if (older >= 0 && older != index) forget(rl, &rl->wait_set.regs[older]);
}

/* Tries to put the registration in the set under its number. False only
   when epoll had no memory or room: the registration then awaits room. */
static bool try_register(RLRunLoopRef rl, long index) {
    rl_v1_reg *r = &rl->wait_set.regs[index];
    int fd = r->number;
    clear_ready(rl, r);
    set_reg_fd(rl, r, -1);
    r->generation++;
    if (fd < 0) return true;
    if (rl->wait_set.epoll_fd < 0) {
        r->awaits_set = true; /* registered when the set is made again */
        return true;
    }
    /* The loop's own descriptors are never a source's: a source that names
       one names a number that was closed (and reused by the loop). */
    if (fd == rl->wait_set.wake_fd || fd == rl->wait.timer_fd || fd == rl->wait_set.epoll_fd) {
        refused(rl, r, EBADF);
        return true;
    }
    r->armed = wanted(r);
    if (ctl(rl->wait_set.epoll_fd, EPOLL_CTL_ADD, fd, reg_events(r), reg_data(r, index)) == 0) {
        forget_older_under(rl, index, fd);
        set_reg_fd(rl, r, fd);
    } else if (errno == EEXIST) {
        r->armed = 0; /* the same file under the same number is another source's */
    } else if (out_of_room(errno)) {
        await_room(rl, r);
        return false;
    } else {
        refused(rl, r, errno);
    }
    return true;
}

long rl_wait_set_reg_add_locked(RLRunLoopRef rl, RLRunLoopSourceRef s, int fd, bool armed) {
    own_kernel_objects(rl);
    /* Room in both maps first: registering never fails half-way. */
    size_t regs = rl->wait_set.reg_by_source.count + 1;
    if (!rl_index_map_reserve(&rl->wait_set.reg_by_source, regs) ||
        !rl_index_map_reserve(&rl->wait_set.reg_by_fd, regs))
        return -1;
    long index = take_entry(rl);
    if (index < 0) return -1;
    rl_v1_reg *r = &rl->wait_set.regs[index];
    *r = (rl_v1_reg){.source = s, .fd = -1, .number = fd, .active = armed, .generation = r->generation};
    rl_index_map_put(&rl->wait_set.reg_by_source, (uintptr_t)s, (uint32_t)index);
    if (!try_register(rl, index)) {
        rl_wait_set_reg_remove_locked(rl, index); /* no room in epoll: the add does nothing, as out of memory */
        return -1;
    }
    return index;
}

void rl_wait_set_reg_remove_locked(RLRunLoopRef rl, long index) {
    own_kernel_objects(rl);
    rl_v1_reg *r = &rl->wait_set.regs[index];
    if (r->fd >= 0 && rl->wait_set.epoll_fd >= 0 && ctl(rl->wait_set.epoll_fd, EPOLL_CTL_DEL, r->fd, 0, 0) < 0)
        rl->wait_set.set_stale = true; /* closed or reused: its file may live on in the set */
    clear_ready(rl, r);
    rl_index_map_delete(&rl->wait_set.reg_by_source, (uintptr_t)r->source);
    set_reg_fd(rl, r, -1);
    r->source = NULL;
    r->awaits_set = false;
    r->active = false;
    r->generation++;
    r->next_free = rl->wait_set.reg_free;
    rl->wait_set.reg_free = (int32_t)index;
}

/* Makes the kernel's view match wanted(); true if it became always ready. */
static bool apply(RLRunLoopRef rl, long index) {
    rl_v1_reg *r = &rl->wait_set.regs[index];
    uint32_t want = wanted(r);
    if (r->always_ready) {
        bool starts = want && !r->armed;
        set_ready_events(rl, r, want);
        /* The number may name a watchable file now. No room: wake the loop,
           which tries again before it sleeps. */
        if (starts && !try_register(rl, index)) return true;
        return r->always_ready && r->armed;
    }
    if (r->fd < 0 || r->armed == want) return false;
    r->armed = want;
    r->generation++; /* events queued under the old token are dropped */
    if (rl->wait_set.epoll_fd >= 0 &&
        ctl(rl->wait_set.epoll_fd, EPOLL_CTL_MOD, r->fd, reg_events(r), reg_data(r, index)) == 0)
        return false;
    int error = errno;
    forget(rl, r); /* the number was closed or reused: its old file may linger in the set */
    if (!gets_poll_answers(r)) return false;
    if (error == ENOENT) {
        if (!try_register(rl, index)) return true; /* watch what the number names now */
    } else {
        refused(rl, r, error);
    }
    return r->always_ready && r->armed;
}

void rl_wait_set_reg_set_armed_locked(RLRunLoopRef rl, long index, bool armed) {
    own_kernel_objects(rl);
    rl->wait_set.regs[index].active = armed;
    apply(rl, index);
}

bool rl_wait_set_reg_refresh_locked(RLRunLoopRef rl, long index) {
    own_kernel_objects(rl);
    return apply(rl, index);
}

int rl_wait_set_add_ready_locked(RLRunLoopRef rl, rl_mode *m, struct epoll_event *events, int n, int max) {
    if (!rl->wait_set.ready_regs) return n;
    for (uint32_t i = 0; i < m->v1_count && n < max; i++) {
        rl_v1_reg *r = &rl->wait_set.regs[m->v1[i]];
        if (r->always_ready && r->armed)
            events[n++] = (struct epoll_event){.events = r->armed, .data.u64 = token_of(r, m->v1[i])};
    }
    return n;
}

/* Arms exactly m's registrations: those of the mode armed so far that m does
   not hold are disarmed, m's are armed. */
static void switch_armed_mode(RLRunLoopRef rl, rl_mode *m) {
    uint64_t epoch = ++rl->wait_set.arm_epoch;
    for (uint32_t i = 0; i < m->v1_count; i++) rl->wait_set.regs[m->v1[i]].mark = epoch;
    rl_mode *old = rl->wait_set.armed_mode;
    if (old)
        for (uint32_t i = 0; i < old->v1_count; i++)
            if (rl->wait_set.regs[old->v1[i]].mark != epoch) rl_wait_set_reg_set_armed_locked(rl, old->v1[i], false);
    for (uint32_t i = 0; i < m->v1_count; i++) rl_wait_set_reg_set_armed_locked(rl, m->v1[i], true);
    rl->wait_set.armed_mode = m;
}

/* Nothing to remake, rebuild, register or re-arm: every pass in the same
   mode as the last, so it is checked before anything else. */
static inline bool ready_for(RLRunLoopRef rl, rl_mode *m) {
    return rl->wait_set.armed_mode == m && !rl->wait_set.set_stale && !rl->wait_set.regs_awaiting &&
           rl->wait_set.epoll_fd >= 0 && rl->wait_set.wake_fd >= 0 && !inherited(rl);
}

static __attribute__((noinline)) void make_ready_for(RLRunLoopRef rl, rl_mode *m) {
    repair_before_wait(rl);
    if (rl->wait_set.armed_mode != m) switch_armed_mode(rl, m);
    if (rl->wait_set.set_stale) rebuild(rl); /* a switch found a stale registration */
}

void rl_wait_set_prepare_locked(RLRunLoopRef rl, rl_mode *m) {
    rl_embed_fd_stop_waiting_locked(rl); /* the loop waits by itself now (or a host prepares again) */
    if (!ready_for(rl, m)) make_ready_for(rl, m);
}
