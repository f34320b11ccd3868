/*
 * CRunLoopCFNames.h: CoreFoundation's run-loop names for this library (opt-in).
 *
 * A C or C++ program written for macOS against the run-loop part of
 * CoreFoundation builds here with one changed include:
 *
 *     #ifdef __APPLE__
 *     #include <CoreFoundation/CoreFoundation.h>
 *     #else
 *     #include <CRunLoopCFNames.h>
 *     #endif
 *
 * Every CF name below is a typedef of, a macro for, or a tiny inline shim over
 * an RL name of CRunLoop.h (the loop and its items, whose behaviour is
 * documented there: bad input is ignored or clamped instead of crashing) or
 * of CRunLoopCFTypes.h (the strings, arrays, data, allocators and type
 * identity that come with CoreFoundation.h, and the contexts as CF types
 * them). This header is not part of the CRunLoop module that Swift imports:
 * Swift code uses SwiftRunLoop, or Foundation's own CF names.
 *
 * Strings are objects, as in CF: CFSTR("Name") is a constant string object
 * (usable in static initialisers, in C and C++; immortal: CFRetain and
 * CFRelease ignore it), CFStringCreateWithCString and the like make counted
 * ones, and CFRetain, CFRelease, CFGetRetainCount, CFEqual, CFHash,
 * CFCopyDescription, CFShow and CFGetTypeID work on every object here.
 * Underneath, the RL API keeps taking modes as C strings: the functions below
 * that take a mode pass its text on.
 *
 * Provided (CF's run-loop API that has a Linux meaning here, and what
 * CoreFoundation.h brings along that run-loop programs use):
 *   types     CFRunLoopRef, CFRunLoopSourceRef, CFRunLoopObserverRef,
 *             CFRunLoopTimerRef, CFRunLoopMode, CFTypeRef, CFTypeID,
 *             CFStringRef, CFArrayRef, CFDataRef, CFMutableDataRef,
 *             CFAllocatorRef, CFDictionaryRef (format options: NULL),
 *             CFRange, CFIndex, CFOptionFlags, CFHashCode, Boolean, UInt8 ...
 *             SInt64, CFTimeInterval, CFAbsoluteTime, CFRunLoopRunResult,
 *             CFRunLoopActivity, CFStringEncoding, CFStringCompareFlags,
 *             CFComparisonResult, the context structs and callback types,
 *             CFArrayCallBacks, CFAllocatorContext, CFFileDescriptorRef,
 *             CFFileDescriptorNativeDescriptor
 *   constants TRUE, FALSE, kCFRunLoopDefaultMode, kCFRunLoopCommonModes,
 *             kCFRunLoopRunFinished/Stopped/TimedOut/HandledSource,
 *             kCFRunLoopEntry/BeforeTimers/BeforeSources/BeforeWaiting/
 *             AfterWaiting/Exit/AllActivities, kCFAllocatorDefault,
 *             kCFAllocatorSystemDefault, kCFAllocatorMalloc, kCFAllocatorNull,
 *             kCFStringEncodingUTF8/ASCII, kCFCompare* (options and results),
 *             kCFNotFound, kCFTypeArrayCallBacks,
 *             kCFFileDescriptorReadCallBack/WriteCallBack,
 *             kCFAbsoluteTimeIntervalSince1970/1904
 *   run loops CFRunLoopGetCurrent, CFRunLoopGetMain, CFRunLoopRun,
 *             CFRunLoopRunInMode, CFRunLoopStop, CFRunLoopWakeUp,
 *             CFRunLoopIsWaiting, CFRunLoopCopyCurrentMode,
 *             CFRunLoopCopyAllModes, CFRunLoopAddCommonMode,
 *             CFRunLoopGetNextTimerFireDate, CFRunLoopPerformBlock (blocks;
 *             a mode or an array of modes), CFRunLoopGetTypeID,
 *             CFRunLoop{Add,Remove,Contains}{Source,Observer,Timer}
 *   sources   CFRunLoopSourceCreate, CFRunLoopSourceGetOrder,
 *             CFRunLoopSourceInvalidate, CFRunLoopSourceIsValid,
 *             CFRunLoopSourceSignal, CFRunLoopSourceGetContext,
 *             CFRunLoopSourceGetTypeID
 *   observers CFRunLoopObserverCreate, CFRunLoopObserverCreateWithHandler
 *             (blocks), CFRunLoopObserverGetActivities,
 *             CFRunLoopObserverDoesRepeat, CFRunLoopObserverGetOrder,
 *             CFRunLoopObserverInvalidate, CFRunLoopObserverIsValid,
 *             CFRunLoopObserverGetContext, CFRunLoopObserverGetTypeID
 *   timers    CFRunLoopTimerCreate, CFRunLoopTimerCreateWithHandler (blocks),
 *             CFRunLoopTimerGetNextFireDate, CFRunLoopTimerSetNextFireDate,
 *             CFRunLoopTimerGetInterval, CFRunLoopTimerDoesRepeat,
 *             CFRunLoopTimerGetOrder, CFRunLoopTimerInvalidate,
 *             CFRunLoopTimerIsValid, CFRunLoopTimerGetTolerance,
 *             CFRunLoopTimerSetTolerance, CFRunLoopTimerGetContext,
 *             CFRunLoopTimerGetTypeID
 *   fds       CFFileDescriptorCreate, CFFileDescriptorGetNativeDescriptor,
 *             CFFileDescriptorGetContext, CFFileDescriptorEnableCallBacks,
 *             CFFileDescriptorDisableCallBacks, CFFileDescriptorInvalidate,
 *             CFFileDescriptorIsValid, CFFileDescriptorCreateRunLoopSource,
 *             CFFileDescriptorGetTypeID
 *   sockets   CFSocket (see the end of this header and CRunLoopSocket.h)
 *   objects   CFRetain, CFRelease, CFGetRetainCount, CFEqual, CFHash,
 *             CFCopyDescription, CFShow, CFGetTypeID, CFCopyTypeIDDescription,
 *             CFGetAllocator, CFAbsoluteTimeGetCurrent
 *   strings   CFSTR, CFStringCreateWithCString, CFStringCreateWithBytes,
 *             CFStringCreateWithFormat, CFStringCreateWithFormatAndArguments,
 *             CFStringCreateCopy, CFStringCreateWithSubstring,
 *             CFStringGetLength, CFStringGetCString, CFStringGetCStringPtr,
 *             CFStringGetMaximumSizeForEncoding, CFStringCompare,
 *             CFStringFind, CFStringHasPrefix, CFStringHasSuffix,
 *             CFStringGetTypeID
 *   arrays    CFArrayCreate, CFArrayCreateCopy, CFArrayGetCount,
 *             CFArrayGetValueAtIndex, CFArrayGetValues, CFArrayContainsValue,
 *             CFArrayGetFirstIndexOfValue, CFArrayGetTypeID
 *   data      CFDataCreate, CFDataCreateWithBytesNoCopy, CFDataCreateCopy,
 *             CFDataCreateMutable, CFDataCreateMutableCopy, CFDataGetLength,
 *             CFDataGetBytePtr, CFDataGetMutableBytePtr, CFDataGetBytes,
 *             CFDataSetLength, CFDataIncreaseLength, CFDataAppendBytes,
 *             CFDataReplaceBytes, CFDataDeleteBytes, CFDataGetTypeID
 *   allocs    CFAllocatorAllocate, CFAllocatorReallocate,
 *             CFAllocatorDeallocate, CFAllocatorGetPreferredSizeForSize,
 *             CFAllocatorGetDefault, CFAllocatorSetDefault, CFAllocatorCreate
 *             (refused), CFAllocatorGetTypeID
 *   headers   the C headers CoreFoundation.h includes, and
 *             <dispatch/dispatch.h> when the compiler finds it and can read
 *             it (clang, or a compiler with __has_feature; define
 *             RLCF_NO_DISPATCH to leave it out)
 *
 * Blocks: CFRunLoopPerformBlock, CFRunLoopObserverCreateWithHandler and
 * CFRunLoopTimerCreateWithHandler need a compiler with blocks and a blocks
 * runtime: clang -fblocks, and -lBlocksRuntime at link time (the Swift
 * toolchain's is in usr/lib/swift/linux; Debian's in libblocksruntime-dev).
 * Without blocks (gcc, or clang without -fblocks) a program that uses one of
 * them fails to compile with an error saying so.
 *
 * Not provided (a program using them does not compile here):
 *   - Mach-port sources: CFRunLoopSourceContext1's getPort/perform(msg...),
 *     CFMachPort*. (CFMessagePort is provided: see the end of this header.) Here a version-1 source watches a file
 *     descriptor: CFRunLoopSourceContext1 has getFileDescriptor and
 *     perform(info); CFFileDescriptor is the portable way.
 *   - CFSocket's name registry (CFSocketRegisterValue...),
 *     CFNotificationCenter*, CFUserNotification*, CFStream*.
 *   - Mutable strings and arrays, CFDictionary*, CFSet*, CFNumber*, CFDate*,
 *     CFTimeZone*, CFURL*, and string encodings other than UTF-8 and ASCII
 *     (kCFStringEncodingMacRoman, CFStringGetSystemEncoding...).
 *   - Custom allocators: CFAllocatorCreate prints why and returns NULL
 *     (which means the default allocator).
 *
 * Where this differs from CoreFoundation:
 *   - Strings hold UTF-8 (see CRunLoopCFTypes.h): CFStringGetCStringPtr
 *     always answers for UTF-8; comparisons go by code point, and
 *     kCFCompareCaseInsensitive folds ASCII letters only; format strings take
 *     printf's conversions and %@, not positional arguments or %S/%C.
 *   - Two CFSTRs of the same text are equal but not always the same pointer
 *     (kCFRunLoopDefaultMode and kCFRunLoopCommonModes are, and the loop
 *     hands those very objects back for those modes); CFRunLoopCopyCurrentMode
 *     of another mode is a new string equal to its name. Compare modes with
 *     CFEqual.
 *   - Mode arguments also take a plain C string (as earlier versions of this
 *     header did, when CFStringRef was `const char *`); the other functions
 *     on objects refuse one at compile time (in C++, so a literal NULL or
 *     nullptr given to CFRelease and the like is ambiguous: CF crashes on it).
 *   - Boolean is C's bool (CF's is unsigned char): the same size, and `true`
 *     and `false` work alike.
 *   - NULL objects, modes and contexts are ignored instead of crashing, and
 *     CFRunLoopGetCurrent may return NULL when the system is out of memory or
 *     descriptors (see CRunLoop.h); CFArrayGetValueAtIndex out of range
 *     returns NULL.
 *   - A context's callbacks may run with a loop's lock held (CRunLoop.h): the
 *     copyDescription of a context must not call into the same loop.
 *   - Signals do not end a loop's sleep; a run loop is rebuilt after fork()
 *     (see CRunLoop.h).
 * Programs written for earlier versions of this header, where CFStringRef
 * was `const char *`: pass strings through CFStringGetCStringPtr where a
 * `char *` is needed (printf's %s, strcmp), and type a CFFileDescriptor
 * context's retain and release as CF does (`void *`).
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
/* CoreFoundation.h brings libdispatch along where it is. Its Linux headers
   need __has_feature (clang; gcc from 14). */
