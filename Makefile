# SwiftRunLoop build. `make` builds libcrunloop.a and libcrunloop.so with the
# system C compiler; `make test` runs every test (C, sanitizers, valgrind, Swift);
# `make bench` runs the benchmarks; `make soak` runs the 10-million-pass soak.
# `make help` lists every target: the `## target: what it does` lines below.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
# The one version: the shared libraries' file names and sonames, the
# pkg-config and CMake packages, and CHANGELOG.md's newest entry agree with it
# (Tests/make/test_version.sh). A release is a git tag of the same name, which
# is what SwiftPM's `from:` resolves. Before 1.0 a minor release may break the
# ABI, so the soname carries major.minor (libcrunloop.so.0.2); from 1.0 on,
# the major only.
VERSION := 0.2.0
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
SOVERSION := $(if $(filter 0,$(VERSION_MAJOR)),0.$(VERSION_MINOR),$(VERSION_MAJOR))

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

# The C tests sit in one folder per group (Tests/README.md: core/, cf/,
# extras/, robustness/, load/); a test not yet filed, at the top of Tests/c,
# is built and run too (test-c names it). Every binary goes to one flat
# $(BUILD)/tests/, so two tests may not share a file name.
TEST_UNFILED := $(sort $(wildcard Tests/c/test_*.c))
TEST_SRCS := $(TEST_UNFILED) $(sort $(wildcard Tests/c/*/test_*.c))
TEST_HDRS := $(wildcard Tests/c/*.h)
TEST_BINS := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRCS))))
# The source of test binary $(1): the one test file of that name.
test_src = $(filter %/$(1).c,$(TEST_SRCS))

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
GLIB_TEST_SRCS := $(sort $(wildcard Tests/c-glib/test_*.c))
GLIB_TEST_BINS := $(patsubst Tests/c-glib/%.c,$(BUILD)/tests/%,$(GLIB_TEST_SRCS))
endif

TEST_NAMES := $(notdir $(TEST_SRCS) $(GLIB_TEST_SRCS))
TEST_CLASHES := $(strip $(foreach n,$(sort $(TEST_NAMES)),$(if $(word 2,$(filter $(n),$(TEST_NAMES))),$(n))))
ifneq ($(TEST_CLASHES),)
$(error tests share a file name, and so a binary in $(BUILD)/tests/: $(foreach n,$(TEST_CLASHES),\
  $(filter %/$(n),$(TEST_SRCS) $(GLIB_TEST_SRCS))); rename one)
endif

.PHONY: all lib install test check-layers layers-graph docs test-c test-sanitize test-asan test-tsan test-valgrind \
        test-swift test-swift-tsan test-clang test-make soak bench bench-quick bench-publish examples demo fuzz format \
        format-check help clean deps

## all: the libraries (same as lib)
all: lib
## lib: libcrunloop.a and libcrunloop.so in build/ (and libcrunloop-glib where GLib is)
lib: $(BUILD)/libcrunloop.a $(BUILD)/libcrunloop.so $(GLIB_LIBS_OUT)

$(BUILD)/obj/%.o: Sources/CRunLoop/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# The USDT probes (Sources/CRunLoop/core/rl_probe.h, docs/PROBES.md) come from
# systemtap's <sys/sdt.h>; where it is missing the library is built without
# them (the build says so), as with -DRL_NO_PROBES in CFLAGS.
HAVE_SDT := $(shell printf '\043include <sys/sdt.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo yes)

$(BUILD)/libcrunloop.a: $(LIB_OBJS)
	@rm -f $@
	@[ "$(HAVE_SDT)" = yes ] || echo "no <sys/sdt.h> (Debian: systemtap-sdt-dev; make deps installs it): built without the USDT probes"
	ar rcs $@ $^

# The shared libraries carry the version in their soname, so they are relinked
# when it changes.
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" > $@

$(BUILD)/libcrunloop.so: $(LIB_OBJS) Sources/CRunLoop/exports.map $(BUILD)/version.stamp
	$(CC) -shared -Wl,-soname,libcrunloop.so.$(SOVERSION) -Wl,--version-script=Sources/CRunLoop/exports.map \
	  -o $@ $(LIB_OBJS) $(LDLIBS)

$(BUILD)/obj-glib/%.o: Sources/CRunLoopGLib/%.c $(GLIB_HDRS) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -ISources/CRunLoopGLib/include $(GLIB_CFLAGS) -c $< -o $@

$(BUILD)/libcrunloop-glib.a: $(GLIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libcrunloop-glib.so: $(GLIB_OBJS) $(BUILD)/libcrunloop.so $(BUILD)/version.stamp
	$(CC) -shared -Wl,-soname,libcrunloop-glib.so.$(SOVERSION) -o $@ $(GLIB_OBJS) -L$(BUILD) -lcrunloop $(GLIB_LDLIBS) $(LDLIBS)

# The .pc files name PREFIX, so they are remade when it changes: the stamp
# holds the prefix and version they were last made with.
$(BUILD)/pc-prefix.stamp: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(PREFIX) $(VERSION)" ] || echo "$(PREFIX) $(VERSION)" > $@
FORCE:
# The paths at the top of both .pc files (printf's first %s is PREFIX).
PC_PATHS = prefix=%s\nexec_prefix=$${prefix}\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\n

$(BUILD)/crunloop-glib.pc: Makefile $(BUILD)/pc-prefix.stamp
	@mkdir -p $(dir $@)
	printf '$(PC_PATHS)Name: crunloop-glib\nDescription: CoreFoundation run loop for Linux, with GLib main contexts\n' \
	  '$(PREFIX)' > $@
	printf 'Version: %s\nRequires: crunloop = $(VERSION), glib-2.0\nLibs: -L$${libdir} -lcrunloop-glib\nCflags: -I$${includedir}\n' \
	  '$(VERSION)' >> $@

$(BUILD)/crunloop.pc: Makefile $(BUILD)/pc-prefix.stamp
	@mkdir -p $(dir $@)
	printf '$(PC_PATHS)Name: crunloop\nDescription: CoreFoundation run loop for Linux\nVersion: %s\n' \
	  '$(PREFIX)' '$(VERSION)' > $@
	printf 'Libs: -L$${libdir} -lcrunloop\nLibs.private: -pthread -ldl -lm\nCflags: -I$${includedir}\n' >> $@

# The CMake package (packaging/*.cmake.in): find_package(CRunLoop) with imported
# targets, found relative to its own folder, so it names no prefix.
CMAKE_PKG := $(BUILD)/cmake/CRunLoopConfig.cmake $(BUILD)/cmake/CRunLoopConfigVersion.cmake
$(BUILD)/cmake/%.cmake: packaging/%.cmake.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's/@VERSION@/$(VERSION)/g' -e 's/@SOVERSION@/$(SOVERSION)/g' $< > $@

# lib/LIB.so.VERSION, and the names the dynamic linker (LIB.so.SOVERSION) and
# the link editor (LIB.so) look for.
install_shared = install -m 755 $(BUILD)/$(1).so $(DESTDIR)$(PREFIX)/lib/$(1).so.$(VERSION) && \
  ln -sf $(1).so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(1).so.$(SOVERSION) && \
  ln -sf $(1).so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/$(1).so

## install: headers, libraries, pkg-config and CMake packages under PREFIX (default /usr/local); runs ldconfig
install: lib $(BUILD)/crunloop.pc $(if $(HAVE_GLIB),$(BUILD)/crunloop-glib.pc) $(CMAKE_PKG)
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/CRunLoop
	install -m 644 Sources/CRunLoop/include/*.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libcrunloop.a $(DESTDIR)$(PREFIX)/lib/
	$(call install_shared,libcrunloop)
	install -m 644 $(BUILD)/crunloop.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 $(CMAKE_PKG) $(DESTDIR)$(PREFIX)/lib/cmake/CRunLoop/
ifeq ($(HAVE_GLIB),yes)
	install -m 644 Sources/CRunLoopGLib/include/*.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libcrunloop-glib.a $(DESTDIR)$(PREFIX)/lib/
	$(call install_shared,libcrunloop-glib)
	install -m 644 $(BUILD)/crunloop-glib.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
endif
	@LDCONFIG="$(LDCONFIG)" sh packaging/after-install.sh "$(DESTDIR)" "$(PREFIX)" libcrunloop.so.$(SOVERSION)

# Where ldconfig is (root's PATH has /sbin, a user's may not).
LDCONFIG ?= $(firstword $(shell command -v ldconfig 2>/dev/null) /sbin/ldconfig)

# ---- what the build needs ---------------------------------------------------
# The Debian packages every target uses besides the Swift toolchain: compilers,
# pkg-config and GLib's development files (the GLib bridge), python3
# (check-layers, the bench driver), valgrind, clang-format (format-check),
# cmake (the installed CMake package's test), git (the line-length check),
# systemtap-sdt-dev (<sys/sdt.h>: the library's USDT probes).
# .ci/run installs them through this target too. It is the only target that
# installs anything (`make bench` installs its peers through bench/'s own).
DEPS_DEBIAN := gcc g++ make pkg-config libglib2.0-dev python3 valgrind clang-format cmake git systemtap-sdt-dev
APT_GET ?= apt-get
## deps: installs the Debian packages the build and the tests need (as root: sudo make deps)
deps:
	@command -v dpkg-query >/dev/null || { echo "make deps: no dpkg-query: not Debian; install these (or your" \
	  "system's names for them) by hand: $(DEPS_DEBIAN)" >&2; exit 1; }; \
	missing=""; for p in $(DEPS_DEBIAN); do \
	  dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q ' installed$$' || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "make deps: installed already: $(DEPS_DEBIAN)"; exit 0; fi; \
	[ "$$(id -u)" = 0 ] || { echo "make deps: run it as root (sudo make deps) to install:$$missing" >&2; exit 1; }; \
	echo "make deps: installing$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; $(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing

# ---- tests ------------------------------------------------------------------
# Each Tests/c/GROUP/test_*.c is one program linked with the static library,
# $(BUILD)/tests/test_* (its source found by name: test_src above).

.SECONDEXPANSION:
$(TEST_BINS): $(BUILD)/tests/%: $$(call test_src,$$*) $(TEST_HDRS) $(BUILD)/libcrunloop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -include Tests/c/rltest_prelude.h -ITests/c $< -o $@ $(BUILD)/libcrunloop.a $(LDLIBS)

$(BUILD)/tests/%: Tests/c-glib/%.c $(TEST_HDRS) $(GLIB_HDRS) $(BUILD)/libcrunloop-glib.a $(BUILD)/libcrunloop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -include Tests/c/rltest_prelude.h -ITests/c -ISources/CRunLoopGLib/include $(GIO_CFLAGS) $< -o $@ \
	  $(BUILD)/libcrunloop-glib.a $(BUILD)/libcrunloop.a $(GIO_LDLIBS) $(LDLIBS)

# CRunLoopCFNames.h must also compile as C++, and with blocks under clang; a
# C++ program written for macOS (Tests/c/cf/cf_names_cpp.cpp) runs, built with
# $(CXX); programs it must refuse fail saying why (cf_names_errors.sh). Where
# clang finds the Swift toolchain's blocks runtime, the block variants run, in
# C and in C++ (not in sanitized builds: the library's sanitizer runtime is
# gcc's), and the header brings the toolchain's <dispatch/dispatch.h> along.
BLOCKS_RT = $(abspath $(dir $(shell command -v clang 2>/dev/null))../lib/swift/linux)
SWIFT_INCLUDE = $(abspath $(dir $(shell command -v clang 2>/dev/null))../lib/swift)
CF_NAMES_CXXFLAGS = -std=c++11 -Wall -Wextra -Werror -Wshadow -ISources/CRunLoop/include
CF_NAMES_BLOCKS = -fblocks -ISources/CRunLoop/include -L$(BLOCKS_RT) -lBlocksRuntime -Wl,-rpath,$(BLOCKS_RT)
CF_NAMES_DIR := Tests/c/cf
CF_NAMES_SRCS := $(addprefix $(CF_NAMES_DIR)/,cf_names_compile.c cf_names_blocks.c cf_names_cpp.cpp cf_names_errors.c \
                                               cf_names_errors.sh)
$(BUILD)/tests/cf_names_compile.ok: $(CF_NAMES_SRCS) $(LIB_HDRS) $(TEST_HDRS) $(BUILD)/libcrunloop.a
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(CF_NAMES_CXXFLAGS) -fsyntax-only $<
	$(CXX) $(CF_NAMES_CXXFLAGS) $(CFLAGS) $(CF_NAMES_DIR)/cf_names_cpp.cpp -o $(BUILD)/tests/cf_names_cpp \
	  $(BUILD)/libcrunloop.a $(LDLIBS)
	$(BUILD)/tests/cf_names_cpp
	@CC="$(CC)" CXX="$(CXX)" sh $(CF_NAMES_DIR)/cf_names_errors.sh Sources/CRunLoop/include
	@if command -v clang >/dev/null 2>&1; then \
	  dispatch=""; [ -e "$(SWIFT_INCLUDE)/dispatch/dispatch.h" ] && \
	    dispatch="-isystem $(SWIFT_INCLUDE) -DRLCF_EXPECT_DISPATCH"; \
	  echo "clang -fblocks -fsyntax-only $< $$dispatch"; \
	  clang -std=c11 -fblocks $(WARN) -ISources/CRunLoop/include $$dispatch -fsyntax-only $< || exit 1; \
	  if [ -z "$(findstring sanitize,$(CFLAGS))" ] && [ -e "$(BLOCKS_RT)/libBlocksRuntime.so" ]; then \
	    echo "clang -fblocks $(CF_NAMES_DIR)/cf_names_blocks.c && run it"; \
	    clang -std=c11 $(WARN) $(CF_NAMES_BLOCKS) -include Tests/c/rltest_prelude.h -ITests/c \
	      $(CF_NAMES_DIR)/cf_names_blocks.c -o $(BUILD)/tests/cf_names_blocks $(BUILD)/libcrunloop.a $(LDLIBS) && \
	    $(BUILD)/tests/cf_names_blocks || exit 1; \
	    echo "clang++ -fblocks $(CF_NAMES_DIR)/cf_names_cpp.cpp && run it"; \
	    clang++ $(CF_NAMES_CXXFLAGS) $(CF_NAMES_BLOCKS) $(CF_NAMES_DIR)/cf_names_cpp.cpp \
	      -o $(BUILD)/tests/cf_names_cpp_blocks $(BUILD)/libcrunloop.a $(LDLIBS) && \
	    $(BUILD)/tests/cf_names_cpp_blocks || exit 1; fi; fi
	@touch $@

# Every ```c block of README.md and of the DocC articles must build.
$(BUILD)/tests/readme_c.ok: README.md $(wildcard Sources/*/*.docc/*.md) Tests/doc-snippets/c.sh $(LIB_HDRS) \
                            $(BUILD)/libcrunloop.a $(GLIB_LIBS_OUT)
	CC="$(CC)" CFLAGS="$(CFLAGS)" sh Tests/doc-snippets/c.sh $(BUILD)/libcrunloop.a $(BUILD)/tests/readme
	@touch $@

# The layers (docs/ARCHITECTURE.md): no include or call cycle among the
# library's files beyond Tests/layers/allowed.txt (a header's inline
# functions call on behalf of every file that includes it), extras use only
# the core, and a function named rl_<concept>_... lives in rl_<concept>.c
# (beyond Tests/layers/names_allowed.txt); first the checker's own test on
# tiny synthetic libraries.
## check-layers: no include or call cycle (a header's inline calls count), extras call only the core, names tell their file
check-layers: $(LIB_OBJS)
	@python3 Tests/layers/test.py >$(BUILD)/check-layers-selftest.log 2>&1 || \
	  { cat $(BUILD)/check-layers-selftest.log; echo "check-layers: its self-test failed"; exit 1; }
	@python3 Tests/layers/check.py Sources/CRunLoop $(BUILD)/obj Tests/layers/allowed.txt Tests/layers/names_allowed.txt

## layers-graph: docs/LAYERS.md's who-calls-whom levels and mermaid graph, from the built objects
layers-graph: $(LIB_OBJS)
	@python3 Tests/layers/graph.py Sources/CRunLoop $(BUILD)/obj

## test-c: the C tests (Tests/c/*/, Tests/c-glib), the CF-names compile check and README's C blocks
test-c: check-layers $(TEST_BINS) $(GLIB_TEST_BINS) $(BUILD)/tests/cf_names_compile.ok $(BUILD)/tests/readme_c.ok
	@sh Tests/run-c-tests.sh $(TEST_BINS) $(GLIB_TEST_BINS)
	@$(if $(TEST_UNFILED),echo "test-c: not yet in a group folder of Tests/c (Tests/README.md): $(TEST_UNFILED)")

# Sanitized builds live in their own build folders so they never mix objects.
## test-asan: the C tests under AddressSanitizer and UBSan (build/asan)
test-asan:
	$(MAKE) --no-print-directory BUILD=build/asan CC=gcc \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test-c
## test-tsan: the C tests under ThreadSanitizer (build/tsan)
test-tsan:
	$(MAKE) --no-print-directory BUILD=build/tsan CC=gcc \
	  CFLAGS="-O1 -g -fsanitize=thread" test-c
## test-sanitize: test-asan and test-tsan
test-sanitize: test-asan test-tsan

# valgrind is installed by .ci/run (or by hand), never from here.
VALGRIND ?= valgrind
VALGRIND_OPTS := -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
                 --show-leak-kinds=definite,indirect
## test-valgrind: the C tests under valgrind memcheck (needs valgrind)
test-valgrind: $(if $(shell command -v $(VALGRIND) 2>/dev/null),$(TEST_BINS) $(GLIB_TEST_BINS),valgrind-missing)
	@RL_TEST_WRAPPER="$(VALGRIND) $(VALGRIND_OPTS)" RL_TEST_SLOW=8 sh Tests/run-c-tests.sh $(TEST_BINS) $(GLIB_TEST_BINS)

valgrind-missing:
	@echo "make test-valgrind: $(VALGRIND) not found: install valgrind (the Debian package valgrind;" \
	  ".ci/run installs it)" >&2; exit 1

# Then: racy programs must not compile (Swift 6), their correct versions must;
# every Swift block of README.md and the DocC catalog must build; docc must
# convert the module's documentation without a warning.
## test-swift: swift build and swift test, the Swift 6 compile checks, README's Swift blocks and docc
test-swift:
	swift build --build-tests
	swift test
	sh Tests/compile-checks/run.sh
	sh Tests/doc-snippets/run.sh
	sh Tests/doc-snippets/docc.sh

# The Swift tests (and the C target under them) with ThreadSanitizer.
## test-swift-tsan: the Swift tests under ThreadSanitizer (.build-tsan)
test-swift-tsan:
	swift test --sanitize=thread --scratch-path .build-tsan

# SwiftPM builds the C targets with clang and shows these warnings (the
# manifest enables them) without failing: -Werror there would break packages
# that depend on ours. Here clang checks the same sources with the same
# warnings as errors, as gcc does for the library above.
CLANG ?= $(firstword $(wildcard /opt/swift/usr/bin/clang) $(shell command -v clang 2>/dev/null) clang)
CLANG_SRCS = $(LIB_SRCS)
CLANG_GLIB_SRCS = $(if $(HAVE_GLIB),$(GLIB_SRCS))
## test-clang: the Swift package's C sources and the fuzz driver, compiled by clang with warnings as errors
test-clang:
	@echo "$(CLANG) -fsyntax-only $(WARN): $(words $(CLANG_SRCS) $(CLANG_GLIB_SRCS)) sources and the fuzz driver"
	@for f in $(CLANG_SRCS) Tests/fuzz/fuzz_runloop.c; do \
	  $(CLANG) -std=c11 -pthread -fsyntax-only $(WARN) -ISources/CRunLoop/include -ISources/CRunLoop/core_api $$f \
	    || exit 1; done
	@for f in $(CLANG_GLIB_SRCS); do \
	  $(CLANG) -std=c11 -pthread -fsyntax-only $(WARN) -ISources/CRunLoop/include -ISources/CRunLoopGLib/include \
	    $(GLIB_CFLAGS) $$f || exit 1; done

## test-make: the build's own checks (Tests/make: install, pkg-config and CMake use, version, clean, help, format...)
test-make:
	@sh Tests/make/run.sh

## test: every test: test-c, test-sanitize, test-valgrind, test-swift, test-swift-tsan, test-clang, test-make
test: test-c test-sanitize test-valgrind test-swift test-swift-tsan test-clang test-make

# The long soak: 10 million busy passes (make test-c runs a short one).
## soak: the long soak, 10 million busy passes (RL_SOAK_PASSES to change)
soak: $(BUILD)/tests/test_soak
	RL_SOAK_PASSES=$${RL_SOAK_PASSES:-10000000} RL_TEST_TIMEOUT=3600 $(BUILD)/tests/test_soak

# ---- fuzzing ----------------------------------------------------------------
## fuzz: libFuzzer on the run loop for FUZZ_SECONDS (default 60), from Tests/fuzz/corpus
fuzz: lib
	$(MAKE) --no-print-directory -C Tests/fuzz run FUZZ_SECONDS=$${FUZZ_SECONDS:-60}

# ---- examples ---------------------------------------------------------------
## examples: builds Examples/ (C and Swift)
examples: lib
	$(MAKE) --no-print-directory -C Examples all
## demo: builds and runs every example
demo: lib
	$(MAKE) --no-print-directory -C Examples demo

# ---- benchmarks -------------------------------------------------------------
# Both write to bench/build/ only, so a checkout stays clean; bench-publish
# copies the last full run into the committed files.
## bench: the full benchmarks against Foundation, libuv, libev, GLib (results in bench/build/)
bench: lib
	$(MAKE) --no-print-directory -C bench run
## bench-quick: a reduced benchmark set, under a minute (results in bench/build/quick-*)
bench-quick: lib
	$(MAKE) --no-print-directory -C bench quick
## bench-publish: the last make bench's results into bench/results.md, .csv, the charts and README's table
bench-publish:
	$(MAKE) --no-print-directory -C bench publish

# ---- formatting ---------------------------------------------------------------
# Layout is clang-format's (.clang-format; Debian 12's clang-format 14) for C
# and swift-format's (.swift-format; the Swift toolchain's) for Swift, over
# every source we write: not build outputs, not the fuzz corpus.
CLANG_FORMAT ?= clang-format
SWIFT_FORMAT ?= $(firstword $(shell command -v swift-format 2>/dev/null) /opt/swift/usr/bin/swift-format)
FORMAT_FIND = find $(1) \( -name build -o -name '.build*' -o -name corpus \) -prune -o -type f \( $(2) \) -print \
                2>/dev/null | sort
FORMAT_C = $(shell $(call FORMAT_FIND,Sources Tests bench Examples,-name '*.c' -o -name '*.h'))
FORMAT_SWIFT = $(shell $(call FORMAT_FIND,Package.swift Sources Tests bench Examples,-name '*.swift'))
FORMAT_CONFIGS = .swift-format $(shell $(call FORMAT_FIND,.,-name .clang-format))
FORMAT_TOOLS = command -v $(CLANG_FORMAT) >/dev/null 2>&1 || { echo "$(CLANG_FORMAT) not found: install clang-format" \
                 "(the Debian package clang-format; .ci/run installs it)" >&2; exit 1; }; \
               command -v $(SWIFT_FORMAT) >/dev/null 2>&1 || { echo "$(SWIFT_FORMAT) not found" >&2; exit 1; }

## format: rewrites every C and Swift source in place (Sources, Tests, bench, Examples)
format:
	@$(FORMAT_TOOLS)
	@echo "$(CLANG_FORMAT) -i: $(words $(FORMAT_C)) C files"; $(CLANG_FORMAT) -i $(FORMAT_C)
	@echo "$(SWIFT_FORMAT) format -i: $(words $(FORMAT_SWIFT)) Swift files"; \
	  $(SWIFT_FORMAT) format -i --parallel --configuration .swift-format $(FORMAT_SWIFT)

## format-check: fails, naming each file, if make format would change anything
format-check:
	@$(FORMAT_TOOLS); \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	tar cf - $(FORMAT_CONFIGS) $(FORMAT_C) $(FORMAT_SWIFT) | tar xf - -C "$$tmp" && \
	( cd "$$tmp" && $(CLANG_FORMAT) -i $(FORMAT_C) && \
	  $(SWIFT_FORMAT) format -i --parallel --configuration .swift-format $(FORMAT_SWIFT) ) || exit 1; \
	bad=0; for f in $(FORMAT_C) $(FORMAT_SWIFT); do \
	  cmp -s "$$f" "$$tmp/$$f" && continue; \
	  [ $$bad -gt 0 ] || echo "make format would change:"; echo "  $$f"; bad=$$((bad + 1)); \
	done; \
	[ $$bad -eq 0 ] || { echo "$$bad files differ (run make format; $$($(CLANG_FORMAT) --version | head -1))"; exit 1; }
	@echo "format-check: $(words $(FORMAT_C)) C and $(words $(FORMAT_SWIFT)) Swift files as make format leaves them"

## help: this list
help:
	@awk '/^## [a-z][a-z-]*:/ { t = $$2; sub(/:$$/, "", t); $$1 = $$2 = ""; sub(/^ +/, ""); \
	  printf "  %-16s %s\n", t, $$0 }' Makefile

## clean: removes every build output (build/, .build*, Examples' and bench's builds)
clean:
	rm -rf $(BUILD) build .build .build-* .build_* bench/bridge/.build
	-$(MAKE) --no-print-directory -C bench clean
	-$(MAKE) --no-print-directory -C Examples clean

# ---- documentation --------------------------------------------------------------
# The DocC archives of the Swift modules (Tests/doc-snippets/docc.sh: any docc
# warning fails) and the C API reference from the public headers
# (docs/c_api_reference.py: a function without a comment fails), in one folder
# that one web server serves.
DOCS_DIR = $(BUILD)/docs
C_API_HEADERS = $(sort $(wildcard Sources/CRunLoop/include/*.h)) $(if $(HAVE_GLIB),$(GLIB_API_HEADERS))
GLIB_API_HEADERS = $(wildcard Sources/CRunLoopGLib/include/*.h)
## docs: DocC archives of the Swift modules and the C API reference in build/docs; prints how to open them
docs:
	swift build
	DOCC_DIR=$(DOCS_DIR) sh Tests/doc-snippets/docc.sh
	python3 docs/c_api_reference.py --check --out $(DOCS_DIR)/c-api $(C_API_HEADERS)
	cp docs/site-index.html $(DOCS_DIR)/index.html
	@echo "Documentation in $(DOCS_DIR). To read it:"
	@echo "  python3 -m http.server -d $(DOCS_DIR) 8000    then open http://localhost:8000/"
	@echo "  (DocC pages need a web server; the C API opens from the disk: $(DOCS_DIR)/c-api/index.html, or .md)"
