# npuscope: build, test and install.
#
#   make            build ./npuscope
#   make run        build and start the main job (TUI, embedded chip and demo workload)
#   make test       build and run every test (unit, layout, end-to-end, fuzz corpora), and
#                   check the sources with clang's warnings too
#   make test-slurm a sweep through a one-node Slurm started here (opt-in; root)
#   make asan       the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan       the phase-2 executor's tests under ThreadSanitizer
#   make check      format check, cppcheck, clang-tidy, the layout check, make clang, make asan
#   make clang      compile the tree with clang too (its warnings are not gcc's) in build/clang/
#   make bench      build and run the benchmarks in tests/bench/
#   make golden     rewrite the TUI's golden files (tests/data/tui/) from the code; read the diff
#   make fuzz       build the libFuzzer harnesses (clang) into build/fuzz/
#   make install PREFIX=/usr/local DESTDIR=   |  make uninstall  |  make clean  |  make format
#
# Missing Debian packages are installed by .ci/install-deps (apt-get, sudo when not root).

PKGS      := ncursesw libcjson yaml-0.1 openblas
TEST_PKGS := criterion
VERSION   := 0.1.0
PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build

ifeq ($(origin CC),default)
CC        := gcc
endif

# --- dependencies -----------------------------------------------------------------------
# Goals that need no libraries skip the check; the others install what is missing once.
NODEP_GOALS := clean format format-check uninstall help
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out $(NODEP_GOALS),$(MAKECMDGOALS)),)
SKIP_DEPS := 1
endif
endif
ifndef SKIP_DEPS
ifneq ($(filter test asan tsan check clang bench fuzz,$(MAKECMDGOALS)),)
DEPS_KIND := test
HAVE_DEPS := $(shell pkg-config --exists $(PKGS) $(TEST_PKGS) 2>/dev/null && command -v tmux >/dev/null && command -v parallel >/dev/null && command -v rsync >/dev/null && command -v pgrep >/dev/null && command -v clang >/dev/null && command -v groff >/dev/null && command -v man >/dev/null && echo ok)
else
DEPS_KIND := build
HAVE_DEPS := $(shell pkg-config --exists $(PKGS) 2>/dev/null && echo ok)
endif
ifneq ($(HAVE_DEPS),ok)
$(info npuscope: some build dependencies are missing; running .ci/install-deps $(DEPS_KIND))
DEPS_STATUS := $(shell .ci/install-deps $(DEPS_KIND) >&2 </dev/null && echo ok)
ifneq ($(DEPS_STATUS),ok)
$(error could not install the dependencies; see the message above)
endif
endif
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CRIT_CFLAGS = $(shell pkg-config --cflags $(TEST_PKGS) 2>/dev/null)
CRIT_LIBS   = $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)

# --- flags -------------------------------------------------------------------------------
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wwrite-strings -Wformat=2 -Wundef
OPT      ?= -O2 -g
SAN_FLAGS :=
ifdef SAN
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT       := -O1 -g
endif
ifdef TSAN
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
OPT       := -O1 -g
endif
CPPFLAGS += -I. -I$(BUILD)/gen -D_GNU_SOURCE -DNPUSCOPE_VERSION='"$(VERSION)"' -MMD -MP
CFLAGS   += -std=c11 $(WARN) $(OPT) $(SAN_FLAGS) $(PKG_CFLAGS)
LDFLAGS  += $(SAN_FLAGS)
LDLIBS   += $(PKG_LIBS) -lm -lpthread