#if defined(__has_include) && defined(__has_feature) && !defined(RLCF_NO_DISPATCH)
#if __has_include(<dispatch/dispatch.h>)
#include <dispatch/dispatch.h>
#endif
#endif
#include "CRunLoop.h"
#include "CRunLoopCFTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- base types ---------------------------------------------------------- */
typedef bool               Boolean;
typedef RLIndex            CFIndex;
typedef RLOptionFlags      CFOptionFlags;
typedef RLCFHashCode       CFHashCode;
typedef RLTimeInterval     CFTimeInterval;
typedef RLAbsoluteTime     CFAbsoluteTime;
typedef RLCFTypeRef        CFTypeRef;
typedef RLCFTypeID         CFTypeID;
typedef RLCFStringRef      CFStringRef;
typedef RLCFAllocatorRef   CFAllocatorRef;
typedef RLCFArrayRef       CFArrayRef;
typedef RLCFDataRef        CFDataRef;
typedef RLCFMutableDataRef CFMutableDataRef;
typedef RLCFDictionaryRef  CFDictionaryRef;
typedef RLCFRange          CFRange;
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

#define CFSTR(cstr)                      RLCFSTR(cstr)
#define kCFNotFound                      kRLCFNotFound
#define kCFAbsoluteTimeIntervalSince1970 978307200.0
#define kCFAbsoluteTimeIntervalSince1904 3061152000.0
#define CFAbsoluteTimeGetCurrent         RLAbsoluteTimeGetCurrent

