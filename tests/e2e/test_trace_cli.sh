#!/usr/bin/env bash
# The trace subcommands from the command line: validate, summary and export --chrome, their
# exit statuses and messages, and hostile text from a trace never reaching the terminal raw.
. "$(dirname "$0")/lib.sh"
DATA=$TESTS_DIR/data/traces

# expect_no_control NAME FILE: FILE holds no ESC, BEL or other C0 control but newline/tab.
expect_no_control() {
    if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$2"; then
        fail "$1" "a control character reached the output: $(od -c "$2" | head -5)"
    else ok "$1"; fi
}

# is_json NAME FILE: FILE parses as JSON (python3), or the check is skipped.
is_json() {
    if ! command -v python3 >/dev/null; then ok "$1 (no python3: skipped)"; return; fi
    if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$2" 2>/dev/null; then ok "$1"
    else fail "$1" "not JSON: $(head -c 200 "$2")"; fi
}

# ---- validate ------------------------------------------------------------------------------
run "$NPUSCOPE" validate "$DATA/spec_example.json"
expect_status "validate: the spec example is valid" 0
expect_out "validate: says valid" "spec_example.json: valid \(3 events\)$"

run "$NPUSCOPE" validate "$DATA/cycles_total_small.json"
expect_status "validate: warnings only: exit 1" 1
expect_out "validate: the warning with its path" \
    "cycles_total_small.json: summary_metrics.cycles_total: warning: 100 is below the largest end_cycle 2000$"

run "$NPUSCOPE" validate "$DATA/negative_cycle.json"
expect_status "validate: an error: exit 2" 2
expect_out "validate: the error with its path" \
    "negative_cycle.json: timeline_events\[0\]\.start_cycle: -5 is negative$"
expect_out "validate: the verdict" "invalid: 1 error, 0 warnings$"

# consistency checks the format does not ask for are notes: listed, counted, exit 0
run "$NPUSCOPE" validate "$DATA/partial_samples.json"
expect_status "validate: samples covering part of the run: exit 0" 0
expect_out "validate: the note with its path" \
    "partial_samples.json: summary_metrics.dram_bytes_read: note: 4096 differs from the sum of bandwidth_samples \(2048\)$"
expect_out "validate: notes counted" "partial_samples.json: valid \(3 events, 1 note\)$"
run "$NPUSCOPE" validate --strict "$DATA/partial_samples.json"
expect_status "validate --strict: the note is a warning: exit 1" 1
expect_out "validate --strict: listed as a warning" \
    "summary_metrics.dram_bytes_read: warning: 4096 differs from the sum of bandwidth_samples \(2048\)$"

run "$NPUSCOPE" validate "$DATA/missing_blocks.json"
expect_status "validate: missing optional blocks: exit 1" 1
expect_out "validate: a missing block" "missing_blocks.json: run_metadata: warning: missing$"

run "$NPUSCOPE" validate "$DATA/unknown_things.json"
expect_status "validate: unknown types and fields are fine" 0
expect_out "validate: they are counted" "ignored 1 event of unknown types and 2 unknown fields$"

run "$NPUSCOPE" validate --max-errors 1 "$DATA/bad_mem_enums.json"
expect_status "validate --max-errors: still exit 2" 2
expect_out "validate --max-errors: lists the first" 'timeline_events\[3\]\.mem_type: "L2" is not one of DRAM, SPM$'
expect_out "validate --max-errors: counts the rest" "\.\.\. 1 more problem not listed"
if grep -q "sideways" <<<"$OUT"; then fail "validate --max-errors: stops listing"; else
    ok "validate --max-errors: stops listing"; fi

# files that are not traces: one line on stderr with file, position and problem; exit 2
check_bad() { # name regex file
    run "$NPUSCOPE" validate "$3"
    expect_status "$1: exit 2" 2
    expect_err "$1: message" "$2"
    expect_one_line "$1: one line"
}
printf 'hello' >"$TMP/hello.json"
check_bad "not JSON" "^npuscope: $TMP/hello.json:1:1: not a trace: expected '\{', found 'h'$" "$TMP/hello.json"
: >"$TMP/empty.json"
check_bad "empty file" "^npuscope: $TMP/empty.json: not a trace: the file is empty$" "$TMP/empty.json"
head -c 300 "$DATA/spec_example.json" >"$TMP/cut.json"
check_bad "truncated" "^npuscope: $TMP/cut.json:[0-9]+:[0-9]+: .*end of (the )?file" "$TMP/cut.json"
check_bad "version 2" "version_2.json:2:14: version: unsupported trace format version \"2.0\"" "$DATA/version_2.json"
check_bad "missing file" "^npuscope: $TMP/nope.json: cannot open: No such file or directory$" "$TMP/nope.json"

