#!/usr/bin/env bash
# npuscope diff: two real runs of one kernel on chips that differ only in DMA bandwidth
# (the change must be DMA busy time, with its sign and size), identical traces, --fail-if
# exit codes, bad conditions and invalid traces (one line, exit 2), hand-written traces
# with added and removed ops, traces with nothing in common, hostile text escaped; then the
# side-by-side view in a real terminal (tmux): view A --diff B, its keys, and D in the viewer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

CFG=$TESTS_DIR/data/chips
DATA=$TESTS_DIR/data/traces
A=$TMP/a.json
B=$TMP/b.json
ESC=$(printf '\033')

echo "-- two runs of vector_add: DMA at 64 and at 32 GB/s"
run "$NPUSCOPE" run --headless -c "$CFG/dma_64gbps.yaml" -k vector_add:n=65536 -o "$A"
expect_status "run on the 64 GB/s chip" 0
run "$NPUSCOPE" run --headless -c "$CFG/dma_32gbps.yaml" -k vector_add:n=65536 -o "$B"
expect_status "run on the 32 GB/s chip" 0

run "$NPUSCOPE" diff "$A" "$B"
expect_status "diff without conditions exits 0" 0
expect_out "the one config key that differs, first" '^config_snapshot: 1 key differs$'
expect_out "its values" '^  pe\.dma\.gbps +64 -> 32$'
expect_out "DMA busy time is the main change, up" '^main change: DMA busy cycles \+[0-9]+ \('
# Only the transfer part of each DMA op doubles (its setup does not): DMA busy time grows by
# the bytes moved (512 KiB read + 256 KiB written) at 64 bytes per ns, 12288 cycles at 1 GHz.
# Each 16 KiB op takes setup 20 + 16384 / gbps + HBM latency 100 + links 8: 384 -> 640.
expect_out "by the bytes moved at the old bandwidth: +12288 cycles" \
    '^main change: DMA busy cycles \+12288 \(\+[0-9.]+%\)'
expect_out "the DMA engine row" '^  DMA +18432 +30720 +\+12288 \(\+66\.7%\)'
expect_out "the VE did not change" '^  VE +([0-9]+) +\1 +='
comp=$(grep -A1 '^components' <<<"$OUT" | tail -1)
if grep -qE '^  sip0\.cube0\.pe0\.pe_dma +18432 +30720 ' <<<"$comp"; then
    ok "the DMA component leads the components"; else
    fail "the DMA component leads the components" "$comp"; fi
ops=$(grep -A1 '^op names' <<<"$OUT" | tail -1)
if grep -qE '^  dma_read ' <<<"$ops"; then ok "dma_read leads the op names"; else
    fail "dma_read leads the op names" "$ops"; fi
expect_out "cycles, with the ratio" '^cycles +56829 +69117 +\+12288 \(\+21\.6%\) +1\.216x$'
expect_out "the launch matched by kernel name" '^  vector_add +21965 +34253 +\+12288'
expect_out "DRAM bytes unchanged" '^  read bytes +524288 +524288 +=$'
expect_out "the peak bandwidth went down" '^  peak bytes/cycle +[0-9.]+ +[0-9.]+ +-[0-9.]+ \(-'

run "$NPUSCOPE" diff --json "$A" "$B"
expect_status "--json exits 0" 0
expect_out "JSON: the main change" '"main_change":\{"engine":"DMA","metric":"busy","busy":\{"a":18432,"b":30720,"change":12288\}\}'
expect_out "JSON: the config difference" '"config_differences":\[\{"key":"pe\.dma\.gbps","a":64,"b":32\}\]'
expect_out "JSON: one line" '^\{.*\}$'

echo "-- identical traces"
run "$NPUSCOPE" diff "$A" "$A"
expect_status "exit 0" 0
expect_out "no change at all" '^no change: the traces are the same in everything compared$'
expect_out "the same config" '^config_snapshot: the same$'
expect_out "nothing added or removed" '0 added, 0 removed'
run "$NPUSCOPE" diff --json "$A" "$A"
expect_out "JSON: zero changes" '"changes":0,'
run "$NPUSCOPE" diff --fail-if 'cycles>+0%' --fail-if 'ops.added>0,ops.removed>0' "$A" "$A"
expect_status "no condition holds on identical traces" 0

