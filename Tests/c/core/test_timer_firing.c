/* test_timer_firing.c: how a pass fires its timers, one at a time as CF does:
   a timer is marked firing only when its own callout starts, so a nested run
   from a callout fires the other due timers; a timer skipped in a pass is
   left exactly as an earlier callout left it; a timer moved to another loop
   from its own callout lives on in that loop and fires on time;
   re-dating inside the callout and ties follow CF; tolerance only delays a
   timer to share a wake-up; CF's ownership rules for context info. Tests of
   order, counts and wake-ups run on a manual clock (CRunLoopClock.h),
   exactly and without waiting; across real threads, timing is checked only
   with lower bounds, counts, or very generous upper bounds. */
#include <CRunLoop.h>
#include "rltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>

#define CLOCK_SLACK 1e-4

/* ---- nested runs ---- */

static long g_fast_in_nested;
static void run_nested_half_second(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    long before = rl_test_fired;
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.5, false);
    g_fast_in_nested = rl_test_fired - before;
}

/* A modal loop run from a timer callout keeps the other timers going, even
   those that were due in the same pass: a 20 Hz timer due with it fires at
   0, 0.05, ..., 0.5 s inside the nested 0.5 s run. */
static void nested_run_from_a_timer_callout_fires_the_other_due_timers(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopTimerRef modal = rl_test_timer(0, 0, run_nested_half_second, NULL);
    RLRunLoopTimerRef fast = rl_test_timer(0, 0.05, rl_test_count_fire, NULL);
    RLRunLoopAddTimer(rl, modal, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, fast, kRLRunLoopDefaultMode);
    rl_test_advance(1);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.01, true);
    RL_ASSERT(!RLRunLoopTimerIsValid(modal));
    RL_ASSERT_EQ_INT(g_fast_in_nested, 11);
    RLRunLoopTimerInvalidate(fast);
    RLRelease(modal);
    RLRelease(fast);
}

/* The timer whose callout runs the loop is not fired again inside it. */
static int g_self_nested_calls, g_self_in_nested, g_self_reentered;
static void nested_self(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    if (g_self_in_nested) g_self_reentered++;
    if (++g_self_nested_calls == 1) {
        g_self_in_nested = 1;
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false);
        g_self_in_nested = 0;
    }
}

static void timer_is_not_fired_again_inside_its_own_nested_run(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0.01, nested_self, NULL);
    rl_test_advance(1);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.001, true);
    RL_ASSERT_EQ_INT(g_self_nested_calls, 1);
    RL_ASSERT_EQ_INT(g_self_reentered, 0);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRelease(keep);
}

/* ---- timers skipped in a pass ---- */

enum skip_what { REDATE, REMOVE_FROM_DEFAULT, INVALIDATE };

/* The pass of pass_where_first_disturbs_second: its timers, what the first
   does to the second (and the date it re-dates it to), and the source that
   keeps the default mode. */
static struct {
    RLRunLoopSourceRef keep;
    RLRunLoopTimerRef first, second;
    enum skip_what what;
    RLAbsoluteTime redate_to;
} g_skip;

static void disturb_second(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&rl_test_callouts, 1);
    if (g_skip.what == REDATE) RLRunLoopTimerSetNextFireDate(g_skip.second, g_skip.redate_to);
    else if (g_skip.what == REMOVE_FROM_DEFAULT)
        RLRunLoopRemoveTimer(RLRunLoopGetCurrent(), g_skip.second, kRLRunLoopDefaultMode);
    else RLRunLoopTimerInvalidate(g_skip.second);
}

/* Two due timers in the default mode: the first (logs 1), due at now - 0.01,
   does `what` to the second (logs 2), returned: repeating every 10 s, due at
   second_date, also in also_mode unless NULL. Runs one pass, in which only
   the first is called; release_skip_pass releases what it made. */
static RLRunLoopTimerRef pass_where_first_disturbs_second(enum skip_what what, RLAbsoluteTime redate_to,
                                                          RLAbsoluteTime now, RLAbsoluteTime second_date,
                                                          RLRunLoopMode also_mode) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    g_skip.keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    g_skip.what = what;
    g_skip.redate_to = redate_to;
    g_skip.first = rl_test_timer(now - 0.01, 0, disturb_second, NULL);
    g_skip.second = rl_test_timer(second_date, 10, rl_test_log_fire, (void *)2);
    RLRunLoopAddTimer(rl, g_skip.first, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, g_skip.second, kRLRunLoopDefaultMode);
    if (also_mode) RLRunLoopAddTimer(rl, g_skip.second, also_mode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1);
    return g_skip.second;
}

static void release_skip_pass(void) {
    RLRunLoopTimerInvalidate(g_skip.second);
    RLRelease(g_skip.first);
    RLRelease(g_skip.second);
    RLRelease(g_skip.keep);
}

/* Re-dated by an earlier callout of the pass: keeps exactly the new date. */
static void timer_redated_by_an_earlier_callout_keeps_that_date(void) {
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    /* Far enough ahead that even a slow run (valgrind) is not past it. */
    RLAbsoluteTime later = now + 100;
    RLRunLoopTimerRef second = pass_where_first_disturbs_second(REDATE, later, now, now - 0.005, NULL);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(second), later);
    release_skip_pass();
}

/* Removed from the running mode by an earlier callout: its date in its other
   mode is untouched, so it fires there on its grid point. */
static void timer_removed_from_the_running_mode_keeps_its_date(void) {
    RLRunLoopSourceRef keep_other = rl_test_keep_mode(RLRunLoopGetCurrent(), "other");
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLAbsoluteTime date = now - 0.005;
    RLRunLoopTimerRef second = pass_where_first_disturbs_second(REMOVE_FROM_DEFAULT, 0, now, date, "other");
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(second), date);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode("other", 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2);
    RL_ASSERT_EQ_DBL(RLRunLoopTimerGetNextFireDate(second), date + 10);
    release_skip_pass();
    RLRelease(keep_other);
}

