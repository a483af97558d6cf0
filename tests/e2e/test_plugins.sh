#!/usr/bin/env bash
# Kernel plug-ins end to end: the installed public API (headers, npuscope.pc, the binary's
# exported symbols), `npuscope kernel new` built against an install and verified at odd
# sizes, a built-in kernel copied out as a plug-in giving the same trace, a kernel that
# branches on its data, plug-ins that crash or loop (the report, the partial trace, the
# terminal in tmux), plug-ins that npuscope refuses before the run, and the listings and
# search path. The plug-ins (tests/plugins/*.c) are built with the binary's sanitizer flags
# (NPUSCOPE_PLUGIN_CFLAGS, exported by the Makefile).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
BUILD=${NPUSCOPE_BUILD:-$ROOT/build}
INC=$BUILD/include
PCFLAGS=${NPUSCOPE_PLUGIN_CFLAGS:-}
export XDG_DATA_HOME=$TMP/xdg # no plug-in of the user's
unset NPUSCOPE_PLUGIN_PATH
export SOURCE_DATE_EPOCH=1764498765
P=$TESTS_DIR/plugins

# plugin OUT.so SRC.c [CFLAGS...]: build a plug-in against the build tree's headers.
plugin() {
    local out=$1 src=$2; shift 2
    if ! cc -shared -fPIC -O1 -g -Wall -Wextra -Werror $PCFLAGS -I"$INC" "$@" "$src" -o "$out" \
        2>"$TMP/cc.err"; then
        fail "build $(basename "$out")" "$(cat "$TMP/cc.err")"
        return 1
    fi
}

echo "== the public API"
hdrs_ok=1
for h in "$INC"/npuscope/*.h; do
    printf '#include <npuscope/%s>\n' "$(basename "$h")" >"$TMP/one.c"
    if ! cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$INC" "$TMP/one.c" 2>"$TMP/cc.err"; then
        hdrs_ok=0
        fail "header $(basename "$h") alone" "$(cat "$TMP/cc.err")"
    fi
done
[ $hdrs_ok = 1 ] && ok "every public header compiles alone"
if grep -q '#include "' "$INC"/npuscope/*.h; then fail "public headers include only <npuscope/...>"; else
    ok "public headers include only <npuscope/...>"; fi
syms=$(nm -D --defined-only "$NPUSCOPE" | awk '$2 == "T" {print $3}')
if grep -qx tl_load <<<"$syms" && grep -qx sim_kbuild_tensor <<<"$syms" &&
    grep -qx sim_tensor_get <<<"$syms"; then ok "the binary exports the kernel API"; else
    fail "the binary exports the kernel API" "$(head -5 <<<"$syms")"; fi
others=$(grep -vE '^(tl|sim|diag)_' <<<"$syms" | grep -vE '^(_init|_fini|main|_start|__.*)$')
if [ -z "$others" ] && ! grep -qxE 'sim_engine_run|sim_chip_new|sim_proc_fail|tl_context_new' <<<"$syms"
then ok "and nothing else (no internals)"; else fail "and nothing else" "$others"; fi

echo "== make install, pkg-config, npuscope kernel new"
INST=$TMP/inst
if make -s -C "$ROOT" BUILD="$BUILD" ${PCFLAGS:+SAN=1} install DESTDIR="$INST" PREFIX=/usr \
    >"$TMP/install.log" 2>&1; then ok "make install DESTDIR PREFIX=/usr"; else
    fail "make install" "$(tail -5 "$TMP/install.log")"; fi
export PKG_CONFIG_PATH=$INST/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$INST
run pkg-config --cflags npuscope
expect_out "pkg-config --cflags" "^-I$INST/usr/include *$"
run pkg-config --variable=abi_version npuscope
expect_out "npuscope.pc: abi_version" "^[0-9]+$"
abi=$(sed -n 's/^#define NPUSCOPE_PLUGIN_ABI_VERSION \([0-9]*\).*/\1/p' "$INST/usr/include/npuscope/plugin.h")
[ "$OUT" = "$abi" ] && ok "abi_version is NPUSCOPE_PLUGIN_ABI_VERSION ($abi)" ||
    fail "abi_version" "pc $OUT, header $abi"
run pkg-config --variable=plugindir npuscope
expect_out "npuscope.pc: plugindir" "^$INST/usr/lib/npuscope/plugins$"
[ -f "$INST/usr/include/npuscope/npuscope.h" ] && ok "the umbrella header is installed" ||
    fail "the umbrella header is installed"

NEWBIN=$INST/usr/bin/npuscope
run "$NEWBIN" kernel new mykern "$TMP/proj"
expect_status "kernel new" 0
for f in mykern.c Makefile README.md; do
    [ -s "$TMP/proj/$f" ] && ok "kernel new wrote $f" || fail "kernel new wrote $f"; done
