/*
 * rl_string.c: the string object of CRunLoopCFTypes.h: immutable text in
 * UTF-8, in one of two forms. A made string is an RL object with its text
 * after it. A constant string (RLCFSTR) is a string literal whose first
 * bytes stand where an object's count and class are, the second word
 * marking it constant; its text follows. Every reader goes through
 * rl_cf_string_text, so the two forms behave alike.
 *
 * Lengths and ranges count UTF-16 units, as CF's do: each character counts
 * one, a character of four UTF-8 bytes (outside the BMP) two.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rl_cf.h"

struct __RLCFString {
    rl_object base;
    size_t size;    /* bytes of text, without the NUL */
    RLIndex length; /* UTF-16 units */
    char text[];
};

#define CONSTANT_HEADER_SIZE (sizeof RLCF_CONSTANT_STRING_HEADER - 1)
#define MARK_SIZE            (CONSTANT_HEADER_SIZE / 2)
_Static_assert(CONSTANT_HEADER_SIZE == sizeof(rl_object), "a constant string's header stands where an object's does");
_Static_assert(offsetof(rl_object, cls) == MARK_SIZE, "and its mark where the class is");

static void string_finalize(rl_object *obj) {
    free(obj);
}

static char *string_describe(const rl_object *obj) {
    return rl_cf_string_copy_description((RLCFStringRef)obj);
}

const rl_class rl_cf_string_class = {"RLCFString", string_finalize, string_describe};

bool rl_cf_is_constant_string(const void *cf) {
    static const char header[] = RLCF_CONSTANT_STRING_HEADER;
    return memcmp((const char *)cf + MARK_SIZE, header + MARK_SIZE, MARK_SIZE) == 0;
}

bool rl_cf_is_string(const void *cf) {
    return rl_cf_is_constant_string(cf) || rl_object_is(cf, &rl_cf_string_class);
}

const char *rl_cf_string_text(RLCFStringRef s, size_t *size) {
    if (rl_cf_is_constant_string(s)) {
        const char *text = (const char *)s + CONSTANT_HEADER_SIZE;
        if (size) *size = strlen(text);
        return text;
    }
    if (size) *size = s->size;
    return s->text;
}

/* ---- UTF-8 ---------------------------------------------------------------- */

/* How many bytes the character starting with `lead` takes. A stray
   continuation byte counts as a character of its own, so text that is not
   valid UTF-8 (made by a format's %s) still walks the same way everywhere. */
static size_t char_size(unsigned char lead) {
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    return 4;
}

static RLIndex char_units(unsigned char lead) {
    return lead >= 0xF0 ? 2 : 1;
}

/* The UTF-16 units of the text before byte `end`. */
static RLIndex units_before(const char *text, size_t size, size_t end) {
    RLIndex units = 0;
    for (size_t i = 0; i < end && i < size; i += char_size((unsigned char)text[i]))
        units += char_units((unsigned char)text[i]);
    return units;
}

/* The byte where UTF-16 unit `unit` starts (`size` for the end); SIZE_MAX
   when it is past the end or inside a character. */
static size_t byte_of_unit(const char *text, size_t size, RLIndex unit) {
    RLIndex units = 0;
    size_t i = 0;
    while (units < unit && i < size) {
        units += char_units((unsigned char)text[i]);
        i += char_size((unsigned char)text[i]);
    }
    return units == unit && i <= size ? i : SIZE_MAX;
}

/* The size of the well-formed UTF-8 character at t (left bytes), 0 if
   there is none: no overlong forms, surrogates or values past U+10FFFF. */
static size_t valid_char_size(const unsigned char *t, size_t left) {
    unsigned char lead = t[0], low = 0x80, high = 0xBF;
    if (lead < 0x80) return 1;
    if (lead < 0xC2 || lead > 0xF4) return 0;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
    size_t n = char_size(lead);
    if (left < n || t[1] < low || t[1] > high) return 0;
    for (size_t i = 2; i < n; i++)
        if ((t[i] & 0xC0) != 0x80) return 0;
    return n;
}

static bool supported(RLCFStringEncoding encoding) {
    return encoding == kRLCFStringEncodingUTF8 || encoding == kRLCFStringEncodingASCII;
}

static bool is_ascii(const char *text, size_t size) {
    for (size_t i = 0; i < size; i++)
        if ((unsigned char)text[i] >= 0x80) return false;
    return true;
}

/* Whether the bytes are text in `encoding` (supported) with no NUL. */
static bool valid_text(const char *text, size_t size, RLCFStringEncoding encoding) {
    if (memchr(text, 0, size)) return false;
    if (encoding == kRLCFStringEncodingASCII) return is_ascii(text, size);
    for (size_t i = 0, n; i < size; i += n)
        if ((n = valid_char_size((const unsigned char *)text + i, size - i)) == 0) return false;
    return true;
}

/* ---- making strings ----------------------------------------------------------- */

