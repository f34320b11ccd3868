/* test_probes.c: the library's USDT probes (provider "crunloop",
   docs/PROBES.md). Invariants checked: every probe is in the ELF notes of a
   program linked with the library (here this test itself, linked with the
   static library: /proc/self/exe), with the argument count documented; and,
   where the machine lets bpftrace attach (root, a kernel with uprobes), each
   probe fires when a scripted run passes its point. Built without
   <sys/sdt.h> (or with RL_NO_PROBES) there are no probes: the test says so
   and checks that none are there. */
#include <CRunLoop.h>
#include "rltest.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>

#if !defined(RL_NO_PROBES) && defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define BUILT_WITH_PROBES 1
#endif
#endif

static const struct {
    const char *name;
    int args;
} probes[] = {
    {"pass_begin", 3},  {"pass_end", 2},   {"sleep", 2},         {"wake", 3},        {"callout_begin", 4},
    {"callout_end", 4}, {"timer_fire", 4}, {"source_signal", 2}, {"wakeup_send", 2},
};
#define PROBE_COUNT (sizeof probes / sizeof *probes)

/* ---- the ELF notes ---------------------------------------------------------- */

typedef struct {
    int found[PROBE_COUNT];
    int args[PROBE_COUNT]; /* of the last one found */
    int others;            /* crunloop probes not in the table */
} note_census;

static int probe_index(const char *name) {
    for (size_t i = 0; i < PROBE_COUNT; i++)
        if (strcmp(probes[i].name, name) == 0) return (int)i;
    return -1;
}

/* An argument string is space-separated specs ("8@%rdi -4@$1"). */
static int count_args(const char *spec) {
    int n = 0;
    for (const char *p = spec; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        n++;
        while (*p && *p != ' ') p++;
    }
    return n;
}

/* One NT_STAPSDT note's descriptor: three addresses (the probe, the base,
   the semaphore), then provider, name and arguments, each NUL-terminated. */
static void census_note(note_census *c, const char *desc, size_t size) {
    size_t at = 3 * sizeof(Elf64_Addr);
    if (size <= at) return;
    const char *provider = desc + at;
    const char *end = desc + size;
    const char *name = memchr(provider, 0, (size_t)(end - provider));
    if (!name || ++name >= end) return;
    const char *args = memchr(name, 0, (size_t)(end - name));
    if (!args || ++args > end) return;
    if (strcmp(provider, "crunloop") != 0) return;
    int i = probe_index(name);
    if (i < 0) {
        c->others++;
        return;
    }
    c->found[i]++;
    c->args[i] = args < end ? count_args(args) : 0;
}

static void census_section(note_census *c, const unsigned char *data, size_t size) {
    for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= size;) {
        const Elf64_Nhdr *h = (const void *)(data + at);
        size_t name_at = at + sizeof *h;
        size_t desc_at = name_at + ((h->n_namesz + 3) & ~3u);
        size_t next = desc_at + ((h->n_descsz + 3) & ~3u);
        if (next > size) return;
        if (h->n_type == 3 && h->n_namesz == 8 && memcmp(data + name_at, "stapsdt", 8) == 0)
            census_note(c, (const char *)data + desc_at, h->n_descsz);
        at = next;
    }
}

static note_census census_of_this_program(void) {
    note_census c = {{0}, {0}, 0};
    int fd = open("/proc/self/exe", O_RDONLY);
    RL_ASSERT(fd >= 0);
    struct stat st;
    RL_ASSERT(fstat(fd, &st) == 0);
    unsigned char *file = malloc((size_t)st.st_size);
    RL_ASSERT(file != NULL);
    RL_ASSERT(pread(fd, file, (size_t)st.st_size, 0) == st.st_size);
    close(fd);
    const Elf64_Ehdr *eh = (const void *)file;
    RL_ASSERT(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64);
    const Elf64_Shdr *sh = (const void *)(file + eh->e_shoff);
    const char *names = (const char *)file + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_NOTE && strcmp(names + sh[i].sh_name, ".note.stapsdt") == 0)
            census_section(&c, file + sh[i].sh_offset, sh[i].sh_size);
    free(file);
    return c;
}

static void every_probe_is_in_the_elf_notes(void) {
    note_census c = census_of_this_program();
#ifdef BUILT_WITH_PROBES
    for (size_t i = 0; i < PROBE_COUNT; i++) {
        if (!c.found[i]) RL_FAIL_("probe crunloop:%s is not in the ELF notes", probes[i].name);
        RL_ASSERT_EQ_INT(c.args[i], probes[i].args);
    }
    RL_ASSERT_EQ_INT(c.others, 0);
#else
    printf("  (skipped: built without <sys/sdt.h>; checked that no probe is there)\n");
    for (size_t i = 0; i < PROBE_COUNT; i++) RL_ASSERT_EQ_INT(c.found[i], 0);
#endif
}

/* ---- the probes fire (bpftrace) --------------------------------------------- */

#ifdef BUILT_WITH_PROBES
static bool bpftrace_path(char *out, size_t size) {
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, size, "%.*s/bpftrace", (int)n, p);
        if (access(out, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
}

static bool under_valgrind(void) {
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "valgrind") != NULL;
}

/* Reads the child's output into buf until `needle` shows or the pipe closes
   or `seconds` pass; returns whether the needle was seen. */