/* Invalidated by an earlier callout: not called. */
static void timer_invalidated_by_an_earlier_callout_is_not_called(void) {
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef second = pass_where_first_disturbs_second(INVALIDATE, 0, now, now - 0.005, NULL);
    RL_ASSERT(!RLRunLoopTimerIsValid(second));
    RL_ASSERT(!RLRunLoopContainsTimer(RLRunLoopGetCurrent(), second, kRLRunLoopDefaultMode));
    release_skip_pass();
}

/* ---- re-dating inside the callout, ties ---- */

static RLAbsoluteTime g_redate_to;
static void redate_self(RLRunLoopTimerRef t, void *info) {
    (void)info;
    RLRunLoopTimerSetNextFireDate(t, g_redate_to);
}

/* A date set by the callout `earlier` seconds before the timer's own (0:
   the same) is ignored (CF): the timer goes on along its own grid. */
static void redating_inside_the_callout_is_ignored(double earlier) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLAbsoluteTime date = RLAbsoluteTimeGetCurrent() - 0.001;
    g_redate_to = date - earlier;
    RLRunLoopTimerRef t = rl_test_timer(date, 10, redate_self, NULL);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT(fabs(RLRunLoopTimerGetNextFireDate(t) - (date + 10)) < 1e-6);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
    RLRelease(keep);
}

static void redating_earlier_inside_the_callout_is_ignored(void) {
    redating_inside_the_callout_is_ignored(0.5);
}

/* The same date set again counts as not later: ignored as well. */
static void redating_to_the_same_date_inside_the_callout_is_ignored(void) {
    redating_inside_the_callout_is_ignored(0);
}

/* Timers 0, 1, 2 (logging their index), all due at `date`, added in order. */
static void add_three_indexed(RLRunLoopRef rl, RLAbsoluteTime date, RLRunLoopTimerRef t[3]) {
    for (int i = 0; i < 3; i++) {
        t[i] = rl_test_indexed_timer(date, i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
    }
}

/* A timer removed and added again goes after the others of its date. */
static void readded_timer_goes_after_others_with_the_same_date(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLAbsoluteTime date = 0.01;
    rl_test_advance(0.01);
    RLRunLoopTimerRef t[3];
    add_three_indexed(rl, date, t);
    RLRunLoopRemoveTimer(rl, t[0], kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(rl, t[0], kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 1, 2, 0);
    for (int i = 0; i < 3; i++) RLRelease(t[i]);
}

/* A timer re-dated to the date of others goes after them. */
static void redated_timer_goes_after_others_with_the_same_date(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLAbsoluteTime date = 0.01;
    rl_test_advance(0.01);
    RLRunLoopTimerRef t[3];
    add_three_indexed(rl, date, t);
    RLRunLoopTimerSetNextFireDate(t[1], date);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 2, 1);
    for (int i = 0; i < 3; i++) RLRelease(t[i]);
}

/* ---- a pass fires what was due when it began, in that order ---- */

/* Timer 0 (logs 0) is due first; timers 1 and 2 (log 1, 2) after it. Its
   callout does g_disturb to them; then one pass has run. */
static RLRunLoopTimerRef g_pass_timers[4];
static RLAbsoluteTime g_pass_made; /* before the pass began: dates before it are due in it */
static void (*g_disturb)(RLRunLoopTimerRef *timers);
static void log_and_disturb(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    rl_test_log_add(&rl_test_callouts, 0);
    g_disturb(g_pass_timers);
}
static void pass_where_the_first_timer_disturbs(void (*disturb)(RLRunLoopTimerRef *timers)) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    g_pass_made = now;
    g_disturb = disturb;
    g_pass_timers[0] = rl_test_timer(now - 0.03, 0, log_and_disturb, NULL);
    g_pass_timers[1] = rl_test_indexed_timer(now - 0.02, 1);
    g_pass_timers[2] = rl_test_indexed_timer(now - 0.01, 2);
    g_pass_timers[3] = NULL;
    for (int i = 0; i < 3; i++) RLRunLoopAddTimer(rl, g_pass_timers[i], kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RLRelease(keep);
}
static void release_pass_timers(void) {
    for (int i = 0; i < 4; i++)
        if (g_pass_timers[i]) {
            RLRunLoopTimerInvalidate(g_pass_timers[i]);
            RLRelease(g_pass_timers[i]);
        }
}

static void redate_the_last_before_the_middle(RLRunLoopTimerRef *timers) {
    RLRunLoopTimerSetNextFireDate(timers[2], g_pass_made - 0.025);
}
/* Re-dated by an earlier callout to a date still due (here before another
   due timer): fires in this pass, in its place (CF collects the due timers
   first, and checks each again at its turn). */
static void timer_redated_still_due_fires_in_its_place_in_the_pass(void) {
    pass_where_the_first_timer_disturbs(redate_the_last_before_the_middle);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2);
    release_pass_timers();
}

static void redate_the_middle_after_the_last(RLRunLoopTimerRef *timers) {
    RLRunLoopTimerSetNextFireDate(timers[1], g_pass_made - 0.005);
}
static void timer_redated_later_but_still_due_fires_in_its_place_in_the_pass(void) {
    pass_where_the_first_timer_disturbs(redate_the_middle_after_the_last);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2);
    release_pass_timers();
}

