#!/usr/bin/env bash
# Energy and power from the command line: npuscope summary (text and --json) of a run on a
# chip with an energy table and of one without ("energy: unknown"), a bad energy key,
# npuscope diff's energy rows and --fail-if 'energy>+5%', and a sweep over the GEMM array
# size (GNU parallel) whose collected table moves the way the energy model says; in the
# viewer (tmux), the power strip (W), the energy per token (T) and per layer (y), and the
# summary pane of a trace without energy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)

echo "-- summary"
run "$NPUSCOPE" run -k gemm:m=64,n=64,k=64,pes=2 -c "$ROOT/sim/configs/tiny.yaml" --headless \
    -o "$TMP/a.json"
expect_status "a run on the tiny chip: exit 0" 0
run "$NPUSCOPE" summary "$TMP/a.json"
expect_out "summary: the total, its parts and the average power" \
    '^energy +[0-9.]+ [munp]?J \(dynamic [0-9.]+ [munp]?J, static [0-9.]+ [munp]?J\), average power [0-9.]+ [m]?W$'
expect_out "summary: the share of each component kind" '^  by kind  +gemm [0-9.]+%, .*static [0-9.]+%$'
expect_out "summary: where the energy goes" '^  most +(.*: [0-9]+% of the energy)'
run "$NPUSCOPE" summary --json "$TMP/a.json"
if python3 - "$TMP/out" <<'PY'; then ok "--json: energy with 64 x 64 x 64 MACs"; else fail "--json: energy" "$OUT"; fi
import json, sys
e = json.load(open(sys.argv[1]))["energy"]
assert e["counts"]["gemm_mac_f32"] == 64 * 64 * 64, e["counts"]
assert abs(e["dynamic_j"] + e["static_j"] - e["total_j"]) <= 1e-12 * e["total_j"]
assert abs(sum(e["by_kind_j"].values()) - e["total_j"]) <= 1e-9 * e["total_j"]
PY

sed '/^# Energy/,$d' "$ROOT/sim/configs/tiny.yaml" >"$TMP/noenergy.yaml"
run "$NPUSCOPE" run -k gemm:m=64,n=64,k=64,pes=2 -c "$TMP/noenergy.yaml" --headless -o "$TMP/u.json"
expect_status "a chip without an energy table runs: exit 0" 0
if ! grep -q '"power_samples"\|"energy"' "$TMP/u.json"; then ok "its trace has no energy"
else fail "its trace has no energy" "$(grep -o '"energy".\{0,80\}' "$TMP/u.json" | head -2)"; fi
run "$NPUSCOPE" summary "$TMP/u.json"
expect_out "summary: energy unknown" '^energy +unknown'
run "$NPUSCOPE" summary --json "$TMP/u.json"
expect_out "--json: energy null" '"energy":null'

printf 'energy:\n  hbm: {read_pj: 1}\n' | cat "$TMP/noenergy.yaml" - >"$TMP/bad.yaml"
run "$NPUSCOPE" run -k vector_add -c "$TMP/bad.yaml" --headless
expect_status "a misspelt energy key: exit 2" 2
expect_err "names the file, line and key" "bad.yaml:[0-9]+:9: key 'energy.hbm.read_pj': unknown key \(did you mean 'read_pj_per_byte'\?\)"
expect_one_line "a misspelt energy key: one line"

echo "-- diff"
run "$NPUSCOPE" run -k gemm:m=128,n=64,k=64,pes=2 -c "$ROOT/sim/configs/tiny.yaml" --headless \
    -o "$TMP/b.json"
run "$NPUSCOPE" diff "$TMP/a.json" "$TMP/b.json"
expect_out "diff: the energy rows" '^  total +[0-9.]+ [munp]?J +[0-9.]+ [munp]?J +\+[0-9.]+%'
expect_out "diff: the average power" '^  average power +[0-9.]+ [m]?W'
run "$NPUSCOPE" diff "$TMP/a.json" "$TMP/b.json" --fail-if 'energy>+5%'
expect_status "--fail-if 'energy>+5%' holds on twice the work: exit 1" 1
expect_err "and says so" "--fail-if 'energy>\+5%' holds: energy"
run "$NPUSCOPE" diff "$TMP/a.json" "$TMP/a.json" --fail-if 'energy>+5%,power>+5%'
expect_status "the same run: exit 0" 0
run "$NPUSCOPE" diff "$TMP/u.json" "$TMP/a.json" --fail-if 'energy>+5%'
expect_status "--fail-if on energy with a trace without it: exit 2" 2
expect_err "says whose energy is unknown" "the energy of A is unknown"
expect_one_line "one line"

