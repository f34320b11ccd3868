/* test_callout_names.c: every kind of callout shows up in a backtrace as its
   named RL_IS_CALLING_OUT_TO_* frame (CF's __CFRUNLOOP_IS_CALLING_OUT_TO_*__).
   Invariant checked: inside an observer, timer, version-0 source, version-1
   source and queued-function callout (and inside perform requests, immediate
   and delayed), one return address of the backtrace lies inside the matching
   callout function, and inside no other callout function.

   The executable is linked with the static library and not with -rdynamic, so
   backtrace_symbols() cannot name its frames. Instead each callout function's
   address range is taken from the executable's own ELF symbol table
   (/proc/self/exe, .symtab: start and size), shifted by the load address
   (known from &function), and each frame's return address is looked up. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <CRunLoop.h>
#include "rltest.h"
#include "../../../Sources/CRunLoop/core/rl_callout.h" /* the callouts: global, not public */

#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>

enum { OBSERVER, TIMER, SOURCE0, SOURCE1, BLOCK, KINDS };

static struct {
    const char *name;
    uintptr_t address; /* the function as linked (run-time address) */
    uintptr_t start, end;
} callouts[KINDS] = {
    [OBSERVER] = {"RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION", 0, 0, 0},
    [TIMER] = {"RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION", 0, 0, 0},
    [SOURCE0] = {"RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION", 0, 0, 0},
    [SOURCE1] = {"RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION", 0, 0, 0},
    [BLOCK] = {"RL_IS_CALLING_OUT_TO_A_BLOCK", 0, 0, 0},
};

/* Fills callouts[].start/end from /proc/self/exe's .symtab. Returns how many
   it found. */
static int load_callout_ranges(void) {
    callouts[OBSERVER].address = (uintptr_t)&RL_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION;
    callouts[TIMER].address = (uintptr_t)&RL_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION;
    callouts[SOURCE0].address = (uintptr_t)&RL_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION;
    callouts[SOURCE1].address = (uintptr_t)&RL_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION;
    callouts[BLOCK].address = (uintptr_t)&RL_IS_CALLING_OUT_TO_A_BLOCK;

    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    RL_ASSERT(fd >= 0);
    struct stat st;
    RL_ASSERT(fstat(fd, &st) == 0);
    const unsigned char *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    RL_ASSERT(file != MAP_FAILED);
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)file;
    RL_ASSERT(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(file + eh->e_shoff);
    int found = 0;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB) continue;
        const ElfW(Sym) *syms = (const ElfW(Sym) *)(file + sh[i].sh_offset);
        size_t count = sh[i].sh_size / sizeof(ElfW(Sym));
        const char *strtab = (const char *)(file + sh[sh[i].sh_link].sh_offset);
        for (size_t k = 0; k < count; k++) {
            if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || syms[k].st_value == 0) continue;
            const char *name = strtab + syms[k].st_name;
            for (int c = 0; c < KINDS; c++) {
                if (strcmp(name, callouts[c].name) != 0 || callouts[c].start) continue;
                /* Run-time start is &function; the load bias is the difference. */
                callouts[c].start = callouts[c].address;
                callouts[c].end = callouts[c].address + (syms[k].st_size ? syms[k].st_size : 1);
                found++;
            }
        }
    }
    munmap((void *)file, (size_t)st.st_size);
    return found;
}

/* Which callouts the current backtrace passes through (a bit per kind). */
static unsigned callouts_on_stack(void) {
    void *frames[64];
    int n = backtrace(frames, 64);
    unsigned seen = 0;
    for (int i = 0; i < n; i++) {
        /* A return address points just past the call: look at the byte before. */
        uintptr_t pc = (uintptr_t)frames[i] - 1;
        for (int c = 0; c < KINDS; c++)
            if (pc >= callouts[c].start && pc < callouts[c].end) seen |= 1u << c;
    }
    return seen;
}

static unsigned g_seen[KINDS + 2];
static atomic_int g_hits[KINDS + 2];

static void note(int slot) {
    g_seen[slot] |= callouts_on_stack();
    atomic_fetch_add(&g_hits[slot], 1);
}

static void observer_cb(RLRunLoopObserverRef o, RLRunLoopActivity a, void *info) {
    (void)o;
    (void)a;
    (void)info;
    note(OBSERVER);
}
static bool every_other_callout_ran(void);
/* Repeats until every other callout ran once: a pass handles one wake-up
   source, so on a slow machine (valgrind) the timers may be due in the very
   first pass, before the descriptor's turn. */
static void timer_cb(RLRunLoopTimerRef t, void *info) {
    (void)t;
    (void)info;
    note(TIMER);
    if (every_other_callout_ran()) RLRunLoopStop(RLRunLoopGetCurrent());
}
static void source0_cb(void *info) {
    (void)info;
    note(SOURCE0);
}
static int g_efd = -1;
static int efd_get(void *info) {
    (void)info;
    return g_efd;
}
static void source1_cb(void *info) {
    (void)info;
    uint64_t v;
    if (read(g_efd, &v, sizeof v) < 0) {}
    note(SOURCE1);
}
static void block_cb(void *info) {
    (void)info;
    note(BLOCK);
}
static void request_cb(void *info) {
    note((int)(intptr_t)info);
}

