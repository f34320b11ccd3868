/*
 * message_port.c: a port between two threads (NSPort/NSMachPort's role,
 * RLMessagePort here). A worker thread's loop receives "ping" messages on its
 * port and answers each on the main thread's port with "pong"; the main
 * thread's loop prints the answers. Messages are delivered in the order sent,
 * on the thread of the loop that services the port.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <CRunLoop.h>

enum { PING = 1, PONG = 2, QUIT = 3 };

static RLMessagePortRef main_port, worker_port;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void worker_received(RLMessagePortRef port, int32_t id, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)info;
    if (id == QUIT) {
        printf("  worker: quit\n");
        RLRunLoopStop(RLRunLoopGetCurrent());
        return;
    }
    printf("  worker: got %-7.*s -> answering\n", (int)len, (const char *)bytes);
    char reply[32];
    int n = snprintf(reply, sizeof reply, "pong %.*s", (int)len - 5, (const char *)bytes + 5);
    RLMessagePortSend(main_port, PONG, reply, (size_t)n);
}

static void main_received(RLMessagePortRef port, int32_t id, const void *bytes, size_t len, void *info) {
    (void)port;
    (void)id;
    int *answers = info;
    printf("  main:   got %.*s\n", (int)len, (const char *)bytes);
    if (++*answers == 3) RLRunLoopStop(RLRunLoopGetCurrent());
}

static void *worker(void *arg) {
    (void)arg;
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(worker_port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RLRelease(s);
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_signal(&ready_cv);
    pthread_mutex_unlock(&lock);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    return NULL;
}

int main(void) {
    printf("== a message port between two threads (RLMessagePort) ==\n");
    int answers = 0;
    RLMessagePortContext mctx = {0, &answers, NULL, NULL, NULL};
    main_port = RLMessagePortCreate(main_received, &mctx, 0);
    worker_port = RLMessagePortCreate(worker_received, NULL, 0);
    RLRunLoopSourceRef s = RLMessagePortCreateRunLoopSource(main_port, 0);
    RLRunLoopAddSource(RLRunLoopGetCurrent(), s, kRLRunLoopDefaultMode);
    RLRelease(s);
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_mutex_lock(&lock);
    while (!ready) pthread_cond_wait(&ready_cv, &lock);
    pthread_mutex_unlock(&lock);
    for (int i = 1; i <= 3; i++) {
        char msg[16];
        int n = snprintf(msg, sizeof msg, "ping %d", i);
        printf("  main:   sending %s\n", msg);
        RLMessagePortSend(worker_port, PING, msg, (size_t)n);
    }
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RLMessagePortSend(worker_port, QUIT, NULL, 0);
    pthread_join(th, NULL);
    RLMessagePortInvalidate(worker_port);
    RLMessagePortInvalidate(main_port);
    RLRelease(worker_port);
    RLRelease(main_port);
    printf("\n");
    return 0;
}
