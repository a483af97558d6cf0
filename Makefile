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

PKGS      := ncursesw libcjson yaml-0.1 openblas libzstd zlib
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
LDLIBS   += $(PKG_LIBS) -lm -lpthread -ldl

# --- sources -----------------------------------------------------------------------------
LIB_SRC  := $(wildcard sim/*/*.c trace/*/*.c tui/*/*.c)
LIB_SRC  := $(filter-out tui/cli/main.c,$(LIB_SRC))
LIB_ASM  := $(wildcard sim/*/*.S)
EMBED    := $(sort $(wildcard sim/configs/*.yaml themes/*.yaml sim/kernels/*.c))
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

.PHONY: headers all run test test-unit test-e2e test-fuzz asan tsan check clang bench fuzz \
        install uninstall clean format format-check help golden test-slurm nosites
.DEFAULT_GOAL := all

all: npuscope headers

npuscope: $(BIN)
	@ln -sf $(BIN) npuscope

# The binary exports the public kernel API, and only it, for plug-ins to call: the dynamic
# list holds every function the public headers declare (or call from an inline function).
$(BIN): $(BUILD)/obj/tui/cli/main.o $(LIB) $(BUILD)/gen/npuscope.dyn
	$(CC) $(LDFLAGS) -Wl,--dynamic-list=$(BUILD)/gen/npuscope.dyn -o $@ \
	    $(BUILD)/obj/tui/cli/main.o $(LIB) $(LDLIBS)

# --- the public kernel API (<npuscope/npuscope.h>) -------------------------------------------
# The headers a kernel needs stay where the layers put them (sim/README.md's drawing); the
# installed copies are made from them with each #include "sim/DIR/X.h" rewritten as
# #include <npuscope/X.h>, so there is one source and the copies are self-contained. A public
# header that includes a header outside this list fails the build.
PUB_HDRS := sim/util/diag.h sim/data/dtype.h sim/data/value.h sim/data/tensor.h \
            sim/chip/config.h sim/chip/timing.h sim/kernel/tl.h sim/kernel/kernel.h \
            sim/kernel/plugin.h
PUB_DIR  := $(BUILD)/include/npuscope
PUB_OUT  := $(addprefix $(PUB_DIR)/,$(notdir $(PUB_HDRS))) $(PUB_DIR)/npuscope.h
PLUGIN_ABI = $(shell sed -n 's/^\#define NPUSCOPE_PLUGIN_ABI_VERSION \([0-9]*\).*/\1/p' \
                 sim/kernel/plugin.h)

define pub_rule
$(PUB_DIR)/$(notdir $(1)): $(1) Makefile
	@mkdir -p $$(dir $$@)
	@sed -E 's|^#include "sim/[a-z0-9_]+/([a-z0-9_]+\.h)"|#include <npuscope/\1>|' $$< > $$@.tmp
	@for f in $$$$(sed -n 's|^#include <npuscope/\(.*\)>|\1|p' $$@.tmp); do \
	    case " $(notdir $(PUB_HDRS)) " in *" $$$$f "*) ;; \
	    *) echo "$(1): includes $$$$f, which is not a public header" >&2; rm -f $$@.tmp; \
	       exit 1;; esac; done
	@if grep -q '^#include "' $$@.tmp; then \
	    echo "$(1): a public header includes a private one" >&2; rm -f $$@.tmp; exit 1; fi
	@mv $$@.tmp $$@
endef
$(foreach h,$(PUB_HDRS),$(eval $(call pub_rule,$(h))))

$(PUB_DIR)/npuscope.h: Makefile
	@mkdir -p $(dir $@)
	@{ echo '/* npuscope'"'"'s public kernel API in one include: the kernel API (tl.h), the'; \
	   echo ' * argument table, parameters and launch builder (kernel.h), component timing'; \
	   echo ' * models (timing.h), and the plug-in descriptor (plugin.h). Generated by'; \
	   echo ' * npuscope'"'"'s Makefile. */'; \
	   echo '#ifndef NPUSCOPE_H'; echo '#define NPUSCOPE_H'; \
	   for h in $(notdir $(PUB_HDRS)); do echo "#include <npuscope/$$h>"; done; \
	   echo '#endif'; } > $@

headers: $(PUB_OUT)

