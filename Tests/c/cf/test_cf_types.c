/*
 * test_cf_types.c: the objects CoreFoundation.h brings along besides the run
 * loop (CRunLoopCFNames.h over CRunLoopCFTypes.h): strings, arrays, data,
 * allocators, type identity, and what CFRetain, CFRelease, CFEqual, CFHash,
 * CFCopyDescription and CFShow do with them. Written with CF names only,
 * as a macOS program would be; ASan and valgrind see a reference too many
 * or too few.
 */
#include <CRunLoopCFNames.h>
#include "rltest.h"

/* A constant string initialises a file-scope variable, as in CF programs. */
static CFStringRef kGreeting = CFSTR("hello, world");

static const char *text(CFStringRef string) {
    return CFStringGetCStringPtr(string, kCFStringEncodingUTF8);
}

/* What CFShow printed: stderr goes to a file while `show` runs. */
static char *captured_stderr(void (*show)(const void *), const void *arg) {
    fflush(stderr);
    int saved = dup(2);
    FILE *capture = tmpfile();
    RL_ASSERT(saved >= 0 && capture != NULL);
    RL_ASSERT(dup2(fileno(capture), 2) == 2);
    show(arg);
    fflush(stderr);
    RL_ASSERT(dup2(saved, 2) == 2);
    close(saved);
    static char buffer[4096];
    rewind(capture);
    size_t n = fread(buffer, 1, sizeof buffer - 1, capture);
    buffer[n] = '\0';
    fclose(capture);
    return buffer;
}

static void show(const void *cf) {
    CFShow(cf);
}

/* ---- constant strings ---------------------------------------------------------- */

static void constant_strings_are_immortal_objects(void) {
    RL_ASSERT_STR_EQ(text(kGreeting), "hello, world");
    RL_ASSERT_EQ_INT(CFStringGetLength(kGreeting), 12);
    RL_ASSERT(CFGetTypeID(kGreeting) == CFStringGetTypeID());
    CFIndex count = CFGetRetainCount(kGreeting);
    RL_ASSERT(count > 1000000);
    RL_ASSERT(CFRetain(kGreeting) == kGreeting);
    CFRelease(kGreeting);
    CFRelease(kGreeting); /* one more than retained: still fine, as in CF */
    RL_ASSERT_EQ_INT(CFGetRetainCount(kGreeting), count);
    RL_ASSERT_STR_EQ(text(kGreeting), "hello, world");
    RL_ASSERT(CFEqual(kGreeting, CFSTR("hello, world")));
    RL_ASSERT_EQ_INT(CFHash(kGreeting), CFHash(CFSTR("hello, world")));
    RL_ASSERT_STR_EQ(text(CFSTR("")), "");
    RL_ASSERT_EQ_INT(CFStringGetLength(CFSTR("")), 0);
}

/* ---- made strings ------------------------------------------------------------------ */

static void created_strings_are_counted(void) {
    CFStringRef s = CFStringCreateWithCString(kCFAllocatorDefault, "Tracking", kCFStringEncodingUTF8);
    RL_ASSERT(s != NULL);
    RL_ASSERT_EQ_INT(CFGetRetainCount(s), 1);
    RL_ASSERT(CFRetain(s) == s);
    RL_ASSERT_EQ_INT(CFGetRetainCount(s), 2);
    CFRelease(s);
    RL_ASSERT_EQ_INT(CFGetRetainCount(s), 1);
    RL_ASSERT(CFEqual(s, CFSTR("Tracking")) && CFEqual(CFSTR("Tracking"), s));
    RL_ASSERT_EQ_INT(CFHash(s), CFHash(CFSTR("Tracking")));
    RL_ASSERT(CFGetTypeID(s) == CFStringGetTypeID());
    CFStringRef copy = CFStringCreateCopy(NULL, s); /* immutable: the same string */
    RL_ASSERT(copy == s);
    RL_ASSERT_EQ_INT(CFGetRetainCount(s), 2);
    CFRelease(copy);
    RL_ASSERT(CFStringCreateCopy(NULL, kGreeting) == kGreeting);
    CFRelease(s);
}