static inline CFRange CFRangeMake(CFIndex location, CFIndex length) {
    CFRange range = {location, length};
    return range;
}

/* ---- allocators ------------------------------------------------------------ */
typedef RLCFAllocatorContext CFAllocatorContext;
typedef const void *(*CFAllocatorRetainCallBack)(const void *info);
typedef void (*CFAllocatorReleaseCallBack)(const void *info);
typedef CFStringRef (*CFAllocatorCopyDescriptionCallBack)(const void *info);
typedef void *(*CFAllocatorAllocateCallBack)(CFIndex allocSize, CFOptionFlags hint, void *info);
typedef void *(*CFAllocatorReallocateCallBack)(void *ptr, CFIndex newsize, CFOptionFlags hint, void *info);
typedef void (*CFAllocatorDeallocateCallBack)(void *ptr, void *info);
typedef CFIndex (*CFAllocatorPreferredSizeCallBack)(CFIndex size, CFOptionFlags hint, void *info);

#define kCFAllocatorDefault                kRLCFAllocatorDefault
#define kCFAllocatorSystemDefault          kRLCFAllocatorSystemDefault
#define kCFAllocatorMalloc                 kRLCFAllocatorMalloc
#define kCFAllocatorNull                   kRLCFAllocatorNull
#define CFAllocatorCreate                  RLCFAllocatorCreate
#define CFAllocatorGetDefault              RLCFAllocatorGetDefault
#define CFAllocatorSetDefault              RLCFAllocatorSetDefault
#define CFAllocatorAllocate                RLCFAllocatorAllocate
#define CFAllocatorReallocate              RLCFAllocatorReallocate
#define CFAllocatorDeallocate              RLCFAllocatorDeallocate
#define CFAllocatorGetPreferredSizeForSize RLCFAllocatorGetPreferredSizeForSize
#define CFAllocatorGetTypeID               RLCFAllocatorGetTypeID

/* ---- strings ------------------------------------------------------------------ */
typedef RLCFStringEncoding     CFStringEncoding;
typedef RLCFStringCompareFlags CFStringCompareFlags;
typedef RLCFComparisonResult   CFComparisonResult;
#define kCFStringEncodingUTF8                kRLCFStringEncodingUTF8
#define kCFStringEncodingASCII               kRLCFStringEncodingASCII
#define kCFCompareCaseInsensitive            kRLCFCompareCaseInsensitive
#define kCFCompareBackwards                  kRLCFCompareBackwards
#define kCFCompareAnchored                   kRLCFCompareAnchored
#define kCFCompareNonliteral                 kRLCFCompareNonliteral
#define kCFCompareLocalized                  kRLCFCompareLocalized
#define kCFCompareNumerically                kRLCFCompareNumerically
#define kCFCompareLessThan                   kRLCFCompareLessThan
#define kCFCompareEqualTo                    kRLCFCompareEqualTo
#define kCFCompareGreaterThan                kRLCFCompareGreaterThan
#define CFStringCreateWithCString            RLCFStringCreateWithCString
#define CFStringCreateWithBytes              RLCFStringCreateWithBytes
#define CFStringCreateWithFormat             RLCFStringCreateWithFormat
#define CFStringCreateWithFormatAndArguments RLCFStringCreateWithFormatAndArguments
#define CFStringCreateCopy                   RLCFStringCreateCopy
#define CFStringCreateWithSubstring          RLCFStringCreateWithSubstring
#define CFStringGetLength                    RLCFStringGetLength
#define CFStringGetCString                   RLCFStringGetCString
#define CFStringGetCStringPtr                RLCFStringGetCStringPtr
#define CFStringGetMaximumSizeForEncoding    RLCFStringGetMaximumSizeForEncoding
#define CFStringCompare                      RLCFStringCompare
#define CFStringFind                         RLCFStringFind
#define CFStringHasPrefix                    RLCFStringHasPrefix
#define CFStringHasSuffix                    RLCFStringHasSuffix
#define CFStringGetTypeID                    RLCFStringGetTypeID

