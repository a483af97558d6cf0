#!/usr/bin/env bash
# Where the time goes: the host events and resource samples of a written trace (and
# npuscope validate still exits 0 on it), npuscope summary's verdict in text and JSON (for
# every built-in kernel a bound with its evidence: the path's split, busy shares, the
# roofline point with FLOP/s and HBM bytes/s, the busiest resources), and
# in a real terminal (tmux, 80x24 and 200x60, with NO_COLOR and TERM=vt100): the host and
# HBM rows, the bottleneck pane (v), the critical path walked with C ( ), the utilization
# strip (E) and the bandwidth heatmap (H); live, a breakpoint on a metric (R goes back to
# its previous hit), the kernel it paused labelled running in the bottleneck pane, and no
# longer once the run ends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

T=$TMP/demo.json
K=$TMP/vadd.json

echo "-- HOST events and resource samples in a written trace"
run "$NPUSCOPE" run --headless -o "$T"
expect_status "the demo with -o: exit 0" 0
run grep -c '"engine":"HOST"' "$T"
if [ "${OUT:-0}" -gt 100 ]; then ok "HOST ENGINE_EVENTs ($OUT)"; else fail "HOST ENGINE_EVENTs" "$OUT"; fi
run grep -m1 '"op":"MemoryWrite".*"component_id":"host"' "$T"
expect_out "a MemoryWrite on the host, with its envelope" \
    '"correlation_id":"demo","request_id":"w-a","target_device":"sip:0","dst_sip":0'
run grep -m1 '"op":"KernelLaunch".*"component_id":"sip0.io_cpu"' "$T"
expect_out "a KernelLaunch serviced by the io_cpu, with its kernel" '"kernel":"vector_add"'
run grep -m1 '"op":"KernelLaunch".*"component_id":"sip0.cube[01].m_cpu"' "$T"
expect_out "... and by an m_cpu" '"engine":"HOST"'
run grep -m1 '"op":"Completion".*"component_id":"host"' "$T"
expect_out "a Completion crossing back, with its status" '"ok":true,"error_code":null'
run grep -c '"resource":"sip0.cube1.hbm"' "$T"
if [ "${OUT:-0}" -gt 0 ]; then ok "samples of an HBM"; else fail "samples of an HBM" "$OUT"; fi
run grep -c '"resource":"host<->sip0.io_cpu"' "$T"
if [ "${OUT:-0}" -gt 0 ]; then ok "samples of the host link"; else fail "samples of the host link"; fi
run "$NPUSCOPE" validate "$T"
expect_status "npuscope validate: exit 0" 0
expect_out "valid, no warnings" ': valid \([0-9]+ events\)$'
# bandwidth_samples are the spec's DRAM samples alone: a reader that knows no extension
# adds them up to summary_metrics' DRAM bytes; the HBMs' and links' are in resource_samples
if python3 -c 'import json,sys
t = json.load(open(sys.argv[1])); b = t["bandwidth_samples"]; m = t["summary_metrics"]
assert not any("resource" in x for x in b)
assert sum(x["dram_read_bytes"] for x in b) == m["dram_bytes_read"]
assert sum(x["dram_write_bytes"] for x in b) == m["dram_bytes_write"]
r = t["resource_samples"]
assert r and all(x["resource"] and "read_bytes" in x and "write_bytes" in x for x in r)' "$T"; then
    ok "bandwidth_samples: the DRAM's alone, adding up to summary_metrics; the resources apart"
else fail "bandwidth_samples: the DRAM's alone" "$(head -c 300 "$T")"; fi
# a trace written the old way (the resources' samples in bandwidth_samples, tagged
# "resource") still loads with its resources
python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))
for x in t.pop("resource_samples"):
    x["dram_read_bytes"] = x.pop("read_bytes"); x["dram_write_bytes"] = x.pop("write_bytes")
    t["bandwidth_samples"].append(x)
json.dump(t, open(sys.argv[2], "w"))' "$T" "$TMP/old.json"
run "$NPUSCOPE" summary "$T"
new_busiest=$(grep -E '^ +busiest' <<<"$OUT" | head -1)
run "$NPUSCOPE" summary "$TMP/old.json"
expect_status "a trace written the old way: exit 0" 0
old_busiest=$(grep -E '^ +busiest' <<<"$OUT" | head -1)
if [ -n "$new_busiest" ] && [ "$new_busiest" = "$old_busiest" ]; then
    ok "the old way: the same busiest HBM and links ($new_busiest)"
else fail "the old way: the same busiest resources" "new: $new_busiest" "old: $old_busiest"; fi

