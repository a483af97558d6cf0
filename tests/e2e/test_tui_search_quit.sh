#!/usr/bin/env bash
# The search (/, n, N), the source pane's line profile (K) and the comparison of two traces
# (view --diff, its second trace loaded first) in a real terminal (tmux) while they compute:
# the search says how far it got in the status line, the source pane and the comparison
# show a progress bar, other keys are answered meanwhile (? opens the help), and q, Ctrl-C
# and a hang-up end the process within 0.5 s; D closes a comparison still computed. Then,
# at a normal pace, the search selects the same matches in the same order as before, n
# pressed while it runs included. The scans are made slow by NPUSCOPE_TEST_ANALYSIS_DELAY_US
# (tests only: a pause at every progress check), so that a small trace's scan lasts seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

GEN=$TMP/gen.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
SLOW=NPUSCOPE_TEST_ANALYSIS_DELAY_US=3000000

# search NAME: the trace opened, a search for gemm under way.
search() {
    tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- view "$GEN"
    expect_screen "$1: the trace opens" 'POST-MORTEM' 30
    tmux_keys / g e m m Enter
    expect_screen "$1: the status line says how far the search is" \
        "search 'gemm': (starting|searching the ops, [0-9]+%)" 10
    PID=$(app_pid)
}

# lineprof NAME: the trace opened, the source pane computing its profile.
lineprof() {
    tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- view "$GEN"
    expect_screen "$1: the trace opens" 'POST-MORTEM' 30
    tmux_keys K
    expect_screen "$1: the source pane shows its progress" 'line profile: computing \([0-9.]+ s\)' 10
    expect_screen "$1: what it is doing" 'line profile: naming the launches|line profile: ops by line' 5
    PID=$(app_pid)
}

echo "-- /: q in the middle of a search"
search search
tmux_keys '?'
expect_screen "search: ? opens the help while it searches" 'npuscope keys' 5
tmux_keys Escape
expect_screen "search: the help closes" 'POST-MORTEM' 5
tmux_keys j
tmux_keys q
gone_within "search: q: the process is gone within 0.5 s" "$PID" 500
expect_exit "search: q: exit 0" 0

echo "-- /: Ctrl-C in the middle of a search"
search search
tmux_keys C-c
gone_within "search: Ctrl-C: the process is gone within 0.5 s" "$PID" 500
expect_exit "search: Ctrl-C: exit 130" 130

echo "-- K: q in the middle of the line profile"
lineprof "line profile"
tmux_keys '?'
expect_screen "line profile: ? opens the help while it computes" 'npuscope keys' 5
tmux_keys Escape
expect_screen "line profile: still computing" 'line profile: computing' 5
tmux_keys q
gone_within "line profile: q: the process is gone within 0.5 s" "$PID" 500
expect_exit "line profile: q: exit 0" 0

echo "-- K: a hang-up in the middle of the line profile"
lineprof "line profile"
kill -HUP "$PID"
gone_within "line profile: SIGHUP: the process is gone within 0.5 s" "$PID" 500
expect_exit "line profile: SIGHUP: exit 129" 129

echo "-- view --diff: q in the middle of the comparison"
GEN2=$TMP/gen2.json
awk -v PES=4 -v N=1900 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN2"
tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- view "$GEN" --diff "$GEN2"
expect_screen "diff: the comparison shows its progress" 'comparison: computing \([0-9.]+ s\)' 30
expect_screen "diff: what it is doing" 'loading the second trace|regions: |comparing: ' 5
PID=$(app_pid)
tmux_keys '?'
expect_screen "diff: ? opens the help while it computes" 'npuscope keys' 5
tmux_keys Escape
expect_screen "diff: still computing" 'comparison: computing' 5
tmux_keys q
gone_within "diff: q: the process is gone within 0.5 s" "$PID" 500
expect_exit "diff: q: exit 0" 0

echo "-- view --diff: D closes the comparison while it computes"
tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- view "$GEN" --diff "$GEN2"
expect_screen "diff: the comparison shows its progress" 'comparison: computing' 30
tmux_keys D
expect_screen "D: the comparison closed, the Gantt back" 'comparison closed' 5
expect_screen "D: the trace's own view" 'POST-MORTEM' 5
tmux_keys q
expect_exit "D: then q exits 0" 0

echo "-- view --diff at a normal pace: the comparison fills in"
tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US=1000 -- view "$GEN" --diff "$GEN2"
expect_screen "the comparison is shown" 'Summary  A -> B' 30
expect_screen "its note in the status line" 'comparing: a aligns|comparing|launch|marker' 5
tmux_keys q
expect_exit "q exits 0" 0

echo "-- the search at a normal pace: its matches, in order, n pressed while it runs"
tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US=300000 -- view "$GEN"
expect_screen "the trace opens" 'POST-MORTEM' 30
tmux_keys / g e m m Enter
expect_screen "the search is under way" "search 'gemm': (starting|searching)" 5
tmux_keys n n
expect_screen "the search ends: every match counted" "search 'gemm': 8000 matches" 20
# from the cursor at 0: the first gemm_f16 at 40 (pe0), then pe1's at 45, pe2's at 50
expect_screen "the two n pressed meanwhile walked on: the third match selected" \
    'cursor 50 \(50 ns\)' 20
tmux_keys N
expect_screen "N: the previous match" 'cursor 45 \(45 ns\)' 20
tmux_keys / n o p e Enter
expect_screen "a search that finds nothing says so" "no match for 'nope'" 20
tmux_keys q
expect_exit "q exits 0" 0

echo "-- K at a normal pace: the pane fills in"
tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US=1000 -- view "$GEN"
expect_screen "the trace opens" 'POST-MORTEM' 30
tmux_keys K
expect_screen "the source pane shows the profile" 'no call sites in this trace|Source .* ops' 20
tmux_keys q
expect_exit "q exits 0" 0

finish