/* ---- arrays --------------------------------------------------------------------- */
typedef RLCFArrayCallBacks CFArrayCallBacks;
typedef const void *(*CFArrayRetainCallBack)(CFAllocatorRef allocator, const void *value);
typedef void (*CFArrayReleaseCallBack)(CFAllocatorRef allocator, const void *value);
typedef CFStringRef (*CFArrayCopyDescriptionCallBack)(const void *value);
typedef Boolean (*CFArrayEqualCallBack)(const void *value1, const void *value2);
#define kCFTypeArrayCallBacks       kRLCFTypeArrayCallBacks
#define CFArrayCreate               RLCFArrayCreate
#define CFArrayCreateCopy           RLCFArrayCreateCopy
#define CFArrayGetCount             RLCFArrayGetCount
#define CFArrayGetValueAtIndex      RLCFArrayGetValueAtIndex
#define CFArrayGetValues            RLCFArrayGetValues
#define CFArrayContainsValue        RLCFArrayContainsValue
#define CFArrayGetFirstIndexOfValue RLCFArrayGetFirstIndexOfValue
#define CFArrayGetTypeID            RLCFArrayGetTypeID

/* ---- data ---------------------------------------------------------------------- */
#define CFDataCreate                RLCFDataCreate
#define CFDataCreateWithBytesNoCopy RLCFDataCreateWithBytesNoCopy
#define CFDataCreateCopy            RLCFDataCreateCopy
#define CFDataCreateMutable         RLCFDataCreateMutable
#define CFDataCreateMutableCopy     RLCFDataCreateMutableCopy
#define CFDataGetLength             RLCFDataGetLength
#define CFDataGetBytePtr            RLCFDataGetBytePtr
#define CFDataGetMutableBytePtr     RLCFDataGetMutableBytePtr
#define CFDataGetBytes              RLCFDataGetBytes
#define CFDataSetLength             RLCFDataSetLength
#define CFDataIncreaseLength        RLCFDataIncreaseLength
#define CFDataAppendBytes           RLCFDataAppendBytes
#define CFDataReplaceBytes          RLCFDataReplaceBytes
#define CFDataDeleteBytes           RLCFDataDeleteBytes
#define CFDataGetTypeID             RLCFDataGetTypeID

/* ---- objects ------------------------------------------------------------------- */
#define CFCopyTypeIDDescription RLCFCopyTypeIDDescription
#define CFGetAllocator          RLCFGetAllocator

/* ---- run loops ----------------------------------------------------------- */
typedef RLRunLoopRef         CFRunLoopRef;
typedef RLRunLoopSourceRef   CFRunLoopSourceRef;
typedef RLRunLoopObserverRef CFRunLoopObserverRef;
typedef RLRunLoopTimerRef    CFRunLoopTimerRef;
typedef CFStringRef          CFRunLoopMode;
typedef RLRunLoopRunResult   CFRunLoopRunResult;
typedef RLRunLoopActivity    CFRunLoopActivity;

#define kCFRunLoopDefaultMode      kRLCFRunLoopDefaultMode
#define kCFRunLoopCommonModes      kRLCFRunLoopCommonModes
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

#define CFRunLoopGetCurrent      RLRunLoopGetCurrent
#define CFRunLoopGetMain         RLRunLoopGetMain
#define CFRunLoopRun             RLRunLoopRun
#define CFRunLoopStop            RLRunLoopStop
#define CFRunLoopWakeUp          RLRunLoopWakeUp
#define CFRunLoopIsWaiting       RLRunLoopIsWaiting
#define CFRunLoopCopyCurrentMode RLCFRunLoopCopyCurrentMode /* CFRelease the result */
#define CFRunLoopCopyAllModes    RLCFRunLoopCopyAllModes    /* an array of strings; CFRelease it */
#define CFRunLoopGetTypeID       RLCFRunLoopGetTypeID

/* A mode argument is a CFStringRef; in C it may also be a plain C string
   (RLCF_MODE picks by the argument's type), in C++ RLCFModeArg takes
   either. The RL API underneath takes the text. */
