#!/usr/bin/env bash
# npuscope summary's layer breakdown, tokens and anomalies, as text and --json, on a
# hand-made trace whose answers are known (tests/data/traces/views.json: two layers of
# known busy cycles, tokens of known latencies, a planted 10x op).
. "$(dirname "$0")/lib.sh"

DATA=$TESTS_DIR/data/traces
V=$DATA/views.json

# json_check NAME FILE PYTHON-EXPRESSION: the expression holds for the JSON j in FILE.
json_check() {
    if ! command -v python3 >/dev/null; then ok "$1 (no python3: skipped)"; return; fi
    if python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
        "$2" "$3" 2>"$TMP/pyerr"; then ok "$1"; else
        fail "$1" "$3 does not hold" "$(head -c 400 "$2")" "$(cat "$TMP/pyerr")"; fi
}

run "$NPUSCOPE" summary "$V"
expect_status "summary: exit 0" 0
expect_out "summary: layers" '^layers +2 '
expect_out "summary: layer attn_0: start, span, slowest instance, busy per engine, share, bytes" \
    '^  attn_0 +0 +600 +600 +200 +300 +100 +60\.0% +8\.0 KiB$'
# ffn_0 runs in two tokens: its span is the sum of its two instances, the slowest 200
expect_out "summary: layer ffn_0" '^  ffn_0 +600 +400 +200 +150 +100 +150 +40\.0% +3\.0 KiB$'
expect_out "summary: tokens" '^tokens +1 prefill, 2 decode; decode latency min 150, median 150, mean 200\.0, max 250 cycles$'
expect_out "summary: the prefill token's bytes and KV bytes" \
    '^  PREFILL +0 +0 +600 +8\.0 KiB +0 B +4\.0 KiB +0 B$'
expect_out "summary: a decode token" '^  DECODE +1 +750 +250 +0 B +1\.0 KiB +0 B +0 B$'
expect_out "summary: the planted op" \
    '^anomalies +1 \(1 slow op\)$'
expect_out "summary: the planted op, described" \
    '^ +840 +slow op +add on sip0\.cube0\.pe0\.pe_math: 100 cycles, 10\.0x the median 10 of 6 VE ops'
if grep -q INVALID_TRACE <<<"$OUT"; then fail "summary: no INVALID_TRACE line"; else
    ok "summary: no INVALID_TRACE line"; fi

run "$NPUSCOPE" summary --json "$V"
expect_status "summary --json: exit 0" 0
json_check "summary --json: the metrics still first" "$TMP/out" 'list(j)[0] == "cycles_total"'
json_check "summary --json: kv_cache" "$TMP/out" \
    'j["kv_cache"] == {"bytes_read": 4096, "bytes_written": 0}'
json_check "summary --json: two layers" "$TMP/out" \
    '[l["layer_id"] for l in j["layers"]] == ["attn_0", "ffn_0"]'
json_check "summary --json: a layer's busy cycles per engine kind" "$TMP/out" \
    'j["layers"][0]["busy_cycles_per_engine"] == {"DMA": 200, "TE": 300, "VE": 100} and j["layers"][0]["busy_cycles"] == 600'
json_check "summary --json: a layer's share and bytes" "$TMP/out" \
    'abs(j["layers"][1]["share"] - 0.4) < 1e-9 and j["layers"][1]["dram_bytes_read"] == 2048 and j["layers"][1]["dram_bytes_write"] == 1024'
json_check "summary --json: a layer's op names" "$TMP/out" \
    '[(o["op"], o["count"], o["busy_cycles"]) for o in j["layers"][1]["op_names"]] == [("dma_read", 1, 100), ("gemm_f16", 1, 100), ("add", 6, 150), ("dma_write", 1, 50)]'
json_check "summary --json: token latencies" "$TMP/out" \
    '[(t["phase"], t["token_index"], t["latency_cycles"]) for t in j["token_profile"]] == [("PREFILL", 0, 600), ("DECODE", 0, 150), ("DECODE", 1, 250)]'
json_check "summary --json: token bytes" "$TMP/out" \
    '[(t["dram_bytes_read"], t["dram_bytes_write"], t["kv_bytes_read"]) for t in j["token_profile"]] == [(8192, 0, 4096), (2048, 0, 0), (0, 1024, 0)]'
json_check "summary --json: the anomalies" "$TMP/out" \
    'j["anomalies"]["counts"] == {"invalid": 0, "slow_op": 1, "idle_gap": 0, "bandwidth": 0}'
json_check "summary --json: the planted op" "$TMP/out" \
    'j["anomalies"]["list"][0]["op"] == "add" and j["anomalies"]["list"][0]["start_cycle"] == 840 and j["anomalies"]["list"][0]["component_id"] == "sip0.cube0.pe0.pe_math"'
json_check "summary --json: not an invalid trace" "$TMP/out" 'j["invalid_trace"] is False'