static void readd_the_middle(RLRunLoopTimerRef *timers) {
    RLRunLoopRemoveTimer(RLRunLoopGetCurrent(), timers[1], kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), timers[1], kRLRunLoopDefaultMode);
}
/* Removed and added again (still due) by an earlier callout: fires in its place. */
static void timer_readded_by_an_earlier_callout_fires_in_its_place_in_the_pass(void) {
    pass_where_the_first_timer_disturbs(readd_the_middle);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2);
    release_pass_timers();
}

static void add_a_due_timer(RLRunLoopTimerRef *timers) {
    timers[3] = rl_test_indexed_timer(RLAbsoluteTimeGetCurrent() - 0.05, 3);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), timers[3], kRLRunLoopDefaultMode);
}
/* After a pass whose first callout did `disturb`, adding timer 3 already
   due: that pass fired 0, 1, 2 only; the next pass fires 3. */
static void added_due_timer_waits_for_the_next_pass(void (*disturb)(RLRunLoopTimerRef *timers)) {
    pass_where_the_first_timer_disturbs(disturb);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2);
    RLRunLoopSourceRef keep = rl_test_keep_mode(RLRunLoopGetCurrent(), kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2, 3);
    RLRelease(keep);
    release_pass_timers();
}

/* A timer a callout adds already due (even before every other) waits for
   the next pass; the pass goes on with the timers it owes. */
static void timer_added_due_by_a_callout_fires_in_the_next_pass(void) {
    added_due_timer_waits_for_the_next_pass(add_a_due_timer);
}

static void redate_the_middle_and_add_a_due_timer(RLRunLoopTimerRef *timers) {
    add_a_due_timer(timers);
    redate_the_middle_after_the_last(timers);
}
static void timer_redated_and_timer_added_in_one_callout(void) {
    added_due_timer_waits_for_the_next_pass(redate_the_middle_and_add_a_due_timer);
}

static void run_nested_once(RLRunLoopTimerRef *timers) {
    (void)timers;
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false), kRLRunLoopRunTimedOut);
}
/* A run nested in the first callout fires the others; the outer pass does
   not fire them again. */
static void timers_fired_by_a_nested_pass_are_not_fired_again(void) {
    pass_where_the_first_timer_disturbs(run_nested_once);
    RL_ASSERT_LOG(&rl_test_callouts, 0, 1, 2);
    release_pass_timers();
}

/* ---- moving between loops from the callout ---- */

typedef struct {
    RLRunLoopRef to;
    RLThreadRef thread;
    atomic_int fires_there;
    atomic_int fires_here;
    RLRunLoopRef here;
} move_rec;

static void move_to_other_loop(RLRunLoopTimerRef t, void *info) {
    move_rec *r = info;
    RLRunLoopRef cur = RLRunLoopGetCurrent();
    if (cur == r->here) {
        atomic_fetch_add(&r->fires_here, 1);
        RLRunLoopRemoveTimer(cur, t, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(r->to, t, kRLRunLoopDefaultMode);
        RLRunLoopStop(cur);
    } else {
        RL_ASSERT(cur == r->to);
        atomic_fetch_add(&r->fires_there, 1);
    }
}

/* r->here is rl; r->to the loop of a new thread "other", asleep. */
static void start_the_other_loop(move_rec *r, RLRunLoopRef rl) {
    r->here = rl;
    r->thread = RLThreadCreate("other");
    RL_ASSERT(RLThreadStart(r->thread));
    r->to = RLThreadGetRunLoop(r->thread);
    RL_ASSERT(rl_test_wait_sleeping(r->to, 5));
}

/* Moved to another loop by its own callout, a 10 Hz timer keeps firing there
   on time (the other loop re-arms for it). */
static void timer_moved_to_another_loop_in_its_callout_fires_there_on_time(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static move_rec r;
    start_the_other_loop(&r, rl);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0, 0.1, move_to_other_loop, &r);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(atomic_load(&r.fires_here), 1);
    RL_ASSERT(RLRunLoopContainsTimer(r.to, t, kRLRunLoopDefaultMode));
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode));
    /* ~7 fires in 0.75 s; at least 3 even on a loaded machine. */
    rl_test_sleep(0.75);
    printf("  moved by its callout, a 10 Hz timer fired %d times in 0.75 s on the other loop\n",
           atomic_load(&r.fires_there));
    RL_ASSERT_GE_INT(atomic_load(&r.fires_there), 3);
    RLRunLoopTimerInvalidate(t);
    RLThreadStop(r.thread);
    RLThreadRelease(r.thread);
    RLRelease(t);
    RLRelease(keep);
}

/* A one-shot timer whose callout moves it to another loop is still
   invalidated after that callout: it leaves the other loop, never fires
   there, and its info (handed over: release, no retain) is released once. */
static atomic_int g_moved_one_shot_releases;
static void count_moved_one_shot_release(const void *info) {
    (void)info;
    atomic_fetch_add(&g_moved_one_shot_releases, 1);
}

