/*
 * rl_main_queue.h: the hook that lets the main run loop drain libdispatch's
 * main queue. The core calls it once, when the main thread's loop is made.
 */
#ifndef RL_MAIN_QUEUE_H
#define RL_MAIN_QUEUE_H

#include "CRunLoop.h"

/* Attaches DispatchQueue.main to `main_loop` if libdispatch is in the process
   (found at run time). Called once with the main loop, on any thread. */
void rl_main_queue_install(RLRunLoopRef main_loop);

#endif