if (cd "$TMP/proj" && make CFLAGS="-O1 -g -Wall -Wextra -Werror $PCFLAGS" >"$TMP/make.log" 2>&1)
then ok "the project builds with its Makefile (pkg-config)"; else
    fail "the project builds" "$(tail -5 "$TMP/make.log")"; fi
grep -q -- "-I$INST/usr/include" "$TMP/make.log" && ok "against the installed headers" ||
    fail "against the installed headers" "$(cat "$TMP/make.log")"
cd "$TMP/proj" || exit 1
for n in 1 4099 4097 40000; do
    run "$NEWBIN" run --headless --plugin ./mykern.so -k "mykern:n=$n" --verify
    if [ "$STATUS" -eq 0 ] && grep -q '^verify: PASS' <<<"$OUT"; then ok "mykern n=$n verifies"; else
        fail "mykern n=$n verifies" "exit $STATUS" "$ERR" "$(tail -3 <<<"$OUT")"; fi
done
run "$NEWBIN" run --headless -c "$ROOT/sim/configs/tiny.yaml" --plugin ./mykern.so \
    -k "mykern:n=3001,pes=2,dtype=i32" --verify
if [ "$STATUS" -eq 0 ] && grep -q '^verify: PASS' <<<"$OUT"; then
    ok "mykern tiles through a 16 KiB TCM on 2 PEs (i32)"; else
    fail "mykern on tiny" "exit $STATUS" "$ERR" "$(tail -3 <<<"$OUT")"; fi
"$NEWBIN" run --headless -c "$ROOT/sim/configs/tiny.yaml" --plugin ./mykern.so \
    -k mykern:n=3001 -o "$TMP/tiles.json" >/dev/null 2>&1
tiles=$(grep -c '"op":"dma_read"' "$TMP/tiles.json")
[ "$tiles" -gt 2 ] && ok "it loads in tiles ($tiles loads)" || fail "tiles" "$tiles loads"
# installed in the install's plugindir: found without --plugin
cp mykern.so "$INST/usr/lib/npuscope/plugins/"
run "$NEWBIN" run --headless -k mykern:n=33 --verify
expect_status "a plug-in in the install's plugindir is loaded" 0
run "$NEWBIN" kernels
expect_out "npuscope kernels lists it with its file" "from: +$INST/usr/lib/npuscope/plugins/mykern\.so"
rm "$INST/usr/lib/npuscope/plugins/mykern.so"
make -s NPUSCOPE_INCLUDE="$INC" clean mykern.so >/dev/null 2>&1 && ok "NPUSCOPE_INCLUDE builds it" ||
    fail "NPUSCOPE_INCLUDE builds it"
cd "$TMP" || exit 1
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

run "$NPUSCOPE" kernel new 9lives "$TMP/x"
expect_status "kernel new: a name that is not a C identifier" 2
expect_one_line "kernel new: one line"
expect_err "kernel new: says why" "not a name for a kernel"
run "$NPUSCOPE" kernel new okname "$TMP/proj"
expect_status "kernel new: a non-empty target" 2
expect_err "kernel new: names it" "proj: exists and is not an empty directory"
run "$NPUSCOPE" kernel new vector_add "$TMP/y"
expect_status "kernel new: a built-in's name" 2

echo "== a built-in kernel copied out as a plug-in"
sed -e 's|#include "sim/kernel/kernel.h"|#include <npuscope/npuscope.h>|' \
    -e '/#include "sim\/kernel\/tl.h"/d' \
    -e 's/^const struct sim_kernel sim_kernel_vector_add = {/static const struct sim_kernel k = {/' \
    -e 's/\.name = "vector_add"/.name = "vadd_copy"/' "$ROOT/sim/kernels/vector_add.c" >"$TMP/vadd.c"
cat >>"$TMP/vadd.c" <<'EOF'

static const struct sim_kernel *const kernels[] = {&k, NULL};
NPUSCOPE_PLUGIN_EXPORT const struct npuscope_plugin npuscope_plugin = {
    .abi_version = NPUSCOPE_PLUGIN_ABI_VERSION, .name = "vadd", .version = "1", .kernels = kernels};