static void encodings_are_checked(void) {
    CFStringRef ascii = CFStringCreateWithCString(NULL, "plain", kCFStringEncodingASCII);
    RL_ASSERT(ascii != NULL);
    RL_ASSERT(CFStringCreateWithCString(NULL, "caf\xc3\xa9", kCFStringEncodingASCII) == NULL);
    CFStringRef utf8 = CFStringCreateWithCString(NULL, "caf\xc3\xa9", kCFStringEncodingUTF8);
    RL_ASSERT(utf8 != NULL);
    RL_ASSERT(CFStringCreateWithCString(NULL, "bad \xc3", kCFStringEncodingUTF8) == NULL);     /* cut short */
    RL_ASSERT(CFStringCreateWithCString(NULL, "\xc0\xaf", kCFStringEncodingUTF8) == NULL);     /* overlong */
    RL_ASSERT(CFStringCreateWithCString(NULL, "\xed\xa0\x80", kCFStringEncodingUTF8) == NULL); /* surrogate */
    RL_ASSERT(CFStringCreateWithCString(NULL, "x", 0 /* MacRoman */) == NULL);
    RL_ASSERT(CFStringCreateWithCString(NULL, NULL, kCFStringEncodingUTF8) == NULL);

    char buffer[8];
    RL_ASSERT(CFStringGetCString(utf8, buffer, sizeof buffer, kCFStringEncodingUTF8));
    RL_ASSERT_STR_EQ(buffer, "caf\xc3\xa9");
    RL_ASSERT(!CFStringGetCString(utf8, buffer, sizeof buffer, kCFStringEncodingASCII));
    RL_ASSERT(!CFStringGetCString(utf8, buffer, 5, kCFStringEncodingUTF8)); /* 5 bytes and the NUL: 6 */
    RL_ASSERT(CFStringGetCString(utf8, buffer, 6, kCFStringEncodingUTF8));
    RL_ASSERT(CFStringGetCStringPtr(utf8, kCFStringEncodingASCII) == NULL);
    RL_ASSERT_STR_EQ(CFStringGetCStringPtr(ascii, kCFStringEncodingASCII), "plain");
    RL_ASSERT_EQ_INT(CFStringGetLength(utf8), 4);
    RL_ASSERT_EQ_INT(CFStringGetMaximumSizeForEncoding(4, kCFStringEncodingUTF8), 12);
    RL_ASSERT_EQ_INT(CFStringGetMaximumSizeForEncoding(4, kCFStringEncodingASCII), 4);

    /* Lengths count UTF-16 units: a character outside the BMP counts two. */
    CFStringRef emoji = CFStringCreateWithCString(NULL, "a\xf0\x9f\x98\x80z", kCFStringEncodingUTF8);
    RL_ASSERT_EQ_INT(CFStringGetLength(emoji), 4);
    CFRange z = CFStringFind(emoji, CFSTR("z"), 0);
    RL_ASSERT_EQ_INT(z.location, 3);
    RL_ASSERT(CFStringCreateWithSubstring(NULL, emoji, CFRangeMake(2, 1)) == NULL); /* half a character */
    CFStringRef middle = CFStringCreateWithSubstring(NULL, emoji, CFRangeMake(1, 2));
    RL_ASSERT_STR_EQ(text(middle), "\xf0\x9f\x98\x80");

    const UInt8 bytes[] = {0xEF, 0xBB, 0xBF, 'o', 'k'};
    CFStringRef from_bytes = CFStringCreateWithBytes(NULL, bytes, sizeof bytes, kCFStringEncodingUTF8, true);
    RL_ASSERT_STR_EQ(text(from_bytes), "ok");
    const UInt8 with_nul[] = {'a', 0, 'b'};
    RL_ASSERT(CFStringCreateWithBytes(NULL, with_nul, 3, kCFStringEncodingUTF8, false) == NULL);

    CFRelease(from_bytes);
    CFRelease(middle);
    CFRelease(emoji);
    CFRelease(utf8);
    CFRelease(ascii);
}