static void move_one_shot_to_other_loop(RLRunLoopTimerRef t, void *info) {
    move_rec *r = info;
    atomic_fetch_add(RLRunLoopGetCurrent() == r->here ? &r->fires_here : &r->fires_there, 1);
    RLRunLoopRemoveTimer(r->here, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(r->to, t, kRLRunLoopDefaultMode);
    RL_ASSERT(RLRunLoopContainsTimer(r->to, t, kRLRunLoopDefaultMode));
}

static void one_shot_moved_to_another_loop_by_its_callout_is_invalidated_there(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static move_rec r;
    start_the_other_loop(&r, rl);
    RLRunLoopTimerContext ctx = {0, &r, NULL, count_moved_one_shot_release, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0, 0, 0, move_one_shot_to_other_loop, &ctx);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(atomic_load(&r.fires_here), 1);
    RL_ASSERT(!RLRunLoopTimerIsValid(t));
    RL_ASSERT(!RLRunLoopContainsTimer(r.to, t, kRLRunLoopDefaultMode));
    RL_ASSERT(!RLRunLoopContainsTimer(rl, t, kRLRunLoopDefaultMode));
    RL_ASSERT_EQ_INT(atomic_load(&g_moved_one_shot_releases), 1);
    rl_test_sleep(0.1);
    RL_ASSERT_EQ_INT(atomic_load(&r.fires_there), 0);
    RLThreadStop(r.thread);
    RLThreadRelease(r.thread);
    RLRelease(t);
    RL_ASSERT_EQ_INT(atomic_load(&g_moved_one_shot_releases), 1);
    RLRelease(keep);
}

/* Two loops bounce timers between them from the timers' own callouts: every
   timer fires exactly its quota, always on the loop it is in. */
enum { BOUNCE_TIMERS = 16 };
typedef struct {
    RLRunLoopRef loops[2];
    atomic_int fires[BOUNCE_TIMERS];
    atomic_int done;
    atomic_int wrong_loop;
    int quota;
} bounce_rec;
static bounce_rec g_bounce;

static void bounce(RLRunLoopTimerRef t, void *info) {
    int i = (int)(intptr_t)info;
    RLRunLoopRef cur = RLRunLoopGetCurrent();
    int side = cur == g_bounce.loops[1];
    if (cur != g_bounce.loops[side]) atomic_fetch_add(&g_bounce.wrong_loop, 1);
    if (!RLRunLoopContainsTimer(cur, t, kRLRunLoopDefaultMode) && !RLRunLoopContainsTimer(cur, t, "alt"))
        atomic_fetch_add(&g_bounce.wrong_loop, 1);
    if (atomic_fetch_add(&g_bounce.fires[i], 1) + 1 >= g_bounce.quota) {
        RLRunLoopTimerInvalidate(t);
        atomic_fetch_add(&g_bounce.done, 1);
        return;
    }
    RLRunLoopRemoveTimer(cur, t, kRLRunLoopDefaultMode);
    RLRunLoopRemoveTimer(cur, t, "alt");
    RLRunLoopRef other = g_bounce.loops[!side];
    RLRunLoopAddTimer(other, t, kRLRunLoopDefaultMode);
    /* Every third move also lands in a second mode of the other loop. */
    if (i % 3 == 0) RLRunLoopAddTimer(other, t, "alt");
    /* Move the date about too, within the callout. */
    if (i % 4 == 1) RLRunLoopTimerSetNextFireDate(t, RLAbsoluteTimeGetCurrent() + 0.0003);
}

static void timers_bounced_between_two_loops_by_their_callouts_all_fire(void) {
    g_bounce.quota = (int)rl_test_scaled(300);
    RLThreadRef th[2];
    rl_test_start_loops_on_threads(2, th, g_bounce.loops);
    RLRunLoopTimerRef t[BOUNCE_TIMERS];
    for (int i = 0; i < BOUNCE_TIMERS; i++) {
        t[i] = rl_test_add_timer(g_bounce.loops[i & 1], kRLRunLoopDefaultMode, 0, 0.0002 * (1 + i % 3), bounce,
                                 (void *)(intptr_t)i);
    }
    double end = rl_test_now() + 60;
    while (atomic_load(&g_bounce.done) < BOUNCE_TIMERS && rl_test_now() < end) rl_test_sleep(0.005);
    RL_ASSERT_EQ_INT(atomic_load(&g_bounce.done), BOUNCE_TIMERS);
    for (int i = 0; i < BOUNCE_TIMERS; i++) RL_ASSERT_EQ_INT(atomic_load(&g_bounce.fires[i]), g_bounce.quota);
    RL_ASSERT_EQ_INT(atomic_load(&g_bounce.wrong_loop), 0);
    rl_test_stop_loops_on_threads(2, th, g_bounce.loops);
    for (int i = 0; i < BOUNCE_TIMERS; i++) RLRelease(t[i]);
}

/* The same bouncing while a third thread keeps moving and re-dating the
   timers too (their callouts may end with the timer in either loop, or in
   none for a moment): every timer still fires exactly its quota. */
static atomic_int g_mover_stop;
static RLRunLoopTimerRef g_moved[BOUNCE_TIMERS];

static void *mover(void *arg) {
    (void)arg;
    uint32_t x = 12345;
    while (!atomic_load(&g_mover_stop)) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        RLRunLoopTimerRef t = g_moved[x % BOUNCE_TIMERS];
        RLRunLoopRemoveTimer(g_bounce.loops[0], t, kRLRunLoopDefaultMode);
        RLRunLoopRemoveTimer(g_bounce.loops[1], t, kRLRunLoopDefaultMode);
        RLRunLoopAddTimer(g_bounce.loops[(x >> 8) & 1], t, kRLRunLoopDefaultMode);
        /* Now and then, so that no timer is kept from ever coming due. */
        if (((x >> 9) & 15) == 0) RLRunLoopTimerSetNextFireDate(t, RLAbsoluteTimeGetCurrent() + 0.0002);
        if ((x & 15) == 0) rl_test_sleep(0.0002);
    }
    return NULL;
}

static void bounce_loose(RLRunLoopTimerRef t, void *info) {
    int i = (int)(intptr_t)info;
    RLRunLoopRef cur = RLRunLoopGetCurrent();
    int side = cur == g_bounce.loops[1];
    if (atomic_fetch_add(&g_bounce.fires[i], 1) + 1 >= g_bounce.quota) {
        RLRunLoopTimerInvalidate(t);
        atomic_fetch_add(&g_bounce.done, 1);
        return;
    }
    RLRunLoopRemoveTimer(cur, t, kRLRunLoopDefaultMode);
    RLRunLoopAddTimer(g_bounce.loops[!side], t, kRLRunLoopDefaultMode);
}

