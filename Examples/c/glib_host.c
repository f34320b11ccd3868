/*
 * glib_host: a GLib main loop runs our run loop. One of our repeating
 * timers ticks while the thread is inside g_main_loop_run, and a GLib
 * timeout runs beside it; neither loop polls the other.
 */
#include <CRunLoopGLib.h>
#include <stdio.h>

static GMainLoop *main_loop;

static void tick(RLRunLoopTimerRef timer, void *info) {
    (void)timer;
    int *count = info;
    printf("our timer: tick %d, inside g_main_loop_run\n", ++*count);
    if (*count == 3) g_main_loop_quit(main_loop);
}

static gboolean glib_timeout(gpointer data) {
    (void)data;
    printf("GLib timeout, same thread\n");
    return G_SOURCE_REMOVE;
}

int main(void) {
    int count = 0;
    RLRunLoopTimerContext context = {0, &count, NULL, NULL, NULL};
    RLRunLoopTimerRef timer = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 0.1, 0.1, 0, 0, tick, &context);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), timer, kRLRunLoopCommonModes);

    GSource *source = RLGLibSourceCreate(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    g_source_attach(source, NULL); /* the thread's GLib context */
    g_timeout_add(150, glib_timeout, NULL);
    main_loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(main_loop);

    g_source_destroy(source);
    g_source_unref(source);
    g_main_loop_unref(main_loop);
    RLRunLoopTimerInvalidate(timer);
    RLRelease(timer);
    return 0;
}