static void compare_and_find(void) {
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("apple"), CFSTR("banana"), 0), kCFCompareLessThan);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("b"), CFSTR("a"), 0), kCFCompareGreaterThan);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("same"), CFSTR("same"), 0), kCFCompareEqualTo);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("ab"), CFSTR("abc"), 0), kCFCompareLessThan);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("Mode"), CFSTR("mode"), 0), kCFCompareLessThan);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("Mode"), CFSTR("mODE"), kCFCompareCaseInsensitive), kCFCompareEqualTo);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("item9"), CFSTR("item10"), 0), kCFCompareGreaterThan);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("item9"), CFSTR("item10"), kCFCompareNumerically), kCFCompareLessThan);
    RL_ASSERT_EQ_INT(CFStringCompare(CFSTR("v2.10"), CFSTR("v2.9"), kCFCompareNumerically), kCFCompareGreaterThan);

    CFStringRef path = CFSTR("a/b/a/b");
    CFRange first = CFStringFind(path, CFSTR("b"), 0);
    RL_ASSERT_EQ_INT(first.location, 2);
    RL_ASSERT_EQ_INT(first.length, 1);
    RL_ASSERT_EQ_INT(CFStringFind(path, CFSTR("a/b"), kCFCompareBackwards).location, 4);
    RL_ASSERT_EQ_INT(CFStringFind(path, CFSTR("b"), kCFCompareAnchored).location, kCFNotFound);
    RL_ASSERT_EQ_INT(CFStringFind(path, CFSTR("a/"), kCFCompareAnchored).location, 0);
    RL_ASSERT_EQ_INT(CFStringFind(path, CFSTR("A/B"), kCFCompareCaseInsensitive).location, 0);
    CFRange missing = CFStringFind(path, CFSTR("c"), 0);
    RL_ASSERT_EQ_INT(missing.location, kCFNotFound);
    RL_ASSERT_EQ_INT(missing.length, 0);
    RL_ASSERT_EQ_INT(CFStringFind(path, CFSTR(""), 0).location, kCFNotFound);
    RL_ASSERT(CFStringHasPrefix(path, CFSTR("a/b")));
    RL_ASSERT(!CFStringHasPrefix(path, CFSTR("b")));
    RL_ASSERT(CFStringHasSuffix(path, CFSTR("/b")));
    RL_ASSERT(!CFStringHasSuffix(path, CFSTR("a")));
}

/* A program's own printf-like function over CF's format. */
static CFStringRef format_line(CFStringRef format, ...) {
    va_list ap;
    va_start(ap, format);
    CFStringRef line = CFStringCreateWithFormatAndArguments(kCFAllocatorDefault, NULL, format, ap);
    va_end(ap);
    return line;
}

