/*
 * CRunLoopCFNames.h: CoreFoundation's run-loop names for this library (opt-in).
 *
 * A C program written for macOS against the run-loop part of CoreFoundation
 * builds here with one changed include:
 *
 *     #ifdef __APPLE__
 *     #include <CoreFoundation/CoreFoundation.h>
 *     #else
 *     #include <CRunLoopCFNames.h>
 *     #endif
 *
 * Every CF name below is a typedef of, a macro for, or a tiny inline shim over
 * the RL name of CRunLoop.h / CRunLoopLinux.h, so the behaviour is the one
 * documented there (bad input is ignored or clamped instead of crashing, as
 * each RL function says). This header is not part of the CRunLoop module that
 * Swift imports: Swift code uses SwiftRunLoop, or Foundation's own CF names.
 *
 * Provided (all of CF's run-loop API that has a Linux meaning here):
 *   types     CFRunLoopRef, CFRunLoopSourceRef, CFRunLoopObserverRef,
 *             CFRunLoopTimerRef, CFRunLoopMode, CFStringRef (modes only),
 *             CFTypeRef, CFArrayRef (from CFRunLoopCopyAllModes only),
 *             CFAllocatorRef, CFIndex, CFOptionFlags, CFHashCode, Boolean,
 *             UInt8 ... SInt64, CFTimeInterval, CFAbsoluteTime, CFRunLoopRunResult,
 *             CFRunLoopActivity, the context structs and callback types,
 *             CFFileDescriptorRef, CFFileDescriptorNativeDescriptor
 *   constants TRUE, FALSE, kCFRunLoopDefaultMode, kCFRunLoopCommonModes,
 *             kCFRunLoopRunFinished/Stopped/TimedOut/HandledSource,
 *             kCFRunLoopEntry/BeforeTimers/BeforeSources/BeforeWaiting/
 *             AfterWaiting/Exit/AllActivities, kCFAllocatorDefault,
 *             kCFFileDescriptorReadCallBack/WriteCallBack,
 *             kCFAbsoluteTimeIntervalSince1970/1904
 *   run loops CFRunLoopGetCurrent, CFRunLoopGetMain, CFRunLoopRun,
 *             CFRunLoopRunInMode, CFRunLoopStop, CFRunLoopWakeUp,
 *             CFRunLoopIsWaiting, CFRunLoopCopyCurrentMode,
 *             CFRunLoopCopyAllModes, CFRunLoopAddCommonMode,
 *             CFRunLoopGetNextTimerFireDate, CFRunLoopPerformBlock (blocks),
 *             CFRunLoop{Add,Remove,Contains}{Source,Observer,Timer}
 *   sources   CFRunLoopSourceCreate, CFRunLoopSourceGetOrder,
 *             CFRunLoopSourceInvalidate, CFRunLoopSourceIsValid,
 *             CFRunLoopSourceSignal, CFRunLoopSourceGetContext
 *   observers CFRunLoopObserverCreate, CFRunLoopObserverCreateWithHandler
 *             (blocks), CFRunLoopObserverGetActivities,
 *             CFRunLoopObserverDoesRepeat, CFRunLoopObserverGetOrder,
 *             CFRunLoopObserverInvalidate, CFRunLoopObserverIsValid,
 *             CFRunLoopObserverGetContext
 *   timers    CFRunLoopTimerCreate, CFRunLoopTimerCreateWithHandler (blocks),
 *             CFRunLoopTimerGetNextFireDate, CFRunLoopTimerSetNextFireDate,
 *             CFRunLoopTimerGetInterval, CFRunLoopTimerDoesRepeat,
 *             CFRunLoopTimerGetOrder, CFRunLoopTimerInvalidate,
 *             CFRunLoopTimerIsValid, CFRunLoopTimerGetTolerance,
 *             CFRunLoopTimerSetTolerance, CFRunLoopTimerGetContext
 *   fds       CFFileDescriptorCreate, CFFileDescriptorGetNativeDescriptor,
 *             CFFileDescriptorGetContext, CFFileDescriptorEnableCallBacks,
 *             CFFileDescriptorDisableCallBacks, CFFileDescriptorInvalidate,
 *             CFFileDescriptorIsValid, CFFileDescriptorCreateRunLoopSource
 *   objects   CFRetain, CFRelease, CFCopyDescription, CFEqual, CFShow,
 *             CFAbsoluteTimeGetCurrent, CFSTR, CFArrayGetCount,
 *             CFArrayGetValueAtIndex
 *
 * Not provided (a program using them does not compile here):
 *   - Mach-port sources: CFRunLoopSourceContext1's getPort/perform(msg...),
 *     CFMachPort*, CFMessagePort*. Here a version-1 source watches a file
 *     descriptor: CFRunLoopSourceContext1 is RLRunLoopSourceContext1
 *     (getFileDescriptor, perform(info)); CFFileDescriptor is the portable way.
 *   - CFSocket*, CFNotificationCenter*, CFUserNotification*, CFStream*.
 *   - Type identity: CF*GetTypeID, CFGetTypeID, CFGetRetainCount, CFHash.
 *   - Strings and collections beyond what modes need: CFString* functions
 *     (CFStringCreateWithCString, CFStringCompare, ...), CFArray* other than
 *     CFArrayGetCount/CFArrayGetValueAtIndex, CFDate*, CFTimeZone*.
 *   - Allocators other than kCFAllocatorDefault (NULL).
 *   - CFRunLoopPerformBlock with an array of modes (one mode only).
 *   - The block variants (CFRunLoopPerformBlock, *CreateWithHandler) without
 *     compiler support for blocks (clang -fblocks).
 *
 * Where this differs from CoreFoundation:
 *   - Modes are C strings, equal by content (CFRunLoopMode and CFStringRef are
 *     `const char *`), and CFSTR("Name") is the string itself. A custom mode
 *     is written as on macOS: CFSTR("MyMode"), or any C string.
 *   - CFRelease dispatches on the static type of its argument: a string (the
 *     result of CFRunLoopCopyCurrentMode or CFCopyDescription) is free()d, a
 *     CFArrayRef from CFRunLoopCopyAllModes is freed with its strings, and
 *     anything else must be one of this library's objects. So never CFRelease
 *     a CFSTR constant (CF tolerates it; here only kCFRunLoopDefaultMode and
 *     kCFRunLoopCommonModes are), and never release a string or an array
 *     through a CFTypeRef variable. `CFRelease` used as a value (a context's
 *     release field) releases objects only. CFRetain is for objects only.
 *   - Boolean is C's bool (CF's is unsigned char): the same size, and `true`
 *     and `false` work alike.
 *   - The copyDescription fields of the contexts return a malloc'd `char *`
 *     (which the library frees), not a CFStringRef; CFCopyDescription fits
 *     there. CFFileDescriptorContext's retain/release take `const void *`
 *     (CF's take `void *`). Set them to NULL, or use CFRetain/CFRelease.
 *   - CFEqual compares strings by content and objects by identity (CF asks a
 *     source's equal callback).
 *   - NULL objects, modes and contexts are ignored instead of crashing, and
 *     CFRunLoopGetCurrent may return NULL when the system is out of memory or
 *     descriptors (see CRunLoop.h).
 *   - Signals do not end a loop's sleep; a run loop is rebuilt after fork()
 *     (see CRunLoop.h).
 *
 * Do not include it together with Apple's or swift-corelibs' CoreFoundation
 * headers: the names would clash.
 */
