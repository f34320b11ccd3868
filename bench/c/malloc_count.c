/*
 * malloc_count.c: an LD_PRELOAD interposer that counts allocation calls
 * (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc).
 * Programs read the count through bench_malloc_count(), found with dlsym.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);

static unsigned long long count;
#define COUNT() __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED)

long long bench_malloc_count(void);
long long bench_malloc_count(void) {
    return (long long)__atomic_load_n(&count, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
    COUNT();
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    COUNT();
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    COUNT();
    return __libc_realloc(p, n);
}
void free(void *p) {
    __libc_free(p);
}
void *memalign(size_t al, size_t n) {
    COUNT();
    return __libc_memalign(al, n);
}
void *aligned_alloc(size_t al, size_t n) {
    COUNT();
    return __libc_memalign(al, n);
}
void *valloc(size_t n) {
    COUNT();
    return __libc_valloc(n);
}
int posix_memalign(void **out, size_t al, size_t n) {
    COUNT();
    if (al < sizeof(void *) || (al & (al - 1))) return EINVAL;
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