static void formats(void) {
    CFStringRef name = CFStringCreateWithCString(NULL, "Tracking", kCFStringEncodingUTF8);
    CFStringRef s = CFStringCreateWithFormat(NULL, NULL, CFSTR("%@ mode, %d sources, %s, %5.2f|%-4@|%%|%lu|%c"), name,
                                             3, "fd", 2.5, CFSTR("x"), (unsigned long)7, 'z');
    RL_ASSERT_STR_EQ(text(s), "Tracking mode, 3 sources, fd,  2.50|x   |%|7|z");
    CFRelease(s);

    s = CFStringCreateWithFormat(NULL, NULL, CFSTR("[%*d] [%.*s] [%lld] [%zu] [%hhd] [%#x]"), 4, 7, 2, "abc",
                                 (long long)-5, (size_t)9, 300, 255);
    RL_ASSERT_STR_EQ(text(s), "[   7] [ab] [-5] [9] [44] [0xff]");
    CFRelease(s);

    /* %@ of a NULL, and of an object: its description. */
    CFArrayRef empty = CFArrayCreate(NULL, NULL, 0, &kCFTypeArrayCallBacks);
    s = CFStringCreateWithFormat(NULL, NULL, CFSTR("%@ / %@"), NULL, empty);
    RL_ASSERT(strncmp(text(s), "(null) / <CFArray ", 18) == 0);
    CFRelease(s);
    CFRelease(empty);

    /* Positional arguments are copied as written, consuming nothing. */
    s = CFStringCreateWithFormat(NULL, NULL, CFSTR("%1$d and %d"), 5);
    RL_ASSERT_STR_EQ(text(s), "%1$d and 5");
    CFRelease(s);
    RL_ASSERT(CFStringCreateWithFormat(NULL, NULL, NULL) == NULL);
    s = format_line(CFSTR("%@=%g"), CFSTR("x"), 0.5);
    RL_ASSERT_STR_EQ(text(s), "x=0.5");
    CFRelease(s);
    CFRelease(name);
}

static void descriptions_and_show(void) {
    CFStringRef description = CFCopyDescription(kGreeting);
    RL_ASSERT(strstr(text(description), "<CFString ") == text(description));
    RL_ASSERT(strstr(text(description), "{contents = \"hello, world\"}") != NULL);
    CFRelease(description);

    RL_ASSERT_STR_EQ(captured_stderr(show, kGreeting), "hello, world\n"); /* a string shows itself */
    RL_ASSERT_STR_EQ(captured_stderr(show, NULL), "(null)\n");
    CFDataRef data = CFDataCreate(NULL, (const UInt8 *)"\x01\xff", 2);
    RL_ASSERT(strstr(captured_stderr(show, data), "bytes = 0x01ff") != NULL);
    CFRelease(data);
    const char *shown = captured_stderr(show, CFRunLoopGetCurrent());
    RL_ASSERT(strncmp(shown, "<RLRunLoop ", 11) == 0);
}

/* ---- arrays ------------------------------------------------------------------------- */

static void arrays_retain_their_values(void) {
    CFStringRef a = CFStringCreateWithCString(NULL, "a", kCFStringEncodingUTF8);
    const void *values[] = {a, CFSTR("b"), kCFRunLoopDefaultMode};
    CFArrayRef array = CFArrayCreate(kCFAllocatorDefault, values, 3, &kCFTypeArrayCallBacks);
    RL_ASSERT(array != NULL);
    RL_ASSERT_EQ_INT(CFGetRetainCount(a), 2);
    RL_ASSERT(CFGetTypeID(array) == CFArrayGetTypeID());
    RL_ASSERT_EQ_INT(CFArrayGetCount(array), 3);
    RL_ASSERT(CFArrayGetValueAtIndex(array, 0) == a);
    RL_ASSERT(CFArrayGetValueAtIndex(array, 2) == kCFRunLoopDefaultMode);
    RL_ASSERT(CFArrayGetValueAtIndex(array, 3) == NULL);
    RL_ASSERT(CFArrayGetValueAtIndex(array, -1) == NULL);
    const void *out[3] = {NULL, NULL, NULL};
    CFArrayGetValues(array, CFRangeMake(1, 2), out);
    RL_ASSERT(out[0] == values[1] && out[1] == values[2] && out[2] == NULL);
    RL_ASSERT(CFArrayContainsValue(array, CFRangeMake(0, 3), CFSTR("a"))); /* equal, not identical */
    RL_ASSERT(!CFArrayContainsValue(array, CFRangeMake(1, 2), CFSTR("a")));
    RL_ASSERT_EQ_INT(CFArrayGetFirstIndexOfValue(array, CFRangeMake(0, 3), CFSTR("b")), 1);

    CFArrayRef same =
        CFArrayCreate(NULL, (const void *[]){CFSTR("a"), CFSTR("b"), kCFRunLoopDefaultMode}, 3, &kCFTypeArrayCallBacks);
    RL_ASSERT(CFEqual(array, same));
    RL_ASSERT_EQ_INT(CFHash(array), CFHash(same));
    CFArrayRef copy = CFArrayCreateCopy(NULL, array);
    RL_ASSERT(copy == array);
    CFRelease(copy);

    CFStringRef description = CFCopyDescription(array);
    RL_ASSERT(strstr(text(description), "count = 3") != NULL);
    RL_ASSERT(strstr(text(description), "kCFRunLoopDefaultMode") != NULL);
    CFRelease(description);

    CFRelease(same);
    CFRelease(array);
    RL_ASSERT_EQ_INT(CFGetRetainCount(a), 1);
    CFRelease(a);
}