#ifndef CRUNLOOP_CF_NAMES_H
#define CRUNLOOP_CF_NAMES_H

#if defined(__COREFOUNDATION_CFRUNLOOP__) || defined(__COREFOUNDATION_CFBASE__) ||                                     \
    defined(__COREFOUNDATION_COREFOUNDATION__)
#error "CRunLoopCFNames.h maps CoreFoundation's run-loop names onto CRunLoop: include it instead of CoreFoundation"
#endif
#if defined(__swift__)
#error "CRunLoopCFNames.h is for C and C++: Swift code uses SwiftRunLoop (or Foundation's CF names)"
#endif

/* The C headers CoreFoundation.h includes, which CF programs often rely on. */
#include <sys/types.h>
#include <stdarg.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include "CRunLoop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- base types ---------------------------------------------------------- */
typedef bool                          Boolean;
typedef RLIndex                       CFIndex;
typedef RLOptionFlags                 CFOptionFlags;
typedef uintptr_t                     CFHashCode;
typedef RLTimeInterval                CFTimeInterval;
typedef RLAbsoluteTime                CFAbsoluteTime;
typedef const void                   *CFTypeRef;
typedef const char                   *CFStringRef;    /* modes and descriptions only */
typedef const struct __RLCFAllocator *CFAllocatorRef; /* only the default (NULL) */
typedef const struct __RLCFModeArray *CFArrayRef;     /* CFRunLoopCopyAllModes only */
/* The fixed-size integers CF's headers bring along (older CF code stores a
   run result in an SInt32), and CF's TRUE and FALSE. */
