/* rl_main_queue.c: draining libdispatch's main queue from the main run loop. */
#include "rl_main_queue.h"

void rl_main_queue_install(RLRunLoopRef main_loop) {
    (void)main_loop;
}