echo "-- --fail-if"
run "$NPUSCOPE" diff --fail-if 'cycles>+5%' "$A" "$B"
expect_status "cycles>+5% holds: exit 1" 1
expect_err "it says which and why" "^npuscope diff: --fail-if 'cycles>\+5%' holds: cycles 56829 -> 69117 \(\+21\.6%\)$"
expect_one_line "one line per condition that holds"
expect_out "the conditions section" "^  cycles>\+5% +holds "
run "$NPUSCOPE" diff --fail-if 'cycles>+50%' "$A" "$B"
expect_status "cycles>+50% does not hold: exit 0" 0
run "$NPUSCOPE" diff --fail-if 'cycles>1.3x' "$A" "$B"
expect_status "cycles>1.3x does not hold" 0
run "$NPUSCOPE" diff --fail-if 'cycles>1.1x' "$A" "$B"
expect_status "cycles>1.1x holds" 1
run "$NPUSCOPE" diff --fail-if 'dma.busy>+12287' "$A" "$B"
expect_status "an absolute change: dma.busy>+12287 holds" 1
run "$NPUSCOPE" diff --fail-if 'dma.busy>+12288' "$A" "$B"
expect_status "dma.busy>+12288 does not" 0
run "$NPUSCOPE" diff --fail-if 'dma.util>+0.05' "$A" "$B"
expect_status "dma.util>+0.05 holds (+10.5 points)" 1
run "$NPUSCOPE" diff --fail-if 'te.busy<-10%' "$A" "$B"
expect_status "te.busy<-10% does not hold (no TE)" 0
run "$NPUSCOPE" diff --fail-if 'cycles<100000' "$A" "$B"
expect_status "a plain number is B's value: cycles<100000 holds" 1
run "$NPUSCOPE" diff --fail-if 've.busy>+1%, cycles > +10%' "$A" "$B"
expect_status "a comma-separated list: the second holds" 1
expect_err "only the one that holds is named" "'cycles > \+10%' holds"
run "$NPUSCOPE" diff --json --fail-if 'cycles>+5%' "$A" "$B"
expect_status "--json with a condition that holds: exit 1" 1
expect_out "JSON: the condition and its value" '"conditions":\[\{"condition":"cycles>\+5%","a":56829\.0,"b":69117\.0,"value":21\.6[0-9]*,"held":true\}\]'

echo "-- bad conditions: one line, exit 2"
for cond in 'cyc>5' 'cycles=>5' 'cycles>' '' 'cycles>5%%' 'dma.busy>-1.5x' 'cycles>1e9' \
    'gpu.busy>1' 'cycles>+5%,' "cycles>$ESC[31m"; do
    run "$NPUSCOPE" diff --fail-if "$cond" "$A" "$B"
    expect_status "--fail-if '$cond': exit 2" 2
    expect_one_line "--fail-if '$cond': one line"
done
expect_err "control characters escaped" 'cycles>\\e\[31m'
if grep -q "$ESC" <<<"$ERR"; then fail "no escape character reaches the terminal" "$ERR"; else
    ok "no escape character reaches the terminal"; fi
run "$NPUSCOPE" diff --fail-if 'cyc>5' "$A" "$B"
expect_err "an unknown metric lists the metrics" "unknown metric 'cyc' \(cycles, ops, "

echo "-- usage and invalid traces: one line, exit 2"
run "$NPUSCOPE" diff "$A"
expect_status "one trace only" 2
expect_err "says what is missing" 'missing the second trace'
run "$NPUSCOPE" diff "$A" "$B" "$A"
expect_status "three traces" 2
run "$NPUSCOPE" diff --top x "$A" "$B"
expect_status "--top needs a number" 2
run "$NPUSCOPE" validate "$DATA/negative_cycle.json"
line=$(head -1 <<<"$OUT")
run "$NPUSCOPE" diff "$A" "$DATA/negative_cycle.json"
expect_status "B invalid: exit 2" 2
expect_one_line "one line"
if [ "$ERR" = "npuscope diff: $line" ]; then ok "the message validate gives, with the JSON path"; else
    fail "the message validate gives, with the JSON path" "validate: $line" "diff: $ERR"; fi
run "$NPUSCOPE" diff "$DATA/start_after_end.json" "$B"
expect_status "A invalid: exit 2" 2
expect_err "names the file and the path" 'start_after_end\.json: timeline_events\[1\]\.end_cycle: 1300 is before start_cycle 1400$'
run "$NPUSCOPE" diff "$A" "$DATA/no_version.json"
expect_status "not a trace: exit 2" 2
expect_one_line "not a trace: one line"
expect_err "not a trace: why" 'no_version\.json: not a trace'
run "$NPUSCOPE" diff "$A" "$TMP/missing.json"
expect_status "a missing file: exit 2" 2
expect_err "a missing file: why" 'missing\.json: cannot open'
run "$NPUSCOPE" diff --help
expect_status "--help exits 0" 0
expect_out "--help documents the conditions" 'VALUE +\+5% or 5% +relative change'