static void arrays_without_callbacks_keep_raw_values(void) {
    int x = 1, y = 2;
    const void *values[] = {&x, &y};
    CFArrayRef array = CFArrayCreate(NULL, values, 2, NULL);
    RL_ASSERT(CFArrayGetValueAtIndex(array, 1) == &y);
    RL_ASSERT(CFArrayContainsValue(array, CFRangeMake(0, 2), &x));
    RL_ASSERT(CFArrayCreate(NULL, NULL, 1, NULL) == NULL);
    RL_ASSERT(CFArrayCreate(NULL, values, -1, NULL) == NULL);
    RL_ASSERT_EQ_INT(CFArrayGetCount(NULL), 0);
    CFRelease(array);
}

/* ---- data ---------------------------------------------------------------------------- */

static void data_objects(void) {
    CFDataRef data = CFDataCreate(NULL, (const UInt8 *)"abc", 3);
    RL_ASSERT(CFGetTypeID(data) == CFDataGetTypeID());
    RL_ASSERT_EQ_INT(CFDataGetLength(data), 3);
    RL_ASSERT(memcmp(CFDataGetBytePtr(data), "abc", 3) == 0);
    CFDataRef copy = CFDataCreateCopy(NULL, data);
    RL_ASSERT(copy != data && CFEqual(copy, data));
    RL_ASSERT_EQ_INT(CFHash(copy), CFHash(data));
    UInt8 two[2];
    CFDataGetBytes(data, CFRangeMake(1, 2), two);
    RL_ASSERT(two[0] == 'b' && two[1] == 'c');
    CFDataRef empty = CFDataCreate(NULL, NULL, 0);
    RL_ASSERT(CFDataGetBytePtr(empty) != NULL);
    RL_ASSERT_EQ_INT(CFDataGetLength(empty), 0);

    CFMutableDataRef m = CFDataCreateMutable(NULL, 0);
    RL_ASSERT(CFGetTypeID(m) == CFDataGetTypeID());
    CFDataAppendBytes(m, (const UInt8 *)"hello", 5);
    CFDataAppendBytes(m, CFDataGetBytePtr(m), 5); /* its own bytes, which move as it grows */
    RL_ASSERT_EQ_INT(CFDataGetLength(m), 10);
    RL_ASSERT(memcmp(CFDataGetBytePtr(m), "hellohello", 10) == 0);
    for (int i = 0; i < 100; i++) CFDataAppendBytes(m, (const UInt8 *)"0123456789", 10);
    RL_ASSERT_EQ_INT(CFDataGetLength(m), 1010);
    RL_ASSERT(memcmp(CFDataGetBytePtr(m) + 1000, "0123456789", 10) == 0);
    CFDataSetLength(m, 5);
    CFDataIncreaseLength(m, 2);
    RL_ASSERT_EQ_INT(CFDataGetLength(m), 7);
    RL_ASSERT(memcmp(CFDataGetBytePtr(m), "hello\0\0", 7) == 0);
    CFDataReplaceBytes(m, CFRangeMake(0, 1), (const UInt8 *)"J", 1);
    CFDataDeleteBytes(m, CFRangeMake(5, 2));
    RL_ASSERT_EQ_INT(CFDataGetLength(m), 5);
    RL_ASSERT(memcmp(CFDataGetMutableBytePtr(m), "Jello", 5) == 0);
    RL_ASSERT(CFDataGetMutableBytePtr((CFMutableDataRef)(uintptr_t)data) == NULL); /* not mutable */
    CFDataAppendBytes((CFMutableDataRef)(uintptr_t)data, (const UInt8 *)"x", 1);   /* ignored */
    RL_ASSERT_EQ_INT(CFDataGetLength(data), 3);
    CFMutableDataRef mcopy = CFDataCreateMutableCopy(NULL, 0, data);
    CFDataAppendBytes(mcopy, (const UInt8 *)"d", 1);
    RL_ASSERT(memcmp(CFDataGetBytePtr(mcopy), "abcd", 4) == 0);

    /* No copy: the caller's bytes, freed with the data unless kCFAllocatorNull. */
    static const UInt8 fixed[] = "fixed";
    CFDataRef borrowed = CFDataCreateWithBytesNoCopy(NULL, fixed, 5, kCFAllocatorNull);
    RL_ASSERT(CFDataGetBytePtr(borrowed) == fixed);
    UInt8 *owned = malloc(4);
    memcpy(owned, "mine", 4);
    CFDataRef adopted = CFDataCreateWithBytesNoCopy(NULL, owned, 4, kCFAllocatorDefault);
    RL_ASSERT(CFDataGetBytePtr(adopted) == owned);

    CFRelease(adopted); /* frees owned: valgrind and ASan see a leak otherwise */
    CFRelease(borrowed);
    CFRelease(mcopy);
    CFRelease(m);
    CFRelease(empty);
    CFRelease(copy);
    CFRelease(data);
}

