/*
 * custom_source.c: the classic custom-source example. A version-0 source (signalled by hand)
 * on a worker thread's run loop; the main thread signals it and wakes the
 * loop (RLRunLoopSourceSignal + RLRunLoopWakeUp), three times. The worker
 * prints the signalled flag through RLCopyDescription before and after.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <CRunLoop.h>

static RLRunLoopRef worker_loop;
static RLRunLoopSourceRef source;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int performed;

static void perform(void *info) {
    (void)info;
    printf("  worker: perform called (source0 handled, %d) on the worker's thread\n", ++performed);
    if (performed == 3) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void print_signalled(const char *when) {
    char *d = RLCopyDescription(source);
    const char *s = strstr(d, "signalled");
    printf("  %s: {%.*s ...}\n", when, s ? (int)strcspn(s, ",}") : 0, s ? s : "");
    free(d);
}

static void *worker(void *arg) {
    (void)arg;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopAddSource(rl, source, kRLRunLoopDefaultMode);
    pthread_mutex_lock(&lock);
    worker_loop = rl;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    printf("  worker: loop stopped after %d performs\n", performed);
    return NULL;
}

int main(void) {
    printf("== custom version-0 source signalled from another thread ==\n");
    RLRunLoopSourceContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.perform = perform;
    source = RLRunLoopSourceCreate(0, &ctx);
    print_signalled("main, after create   ");
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_mutex_lock(&lock);
    while (!worker_loop) pthread_cond_wait(&ready, &lock);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 3; i++) {
        while (!RLRunLoopIsWaiting(worker_loop)) usleep(1000); /* it sleeps: nothing to do */
        RLRunLoopSourceSignal(source);
        if (i == 0) print_signalled("main, after Signal   ");
        printf("  main: signalled the source and woke the worker (RLRunLoopWakeUp)\n");
        RLRunLoopWakeUp(worker_loop);
        usleep(20000);
    }
    pthread_join(th, NULL);
    print_signalled("main, after perform  ");
    RLRunLoopSourceInvalidate(source);
    RLRelease(source);
    printf("\n");
    return 0;
}
