/*
 * CRunLoopCFTypes.h: the few CoreFoundation objects a run-loop program needs
 * besides the loop itself, under RLCF names: strings (mode names, messages,
 * descriptions), arrays, data, allocators and type identity, and the
 * run-loop contexts typed as CF types them. CRunLoopCFNames.h gives them
 * CF's names; C code inside or next to the library uses these.
 *
 * It is not CoreFoundation's CFString or CFArray: strings hold UTF-8 only
 * (kRLCFStringEncodingUTF8, and kRLCFStringEncodingASCII for text that is
 * ASCII), no mutable strings or arrays, no dictionaries (the format options
 * of RLCFStringCreateWithFormat are NULL). Lengths and ranges of strings
 * count UTF-16 units as CF's do (a character outside the BMP counts two).
 *
 * Objects. Every object here is an RL object (CRunLoopCore.h) and everything
 * RLRetain, RLRelease and RLCopyDescription do works on it, with one
 * exception: constant strings (RLCFSTR, CFSTR, kRLCFRunLoopDefaultMode...)
 * live in read-only memory and are immortal, so they go through RLCFRetain
 * and RLCFRelease (which ignore them, as CF does), never RLRetain or
 * RLRelease. RLCFRetain, RLCFRelease, RLCFGetRetainCount, RLCFEqual,
 * RLCFHash, RLCFCopyDescription, RLCFShow and RLCFGetTypeID take any object
 * of this library, loops and their items included. Create and Copy
 * functions return one reference (NULL out of memory, or for bad input as
 * each says). Immutable objects may be shared between threads; a mutable
 * data is the caller's to lock.
 *
 * Allocators: the default (NULL), kRLCFAllocatorSystemDefault and
 * kRLCFAllocatorMalloc all use malloc; kRLCFAllocatorNull allocates nothing
 * (as a deallocator: frees nothing). Custom allocators (RLCFAllocatorCreate)
 * are refused: it prints why to stderr and returns NULL, which every
 * function takes as the default allocator. A function given an allocator
 * that is none of these prints the same and returns NULL.
 */
#ifndef CRUNLOOP_CF_TYPES_H
#define CRUNLOOP_CF_TYPES_H

#include <stdarg.h>
#include <stdint.h>
#include "CRunLoop.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef const void                    *RLCFTypeRef;
typedef unsigned long                  RLCFTypeID;
typedef uintptr_t                      RLCFHashCode;
typedef const struct __RLCFAllocator  *RLCFAllocatorRef;
typedef const struct __RLCFString     *RLCFStringRef;
typedef const struct __RLCFArray      *RLCFArrayRef;
typedef const struct __RLCFData       *RLCFDataRef;
typedef struct __RLCFData             *RLCFMutableDataRef;
typedef const struct __RLCFDictionary *RLCFDictionaryRef; /* none exist: format options are NULL */

typedef struct {
    RLIndex location;
    RLIndex length;
} RLCFRange;
#define kRLCFNotFound ((RLIndex)-1)

/* ---- constant strings -----------------------------------------------------
 * RLCFSTR("text") is a constant string: an address constant (so it may
 * initialise a static or file-scope variable, in C and C++) that needs no
 * allocation and is never freed. The string literal itself is the object:
 * the bytes below come first, where an object keeps its count and class, and
 * the second word marks it constant (odd at both ends, it is no class pointer). Two RLCFSTRs
 * of the same text are equal (RLCFEqual) but need not be the same pointer. */
#if __SIZEOF_POINTER__ == 8
#define RLCF_CONSTANT_STRING_HEADER "\377\377\377\377\377\377\377\177\001RLCFST\001"
#else
#define RLCF_CONSTANT_STRING_HEADER "\377\377\377\177\001RL\001"
#endif
#define RLCFSTR(cstr) ((RLCFStringRef)(const void *)(RLCF_CONSTANT_STRING_HEADER cstr ""))

