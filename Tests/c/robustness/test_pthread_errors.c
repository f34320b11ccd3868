/*
 * test_pthread_errors.c: pthread calls failing where no natural shortage
 * reaches them. pthread_atfork (ENOMEM) and pthread_mutex_init (EAGAIN) are
 * resource errors: the loop or the port is not made (NULL, as out of memory)
 * and a later call makes it, never a loop blind to fork. The loop's lock
 * failing (pthread_mutex_trylock, _lock, _unlock: only a corrupt mutex
 * does) is a bug: the process aborts naming the call, rather than run the
 * loop unlocked. This program defines its own pthread_atfork and
 * pthread_mutex_*, which the library (linked statically) calls: they fail
 * chosen calls and forward everything else to the C library's.
 */
#include <CRunLoop.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include "rltest.h"

/* ---- the interposed calls ------------------------------------------------ */

static atomic_int fail_atforks;   /* how many pthread_atfork calls still fail */
static atomic_int atfork_calls;   /* every call, failed or not */
static atomic_int fail_inits;     /* how many pthread_mutex_init calls still fail */
static atomic_int broken_mutexes; /* a broken_call: every such call fails from now on */

enum broken_call { NONE, TRYLOCK, LOCK, UNLOCK };

extern void *__dso_handle;
int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);

int pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
    atomic_fetch_add(&atfork_calls, 1);
    if (atomic_load(&fail_atforks) > 0 && atomic_fetch_sub(&fail_atforks, 1) > 0) return ENOMEM;
    return __register_atfork(prepare, parent, child, __dso_handle); /* what glibc's pthread_atfork does */
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr) {
    static int (*real)(pthread_mutex_t *, const pthread_mutexattr_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_init");
    if (atomic_load(&fail_inits) > 0 && atomic_fetch_sub(&fail_inits, 1) > 0) return EAGAIN;
    return real(m, attr);
}

/* A trylock of a broken mutex says EINVAL; a lock or unlock of one says
   EINVAL, after a trylock that says the mutex is busy (so lock is called). */
int pthread_mutex_trylock(pthread_mutex_t *m) {
    static int (*real)(pthread_mutex_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    int broken = atomic_load(&broken_mutexes);
    if (broken == TRYLOCK) return EINVAL;
    if (broken == LOCK) return EBUSY;
    return real(m);
}

int pthread_mutex_lock(pthread_mutex_t *m) {
    static int (*real)(pthread_mutex_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    if (atomic_load(&broken_mutexes) == LOCK) return EINVAL;
    return real(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m) {
    static int (*real)(pthread_mutex_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    if (atomic_load(&broken_mutexes) == UNLOCK) return EINVAL;
    return real(m);
}

/* ---- pthread_atfork and pthread_mutex_init: resources -------------------- */

/* Without the fork handler a loop or a port in a forked child would use its
   parent's kernel objects: neither is made, and the next call installs it. */
static void no_loop_or_port_without_the_fork_handler(void) {
    atomic_store(&fail_atforks, 1);
    RL_ASSERT(RLRunLoopGetCurrent() == NULL);
    atomic_store(&fail_atforks, 1);
    RL_ASSERT(RLMessagePortCreate(rl_test_count_message, NULL, 0) == NULL);
    RL_ASSERT_EQ_INT(atomic_load(&atfork_calls), 2);
    RL_ASSERT(RLRunLoopGetCurrent() != NULL);
    RLMessagePortRef port = RLMessagePortCreate(rl_test_count_message, NULL, 0);
    RL_ASSERT(port != NULL);
    RL_ASSERT_EQ_INT(atomic_load(&atfork_calls), 3); /* installed once, on the first success */
    /* The handler works: a forked child knows the port is its parent's. */
    pid_t pid = fork();
    RL_ASSERT(pid >= 0);
    if (pid == 0) _exit(RLMessagePortSend(port, 1, NULL, 0) == -EPIPE ? 0 : 1);
    int status = 0;
    RL_ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    RL_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    RL_ASSERT_EQ_INT(RLMessagePortSend(port, 1, NULL, 0), 0);
    RLMessagePortInvalidate(port);
    RLRelease(port);
}

static void no_loop_without_its_lock(void) {
    atomic_store(&fail_inits, 1);
    RL_ASSERT(RLRunLoopGetCurrent() == NULL);
    RL_ASSERT_EQ_INT(atomic_load(&fail_inits), 0);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(rl != NULL);
    rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
}

/* ---- the loop's lock: a bug, fatal --------------------------------------- */

static void break_and_use_the_loop_lock(enum broken_call call) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RL_ASSERT(rl != NULL);
    atomic_store(&broken_mutexes, call);
    RLRunLoopModeIsEmpty(rl, kRLRunLoopDefaultMode); /* takes and drops the loop's lock */
}

static void broken_trylock(void) {
    break_and_use_the_loop_lock(TRYLOCK);
}
static void broken_lock(void) {
    break_and_use_the_loop_lock(LOCK);
}
static void broken_unlock(void) {
    break_and_use_the_loop_lock(UNLOCK);
}

/* Before: the return codes were ignored, and the loop ran unlocked. */
static void broken_loop_lock_aborts_naming_the_call(void) {
    const char *const what = "on a run loop's lock failed";
    RL_EXPECT_ABORT(broken_trylock, "CRunLoop: fatal: pthread_mutex_trylock", what, strerror(EINVAL));
    RL_EXPECT_ABORT(broken_lock, "CRunLoop: fatal: pthread_mutex_lock", what, strerror(EINVAL));
    RL_EXPECT_ABORT(broken_unlock, "CRunLoop: fatal: pthread_mutex_unlock", what, strerror(EINVAL));
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(no_loop_or_port_without_the_fork_handler),
        RL_TEST(no_loop_without_its_lock),
        RL_TEST(broken_loop_lock_aborts_naming_the_call),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
