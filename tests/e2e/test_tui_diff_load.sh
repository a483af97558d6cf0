#!/usr/bin/env bash
# D in the viewer loads the second trace without blocking the screen (in a real terminal,
# tmux): the comparison shows the load's progress (a bar, the share read) while the trace is
# read, other keys are answered meanwhile (? opens the help), q, Ctrl-C and a hang-up end the
# process within 0.5 s, and D or Esc closes the comparison still loading, the viewer going
# on. The second trace is a real one of 600 k events (180 MB, about a second and a half to
# load here); NPUSCOPE_TEST_ANALYSIS_DELAY_US (tests only: a pause at every progress check,
# every 4096 records here) stretches its load to a few seconds, so that the keys reach it
# in time on a busy machine. Then, at a normal pace, a small trace is compared.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

A=$TMP/a.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$A"
BIG=$TMP/big.json
awk -v PES=4 -v N=50000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$BIG"
SMALL=$TMP/small.json
awk -v PES=4 -v N=1900 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$SMALL"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
SLOW=NPUSCOPE_TEST_ANALYSIS_DELAY_US=20000
runs=0

# loading NAME: A opened (a cache of its own each time: B is never read from an index),
# D, B's path, Enter: B loading.
loading() {
    runs=$((runs + 1))
    tmux_start 160 45 "${UTF8[@]}" "$SLOW" XDG_CACHE_HOME="$TMP/cache$runs" -- view "$A"
    expect_screen "$1: the trace opens" 'POST-MORTEM' 30
    tmux_keys D
    expect_screen "$1: D opens the prompt" 'compare with trace: ' 5
    tmux_keys "$BIG" Enter
    expect_screen "$1: the load's progress" 'comparison: computing \([0-9.]+ s\)' 10
    expect_screen "$1: what it is doing, how far" 'loading the second trace' 5
    PID=$(app_pid)
}

echo "-- D: q in the middle of the second trace's load"
loading q
expect_screen "q: the share read so far" '[0-9]+%' 5
tmux_keys '?'
expect_screen "q: ? opens the help while it loads" 'npuscope keys' 5
tmux_keys Escape
expect_screen "q: the help closes, the load goes on" 'loading the second trace' 5
tmux_keys q
gone_within "q: the process is gone within 0.5 s" "$PID" 500
expect_exit "q: exit 0" 0

echo "-- D: Ctrl-C in the middle of the load"
loading Ctrl-C
tmux_keys C-c
gone_within "Ctrl-C: the process is gone within 0.5 s" "$PID" 500
expect_exit "Ctrl-C: exit 130" 130

echo "-- D: a hang-up in the middle of the load"
loading SIGHUP
kill -HUP "$PID"
gone_within "SIGHUP: the process is gone within 0.5 s" "$PID" 500
expect_exit "SIGHUP: exit 129" 129

echo "-- D closes the comparison while its trace loads"
loading D
tmux_keys D
expect_screen "D: the comparison closed" 'comparison closed' 5
expect_screen "D: the trace's own view again" '^(▶|>| )Gantt ' 5
tmux_keys j
expect_no_screen "D: the load does not come back" 'loading the second trace' 3
tmux_keys q
expect_exit "D: then q exits 0" 0

echo "-- Esc closes it too"
loading Esc
tmux_keys Escape
expect_screen "Esc: the comparison closed" 'comparison closed' 5
expect_screen "Esc: the trace's own view again" '^(▶|>| )Gantt ' 5
tmux_keys q
expect_exit "Esc: then q exits 0" 0