EOF
if plugin "$TMP/vadd.so" "$TMP/vadd.c"; then
    "$NPUSCOPE" run --headless -k vector_add:n=10007,pes=3 -o "$TMP/builtin.json" >/dev/null 2>&1
    run "$NPUSCOPE" run --headless --plugin "$TMP/vadd.so" -k vadd_copy:n=10007,pes=3 \
        -o "$TMP/copy.json"
    expect_status "the copy runs" 0
    # the call sites name each kernel's own source file (a line apart: the copy lost an
    # include): compared apart
    nosrc() { sed -E 's/,"src":"[^"]*","src_func":"[^"]*"//g'; }
    grep -v '^"run_metadata"' "$TMP/builtin.json" | nosrc >"$TMP/a"
    grep -v '^"run_metadata"' "$TMP/copy.json" | sed 's/vadd_copy/vector_add/g' | nosrc >"$TMP/b"
    if grep -q '"src":"vadd\.c:[0-9]*","src_func":"vector_add"' "$TMP/copy.json"; then
        ok "a plug-in's ops carry its own call sites (vadd.c:LINE)"
    else fail "a plug-in's ops carry its own call sites" "$(grep -m1 -o '"src":"[^"]*"' "$TMP/copy.json")"; fi
    n=$(grep -c '"type":"ENGINE_EVENT"' "$TMP/a")
    if [ "$n" -gt 10 ] && cmp -s "$TMP/a" "$TMP/b"; then
        ok "its trace is the built-in's, event for event ($n engine events)"; else
        fail "same trace" "$(diff "$TMP/a" "$TMP/b" | head -5)"; fi
    run "$NPUSCOPE" run --headless --plugin "$TMP/vadd.so" -k vadd_copy:n=4097,dtype=i8 --verify
    expect_out "the copy verifies against its reference" "^verify: PASS"
fi

echo "== a kernel that branches on loaded data"
if plugin "$TMP/branch.so" "$P/branch.c" -lm; then
    for v in 1 -1; do
        run "$NPUSCOPE" run --headless --plugin "$TMP/branch.so" -k "branch:data=fill:$v" --verify \
            -o "$TMP/branch.json"
        expect_out "branch data=fill:$v verifies" "^verify: PASS"
        want=$([ "$v" = 1 ] && echo exp || echo neg)
        grep -q "\"name\":\"branch.$want\"" "$TMP/branch.json" && ok "and took the $want path" ||
            fail "branch path $want"
    done
    run "$NPUSCOPE" run --headless --plugin "$TMP/branch.so" -k branch:n=1001 --verify --dump "$TMP/dump"
    expect_out "random data verifies" "^verify: PASS"
    grep -q '"y"' "$TMP/dump/manifest.json" && ok "--dump names the plug-in's arguments" ||
        fail "--dump names the arguments"
    # a workload's KernelLaunch finds it by kernel_ref.name
    cat >"$TMP/wl.yaml" <<'EOF'
messages:
- {msg_type: MemoryWrite, correlation_id: c1, request_id: w, target_device: "sip:0",
   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 256, dst_mem_kind: HBM,
   src_kind: pattern, pattern: {pattern_kind: fill_fp32, value: 2.0}, dtype: f32}
- msg_type: KernelLaunch
  correlation_id: c1
  request_id: k
  target_device: "sip:0"
  kernel_ref: {name: branch, kind: builtin, deploy_sip: 0, deploy_cube: 0, deploy_pe: 0,
               nbytes_code: 0}
  args:
  - {arg_kind: tensor, dtype: f32, shape: [64], tensor_pa_map: {shards: [
     {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 256, offset_bytes: 0}]}}
  - {arg_kind: tensor, dtype: f32, shape: [64], tensor_pa_map: {shards: [
     {sip: 0, cube: 0, pe: 0, pa: 4096, nbytes: 256, offset_bytes: 0}]}}
- {msg_type: MemoryRead, correlation_id: c1, request_id: r, target_device: "sip:0",
   src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 4096, nbytes: 256, dst_kind: host_sink}
EOF
    run "$NPUSCOPE" run --headless --plugin "$TMP/branch.so" -w "$TMP/wl.yaml" --verify \
        -o "$TMP/wl.json"
    expect_out "a workload's KernelLaunch runs it by name, verified" "^verify: PASS"
    grep -q '"name":"branch.exp"' "$TMP/wl.json" && ok "on the workload's data" ||
        fail "on the workload's data" "$ERR"
fi

echo "== a kernel that crashes"
if plugin "$TMP/crash.so" "$P/crash.c"; then
    run "$NPUSCOPE" run --headless --plugin "$TMP/crash.so" -k crash -o "$TMP/crash.json"
    expect_status "exit 1" 1
    expect_err "one line naming kernel, PE, time, last call" \
        "^npuscope: kernel 'crash' on sip0\.cube0\.pe0 crashed with SIGSEGV \(invalid memory access\) at [0-9.]+ ns simulated; its last tl call was tl_get\(\)$"
    if grep -qE '"name":"INVALID_TRACE","cycle":[0-9]+,"component_id":"sip0\.cube0\.pe0\.pe_cpu","details":\{"kernel":"crash","cmdq_id":[0-9]+,"error":"kernel .crash. on sip0\.cube0\.pe0 crashed with SIGSEGV' "$TMP/crash.json"
    then ok "the partial trace has the INVALID_TRACE marker"; else
        fail "INVALID_TRACE marker" "$(grep -o 'INVALID_TRACE.*' "$TMP/crash.json" | head -2)"; fi
    run "$NPUSCOPE" validate "$TMP/crash.json"
    expect_status "the partial trace is valid" 0
    plugin "$TMP/abort.so" "$P/crash.c" -DCRASH_ABORT &&
        run "$NPUSCOPE" run --headless --plugin "$TMP/abort.so" -k crash
    expect_status "abort(): exit 1" 1
    expect_err "abort(): the line" "crashed with SIGABRT \(abort\)"

    plugin "$TMP/setup.so" "$P/crash.c" -DCRASH_SETUP &&
        run "$NPUSCOPE" run --headless --plugin "$TMP/setup.so" -k crash
    expect_status "a crash in a plug-in's setup: exit 1" 1
    expect_one_line "a crash in a plug-in's setup: one line"
    expect_err "naming the plug-ins loaded" \
        "^npuscope: crashed with SIGSEGV \(invalid memory access\) outside any kernel instance \(in a plug-in's setup or reference, or in npuscope; plug-ins loaded: $TMP/setup\.so\)$"
    plugin "$TMP/misuse.so" "$P/crash.c" -DMISUSE &&
        run "$NPUSCOPE" run --headless --plugin "$TMP/misuse.so" -k crash
    expect_status "API misuse: the run fails (exit 1)" 1
    expect_err "API misuse: today's line, naming the plug-in's kernel" \
        "^npuscope: kernel 'crash' on sip0\.cube0\.pe0: tl_dot\(\)"

    tmux_start 100 30 "XDG_DATA_HOME=$XDG_DATA_HOME" -- run --plugin "$TMP/crash.so" -k crash \
        -o "$TMP/tui-crash.json"
    expect_exit "TUI: a crash exits 1 with the terminal restored" 1
    expect_screen "TUI: the line on the screen" "kernel 'crash' on sip0\.cube0\.pe0 crashed with SIGSEGV"
    grep -q INVALID_TRACE "$TMP/tui-crash.json" && ok "TUI: the trace has the marker" ||
        fail "TUI: the trace has the marker"
fi

echo "== going back in the TUI: the checkpoint's copy has the plug-ins and the guard"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color "XDG_DATA_HOME=$XDG_DATA_HOME")
for k in crash spin; do
    [ -f "$TMP/$k.so" ] || plugin "$TMP/$k.so" "$P/$k.c" || continue
    tmux_start 160 40 "${UTF8[@]}" -- run --paused --plugin "$TMP/$k.so" -k "$k" --watchdog 1 \
        -o "$TMP/back-$k.json"
    expect_screen "$k: paused before the first event" 'events: 0 '
    for i in 1 2 3 4; do tmux_keys s; tmux_wait "events: $i " 5; done
    tmux_keys p
    expect_screen "$k: p goes back (a copy of a checkpoint)" 'events: 3 \(reached backwards\)'
    tmux_keys c
    expect_exit "$k: the copy stops on the kernel, exit 1, terminal restored" 1
    expect_screen "$k: the line" "kernel '$k' on sip0\.cube0\.pe0 (crashed|stopped by the watchdog)"
    grep -q '"name":"INVALID_TRACE"' "$TMP/back-$k.json" && ok "$k: the trace has the marker" ||
        fail "$k: the trace has the marker"