RLCFStringRef rl_cf_string_make(const char *text, size_t size) {
    if (size > SIZE_MAX - sizeof(struct __RLCFString) - 1) return NULL;
    struct __RLCFString *s = malloc(sizeof *s + size + 1);
    if (!s) return NULL;
    rl_object_init(&s->base, &rl_cf_string_class);
    s->size = size;
    s->length = units_before(text, size, size);
    memcpy(s->text, text, size);
    s->text[size] = '\0';
    return s;
}

RLCFStringRef rl_cf_string_adopt(char *text) {
    if (!text) return NULL;
    RLCFStringRef s = rl_cf_string_make(text, strlen(text));
    free(text);
    return s;
}

void rl_cf_string_release(RLCFStringRef s) {
    if (s && !rl_cf_is_constant_string(s)) RLRelease(s);
}

char *rl_cf_take_text(RLCFStringRef s) {
    if (!s) return NULL;
    char *text = rl_cf_is_string(s) ? strdup(rl_cf_string_text(s, NULL)) : NULL;
    rl_cf_string_release(s);
    return text;
}

RLCFStringRef RLCFStringCreateWithBytes(RLCFAllocatorRef alloc, const uint8_t *bytes, RLIndex numBytes,
                                        RLCFStringEncoding encoding, bool isExternalRepresentation) {
    if (!rl_cf_can_allocate(alloc, "CFStringCreateWithBytes")) return NULL;
    if (numBytes < 0 || (!bytes && numBytes > 0) || !supported(encoding)) return NULL;
    const char *text = (const char *)bytes;
    size_t size = (size_t)numBytes;
    if (isExternalRepresentation && size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        size -= 3;
    }
    if (size && !valid_text(text, size, encoding)) return NULL;
    return rl_cf_string_make(size ? text : "", size);
}

RLCFStringRef RLCFStringCreateWithCString(RLCFAllocatorRef alloc, const char *cStr, RLCFStringEncoding encoding) {
    if (!cStr || !rl_cf_allocator_accepted(alloc, "CFStringCreateWithCString")) return NULL;
    return RLCFStringCreateWithBytes(alloc, (const uint8_t *)cStr, (RLIndex)strlen(cStr), encoding, false);
}

RLCFStringRef RLCFStringCreateCopy(RLCFAllocatorRef alloc, RLCFStringRef theString) {
    if (!rl_cf_can_allocate(alloc, "CFStringCreateCopy") || !theString || !rl_cf_is_string(theString)) return NULL;
    if (!rl_cf_is_constant_string(theString)) RLRetain(theString);
    return theString;
}

RLCFStringRef RLCFStringCreateWithSubstring(RLCFAllocatorRef alloc, RLCFStringRef str, RLCFRange range) {
    if (!rl_cf_can_allocate(alloc, "CFStringCreateWithSubstring") || !str || !rl_cf_is_string(str)) return NULL;
    if (range.location < 0 || range.length < 0 || range.length > RLCFStringGetLength(str) - range.location) return NULL;
    size_t size;
    const char *text = rl_cf_string_text(str, &size);
    size_t start = byte_of_unit(text, size, range.location);
    size_t end = byte_of_unit(text, size, range.location + range.length);
    if (start == SIZE_MAX || end == SIZE_MAX) return NULL;
    return rl_cf_string_make(text + start, end - start);
}

/* ---- reading them ----------------------------------------------------------------- */

RLIndex RLCFStringGetLength(RLCFStringRef theString) {
    if (!theString || !rl_cf_is_string(theString)) return 0;
    if (!rl_cf_is_constant_string(theString)) return theString->length;
    size_t size;
    const char *text = rl_cf_string_text(theString, &size);
    return units_before(text, size, size);
}

const char *RLCFStringGetCStringPtr(RLCFStringRef theString, RLCFStringEncoding encoding) {
    if (!theString || !rl_cf_is_string(theString) || !supported(encoding)) return NULL;
    size_t size;
    const char *text = rl_cf_string_text(theString, &size);
    return encoding == kRLCFStringEncodingUTF8 || is_ascii(text, size) ? text : NULL;
}

bool RLCFStringGetCString(RLCFStringRef theString, char *buffer, RLIndex bufferSize, RLCFStringEncoding encoding) {
    const char *text = RLCFStringGetCStringPtr(theString, encoding);
    if (!text || !buffer || bufferSize <= 0) return false;
    size_t size = strlen(text);
    if ((size_t)bufferSize <= size) return false;
    memcpy(buffer, text, size + 1);
    return true;
}

RLIndex RLCFStringGetMaximumSizeForEncoding(RLIndex length, RLCFStringEncoding encoding) {
    if (length < 0 || !supported(encoding)) return kRLCFNotFound;
    if (encoding == kRLCFStringEncodingASCII) return length;
    return length > LONG_MAX / 3 ? kRLCFNotFound : length * 3;
}

bool rl_cf_string_equal(RLCFStringRef a, RLCFStringRef b) {
    size_t a_size, b_size;
    const char *a_text = rl_cf_string_text(a, &a_size), *b_text = rl_cf_string_text(b, &b_size);
    return a_size == b_size && memcmp(a_text, b_text, a_size) == 0;
}

