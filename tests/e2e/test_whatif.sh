#!/usr/bin/env bash
# npuscope whatif: the experiment's table on a small HBM-bound llm_decode matches its golden
# text (the wall time aside), the same from the trace of that run as from -c/-k; the verdict
# names what the experiment found (an HBM and the link as wide as it, together; at the tiny
# default shape, the DMA's per-transfer cost); --json; another producer's trace, bad
# factors and resources are refused in one line. A plug-in kernel's trace: whatif (and the
# bottleneck pane's experiment) load the plug-ins the trace's run loaded, or --plugin.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"
DATA=$TESTS_DIR/data/whatif
LARGE=$TESTS_DIR/../sim/configs/large.yaml
HBM=llm_decode:dim=1024,heads=8,ff=2752,layers=1,prompt=1,gen=1,dtype=f16,pes=8
cd "$TMP" || exit 1

# the wall time varies: the line saying it is compared without it
strip_time() { sed -E 's/ in [0-9.]+ s$/ in T s/' "$TMP/out" >"$TMP/out.t"; }
expect_golden() {
    strip_time
    if diff -u "$2" "$TMP/out.t" >"$TMP/diff"; then ok "$1"; else
        fail "$1" "$(head -30 "$TMP/diff")"; fi
}

run "$NPUSCOPE" whatif -c "$LARGE" -k "$HBM"
expect_status "whatif -c -k: exit 0" 0
expect_golden "whatif: the golden table" "$DATA/hbm.txt"
expect_out "the two workers and the time it took" '^22 runs \(the base and 21 changes\) on 2 workers in [0-9.]+ s$'
expect_out "the launch: the HBM and its link, sped up together" \
    '^  llm_decode +HBM bandwidth \+ cube links$'
expect_out "checked by experiment" 'checked by experiment: HBM bandwidth \+ cube links x2 shortens it'
expect_out "the run: the host link that carries the weights in" \
    '^  run +host transfer$'

run "$NPUSCOPE" run --headless -c "$LARGE" -k "$HBM" -o hbm.json
expect_status "the run's trace: exit 0" 0
run "$NPUSCOPE" whatif hbm.json
expect_status "whatif TRACE: exit 0" 0
expect_golden "whatif TRACE: the same table" "$DATA/hbm.txt"
run "$NPUSCOPE" summary hbm.json
expect_out "summary: the verdict is the heuristic's, and says so" \
    '^ +verdict +heuristic \(npuscope whatif checks it by experiment\)$'

echo "-- the tiny default shape: the DMA's per-transfer cost"
run "$NPUSCOPE" whatif -c "$LARGE" -k llm_decode:layers=1,prompt=1,gen=1 \
    --resources hbm_bw,hbm_lat,dma_setup,dma_bw,te --factors 2,0.5 -j 2
expect_status "whatif --resources: exit 0" 0
expect_out "five resources, two factors" '^11 runs \(the base and 10 changes\)'
expect_out "the heuristic's new bound, checked" '^  llm_decode +DMA per-transfer cost$'
expect_out "the experiment's best: a per-transfer cost" \
    'checked by experiment: (HBM latency|DMA setup) x2 shortens it [0-9.]+%$'
expect_out "the transfers: their count and mean size" '^ +[0-9]+ DMA transfers, mean [0-9.]+ B$'
if grep -q 'the heuristic said' <<<"$(sed -n '/^  llm_decode/,$p' <<<"$OUT")"; then
    fail "the launch's heuristic agrees with the experiment" "$OUT"
else ok "the launch's heuristic agrees with the experiment"; fi

run "$NPUSCOPE" whatif --json --resources hbm_lat --factors 2 hbm.json
expect_status "whatif --json: exit 0" 0
if command -v python3 >/dev/null; then
    if python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["workers"] == 2 and d["runs"] == 2 and d["seconds"] >= 0, d
assert [l["name"] for l in d["launches"]] == ["llm_decode"], d["launches"]
c = d["changes"][0]
assert c["resource"] == "hbm_lat" and c["factor"] == 2 and c["cycles"] > 0, c
assert abs(c["cycles"] / d["base"]["cycles"] - 1 - c["change"]) < 1e-9, c
assert c["launches"][0]["change"] < 0, c
b = d["bottleneck"]["launches"]
assert any(x["basis"] == "experiment" for x in b), b
PY
    then ok "whatif --json: runs, launches, changes, the checked verdict"
    else fail "whatif --json" "$(head -c 600 "$TMP/out")"; fi
else ok "whatif --json (no python3: skipped)"; fi

echo "-- the bottleneck pane: the experiment in the background"
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)
tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- view hbm.json
expect_screen "the viewer is up" 'v verdict'
tmux_keys v
tmux_keys z # the pane maximized: the evidence, then the experiment below it
expect_screen "v: the heuristic verdict at once" '^(▶|>| )Bottleneck  run: '
expect_screen "the experiment's result, computed in the background" \
    'experiment: 22 runs on 2 workers in [0-9.]+ s, the time of the run' 60