# --- sources -----------------------------------------------------------------------------
LIB_SRC  := $(wildcard sim/*/*.c trace/*/*.c tui/*/*.c)
LIB_SRC  := $(filter-out tui/cli/main.c,$(LIB_SRC))
LIB_ASM  := $(wildcard sim/*/*.S)
EMBED    := $(sort $(wildcard sim/configs/*.yaml themes/*.yaml))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_ASM:%.S=$(BUILD)/obj/%.o) \
            $(BUILD)/obj/gen/embedded.o
LIB      := $(BUILD)/libnpuscope.a
BIN      := $(BUILD)/npuscope

UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_BIN := $(BUILD)/tests/unit_tests
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz-replay/%)
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)

.PHONY: all run test test-unit test-e2e test-fuzz asan tsan check clang bench fuzz install \
        uninstall clean format format-check help golden test-slurm
.DEFAULT_GOAL := all

all: npuscope

npuscope: $(BIN)
	@ln -sf $(BIN) npuscope

$(BIN): $(BUILD)/obj/tui/cli/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SAN_FLAGS) -c -o $@ $<

# Every chip config, workload and theme is compiled into the binary, so npuscope runs
# with no files installed. od is in coreutils: no extra tool is needed.
$(BUILD)/gen/embedded.c: $(EMBED) Makefile
	@mkdir -p $(dir $@)
	@{ echo '/* Generated by the Makefile from sim/configs and themes: do not edit. */'; \
	   echo '#include "sim/util/embedded.h"'; \
	   i=0; for f in $(EMBED); do \
	     echo "static const unsigned char file_$$i[] = {"; \
	     od -An -v -tx1 "$$f" | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	     echo '0x00};'; i=$$((i+1)); \
	   done; \
	   echo 'const struct sim_embedded_file sim_embedded_files[] = {'; \
	   i=0; for f in $(EMBED); do \
	     echo "    {\"$$f\", (const char *)file_$$i, sizeof(file_$$i) - 1},"; i=$$((i+1)); \
	   done; \
	   echo '    {0, 0, 0}};'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# --- run -----------------------------------------------------------------------------------
run: npuscope
	./npuscope

# --- tests ---------------------------------------------------------------------------------
$(BUILD)/obj/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(CRIT_CFLAGS) -c -o $@ $<

$(UNIT_BIN): $(UNIT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(LIB) $(CRIT_LIBS) $(LDLIBS)

# Fuzz harnesses double as regression tests: a plain driver replays their corpora.
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDLIBS)

export OPENBLAS_NUM_THREADS := 1

# clang's warnings are not gcc's: make test runs clang's front end over every source of the
# library, the binary and the unit tests as well (-fsyntax-only, the same warnings, -Werror;
# all of clang's warnings come from it), a fifth of what compiling them costs; make clang
# (in make check) compiles the whole tree.
CLANG_SRC := $(LIB_SRC) tui/cli/main.c $(UNIT_SRC)
CLANG_OK  := $(CLANG_SRC:%.c=$(BUILD)/obj/clang-syntax/%.ok)
$(BUILD)/obj/clang-syntax/%.ok: %.c
	@mkdir -p $(dir $@)
	@echo "  CLANG $<"
	@clang $(CPPFLAGS) -MF $(@:.ok=.d) -MT $@ -std=c11 $(WARN) $(PKG_CFLAGS) $(CRIT_CFLAGS) \
	    -fsyntax-only $<
	@touch $@

test: $(if $(SAN),,npuscope $(CLANG_OK)) $(BIN) $(UNIT_BIN) $(FUZZ_REPLAY)
	@tests/run-all $(BUILD)

asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SAN=1 test

# Opt-in, not part of make test: slurm-wlm and munge (installed when missing), a
# one-node Slurm started under a temporary directory, a sweep submitted through it.
test-slurm: npuscope
	@tests/slurm/test_slurm.sh $(BUILD)

# The TUI's headless tests compare canvases with tests/data/tui/*.txt; this rewrites them.
golden: $(UNIT_BIN)
	@NPUSCOPE_UPDATE_GOLDEN=1 $(UNIT_BIN) --filter='tui_*/*' --jobs=1 >/dev/null 2>&1 || true
	@git --no-pager diff --stat -- tests/data/tui; git status --short -- tests/data/tui

# The executor's worker pool runs the ops of a wave on 2 threads: ThreadSanitizer checks
# that they share no data. Criterion cannot start under TSan, so tests/tsan/ holds plain
# programs.
TSAN_SRC := $(wildcard tests/tsan/*.c)
tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan TSAN=1 \
	    $(TSAN_SRC:tests/tsan/%.c=build/tsan/tests/tsan/%)
	@for t in $(TSAN_SRC:tests/tsan/%.c=build/tsan/tests/tsan/%); do \
	    TSAN_OPTIONS=halt_on_error=1 $$t || exit 1; done

$(BUILD)/tests/tsan/%: tests/tsan/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The layout check (tests/layout/check.sh) keeps sim/README.md's drawing true: file sizes,
# no two objects of the library using each other, no include cycles, layers in order.
check: format-check $(LIB)
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --inline-suppr --suppress=missingIncludeSystem -I. -D_GNU_SOURCE sim trace tui
	clang-tidy --quiet $(LIB_SRC) tui/cli/main.c -- -std=c11 -I. -I$(BUILD)/gen -D_GNU_SOURCE \
	    -DNPUSCOPE_VERSION='"$(VERSION)"' \
	    $(PKG_CFLAGS)
	tests/layout/check.sh $(BUILD)
	@$(MAKE) --no-print-directory clang
	@$(MAKE) --no-print-directory asan

# The whole tree compiled by clang as well, -Werror: library, binary and unit tests (clang
# warns of what gcc does not, e.g. -Wunused-but-set-variable, and make fuzz needs clang).
CLANG_BUILD := build/clang
clang:
	@$(MAKE) --no-print-directory CC=clang BUILD=$(CLANG_BUILD) SAN= TSAN= \
	    $(CLANG_BUILD)/npuscope $(CLANG_BUILD)/tests/unit_tests

# --- benchmarks ----------------------------------------------------------------------------
$(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -O3 $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

bench: npuscope $(BENCH_BIN)
	@tests/bench/run $(BUILD)

# --- fuzzing (clang, libFuzzer) ------------------------------------------------------------
fuzz:
	@$(MAKE) --no-print-directory BUILD=build/fuzzlib CC=clang \
	    SAN_FLAGS="-fsanitize=address,undefined,fuzzer-no-link" build/fuzzlib/libnpuscope.a
	@mkdir -p build/fuzz
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	    echo "  FUZZ build/fuzz/$$n"; \
	    clang $(CPPFLAGS) -Ibuild/fuzzlib/gen -std=c11 -g -O1 $(PKG_CFLAGS) \
	        -fsanitize=address,undefined,fuzzer -o build/fuzz/$$n $$f \
	        build/fuzzlib/libnpuscope.a $(LDLIBS) || exit 1; done

# --- install -------------------------------------------------------------------------------
install: npuscope
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/npuscope/themes
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/npuscope
	install -m 644 tui/npuscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/npuscope.1
	$(if $(wildcard themes/*.yaml),install -m 644 themes/*.yaml $(DESTDIR)$(PREFIX)/share/npuscope/themes/)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/npuscope $(DESTDIR)$(PREFIX)/share/man/man1/npuscope.1
	rm -rf $(DESTDIR)$(PREFIX)/share/npuscope

clean:
	rm -rf build npuscope

FORMAT_SRC = $(wildcard sim/*/*.[ch] trace/*/*.[ch] tui/*/*.[ch] tests/*/*.[ch])
format:
	clang-format -i $(FORMAT_SRC)

format-check:
	clang-format --dry-run -Werror $(FORMAT_SRC)

help:
	@sed -n '2,16p' Makefile | sed 's/^# \{0,1\}//'

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