static void timers_moved_by_another_thread_while_they_fire_all_fire(void) {
    g_bounce.quota = (int)rl_test_scaled(200);
    RLThreadRef th[2];
    rl_test_start_loops_on_threads(2, th, g_bounce.loops);
    for (int i = 0; i < BOUNCE_TIMERS; i++) {
        g_moved[i] = rl_test_add_timer(g_bounce.loops[i & 1], kRLRunLoopDefaultMode, 0, 0.0003, bounce_loose,
                                       (void *)(intptr_t)i);
    }
    pthread_t m;
    RL_ASSERT_EQ_INT(pthread_create(&m, NULL, mover, NULL), 0);
    double end = rl_test_now() + 60;
    while (atomic_load(&g_bounce.done) < BOUNCE_TIMERS && rl_test_now() < end) rl_test_sleep(0.005);
    atomic_store(&g_mover_stop, 1);
    pthread_join(m, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_bounce.done), BOUNCE_TIMERS);
    for (int i = 0; i < BOUNCE_TIMERS; i++) RL_ASSERT_EQ_INT(atomic_load(&g_bounce.fires[i]), g_bounce.quota);
    rl_test_stop_loops_on_threads(2, th, g_bounce.loops);
    for (int i = 0; i < BOUNCE_TIMERS; i++) RLRelease(g_moved[i]);
}

/* ---- tolerance ---- */

/* The wake-ups of the current loop, counted by an observer, and after
   which one each of up to 5 timers fired, and when. */
enum { SHARED_WAKE_TIMERS = 5 };
static int g_wakes;
static int g_wake_of[SHARED_WAKE_TIMERS];
static double g_fired_at[SHARED_WAKE_TIMERS];
static void note_wake_of_fire(RLRunLoopTimerRef t, void *info) {
    (void)t;
    long i = (long)(intptr_t)info;
    g_wake_of[i] = g_wakes;
    g_fired_at[i] = rl_test_loop_time();
}

/* Runs n one-shot timers without tolerance, due `ahead` seconds from now and
   `apart` seconds apart, in the current loop on a manual clock; fails
   unless all fired after one wake-up, at the last one's date. */
static void timers_fire_after_one_wake_up(int n, double ahead, double apart) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopObserverRef o = rl_test_wake_counter(rl, kRLRunLoopDefaultMode, &g_wakes);
    double start = 0;
    RLAbsoluteTime now = 0;
    rl_test_advance(1);
    RLRunLoopTimerRef t[SHARED_WAKE_TIMERS];
    for (long i = 0; i < n; i++) {
        t[i] = rl_test_timer(now + ahead + apart * (double)i, 0, note_wake_of_fire, (void *)(intptr_t)i);
        RLRunLoopAddTimer(rl, t[i], kRLRunLoopDefaultMode);
        RL_ASSERT_EQ_DBL(RLRunLoopTimerGetTolerance(t[i]), 0); /* what groups them is no tolerance */
    }
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunFinished);
    for (int i = 0; i < n; i++) {
        RL_ASSERT(fabs(g_fired_at[i] - start - (ahead + apart * (n - 1))) < 1e-9);
        RL_ASSERT_EQ_INT(g_wake_of[i], g_wake_of[0]);
        RLRelease(t[i]);
    }
    RLRunLoopObserverInvalidate(o);
    RLRelease(o);
}

/* Timers whose dates lie within the thread's timer slack of the earliest one
   share one wake-up (the kernel allows itself that much for any sleep), none
   fired before its date. With a 20 ms slack, five timers 2 ms apart fire in
   one pass (five passes before). */
static void timers_within_the_timer_slack_share_one_wake_up(void) {
    RL_ASSERT_EQ_INT(prctl(PR_SET_TIMERSLACK, 20000000UL, 0, 0, 0), 0);
    timers_fire_after_one_wake_up(5, 0.1, 0.002);
}

/* Timers without tolerance scheduled far ahead may share a wake-up within
   their implicit leeway (an eighth of how far ahead, capped at 500 us): two
   timers 200 us apart, scheduled 0.2 s ahead, fire in one pass, neither
   before its date, even with the thread's timer slack at its minimum. Run on
   a thread of its own, whose loop reads that slack. */
static void *leeway_thread(void *arg) {
    (void)arg;
    RL_ASSERT_EQ_INT(prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0), 0);
    timers_fire_after_one_wake_up(2, 0.2, 0.0002);
    return NULL;
}
static void timers_scheduled_far_ahead_share_a_wake_up_within_their_leeway(void) {
    pthread_t thread;
    RL_ASSERT_EQ_INT(pthread_create(&thread, NULL, leeway_thread, NULL), 0);
    RL_ASSERT_EQ_INT(pthread_join(thread, NULL), 0);
}

/* A one-shot timer due at `date`, given `tolerance` (if any) before it is
   added to the current loop's default mode, noting its fire in note; the
   caller releases it. */
static RLRunLoopTimerRef add_tolerant_timer(RLAbsoluteTime date, RLTimeInterval tolerance, rl_test_fire_note *note) {
    RLRunLoopTimerRef t = rl_test_timer(date, 0, rl_test_note_fire, note);
    if (tolerance > 0) RLRunLoopTimerSetTolerance(t, tolerance);
    RLRunLoopAddTimer(RLRunLoopGetCurrent(), t, kRLRunLoopDefaultMode);
    return t;
}

/* Alone, a timer with a large tolerance fires at its date, not at the end of
   its window (5 s late before). */
static void lone_timer_with_tolerance_fires_at_its_date(void) {
    rl_test_manual_loop(0);
    static rl_test_fire_note w;
    RLRunLoopTimerRef t = add_tolerant_timer(0.05, 5, &w);
    rl_test_advance(20);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(w.fired, 1);
    RL_ASSERT_EQ_DBL(w.at, 0.05);
    RLRelease(t);
}