typedef uint8_t  UInt8;
typedef int8_t   SInt8;
typedef uint16_t UInt16;
typedef int16_t  SInt16;
typedef uint32_t UInt32;
typedef int32_t  SInt32;
typedef uint64_t UInt64;
typedef int64_t  SInt64;
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#define kCFAllocatorDefault              ((CFAllocatorRef)NULL)
#define CFSTR(cstr)                      ((CFStringRef)("" cstr ""))
#define kCFAbsoluteTimeIntervalSince1970 978307200.0
#define kCFAbsoluteTimeIntervalSince1904 3061152000.0
#define CFAbsoluteTimeGetCurrent         RLAbsoluteTimeGetCurrent

/* ---- run loops ----------------------------------------------------------- */
typedef RLRunLoopRef         CFRunLoopRef;
typedef RLRunLoopSourceRef   CFRunLoopSourceRef;
typedef RLRunLoopObserverRef CFRunLoopObserverRef;
typedef RLRunLoopTimerRef    CFRunLoopTimerRef;
typedef RLRunLoopMode        CFRunLoopMode;
typedef RLRunLoopRunResult   CFRunLoopRunResult;
typedef RLRunLoopActivity    CFRunLoopActivity;

#define kCFRunLoopDefaultMode      kRLRunLoopDefaultMode
#define kCFRunLoopCommonModes      kRLRunLoopCommonModes
#define kCFRunLoopRunFinished      kRLRunLoopRunFinished
#define kCFRunLoopRunStopped       kRLRunLoopRunStopped
#define kCFRunLoopRunTimedOut      kRLRunLoopRunTimedOut
#define kCFRunLoopRunHandledSource kRLRunLoopRunHandledSource
#define kCFRunLoopEntry            kRLRunLoopEntry
#define kCFRunLoopBeforeTimers     kRLRunLoopBeforeTimers
#define kCFRunLoopBeforeSources    kRLRunLoopBeforeSources
#define kCFRunLoopBeforeWaiting    kRLRunLoopBeforeWaiting
#define kCFRunLoopAfterWaiting     kRLRunLoopAfterWaiting
#define kCFRunLoopExit             kRLRunLoopExit
#define kCFRunLoopAllActivities    kRLRunLoopAllActivities