done

echo "== Ctrl-R: the plug-ins reloaded from disk, the run started again"
mkdir -p "$TMP/rl"
if plugin "$TMP/rl/reps.so" "$P/reps.c" -DREPS=2; then
    tmux_start 160 40 "${UTF8[@]}" -- run --paused --speed 1000 --plugin "$TMP/rl/reps.so" -k reps \
        -o "$TMP/rl/t.json"
    expect_screen "paused before the first event" ' PAUSED +now 0 '
    tmux_keys '{'
    expect_screen "{: slower, 100 events a second" 'speed: 100 ev/s'
    tmux_keys B 'o dma_read' Enter
    expect_screen "a breakpoint on the loads" 'breakpoint 1: op dma_read starts'
    tmux_keys Space
    expect_screen "it fires" ' PAUSED .*breakpoint 1'
    tmux_screen; hit=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
    tmux_keys + +
    tmux_wait '[0-9.]+ cyc/col *$|[0-9.]+ cyc/col  ' 5
    tmux_screen; zoom=$(grep -m1 -oE '[0-9.]+ cyc/col( \(fit\))?' <<<"$SCREEN")
    case $zoom in *fit* | "") fail "+ +: zoomed in" "$zoom" ;; *) ok "+ +: zoomed in ($zoom)" ;; esac
    plugin "$TMP/rl/reps.so" "$P/reps.c" -DREPS=5 # rebuilt, changed
    tmux_keys C-r
    expect_screen "Ctrl-R: a new run from event 0 (paused, as the command line says)" \
        ' PAUSED +now 0 .*events: 0 '
    expect_screen "the speed is kept" ' speed 100 ev/s '
    tmux_keys X
    expect_screen "the breakpoint is kept (its count starts again)" '1: op dma_read starts, hit 0 times'
    tmux_keys Escape Space
    expect_screen "it fires in the new run" ' PAUSED .*breakpoint 1'
    tmux_screen; hit2=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
    [ -n "$hit" ] && [ "$hit" = "$hit2" ] && ok "at the same event as before ($hit)" ||
        fail "at the same event" "before $hit, now $hit2"
    tmux_keys X d Escape c c c c c
    expect_screen "the new run finishes" ' FINISHED '
    expect_screen "with the zoom kept" "${zoom//./\\.}"
    rm -f "$TMP/rl/reps.so" # broken: a new file, not the one the run has mapped
    printf 'not a shared object\n' >"$TMP/rl/reps.so"
    tmux_screen; before=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN")
    tmux_keys C-r
    expect_screen "a plug-in that no longer loads: the error in the status line" \
        "reload failed, this run stays: $TMP/rl/reps\.so: cannot load the plug-in"
    expect_screen "and the old run stays on screen" " FINISHED .*$before "
    tmux_keys q
    expect_exit "q: exit 0, the terminal restored" 0
    n=$(grep -c '"op":"dma_read"' "$TMP/rl/t.json")
    [ "$n" = 5 ] && ok "the trace is the new run's: 5 loads, the rebuilt plug-in's" ||
        fail "the trace is the new run's" "$n loads"