#ifdef __cplusplus
} /* extern "C" */
struct RLCFModeArg {
    const char *name;
    RLCFModeArg(CFStringRef mode) : name(RLCFStringGetCStringPtr(mode, kRLCFStringEncodingUTF8)) {}
    RLCFModeArg(const char *mode) : name(mode) {}
};
extern "C" {
#define RLCF_MODE_PARAM   RLCFModeArg
#define RLCF_MODE_NAME(m) ((m).name)
#else
static inline const char *RLCFModeOfString(CFStringRef mode) {
    return RLCFStringGetCStringPtr(mode, kRLCFStringEncodingUTF8);
}
static inline const char *RLCFModeOfCString(const char *mode) {
    return mode;
}
#define RLCF_MODE(mode)                                                                                                \
    _Generic((mode), char * : RLCFModeOfCString, const char * : RLCFModeOfCString, default : RLCFModeOfString)(mode)
#define RLCF_MODE_PARAM   CFRunLoopMode
#define RLCF_MODE_NAME(m) RLCFModeOfString(m)
#endif

static inline CFRunLoopRunResult CFRunLoopRunInMode(RLCF_MODE_PARAM mode, CFTimeInterval seconds,
                                                    Boolean returnAfterSourceHandled) {
    return RLRunLoopRunInMode(RLCF_MODE_NAME(mode), seconds, returnAfterSourceHandled);
}
static inline void CFRunLoopAddCommonMode(CFRunLoopRef rl, RLCF_MODE_PARAM mode) {
    RLRunLoopAddCommonMode(rl, RLCF_MODE_NAME(mode));
}
static inline CFAbsoluteTime CFRunLoopGetNextTimerFireDate(CFRunLoopRef rl, RLCF_MODE_PARAM mode) {
    return RLRunLoopGetNextTimerFireDate(rl, RLCF_MODE_NAME(mode));
}
static inline Boolean CFRunLoopContainsSource(CFRunLoopRef rl, CFRunLoopSourceRef source, RLCF_MODE_PARAM mode) {
    return RLRunLoopContainsSource(rl, source, RLCF_MODE_NAME(mode));
}
static inline void CFRunLoopAddSource(CFRunLoopRef rl, CFRunLoopSourceRef source, RLCF_MODE_PARAM mode) {
    RLRunLoopAddSource(rl, source, RLCF_MODE_NAME(mode));
}
static inline void CFRunLoopRemoveSource(CFRunLoopRef rl, CFRunLoopSourceRef source, RLCF_MODE_PARAM mode) {
    RLRunLoopRemoveSource(rl, source, RLCF_MODE_NAME(mode));
}
static inline Boolean CFRunLoopContainsObserver(CFRunLoopRef rl, CFRunLoopObserverRef observer, RLCF_MODE_PARAM mode) {
    return RLRunLoopContainsObserver(rl, observer, RLCF_MODE_NAME(mode));
}
static inline void CFRunLoopAddObserver(CFRunLoopRef rl, CFRunLoopObserverRef observer, RLCF_MODE_PARAM mode) {
    RLRunLoopAddObserver(rl, observer, RLCF_MODE_NAME(mode));
}
static inline void CFRunLoopRemoveObserver(CFRunLoopRef rl, CFRunLoopObserverRef observer, RLCF_MODE_PARAM mode) {
    RLRunLoopRemoveObserver(rl, observer, RLCF_MODE_NAME(mode));
}
static inline Boolean CFRunLoopContainsTimer(CFRunLoopRef rl, CFRunLoopTimerRef timer, RLCF_MODE_PARAM mode) {
    return RLRunLoopContainsTimer(rl, timer, RLCF_MODE_NAME(mode));
}
static inline void CFRunLoopAddTimer(CFRunLoopRef rl, CFRunLoopTimerRef timer, RLCF_MODE_PARAM mode) {
    RLRunLoopAddTimer(rl, timer, RLCF_MODE_NAME(mode));
}
static inline void CFRunLoopRemoveTimer(CFRunLoopRef rl, CFRunLoopTimerRef timer, RLCF_MODE_PARAM mode) {
    RLRunLoopRemoveTimer(rl, timer, RLCF_MODE_NAME(mode));
}
#ifndef __cplusplus
#define CFRunLoopRunInMode(mode, seconds, returnAfterSourceHandled)                                                    \
    RLRunLoopRunInMode(RLCF_MODE(mode), (seconds), (returnAfterSourceHandled))
#define CFRunLoopAddCommonMode(rl, mode)              RLRunLoopAddCommonMode((rl), RLCF_MODE(mode))
#define CFRunLoopGetNextTimerFireDate(rl, mode)       RLRunLoopGetNextTimerFireDate((rl), RLCF_MODE(mode))
#define CFRunLoopContainsSource(rl, source, mode)     RLRunLoopContainsSource((rl), (source), RLCF_MODE(mode))
#define CFRunLoopAddSource(rl, source, mode)          RLRunLoopAddSource((rl), (source), RLCF_MODE(mode))
#define CFRunLoopRemoveSource(rl, source, mode)       RLRunLoopRemoveSource((rl), (source), RLCF_MODE(mode))
#define CFRunLoopContainsObserver(rl, observer, mode) RLRunLoopContainsObserver((rl), (observer), RLCF_MODE(mode))
#define CFRunLoopAddObserver(rl, observer, mode)      RLRunLoopAddObserver((rl), (observer), RLCF_MODE(mode))
#define CFRunLoopRemoveObserver(rl, observer, mode)   RLRunLoopRemoveObserver((rl), (observer), RLCF_MODE(mode))
#define CFRunLoopContainsTimer(rl, timer, mode)       RLRunLoopContainsTimer((rl), (timer), RLCF_MODE(mode))
#define CFRunLoopAddTimer(rl, timer, mode)            RLRunLoopAddTimer((rl), (timer), RLCF_MODE(mode))
#define CFRunLoopRemoveTimer(rl, timer, mode)         RLRunLoopRemoveTimer((rl), (timer), RLCF_MODE(mode))
#endif

/* The blocks variants need clang -fblocks and -lBlocksRuntime; elsewhere
   using one is a compile error that says so (the arguments, a block
   literal among them, are dropped unread). */
#if __BLOCKS__
/* Queues the block once for `modes`, a mode or an array of modes: it runs
   once, in whichever of them runs first (as CF). */
static inline void RLCFPerformBlock(CFRunLoopRef rl, CFTypeRef modes, void (^block)(void)) {
    if (modes == NULL || RLCFGetTypeID(modes) != RLCFArrayGetTypeID()) {
        RLRunLoopPerformBlock(rl, RLCFStringGetCStringPtr((CFStringRef)modes, kRLCFStringEncodingUTF8), block);
        return;
    }
    __block Boolean ran = false; /* shared by every copy; they all run on rl's thread */
    void (^once)(void)  = ^{
       if (ran) return;
      ran = true;
       block();
    };
    CFArrayRef array = (CFArrayRef)modes;
    for (CFIndex i = 0; i < RLCFArrayGetCount(array); i++)
        RLRunLoopPerformBlock(
            rl, RLCFStringGetCStringPtr((CFStringRef)RLCFArrayGetValueAtIndex(array, i), kRLCFStringEncodingUTF8),
            once);
}
#ifdef __cplusplus
} /* extern "C" */
inline void CFRunLoopPerformBlock(CFRunLoopRef rl, CFTypeRef modes, void (^block)(void)) {
    RLCFPerformBlock(rl, modes, block);
}
inline void CFRunLoopPerformBlock(CFRunLoopRef rl, const char *mode, void (^block)(void)) {
    RLRunLoopPerformBlock(rl, mode, block);
}
extern "C" {
#else
#define CFRunLoopPerformBlock(rl, modes, ...)                                                                          \
    _Generic((modes), char *: RLRunLoopPerformBlock, const char *: RLRunLoopPerformBlock, default: RLCFPerformBlock)(  \
        (rl), (modes), __VA_ARGS__)
#endif
#else
#define CFRunLoopPerformBlock(...)                                                                                     \
    (_Pragma("GCC error \"CFRunLoopPerformBlock needs blocks: clang -fblocks, linked with -lBlocksRuntime\"")(void) 0)
#endif

/* ---- sources ------------------------------------------------------------- */
typedef RLCFRunLoopSourceContext  CFRunLoopSourceContext;
typedef RLCFRunLoopSourceContext1 CFRunLoopSourceContext1; /* a file descriptor, not a Mach port */

#define CFRunLoopSourceCreate     RLCFRunLoopSourceCreate
#define CFRunLoopSourceGetOrder   RLRunLoopSourceGetOrder
#define CFRunLoopSourceInvalidate RLRunLoopSourceInvalidate
#define CFRunLoopSourceIsValid    RLRunLoopSourceIsValid
#define CFRunLoopSourceSignal     RLRunLoopSourceSignal
#define CFRunLoopSourceGetContext RLCFRunLoopSourceGetContext
#define CFRunLoopSourceGetTypeID  RLCFRunLoopSourceGetTypeID

/* ---- observers ----------------------------------------------------------- */
typedef RLCFRunLoopObserverContext CFRunLoopObserverContext;
typedef RLRunLoopObserverCallBack  CFRunLoopObserverCallBack;

#define CFRunLoopObserverCreate RLCFRunLoopObserverCreate
#if __BLOCKS__
static inline CFRunLoopObserverRef
CFRunLoopObserverCreateWithHandler(CFAllocatorRef allocator, CFOptionFlags activities, Boolean repeats, CFIndex order,
                                   void (^block)(CFRunLoopObserverRef observer, CFRunLoopActivity activity)) {
    (void)allocator;
    return RLRunLoopObserverCreateWithHandler(activities, repeats, order, block);
}
#else
#define CFRunLoopObserverCreateWithHandler(...)                                                                        \
    (_Pragma("GCC error \"CFRunLoopObserverCreateWithHandler needs blocks: clang -fblocks, -lBlocksRuntime\"")(        \
        CFRunLoopObserverRef) NULL)
#endif
#define CFRunLoopObserverGetActivities RLRunLoopObserverGetActivities
#define CFRunLoopObserverDoesRepeat    RLRunLoopObserverDoesRepeat
#define CFRunLoopObserverGetOrder      RLRunLoopObserverGetOrder
#define CFRunLoopObserverInvalidate    RLRunLoopObserverInvalidate
#define CFRunLoopObserverIsValid       RLRunLoopObserverIsValid
#define CFRunLoopObserverGetContext    RLCFRunLoopObserverGetContext
#define CFRunLoopObserverGetTypeID     RLCFRunLoopObserverGetTypeID

/* ---- timers -------------------------------------------------------------- */
typedef RLCFRunLoopTimerContext CFRunLoopTimerContext;
typedef RLRunLoopTimerCallBack  CFRunLoopTimerCallBack;

#define CFRunLoopTimerCreate RLCFRunLoopTimerCreate
#if __BLOCKS__
static inline CFRunLoopTimerRef CFRunLoopTimerCreateWithHandler(CFAllocatorRef allocator, CFAbsoluteTime fireDate,
                                                                CFTimeInterval interval, CFOptionFlags flags,
                                                                CFIndex order, void (^block)(CFRunLoopTimerRef timer)) {
    (void)allocator;
    return RLRunLoopTimerCreateWithHandler(fireDate, interval, flags, order, block);
}
#else
#define CFRunLoopTimerCreateWithHandler(...)                                                                           \
    (_Pragma("GCC error \"CFRunLoopTimerCreateWithHandler needs blocks: clang -fblocks, -lBlocksRuntime\"")(           \
        CFRunLoopTimerRef) NULL)
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
#define CFRunLoopTimerGetContext      RLCFRunLoopTimerGetContext
#define CFRunLoopTimerGetTypeID       RLCFRunLoopTimerGetTypeID

/* ---- file descriptors ------------------------------------------------------ */
typedef RLFileDescriptorRef              CFFileDescriptorRef;
typedef RLFileDescriptorNativeDescriptor CFFileDescriptorNativeDescriptor;
typedef RLFileDescriptorCallBack         CFFileDescriptorCallBack;
typedef RLCFFileDescriptorContext        CFFileDescriptorContext;
#define kCFFileDescriptorReadCallBack  kRLFileDescriptorReadCallBack
#define kCFFileDescriptorWriteCallBack kRLFileDescriptorWriteCallBack

#define CFFileDescriptorCreate              RLCFFileDescriptorCreate
#define CFFileDescriptorCreateRunLoopSource RLCFFileDescriptorCreateRunLoopSource
#define CFFileDescriptorGetNativeDescriptor RLFileDescriptorGetNativeDescriptor
#define CFFileDescriptorGetContext          RLCFFileDescriptorGetContext
#define CFFileDescriptorEnableCallBacks     RLFileDescriptorEnableCallBacks
#define CFFileDescriptorDisableCallBacks    RLFileDescriptorDisableCallBacks
#define CFFileDescriptorInvalidate          RLFileDescriptorInvalidate
#define CFFileDescriptorIsValid             RLFileDescriptorIsValid
#define CFFileDescriptorGetTypeID           RLCFFileDescriptorGetTypeID

/* ---- any object -------------------------------------------------------------- */
/* Real functions (so they fit a context's retain, release and
   copyDescription fields), each guarded below against a plain C string,
   which is no object here. */
static inline CFTypeRef CFRetain(CFTypeRef cf) {
    return RLCFRetain(cf);
}
static inline void CFRelease(CFTypeRef cf) {
    RLCFRelease(cf);
}
static inline CFIndex CFGetRetainCount(CFTypeRef cf) {
    return RLCFGetRetainCount(cf);
}
static inline Boolean CFEqual(CFTypeRef cf1, CFTypeRef cf2) {
    return RLCFEqual(cf1, cf2);
}
static inline CFHashCode CFHash(CFTypeRef cf) {
    return RLCFHash(cf);
}
static inline CFStringRef CFCopyDescription(CFTypeRef cf) {
    return RLCFCopyDescription(cf);
}
static inline void CFShow(CFTypeRef cf) {
    RLCFShow(cf);
}
static inline CFTypeID CFGetTypeID(CFTypeRef cf) {
    return RLCFGetTypeID(cf);
}

#ifdef __cplusplus
} /* extern "C" */