/* The two mode names CF defines, as constant strings. The run loop hands
   these very objects back (RLCFRunLoopCopyCurrentMode, ...) for those modes,
   so they compare equal by pointer too, as they do on macOS. */
extern const char kRLCFRunLoopDefaultModeStorage[];
extern const char kRLCFRunLoopCommonModesStorage[];
#define kRLCFRunLoopDefaultMode ((RLCFStringRef)(const void *)kRLCFRunLoopDefaultModeStorage)
#define kRLCFRunLoopCommonModes ((RLCFStringRef)(const void *)kRLCFRunLoopCommonModesStorage)

/* ---- allocators --------------------------------------------------------------- */
#define kRLCFAllocatorDefault ((RLCFAllocatorRef)NULL)
extern const RLCFAllocatorRef kRLCFAllocatorSystemDefault;
extern const RLCFAllocatorRef kRLCFAllocatorMalloc;
extern const RLCFAllocatorRef kRLCFAllocatorNull;

typedef struct {
    RLIndex version;
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
    void *(*allocate)(RLIndex allocSize, RLOptionFlags hint, void *info);
    void *(*reallocate)(void *ptr, RLIndex newsize, RLOptionFlags hint, void *info);
    void (*deallocate)(void *ptr, void *info);
    RLIndex (*preferredSize)(RLIndex size, RLOptionFlags hint, void *info);
} RLCFAllocatorContext;

/* Refused: prints why to stderr and returns NULL (the default allocator). */
RLCFAllocatorRef RLCFAllocatorCreate(RLCFAllocatorRef allocator, RLCFAllocatorContext *context);
/* kRLCFAllocatorSystemDefault. */
RLCFAllocatorRef RLCFAllocatorGetDefault(void);
/* Setting one of the allocators above is accepted and changes nothing (they
   all use malloc); anything else is refused as RLCFAllocatorCreate is. */
void RLCFAllocatorSetDefault(RLCFAllocatorRef allocator);
/* malloc(size); NULL for size <= 0 and for kRLCFAllocatorNull. */
void *RLCFAllocatorAllocate(RLCFAllocatorRef allocator, RLIndex size, RLOptionFlags hint);
/* As CF: NULL ptr allocates, newsize <= 0 frees (and returns NULL), else
   realloc; NULL for kRLCFAllocatorNull. */
void *RLCFAllocatorReallocate(RLCFAllocatorRef allocator, void *ptr, RLIndex newsize, RLOptionFlags hint);
/* free(ptr); nothing for kRLCFAllocatorNull. */
void    RLCFAllocatorDeallocate(RLCFAllocatorRef allocator, void *ptr);
RLIndex RLCFAllocatorGetPreferredSizeForSize(RLCFAllocatorRef allocator, RLIndex size, RLOptionFlags hint);

/* ---- any object ------------------------------------------------------------------
 * NULL is ignored where CF would crash: RLCFRetain(NULL) returns NULL,
 * RLCFRelease(NULL) does nothing, RLCFGetRetainCount(NULL) is 0, RLCFEqual
 * with a NULL is true only for two NULLs, RLCFHash(NULL) is 0,
 * RLCFGetTypeID(NULL) is 0 (no type). */
/* CF's CFRetain and CFRelease, for every object of this library and for
   constant strings (which they leave alone); returns what it was given. */
RLCFTypeRef RLCFRetain(RLCFTypeRef cf);
void        RLCFRelease(RLCFTypeRef cf);
/* The references held, by the caller and by the library (a loop holds its
   items). Constant strings and allocators: a very large number. */
RLIndex RLCFGetRetainCount(RLCFTypeRef cf);
/* Strings, arrays and data by content; run-loop sources as CF compares
   them (same order, version and callbacks, and infos equal by the context's
   equal callback, or the same info without one); anything else by identity.
   Objects of different types are never equal. */