#define CFRunLoopGetCurrent           RLRunLoopGetCurrent
#define CFRunLoopGetMain              RLRunLoopGetMain
#define CFRunLoopRun                  RLRunLoopRun
#define CFRunLoopRunInMode            RLRunLoopRunInMode
#define CFRunLoopStop                 RLRunLoopStop
#define CFRunLoopWakeUp               RLRunLoopWakeUp
#define CFRunLoopIsWaiting            RLRunLoopIsWaiting
#define CFRunLoopCopyCurrentMode      RLRunLoopCopyCurrentMode /* CFRelease the result */
#define CFRunLoopAddCommonMode        RLRunLoopAddCommonMode
#define CFRunLoopGetNextTimerFireDate RLRunLoopGetNextTimerFireDate
#define CFRunLoopContainsSource       RLRunLoopContainsSource
#define CFRunLoopAddSource            RLRunLoopAddSource
#define CFRunLoopRemoveSource         RLRunLoopRemoveSource
#define CFRunLoopContainsObserver     RLRunLoopContainsObserver
#define CFRunLoopAddObserver          RLRunLoopAddObserver
#define CFRunLoopRemoveObserver       RLRunLoopRemoveObserver
#define CFRunLoopContainsTimer        RLRunLoopContainsTimer
#define CFRunLoopAddTimer             RLRunLoopAddTimer
#define CFRunLoopRemoveTimer          RLRunLoopRemoveTimer
#if __BLOCKS__
#define CFRunLoopPerformBlock RLRunLoopPerformBlock /* one mode, not an array */
#endif

/* Every mode of the loop, as an array of mode names (CFRelease it). */
static inline CFArrayRef CFRunLoopCopyAllModes(CFRunLoopRef rl) {
    return (CFArrayRef)(void *)RLRunLoopCopyAllModes(rl);
}
static inline CFIndex CFArrayGetCount(CFArrayRef array) {
    CFIndex      count = 0;
    char *const *names = (char *const *)(const void *)array;
    while (names != NULL && names[count] != NULL) count++;
    return count;
}
/* The mode name at `index`; NULL outside 0 ..< count (CF crashes). */
static inline const void *CFArrayGetValueAtIndex(CFArrayRef array, CFIndex index) {
    if (index < 0 || index >= CFArrayGetCount(array)) return NULL;
    return ((char *const *)(const void *)array)[index];
}

/* ---- sources ------------------------------------------------------------- */
typedef RLRunLoopSourceContext  CFRunLoopSourceContext;
typedef RLRunLoopSourceContext1 CFRunLoopSourceContext1; /* a file descriptor, not a Mach port */

static inline CFRunLoopSourceRef CFRunLoopSourceCreate(CFAllocatorRef allocator, CFIndex order,
                                                       CFRunLoopSourceContext *context) {
    (void)allocator;
    return RLRunLoopSourceCreate(order, context);
}
#define CFRunLoopSourceGetOrder   RLRunLoopSourceGetOrder
#define CFRunLoopSourceInvalidate RLRunLoopSourceInvalidate
#define CFRunLoopSourceIsValid    RLRunLoopSourceIsValid
#define CFRunLoopSourceSignal     RLRunLoopSourceSignal
#define CFRunLoopSourceGetContext RLRunLoopSourceGetContext

/* ---- observers ----------------------------------------------------------- */
typedef RLRunLoopObserverContext  CFRunLoopObserverContext;
typedef RLRunLoopObserverCallBack CFRunLoopObserverCallBack;

static inline CFRunLoopObserverRef CFRunLoopObserverCreate(CFAllocatorRef allocator, CFOptionFlags activities,
                                                           Boolean repeats, CFIndex order,
                                                           CFRunLoopObserverCallBack callout,
                                                           CFRunLoopObserverContext *context) {
    (void)allocator;
    return RLRunLoopObserverCreate(activities, repeats, order, callout, context);
}
#if __BLOCKS__
static inline CFRunLoopObserverRef
CFRunLoopObserverCreateWithHandler(CFAllocatorRef allocator, CFOptionFlags activities, Boolean repeats, CFIndex order,
                                   void (^block)(CFRunLoopObserverRef observer, CFRunLoopActivity activity)) {
    (void)allocator;
    return RLRunLoopObserverCreateWithHandler(activities, repeats, order, block);
}
#endif
#define CFRunLoopObserverGetActivities RLRunLoopObserverGetActivities
#define CFRunLoopObserverDoesRepeat    RLRunLoopObserverDoesRepeat
#define CFRunLoopObserverGetOrder      RLRunLoopObserverGetOrder
#define CFRunLoopObserverInvalidate    RLRunLoopObserverInvalidate
#define CFRunLoopObserverIsValid       RLRunLoopObserverIsValid
#define CFRunLoopObserverGetContext    RLRunLoopObserverGetContext

