/* CRunLoopThread.h (included by CRunLoop.h). */
#ifndef CRUNLOOP_THREAD_H
#define CRUNLOOP_THREAD_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_THREAD_H */