echo "-- hand-written traces with ops added and removed"
run "$NPUSCOPE" diff "$DATA/diff_base.json" "$DATA/diff_ops.json"
expect_status "exit 0" 0
expect_out "one op added, one removed" '^ops +5 +5 += +1 added, 1 removed \(matched by launch'
expect_out "the launch only in A" '^  cmdq 3 +100 +- +only in A$'
expect_out "the launch only in B" '^  cmdq 5 +- +60 +only in B$'
expect_out "the longer GEMM's launch" '^  cmdq 1 +200 +300 +\+100 \(\+50\.0%\)'
expect_out "the op name only in A" '^  DMA_STORE_TILE +100 +0 +-100 \(-100\.0%\) +count 1 -> 0  only in A$'
expect_out "the op name only in B" '^  VE_SOFTMAX_TILE +0 +60 +\+60 \(new\) +count 0 -> 1  only in B$'
expect_out "the component only in B" '^  VE 1 +0 +60 .*only in B$'
expect_out "the marker region that lost an op" '^  FFN +500 +500 += +ops: 0 added, 1 removed$'
expect_out "the config key" '^  npu\.num_ve +2 -> 3$'
run "$NPUSCOPE" diff --fail-if 'ops.added>0' "$DATA/diff_base.json" "$DATA/diff_ops.json"
expect_status "ops.added>0 holds" 1
run "$NPUSCOPE" diff --fail-if 'ops.removed>=2' "$DATA/diff_base.json" "$DATA/diff_ops.json"
expect_status "ops.removed>=2 does not" 0

echo "-- per kernel line: which lines got slower (both traces have call sites)"
cp "$DATA/srcdiff_a.json" "$DATA/srcdiff_b.json" "$TMP/"
(cd "$TMP" && "$NPUSCOPE" diff srcdiff_a.json srcdiff_b.json >"$TMP/lines.txt" 2>&1)
if diff -u "$DATA/srcdiff.diff.txt" "$TMP/lines.txt" >"$TMP/lines.diff"; then
    ok "diff of two traces with call sites: the golden text, its per-line section last"
else fail "diff of two traces with call sites: the golden text" "$(head -20 "$TMP/lines.diff")"; fi
expect_line() { if grep -qE -- "$2" "$TMP/lines.txt"; then ok "$1"; else fail "$1" "no /$2/"; fi; }
expect_line "the slower GEMM line first" '^  mykern mykern\.c:4 +200 +300 +\+100 \(\+50\.0%\) +ops 1 -> 1$'
expect_line "a line that lost its ops" '^  mykern mykern\.c:5 +50 +0 +-50 \(-100\.0%\) +ops 1 -> 0  removed$'
run "$NPUSCOPE" diff --json "$DATA/srcdiff_a.json" "$DATA/srcdiff_b.json"
expect_status "--json: exit 0" 0
if python3 - "$OUT" <<'PY'
import json, sys
lines = json.loads(sys.argv[1])["lines"]
assert [(l["file"], l["line"]) for l in lines[:2]] == [("mykern.c", 4), ("mykern.c", 3)], lines
l4 = lines[0]
assert l4["kernel"] == "mykern" and l4["cycles"] == {"a": 200, "b": 300, "change": 100}, l4
assert l4["ops"] == {"a": 1, "b": 1, "change": 0} and l4["status"] == "matched", l4
assert [l["status"] for l in lines if l["line"] == 6] == ["added"], lines
assert [l for l in lines if l["line"] is None and l["file"] == ""], lines
PY
then ok "--json: one object per line with kernel, file, line, ops and cycles before/after"
else fail "--json: the lines" "$OUT"; fi
run "$NPUSCOPE" diff "$A" "$B"
expect_out "two real runs: the x loads' line got slower with the slower DMA" \
    '^  vector_add vector_add\.c:4[56] +[0-9]+ +[0-9]+ +\+[0-9]+ \(\+[0-9.]+%\)'
run "$NPUSCOPE" diff "$DATA/diff_base.json" "$DATA/diff_ops.json"
if grep -q '^source lines' <<<"$OUT"; then fail "traces without call sites: no per-line section"
else ok "traces without call sites: no per-line section"; fi
run "$NPUSCOPE" diff --json "$DATA/diff_base.json" "$DATA/diff_ops.json"
if grep -q '"lines"' <<<"$OUT"; then fail "--json without call sites: no lines"
else ok "--json without call sites: no lines"; fi

