/*
 * rl_cf_format.c: RLCFStringCreateWithFormat, printf's formats plus CF's %@.
 * Each conversion is handed to the C library's printf on its own, with its
 * argument fetched here by the type its length and conversion name (a
 * `*` width or precision is fetched too and written into the conversion),
 * so the C library does every printf format exactly; %@ becomes %s over the
 * object's text.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "rl_cf.h"

/* What %@ prints: a string's own text, another object's description. */
static char *format_text(const void *obj) {
    if (!obj) return strdup("(null)");
    if (rl_cf_is_string(obj)) return strdup(rl_cf_string_text(obj, NULL));
    return RLCopyDescription(obj);
}

typedef enum { LENGTH_NONE, LENGTH_HH, LENGTH_H, LENGTH_L, LENGTH_LL, LENGTH_J, LENGTH_Z, LENGTH_T, LENGTH_LD } length;

/* One conversion being read: its text for printf, so far. */
typedef struct {
    char text[64];
    size_t size;
    bool overflow;
    bool out_of_memory; /* an object's text could not be made */
} conversion;

static void add(conversion *c, const char *text, size_t size) {
    if (c->size + size >= sizeof c->text) {
        c->overflow = true;
        return;
    }
    memcpy(c->text + c->size, text, size);
    c->size += size;
    c->text[c->size] = '\0';
}

/* A `*` width or precision: its argument, written as digits. */
static void add_star(conversion *c, va_list *ap, bool precision) {
    int value = va_arg(*ap, int);
    char digits[16];
    if (precision && value < 0) { /* printf: as if no precision was given */
        c->size--;
        c->text[c->size] = '\0';
        return;
    }
    add(c, digits, (size_t)snprintf(digits, sizeof digits, "%d", value));
}

static const char *read_digits(conversion *c, const char *p) {
    const char *start = p;
    while (*p >= '0' && *p <= '9') p++;
    add(c, start, (size_t)(p - start));
    return p;
}

static const char *read_length(conversion *c, const char *p, length *len) {
    static const struct {
        const char *written, *for_printf;
        length len;
    } lengths[] = {{"hh", "hh", LENGTH_HH}, {"ll", "ll", LENGTH_LL}, {"h", "h", LENGTH_H},
                   {"l", "l", LENGTH_L},    {"q", "ll", LENGTH_LL},  {"j", "j", LENGTH_J},
                   {"z", "z", LENGTH_Z},    {"t", "t", LENGTH_T},    {"L", "L", LENGTH_LD}};
    *len = LENGTH_NONE;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        size_t n = strlen(lengths[i].written);
        if (strncmp(p, lengths[i].written, n) != 0) continue;
        add(c, lengths[i].for_printf, strlen(lengths[i].for_printf));
        *len = lengths[i].len;
        return p + n;
    }
    return p;
}

static void print_signed(FILE *out, const char *conv, length len, va_list *ap) {
    switch (len) {
    case LENGTH_HH:
    case LENGTH_H:
    case LENGTH_NONE: fprintf(out, conv, va_arg(*ap, int)); break;
    case LENGTH_L: fprintf(out, conv, va_arg(*ap, long)); break;
    case LENGTH_J: fprintf(out, conv, va_arg(*ap, intmax_t)); break;
    case LENGTH_Z: fprintf(out, conv, va_arg(*ap, ssize_t)); break;
    case LENGTH_T: fprintf(out, conv, va_arg(*ap, ptrdiff_t)); break;
    default: fprintf(out, conv, va_arg(*ap, long long)); break;
    }
}

static void print_unsigned(FILE *out, const char *conv, length len, va_list *ap) {
    switch (len) {
    case LENGTH_HH:
    case LENGTH_H:
    case LENGTH_NONE: fprintf(out, conv, va_arg(*ap, unsigned)); break;
    case LENGTH_L: fprintf(out, conv, va_arg(*ap, unsigned long)); break;
    case LENGTH_J: fprintf(out, conv, va_arg(*ap, uintmax_t)); break;
    case LENGTH_Z: fprintf(out, conv, va_arg(*ap, size_t)); break;
    case LENGTH_T: fprintf(out, conv, va_arg(*ap, ptrdiff_t)); break;
    default: fprintf(out, conv, va_arg(*ap, unsigned long long)); break;
    }
}

