#!/usr/bin/env bash
# npuscope run --headless, npuscope with no arguments, npuscope kernels, and the errors of
# a run: bad chip and workload files, bad -k arguments, kernel errors.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)

# ---- a kernel with generated data --------------------------------------------------------
run "$NPUSCOPE" run --headless -k vector_add
expect_status "run -k vector_add: exit 0" 0
expect_out "the summary names the run and the chip" '^npuscope run: vector_add on npu-default'
expect_out "simulated time" '^simulated time +[0-9]+\.[0-9]{3} ns'
expect_out "events" '^events +[1-9][0-9]*$'
expect_out "every request answered" '^host requests +5 of 5 answered, 0 failed$'
expect_out "the DMA's busy time and utilization" '^sip0\.cube0\.pe0\.pe_dma +[0-9.]+ +[0-9.]+% +3$'
expect_out "bytes moved per memory" '^sip0\.cube0\.hbm +49152 +65536 '
expect_out "bytes moved per link" '^host->sip0\.io_cpu +[1-9][0-9]* '
if [ -z "$ERR" ]; then ok "nothing on stderr"; else fail "nothing on stderr" "$ERR"; fi

run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -k vector_add:pes=2,n=1000,dtype=f16,seed=3
expect_status "run on tiny with arguments: exit 0" 0
expect_out "on the tiny chip" 'on npu-tiny \(1 sip x 1 cube x 2 PE, 1 GHz\)'
expect_out "both PEs worked" '^sip0\.cube0\.pe1\.pe_math '

# the summary ends with the verdict of the run and of each launch
expect_out "the verdict of the run" '^where the time goes$'
expect_out "the verdict of the launch" '^  vector_add +[a-zA-Z/() ]+ \([0-9]+% of the critical path\)$'

# a large chip: the busiest ten of each table, the rest counted; --all lists every one
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/large.yaml" -k vector_add:pes=32
expect_status "run on large.yaml: exit 0" 0
expect_out "the rest of the components counted" '^\.\.\. +\([0-9]+ more components; --all lists every one\)$'
expect_out "the rest of the links counted" '^\.\.\. +\([0-9]+ more links; --all lists every one\)$'
n_comp=$(awk '/^component /{t=1; next} /^$/{t=0} t' <<<"$OUT" | wc -l)
if [ "$n_comp" -eq 11 ]; then ok "ten component rows and the count"; else fail "ten component rows and the count" "got $n_comp lines"; fi
busiest=$(awk '/^link /{getline; print $NF}' <<<"$OUT" | tr -d %)
others=$(awk '/^link /{t=1; getline; next} /^\.\.\./{t=0} /^$/{t=0} t {print $NF}' <<<"$OUT" | tr -d % | sort -g | tail -1)
if awk -v a="$busiest" -v b="$others" 'BEGIN{exit !(a >= b)}'; then ok "links busiest first"; else fail "links busiest first" "$busiest < $others"; fi
short=$OUT
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/large.yaml" -k vector_add:pes=32 --all
n_all=$(awk '/^link /{t=1; next} /^$/{t=0} t' <<<"$OUT" | wc -l)
n_more=$(sed -n 's/^\.\.\. *(\([0-9]*\) more links.*/\1/p' <<<"$short")
if [ "$n_all" -eq $((n_more + 10)) ]; then ok "--all lists every link"; else fail "--all lists every link" "$n_all rows, expected $((n_more + 10))"; fi
if ! grep -q 'more links' <<<"$OUT"; then ok "--all counts nothing as the rest"; else fail "--all counts nothing as the rest"; fi

# a run past the verdict's model budget says where the verdict is instead
run "$NPUSCOPE" run --headless -k llm_decode:layers=8,gen=64
expect_out "a long run's verdict is pointed to" '^where the time goes: not kept past [0-9]+ events \(write the trace with -o'

# the same run twice prints the same summary
run "$NPUSCOPE" run --headless -k vector_add:pes=4
first=$OUT
run "$NPUSCOPE" run --headless -k vector_add:pes=4
if [ "$first" = "$OUT" ]; then ok "a run is repeatable"; else fail "a run is repeatable"; fi