$(BUILD)/gen/npuscope.dyn: $(PUB_OUT)
	@mkdir -p $(dir $@)
	@{ echo '{'; $(CC) -E -P -D_GNU_SOURCE -I$(BUILD)/include $(PUB_DIR)/npuscope.h | \
	   grep -oE '\b(tl|sim|diag)_[a-z0-9_]+ *\(' | sed 's/ *($$//' | sort -u | \
	   sed 's/.*/    &;/'; echo '};'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/npuscope.pc: Makefile sim/kernel/plugin.h
	@{ echo 'prefix=$(PREFIX)'; echo 'includedir=$${prefix}/include'; \
	   echo 'libdir=$${prefix}/lib'; echo 'plugindir=$${libdir}/npuscope/plugins'; \
	   echo 'abi_version=$(PLUGIN_ABI)'; echo; echo 'Name: npuscope'; \
	   echo 'Description: npuscope NPU simulator: the public kernel API for plug-ins'; \
	   echo 'Version: $(VERSION)'; echo 'Cflags: -I$${includedir}'; } > $@

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
	@{ echo '/* Generated by the Makefile from sim/configs, themes and sim/kernels: do not edit. */'; \
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

# Plug-ins the tests build use the same sanitizer flags as the binary they are loaded into.
export NPUSCOPE_PLUGIN_CFLAGS := $(SAN_FLAGS)

# The plug-ins the tests build include the installed API (<npuscope/...>): checked against the
# generated headers, as a user's plug-in is built.
PLUGIN_SRC := $(wildcard tests/plugins/*.c)
PLUGIN_OK  := $(PLUGIN_SRC:%.c=$(BUILD)/obj/clang-syntax/%.plugin.ok)
CLANG_OK   += $(PLUGIN_OK)
$(BUILD)/obj/clang-syntax/%.plugin.ok: %.c $(PUB_OUT)
	@mkdir -p $(dir $@)
	@echo "  CLANG $<"
	@clang -I$(BUILD)/include -MD -MF $(@:.ok=.d) -MT $@ -std=c11 $(WARN) -fsyntax-only $<
	@touch $@

test: $(if $(SAN),,npuscope $(CLANG_OK)) $(BIN) $(UNIT_BIN) $(FUZZ_REPLAY) headers
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
# that they share no data; so does the loader's second thread (tests/tsan/load_tsan.c).
# Criterion cannot start under TSan, so tests/tsan/ holds plain programs.
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
	    $(CLANG_BUILD)/npuscope $(CLANG_BUILD)/tests/unit_tests \
	    $(PLUGIN_SRC:%.c=$(CLANG_BUILD)/obj/clang-syntax/%.plugin.ok)

# --- benchmarks ----------------------------------------------------------------------------
$(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -O3 $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# plugin_bench loads plug-ins: the whole library, its symbols exported to them
$(BUILD)/bench/plugin_bench: tests/bench/plugin_bench.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -O3 $(LDFLAGS) -rdynamic -o $@ $< -Wl,--whole-archive $(LIB) \
	    -Wl,--no-whole-archive $(LDLIBS)

bench: npuscope nosites $(BENCH_BIN)
	@tests/bench/run $(BUILD)

# The binary with the kernels' call sites compiled out (tl.h's TL_NO_SITES), in
# $(BUILD)/nosites/: srcsite_bench compares what recording them costs.
nosites:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/nosites OPT="$(OPT) -DTL_NO_SITES=" \
	    $(BUILD)/nosites/npuscope

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
# The binary, its man page and themes, the public headers, pkg-config's npuscope.pc (made
# for this PREFIX) and the directory installed plug-ins go to.
install: $(BIN) headers
	@rm -f $(BUILD)/npuscope.pc
	@$(MAKE) --no-print-directory $(BUILD)/npuscope.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/npuscope/themes $(DESTDIR)$(PREFIX)/include/npuscope \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/npuscope/plugins
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/npuscope
	install -m 644 $(PUB_OUT) $(DESTDIR)$(PREFIX)/include/npuscope/
	install -m 644 $(BUILD)/npuscope.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/npuscope.pc
	install -m 644 tui/npuscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/npuscope.1
	$(if $(wildcard themes/*.yaml),install -m 644 themes/*.yaml $(DESTDIR)$(PREFIX)/share/npuscope/themes/)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/npuscope $(DESTDIR)$(PREFIX)/share/man/man1/npuscope.1
	rm -rf $(DESTDIR)$(PREFIX)/share/npuscope $(DESTDIR)$(PREFIX)/include/npuscope
	rm -f $(DESTDIR)$(PREFIX)/lib/pkgconfig/npuscope.pc
	-rmdir $(DESTDIR)$(PREFIX)/lib/npuscope/plugins $(DESTDIR)$(PREFIX)/lib/npuscope 2>/dev/null

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
