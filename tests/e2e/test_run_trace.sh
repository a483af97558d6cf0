#!/usr/bin/env bash
# npuscope run -o / --chrome / --mem-events / --bw-window: the trace of a headless run is
# written atomically, validates clean, reads back in summary and export, and a trace file
# that cannot be written is one line and exit 2 with nothing left behind.
. "$(dirname "$0")/lib.sh"

# ---- a run with a trace ---------------------------------------------------------------------
run "$NPUSCOPE" run -k vector_add --headless -o "$TMP/t.json"
expect_status "run -o: exit 0" 0
expect_out "the summary is still printed" '^simulated time +[0-9]+\.[0-9]{3} ns'
if [ -s "$TMP/t.json" ]; then ok "the trace file is there"; else fail "the trace file is there"; fi
left=$(ls -A "$TMP" | grep -v -e '^t\.json$' -e '^out$' -e '^err$')
if [ -z "$left" ]; then ok "no temporary file left"; else fail "no temporary file left" "$left"; fi

run "$NPUSCOPE" validate "$TMP/t.json"
expect_status "the trace validates clean: exit 0" 0

# vector_add's default: 4096 f32 each of x and y read from HBM, out written back
run "$NPUSCOPE" summary --json "$TMP/t.json"
expect_status "summary: exit 0" 0
expect_out "DRAM bytes read: x and y" '"dram_bytes_read":32768'
expect_out "DRAM bytes written: out" '"dram_bytes_write":16384'
cycles=$(grep -oE '"cycles_total":[0-9]+' <<<"$OUT" | cut -d: -f2)
run "$NPUSCOPE" run -k vector_add --headless
sim=$(grep -oE '^simulated time +[0-9.]+ ns \(([0-9]+) cycles\)' <<<"$OUT" | grep -oE '\([0-9]+' | tr -d '(')
if [ -n "$cycles" ] && [ "$cycles" = "$sim" ]; then ok "cycles_total is the run's length"
else fail "cycles_total is the run's length" "trace $cycles, run $sim"; fi

grep '"type":"ENGINE_EVENT"' "$TMP/t.json" | grep -vc '"engine":"HOST"' >"$TMP/n"
if [ "$(cat "$TMP/n")" = 4 ]; then ok "one ENGINE_EVENT per op record (4)"
else fail "one ENGINE_EVENT per op record (4)" "got $(cat "$TMP/n")"; fi
if grep -q '"type":"MARKER_EVENT","name":"vector_add.begin"' "$TMP/t.json"; then
    ok "the kernel's markers are in the trace"; else fail "the kernel's markers are in the trace"; fi
if grep -q '"type":"MEM_ACCESS_EVENT"' "$TMP/t.json"; then
    fail "no MEM_ACCESS_EVENT without --mem-events"; else ok "no MEM_ACCESS_EVENT without --mem-events"; fi
if grep -q '"incomplete":false' "$TMP/t.json"; then ok "a finished run is not marked incomplete"
else fail "a finished run is not marked incomplete"; fi

# A composite GEMM's tiles move their operands and results through the DMA: its DRAM traffic
# counts. gemm's default: 128 x 128 x 128 f32 over 8 PEs, 16 tiles of 16 rows x 64 columns,
# each reading 16 x 128 of A and 128 x 64 of B (40960 bytes); C (65536 bytes) written once.
run "$NPUSCOPE" run -k gemm --headless -o "$TMP/g.json"
expect_status "run -k gemm -o: exit 0" 0
run "$NPUSCOPE" summary --json "$TMP/g.json"
expect_out "gemm: DRAM bytes read, A and B per tile" '"dram_bytes_read":655360'
expect_out "gemm: DRAM bytes written, C" '"dram_bytes_write":65536'

# ---- --mem-events, --bw-window, --chrome -------------------------------------------------------
run "$NPUSCOPE" run -k vector_add:pes=2 --headless -o "$TMP/m.json" --mem-events --bw-window 256 \
    --chrome "$TMP/c.json"
expect_status "run with --mem-events --bw-window --chrome: exit 0" 0
n=$(grep -c '"type":"MEM_ACCESS_EVENT","mem_type":"DRAM"' "$TMP/m.json")
if [ "$n" = 6 ]; then ok "one DRAM access per transfer (3 per PE)"; else fail "one DRAM access per transfer (3 per PE)" "got $n"; fi
if grep -q '"window_cycles":256' "$TMP/m.json" && ! grep -q '"window_cycles":1024' "$TMP/m.json"; then
    ok "--bw-window sets the sample window"; else fail "--bw-window sets the sample window"; fi
run "$NPUSCOPE" validate "$TMP/m.json"
expect_status "with memory accesses it still validates clean" 0
if head -c 200 "$TMP/c.json" | grep -q '"traceEvents"' && grep -q '"ph":"X"' "$TMP/c.json"; then
    ok "--chrome writes Trace Event JSON with complete events"
else fail "--chrome writes Trace Event JSON with complete events"; fi
run "$NPUSCOPE" export --chrome "$TMP/m.json" -o "$TMP/c2.json"
expect_status "the trace exports to Chrome too" 0

