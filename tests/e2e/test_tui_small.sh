#!/usr/bin/env bash
# What a small terminal shows (tmux): at 80x24 the help wraps its long lines (the details
# pane's wrapping is tests/unit/test_tui_details.c's), a long path loses its first directories rather than its file name, the
# bottleneck table leaves out whole busy columns rather than cutting one, the critical
# path's lines leave out detail rather than being cut; below 18 lines the footer says that
# other panes exist; at 20x5 the too-small message is whole.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
RUNS=$TMP/a/rather/long/directory/of/many/runs
mkdir -p "$RUNS"

echo "-- a live run at 80x24"
tmux_start 80 24 "${UTF8[@]}" -- run -k vector_add -o "$RUNS/g.json"
expect_screen "the run finishes" ' FINISHED '
expect_screen "the trace's path keeps its end: …/runs/g.json" 'trace written to …/[a-z/]*runs/g\.json$'
expect_no_screen "not cut at its end" 'trace written to .*…$'
tmux_keys '?'
expect_screen "help" 'npuscope keys'
for _ in 1 2 3 4 5 6 7 8; do
    tmux_wait '│ w +write the trace now' 1 && break
    tmux_keys PgDn
done
expect_screen "w's help, its first line" '│ w +write the trace now \(-o FILE; incomplete before'
expect_screen "and its end on the next line, not cut" '│ {10,}end\) +│'
tmux_keys x
tmux_resize 80 16
expect_screen "80x16: one pane at a time, the footer says others exist" '^ Tab other panes'
tmux_resize 20 5
expect_screen "20x5: too small" 'too small'
expect_screen "20x5: what it needs" 'need 40x10'
expect_screen "20x5: what it has, whole" 'have 20x5'
tmux_resize 80 24
expect_screen "back to 80x24" ' FINISHED '
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- the demo's verdict and critical path at 80x24"
"$NPUSCOPE" run --headless -o "$TMP/demo.json" >/dev/null 2>&1
tmux_start 80 24 "${UTF8[@]}" -- view "$TMP/demo.json"
tmux_keys v
expect_screen "the bottleneck table" '^ run +163 us +DMA per-transfer cost [0-9]+%'
expect_screen "its busy columns whole (those that fit)" \
    '^ run +163 us +DMA per-transfer cost [0-9]+% TE +[0-9]+% VE +[0-9]+%( DMA +[0-9]+%)?$'
expect_no_screen "none cut" '^ run .*…$'
tmux_keys Enter
expect_screen "the run's critical path, its line whole" \
    '^critical path of the run: [0-9]+ ops over [0-9.]+ us, [0-9.]+ us waiting; .*$'
expect_no_screen "the path's line not cut" '^critical path .*…$'
tmux_keys ')' ')'
expect_screen "a step's wait line" '^path 3/[0-9]+: .* waited '
expect_no_screen "not cut" '^path 3/.*…$'
tmux_keys q
expect_exit "q: exit 0" 0

finish