expect_screen "the run's verdict, checked" 'verdict +checked by experiment: host link x2 shortens it'
tmux_keys j
expect_screen "the launch: its changes, the most shortening first" \
    '^  HBM bandwidth \+ cube links +x2 +-39\.1%'
expect_screen "its verdict names the HBM and its link" '^ llm_decode .*HBM bandwidth \+ cube links'
tmux_keys q
expect_exit "q: exit 0" 0

tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- view "$TESTS_DIR/data/traces/spec_example.json"
expect_screen "the viewer is up" 'v verdict'
tmux_keys v
tmux_keys z # the pane maximized: the evidence, then the experiment below it
expect_screen "another producer's trace: no experiment, and why" \
    'experiment: none: not a trace of npuscope'
expect_screen "its verdict stays a heuristic, marked" 'verdict +heuristic: another producer'
tmux_keys q
expect_exit "another producer's trace: q: exit 0" 0

echo "-- a plug-in's kernel"
export XDG_DATA_HOME=$TMP/xdg # no plug-in of the user's
unset NPUSCOPE_PLUGIN_PATH
mkdir -p "$TMP/pl"
if cc -shared -fPIC -O1 -g -Wall -Wextra -Werror ${NPUSCOPE_PLUGIN_CFLAGS:-} \
    -I"${NPUSCOPE_BUILD:-$TESTS_DIR/../build}/include" "$TESTS_DIR/plugins/reps.c" \
    -o "$TMP/pl/reps.so" 2>"$TMP/cc.err"; then ok "the plug-in builds"; else
    fail "the plug-in builds" "$(cat "$TMP/cc.err")"; fi
(cd "$TMP/pl" && "$NPUSCOPE" run --headless --plugin ./reps.so -k reps -o "$TMP/reps.json") \
    >/dev/null 2>&1
if grep -q "^\"run_metadata\".*\"plugins\":\[\"$TMP/pl/reps.so\"\]" "$TMP/reps.json"; then
    ok "run_metadata.plugins: the plug-in's file, absolute"; else
    fail "run_metadata.plugins" "$(grep -m1 '^"run_metadata"' "$TMP/reps.json")"; fi
run "$NPUSCOPE" whatif --resources dma_bw,hbm_lat --factors 2 "$TMP/reps.json"
expect_status "whatif on its trace: exit 0 (the trace's plug-in loaded)" 0
expect_out "its launch measured" '^ +reps +DMA'
expect_out "every run ran" '^3 runs \(the base and 2 changes\)'
if grep -q 'failed' <<<"$OUT"; then fail "no run failed" "$OUT"; else ok "no run failed"; fi
run "$NPUSCOPE" whatif --resources dma_bw --factors 2 -k reps --plugin "$TMP/pl/reps.so"
expect_status "whatif -k --plugin: exit 0" 0
expect_out "its table" '^dma_bw|^DMA bandwidth +x2 '
mv "$TMP/pl/reps.so" "$TMP/pl/moved.so"
run "$NPUSCOPE" whatif --resources dma_bw --factors 2 "$TMP/reps.json"
expect_status "the trace's plug-in gone: exit 2" 2
expect_one_line "the trace's plug-in gone: one line"
expect_err "names the file" "reps\.so: cannot load the plug-in"
run "$NPUSCOPE" whatif --resources dma_bw --factors 2 --plugin "$TMP/pl/moved.so" "$TMP/reps.json"
expect_status "--plugin replaces the trace's: exit 0" 0
mv "$TMP/pl/moved.so" "$TMP/pl/reps.so"
tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- view "$TMP/reps.json"
expect_screen "the viewer is up" 'v verdict'
tmux_keys v
tmux_keys z # the pane maximized: the evidence, then the experiment below it
expect_screen "the pane's experiment runs the plug-in's kernel" \
    'experiment: [0-9]+ runs on 2 workers in [0-9.]+ s' 60
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- refused"
run "$NPUSCOPE" whatif "$TESTS_DIR/data/traces/spec_example.json"
expect_status "another producer's trace: exit 2" 2
expect_err "says why" 'not a trace of npuscope: what ran cannot be run again'
expect_one_line "another producer's trace: one line"
run "$NPUSCOPE" whatif --factors 2,one hbm.json
expect_status "a bad factor: exit 2" 2
expect_err "names it" "--factors: 'one' is not a speed-up"
run "$NPUSCOPE" whatif --resources hbm,te hbm.json
expect_status "an unknown resource: exit 2" 2
expect_err "names it" "--resources: no resource 'hbm'"
run "$NPUSCOPE" whatif
expect_status "nothing to run: exit 2" 2
expect_one_line "nothing to run: one line"
finish