# ---- hostile text ----------------------------------------------------------------------------
ESC=$'\e'
cat >"$TMP/hostile.json" <<EOF
{"version": "1.0",
 "run_metadata": {"run_id": "r${ESC}]52;c;cHduZWQ=\u0007", "model_name": "\u001b[2J\u001b[H"},
 "config_snapshot": {}, "bandwidth_samples": [], "summary_metrics": {},
 "timeline_events": [
  {"type": "ENGINE_EVENT", "engine": "TE", "engine_id": 0, "op": "gemm${ESC}]52;c;eA==\u0007",
   "start_cycle": 0, "end_cycle": 10, "component_id": "sip0.pe${ESC}[31m_gemm"},
  {"type": "ENGINE_EVENT", "engine": "${ESC}]0;title\u0007", "engine_id": 0, "op": "x",
   "start_cycle": 0, "end_cycle": 1}
 ]}
EOF
run "$NPUSCOPE" validate "$TMP/hostile.json"
expect_status "hostile: invalid engine: exit 2" 2
expect_out "hostile: the engine is shown escaped" 'engine: "\\e\]0;title\\x07" is not one of'
expect_no_control "hostile: validate writes no control characters" "$TMP/out"
run "$NPUSCOPE" summary "$TMP/hostile.json"
expect_status "hostile: summary exit 0" 0
expect_out "hostile: run_id escaped" 'run_id +r\\e\]52;c;cHduZWQ=\\x07$'
expect_out "hostile: track name escaped" 'sip0\.pe\\e\[31m_gemm$'
expect_no_control "hostile: summary writes no control characters" "$TMP/out"
expect_no_control "hostile: summary's stderr has no control characters" "$TMP/err"
expect_err "hostile: summary notes the skipped record" "1 invalid record skipped"

# ---- summary ---------------------------------------------------------------------------------
run "$NPUSCOPE" summary "$DATA/spec_example.json"
expect_status "summary: exit 0" 0
expect_out "summary: cycles" "^cycles_total +2000$"
expect_out "summary: DRAM" "^DRAM +read 2\.0 KiB \(2048 B\), written 0 B \(from DMA events\)$"
expect_out "summary: TE" "^TE +0 +10\.0% busy \(200 active cycles\)$"
expect_out "summary: decode" "1100\.0 cycles per token"
if [ -z "$ERR" ]; then ok "summary: nothing on stderr"; else fail "summary: nothing on stderr" "$ERR"; fi

run "$NPUSCOPE" summary --json "$DATA/spec_example.json"
expect_status "summary --json: exit 0" 0
is_json "summary --json: JSON" "$TMP/out"
expect_out "summary --json: the metrics" '^\{"cycles_total":2000,"dram_bytes_read":2048,"dram_bytes_write":0,'

run "$NPUSCOPE" summary "$TMP/hello.json"
expect_status "summary of a non-trace: exit 2" 2
expect_one_line "summary of a non-trace: one line"

# ---- export ----------------------------------------------------------------------------------
run "$NPUSCOPE" export --chrome "$DATA/spec_example.json" -o "$TMP/chrome.json"
expect_status "export: exit 0" 0
is_json "export: the output is JSON" "$TMP/chrome.json"
if grep -q '"traceEvents"' "$TMP/chrome.json" && grep -q '"ph":"X","name":"TE_GEMM_TILE"' "$TMP/chrome.json"
then ok "export: Trace Event Format"; else fail "export: Trace Event Format" "$(head -c 300 "$TMP/chrome.json")"; fi

echo old >"$TMP/keep.json"
run "$NPUSCOPE" export --chrome "$TMP/cut.json" -o "$TMP/keep.json"
expect_status "export of a bad trace: exit 2" 2
expect_one_line "export of a bad trace: one line"
if [ "$(cat "$TMP/keep.json")" = old ]; then ok "export of a bad trace: output untouched"; else
    fail "export of a bad trace: output untouched"; fi

run "$NPUSCOPE" export --chrome "$DATA/spec_example.json" -o "$TMP/no/such/dir/out.json"
expect_status "export to a missing directory: exit 1" 1
expect_err "export to a missing directory: message" "^npuscope: $TMP/no/such/dir/out.json: cannot create: No such file or directory$"
expect_one_line "export to a missing directory: one line"
if [ -z "$(ls -A "$TMP" | grep '\.tmp\.')" ]; then ok "export: no temporary file left"; else
    fail "export: no temporary file left" "$(ls -A "$TMP")"; fi

finish
