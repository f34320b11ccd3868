/*
 * rl_embed_fd.c: the embedding descriptor's side of the loop's wait set
 * (rl_embed.c explains the descriptor). The wait set calls these when it is
 * made, closed, remade or inherited by a forked child, so the host's
 * descriptor keeps watching whichever wait set the loop has; the modes ask
 * whether a host sleeps on it, and rl_embed.c tells it when a host starts and
 * stops. Only this file touches the loop's `embed` part. Loop locked; nothing here calls back into the
 * core (a broken set ends in rl_fatal.c, a leaf).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "rl_internal.h"

void rl_embed_fd_init_locked(RLRunLoopRef rl) {
    rl->embed.fd = -1;
    rl->embed.attached = false;
    rl->embed.mode = NULL;
    rl->embed.waiting = false;
}

void rl_embed_fd_close_locked(RLRunLoopRef rl) {
    if (rl->embed.fd >= 0) close(rl->embed.fd);
    rl->embed.fd = -1;
}

/* The wait set is about to be closed: errors do not matter (closing it
   removes it from the embedding set anyway, unless a fork shares it). */
void rl_embed_fd_detach_locked(RLRunLoopRef rl) {
    if (rl->embed.fd >= 0 && rl->wait_set.epoll_fd >= 0)
        epoll_ctl(rl->embed.fd, EPOLL_CTL_DEL, rl->wait_set.epoll_fd, NULL);
    rl->embed.attached = false;
}

/* Out of memory or room, the wait set stays out of the embedding set and
   Prepare tries again (capping the host's timeout meanwhile). Any other
   failure means one of the two sets is broken. */
void rl_embed_fd_attach_locked(RLRunLoopRef rl) {
    if (rl->embed.fd < 0 || rl->wait_set.epoll_fd < 0 || rl->embed.attached) return;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = rl->wait_set.epoll_fd};
    if (epoll_ctl(rl->embed.fd, EPOLL_CTL_ADD, rl->wait_set.epoll_fd, &ev) == 0 || errno == EEXIST) {
        rl->embed.attached = true;
        return;
    }
    int error = errno;
    if (error == ENOMEM || error == ENOSPC) return;
    if (fcntl(rl->embed.fd, F_GETFD) < 0 || error == EINVAL)
        rl_fatal_errno("epoll_ctl(ADD)", "the loop's embedding set", rl->embed.fd, error);
    rl_fatal_errno("epoll_ctl(ADD)", "the loop's epoll set", rl->wait_set.epoll_fd, error);
}

/* The host may have closed the descriptor, and another file may have its
   number now: the host would sleep on that file (/dev/null: readable at once,
   every time) or on a dead number, and spin. Only the loop's embedding set
   holds the loop's wait set, so re-setting the wait set's entry through the
   number succeeds exactly when the number is still that set: EBADF (closed),
   EINVAL (no epoll set now; or the wait set itself took the number) and
   ENOENT (another epoll set) all mean the descriptor was closed or replaced
   behind the loop's back: fatal, as for the loop's other own descriptors. */
void rl_embed_fd_check_locked(RLRunLoopRef rl) {
    if (rl->embed.fd < 0 || rl->wait_set.epoll_fd < 0 || !rl->embed.attached) return;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = rl->wait_set.epoll_fd};
    if (epoll_ctl(rl->embed.fd, EPOLL_CTL_MOD, rl->wait_set.epoll_fd, &ev) == 0) return;
    int error = errno;
    if (error == ENOMEM || error == ENOSPC) return; /* cannot tell; the next Prepare asks again */
    rl_fatal_errno("epoll_ctl(MOD)", "the loop's embedding set", rl->embed.fd, error);
}

/* In a forked child, before the wait set is remade: a new embedding set,
   moved to the inherited number (dup3 closes the child's reference to the
   parent's set without touching it). */
void rl_embed_fd_after_fork_locked(RLRunLoopRef rl) {
    rl->embed.attached = false; /* the new set is empty */
    if (rl->embed.fd < 0) return;
    int fresh = epoll_create1(EPOLL_CLOEXEC);
    if (fresh < 0 || dup3(fresh, rl->embed.fd, O_CLOEXEC) < 0) {
        /* Keep no reference to the parent's set: the host sees a dead
           number rather than the parent's events. */
        close(rl->embed.fd);
        rl->embed.fd = fresh;
        return;
    }
    close(fresh);
}

bool rl_embed_fd_waits_in_locked(RLRunLoopRef rl, rl_mode *m) {
    return rl->embed.waiting && rl->embed.mode == m;
}

int rl_embed_fd_open_locked(RLRunLoopRef rl) {
    if (rl->embed.fd < 0) {
        rl->embed.fd = epoll_create1(EPOLL_CLOEXEC);
        rl_embed_fd_attach_locked(rl);
    }
    return rl->embed.fd;
}

void rl_embed_fd_wait_in_locked(RLRunLoopRef rl, rl_mode *m) {
    rl_embed_fd_attach_locked(rl);
    rl->embed.mode = m;
    rl->embed.waiting = true;
}

void rl_embed_fd_stop_waiting_locked(RLRunLoopRef rl) {
    rl->embed.waiting = false;
}

void rl_embed_fd_cancel_locked(RLRunLoopRef rl) {
    rl->embed.waiting = false;
    rl->embed.mode = NULL;
}

bool rl_embed_fd_holds_wait_set_locked(RLRunLoopRef rl) {
    return rl->embed.fd < 0 || rl->embed.attached;
}
