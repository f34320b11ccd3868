/*
 * rl_time.h: the two clocks. Deadlines are CLOCK_MONOTONIC nanoseconds
 * (int64, RL_NEVER = none); dates are RLAbsoluteTime (wall clock, seconds
 * since 2001). A date becomes a deadline once, when a timer is created or
 * re-dated, so later wall-clock jumps do not move timers (as in CF).
 */
#ifndef RL_TIME_H
#define RL_TIME_H

#include <stdint.h>
#include "CRunLoop.h"

#define RL_NEVER          INT64_MAX
/* CF's limits: intervals and timeouts beyond ~16 years mean "never". */
#define RL_INTERVAL_LIMIT 504911232.0
#define RL_DATE_LIMIT     4039289856.0

int64_t rl_mono_now(void);
/* The monotonic clock to the last clock tick: never ahead of rl_mono_now, a
   tick behind at most, and cheaper to read. */
int64_t rl_mono_coarse_now(void);
/* The coarse clock's tick (clock_getres), how far behind rl_mono_now it may
   be; read once. */
int64_t rl_mono_coarse_tick(void);
/* The deadline for `date`: equal dates give equal deadlines. */
int64_t rl_deadline_for_date(RLAbsoluteTime date);
/* The same, converted at `coarse_now`, a reading of rl_mono_coarse_now the
   caller needs anyway (adding a timer: one clock reading, not two). */
int64_t rl_deadline_for_date_at(RLAbsoluteTime date, int64_t coarse_now);
/* The deadline for `date` on a manual clock, whose deadlines are dates in
   ns since 2001 and whose reading is `now`: exact (equal dates, equal
   deadlines), clamped to ~16 years from now as on the real clock; NaN: now. */
int64_t rl_manual_deadline_for_date(RLAbsoluteTime date, int64_t now);
/* Seconds to nanoseconds, saturating. */
int64_t rl_seconds_to_ns(double seconds);

#endif
