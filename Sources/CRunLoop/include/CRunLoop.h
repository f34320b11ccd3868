/*
 * CRunLoop.h: CoreFoundation's run loop (CFRunLoop) for Linux, in C: the one
 * header to include. Each header below stands alone and includes only
 * CRunLoopCore.h, so the headers include one another without a cycle.
 */
#ifndef CRUNLOOP_H
#define CRUNLOOP_H

/* The loop, its modes, version-0 and version-1 sources, observers, timers,
   queued functions and blocks, objects and descriptions. */
#include "CRunLoopCore.h"
/* The Linux extras: file descriptors, UNIX signals, thread message ports. */
#include "CRunLoopLinux.h"
/* Run-loop threads and perform requests across threads. */
#include "CRunLoopThread.h"
/* The hang monitor and idle tasks. */
#include "CRunLoopMonitor.h"
/* Running a loop inside another event loop. */
#include "CRunLoopEmbed.h"
/* What a loop has done: passes, sleeps, wake-ups, callouts. */
#include "CRunLoopStatistics.h"
/* Running a loop on a manual clock, for tests. */
#include "CRunLoopClock.h"

#endif /* CRUNLOOP_H */
