#!/usr/bin/env bash
# npuscope view DIR on a sweep directory, in a real terminal (tmux): the table of points,
# sorting by a column, the plot following the column cursor, Enter opening a point's
# trace and q coming back, the help, quitting with the terminal restored.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

cat >"$TMP/sweep.yaml" <<'EOF'
kernel: vector_add
axes:
  pe.dma.gbps: [16, 64]
  n: [65536, 262144]
EOF
"$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/sw" --engine local -j 2 >/dev/null 2>&1 ||
    fail "the sweep to view ran"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

# first_row: the id of the first point in the table (the line after the column header).
first_row() { tmux_screen; grep -A1 -m1 '^ id ' <<<"$SCREEN" | tail -1 | awk '{print $1}'; }

echo "-- the table at 120x30"
tmux_start 120 30 "${UTF8[@]}" -- view "$TMP/sw"
expect_screen "header: mode, directory, counts" '^ SWEEP  .*/sw  4 points: 4 ok$'
expect_screen "column header: id, the axes, the metrics" \
    '^ id +pe\.dma\.gbps +n +status +cycles_total +kernel_cycles +dma_util +te_util +ve_util +hbm_gbps +energy_j +perf'
expect_screen "a row" '^  0001 +16 +262144 +ok +[0-9]+ +[0-9]+ +[0-9.]+% '
expect_screen "the plot through the selected point" 'cycles_total vs pe\.dma\.gbps \(n=65536\)'
expect_screen "the status line names the point" 'point 0000 +pe\.dma\.gbps=16, n=65536 +Enter opens its trace'
expect_screen "footer keys" 'Enter trace +s sort +p plot'
[ "$(first_row)" = 0000 ] && ok "point order first" || fail "point order first" "$SCREEN"

echo "-- sort by cycles_total"
tmux_keys Right Right Right Right s
expect_screen "the sorted column is marked" 'cycles_total▲'
[ "$(first_row)" = 0002 ] && ok "s: fewest cycles first (64 GB/s, the small n)" || fail "s: ascending" "$SCREEN"
tmux_keys s
expect_screen "s again: descending" 'cycles_total▼'
[ "$(first_row)" = 0001 ] && ok "s again: most cycles first (16 GB/s, the large n)" || fail "s: descending" "$SCREEN"

echo "-- the plot follows the column cursor"
tmux_keys Right
expect_screen "on kernel_cycles: the kernels' own cycles plotted" 'kernel_cycles vs (n|pe\.dma\.gbps) \('
tmux_keys Left Left Left
expect_screen "on the n column: cycles against n" 'cycles_total vs n \(pe\.dma\.gbps=16\)'
tmux_keys p
tmux_wait_not 'cycles_total vs' && ok "p hides the plot" ||
    fail "p hides the plot" "screen still matches /cycles_total vs/" "$SCREEN"

echo "-- Enter opens the selected point's trace, q comes back"
tmux_keys g Enter
expect_screen "the trace viewer" '^ POST-MORTEM +trace\.json'
expect_screen "its Gantt" '^(▶|>| )Gantt'
tmux_keys q
expect_screen "q: back to the table" '^ SWEEP '
expect_screen "the table is still sorted" 'cycles_total▼'

echo "-- help, compare, quit"
tmux_keys '?'
expect_screen "the help" 'sweep table keys'
tmux_keys x
tmux_wait_not 'sweep table keys' && ok "any key closes it" ||
    fail "any key closes it" "screen still matches /sweep table keys/" "$SCREEN"
tmux_keys d
expect_screen "d without a mark says what to do" 'mark a point with Space first'
tmux_keys Space Down d
expect_screen "Space and d compare two points in the diff view" '^ Compare  one time axis '
expect_screen "both points named by their ids in the header" ' [0-9]{4} vs [0-9]{4} '
expect_screen "both points' traces" '^ A  .*[0-9]{4} .* cyc'
tmux_keys q
expect_screen "q: back to the table" '^ SWEEP '
tmux_keys q
expect_exit "q exits 0 and restores the terminal" 0

echo "-- a sweep that has not run yet"
"$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/pending" --engine slurm >/dev/null 2>&1
tmux_start 80 24 "${UTF8[@]}" -- view "$TMP/pending"
expect_screen "pending points" '4 points: 0 ok, 4 pending'
tmux_keys Enter
expect_screen "Enter on a pending point says so" 'point 0000 has no trace \(it has not run yet\)'
tmux_keys q
expect_exit "q exits 0" 0

mkdir -p "$TMP/plain"
run "$NPUSCOPE" view "$TMP/plain"
expect_status "view of a directory that is no sweep: exit 2" 2
expect_one_line "... one line"
finish