bool RLCFEqual(RLCFTypeRef cf1, RLCFTypeRef cf2);
/* Equal objects have equal hashes: strings and data by content, arrays by
   count, sources by their context's hash callback (or their info pointer),
   anything else by address. */
RLCFHashCode RLCFHash(RLCFTypeRef cf);
/* A description as a string: for a string `<CFString 0x...>{contents =
   "..."}`, for an array or data their contents, for a run loop or an item
   what RLCopyDescription says, including the text its context's
   copyDescription gives. Never NULL but out of memory. */
RLCFStringRef RLCFCopyDescription(RLCFTypeRef cf);
/* Prints a string itself, anything else its description, and a newline, to
   stderr ("(null)" for NULL). */
void RLCFShow(RLCFTypeRef cf);
/* The type of any object of this library, as the *GetTypeID functions
   below name them; other RL objects (message ports, threads, ...) each
   have their own too. */
RLCFTypeID RLCFGetTypeID(RLCFTypeRef cf);
/* The type's name ("CFString", "CFRunLoopTimer", ...) as a constant string;
   NULL for an unknown type. */
RLCFStringRef RLCFCopyTypeIDDescription(RLCFTypeID type_id);
/* kRLCFAllocatorSystemDefault for every object (NULL for NULL). */
RLCFAllocatorRef RLCFGetAllocator(RLCFTypeRef cf);

/* Each type's id: what RLCFGetTypeID returns for its objects. */
RLCFTypeID RLCFAllocatorGetTypeID(void);
RLCFTypeID RLCFStringGetTypeID(void);
RLCFTypeID RLCFArrayGetTypeID(void);
RLCFTypeID RLCFDataGetTypeID(void); /* mutable data too, as in CF */
RLCFTypeID RLCFRunLoopGetTypeID(void);
RLCFTypeID RLCFRunLoopSourceGetTypeID(void);
RLCFTypeID RLCFRunLoopObserverGetTypeID(void);
RLCFTypeID RLCFRunLoopTimerGetTypeID(void);
RLCFTypeID RLCFFileDescriptorGetTypeID(void);

/* ---- strings --------------------------------------------------------------------- */
typedef uint32_t RLCFStringEncoding;
enum { kRLCFStringEncodingASCII = 0x0600, kRLCFStringEncodingUTF8 = 0x08000100 };

typedef RLOptionFlags RLCFStringCompareFlags;
enum {
    kRLCFCompareCaseInsensitive = 1,  /* ASCII letters only */
    kRLCFCompareBackwards       = 4,  /* RLCFStringFind: the last match */
    kRLCFCompareAnchored        = 8,  /* RLCFStringFind: at the start (at the end, backwards) only */
    kRLCFCompareNonliteral      = 16, /* ignored */
    kRLCFCompareLocalized       = 32, /* ignored */
    kRLCFCompareNumerically     = 64  /* runs of ASCII digits compare as numbers: "a9" < "a10" */
};
typedef RLIndex RLCFComparisonResult;
enum { kRLCFCompareLessThan = -1, kRLCFCompareEqualTo = 0, kRLCFCompareGreaterThan = 1 };

/* A string of the NUL-terminated cStr: NULL when cStr is NULL, is not valid
   in `encoding` (UTF-8; ASCII: bytes below 128), or the encoding is another. */
RLCFStringRef RLCFStringCreateWithCString(RLCFAllocatorRef alloc, const char *cStr, RLCFStringEncoding encoding);
/* The same from numBytes bytes (no NUL among them: NULL, unlike CF). With
   isExternalRepresentation a leading UTF-8 byte-order mark is dropped. */
RLCFStringRef RLCFStringCreateWithBytes(RLCFAllocatorRef alloc, const uint8_t *bytes, RLIndex numBytes,
                                        RLCFStringEncoding encoding, bool isExternalRepresentation);
