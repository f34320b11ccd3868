/*
 * rl_main_queue.h: the hook that lets the main run loop drain libdispatch's
 * main queue. The core calls the install when the main thread's loop is made,
 * and again (at most once a second) when the main loop runs, until it finds
 * libdispatch: a C program may load it late.
 */
#ifndef RL_MAIN_QUEUE_H
#define RL_MAIN_QUEUE_H

#include "CRunLoop.h"

/* Attaches DispatchQueue.main to `main_loop` if libdispatch is in the process
   (found at run time); true once attached. Idempotent, any thread. */
bool rl_main_queue_install(RLRunLoopRef main_loop);

#endif