/* ---- allocators and types ------------------------------------------------------------ */

static void allocators(void) {
    RL_ASSERT(CFAllocatorGetDefault() == kCFAllocatorSystemDefault);
    RL_ASSERT(CFGetTypeID(kCFAllocatorSystemDefault) == CFAllocatorGetTypeID());
    CFAllocatorRef allocators[] = {kCFAllocatorDefault, kCFAllocatorSystemDefault, kCFAllocatorMalloc};
    for (size_t i = 0; i < sizeof allocators / sizeof allocators[0]; i++) {
        char *p = CFAllocatorAllocate(allocators[i], 8, 0);
        RL_ASSERT(p != NULL);
        memcpy(p, "1234567", 8);
        p = CFAllocatorReallocate(allocators[i], p, 64, 0);
        RL_ASSERT(p != NULL && strcmp(p, "1234567") == 0);
        CFAllocatorDeallocate(allocators[i], p);
    }
    RL_ASSERT(CFAllocatorAllocate(kCFAllocatorNull, 8, 0) == NULL);
    CFAllocatorDeallocate(kCFAllocatorNull, (void *)kGreeting); /* frees nothing */
    RL_ASSERT(CFAllocatorAllocate(NULL, 0, 0) == NULL);
    RL_ASSERT(CFStringCreateWithCString(kCFAllocatorNull, "x", kCFStringEncodingUTF8) == NULL);
    RL_ASSERT(CFRetain(kCFAllocatorMalloc) == kCFAllocatorMalloc);
    CFRelease(kCFAllocatorMalloc);
    CFRelease(kCFAllocatorMalloc); /* immortal */
    RL_ASSERT(CFGetAllocator(kGreeting) == kCFAllocatorSystemDefault);
    RL_ASSERT_EQ_INT(CFAllocatorGetPreferredSizeForSize(NULL, 100, 0), 100);
    CFAllocatorSetDefault(kCFAllocatorMalloc); /* all of them are malloc: nothing changes */
    RL_ASSERT(CFAllocatorGetDefault() == kCFAllocatorSystemDefault);
}

