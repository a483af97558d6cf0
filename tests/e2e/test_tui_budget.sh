#!/usr/bin/env bash
# The memory budget (--mem-budget): a live run in the TUI whose model needs more than the
# budget stays under it in resident memory (VmRSS of the live process, sampled all along)
# and still draws its Gantt, zoomed out and in; a saved trace opened under a budget draws
# too; a bad size is one clear line and exit status 2, for run and view.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

echo "-- bad sizes"
for cmd in run view; do
    for bad in 12x 0 1K -5 ''; do
        if [ "$cmd" = run ]; then run "$NPUSCOPE" run --headless --mem-budget "$bad" -k gemm
        else run "$NPUSCOPE" view --mem-budget "$bad" "$TESTS_DIR/data/traces/minimal.json"; fi
        expect_status "$cmd --mem-budget '$bad': exit 2" 2
        expect_err "$cmd --mem-budget '$bad': says what is wrong" \
            "^npuscope $cmd: --mem-budget takes a size of at least 1M, such as 512M or 2G, got '$bad'"
        expect_one_line "$cmd --mem-budget '$bad': one line"
    done
done
run "$NPUSCOPE" run --headless --mem-budget 64M -k gemm
expect_status "a good size is taken (headless)" 0
run "$NPUSCOPE" run --help
expect_out "run --help names the option" '--mem-budget SIZE'
run "$NPUSCOPE" view --help
expect_out "view --help names the option" '--mem-budget SIZE'

echo "-- a live run under a budget smaller than its model"
# ~2.5 M op records: ~160 MB of model alone, over 200 MB resident without a budget
kernel=llm_decode:layers=32,gen=64
budget_mb=128
tmux_start 160 40 "${UTF8[@]}" -- run --mem-budget ${budget_mb}M -o "$TMP/run.json" -k $kernel
expect_screen "the run starts" ' LIVE | FINISHED '
# the live process: of the run's processes (the one the shell started, checkpoints), the
# one that works
live_pid() {
    local shell best="" most=-1 p t
    shell=$(tmux_format '#{pane_pid}')
    for p in $(pgrep -P "$shell" -x npuscope) $(pgrep -P "$(pgrep -P "$shell" -x npuscope | head -1)" 2>/dev/null); do
        t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
        [ -n "$t" ] && [ "$t" -gt "$most" ] && { most=$t; best=$p; }
    done
    echo "$best"
}
# the resident memory along the run (sampled every ~0.1 s) and at its end: the budget's
# thread and the TUI give pages back as the model's arrays grow, and a frame at any zoom
# draws from the tracks' level-of-detail summaries in memory, so the run stays under the
# budget all along (without a budget it ends over 200 MB)
peak=0 samples=0 last=0
for ((i = 0; i < 1800; i++)); do # 180 s at most
    pid=$(live_pid)
    r=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null)
    if [ -n "$r" ]; then
        samples=$((samples + 1)) last=$r
        [ "$r" -gt "$peak" ] && peak=$r
    fi
    tmux_screen
    grep -q ' FINISHED ' <<<"$SCREEN" && break
    sleep 0.1
done
sleep 0.5
r=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null)
[ -n "$r" ] && last=$r
expect_screen "the run finishes" ' FINISHED '
if [[ "$NPUSCOPE" == */asan/* ]]; then
    echo "  (resident memory: not checked under AddressSanitizer, whose shadow memory and quarantine are resident too; peak $peak MB)"
elif [ "$samples" -gt 20 ] && [ "$peak" -le $budget_mb ] && [ "$last" -le $budget_mb ]; then
    ok "VmRSS under ${budget_mb} MB all along (peak $peak MB, $samples samples) and at the end ($last MB)"
else
    fail "VmRSS under ${budget_mb} MB all along and at the end" "end $last MB, peak $peak MB, $samples samples"
fi
events=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
if [ "${events:-0}" -gt 25000000 ]; then ok "a long run: $events events"
else fail "a long run" "only '${events:-?}' events"; fi
expect_screen "the Gantt draws the run's rows" 'pe_gemm|pe_dma'
expect_screen "with bars" '[█▇▆▅▄▃▂▁▌▐]'
tmux_keys -
expect_screen "zoomed out, it draws" 'cyc/col'
tmux_keys + + + +
tmux_wait_change 5
expect_screen "zoomed in, it draws bars" '[█▇▆▅▄▃▂▁▌▐]'
r=$(awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null)
if [[ "$NPUSCOPE" == */asan/* ]] || [ "${r:-0}" -le $budget_mb ]; then
    ok "VmRSS under ${budget_mb} MB after zooming out and in (${r:-?} MB)"
else
    fail "VmRSS under ${budget_mb} MB after zooming out and in" "${r:-?} MB"
fi
tmux_keys q
expect_screen "q leaves" '\[exit 0\]' 20

echo "-- the saved trace under a budget"
tmux_start 160 40 "${UTF8[@]}" -- view --mem-budget 64M "$TMP/run.json"
expect_screen "view draws the Gantt" 'pe_gemm|pe_dma' 60
expect_screen "with bars" '[█▇▆▅▄▃▂▁▌▐]'
tmux_keys q
expect_screen "q leaves" '\[exit 0\]' 20

finish