/* ---- timers -------------------------------------------------------------- */
typedef RLRunLoopTimerContext  CFRunLoopTimerContext;
typedef RLRunLoopTimerCallBack CFRunLoopTimerCallBack;

static inline CFRunLoopTimerRef CFRunLoopTimerCreate(CFAllocatorRef allocator, CFAbsoluteTime fireDate,
                                                     CFTimeInterval interval, CFOptionFlags flags, CFIndex order,
                                                     CFRunLoopTimerCallBack callout, CFRunLoopTimerContext *context) {
    (void)allocator;
    return RLRunLoopTimerCreate(fireDate, interval, flags, order, callout, context);
}
#if __BLOCKS__
static inline CFRunLoopTimerRef CFRunLoopTimerCreateWithHandler(CFAllocatorRef allocator, CFAbsoluteTime fireDate,
                                                                CFTimeInterval interval, CFOptionFlags flags,
                                                                CFIndex order, void (^block)(CFRunLoopTimerRef timer)) {
    (void)allocator;
    return RLRunLoopTimerCreateWithHandler(fireDate, interval, flags, order, block);
}
#endif
#define CFRunLoopTimerGetNextFireDate RLRunLoopTimerGetNextFireDate
#define CFRunLoopTimerSetNextFireDate RLRunLoopTimerSetNextFireDate
#define CFRunLoopTimerGetInterval     RLRunLoopTimerGetInterval
#define CFRunLoopTimerDoesRepeat      RLRunLoopTimerDoesRepeat
#define CFRunLoopTimerGetOrder        RLRunLoopTimerGetOrder
#define CFRunLoopTimerInvalidate      RLRunLoopTimerInvalidate
#define CFRunLoopTimerIsValid         RLRunLoopTimerIsValid
#define CFRunLoopTimerGetTolerance    RLRunLoopTimerGetTolerance
#define CFRunLoopTimerSetTolerance    RLRunLoopTimerSetTolerance
#define CFRunLoopTimerGetContext      RLRunLoopTimerGetContext

/* ---- file descriptors ------------------------------------------------------ */
typedef RLFileDescriptorRef              CFFileDescriptorRef;
typedef RLFileDescriptorNativeDescriptor CFFileDescriptorNativeDescriptor;
typedef RLFileDescriptorCallBack         CFFileDescriptorCallBack;
typedef RLFileDescriptorContext          CFFileDescriptorContext;
#define kCFFileDescriptorReadCallBack  kRLFileDescriptorReadCallBack
#define kCFFileDescriptorWriteCallBack kRLFileDescriptorWriteCallBack

static inline CFFileDescriptorRef CFFileDescriptorCreate(CFAllocatorRef allocator, CFFileDescriptorNativeDescriptor fd,
                                                         Boolean closeOnInvalidate, CFFileDescriptorCallBack callout,
                                                         const CFFileDescriptorContext *context) {
    (void)allocator;
    return RLFileDescriptorCreate(fd, closeOnInvalidate, callout, context);
}
static inline CFRunLoopSourceRef CFFileDescriptorCreateRunLoopSource(CFAllocatorRef allocator, CFFileDescriptorRef f,
                                                                     CFIndex order) {
    (void)allocator;
    return RLFileDescriptorCreateRunLoopSource(f, order);
}
#define CFFileDescriptorGetNativeDescriptor RLFileDescriptorGetNativeDescriptor
#define CFFileDescriptorGetContext          RLFileDescriptorGetContext
#define CFFileDescriptorEnableCallBacks     RLFileDescriptorEnableCallBacks
#define CFFileDescriptorDisableCallBacks    RLFileDescriptorDisableCallBacks
#define CFFileDescriptorInvalidate          RLFileDescriptorInvalidate
#define CFFileDescriptorIsValid             RLFileDescriptorIsValid

