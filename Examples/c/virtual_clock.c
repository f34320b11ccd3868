/*
 * virtual_clock.c: testing timer logic without waiting for it. The loop
 * runs on a manual clock (CRunLoopClock.h): its timers fire only as the
 * program advances the clock, each at its own time, so a search box's
 * 300 ms debounce and a connection's retries with back-off (1 s, 2 s, 4 s)
 * are checked to the millisecond in well under a millisecond of real time,
 * the same on an idle laptop as on a loaded build machine.
 *
 * The code under test only uses the loop's time (RLRunLoopGetCurrentTime),
 * never the wall clock: that is all it takes to make it testable this way.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <CRunLoop.h>

/* Dates are doubles: sums of them agree to well under a nanosecond. */
static int near(double a, double b) {
    return fabs(a - b) < 1e-9;
}

static int failures;
static void expect(int ok, const char *what) {
    printf("  %s  %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

/* Lets the loop catch up with its clock: it fires what came due, each at
   its time, and returns once it has nothing to do before the next advance. */
static void advance(RLRunLoopRef rl, double seconds) {
    RLRunLoopClockAdvance(rl, seconds);
    RLRunLoopRunResult r;
    do r = RLRunLoopRunInMode(kRLRunLoopDefaultMode, 1e10, false);
    while (r != kRLRunLoopRunIdle && r != kRLRunLoopRunFinished);
}

/* ---- the code under test: a debounced search box ------------------------ */

typedef struct {
    RLRunLoopTimerRef timer; /* the pending search, or NULL */
    char text[64];
    int searches;
    RLAbsoluteTime searched_at;
} search_box;

static void search(RLRunLoopTimerRef t, void *info) {
    (void)t;
    search_box *box = info;
    box->searches++;
    box->searched_at = RLRunLoopGetCurrentTime(RLRunLoopGetCurrent());
    printf("        %.3f s: search \"%s\"\n", box->searched_at, box->text);
    RLRelease(box->timer);
    box->timer = NULL;
}

/* Each keystroke puts the search off until 300 ms after it. */
static void type(search_box *box, const char *text) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    snprintf(box->text, sizeof box->text, "%s", text);
    RLAbsoluteTime due = RLRunLoopGetCurrentTime(rl) + 0.3;
    if (box->timer) {
        RLRunLoopTimerSetNextFireDate(box->timer, due);
        return;
    }
    RLRunLoopTimerContext ctx = {0, box, NULL, NULL, NULL};
    box->timer = RLRunLoopTimerCreate(due, 0, 0, 0, search, &ctx);
    RLRunLoopAddTimer(rl, box->timer, kRLRunLoopDefaultMode);
}

/* ---- the code under test: a connection retried with back-off ---------- */

typedef struct {
    int attempts;
    int fail_first; /* the server refuses this many attempts */
    double backoff;
    RLAbsoluteTime attempted_at[8];
    int connected;
} connection;

static void attempt(RLRunLoopTimerRef t, void *info) {
    (void)t;
    connection *c = info;
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLAbsoluteTime now = RLRunLoopGetCurrentTime(rl);
    c->attempted_at[c->attempts] = now;
    if (++c->attempts > c->fail_first) {
        c->connected = 1;
        printf("        %.3f s: attempt %d connected\n", now, c->attempts);
        return;
    }
    printf("        %.3f s: attempt %d refused, next in %.0f s\n", now, c->attempts, c->backoff);
    RLRunLoopTimerContext ctx = {0, c, NULL, NULL, NULL};
    RLRunLoopTimerRef retry = RLRunLoopTimerCreate(now + c->backoff, 0, 0, 0, attempt, &ctx);
    RLRunLoopAddTimer(rl, retry, kRLRunLoopDefaultMode);
    RLRelease(retry);
    c->backoff *= 2;
}

int main(void) {
    printf("== a manual clock: timer logic tested without waiting ==\n");
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopUseManualClock(rl, 0); /* the loop's time starts at 0 s */

    printf("debounce: \"r\", \"ru\" 100 ms later, \"run\" 150 ms after that\n");
    static search_box box;
    type(&box, "r");
    advance(rl, 0.1);
    type(&box, "ru");
    advance(rl, 0.15);
    type(&box, "run");
    advance(rl, 0.299);
    expect(box.searches == 0, "no search 299 ms after the last keystroke");
    advance(rl, 0.001);
    expect(box.searches == 1, "one search 300 ms after the last keystroke");
    expect(near(box.searched_at, 0.55), "at 0.550 s, for the last text");

    printf("retry: refused twice, back-off 1 s then 2 s\n");
    static connection c = {.fail_first = 2, .backoff = 1};
    RLRunLoopTimerContext ctx = {0, &c, NULL, NULL, NULL};
    RLAbsoluteTime start = RLRunLoopGetCurrentTime(rl);
    RLRunLoopTimerRef first = RLRunLoopTimerCreate(start, 0, 0, 0, attempt, &ctx);
    RLRunLoopAddTimer(rl, first, kRLRunLoopDefaultMode);
    RLRelease(first);
    advance(rl, 2.5);
    expect(c.attempts == 2 && !c.connected, "two attempts in the first 2.5 s");
    advance(rl, 60);
    expect(c.connected && c.attempts == 3, "connected at the third attempt");
    expect(near(c.attempted_at[1] - start, 1) && near(c.attempted_at[2] - start, 3), "attempts at +0 s, +1 s and +3 s");
    /* Nothing left to run: the loop stopped at its last timer, the clock is
       where the test advanced it. */
    expect(near(RLRunLoopGetCurrentTime(rl), start + 3), "the loop's time: its last timer's");
    expect(near(RLRunLoopClockGetTime(rl), start + 62.5), "the clock's time: what the test advanced it to");
    return failures ? 1 : 0;
}
