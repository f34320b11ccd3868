/*
 * CRunLoopLinux.h: Linux sources for the run loop (included by CRunLoop.h).
 * File descriptors (RLFileDescriptor), UNIX signals and thread message ports.
 */
#ifndef CRUNLOOP_LINUX_H
#define CRUNLOOP_LINUX_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_LINUX_H */