static void custom_allocators_are_refused(void) {
    CFAllocatorContext context = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    fflush(stderr);
    int saved = dup(2);
    FILE *capture = tmpfile();
    dup2(fileno(capture), 2);
    CFAllocatorRef custom = CFAllocatorCreate(kCFAllocatorDefault, &context);
    CFAllocatorRef bogus = (CFAllocatorRef)(const void *)&context;
    CFStringRef refused = CFStringCreateWithCString(bogus, "x", kCFStringEncodingUTF8);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char said[1024];
    rewind(capture);
    said[fread(said, 1, sizeof said - 1, capture)] = '\0';
    fclose(capture);
    RL_ASSERT(custom == NULL);
    RL_ASSERT(refused == NULL);
    RL_ASSERT(strstr(said, "CFAllocatorCreate: custom allocators are not supported") != NULL);
    RL_ASSERT(strstr(said, "CFStringCreateWithCString") != NULL);
}

static void every_type_has_its_id(void) {
    CFTypeID ids[] = {
        CFAllocatorGetTypeID(),     CFStringGetTypeID(),        CFArrayGetTypeID(),           CFDataGetTypeID(),
        CFRunLoopGetTypeID(),       CFRunLoopSourceGetTypeID(), CFRunLoopObserverGetTypeID(), CFRunLoopTimerGetTypeID(),
        CFFileDescriptorGetTypeID()};
    size_t n = sizeof ids / sizeof ids[0];
    for (size_t i = 0; i < n; i++) {
        RL_ASSERT(ids[i] != 0);
        for (size_t j = 0; j < i; j++) RL_ASSERT(ids[i] != ids[j]);
    }
    RL_ASSERT(CFGetTypeID(NULL) == 0);
    RL_ASSERT_STR_EQ(text(CFCopyTypeIDDescription(CFStringGetTypeID())), "CFString");
    RL_ASSERT_STR_EQ(text(CFCopyTypeIDDescription(CFRunLoopTimerGetTypeID())), "CFRunLoopTimer");
    RL_ASSERT_STR_EQ(text(CFCopyTypeIDDescription(CFFileDescriptorGetTypeID())), "CFFileDescriptor");
    RL_ASSERT(CFCopyTypeIDDescription(0) == NULL);
}

static void objects_of_different_types_differ(void) {
    CFDataRef data = CFDataCreate(NULL, (const UInt8 *)"kCFRunLoopDefaultMode", 21);
    RL_ASSERT(!CFEqual(data, kCFRunLoopDefaultMode));
    RL_ASSERT(!CFEqual(kCFRunLoopDefaultMode, data));
    RL_ASSERT(!CFEqual(NULL, data));
    RL_ASSERT(CFEqual(NULL, NULL));
    RL_ASSERT_EQ_INT(CFHash(NULL), 0);
    RL_ASSERT_EQ_INT(CFGetRetainCount(NULL), 0);
    RL_ASSERT(CFRetain(NULL) == NULL);
    CFRelease(NULL);
    CFRelease(data);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(constant_strings_are_immortal_objects),
        RL_TEST(created_strings_are_counted),
        RL_TEST(encodings_are_checked),
        RL_TEST(compare_and_find),
        RL_TEST(formats),
        RL_TEST(descriptions_and_show),
        RL_TEST(arrays_retain_their_values),
        RL_TEST(arrays_without_callbacks_keep_raw_values),
        RL_TEST(data_objects),
        RL_TEST(allocators),
        RL_TEST(custom_allocators_are_refused),
        RL_TEST(every_type_has_its_id),
        RL_TEST(objects_of_different_types_differ),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