echo "-- npuscope summary: where the time goes"
run "$NPUSCOPE" run --headless -k vector_add:n=262144 -o "$K"
expect_status "a large vector add: exit 0" 0
run "$NPUSCOPE" summary "$K"
expect_status "summary: exit 0" 0
expect_out "the heading" '^where the time goes$'
expect_out "the run, bound by the host link that carried the inputs" '^  run +host transfer \('
expect_out "the kernel, bound by DMA / HBM" '^  vector_add +DMA / HBM bandwidth \([0-9]+% of the critical path\)$'
expect_out "its evidence: the split of the path" '^ +path +compute [0-9]+%  vector [0-9]+%  DMA/HBM [0-9]+%'
expect_out "its evidence: the roofline point" '^ +roofline +.*FLOP/s of .*HBM .* of 256 GB/s'
expect_out "its evidence: the waits" '^ +waits +.* between ops on the path: '
expect_out "the host messages on one line" '^  host messages +4 \(MemoryWrite 3, MemoryRead 1, other 0\)'
run "$NPUSCOPE" summary --json "$K"
expect_status "summary --json: exit 0" 0
expect_out "JSON: the run's bound" '"bottleneck":\{"run":\{"bound":"host"'
expect_out "JSON: the kernel launch" '\{"name":"vector_add","occurrence":0,"cmdq_id":[0-9]+,"bound":"memory"'
run "$NPUSCOPE" summary "$TESTS_DIR/data/traces/spec_example.json"
expect_status "another producer's trace: exit 0" 0
expect_out "it names what it lacks" 'missing +no per-resource bandwidth samples'

echo "-- every built-in kernel: summary names a bound, with its evidence"
BOUND='(compute \(TE\)|vector \(VE\)|DMA / HBM bandwidth|NoC link [^ ]+|host transfer|dependency latency|DMA per-transfer cost)'
for k in $("$NPUSCOPE" kernels | grep -E '^[a-z_0-9]+$'); do
    run "$NPUSCOPE" run --headless -k "$k" -o "$TMP/k_$k.json"
    expect_status "$k: exit 0" 0
    run "$NPUSCOPE" summary "$TMP/k_$k.json"
    expect_out "$k: its launch's bound" "^  $k +$BOUND \\([0-9]+% of the critical path\\)\$"
    ev=$(sed -n "/^  $k  /,/^  [a-z]/p" <<<"$OUT")
    for line in 'time +[0-9.]+ [nu]s, a critical path of [0-9]+ ops?' \
        'path +compute [0-9]+%  vector [0-9]+%  DMA/HBM [0-9]+%  host [0-9]+%  latency [0-9]+%' \
        'busy +TE [0-9]+%' 'roofline +(.*FLOP/s of .*; HBM .* of .*; intensity|HBM .* of )' \
        'busiest +'; do
        if grep -qE "^ +$line" <<<"$ev"; then ok "$k: evidence /${line%% *}/"
        else fail "$k: evidence /$line/" "$ev"; fi
    done
    if grep -q '^ *missing' <<<"$ev"; then fail "$k: npuscope's own trace lacks nothing" "$ev"
    else ok "$k: nothing missing"; fi
done

run "$NPUSCOPE" summary "$T"
NHOST=$(sed -n 's/^  host messages  *\([0-9][0-9]*\) .*/\1/p' <<<"$OUT")

echo "-- the viewer at 200x60: rows, the bottleneck pane, the critical path, the strips"
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)
tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- view "$T"
expect_screen "the footer names v" 'v verdict'
expect_screen "the host's row" '^ host +│'
expect_screen "an HBM's row in its cube" '^ +hbm +│'
tmux_keys NPage NPage NPage
expect_screen "the links, folded, last" '^▸ links +│'
tmux_keys Enter NPage
expect_screen "Enter unfolds them: the host link" '^  host<->sip0\.io_cpu +│'
tmux_keys Home
tmux_keys v
expect_screen "v: the bottleneck pane (the heuristic, or once the experiment is back, its check)" \
    '^(▶|>| )Bottleneck  run: (dependency latency|DMA per-transfer cost)'
expect_screen "a line per kernel launch: many small transfers" '^ llm_decode +[0-9.]+ us +DMA per-transfer cost [0-9]+%'
expect_screen "the host messages summed, as the summary counts them" "^ host messages \\(${NHOST:-none}\\)"
expect_screen "the run's evidence" '^  path +compute [0-9]+%'
tmux_keys j j
expect_screen "j: the next launch and its evidence" '^ gemm: Enter shows its critical path'
tmux_keys Enter
expect_screen "Enter: its critical path on the Gantt" 'critical path of gemm: [0-9]+ ops'
expect_screen "the details say why the first op waited" 'because +the first op'
expect_screen "... and how long after the start" 'waited +[0-9]+ \([0-9.]+ [num]?s\) after the start'
tmux_keys ')'
expect_screen ") : the next op of the path" 'path 2/[0-9]+: '
tmux_keys ')'
expect_screen "... and the next" 'path 3/[0-9]+: '
tmux_keys '('
expect_screen "( : back" 'path 2/[0-9]+: '
# another launch's path asked for from the bottleneck pane while one is shown: the one shown
# is freed for it, and the details pane, which says the selected op's place on the path, must
# not read it meanwhile (under ASan: a use after free)
for ((i = 0; i < 6; i++)); do
    tmux_screen
    grep -q '^▶Bottleneck' <<<"$SCREEN" && break
    tmux_keys Tab