/* A tolerant timer whose window holds another timer's date waits for it:
   one wake-up fires both (at the later date, earliest first). */
static void tolerant_timer_shares_a_wake_up_with_a_timer_in_its_window(void) {
    rl_test_manual_loop(0);
    static rl_test_fire_note w[2];
    RLRunLoopTimerRef early = add_tolerant_timer(0.05, 1, &w[0]);
    RLRunLoopTimerRef late = add_tolerant_timer(0.15, 0, &w[1]);
    rl_test_advance(20);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(w[0].fired + w[1].fired, 2);
    RL_ASSERT_EQ_DBL(w[0].at, 0.15);
    RL_ASSERT_EQ_DBL(w[1].at, 0.15);
    RLRelease(early);
    RLRelease(late);
}

/* The same on real time, where the loop's timerfd is armed for the shared
   wake-up: never before the later date, earliest first. */
static void tolerant_timer_shares_a_wake_up_on_real_time(void) {
    static rl_test_fire_note w[2];
    double start = rl_test_now();
    RLAbsoluteTime now = RLAbsoluteTimeGetCurrent();
    RLRunLoopTimerRef early = add_tolerant_timer(now + 0.05, 1, &w[0]);
    RLRunLoopTimerRef late = add_tolerant_timer(now + 0.15, 0, &w[1]);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 20, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(w[0].fired + w[1].fired, 2);
    RL_ASSERT_GE_DBL(w[0].mono_at - start, 0.15 - CLOCK_SLACK);
    RL_ASSERT_LE_DBL(w[0].mono_at, w[1].mono_at);
    RLRelease(early);
    RLRelease(late);
}

/* A timer beyond every window does not hold the tolerant one back: it fires
   at its date (it waited up to 2.5 s of real time before). */
static void tolerant_timer_does_not_wait_for_a_timer_outside_its_window(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static rl_test_fire_note w[2];
    RLRunLoopTimerRef early = add_tolerant_timer(0.05, 3, &w[0]);
    RLRunLoopTimerRef late = add_tolerant_timer(10, 3, &w[1]);
    rl_test_advance(2.9);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 2.9, true), kRLRunLoopRunTimedOut);
    RL_ASSERT_EQ_INT(w[0].fired, 1);
    RL_ASSERT_EQ_INT(w[1].fired, 0);
    RL_ASSERT_EQ_DBL(w[0].at, 0.05);
    RLRunLoopTimerInvalidate(late);
    RLRelease(early);
    RLRelease(late);
    RLRelease(keep);
}

/* ---- ownership of the context info ---- */

/* An info counting its retains and releases (rl_test_counted's callbacks
   take it for the rl_test_counted it starts with) and its callouts. */
typedef struct {
    rl_test_counted counted;
    int calls;
} owned;

static void owned_timer_fire(RLRunLoopTimerRef t, void *info) {
    owned *o = info;
    o->calls++;
    if (o->calls == 11) RLRunLoopTimerInvalidate(t);
}

/* release without retain hands ownership over: release exactly once. */
static void timer_context_with_release_but_no_retain_is_released_once(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    static owned o;
    RLRunLoopTimerContext c = {0, &o, NULL, rl_test_counted_release, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(0, 0.001, 0, 0, owned_timer_fire, &c);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    rl_test_advance(1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(o.calls, 11);
    RL_ASSERT_EQ_INT(o.counted.releases, 1);
    RLRelease(t);
    RL_ASSERT_EQ_INT(o.counted.releases, 1);
}

/* With retain, every callout is bracketed by retain and release. */
static void timer_context_with_retain_brackets_every_callout(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    static owned o;
    RLRunLoopTimerContext c = {0, &o, rl_test_counted_retain, rl_test_counted_release, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(0, 0.001, 0, 0, owned_timer_fire, &c);
    RL_ASSERT_EQ_INT(o.counted.retains, 1);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    rl_test_advance(1);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false), kRLRunLoopRunFinished);
    RL_ASSERT_EQ_INT(o.calls, 11);
    RL_ASSERT_EQ_INT(o.counted.retains, 12);
    RL_ASSERT_EQ_INT(o.counted.releases, 12);
    RLRelease(t);
    RL_ASSERT_EQ_INT(o.counted.releases, 12);
}

/* A timer invalidated by another thread while its callout runs: its info
   (handed over: release, no retain) stays alive until the callout returns,
   and is released exactly once, then. */
typedef struct {
    atomic_int in_callout, invalidated, releases, released_during_callout;
} handed_over;
static handed_over g_handed;

static void handed_over_release(const void *info) {
    handed_over *h = (handed_over *)info;
    if (atomic_load(&h->in_callout)) atomic_fetch_add(&h->released_during_callout, 1);
    atomic_fetch_add(&h->releases, 1);
}

static void wait_for_invalidation(RLRunLoopTimerRef t, void *info) {
    (void)t;
    handed_over *h = info;
    atomic_store(&h->in_callout, 1);
    double end = rl_test_now() + 10;
    while (!atomic_load(&h->invalidated) && rl_test_now() < end) rl_test_sleep(0.001);
    atomic_store(&h->in_callout, 0);
}

static void *invalidate_when_in_callout(void *arg) {
    RLRunLoopTimerRef t = arg;
    while (!atomic_load(&g_handed.in_callout)) rl_test_sleep(0.001);
    RLRunLoopTimerInvalidate(t);
    atomic_store(&g_handed.invalidated, 1);
    return NULL;
}

static void timer_invalidated_by_another_thread_mid_callout_releases_info_after_it(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    RLRunLoopTimerContext c = {0, &g_handed, NULL, handed_over_release, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0.001, 0, 0, wait_for_invalidation, &c);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    pthread_t other;
    RL_ASSERT_EQ_INT(pthread_create(&other, NULL, invalidate_when_in_callout, t), 0);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0.2, false);
    pthread_join(other, NULL);
    RL_ASSERT_EQ_INT(atomic_load(&g_handed.invalidated), 1);
    RL_ASSERT_EQ_INT(atomic_load(&g_handed.released_during_callout), 0);
    RL_ASSERT_EQ_INT(atomic_load(&g_handed.releases), 1);
    RLRelease(t);
    RL_ASSERT_EQ_INT(atomic_load(&g_handed.releases), 1);
    RLRunLoopSourceInvalidate(keep);
    RLRelease(keep);
}

