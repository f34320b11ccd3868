/*
 * glib_guest: our run loop runs a GLib main context. A GLib timeout and a
 * GIO async read on a pipe (fed by one of our timers) complete while the
 * thread runs only RLRunLoopRun.
 */
#include <CRunLoopGLib.h>
#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <stdio.h>
#include <unistd.h>

static int write_end;
static char buf[32];

static void read_done(GObject *stream, GAsyncResult *result, gpointer data) {
    (void)data;
    gssize n = g_input_stream_read_finish(G_INPUT_STREAM(stream), result, NULL);
    printf("GIO async read: %.*s\n", (int)(n > 0 ? n : 0), buf);
    RLRunLoopStop(RLRunLoopGetCurrent());
}

static void feed_pipe(RLRunLoopTimerRef timer, void *info) {
    (void)timer;
    (void)info;
    printf("our timer writes to the pipe\n");
    if (write(write_end, "hello from our timer", 20) != 20) perror("write");
}

static gboolean glib_timeout(gpointer data) {
    (void)data;
    printf("GLib timeout, inside RLRunLoopRun\n");
    return G_SOURCE_REMOVE;
}

int main(void) {
    int p[2];
    if (pipe(p) != 0) return 1;
    write_end = p[1];
    RLGLibContextRef glib = RLGLibContextAttach(NULL, RLRunLoopGetCurrent(), kRLRunLoopCommonModes);

    GInputStream *in = g_unix_input_stream_new(p[0], TRUE);
    g_input_stream_read_async(in, buf, sizeof buf, G_PRIORITY_DEFAULT, NULL, read_done, NULL);
    g_timeout_add(50, glib_timeout, NULL);
    RLRunLoopTimerRef timer = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent() + 0.1, 0, 0, 0, feed_pipe, NULL);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), timer, kRLRunLoopDefaultMode);

    RLRunLoopRun();

    RLRelease(timer);
    g_object_unref(in);
    close(p[1]);
    RLGLibContextDetach(glib);
    return 0;
}