# ---- no arguments, stdout not a terminal: the embedded demo, headless --------------------
run "$NPUSCOPE"
expect_out "no arguments run the demo workload" '^npuscope run: the demo workload on npu-default'
expect_out "the demo's requests are answered" '^host requests +[0-9]+ of [0-9]+ answered'

# ---- on a terminal (a pty from script(1)) with --headless: the summary, no TUI ------------
# (without --headless a terminal gets the live TUI: test_tui_live.sh)
if command -v script >/dev/null 2>&1; then
    out=$(script -qec "'$NPUSCOPE' run --headless -k vector_add:n=64" /dev/null </dev/null 2>&1)
    if grep -q "^simulated time" <<<"$out" && ! grep -q $'\e\[?1049h' <<<"$out"; then
        ok "--headless on a terminal prints the summary, no full screen"
    else fail "--headless on a terminal prints the summary, no full screen" "${out:0:400}"; fi
    out=$(script -qec "TERM=dumb '$NPUSCOPE' run -k vector_add:n=64" /dev/null </dev/null 2>&1)
    if grep -q "^npuscope: no TUI (TERM=dumb .*): running headless" <<<"$out" &&
        grep -q "^simulated time" <<<"$out"; then ok "a terminal that cannot run the TUI: headless"
    else fail "a terminal that cannot run the TUI: headless" "${out:0:400}"; fi
fi
run "$NPUSCOPE" run --paused -k vector_add:n=64
expect_status "--paused without a terminal: runs headless, exit 0" 0
expect_err "--paused without a terminal: says so" '^npuscope: --paused is for the TUI'
expect_out "--paused without a terminal: the summary" '^simulated time'

# ---- kernels -------------------------------------------------------------------------------
run "$NPUSCOPE" kernels
expect_status "kernels: exit 0" 0
expect_out "lists vector_add" '^vector_add$'
expect_out "with its arguments" 'args: +x \(n\), y \(n\), out \(n\): tensor; n: i32'
expect_out "with its parameters and defaults" 'n=4096 \(int: '

# ---- errors ------------------------------------------------------------------------------
printf 'chip:\n  name: bad\n  clock_ghz: -1\n' >"$TMP/chip.yaml"
run "$NPUSCOPE" run --headless -c "$TMP/chip.yaml" -k vector_add
expect_status "bad chip file: exit 2" 2
expect_err "bad chip file: file, line, column, key" "^$TMP/chip.yaml:3:[0-9]+: key 'chip.clock_ghz': "
expect_one_line "bad chip file: one line"

printf 'messages:\n  - {msg_type: MemoryRead, request_id: r, target_device: "sip:0",\n     src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0, nbytes: 4}\n' >"$TMP/w.yaml"
run "$NPUSCOPE" run --headless -w "$TMP/w.yaml"
expect_status "workload missing a mandatory field: exit 2" 2
expect_err "names the field" "^$TMP/w.yaml:2:[0-9]+: key 'messages\[0\]\.correlation_id': missing mandatory field$"
expect_one_line "bad workload: one line"

run "$NPUSCOPE" run --headless -w "$TMP/none.yaml"
expect_status "missing workload file: exit 2" 2
expect_one_line "missing workload file: one line"

run "$NPUSCOPE" run --headless -k nope
expect_status "unknown kernel: exit 2" 2
expect_err "unknown kernel: message" "^npuscope: unknown kernel 'nope' \(npuscope kernels lists them\)$"
run "$NPUSCOPE" run --headless -k vectr_add
expect_status "a misspelt kernel: exit 2" 2
expect_err "a misspelt kernel: what was meant" "^npuscope: unknown kernel 'vectr_add' \(did you mean 'vector_add'\? npuscope kernels lists them\)$"
expect_one_line "a misspelt kernel: one line"
run "$NPUSCOPE" run --headless -k gemm,m=4
expect_status "arguments after a comma: exit 2" 2
expect_err "arguments after a comma: the ':' that starts them" "^npuscope: unknown kernel 'gemm,m=4': the arguments follow a ':' \(-k gemm:m=4\)$"
run "$NPUSCOPE" run --headless -k vector_add:size=3
expect_status "unknown -k key: exit 2" 2
expect_err "unknown -k key: lists the keys" "unknown key 'size' \(keys: n, pes, dtype, seed, data\)"
run "$NPUSCOPE" run --headless -k vector_add:n=many
expect_status "bad -k value: exit 2" 2
expect_err "bad -k value: message" "key 'n': 'many' is not an integer"