/* C++: a C string where an object is expected does not compile. */
CFTypeRef   CFRetain(const char *)              = delete;
void        CFRelease(const char *)             = delete;
CFIndex     CFGetRetainCount(const char *)      = delete;
Boolean     CFEqual(const char *, CFTypeRef)    = delete;
Boolean     CFEqual(CFTypeRef, const char *)    = delete;
Boolean     CFEqual(const char *, const char *) = delete;
CFHashCode  CFHash(const char *)                = delete;
CFStringRef CFCopyDescription(const char *)     = delete;
void        CFShow(const char *)                = delete;
CFTypeID    CFGetTypeID(const char *)           = delete;

#else

/* C: a C string where an object is expected does not compile; the error
   names this object. */
struct a_C_string_is_not_a_CF_object_here__use_CFSTR_or_CFStringCreateWithCString;
extern const struct a_C_string_is_not_a_CF_object_here__use_CFSTR_or_CFStringCreateWithCString
    RLCF_a_C_string_is_not_a_CF_object_here__use_CFSTR_or_CFStringCreateWithCString;
#define RLCF_OBJECT_ONLY(arg, fn)                                                                                      \
    _Generic((arg),                                                                                                    \
        char *: RLCF_a_C_string_is_not_a_CF_object_here__use_CFSTR_or_CFStringCreateWithCString,                       \
        const char *: RLCF_a_C_string_is_not_a_CF_object_here__use_CFSTR_or_CFStringCreateWithCString,                 \
        default: fn)