echo "-- the viewer"
run "$NPUSCOPE" run -k llm_decode:layers=2,gen=3 --headless -o "$TMP/llm.json"
expect_status "an llm_decode trace: exit 0" 0
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)
tmux_start 160 48 "${U[@]}" -- view "$TMP/llm.json"
expect_screen "the trace is open" 'POST-MORTEM'
tmux_keys W
expect_screen "W: the power strip, scaled to its busiest column" '^ power <=[0-9.]+ m?W +│'
tmux_keys W
expect_screen "W again: a row per component kind" '^   static +│'
expect_screen "among them the HBM's" '^   hbm +│'
tmux_keys W
expect_no_screen "a third W hides it" '^ power <='
tmux_keys T
expect_screen "T: the energy of each token" ' phase +# +start +latency +read +written +energy'
expect_screen "a decode token's joules" 'DECODE +[0-9]+ +.* [0-9.]+ [mun]?J'
tmux_keys y z
expect_screen "y, z: the energy of each layer" 'layer .* energy'
expect_screen "layer0's joules" 'layer0 .* [0-9.]+ [mun]?J'
tmux_keys q
expect_exit "q: out" 0
tmux_start 120 40 "${U[@]}" -- view "$TMP/u.json"
expect_screen "a trace without energy is open" 'POST-MORTEM'
tmux_keys W
expect_screen "W: the energy is unknown" 'energy unknown: the chip config has no energy table'
tmux_keys q
expect_exit "q: out" 0
tmux_stop

echo "-- sweep over the GEMM array size"
if parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    cat >"$TMP/sweep.yaml" <<'YAML'
chip: default
kernel: gemm
kernel_args: {pes: 1, dtype: f16, m: 128, n: 128, k: 256}
axes:
  pe.gemm.macs_per_cycle.f16: [64, 256, 1024, 4096]
YAML
    run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/sw" --engine parallel -j 2
    expect_status "the sweep: exit 0" 0
    run "$NPUSCOPE" sweep --collect "$TMP/sw" --csv
    expect_out "the table has energy_j, avg_power_w, perf_per_watt" '(^|,)energy_j,avg_power_w,perf_per_watt(,|$)'
    # The default chip's leakage: 3.06 W, of which 8 GEMM engines at 0.05 W per 1024 f16
    # MACs per cycle. The same work at every point: the dynamic energy is the same, so
    # energy - leakage x time is a constant; a larger array is faster, and leaks more.
    if python3 - "$TMP/out" <<'PY'; then ok "time falls with the array; energy follows the model"
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: float(r["pe.gemm.macs_per_cycle.f16"]))
assert len(rows) == 4 and all(r["status"] == "ok" for r in rows), rows
t = [float(r["time_ns"]) * 1e-9 for r in rows]
e = [float(r["energy_j"]) for r in rows]
s = [float(r["pe.gemm.macs_per_cycle.f16"]) for r in rows]
assert t[0] > t[1] > t[2] > t[3], t
w = [3.06 - 8 * 0.05 + 8 * 0.05 * x / 1024 for x in s]
dyn = [e[i] - w[i] * t[i] for i in range(4)]
assert max(dyn) - min(dyn) <= 1e-6 * max(dyn), dyn
assert e[0] > e[1] > e[2] and e[3] > e[2], e   # the widest array is faster but costs more
ppw = [float(r["perf_per_watt"]) for r in rows]
assert max(ppw) == ppw[2], ppw
PY
    else fail "time falls with the array; energy follows the model" "$OUT"; fi
    tmux_start 120 36 LANG=C.UTF-8 LC_ALL=C.UTF-8 -- view "$TMP/sw"
    expect_screen "the sweep table" '^ SWEEP  .*/sw  4 points: 4 ok$'
    tmux_keys e
    expect_screen "e: time against energy, the fastest and the most frugal on the front" \
        'energy_j vs time_ns: Pareto front 0002 0003'
    tmux_keys q
    expect_exit "q: out of the sweep table" 0
    tmux_stop
else
    ok "GNU parallel is not installed: the sweep is skipped"
fi
finish