/* printf's formats and CF's %@: an object's description (RLCFCopyDescription;
   a string is its own text; NULL prints "(null)"), with printf's flags,
   width and precision. Not supported (copied as written, consuming no
   argument): positional arguments (%1$d), %S and %C (UTF-16). %s takes UTF-8.
   formatOptions: ignored (NULL). NULL format: NULL. */
RLCFStringRef RLCFStringCreateWithFormat(RLCFAllocatorRef alloc, RLCFDictionaryRef formatOptions, RLCFStringRef format,
                                         ...);
RLCFStringRef RLCFStringCreateWithFormatAndArguments(RLCFAllocatorRef alloc, RLCFDictionaryRef formatOptions,
                                                     RLCFStringRef format, va_list arguments);
/* Strings are immutable: the same string, retained. */
RLCFStringRef RLCFStringCreateCopy(RLCFAllocatorRef alloc, RLCFStringRef theString);
/* The UTF-16 units in `range` of the string as a new string; NULL when the
   range is outside it or splits a character. */
RLCFStringRef RLCFStringCreateWithSubstring(RLCFAllocatorRef alloc, RLCFStringRef str, RLCFRange range);
/* Length in UTF-16 units (as CF); 0 for NULL. */
RLIndex RLCFStringGetLength(RLCFStringRef theString);
/* Copies the text and its NUL into buffer: false (buffer untouched) when it
   does not fit in bufferSize bytes or in the encoding, or for NULL. */
bool RLCFStringGetCString(RLCFStringRef theString, char *buffer, RLIndex bufferSize, RLCFStringEncoding encoding);
/* The string's own NUL-terminated text, valid while the string lives (NULL
   when the text is not in `encoding`, or for NULL and non-strings). Unlike
   CF, always there for UTF-8. */
const char *RLCFStringGetCStringPtr(RLCFStringRef theString, RLCFStringEncoding encoding);
/* The most bytes `length` UTF-16 units take in `encoding` (3 per unit in
   UTF-8), without the NUL; kRLCFNotFound for another encoding. */
RLIndex RLCFStringGetMaximumSizeForEncoding(RLIndex length, RLCFStringEncoding encoding);
/* By Unicode code point (CF: by UTF-16 unit; they differ only between
   characters above U+FFFF and U+E000..U+FFFF), with the options above. NULL
   sorts first. */
RLCFComparisonResult RLCFStringCompare(RLCFStringRef theString1, RLCFStringRef theString2,
                                       RLCFStringCompareFlags compareOptions);
/* Where stringToFind first occurs (the last with kRLCFCompareBackwards), in
   UTF-16 units; {kRLCFNotFound, 0} when it does not, or is empty. */
RLCFRange RLCFStringFind(RLCFStringRef theString, RLCFStringRef stringToFind, RLCFStringCompareFlags compareOptions);
bool      RLCFStringHasPrefix(RLCFStringRef theString, RLCFStringRef prefix);
bool      RLCFStringHasSuffix(RLCFStringRef theString, RLCFStringRef suffix);

/* ---- arrays -------------------------------------------------------------------- */
typedef struct {
    RLIndex version;
    const void *(*retain)(RLCFAllocatorRef allocator, const void *value);
    void (*release)(RLCFAllocatorRef allocator, const void *value);
    RLCFStringRef (*copyDescription)(const void *value);
    bool (*equal)(const void *value1, const void *value2);
} RLCFArrayCallBacks;
/* For arrays of objects: RLCFRetain, RLCFRelease, RLCFCopyDescription, RLCFEqual. */
extern const RLCFArrayCallBacks kRLCFTypeArrayCallBacks;

/* An immutable array of numValues values, each retained with callBacks
   (NULL callBacks: values are kept as they are and compared by identity).
   NULL when numValues < 0, or values is NULL and numValues > 0. */
RLCFArrayRef RLCFArrayCreate(RLCFAllocatorRef allocator, const void **values, RLIndex numValues,
                             const RLCFArrayCallBacks *callBacks);