/* FNV-1a over the text: equal strings, whatever their form, hash alike. */
RLCFHashCode rl_cf_string_hash(RLCFStringRef s) {
    size_t size;
    const char *text = rl_cf_string_text(s, &size);
    uint64_t hash = 14695981039346656037u;
    for (size_t i = 0; i < size; i++) hash = (hash ^ (unsigned char)text[i]) * 1099511628211u;
    return (RLCFHashCode)hash;
}

char *rl_cf_string_copy_description(RLCFStringRef s) {
    return rl_strdup_printf("<CFString %p>{contents = \"%s\"}", (const void *)s, rl_cf_string_text(s, NULL));
}

/* ---- comparing and finding ----------------------------------------------------------- */

static unsigned char folded(unsigned char c, bool fold_case) {
    return fold_case && c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* Compares the runs of digits at *a and *b as numbers (leading zeros do not
   count) and moves both past them. */
static int compare_numbers(const unsigned char *a, size_t a_size, size_t *i, const unsigned char *b, size_t b_size,
                           size_t *j) {
    while (*i < a_size && a[*i] == '0') (*i)++;
    while (*j < b_size && b[*j] == '0') (*j)++;
    size_t a_start = *i, b_start = *j;
    while (*i < a_size && is_digit(a[*i])) (*i)++;
    while (*j < b_size && is_digit(b[*j])) (*j)++;
    size_t a_digits = *i - a_start, b_digits = *j - b_start;
    if (a_digits != b_digits) return a_digits < b_digits ? -1 : 1;
    int order = memcmp(a + a_start, b + b_start, a_digits);
    return order < 0 ? -1 : order > 0;
}

RLCFComparisonResult RLCFStringCompare(RLCFStringRef theString1, RLCFStringRef theString2,
                                       RLCFStringCompareFlags compareOptions) {
    if (theString1 == theString2) return kRLCFCompareEqualTo;
    if (!theString1) return kRLCFCompareLessThan;
    if (!theString2) return kRLCFCompareGreaterThan;
    size_t a_size, b_size;
    const unsigned char *a = (const unsigned char *)rl_cf_string_text(theString1, &a_size);
    const unsigned char *b = (const unsigned char *)rl_cf_string_text(theString2, &b_size);
    bool fold_case = compareOptions & kRLCFCompareCaseInsensitive;
    bool numbers = compareOptions & kRLCFCompareNumerically;
    size_t i = 0, j = 0;
    while (i < a_size && j < b_size) {
        if (numbers && is_digit(a[i]) && is_digit(b[j])) {
            int order = compare_numbers(a, a_size, &i, b, b_size, &j);
            if (order) return order;
            continue;
        }
        unsigned char ca = folded(a[i++], fold_case), cb = folded(b[j++], fold_case);
        if (ca != cb) return ca < cb ? kRLCFCompareLessThan : kRLCFCompareGreaterThan;
    }
    if (i < a_size) return kRLCFCompareGreaterThan;
    return j < b_size ? kRLCFCompareLessThan : kRLCFCompareEqualTo;
}

static bool matches_at(const char *text, const char *find, size_t size, bool fold_case) {
    for (size_t i = 0; i < size; i++)
        if (folded((unsigned char)text[i], fold_case) != folded((unsigned char)find[i], fold_case)) return false;
    return true;
}

RLCFRange RLCFStringFind(RLCFStringRef theString, RLCFStringRef stringToFind, RLCFStringCompareFlags compareOptions) {
    RLCFRange none = {kRLCFNotFound, 0};
    if (!theString || !stringToFind || !rl_cf_is_string(theString) || !rl_cf_is_string(stringToFind)) return none;
    size_t size, find_size;
    const char *text = rl_cf_string_text(theString, &size), *find = rl_cf_string_text(stringToFind, &find_size);
    if (find_size == 0 || find_size > size) return none;
    bool fold_case = compareOptions & kRLCFCompareCaseInsensitive;
    bool backwards = compareOptions & kRLCFCompareBackwards;
    size_t last = size - find_size, first = 0;
    if (compareOptions & kRLCFCompareAnchored) {
        if (backwards) first = last;
        else last = first;
    }
    for (size_t k = 0; k <= last - first; k++) {
        size_t at = backwards ? last - k : first + k;
        if (matches_at(text + at, find, find_size, fold_case))
            return (RLCFRange){units_before(text, size, at), units_before(find, find_size, find_size)};
    }
    return none;
}

bool RLCFStringHasPrefix(RLCFStringRef theString, RLCFStringRef prefix) {
    return RLCFStringFind(theString, prefix, kRLCFCompareAnchored).location != kRLCFNotFound;
}

bool RLCFStringHasSuffix(RLCFStringRef theString, RLCFStringRef suffix) {
    return RLCFStringFind(theString, suffix, kRLCFCompareAnchored | kRLCFCompareBackwards).location != kRLCFNotFound;
}