#define CFRetain(cf)          RLCF_OBJECT_ONLY(cf, RLCFRetain)(cf)
#define CFRelease(cf)         RLCF_OBJECT_ONLY(cf, RLCFRelease)(cf)
#define CFGetRetainCount(cf)  RLCF_OBJECT_ONLY(cf, RLCFGetRetainCount)(cf)
#define CFEqual(cf1, cf2)     RLCF_OBJECT_ONLY(cf1, RLCF_OBJECT_ONLY(cf2, RLCFEqual))((cf1), (cf2))
#define CFHash(cf)            RLCF_OBJECT_ONLY(cf, RLCFHash)(cf)
#define CFCopyDescription(cf) RLCF_OBJECT_ONLY(cf, RLCFCopyDescription)(cf)
#define CFShow(cf)            RLCF_OBJECT_ONLY(cf, RLCFShow)(cf)
#define CFGetTypeID(cf)       RLCF_OBJECT_ONLY(cf, RLCFGetTypeID)(cf)

#endif /* __cplusplus */

/* ---- sockets ----------------------------------------------------------------
 * CFSocket on RLSocket (CRunLoopSocket.h, which says where it differs from
 * CF): the same signatures, constants and context, so these are names only. */
#include "CRunLoopSocket.h"

typedef RLSocketRef          CFSocketRef;
typedef RLSocketNativeHandle CFSocketNativeHandle;
typedef RLSocketError        CFSocketError;
typedef RLSocketCallBackType CFSocketCallBackType;
typedef RLSocketSignature    CFSocketSignature;
typedef RLSocketCallBack     CFSocketCallBack;
typedef RLSocketContext      CFSocketContext;
#define kCFSocketSuccess                             kRLSocketSuccess
#define kCFSocketError                               kRLSocketError
#define kCFSocketTimeout                             kRLSocketTimeout
#define kCFSocketNoCallBack                          kRLSocketNoCallBack
#define kCFSocketReadCallBack                        kRLSocketReadCallBack
#define kCFSocketAcceptCallBack                      kRLSocketAcceptCallBack
#define kCFSocketDataCallBack                        kRLSocketDataCallBack
#define kCFSocketConnectCallBack                     kRLSocketConnectCallBack
#define kCFSocketWriteCallBack                       kRLSocketWriteCallBack
#define kCFSocketAutomaticallyReenableReadCallBack   kRLSocketAutomaticallyReenableReadCallBack
#define kCFSocketAutomaticallyReenableAcceptCallBack kRLSocketAutomaticallyReenableAcceptCallBack
#define kCFSocketAutomaticallyReenableDataCallBack   kRLSocketAutomaticallyReenableDataCallBack
#define kCFSocketAutomaticallyReenableWriteCallBack  kRLSocketAutomaticallyReenableWriteCallBack
#define kCFSocketLeaveErrors                         kRLSocketLeaveErrors
#define kCFSocketCloseOnInvalidate                   kRLSocketCloseOnInvalidate