fi

echo "== Ctrl-R replaces the run's process: no process more per reload"
# the processes of the window's session that run npuscope (the reloaded image's name is the
# one /proc/self/exe gives, its arguments npuscope's), but the shell the window started
session_procs() {
    local sh
    sh=$(tmux_format '#{pane_pid}')
    pgrep -s "$sh" -f -- "$NPUSCOPE run" | grep -vx "$sh" | wc -l
}
# the count once it stops changing (checkpoints are taken and ended as a run starts)
settled_procs() {
    local a b i
    a=$(session_procs)
    for ((i = 0; i < 20; i++)); do
        sleep 0.3
        b=$(session_procs)
        [ "$a" = "$b" ] && break
        a=$b
    done
    echo "$a"
}
if plugin "$TMP/rl/reps.so" "$P/reps.c"; then
    tmux_start 160 40 "${UTF8[@]}" -- run --paused --plugin "$TMP/rl/reps.so" -k reps
    expect_screen "paused before the first event" ' PAUSED +now 0 '
    n0=$(settled_procs)
    tmux_keys Space
    expect_screen "the run finishes" ' FINISHED '
    tmux_keys C-r
    expect_screen "Ctrl-R: a new run, paused at 0" ' PAUSED +now 0 .*events: 0 '
    tmux_keys Space
    expect_screen "it finishes" ' FINISHED '
    tmux_keys C-r
    expect_screen "Ctrl-R again: paused at 0" ' PAUSED +now 0 .*events: 0 '
    n2=$(settled_procs)
    [ "$n0" -ge 1 ] && [ "$n2" = "$n0" ] &&
        ok "after two reloads, as many processes as after the start ($n0)" ||
        fail "as many processes after two reloads" "at the start $n0, after two Ctrl-R $n2" \
            "$(ps -o pid,ppid,stat,args -s "$(tmux_format '#{pane_pid}')")"
    tmux_keys q
    expect_exit "q: exit 0" 0
fi

echo "== a kernel that loops"
if plugin "$TMP/spin.so" "$P/spin.c"; then
    start=$(date +%s)
    run timeout 60 "$NPUSCOPE" run --headless --plugin "$TMP/spin.so" -k spin --watchdog 1 \
        -o "$TMP/spin.json"
    expect_status "the watchdog stops it: exit 1" 1
    [ $(($(date +%s) - start)) -lt 30 ] && ok "within seconds" || fail "within seconds"
    expect_err "one line naming kernel and PE" \
        "^npuscope: kernel 'spin' on sip0\.cube0\.pe0 stopped by the watchdog at [0-9.]+ ns simulated: no engine event and no tl call for 1 s of wall time"
    grep -q '"error":"kernel .spin. on sip0\.cube0\.pe0 stopped by the watchdog' "$TMP/spin.json" &&
        ok "the trace has the marker" || fail "the trace has the marker"
    run "$NPUSCOPE" run --headless --plugin "$TMP/spin.so" -k spin --watchdog soon
    expect_status "--watchdog soon: usage" 2
    tmux_start 100 30 "XDG_DATA_HOME=$XDG_DATA_HOME" -- run --plugin "$TMP/spin.so" -k spin \
        --watchdog 1
    expect_exit "TUI: the watchdog exits 1 with the terminal restored" 1
    expect_screen "TUI: the line" "kernel 'spin' on sip0\.cube0\.pe0 stopped by the watchdog"