RLCFArrayRef RLCFArrayCreateCopy(RLCFAllocatorRef allocator, RLCFArrayRef theArray); /* the same, retained */
RLIndex      RLCFArrayGetCount(RLCFArrayRef theArray);                               /* 0 for NULL */
/* NULL outside 0 ..< count (CF crashes). */
const void *RLCFArrayGetValueAtIndex(RLCFArrayRef theArray, RLIndex idx);
/* Copies the values in range (clamped to the array) to values. */
void    RLCFArrayGetValues(RLCFArrayRef theArray, RLCFRange range, const void **values);
bool    RLCFArrayContainsValue(RLCFArrayRef theArray, RLCFRange range, const void *value);
RLIndex RLCFArrayGetFirstIndexOfValue(RLCFArrayRef theArray, RLCFRange range, const void *value); /* kRLCFNotFound */

/* ---- data ------------------------------------------------------------------------ */
/* A data holding a copy of `length` bytes; NULL out of memory, for a
   negative length, or for NULL bytes with a length. */
RLCFDataRef RLCFDataCreate(RLCFAllocatorRef allocator, const uint8_t *bytes, RLIndex length);
/* Uses bytes as they are; bytesDeallocator frees them with the data (NULL:
   the default, free(); kRLCFAllocatorNull: never). Out of memory the bytes
   are not freed. */
RLCFDataRef RLCFDataCreateWithBytesNoCopy(RLCFAllocatorRef allocator, const uint8_t *bytes, RLIndex length,
                                          RLCFAllocatorRef bytesDeallocator);
RLCFDataRef RLCFDataCreateCopy(RLCFAllocatorRef allocator, RLCFDataRef theData);
/* capacity is a hint (CF: a limit); the data grows as needed. */
RLCFMutableDataRef RLCFDataCreateMutable(RLCFAllocatorRef allocator, RLIndex capacity);
RLCFMutableDataRef RLCFDataCreateMutableCopy(RLCFAllocatorRef allocator, RLIndex capacity, RLCFDataRef theData);
RLIndex            RLCFDataGetLength(RLCFDataRef theData); /* 0 for NULL */
/* Never NULL for a data, even an empty one. */
const uint8_t *RLCFDataGetBytePtr(RLCFDataRef theData);
uint8_t       *RLCFDataGetMutableBytePtr(RLCFMutableDataRef theData); /* NULL for an immutable data */
/* Copies the bytes in range (clamped to the data) to buffer. */
void RLCFDataGetBytes(RLCFDataRef theData, RLCFRange range, uint8_t *buffer);
/* The changes below apply to mutable data only (others: ignored). Out of
   memory they leave the data as it was (CF would crash). New bytes are 0. */
void RLCFDataSetLength(RLCFMutableDataRef theData, RLIndex length);
void RLCFDataIncreaseLength(RLCFMutableDataRef theData, RLIndex extraLength);
void RLCFDataAppendBytes(RLCFMutableDataRef theData, const uint8_t *bytes, RLIndex length);
/* Replaces the bytes in range (clamped) with newLength bytes of newBytes. */
void RLCFDataReplaceBytes(RLCFMutableDataRef theData, RLCFRange range, const uint8_t *newBytes, RLIndex newLength);
void RLCFDataDeleteBytes(RLCFMutableDataRef theData, RLCFRange range);

/* ---- run-loop contexts with CF's types ----------------------------------------------
 * The RL contexts (CRunLoopCore.h) as CF types them: copyDescription returns
 * a string (which the library releases), a version-0 source's schedule and
 * cancel get the mode as a string (valid during the call; RLCFRetain it to
 * keep it; NULL if it could not be made, out of memory). Items made from
 * these are ordinary RL items. The RL GetContext functions give their
 * callbacks under the RL types, and the version with a private flag set when
 * one of them is typed differently: use the RLCF ones. */