static bool read_until(int fd, char *buf, size_t size, size_t *len, const char *needle, double seconds) {
    double end = rl_test_now() + seconds;
    while (!strstr(buf, needle)) {
        int left_ms = (int)((end - rl_test_now()) * 1000);
        if (left_ms <= 0) return false;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, left_ms) <= 0) continue;
        ssize_t n = read(fd, buf + *len, size - 1 - *len);
        if (n <= 0) return false;
        *len += (size_t)n;
        buf[*len] = 0;
    }
    return true;
}

static pid_t start_bpftrace(const char *bpftrace, int *out_fd) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    RL_ASSERT(n > 0);
    exe[n] = 0;
    char script[PATH_MAX + 256];
    snprintf(script, sizeof script,
             "BEGIN { printf(\"attached\\n\"); } usdt:%s:crunloop:* { printf(\"fired %%s\\n\", probe); }", exe);
    int out[2];
    RL_ASSERT(pipe(out) == 0);
    pid_t child = fork();
    RL_ASSERT(child >= 0);
    if (child == 0) {
        dup2(out[1], 1);
        dup2(out[1], 2);
        close(out[0]);
        close(out[1]);
        /* By the file, not -p: this bpftrace finds no probes in a process
           given by pid inside a container. */
        execl(bpftrace, "bpftrace", "-e", script, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    *out_fd = out[0];
    return child;
}

static void *stop_when_sleeping(void *arg) {
    RLRunLoopRef rl = arg;
    rl_test_wait_sleeping(rl, 10);
    RLRunLoopStop(rl);
    RLRunLoopWakeUp(rl);
    return NULL;
}

/* Passes every probe's point: passes, a sleep ended by a wake-up sent from
   another thread, a queued function, a signalled source, a timer. */
static void run_every_probe_point(void) {
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopSourceRef s = rl_test_source0(0, rl_test_count_perform, NULL);
    RLRunLoopAddSource(rl, s, kRLRunLoopDefaultMode);
    RLRunLoopSourceSignal(s);
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_nothing, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
    pthread_t th;
    pthread_create(&th, NULL, stop_when_sleeping, rl);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    pthread_join(th, NULL);
    RLRunLoopTimerRef t = rl_test_add_timer(rl, kRLRunLoopDefaultMode, 0.01, 0, rl_test_stop_current, NULL);
    RLRunLoopRunInMode(kRLRunLoopDefaultMode, 10, false);
    RLRelease(t);
    RLRunLoopSourceInvalidate(s);
    RLRelease(s);
}

/* Whether bpftrace has printed every probe's name. */
static bool all_fired(const char *out) {
    for (size_t i = 0; i < PROBE_COUNT; i++) {
        char line[64];
        snprintf(line, sizeof line, ":crunloop:%s\n", probes[i].name);
        if (!strstr(out, line)) return false;
    }
    return true;
}

#endif

static void every_probe_fires(void) {
#ifndef BUILT_WITH_PROBES
    printf("  (skipped: built without <sys/sdt.h>, there are no probes to fire)\n");
    return;
#else
    char bpftrace[PATH_MAX];
    if (!bpftrace_path(bpftrace, sizeof bpftrace)) {
        printf("  (skipped: no bpftrace on PATH to attach to the probes; the Debian package bpftrace)\n");
        return;
    }
    if (geteuid() != 0) {
        printf("  (skipped: attaching bpftrace needs root)\n");
        return;
    }
    if (under_valgrind()) {
        printf("  (skipped: under valgrind the probes' code is not what runs)\n");
        return;
    }
    int fd;
    pid_t child = start_bpftrace(bpftrace, &fd);
    static char out[1 << 16];
    size_t len = 0;
    out[0] = 0;
    bool attached = read_until(fd, out, sizeof out, &len, "attached\n", 20);
    /* The probes go live a little after BEGIN: poll until one is seen. */
    RLRunLoopRef rl = RLRunLoopGetCurrent();
    RLRunLoopPerformFunction(rl, kRLRunLoopDefaultMode, rl_test_nothing, NULL);
    for (int i = 0; attached && i < 2000 && !strstr(out, "fired "); i++) {
        RLRunLoopRunInMode(kRLRunLoopDefaultMode, 0, false);
        read_until(fd, out, sizeof out, &len, "fired ", 0.01);
    }
    if (!strstr(out, "fired ")) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        char *error = strstr(out, "ERROR");
        printf("  (skipped: bpftrace could not attach to the probes here: %.200s)\n", error ? error : out);
        return;
    }
    run_every_probe_point();
    double end = rl_test_now() + 20;
    while (!all_fired(out) && rl_test_now() < end) read_until(fd, out, sizeof out, &len, "\n\n", 0.05);
    kill(child, SIGKILL); /* no need to wait for it to detach */
    waitpid(child, NULL, 0);
    close(fd);
    for (size_t i = 0; i < PROBE_COUNT; i++) {
        char line[64];
        snprintf(line, sizeof line, ":crunloop:%s\n", probes[i].name);
        if (!strstr(out, line)) RL_FAIL_("crunloop:%s did not fire; bpftrace said:\n%s", probes[i].name, out);
    }
#endif
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(every_probe_is_in_the_elf_notes),
        RL_TEST(every_probe_fires),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