done
expect_screen "Tab: back to the bottleneck pane" '^▶Bottleneck  run: '
tmux_keys k Enter
expect_screen "Enter on the launch above: its path replaces gemm's" \
    'critical path of vector_add: [0-9]+ ops over'
expect_screen "the details pane says the op's place on it" 'path +critical, op 1 of [0-9]+'
tmux_keys C
expect_screen "C hides it" 'critical path hidden'
tmux_keys E
expect_screen "E: utilization of each engine kind" '^ util DMA x8 +│'
tmux_keys H
expect_screen "H: the heatmap's legend" '^ bandwidth +.*of peak: HBM 256 GB/s'
expect_screen "H: an HBM read and written" '^ c1\.hbm rd +│'
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- 80x24, NO_COLOR"
tmux_start 80 24 "${U[@]}" TERM=xterm-256color NO_COLOR=1 -- view "$T"
tmux_keys v
expect_screen "80x24: the bottleneck pane" '^(▶|>| )Bottleneck  run: '
tmux_keys E H
expect_screen "80x24: no room for the heatmap, said in the title" 'heatmap: no room \(z, b\)'
tmux_keys b
expect_screen "80x24: b makes room for it" '^ bandwidth '
expect_screen "80x24: the utilization strip" '^ util DMA x8 '
tmux_keys C
expect_screen "80x24: C" 'critical path of '
tmux_keys q
expect_exit "80x24: exit 0" 0

echo "-- TERM=vt100, an ASCII locale"
tmux_start 80 24 LANG=C LC_ALL=C TERM=vt100 -- view "$T"
tmux_keys H
expect_screen "vt100: the heatmap legend in ASCII" '^ bandwidth +\.<=25% :50% \+75% #100%'
if LC_ALL=C grep -q $'[\x80-\xff]' <<<"$SCREEN"; then fail "vt100: only ASCII on screen" "$SCREEN"
else ok "vt100: only ASCII on screen"; fi
tmux_keys v
expect_screen "vt100: the bottleneck pane" '^(▶|>| )Bottleneck  run: '
tmux_keys q
expect_exit "vt100: exit 0" 0

echo "-- live: a breakpoint on a metric"
tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- run --paused -k vector_add:n=65536
expect_screen "paused before the first event" ' PAUSED +now 0 '
tmux_keys B
tmux_keys -l 'op.duration > 200'
tmux_keys Enter
expect_screen "the breakpoint is added" 'breakpoint 1: when op\.duration > 200, hit 0 times'
tmux_keys Space
expect_screen "it fires: the header says which and why" \
    ' PAUSED .*breakpoint 1: op\.duration > 200: dma_read on sip0\.cube0\.pe0\.pe_dma lasted [0-9]+ cycles'
tmux_screen; hit=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
tmux_keys c
tmux_wait_not "events: $hit " 10
expect_screen "c: it fires again at the next long op" ' PAUSED .*breakpoint 1: op\.duration > 200: '
tmux_keys R
expect_screen "R: back at its previous hit" 'back at breakpoint 1: op\.duration > 200: '
tmux_screen; got=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
[ -n "$got" ] && [ "$got" = "$hit" ] && ok "R: the event of the first hit ($got)" ||
    fail "R: the event of the first hit" "$hit, R at $got"
tmux_keys B
tmux_keys -l 'idle(xx) > 5'
tmux_keys Enter
expect_screen "a bad condition says what is wrong" 'KIND is dma, te, ve, host or other'
tmux_keys v
expect_screen "live: the bottleneck pane" '^(▶|>| )Bottleneck  run: .* \(running\)'
expect_screen "live: the kernel paused mid-way is labelled running" \
    '^ vector_add +[0-9.]+ [nu]s running [a-zA-Z/ ]+ [0-9]+% +TE '
tmux_keys X d
expect_screen "X d: the breakpoint removed" 'breakpoint 1 removed'
tmux_keys Escape c
expect_screen "c: run to the end (the copy gone back to no longer watches the condition), the verdict follows: no longer running" \
    '^(▶|>| )Bottleneck  run: host transfer [0-9]+% *│'
expect_screen "... the kernel finished, bound by DMA / HBM (once the experiment is back: DMA bandwidth)" \
    '^ vector_add +[0-9.]+ us +(DMA / HBM|DMA) bandwidth [0-9]+% +TE '
tmux_keys q
expect_exit "live: exit 0" 0

finish