/* A retain callback is user code: it runs with no lock held, so it may use
   the timer it belongs to (under the timer's own lock it would deadlock). */
static RLRunLoopTimerRef g_self_inspecting;
static int g_self_inspections;
static const void *retain_that_reads_the_timer(const void *info) {
    if (g_self_inspecting) {
        (void)RLRunLoopTimerGetNextFireDate(g_self_inspecting);
        (void)RLRunLoopTimerIsValid(g_self_inspecting);
        g_self_inspections++;
    }
    return info;
}
static void nothing_released(const void *info) {
    (void)info;
}

static void timer_retain_callback_may_use_its_timer(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopTimerContext c = {0, NULL, retain_that_reads_the_timer, nothing_released, NULL};
    RLRunLoopTimerRef t = RLRunLoopTimerCreate(RLAbsoluteTimeGetCurrent(), 0, 0, 0, rl_test_stop_current, &c);
    g_self_inspecting = t;
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false);
    RL_ASSERT_EQ_INT(g_self_inspections, 1);
    g_self_inspecting = NULL;
    RLRelease(t);
}

/* ---- the next fire date while a timer fires ---- */

/* In CF a timer stays in its modes' sorted timer lists while its callout
   runs (it is taken out only if invalidated or removed), so asking a mode
   for its next fire date from inside that callout sees the firing timer: a
   mode whose only timer is firing answers that timer's date, not 0. A
   repeating timer moves to its next date only after the callout, so the
   date seen is the one being fired. */
typedef struct {
    RLRunLoopRef ask;       /* the loop asked */
    RLRunLoopMode mode;     /* and the mode */
    RLRunLoopRef move_to;   /* if set, the callout first moves its timer from `ask`'s mode there */
    RLAbsoluteTime seen[2]; /* RLRunLoopGetNextTimerFireDate inside each callout */
    RLAbsoluteTime own[2];  /* the timer's own date then */
    RLAbsoluteTime left;    /* RLRunLoopGetNextTimerFireDate(ask) after the move */
    int fires;
} next_date_seen;

static void note_next_fire_date(RLRunLoopTimerRef t, void *info) {
    next_date_seen *r = info;
    if (r->move_to) {
        RLRunLoopRef from = r->ask;
        RLRunLoopRemoveTimer(from, t, r->mode);
        RLRunLoopAddTimer(r->move_to, t, r->mode);
        r->left = RLRunLoopGetNextTimerFireDate(from, r->mode);
        r->ask = r->move_to;
    }
    r->seen[r->fires] = RLRunLoopGetNextTimerFireDate(r->ask, r->mode);
    r->own[r->fires] = RLRunLoopTimerGetNextFireDate(t);
    if (++r->fires == 2 || r->move_to) RLRunLoopStop(RLRunLoopGetCurrent());
}

/* A one-shot timer alone in its mode: its date inside its callout, 0 after
   (invalidated). */
static void next_fire_date_inside_the_only_timers_callout_is_its_date(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    next_date_seen r = {.ask = rl, .mode = "only.timer"};
    RLAbsoluteTime date = RLAbsoluteTimeGetCurrent() - 0.001;
    RLRunLoopTimerRef t = rl_test_timer(date, 0, note_next_fire_date, &r);
    RLRunLoopAddTimer(rl, t, r.mode);
    RLRunLoopRunInMode(r.mode, 5, true);
    RL_ASSERT_EQ_INT(r.fires, 1);
    RL_ASSERT_EQ_DBL(r.seen[0], date);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, r.mode), 0);
    RLRelease(t);
}

/* A repeating timer: the date being fired inside each callout (the second
   is a later point of its grid), its next date after the callouts. */
static void next_fire_date_inside_a_repeating_timers_callout_is_the_date_being_fired(void) {
    RLRunLoopRef rl = rl_test_manual_loop(0);
    next_date_seen r = {.ask = rl, .mode = "only.timer"};
    RLAbsoluteTime date = -0.001;
    RLRunLoopTimerRef t = rl_test_timer(date, 0.02, note_next_fire_date, &r);
    RLRunLoopAddTimer(rl, t, r.mode);
    rl_test_advance(10);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(r.mode, 10, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(r.fires, 2);
    RL_ASSERT_EQ_DBL(r.seen[0], date);
    RL_ASSERT_EQ_DBL(r.own[0], date);
    RL_ASSERT_EQ_DBL(r.seen[1], r.own[1]);
    RL_ASSERT(r.seen[1] > date);
    RLAbsoluteTime next = RLRunLoopGetNextTimerFireDate(rl, r.mode);
    RL_ASSERT_EQ_DBL(next, RLRunLoopTimerGetNextFireDate(t));
    RL_ASSERT(next > r.seen[1]);
    RLRunLoopTimerInvalidate(t);
    RLRelease(t);
}

/* The same through the common modes: the firing timer is in every common
   mode's list, and so in the answer for kRLRunLoopCommonModes. */
static void next_fire_date_of_the_common_modes_inside_the_only_timers_callout_is_its_date(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    next_date_seen r = {.ask = rl, .mode = kRLRunLoopCommonModes};
    RLRunLoopAddCommonMode(rl, "also.common");
    RLAbsoluteTime date = RLAbsoluteTimeGetCurrent() - 0.001;
    RLRunLoopTimerRef t = rl_test_timer(date, 0, note_next_fire_date, &r);
    RLRunLoopAddTimer(rl, t, kRLRunLoopCommonModes);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, true);
    RL_ASSERT_EQ_INT(r.fires, 1);
    RL_ASSERT_EQ_DBL(r.seen[0], date);
    RL_ASSERT_EQ_DBL(RLRunLoopGetNextTimerFireDate(rl, kRLRunLoopCommonModes), 0);
    RLRelease(t);
}

