/* test_fuzz_corpus.c: replays the fuzz target (Tests/fuzz/fuzz_runloop.c)
   without libFuzzer, so `make test` checks its model under every sanitizer
   and valgrind: every file of Tests/fuzz/corpus (the inputs kept from fuzz
   runs, including any that once found a bug), then a fixed set of
   pseudo-random inputs. Run from the repository root. */
#include <CRunLoop.h>
#include "rltest.h"

#include <dirent.h>
#include "../../fuzz/fuzz_runloop.c"

#define CORPUS_DIR "Tests/fuzz/corpus"

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    RL_ASSERT(f != NULL);
    uint8_t *buf = malloc(1 << 16);
    RL_ASSERT(buf != NULL);
    size_t n = fread(buf, 1, 1 << 16, f);
    fclose(f);
    /* An exact-size copy, so ASan sees reads past the end. */
    uint8_t *exact = malloc(n ? n : 1);
    RL_ASSERT(exact != NULL);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
}

/* Replays the corpus files whose name starts with `prefix` (or does not,
   when `invert`), each in its own child process so that one broken
   invariant does not hide the others; fails naming every failing file. */
static void replay_corpus(const char *prefix, int invert) {
    DIR *d = opendir(CORPUS_DIR);
    RL_ASSERT(d != NULL);
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if ((strncmp(e->d_name, prefix, strlen(prefix)) == 0) == invert) continue;
        names = realloc(names, (count + 1) * sizeof *names);
        RL_ASSERT(names != NULL);
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    RL_ASSERT(count > 0);
    qsort(names, count, sizeof *names, by_name);
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", CORPUS_DIR, names[i]);
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        RL_ASSERT(pid >= 0);
        if (pid == 0) {
            for (size_t j = i; j < count; j++) free(names[j]); /* no leak for valgrind to see */
            free(names);
            replay_file(path);
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "  %s: broke an invariant or crashed\n", path);
            failed++;
        }
        free(names[i]);
    }
    free(names);
    printf("  replayed %zu corpus inputs, %d failed\n", count, failed);
    RL_ASSERT_EQ_INT(failed, 0);
}

/* Inputs that once found a bug (named bug-*): regressions. */
static void corpus_bug_regressions_replay_clean(void) {
    replay_corpus("bug-", 0);
}
/* The rest: inputs kept from fuzz runs for their coverage. */
static void corpus_coverage_inputs_replay_clean(void) {
    replay_corpus("bug-", 1);
}

/* Pseudo-random inputs of growing length, the same every run. */
static void generated_inputs_replay_clean(void) {
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    long n = rl_test_scaled(300);
    uint8_t buf[512];
    for (long i = 0; i < n; i++) {
        size_t len = (size_t)(16 + (i * 7) % 480);
        for (size_t j = 0; j < len; j++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[j] = (uint8_t)x;
        }
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("  %ld inputs: %ld ops, %ld runs (finished %ld, stopped %ld, timed out %ld, handled %ld), "
           "%ld performs, %ld timer fires, %ld observer calls, %ld functions; %ld moves to a second loop, "
           "%ld passes of it, %ld callouts there\n",
           fz_stats.inputs, fz_stats.ops, fz_stats.runs, fz_stats.results[1], fz_stats.results[2], fz_stats.results[3],
           fz_stats.results[4], fz_stats.performs, fz_stats.fires, fz_stats.observed, fz_stats.work_ran,
           fz_stats.b_moves, fz_stats.b_passes, fz_stats.b_callouts);
}

/* Pseudo-random inputs leaning on the second loop: many (op, argument) pairs
   that move items between the loops or run a pass of the second one, among
   timers, observers, sources and runs, so moves from callouts (the item's
   own included) and nested runs around them are common. */
static void generated_two_loop_inputs_replay_clean(void) {
    static const uint8_t ops[] = {0, 1, 4, 6, 7, 7, 10, 11, 12, 17, 17, 9, 13};
    uint64_t x = 0xD1B54A32D192ED03ULL;
    long n = rl_test_scaled(300);
    uint8_t buf[512];
    for (long i = 0; i < n; i++) {
        size_t len = (size_t)(32 + (i * 11) % 470) & ~(size_t)1;
        for (size_t j = 0; j < len; j += 2) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            unsigned r = (unsigned)(x >> 32) % 100;
            if (r < 35) {
                buf[j] = (uint8_t)(21 + 22 * ((x >> 8) % 11));
                buf[j + 1] = (uint8_t)(128 | (x >> 16));
            } else if (r < 65) {
                buf[j] = ops[(x >> 8) % sizeof ops];
                buf[j + 1] = (uint8_t)(x >> 16);
            } else {
                buf[j] = (uint8_t)(x >> 8);
                buf[j + 1] = (uint8_t)(x >> 16);
            }
        }
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("  %ld inputs: %ld ops, %ld runs (%ld nested in timer callouts, %ld in observer callouts), "
           "%ld timer fires, %ld observer calls, %ld performs; "
           "%ld moves to a second loop, %ld passes of it, %ld callouts there\n",
           fz_stats.inputs, fz_stats.ops, fz_stats.runs, fz_stats.runs_in_timer, fz_stats.runs_in_observer,
           fz_stats.fires, fz_stats.observed, fz_stats.performs, fz_stats.b_moves, fz_stats.b_passes,
           fz_stats.b_callouts);
}

static void empty_and_tiny_inputs(void) {
    LLVMFuzzerTestOneInput(NULL, 0);
    const uint8_t one[] = {17};
    LLVMFuzzerTestOneInput(one, 1);
    const uint8_t run_default[] = {0, 0, 1, 0, 4, 0, 17, 0x10};
    LLVMFuzzerTestOneInput(run_default, sizeof run_default);
}

int main(int argc, char **argv) {
    static const rl_test tests[] = {
        RL_TEST(empty_and_tiny_inputs),
        RL_TEST(corpus_bug_regressions_replay_clean),
        RL_TEST(corpus_coverage_inputs_replay_clean),
        RL_TEST(generated_inputs_replay_clean),
        RL_TEST(generated_two_loop_inputs_replay_clean),
    };
    return rl_test_main(argc, argv, tests, RL_TEST_COUNT(tests));
}
