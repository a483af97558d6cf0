#!/usr/bin/env bash
# The analysis panes of a loaded trace in a real terminal (tmux) while they compute: v (the
# verdict), y (layers), A (anomalies) and T (tokens) show a progress bar (what they are
# doing, a percent) instead of freezing the screen, C (the critical path) its progress in
# the status line; other keys are answered meanwhile (?
# opens the help); q, Ctrl-C and a hang-up (the terminal closed) end the process within
# 0.5 s, whatever is computing. The analyses are made slow by
# NPUSCOPE_TEST_ANALYSIS_DELAY_US (tests only: a pause at every progress check of an
# analysis), so that a small trace's analysis lasts seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

GEN=$TMP/gen.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
SLOW=NPUSCOPE_TEST_ANALYSIS_DELAY_US=3000000

# open KEY NAME: the trace opened, KEY pressed, its pane computing.
open() {
    tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- view "$GEN"
    expect_screen "$2: the trace opens" 'POST-MORTEM' 30
    tmux_keys "$1"
    expect_screen "$2: the pane shows its progress" "$2: computing \\([0-9.]+ s\\)" 10
    expect_screen "$2: what it is doing and a percent" '^ *[0-9]+%|\.\.\.' 5
    PID=$(app_pid)
}

for k in "v verdict" "y layers" "A anomalies" "T tokens"; do
    key=${k%% *} name=${k#* }
    echo "-- $key: q in the middle"
    open "$key" "$name"
    tmux_keys '?'
    expect_screen "$name: ? opens the help while it computes" 'npuscope keys' 5
    expect_screen "$name: still computing" "$name: computing" 5
    tmux_keys Escape
    tmux_keys q
    gone_within "$name: q: the process is gone within 0.5 s" "$PID" 500
    expect_exit "$name: q: exit 0" 0
done

echo "-- C: the critical path's progress in the status line, q in the middle"
tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- view "$GEN"
expect_screen "C: the trace opens" 'POST-MORTEM' 30
tmux_keys C
# (the verdict, computed ahead from the first frame, computes the path: C says its progress)
expect_screen "C: the status line says how far the path is" \
    'computing the critical path (of the run(\.\.\.|: critical path: .*[0-9]+%)|with the verdict: [a-z].*[0-9]+%)' 10
PID=$(app_pid)
tmux_keys '?'
expect_screen "C: ? opens the help while it computes" 'npuscope keys' 5
tmux_keys Escape
tmux_keys q
gone_within "C: q: the process is gone within 0.5 s" "$PID" 500
expect_exit "C: q: exit 0" 0

echo "-- Ctrl-C in the middle of the verdict"
open v verdict
tmux_keys C-c
gone_within "Ctrl-C: the process is gone within 0.5 s" "$PID" 500
expect_exit "Ctrl-C: exit 130" 130

echo "-- a hang-up in the middle of the layers"
open y layers
kill -HUP "$PID"
gone_within "SIGHUP: the process is gone within 0.5 s" "$PID" 500
expect_exit "SIGHUP: exit 129" 129

echo "-- the terminal closed in the middle of the anomalies"
open A anomalies
tmux_stop # tmux takes its time to close its terminals: no bound on the process's part
gone_within "no process left once the terminal is gone" "$PID" 5000

echo "-- the pane fills in once it is done"
tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US=1000 -- view "$GEN"
expect_screen "the trace opens" 'POST-MORTEM' 30
tmux_keys v
expect_screen "the verdict is shown" 'a critical path of [0-9]+ ops' 20
tmux_keys C
expect_screen "the critical path is shown" 'critical path of the run: [0-9]+ ops over' 20
tmux_keys q
expect_exit "q exits 0" 0

finish