# a trace without layers, tokens or anomalies says so briefly
run "$NPUSCOPE" summary "$DATA/diff_base.json"
expect_status "summary of a spec trace: exit 0" 0
expect_out "summary of a spec trace: its layers (no tokens: the whole span)" '^  ffn_1 +1000 +450 +450 +'
expect_out "summary of a spec trace: no anomaly" '^anomalies +0$'
if grep -q '^tokens' <<<"$OUT"; then fail "summary of a spec trace: no token lines"; else
    ok "summary of a spec trace: no token lines"; fi

# ---- a run that fails leaves an INVALID_TRACE marker ------------------------------------------
FAILING=$TESTS_DIR/data/workloads/read_missing_pe.yaml
run "$NPUSCOPE" run --headless -w "$FAILING" -o "$TMP/failed.json"
expect_status "failing run: exit 1" 1
if grep -qE '"type":"MARKER_EVENT","name":"INVALID_TRACE","cycle":[0-9]+,"component_id":"sip0\.io_cpu","details":\{"cmdq_id":1,"error":"c/r: E_NO_PE: MemoryRead from sip0\.cube0\.pe99: the chip has no such PE"\}' "$TMP/failed.json"
then ok "failing run: the trace has the marker with the error"; else
    fail "failing run: the trace has the marker with the error" "$(grep MARKER "$TMP/failed.json")"; fi
run "$NPUSCOPE" validate "$TMP/failed.json"
expect_status "failing run: the trace is still valid" 0
run "$NPUSCOPE" summary "$TMP/failed.json"
expect_out "failing run: summary says so" \
    '^INVALID_TRACE 1 marker: the run met a failure; first at cycle [0-9]+: c/r: E_NO_PE: MemoryRead from sip0\.cube0\.pe99: the chip has no such PE$'
expect_out "failing run: listed among the anomalies" '^anomalies +1 \(1 invalid\)$'
run "$NPUSCOPE" summary --json "$TMP/failed.json"
json_check "failing run: --json says so" "$TMP/out" \
    'j["invalid_trace"] is True and j["anomalies"]["list"][0]["kind"] == "invalid" and "E_NO_PE" in j["anomalies"]["list"][0]["error"]'
run "$NPUSCOPE" run --headless -k vector_add -o "$TMP/fine.json"
expect_status "a run that does not fail: exit 0" 0
if grep -q INVALID_TRACE "$TMP/fine.json"; then fail "a run that does not fail: no marker"; else
    ok "a run that does not fail: no marker"; fi

# ---- llm_decode's KV cache --------------------------------------------------------------------
run "$NPUSCOPE" run --headless -k llm_decode -o "$TMP/llm.json"
expect_status "llm_decode: exit 0" 0
run "$NPUSCOPE" summary --json "$TMP/llm.json"
json_check "llm_decode: summary_metrics.kv_cache read and written" "$TMP/out" \
    'j["kv_cache"]["bytes_read"] > 0 and j["kv_cache"]["bytes_written"] > 0 and j["kv_cache"]["bytes_read"] < j["dram_bytes_read"]'
json_check "llm_decode: the tokens' KV bytes add up to at most the cache's" "$TMP/out" \
    'sum(t["kv_bytes_read"] for t in j["token_profile"]) <= j["kv_cache"]["bytes_read"] and all("kv_bytes_written" in t for t in j["token_profile"])'
if grep -q '"op":"dma_read",.*"details":{[^}]*"tensor_role":"kv"' "$TMP/llm.json"; then
    ok "llm_decode: its cache loads say tensor_role kv"; else
    fail "llm_decode: its cache loads say tensor_role kv"; fi
run "$NPUSCOPE" summary "$TMP/llm.json"
expect_out "llm_decode: summary text" '^KV cache +read [0-9.]+ KiB \([0-9]+ B\), written [0-9.]+ KiB'

# ---- a layer's share: the busy cycles of all its engine kinds, over cycles_total -------------
# (the demo's layers run DMA and vector ops at once: the kinds added exceed any-engine busy)
run "$NPUSCOPE" run --headless -o "$TMP/demo.json"
run "$NPUSCOPE" summary --json "$TMP/demo.json"
json_check "demo: a layer's share is its engine kinds' busy cycles added over cycles_total" \
    "$TMP/out" 'all(abs(l["share"] - sum(l["busy_cycles_per_engine"].values()) / j["cycles_total"]) < 1e-9 and sum(l["busy_cycles_per_engine"].values()) > l["busy_cycles"] for l in j["layers"])'
run "$NPUSCOPE" summary "$TMP/demo.json"
expect_out "demo: TE 4 says which engine it is" \
    '^TE +4 +[0-9.]+% busy \([0-9]+ active cycles\), sip0\.cube1\.pe0\.pe_gemm$'
expect_out "demo: the first decode token is #0" '^  DECODE +0 +[0-9]+ '
expect_out "demo: the TE kind as a whole, as the verdict counts it" \
    '^TE   any +[0-9.]+% busy \([0-9]+ cycles with one of its 4 engines busy\)$'

finish