# a kernel error: the launch fails, the run goes on, exit 1 with the kernel and the rule
cat >"$TMP/kerr.yaml" <<'YAML'
messages:
  - {msg_type: MemoryWrite, correlation_id: c, request_id: w, target_device: "sip:0",
     dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 64, src_kind: pattern,
     pattern: {pattern_kind: zero}, dtype: f32}
  - msg_type: KernelLaunch
    correlation_id: c
    request_id: k
    target_device: "sip:0"
    kernel_ref: {name: vector_add, kind: builtin, deploy_sip: 0, deploy_cube: 0, deploy_pe: 0,
                 nbytes_code: 0}
    args:
      - {arg_kind: tensor, dtype: f32, shape: [16], tensor_pa_map: {shards: [
          {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 64, offset_bytes: 0}]}}
      - {arg_kind: tensor, dtype: f32, shape: [16], tensor_pa_map: {shards: [
          {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 64, offset_bytes: 0}]}}
      - {arg_kind: tensor, dtype: f32, shape: [16], tensor_pa_map: {shards: [
          {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 64, offset_bytes: 0}]}}
      - {arg_kind: scalar, dtype: i32, value: 8}
  - {msg_type: MemoryRead, correlation_id: c, request_id: r, target_device: "sip:0",
     src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0, nbytes: 64}
YAML
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -w "$TMP/kerr.yaml"
expect_status "kernel error: exit 1" 1
expect_err "kernel error: names the kernel, the PE and the problem" \
    "^npuscope: kernel 'vector_add' on sip0\.cube0\.pe0: n is 8 but this PE's shard alone holds 16 elements$"
expect_one_line "kernel error: one line"
expect_out "the program went on" '^host requests +3 of 3 answered, 1 failed$'

# failed completions are listed; what the workload says is escaped on the way out
cat >"$TMP/hostile.yaml" <<'YAML'
messages:
  - {msg_type: MemoryRead, correlation_id: "\e]0;pwned\a", request_id: r, target_device: "sip:0",
     src_sip: 0, src_cube: 0, src_pe: 9, src_pa: 0, nbytes: 4}
YAML
run "$NPUSCOPE" run --headless -c "$ROOT/sim/configs/tiny.yaml" -w "$TMP/hostile.yaml"
expect_status "failed completion: exit 1" 1
expect_err "failed completion: request, code and message" "^npuscope: .*/r: E_NO_PE: MemoryRead from sip0\.cube0\.pe9: the chip has no such PE$"
expect_out "failed completions are in the summary" '^  .*/r  E_NO_PE: '
if grep -q $'\e' "$TMP/err" "$TMP/out"; then fail "no ESC byte reaches the terminal"; else
    ok "no ESC byte reaches the terminal"; fi

# running out of memory is reported as such, with how far the run got (never a crash);
# phase 2 keeps every op record, so a long run under a memory limit runs out
if [[ "$NPUSCOPE" == */asan/* ]]; then
    echo "  (out of memory: skipped under AddressSanitizer, which maps its own shadow memory)"
else
    run bash -c "ulimit -v 700000 && exec \"$NPUSCOPE\" run --headless -k llm_decode:layers=32,gen=512 --verify"
    expect_status "out of memory: exit 70" 70
    expect_err "out of memory: says so, with the op records reached" \
        '^npuscope: out of memory .* after [0-9]+ op records, at [0-9.]+ us simulated$'
    expect_one_line "out of memory: one line"
fi

# -o, --chrome and the other trace options: test_run_trace.sh

finish
