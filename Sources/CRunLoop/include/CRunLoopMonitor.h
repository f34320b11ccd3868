/* CRunLoopMonitor.h (included by CRunLoop.h). */
#ifndef CRUNLOOP_MONITOR_H
#define CRUNLOOP_MONITOR_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_MONITOR_H */