#define CFSocketGetTypeID                        RLCFSocketGetTypeID
#define CFSocketCreate                           RLSocketCreate
#define CFSocketCreateWithNative                 RLSocketCreateWithNative
#define CFSocketCreateWithSocketSignature        RLSocketCreateWithSocketSignature
#define CFSocketCreateConnectedToSocketSignature RLSocketCreateConnectedToSocketSignature
#define CFSocketSetAddress                       RLSocketSetAddress
#define CFSocketConnectToAddress                 RLSocketConnectToAddress
#define CFSocketInvalidate                       RLSocketInvalidate
#define CFSocketIsValid                          RLSocketIsValid
#define CFSocketCopyAddress                      RLSocketCopyAddress
#define CFSocketCopyPeerAddress                  RLSocketCopyPeerAddress
#define CFSocketGetContext                       RLSocketGetContext
#define CFSocketGetNative                        RLSocketGetNative
#define CFSocketCreateRunLoopSource              RLSocketCreateRunLoopSource
#define CFSocketGetSocketFlags                   RLSocketGetSocketFlags
#define CFSocketSetSocketFlags                   RLSocketSetSocketFlags
#define CFSocketDisableCallBacks                 RLSocketDisableCallBacks
#define CFSocketEnableCallBacks                  RLSocketEnableCallBacks
#define CFSocketSendData                         RLSocketSendData

/* ==== CFMessagePort (CRunLoopCFMessagePort.h) =====================================
 * Local and remote ports between threads and processes of the same user,
 * over UNIX sockets; see that header for how and where it differs from CF. */
#include "CRunLoopCFMessagePort.h"

typedef RLCFMessagePortRef                  CFMessagePortRef;
typedef RLCFMessagePortContext              CFMessagePortContext;
typedef RLCFMessagePortCallBack             CFMessagePortCallBack;
typedef RLCFMessagePortInvalidationCallBack CFMessagePortInvalidationCallBack;
#define kCFMessagePortSuccess                kRLCFMessagePortSuccess
#define kCFMessagePortSendTimeout            kRLCFMessagePortSendTimeout
#define kCFMessagePortReceiveTimeout         kRLCFMessagePortReceiveTimeout
#define kCFMessagePortIsInvalid              kRLCFMessagePortIsInvalid
#define kCFMessagePortTransportError         kRLCFMessagePortTransportError
#define kCFMessagePortBecameInvalidError     kRLCFMessagePortBecameInvalidError
#define CFMessagePortGetTypeID               RLCFMessagePortGetTypeID
#define CFMessagePortCreateLocal             RLCFMessagePortCreateLocal
#define CFMessagePortCreateRemote            RLCFMessagePortCreateRemote
#define CFMessagePortIsRemote                RLCFMessagePortIsRemote
#define CFMessagePortGetName                 RLCFMessagePortGetName
#define CFMessagePortSetName                 RLCFMessagePortSetName
#define CFMessagePortGetContext              RLCFMessagePortGetContext
#define CFMessagePortInvalidate              RLCFMessagePortInvalidate
#define CFMessagePortIsValid                 RLCFMessagePortIsValid
#define CFMessagePortGetInvalidationCallBack RLCFMessagePortGetInvalidationCallBack
#define CFMessagePortSetInvalidationCallBack RLCFMessagePortSetInvalidationCallBack
#define CFMessagePortSendRequest             RLCFMessagePortSendRequest
#define CFMessagePortCreateRunLoopSource     RLCFMessagePortCreateRunLoopSource
/* ==== end of CFMessagePort ========================================================= */

#endif /* CRUNLOOP_CF_NAMES_H */