typedef struct {
    RLIndex version; /* 0 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
    bool (*equal)(const void *info1, const void *info2);
    RLCFHashCode (*hash)(const void *info);
    void (*schedule)(void *info, RLRunLoopRef rl, RLCFStringRef mode);
    void (*cancel)(void *info, RLRunLoopRef rl, RLCFStringRef mode);
    void (*perform)(void *info);
} RLCFRunLoopSourceContext;

typedef struct {
    RLIndex version; /* 1 */
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
    bool (*equal)(const void *info1, const void *info2);
    RLCFHashCode (*hash)(const void *info);
    int (*getFileDescriptor)(void *info);
    void (*perform)(void *info);
} RLCFRunLoopSourceContext1;

typedef struct {
    RLIndex version;
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
} RLCFRunLoopObserverContext;

typedef struct {
    RLIndex version;
    void   *info;
    const void *(*retain)(const void *info);
    void (*release)(const void *info);
    RLCFStringRef (*copyDescription)(const void *info);
} RLCFRunLoopTimerContext;

/* CF's CFFileDescriptorContext: its callbacks take `void *`. */
typedef struct {
    RLIndex version;
    void   *info;
    void *(*retain)(void *info);
    void (*release)(void *info);
    RLCFStringRef (*copyDescription)(void *info);
} RLCFFileDescriptorContext;

/* The RL create functions with a CF-typed context (a version-1 source's is
   an RLCFRunLoopSourceContext1, passed cast), and CF's allocator argument. */
RLRunLoopSourceRef   RLCFRunLoopSourceCreate(RLCFAllocatorRef allocator, RLIndex order,
                                             RLCFRunLoopSourceContext *context);
RLRunLoopObserverRef RLCFRunLoopObserverCreate(RLCFAllocatorRef allocator, RLOptionFlags activities, bool repeats,
                                               RLIndex order, RLRunLoopObserverCallBack callout,
                                               RLCFRunLoopObserverContext *context);
RLRunLoopTimerRef   RLCFRunLoopTimerCreate(RLCFAllocatorRef allocator, RLAbsoluteTime fireDate, RLTimeInterval interval,
                                           RLOptionFlags flags, RLIndex order, RLRunLoopTimerCallBack callout,
                                           RLCFRunLoopTimerContext *context);
RLFileDescriptorRef RLCFFileDescriptorCreate(RLCFAllocatorRef allocator, RLFileDescriptorNativeDescriptor fd,
                                             bool closeOnInvalidate, RLFileDescriptorCallBack callout,
                                             const RLCFFileDescriptorContext *context);
RLRunLoopSourceRef  RLCFFileDescriptorCreateRunLoopSource(RLCFAllocatorRef allocator, RLFileDescriptorRef f,
                                                          RLIndex order);
/* The contexts as given at creation (a version-1 source's into an
   RLCFRunLoopSourceContext1, passed cast). NULL arguments: ignored. */
void RLCFRunLoopSourceGetContext(RLRunLoopSourceRef source, RLCFRunLoopSourceContext *context);
void RLCFRunLoopObserverGetContext(RLRunLoopObserverRef observer, RLCFRunLoopObserverContext *context);
void RLCFRunLoopTimerGetContext(RLRunLoopTimerRef timer, RLCFRunLoopTimerContext *context);
void RLCFFileDescriptorGetContext(RLFileDescriptorRef f, RLCFFileDescriptorContext *context);

/* The mode the loop runs in (RLRunLoopCopyCurrentMode) as a string, and
   every mode of the loop as an array of strings (RLRunLoopCopyAllModes);
   NULL as those are. The default and common modes are kRLCFRunLoopDefaultMode
   and kRLCFRunLoopCommonModes themselves. */
RLCFStringRef RLCFRunLoopCopyCurrentMode(RLRunLoopRef rl);
RLCFArrayRef  RLCFRunLoopCopyAllModes(RLRunLoopRef rl);

#ifdef __cplusplus
}
#endif

#endif /* CRUNLOOP_CF_TYPES_H */