echo "-- nothing in common, and hostile text"
run "$NPUSCOPE" diff "$DATA/spec_example.json" "$A"
expect_status "another producer's trace against ours: exit 0" 0
expect_out "compared whole, with a note" '^note: no kernel launch or marker region in common: the runs are compared whole$'
run "$NPUSCOPE" diff "$TESTS_DIR/data/tui/hostile.json" "$DATA/spec_example.json"
expect_status "a hostile trace is compared" 0
if grep -q "$ESC" <<<"$OUT"; then fail "names from the trace are escaped" "$OUT"; else
    ok "names from the trace are escaped"; fi
expect_out "an escaped op name" 'ok\\rEVIL\\e\[31mred'

echo "-- the side-by-side view: npuscope view A --diff B at 120x40"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
tmux_start 120 40 "${UTF8[@]}" -- view "$A" --diff "$B"
expect_screen "header: both files" ' POST-MORTEM +a\.json vs b\.json '
expect_screen "one time axis" '^ Compare  one time axis '
expect_screen "A's Gantt, then B's" '^ A  .*a\.json  56829 cyc'
expect_screen "B's with its change" '^ B  .*b\.json  69117 cyc \(\+21\.6%\) .*Δbusy$'
expect_screen "rows matched by component, the DMA up 67% in B" \
    '^ sip0\.cube0\.pe0\.pe_dma .* \+67%$'
expect_screen "the math engine unchanged" '^ sip0\.cube0\.pe0\.pe_math .* =$'
expect_screen "the summary with its delta column" \
    '^ DMA busy +18432 +30720 +\+12288 \(\+66\.7%\)'
expect_screen "the details pane" 'Details  A \| B'
tmux_keys j j # the host's row and the m_cpu's come first
tmux_keys ']'
expect_screen "] selects the next op of the row: both sides" 'op +dma_read +dma_read'
expect_screen "its change" 'change +cycles \+256 \(\+66\.7%\)'
expect_screen "the op's params on both sides" 'nbytes +16384 +16384'
tmux_keys a
expect_screen "a aligns the matched launches" '^ Compare  aligned at each matched launch '
expect_screen "B's shift at the cursor" 'shifted \+0 cyc at the cursor'
tmux_keys a
expect_screen "a again: one time axis" '^ Compare  one time axis '
tmux_keys /
expect_screen "search is not for the comparison" 'not while comparing \(D closes\)'
tmux_keys D
expect_screen "D closes the comparison" 'comparison closed'
expect_screen "the usual Gantt again" '^(▶|>| )Gantt '
tmux_keys D
expect_screen "D opens a prompt" 'compare with trace: '
tmux_keys "$DATA/negative_cycle.json" Enter
expect_screen "an invalid trace: validate's message" \
    'negative_cycle\.json: timeline_events\[0\]\.start_cycle: -5 is negative'
tmux_keys Escape + +
tmux_wait 'Gantt +[0-9.k]+ cyc/col  ' 5
tmux_screen; zoom=$(grep -m1 -oE 'Gantt +[0-9.k]+ cyc/col' <<<"$SCREEN")
tmux_keys D
tmux_keys "$B" Enter
expect_screen "a valid one: compared" '^ Compare  one time axis '
tmux_keys Enter a D
expect_screen "D closes it again" 'comparison closed'
tmux_screen
if [ -n "$zoom" ] && [ "$zoom" = "$(grep -m1 -oE 'Gantt +[0-9.k]+ cyc/col' <<<"$SCREEN")" ]; then
    ok "the Gantt's zoom as it was before the comparison ($zoom)"
else fail "the Gantt's zoom as it was before the comparison" "before: $zoom" "$(sed -n 2p <<<"$SCREEN")"; fi
tmux_keys q
expect_exit "q exits 0 and restores the terminal" 0

echo "-- the side-by-side view at 80x24, and a trace it cannot compare"
tmux_start 80 24 "${UTF8[@]}" -- view "$DATA/diff_base.json" --diff "$DATA/diff_ops.json"
expect_screen "80x24: the comparison" '^ Compare '
expect_screen "a component only in B" '^ VE 1 +\(only in B\)'
tmux_keys Tab
expect_screen "Tab: the summary" '^(▶|>| )Summary  A -> B'
tmux_keys q
expect_exit "q exits 0" 0
tmux_start 200 24 "${UTF8[@]}" -- view "$A" --diff "$DATA/negative_cycle.json"
expect_screen "--diff with an invalid trace: one line" \
    '^npuscope view: .*negative_cycle\.json: timeline_events\[0\]\.start_cycle: -5 is negative$'
expect_exit "exit 2" 2

finish