# ---- an LLM kernel: tokens and markers -----------------------------------------------------------
run "$NPUSCOPE" run -k llm_decode:prompt=3,gen=2 --headless -o "$TMP/llm.json"
expect_status "run -k llm_decode -o: exit 0" 0
n=$(grep -c '"type":"TOKEN_EVENT","phase":"PREFILL"' "$TMP/llm.json")
d=$(grep -c '"type":"TOKEN_EVENT","phase":"DECODE"' "$TMP/llm.json")
if [ "$n" = 1 ] && [ "$d" = 2 ]; then ok "a TOKEN_EVENT for the prompt (one step) and per generated token"
else fail "a TOKEN_EVENT for the prompt (one step) and per generated token" "prefill $n, decode $d"; fi
if grep -q '"type":"MARKER_EVENT","name":"PREFILL_DONE"' "$TMP/llm.json"; then ok "its markers"
else fail "its markers"; fi
if grep -q '"workload_type":"LLM_PREFILL_AND_DECODE","tokens":{"prefill_tokens":3,"decode_tokens":2}' "$TMP/llm.json"; then
    ok "run_metadata: the workload type and its tokens"; else fail "run_metadata: the workload type and its tokens"; fi
run "$NPUSCOPE" validate "$TMP/llm.json"
expect_status "it validates clean" 0
run "$NPUSCOPE" summary --json "$TMP/llm.json"
expect_out "summary: prefill latency" '"prefill_latency_cycles":[1-9]'
expect_out "summary: decode latency" '"avg_decode_latency_cycles":[1-9]'

# ---- reproducible with SOURCE_DATE_EPOCH --------------------------------------------------------
SOURCE_DATE_EPOCH=1764498765 "$NPUSCOPE" run -k vector_add:pes=4 --headless -o "$TMP/a.json" >/dev/null
SOURCE_DATE_EPOCH=1764498765 "$NPUSCOPE" run -k vector_add:pes=4 --headless -o "$TMP/b.json" >/dev/null
if cmp -s "$TMP/a.json" "$TMP/b.json"; then ok "the same run gives the same trace, byte for byte"
else fail "the same run gives the same trace, byte for byte"; fi
if grep -q '"timestamp":"2025-11-30T10:32:45Z"' "$TMP/a.json"; then
    ok "SOURCE_DATE_EPOCH sets the timestamp"; else fail "SOURCE_DATE_EPOCH sets the timestamp"; fi

# ---- a streamed trace is the trace a kept model writes -------------------------------------------
# With -o alone the run keeps no events: summary_metrics and bandwidth_samples are counted as
# it goes. With --chrome too it keeps them and computes both at the end. The two files must be
# the same bytes: odd sizes, memory accesses, and a window of 1 cycle (the resources' samples
# widen; tests/unit/test_sumacc.c widens the DRAM ones).
for spec in vector_add:n=1 softmax:rows=3 gemm:m=33,n=17,k=65 llm_decode:layers=2,gen=4 \
    "llm_decode:layers=2,gen=4 --bw-window 1" "vector_add:pes=3 --mem-events"; do
    # shellcheck disable=SC2086 # the spec carries its options
    SOURCE_DATE_EPOCH=1700000000 "$NPUSCOPE" run --headless -k $spec -o "$TMP/s.json" >/dev/null 2>&1
    # shellcheck disable=SC2086
    SOURCE_DATE_EPOCH=1700000000 "$NPUSCOPE" run --headless -k $spec -o "$TMP/k.json" \
        --chrome "$TMP/kc.json" >/dev/null 2>&1
    if [ -s "$TMP/s.json" ] && cmp -s "$TMP/s.json" "$TMP/k.json"; then
        ok "$spec: the streamed trace equals the one from the kept model"
    else fail "$spec: the streamed trace equals the one from the kept model" "$(cmp "$TMP/s.json" "$TMP/k.json" 2>&1)"; fi
done
rm -f "$TMP/s.json" "$TMP/k.json" "$TMP/kc.json"

# ---- a trace that cannot be written --------------------------------------------------------------
mkdir "$TMP/w"
run "$NPUSCOPE" run -k vector_add --headless -o "$TMP/w/no/such/dir/t.json"
expect_status "-o in a missing directory: exit 2" 2
expect_err "names the file and the reason" "^$TMP/w/no/such/dir/t.json: cannot create: No such file or directory$"
expect_one_line "-o in a missing directory: one line"
if [ -z "$OUT" ]; then ok "nothing runs"; else fail "nothing runs" "${OUT:0:200}"; fi

run "$NPUSCOPE" run -k vector_add --headless -o "$TMP/w"
expect_status "-o naming a directory: exit 2" 2
expect_one_line "-o naming a directory: one line"
run "$NPUSCOPE" run -k vector_add --headless --chrome "$TMP/w/none/c.json"
expect_status "--chrome in a missing directory: exit 2" 2
expect_one_line "--chrome in a missing directory: one line"
if [ -z "$(ls -A "$TMP/w")" ]; then ok "no temporary file left"; else fail "no temporary file left" "$(ls -A "$TMP/w")"; fi

# an existing trace is replaced only by a complete new one
echo '{"version":"1.0","timeline_events":[]}' >"$TMP/w/keep.json"
run "$NPUSCOPE" run -k vector_add:n=0 --headless -o "$TMP/w/keep.json"
expect_status "a bad run: exit 2" 2
if grep -q '"timeline_events":\[\]' "$TMP/w/keep.json"; then ok "the old trace is untouched"
else fail "the old trace is untouched"; fi

finish