static bool every_other_callout_ran(void) {
    for (int slot = 0; slot < KINDS + 2; slot++)
        if (slot != TIMER && atomic_load(&g_hits[slot]) == 0) return false;
    return true;
}

static void expect_only(int slot, int kind) {
    if (atomic_load(&g_hits[slot]) == 0) RL_FAIL_("callout for %s never ran", callouts[kind].name);
    if (!(g_seen[slot] & (1u << kind)))
        RL_FAIL_("no %s frame in the backtrace (seen mask %#x)", callouts[kind].name, g_seen[slot]);
    if (g_seen[slot] != (1u << kind))
        RL_FAIL_("other callout frames besides %s (seen mask %#x)", callouts[kind].name, g_seen[slot]);
}

static void every_callout_kind_has_its_named_frame(void) {
    int found = load_callout_ranges();
    RL_ASSERT_EQ_INT(found, KINDS);
    for (int c = 0; c < KINDS; c++) RL_ASSERT(callouts[c].end > callouts[c].start);

    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopObserverRef obs = RLRunLoopObserverCreate(kRLRunLoopBeforeTimers, false, 0, observer_cb, NULL);
    RLRunLoopAddObserver(rl, obs, kRLRunLoopDefaultMode);
    RLRunLoopSourceRef s0 = rl_test_source0(0, source0_cb, NULL);
    RLRunLoopAddSource(rl, s0, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s0);
    g_efd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC); /* readable at once */
    RL_ASSERT(g_efd >= 0);
    RLRunLoopSourceRef s1 = rl_test_source1(0, efd_get, source1_cb, NULL);
    RLRunLoopAddSource(rl, s1, kRLRunLoopDefaultMode);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, block_cb, NULL);
    RLPerformRequestStatus st =
        RLRunLoopPerformRequest(rl, NULL, 0, NULL, request_cb, (void *)(intptr_t)KINDS, NULL, false, 0);
    RL_ASSERT_EQ_INT(st, kRLPerformRequestPending);
    RLPerformRequestRelease(
        RLRunLoopPerformRequestAfterDelay(rl, 0.01, NULL, 0, NULL, request_cb, (void *)(intptr_t)(KINDS + 1), NULL));
    /* The timer stops the run once everything else ran. */
    RLRunLoopTimerRef timer = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.05, 0.01, timer_cb, NULL);
    RL_ASSERT_EQ_INT(RLRunLoopRunInMode(kRLRunLoopDefaultMode, 5, false), kRLRunLoopRunStopped);

    expect_only(OBSERVER, OBSERVER);
    expect_only(TIMER, TIMER);
    expect_only(SOURCE0, SOURCE0);
    expect_only(SOURCE1, SOURCE1);
    expect_only(BLOCK, BLOCK);
    expect_only(KINDS, BLOCK);     /* an immediate perform request runs as a queued function */
    expect_only(KINDS + 1, TIMER); /* a delayed one as a timer */

    RLRunLoopSourceInvalidate(s0);
    RLRunLoopSourceInvalidate(s1);
    RLRelease(s0);
    RLRelease(s1);
    RLRelease(obs);
    RLRunLoopTimerInvalidate(timer);
    RLRelease(timer);
    close(g_efd);
}

/* backtrace_symbols names the frames when the symbols are dynamic (a program
   linked with -rdynamic or the shared library): then the text must carry the
   name. Here the static library is not exported, so only check that whatever
   name it prints for our frame is the right one. */
static char *g_symbol;
static void symbol_cb(void *info) {
    (void)info;
    void *frames[64];
    int n = backtrace(frames, 64);
    char **names = backtrace_symbols(frames, n);
    for (int i = 0; names && i < n; i++) {
        uintptr_t pc = (uintptr_t)frames[i] - 1;
        if (pc >= callouts[BLOCK].start && pc < callouts[BLOCK].end) g_symbol = strdup(names[i]);
    }
    free(names);
}

static void backtrace_symbols_agrees_when_it_names_the_frame(void) {
    RL_ASSERT_EQ_INT(load_callout_ranges(), KINDS);
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, symbol_cb, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    RL_ASSERT(g_symbol != NULL);
    if (strchr(g_symbol, '(') && !strstr(g_symbol, "(+")) /* "exe(name+off)" rather than "exe(+off)" */
        RL_ASSERT(strstr(g_symbol, "RL_IS_CALLING_OUT_TO_A_BLOCK") != NULL);
    free(g_symbol);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(every_callout_kind_has_its_named_frame),
        RL_TEST(backtrace_symbols_agrees_when_it_names_the_frame),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