/* ---- objects --------------------------------------------------------------- */
/* The helpers CFRelease, CFEqual and CFShow pick by the argument's type. */
static inline void RLCFReleaseString(const void *string) {
    /* CF's constant mode names may be released like any string there. */
    if (string == kRLRunLoopDefaultMode || string == kRLRunLoopCommonModes) return;
    free((void *)(uintptr_t)string);
}
static inline void RLCFReleaseModeArray(const void *array) {
    char **names = (char **)(uintptr_t)array;
    for (CFIndex i = 0; names != NULL && names[i] != NULL; i++) free(names[i]);
    free(names);
}
static inline Boolean RLCFStringEqual(const void *a, const void *b) {
    return a == b || (a != NULL && b != NULL && strcmp((const char *)a, (const char *)b) == 0);
}
static inline Boolean RLCFObjectEqual(const void *a, const void *b) {
    return a == b;
}
static inline void RLCFShowString(const void *string) {
    fprintf(stderr, "%s\n", string != NULL ? (const char *)string : "(null)");
}
static inline void RLCFShowObject(const void *obj) {
    char *description = RLCopyDescription(obj);
    fprintf(stderr, "%s\n", description != NULL ? description : "(null)");
    free(description);
}

/* For objects: one more reference (NULL: returns NULL; CF crashes). */
static inline CFTypeRef CFRetain(CFTypeRef obj) {
    return RLRetain(obj);
}
/* A malloc'd description (CFRelease or free it). It returns `char *` so that
   it also fits a context's copyDescription field. */
static inline char *CFCopyDescription(CFTypeRef obj) {
    return RLCopyDescription(obj);
}

#ifdef __cplusplus
} /* extern "C" */

/* C++: overloads pick what the C macros below pick by _Generic. */
inline void CFRelease(CFTypeRef obj) {
    RLRelease(obj);
}
inline void CFRelease(const char *string) {
    RLCFReleaseString(string);
}
inline void CFRelease(char *string) {
    RLCFReleaseString(string);
}
inline void CFRelease(CFArrayRef array) {
    RLCFReleaseModeArray(array);
}
inline Boolean CFEqual(CFTypeRef a, CFTypeRef b) {
    return RLCFObjectEqual(a, b);
}
inline Boolean CFEqual(const char *a, const char *b) {
    return RLCFStringEqual(a, b);
}
inline void CFShow(CFTypeRef obj) {
    RLCFShowObject(obj);
}
inline void CFShow(const char *string) {
    RLCFShowString(string);
}

#else

/* One reference less; the last one frees the object (NULL: ignored). As a
   value (a context's release field) this is the object version. */
static inline void CFRelease(CFTypeRef obj) {
    RLRelease(obj);
}
#define CFRelease(obj)                                                                                                 \
    _Generic((obj), char *: RLCFReleaseString, const char *: RLCFReleaseString, \
             CFArrayRef: RLCFReleaseModeArray, default: RLRelease)(obj)
/* Strings by content, objects by identity. */
#define CFEqual(a, b)                                                                                                  \
    _Generic((a), char * : RLCFStringEqual, const char * : RLCFStringEqual, default : RLCFObjectEqual)((a), (b))
/* Prints a string, or an object's description, to stderr. */
#define CFShow(obj)                                                                                                    \
    _Generic((obj), char * : RLCFShowString, const char * : RLCFShowString, default : RLCFShowObject)(obj)

#endif /* __cplusplus */

#endif /* CRUNLOOP_CF_NAMES_H */
