#!/usr/bin/env bash
# npuscope view in a real terminal (tmux): what a person sees and does. The spec's example
# trace and a generated one at 80x24 and 200x60; zoom, pan, search, help, resizing below
# the minimum and back, quitting with the terminal restored.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

SPEC=$TESTS_DIR/data/traces/spec_example.json
GEN=$TMP/gen.json
awk -v PES=4 -v N=50 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

# The ruler line (the one starting "cycles"), and its labels alone (no cursor, no ticks).
ruler() { tmux_screen; grep -m1 '^cycles' <<<"$SCREEN"; }
ruler_labels() { ruler | sed -e 's/[▼│]/ /g' -e 's/  */ /g'; }

echo "-- the spec's example trace at 80x24"
tmux_start 80 24 "${UTF8[@]}" -- view "$SPEC"
expect_screen "header: mode, file, run and model, cycles, cursor" \
    '^ POST-MORTEM +spec_example\.json +run_001 / TinyLLM +2000 cyc +cursor 900$'
expect_screen "row label DMA 0" '^ DMA 0 +│'
expect_screen "row label TE 0" '^ TE 0 +│'
expect_screen "ruler in cycles" '^cycles +│▼900 +│1000 +│1100'
expect_screen "op name on its bar" 'TE_GEMM'
expect_screen "summary pane" '^(▶|>| )Summary'
expect_screen "footer keys" 'q quit +\? help +/ search'
tmux_keys q
expect_exit "q exits 0 and restores the terminal" 0

echo "-- a generated trace at 80x24"
tmux_start 80 24 "${UTF8[@]}" -- view "$GEN"
expect_screen "group row" '▾ sip0\.cube0'
expect_screen "PE group" '▾ pe0'
expect_screen "track rows" '^ +pe_dma +│'
expect_screen "ns ruler (clock known)" '^ns +│'
expect_screen "marker band" '^markers.*◆HALFWAY'
expect_screen "fitted" 'Gantt +[0-9.]+ cyc/col \(fit\)'
before=$(ruler)
labels=$(ruler_labels)
tmux_keys +
tmux_wait_not 'cyc/col \(fit\)'
after=$(ruler)
if [ "$before" != "$after" ]; then ok "zoom in changes the ruler"; else
    fail "zoom in changes the ruler" "$before"; fi
tmux_keys l
tmux_wait_change
panned=$(ruler)
if [ "$panned" != "$after" ]; then ok "pan right changes the ruler"; else
    fail "pan right changes the ruler" "$after"; fi
tmux_keys f
expect_screen "f fits again" 'cyc/col \(fit\)'
if [ "$(ruler_labels)" = "$labels" ]; then ok "fit gives the first ruler back"; else
    fail "fit gives the first ruler back" "$labels" "$(ruler_labels)"; fi

tmux_keys g # the cursor to the start: the search goes forward from it
expect_screen "g: cursor at the start" 'cursor 0 \('
tmux_keys /
expect_screen "search prompt" 'search: /'
tmux_keys gemm Enter
expect_screen "search finds the gemm ops" "'gemm': 200 matches"
expect_screen "the match's details" 'op +gemm_f16'
expect_screen "its component" 'on +sip0\.cube0\.pe0\.pe_gemm'
expect_screen "the cursor moved to it" 'cursor 40 \('
tmux_keys n
expect_screen "n: next match" 'cursor 45 \('
tmux_keys N
expect_screen "N: previous match" 'cursor 40 \('
tmux_keys / z z z Enter
expect_screen "no match says so" "no match for 'zzz'"

tmux_keys '?'
expect_screen "help overlay" 'npuscope keys'
expect_screen "help lists zoom" '│ \+ = +zoom in around the cursor'
tmux_keys PgDn
expect_screen "help scrolls: search" '│ / +search op names and components'
tmux_keys PgDn
expect_screen "help lists quit" '│ q +quit +│'
tmux_keys x
expect_screen "any key closes the help" '^(▶|>| )Gantt'
expect_no_screen "help gone" 'npuscope keys'

tmux_resize 30 8
expect_screen "30x8: window too small" 'window too small'
expect_screen "30x8: what is needed" 'need 40x10'
tmux_resize 80 24
expect_screen "back to 80x24: the header" '^ +POST-MORTEM +gen\.json +gen_001'
expect_screen "back to 80x24: the rows" '▾ pe0'
tmux_keys q
expect_exit "q exits 0" 0

echo "-- the generated trace at 200x60"
tmux_start 200 60 "${UTF8[@]}" -- view "$GEN"
expect_screen "wide: header with everything" \
    "^ npuscope +POST-MORTEM +$GEN +gen_001 / GenNet +5020 cyc +cursor 0 \\(0 ns\\)"
expect_screen "wide: memory or summary beside details" '^(▶|>| )Summary +.*│ Details'
expect_screen "wide: all four PEs" '▾ pe3'
tmux_keys m
expect_screen "memory pane with a tab per space" 'Memory +hbm +tcm'
expect_screen "memory regions listed" '0x0000000(0|1)[0-9a-f]{4} +2\.00 KiB'
tmux_keys Tab
expect_screen "Tab moves the focus to the details, marked ▶" '▶Details'
tmux_keys q
expect_exit "q exits 0 (200x60)" 0

echo "-- at the minimum size, 40x10"
tmux_start 40 10 "${UTF8[@]}" -- view "$GEN"
expect_screen "40x10: header: mode, file, cursor" '^ POST-MORTEM +gen\.json +cursor 0 \(0 ns\)$'
expect_screen "40x10: rows" 'sip0\.cube0'
expect_no_screen "40x10: not too small" 'window too small'
tmux_keys Tab
expect_screen "40x10: Tab shows a bottom pane, marked as the focus" '^(▶|>)Summary'
tmux_keys q
expect_exit "q exits 0 (40x10)" 0

finish