fi

echo "== a sweep over a plug-in's kernel"
mkdir -p "$TMP/sw"
cp "$TMP/branch.so" "$TMP/sw/"
cat >"$TMP/sw/sweep.yaml" <<'EOF'
plugins: [branch.so]        # from the sweep file's directory
kernel: branch
axes:
  n: [64, 1000]
EOF
run "$NPUSCOPE" sweep "$TMP/sw/sweep.yaml" -o "$TMP/sw/out" --engine local
expect_status "the sweep runs" 0
run "$NPUSCOPE" sweep --collect "$TMP/sw/out" --csv
if [ "$(grep -cE '^[0-9]+,(64|1000),ok,' <<<"$OUT")" -eq 2 ]; then
    ok "both points ran"; else fail "both points ran" "$OUT"; fi
grep -q -- "--plugin $TMP/sw/branch.so" "$TMP/sw/out/points.jsonl" &&
    ok "a point's command names the plug-in" || fail "a point's command names the plug-in"
printf 'plugins: [nothere.so]\nkernel: branch\n' >"$TMP/sw/bad.yaml"
run "$NPUSCOPE" sweep "$TMP/sw/bad.yaml" -o "$TMP/sw/out2" --engine local
expect_status "a sweep naming a missing plug-in: exit 2" 2
expect_err "names the sweep file's line" "bad\.yaml:1:.*nothere\.so: cannot load the plug-in"

echo "== a component timing model from a plug-in"
# The example DMA model (tests/plugins/sizedma.c): setup_ns + K * ceil(nbytes / 1024), then
# the built-in data phase. Against the built-in model on the same run, every DMA op lasts
# exactly K * ceil(nbytes / 1024) ns longer (one channel: no overlap shifts the contention).
K=12
cat >"$TMP/dma.yaml" <<'EOF'
chip: {name: t, clock_ghz: 1, sips: 1, cubes_per_sip: 1, pes_per_cube: 1}
pe: {dma: {model: sizedma, channels: 1}}
memory:
  hbm: {capacity_bytes: 1073741824}
  sram: {capacity_bytes: 16777216}
  tcm: {capacity_bytes: 16384}