/* Moved by its own callout from this loop's mode to another loop's: there
   it is the mode's timer at once (CF adds it to that mode's sorted list),
   so the other loop answers its date while the callout still runs, and this
   loop no longer does. After the callout a one-shot timer is invalidated
   (0), a repeating one is scheduled on its grid there. */
static void next_fire_date_after_a_move_in_the_callout(RLTimeInterval interval) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef keep = rl_test_keep_mode(rl, kRLRunLoopDefaultMode);
    static move_rec other;
    start_the_other_loop(&other, rl);
    next_date_seen r = {.ask = rl, .mode = kRLRunLoopDefaultMode, .move_to = other.to};
    RLAbsoluteTime date = RLAbsoluteTimeGetCurrent() - 0.001;
    RLRunLoopTimerRef t = rl_test_timer(date, interval, note_next_fire_date, &r);
    RLRunLoopAddTimer(rl, t, kRLRunLoopDefaultMode);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunStopped);
    RL_ASSERT_EQ_INT(r.fires, 1);
    RL_ASSERT_EQ_DBL(r.left, 0);
    RL_ASSERT_EQ_DBL(r.seen[0], date);
    RLAbsoluteTime after = RLRunLoopGetNextTimerFireDate(other.to, kRLRunLoopDefaultMode);
    if (interval > 0) RL_ASSERT_EQ_DBL(after, RLRunLoopTimerGetNextFireDate(t));
    else RL_ASSERT_EQ_DBL(after, 0);
    RLRunLoopTimerInvalidate(t);
    RLThreadStop(other.thread);
    RLThreadRelease(other.thread);
    RLRelease(t);
    RLRelease(keep);
}

static void next_fire_date_of_a_one_shot_moved_by_its_callout_is_its_date_there(void) {
    next_fire_date_after_a_move_in_the_callout(0);
}

static void next_fire_date_of_a_repeating_timer_moved_by_its_callout_is_its_date_there(void) {
    next_fire_date_after_a_move_in_the_callout(1000);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(nested_run_from_a_timer_callout_fires_the_other_due_timers),
        RL_TEST(timer_is_not_fired_again_inside_its_own_nested_run),
        RL_TEST(timer_redated_by_an_earlier_callout_keeps_that_date),
        RL_TEST(timer_removed_from_the_running_mode_keeps_its_date),
        RL_TEST(timer_invalidated_by_an_earlier_callout_is_not_called),
        RL_TEST(redating_earlier_inside_the_callout_is_ignored),
        RL_TEST(redating_to_the_same_date_inside_the_callout_is_ignored),
        RL_TEST(readded_timer_goes_after_others_with_the_same_date),
        RL_TEST(redated_timer_goes_after_others_with_the_same_date),
        RL_TEST(timer_moved_to_another_loop_in_its_callout_fires_there_on_time),
        RL_TEST(one_shot_moved_to_another_loop_by_its_callout_is_invalidated_there),
        RL_TEST(timers_bounced_between_two_loops_by_their_callouts_all_fire),
        RL_TEST(timers_moved_by_another_thread_while_they_fire_all_fire),
        RL_TEST(lone_timer_with_tolerance_fires_at_its_date),
        RL_TEST(tolerant_timer_shares_a_wake_up_with_a_timer_in_its_window),
        RL_TEST(tolerant_timer_shares_a_wake_up_on_real_time),
        RL_TEST(tolerant_timer_does_not_wait_for_a_timer_outside_its_window),
        RL_TEST(timers_within_the_timer_slack_share_one_wake_up),
        RL_TEST(timer_redated_still_due_fires_in_its_place_in_the_pass),
        RL_TEST(timer_redated_later_but_still_due_fires_in_its_place_in_the_pass),
        RL_TEST(timer_readded_by_an_earlier_callout_fires_in_its_place_in_the_pass),
        RL_TEST(timer_added_due_by_a_callout_fires_in_the_next_pass),
        RL_TEST(timer_redated_and_timer_added_in_one_callout),
        RL_TEST(timers_fired_by_a_nested_pass_are_not_fired_again),
        RL_TEST(timers_scheduled_far_ahead_share_a_wake_up_within_their_leeway),
        RL_TEST(timer_context_with_release_but_no_retain_is_released_once),
        RL_TEST(timer_context_with_retain_brackets_every_callout),
        RL_TEST(timer_invalidated_by_another_thread_mid_callout_releases_info_after_it),
        RL_TEST(timer_retain_callback_may_use_its_timer),
        RL_TEST(next_fire_date_inside_the_only_timers_callout_is_its_date),
        RL_TEST(next_fire_date_inside_a_repeating_timers_callout_is_the_date_being_fired),
        RL_TEST(next_fire_date_of_the_common_modes_inside_the_only_timers_callout_is_its_date),
        RL_TEST(next_fire_date_of_a_one_shot_moved_by_its_callout_is_its_date_there),
        RL_TEST(next_fire_date_of_a_repeating_timer_moved_by_its_callout_is_its_date_there),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