echo "-- D at a normal pace: the second trace loaded, compared"
tmux_start 160 45 "${UTF8[@]}" -- view "$A"
expect_screen "the trace opens" 'POST-MORTEM' 30
tmux_keys D
expect_screen "D opens the prompt" 'compare with trace: ' 5
tmux_keys "$SMALL" Enter
expect_screen "the comparison is shown" 'Summary  A -> B' 30
expect_screen "B's name in the header" 'small\.json' 5
tmux_keys D
expect_screen "D closes it" 'comparison closed' 5
tmux_keys D
expect_screen "D opens the prompt again" 'compare with trace: ' 5
tmux_keys "$TMP/none.json" Enter
expect_screen "a file that is not there: the load's error in the status line" 'none\.json' 10
expect_screen "the comparison closed: the Gantt again" '^(▶|>| )Gantt ' 5
tmux_keys q
expect_exit "q exits 0" 0


# cmdline NAME: view A --diff B on the big B, slowed (a cache of its own each time): the
# screen opens once A is loaded, B loading in the comparison.
cmdline() {
    runs=$((runs + 1))
    tmux_start 160 45 "${UTF8[@]}" "$SLOW" XDG_CACHE_HOME="$TMP/cache$runs" -- view "$A" \
        --diff "$BIG"
    expect_screen "$1: the screen opens, B's load in progress" 'comparison: computing \([0-9.]+ s\)' 15
    expect_screen "$1: what it is doing, how far" 'loading the second trace' 5
    PID=$(app_pid)
}

echo "-- view A --diff B: q in the middle of B's load"
cmdline "--diff q"
expect_screen "--diff q: the share read so far" '[0-9]+%' 5
tmux_keys '?'
expect_screen "--diff q: ? opens the help while B loads" 'npuscope keys' 5
tmux_keys Escape
expect_screen "--diff q: the help closes, the load goes on" 'loading the second trace' 5
tmux_keys q
gone_within "--diff q: the process is gone within 0.5 s" "$PID" 500
expect_exit "--diff q: exit 0" 0

echo "-- view A --diff B: Ctrl-C in the middle of B's load"
cmdline "--diff Ctrl-C"
tmux_keys C-c
gone_within "--diff Ctrl-C: the process is gone within 0.5 s" "$PID" 500
expect_exit "--diff Ctrl-C: exit 130" 130

echo "-- view A --diff B: a hang-up in the middle of B's load"
cmdline "--diff SIGHUP"
kill -HUP "$PID"
gone_within "--diff SIGHUP: the process is gone within 0.5 s" "$PID" 500
expect_exit "--diff SIGHUP: exit 129" 129

echo "-- view A --diff B: D closes the comparison while B loads, A's view goes on"
cmdline "--diff D"
tmux_keys D
expect_screen "--diff D: the comparison closed" 'comparison closed' 5
expect_screen "--diff D: A's own view" '^(▶|>| )Gantt ' 5
tmux_keys j
expect_no_screen "--diff D: the load does not come back" 'loading the second trace' 3
tmux_keys q
expect_exit "--diff D: then q exits 0" 0

echo "-- view A --diff B at a normal pace: B loaded on the worker, then compared"
runs=$((runs + 1))
tmux_start 160 45 "${UTF8[@]}" XDG_CACHE_HOME="$TMP/cache$runs" -- view "$A" --diff "$BIG"
expect_screen "--diff: the comparison appears once B is loaded" 'Summary  A -> B' 60
expect_screen "--diff: B's name in the header" 'big\.json' 5
tmux_keys q
expect_exit "--diff: q exits 0" 0

echo "-- view A --diff B with a B that is not there, or not a whole trace"
tmux_start 200 24 "${UTF8[@]}" -- view "$A" --diff "$TMP/none.json"
expect_screen "a B that is not there: one line" \
    '^npuscope view: .*none\.json: cannot open: No such file or directory$' 10
expect_exit "a B that is not there: exit 2" 2
head -c 200000 "$SMALL" >"$TMP/cut.json"
tmux_start 200 24 "${UTF8[@]}" -- view "$A" --diff "$TMP/cut.json"
expect_screen "a cut B: one line once its load fails" \
    '^npuscope view: .*cut\.json:[0-9]+:[0-9]+: .*: invalid JSON: unterminated string$' 15
expect_exit "a cut B: exit 2" 2

finish