EOF
sed 's/model: sizedma, //' "$TMP/dma.yaml" >"$TMP/base.yaml"
if plugin "$TMP/sizedma.so" "$P/sizedma.c" -DSIZEDMA_NS_PER_KIB=$K; then
    "$NPUSCOPE" run --headless -c "$TMP/base.yaml" -k vector_add:n=3001 -o "$TMP/m0.json" \
        >/dev/null 2>&1
    run "$NPUSCOPE" run --headless --plugin "$TMP/sizedma.so" -c "$TMP/dma.yaml" \
        -k vector_add:n=3001 --verify -o "$TMP/m1.json"
    expect_status "a run with the plug-in's DMA model" 0
    expect_out "the summary names the model and its file" \
        "^model +pe\.dma: sizedma \(from $TMP/sizedma\.so\)$"
    expect_out "and it still verifies" "^verify: PASS"
    grep -q '"dma":{"model":"sizedma"' "$TMP/m1.json" && ok "config_snapshot names it" ||
        fail "config_snapshot names it" "$(grep -o '"dma":{[^}]*}' "$TMP/m1.json")"
    # per DMA op: (nbytes, start, end) on each side, then the difference against the formula
    ops() { grep '"op":"dma_' "$1" | sed -E 's/.*"t_start_ns":([0-9.]+),"t_end_ns":([0-9.]+).*"nbytes":([0-9]+).*/\3 \1 \2/'; }
    got=$(paste -d' ' <(ops "$TMP/m0.json") <(ops "$TMP/m1.json") | awk -v k=$K '
        { n++; want = k * int(($1 + 1023) / 1024); d = ($6 - $5) - ($3 - $2)
          if ($1 != $4 || d - want > 1e-6 || want - d > 1e-6) { bad++; print "op " n ": " $1 " bytes, +" d " ns, want +" want }
          sizes[$1] = 1 }
        END { m = 0; for (s in sizes) m++; print "ops " n " sizes " m " bad " bad + 0 }')
    if grep -qE '^ops ([5-9]|[1-9][0-9]+) sizes ([2-9]|[1-9][0-9]+) bad 0$' <<<"$got"; then
        ok "every DMA op lasts K * ceil(nbytes / 1024) ns longer than built in ($(tail -1 <<<"$got"))"
    else fail "DMA ops follow the model's formula" "$got"; fi
    t0=$(grep -o '"cycles_total":[0-9]*' "$TMP/m0.json"); t1=$(grep -o '"cycles_total":[0-9]*' "$TMP/m1.json")
    [ "${t1#*:}" -gt "${t0#*:}" ] && ok "the run takes longer (${t0#*:} -> ${t1#*:} cycles)" ||
        fail "the run takes longer" "$t0 $t1"
    run "$NPUSCOPE" diff "$TMP/m0.json" "$TMP/m1.json"
    expect_out "npuscope diff names the model" 'pe\.dma\.model +\(missing\) -> "sizedma"'
    run "$NPUSCOPE" summary "$TMP/m1.json"
    expect_out "npuscope summary names it" '^  model +pe\.dma: sizedma$'
    # a sweep whose axis is the model
    mkdir -p "$TMP/msw"
    cp "$TMP/sizedma.so" "$TMP/base.yaml" "$TMP/msw/"
    printf 'plugins: [sizedma.so]\nchip: base.yaml\nkernel: vector_add\naxes:\n  n: [3001]\n  pe.dma.model: [builtin, sizedma]\n' \
        >"$TMP/msw/sweep.yaml"
    run "$NPUSCOPE" sweep "$TMP/msw/sweep.yaml" -o "$TMP/msw/out" --engine local
    expect_status "a sweep over pe.dma.model runs" 0
    run "$NPUSCOPE" sweep --collect "$TMP/msw/out" --csv
    c0=$(grep -E '^[0-9]+,3001,builtin,ok,' <<<"$OUT" | cut -d, -f5)
    c1=$(grep -E '^[0-9]+,3001,sizedma,ok,' <<<"$OUT" | cut -d, -f5)
    [ -n "$c0" ] && [ "$c0" = "${t0#*:}" ] && [ "$c1" = "${t1#*:}" ] &&
        ok "its points are the two runs above ($c0 and $c1 cycles)" ||
        fail "the sweep's points" "$OUT"
    run "$NPUSCOPE" kernels --plugin "$TMP/sizedma.so"
    expect_out "npuscope kernels lists the model" "^model sizedma \(pe_dma\)$"
    expect_out "with its formula" "setup_ns \+ $K ns per KiB started"
    # a config naming a model no loaded plug-in provides
    run "$NPUSCOPE" run --headless -c "$TMP/dma.yaml" -k vector_add -o "$TMP/never.json"
    expect_status "a model no plug-in provides: exit 2" 2
    expect_one_line "a model no plug-in provides: one line"
    expect_err "names the file, the line and the key" \
        "^$TMP/dma\.yaml:2:19: key 'pe\.dma\.model': no pe_dma model 'sizedma' is loaded: 'builtin' or a model of a plug-in"
    [ ! -e "$TMP/never.json" ] && ok "before the run" || fail "before the run"
    sed 's/sizedma/sizdma/' "$TMP/dma.yaml" >"$TMP/typo.yaml"
    run "$NPUSCOPE" run --headless --plugin "$TMP/sizedma.so" -c "$TMP/typo.yaml" -k vector_add
    expect_status "a misspelt model: exit 2" 2
    expect_err "did you mean" "^$TMP/typo\.yaml:2:19: key 'pe\.dma\.model': no pe_dma model 'sizdma' is loaded \(did you mean 'sizedma'\?\)$"
    sed 's/dma: {model: sizedma, channels: 1}/gemm: {model: sizedma}/' "$TMP/dma.yaml" >"$TMP/kind.yaml"
    run "$NPUSCOPE" run --headless --plugin "$TMP/sizedma.so" -c "$TMP/kind.yaml" -k vector_add
    expect_err "a model of another kind" "key 'pe\.gemm\.model': model 'sizedma' models pe_dma, not pe_gemm$"
fi

echo "== plug-ins npuscope refuses"
refuse() { # NAME REGEX CFLAGS...
    local name=$1 re=$2; shift 2
    plugin "$TMP/bad.so" "$P/bad.c" "$@" || return
    run "$NPUSCOPE" run --headless --plugin "$TMP/bad.so" -k vector_add -o "$TMP/never.json"
    expect_status "$name: exit 2" 2
    expect_one_line "$name: one line"
    expect_err "$name: names the file and the problem" "^$TMP/bad\.so: $re"
    [ ! -e "$TMP/never.json" ] && ok "$name: before the run" || fail "$name: before the run"
    rm -f "$TMP/never.json"
}
refuse "wrong ABI version" "plug-in ABI version 99, this npuscope loads [0-9]+ to [0-9]+" -DBAD_ABI
refuse "no descriptor" "not an npuscope plug-in: it exports no 'npuscope_plugin'" -DNO_DESCRIPTOR
refuse "no kernels" "plug-in 'bad': it lists no kernels and no component models$" -DNO_KERNELS
refuse "NULL kernels" "plug-in 'bad': it lists no kernels \(kernels is NULL\) and no component models$" \
    -DNULL_KERNELS
refuse "a model for the NoC" "plug-in 'bad': model 'badmodel': kind 'noc' is not one a config can choose a model for" \
    -DMODEL_KIND=noc
refuse "a model in an ABI 1 plug-in" "plug-in 'bad': ABI version 1 has no component models" -DMODEL_ABI1
plugin "$TMP/v1.so" "$P/bad.c" -DABI1 -DKERNEL_NAME=old_kernel &&
    run "$NPUSCOPE" kernels --plugin "$TMP/v1.so"
expect_status "a plug-in of ABI version 1 still loads" 0
expect_out "its kernel is listed" "^old_kernel$"
refuse "a kernel without a fn" "plug-in 'bad': kernel 'bad_kernel' has no fn" -DNO_FN
refuse "a kernel without a name" "plug-in 'bad': kernel 0 has no name" -DNO_NAME
refuse "a bad default" "plug-in 'bad': kernel 'bad_kernel': parameter 'n': the default 'many' is not an integer" \
    -DBAD_DEFAULT
refuse "a built-in's name" "plug-in 'bad': kernel 'vector_add' is already defined \(built in\)" \
    -DKERNEL_NAME=vector_add
plugin "$TMP/one.so" "$P/bad.c" -DKERNEL_NAME=twin && plugin "$TMP/two.so" "$P/bad.c" -DKERNEL_NAME=twin
run "$NPUSCOPE" kernels --plugin "$TMP/one.so" --plugin "$TMP/two.so"
expect_status "two plug-ins, one kernel name: exit 2" 2
expect_err "names both files" "^$TMP/two\.so: plug-in 'bad': kernel 'twin' is already defined by $TMP/one\.so$"
plugin "$TMP/internal.so" "$P/internal.c"
run "$NPUSCOPE" run --headless --plugin "$TMP/internal.so" -k vector_add
expect_status "a plug-in calling npuscope's internals: exit 2" 2
expect_err "dlopen names the symbol" "internal\.so: cannot load the plug-in: .*undefined symbol: sim_engine_events"
run "$NPUSCOPE" run --headless --plugin "$P/bad.c" -k vector_add
expect_status "not a shared object: exit 2" 2
expect_one_line "not a shared object: one line"
run "$NPUSCOPE" run --headless --plugin "$TMP/missing.so" -k vector_add
expect_err "a missing file" "missing\.so: cannot load the plug-in: .*No such file"

echo "== listing and the search path"
run "$NPUSCOPE" kernels --plugin "$TMP/branch.so" --plugin "$TMP/crash.so"
expect_status "kernels --plugin" 0
expect_out "lists the plug-in's kernel" "^branch$"
expect_out "with the file it came from" "^    from: +$TMP/branch\.so$"
expect_out "and the built-in ones" "^vector_add$"
mkdir -p "$TMP/pdir" "$XDG_DATA_HOME/npuscope/plugins"
cp "$TMP/crash.so" "$TMP/pdir/"
cp "$TMP/branch.so" "$XDG_DATA_HOME/npuscope/plugins/"
NPUSCOPE_PLUGIN_PATH=$TMP/pdir:$TMP/spin.so run "$NPUSCOPE" kernels
expect_out "NPUSCOPE_PLUGIN_PATH: a directory" "from: +$TMP/pdir/crash\.so"
expect_out "NPUSCOPE_PLUGIN_PATH: a file" "from: +$TMP/spin\.so"
expect_out "XDG_DATA_HOME/npuscope/plugins" "from: +$XDG_DATA_HOME/npuscope/plugins/branch\.so"
run "$NPUSCOPE" run --headless -k branch --verify
expect_out "a kernel of the user's directory runs by name" "^verify: PASS"
rm "$XDG_DATA_HOME/npuscope/plugins/branch.so"
cp "$TMP/bad.so" "$XDG_DATA_HOME/npuscope/plugins/"
run "$NPUSCOPE" run --headless -k vector_add
expect_status "a broken plug-in in the user's directory: exit 2" 2
expect_err "naming it" "^$XDG_DATA_HOME/npuscope/plugins/bad\.so: "

finish