/* Prints conversion c ending in `kind`, fetching its argument; false for a
   kind this does not know (nothing fetched). */
static bool print_conversion(FILE *out, conversion *c, char kind, length len, va_list *ap) {
    char text[2] = {kind == '@' ? 's' : kind, '\0'};
    add(c, text, 1);
    if (c->overflow) return false;
    switch (kind) {
    case 'd':
    case 'i': print_signed(out, c->text, len, ap); return true;
    case 'u':
    case 'o':
    case 'x':
    case 'X': print_unsigned(out, c->text, len, ap); return true;
    case 'c':
        if (len == LENGTH_L) fprintf(out, c->text, va_arg(*ap, wint_t));
        else fprintf(out, c->text, va_arg(*ap, int));
        return true;
    case 's':
        if (len == LENGTH_L) fprintf(out, c->text, va_arg(*ap, const wchar_t *));
        else fprintf(out, c->text, va_arg(*ap, const char *));
        return true;
    case 'p': fprintf(out, c->text, va_arg(*ap, void *)); return true;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
        if (len == LENGTH_LD) fprintf(out, c->text, va_arg(*ap, long double));
        else fprintf(out, c->text, va_arg(*ap, double));
        return true;
    case 'n': (void)va_arg(*ap, void *); return true; /* counts nothing */
    case '@': {
        char *obj_text = format_text(va_arg(*ap, const void *));
        c->out_of_memory = !obj_text;
        if (obj_text) fprintf(out, c->text, obj_text);
        free(obj_text);
        return true;
    }
    default: return false;
    }
}

/* Prints the conversion at `p` (on its '%'); returns where the text goes on.
   *failed is set out of memory. */
static const char *print_one(FILE *out, const char *p, va_list *ap, bool *failed) {
    const char *start = p++;
    if (*p == '%') {
        fputc('%', out);
        return p + 1;
    }
    conversion c = {.size = 0};
    add(&c, "%", 1);
    const char *digits = p;
    while (*digits >= '0' && *digits <= '9') digits++;
    bool positional = *digits == '$' && digits > p;
    while (!positional && *p && strchr("-+ #0'", *p)) add(&c, p++, 1);
    if (*p == '*') {
        add_star(&c, ap, false);
        p++;
    } else p = read_digits(&c, p);
    if (*p == '.') {
        add(&c, p++, 1);
        if (*p == '*') {
            add_star(&c, ap, true);
            p++;
        } else p = read_digits(&c, p);
    }
    length len;
    p = read_length(&c, p, &len);
    if (!positional && *p && print_conversion(out, &c, *p, len, ap)) {
        *failed |= c.out_of_memory;
        return p + 1;
    }
    /* Not understood: written as it was, up to its last character. */
    const char *end = *p ? p + 1 : p;
    fwrite(start, 1, (size_t)(end - start), out);
    return end;
}

RLCFStringRef RLCFStringCreateWithFormatAndArguments(RLCFAllocatorRef alloc, RLCFDictionaryRef formatOptions,
                                                     RLCFStringRef format, va_list arguments) {
    (void)formatOptions;
    if (!rl_cf_can_allocate(alloc, "CFStringCreateWithFormat") || !format || !rl_cf_is_string(format)) return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    if (!out) return NULL;
    va_list ap;
    va_copy(ap, arguments);
    bool failed = false;
    for (const char *p = rl_cf_string_text(format, NULL); *p;) {
        if (*p == '%') {
            p = print_one(out, p, &ap, &failed);
            continue;
        }
        size_t run = strcspn(p, "%");
        fwrite(p, 1, run, out);
        p += run;
    }
    va_end(ap);
    failed |= ferror(out) != 0;
    if (fclose(out) != 0 || failed) {
        free(text);
        return NULL;
    }
    return rl_cf_string_adopt(text);
}

RLCFStringRef RLCFStringCreateWithFormat(RLCFAllocatorRef alloc, RLCFDictionaryRef formatOptions, RLCFStringRef format,
                                         ...) {
    va_list ap;
    va_start(ap, format);
    RLCFStringRef s = RLCFStringCreateWithFormatAndArguments(alloc, formatOptions, format, ap);
    va_end(ap);
    return s;
}
