# SwiftRunLoop build. `make` builds libcrunloop.a and libcrunloop.so with the
# system C compiler; `make test` runs every test (C, sanitizers, valgrind, Swift);
# `make bench` runs the benchmarks; `make soak` runs the 10-million-pass soak.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
VERSION := 0.1.0

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -fPIC -pthread $(WARN) -ISources/CRunLoop/include $(CFLAGS)
# The library's own files also find what the core lends its layers (core_api/);
# core/'s private headers are found only by core/'s own files (same folder).
LIB_CFLAGS = $(ALL_CFLAGS) -ISources/CRunLoop/core_api
LDLIBS  := -pthread -ldl -lm

# One folder per layer: core/, linux/, threads/, monitor/ (docs/ARCHITECTURE.md).
LIB_SRCS := $(sort $(wildcard Sources/CRunLoop/*/*.c))
LIB_HDRS := $(wildcard Sources/CRunLoop/*/*.h)
LIB_OBJS := $(patsubst Sources/CRunLoop/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))

TEST_SRCS := $(sort $(wildcard Tests/c/test_*.c))
TEST_HDRS := $(wildcard Tests/c/*.h)
TEST_BINS := $(patsubst Tests/c/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

# ---- GLib bridge: its own library, built only where GLib's development files
# are (pkg-config glib-2.0); the core above never depends on GLib. Its tests
# (Tests/c-glib, which also use GIO) join test-c and so every C suite.
HAVE_GLIB := $(shell pkg-config --exists glib-2.0 gio-unix-2.0 2>/dev/null && echo yes)
ifeq ($(HAVE_GLIB),yes)
GLIB_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags glib-2.0))
GLIB_LDLIBS := $(shell pkg-config --libs glib-2.0)
GIO_CFLAGS  := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags gio-2.0 gio-unix-2.0))
GIO_LDLIBS  := $(shell pkg-config --libs gio-2.0 gio-unix-2.0)
GLIB_SRCS   := $(sort $(wildcard Sources/CRunLoopGLib/*.c))
GLIB_HDRS   := $(wildcard Sources/CRunLoopGLib/*.h Sources/CRunLoopGLib/include/*.h)
GLIB_OBJS   := $(patsubst Sources/CRunLoopGLib/%.c,$(BUILD)/obj-glib/%.o,$(GLIB_SRCS))
GLIB_LIBS_OUT := $(BUILD)/libcrunloop-glib.a $(BUILD)/libcrunloop-glib.so
GLIB_TEST_BINS := $(patsubst Tests/c-glib/%.c,$(BUILD)/tests/%,$(sort $(wildcard Tests/c-glib/test_*.c)))
endif

.PHONY: all lib install test check-layers test-c test-sanitize test-asan test-tsan test-valgrind test-swift test-swift-tsan soak \
        bench bench-quick examples demo fuzz clean

all: lib
lib: $(BUILD)/libcrunloop.a $(BUILD)/libcrunloop.so $(GLIB_LIBS_OUT)

$(BUILD)/obj/%.o: Sources/CRunLoop/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/libcrunloop.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libcrunloop.so: $(LIB_OBJS) Sources/CRunLoop/exports.map
	$(CC) -shared -Wl,-soname,libcrunloop.so.0 -Wl,--version-script=Sources/CRunLoop/exports.map \
	  -o $@ $(LIB_OBJS) $(LDLIBS)

$(BUILD)/obj-glib/%.o: Sources/CRunLoopGLib/%.c $(GLIB_HDRS) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -ISources/CRunLoopGLib/include $(GLIB_CFLAGS) -c $< -o $@

$(BUILD)/libcrunloop-glib.a: $(GLIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libcrunloop-glib.so: $(GLIB_OBJS) $(BUILD)/libcrunloop.so
	$(CC) -shared -Wl,-soname,libcrunloop-glib.so.0 -o $@ $(GLIB_OBJS) -L$(BUILD) -lcrunloop $(GLIB_LDLIBS) $(LDLIBS)

$(BUILD)/crunloop-glib.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nexec_prefix=$${prefix}\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: crunloop-glib\nDescription: CoreFoundation run loop for Linux, with GLib main contexts\nVersion: %s\nRequires: crunloop glib-2.0\nLibs: -L$${libdir} -lcrunloop-glib\nCflags: -I$${includedir}\n' '$(PREFIX)' '$(VERSION)' > $@

$(BUILD)/crunloop.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nexec_prefix=$${prefix}\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: crunloop\nDescription: CoreFoundation run loop for Linux\nVersion: %s\nLibs: -L$${libdir} -lcrunloop\nLibs.private: -pthread -ldl -lm\nCflags: -I$${includedir}\n' '$(PREFIX)' '$(VERSION)' > $@

install: lib $(BUILD)/crunloop.pc $(if $(HAVE_GLIB),install-glib)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 Sources/CRunLoop/include/*.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libcrunloop.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcrunloop.so $(DESTDIR)$(PREFIX)/lib/libcrunloop.so.$(VERSION)
	ln -sf libcrunloop.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcrunloop.so.0
	ln -sf libcrunloop.so.0 $(DESTDIR)$(PREFIX)/lib/libcrunloop.so
	install -m 644 $(BUILD)/crunloop.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
ifeq ($(HAVE_GLIB),yes)
install-glib: lib $(BUILD)/crunloop-glib.pc
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 Sources/CRunLoopGLib/include/*.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libcrunloop-glib.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcrunloop-glib.so $(DESTDIR)$(PREFIX)/lib/libcrunloop-glib.so.$(VERSION)
	ln -sf libcrunloop-glib.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcrunloop-glib.so.0
	ln -sf libcrunloop-glib.so.0 $(DESTDIR)$(PREFIX)/lib/libcrunloop-glib.so
	install -m 644 $(BUILD)/crunloop-glib.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
endif

# ---- tests ------------------------------------------------------------------
# Each Tests/c/test_*.c is one program linked with the static library.

$(BUILD)/tests/%: Tests/c/%.c $(TEST_HDRS) $(BUILD)/libcrunloop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -include Tests/c/rltest_prelude.h -ITests/c $< -o $@ $(BUILD)/libcrunloop.a $(LDLIBS)

$(BUILD)/tests/%: Tests/c-glib/%.c $(TEST_HDRS) $(GLIB_HDRS) $(BUILD)/libcrunloop-glib.a $(BUILD)/libcrunloop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -include Tests/c/rltest_prelude.h -ITests/c -ISources/CRunLoopGLib/include $(GIO_CFLAGS) $< -o $@ \
	  $(BUILD)/libcrunloop-glib.a $(BUILD)/libcrunloop.a $(GIO_LDLIBS) $(LDLIBS)

# CRunLoopCFNames.h must also compile as C++, and with blocks under clang; its
# block variants run when clang finds the Swift toolchain's blocks runtime
# (not in sanitized builds: the library's sanitizer runtime is gcc's).
BLOCKS_RT = $(abspath $(dir $(shell command -v clang 2>/dev/null))../lib/swift/linux)
$(BUILD)/tests/cf_names_compile.ok: Tests/c/cf_names_compile.c Tests/c/cf_names_blocks.c $(LIB_HDRS) $(TEST_HDRS) \
                                    $(BUILD)/libcrunloop.a
	@mkdir -p $(dir $@)
	$(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -Wshadow -ISources/CRunLoop/include -fsyntax-only $<
	@if command -v clang >/dev/null 2>&1; then \
	  echo "clang -fblocks -fsyntax-only $<"; \
	  clang -std=c11 -fblocks $(WARN) -ISources/CRunLoop/include -fsyntax-only $< || exit 1; \
	  if [ -z "$(findstring sanitize,$(CFLAGS))" ] && [ -e "$(BLOCKS_RT)/libBlocksRuntime.so" ]; then \
	    echo "clang -fblocks Tests/c/cf_names_blocks.c && run it"; \
	    clang -std=c11 -fblocks $(WARN) -ISources/CRunLoop/include -include Tests/c/rltest_prelude.h -ITests/c \
	      Tests/c/cf_names_blocks.c -o $(BUILD)/tests/cf_names_blocks $(BUILD)/libcrunloop.a \
	      -L$(BLOCKS_RT) -lBlocksRuntime -Wl,-rpath,$(BLOCKS_RT) $(LDLIBS) && \
	    $(BUILD)/tests/cf_names_blocks || exit 1; fi; fi
	@touch $@

# Every ```c block of README.md must build.
$(BUILD)/tests/readme_c.ok: README.md Tests/doc-snippets/c.sh $(LIB_HDRS) $(BUILD)/libcrunloop.a $(GLIB_LIBS_OUT)
	CC="$(CC)" CFLAGS="$(CFLAGS)" sh Tests/doc-snippets/c.sh $(BUILD)/libcrunloop.a $(BUILD)/tests/readme
	@touch $@

# The layers (docs/ARCHITECTURE.md): no include or call cycle among the
# library's files beyond Tests/layers/allowed.txt, extras use only the core;
# first the checker's own test on tiny synthetic libraries.
check-layers: $(LIB_OBJS)
	@sh Tests/layers/test.sh >$(BUILD)/check-layers-selftest.log 2>&1 || \
	  { cat $(BUILD)/check-layers-selftest.log; echo "check-layers: its self-test failed"; exit 1; }
	@python3 Tests/layers/check.py Sources/CRunLoop $(BUILD)/obj Tests/layers/allowed.txt

test-c: check-layers $(TEST_BINS) $(GLIB_TEST_BINS) $(BUILD)/tests/cf_names_compile.ok $(BUILD)/tests/readme_c.ok
	@sh Tests/run-c-tests.sh $(TEST_BINS) $(GLIB_TEST_BINS)

# Sanitized builds live in their own build folders so they never mix objects.
test-asan:
	$(MAKE) --no-print-directory BUILD=build/asan CC=gcc \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test-c
test-tsan:
	$(MAKE) --no-print-directory BUILD=build/tsan CC=gcc \
	  CFLAGS="-O1 -g -fsanitize=thread" test-c
test-sanitize: test-asan test-tsan

test-valgrind: $(TEST_BINS) $(GLIB_TEST_BINS)
	@command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
	@RL_TEST_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect" \
	  RL_TEST_SLOW=8 sh Tests/run-c-tests.sh $(TEST_BINS) $(GLIB_TEST_BINS)

# Then: racy programs must not compile (Swift 6), their correct versions must;
# every Swift block of README.md and the DocC catalog must build; docc must
# convert the module's documentation without a warning.
test-swift:
	swift build --build-tests
	swift test
	sh Tests/compile-checks/run.sh
	sh Tests/doc-snippets/run.sh
	sh Tests/doc-snippets/docc.sh

# The Swift tests (and the C target under them) with ThreadSanitizer.
test-swift-tsan:
	swift test --sanitize=thread --scratch-path .build-tsan

test: test-c test-sanitize test-valgrind test-swift test-swift-tsan

# The long soak: 10 million busy passes (make test-c runs a short one).
soak: $(BUILD)/tests/test_soak
	RL_SOAK_PASSES=$${RL_SOAK_PASSES:-10000000} RL_TEST_TIMEOUT=3600 $(BUILD)/tests/test_soak

# ---- fuzzing ----------------------------------------------------------------
fuzz: lib
	$(MAKE) --no-print-directory -C Tests/fuzz run FUZZ_SECONDS=$${FUZZ_SECONDS:-60}

# ---- examples ---------------------------------------------------------------
examples: lib
	$(MAKE) --no-print-directory -C Examples all
demo: lib
	$(MAKE) --no-print-directory -C Examples demo

# ---- benchmarks -------------------------------------------------------------
bench: lib
	$(MAKE) --no-print-directory -C bench run
bench-quick: lib
	$(MAKE) --no-print-directory -C bench quick

clean:
	rm -rf build .build .build-tsan
	-$(MAKE) --no-print-directory -C bench clean
