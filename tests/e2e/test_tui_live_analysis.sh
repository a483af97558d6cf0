#!/usr/bin/env bash
# The analysis panes of a live run in a real terminal (tmux) while they compute: the
# analysis reads the run's model on a worker thread, the model held still meanwhile while the
# run goes on (the events counter moves, the header says the view is held), and the screen
# and the keys go on: the progress bar's clock moves, ? opens the help; a key that moves the
# run (space, s) cancels the analysis; q, Ctrl-C and a hang-up end the process within 0.5 s. Once the analysis is done the run goes on and the pane says
# as of when its result is. The analyses are made slow by NPUSCOPE_TEST_ANALYSIS_DELAY_US
# (tests only: a pause at every progress check of an analysis).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
SLOW=NPUSCOPE_TEST_ANALYSIS_DELAY_US=3000000
KERNEL=llm_decode:layers=4,gen=63 # a shape of its own: pgrep finds this test's processes

# events: N in the header of the current screen
events() { tmux_screen; grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9; }

# the computing line's seconds ("verdict: computing (1.2 s)")
took() { tmux_screen; grep -m1 -oE "$1: computing \\([0-9.]+" <<<"$SCREEN" | grep -oE '[0-9.]+$'; }

# none_left NAME: no process of this test's runs is left within 5 s (the run, its
# checkpoints, the verdict's experiment and its workers).
none_left() {
    local i
    for ((i = 0; i < 100; i++)); do
        pgrep -f -- "-k $KERNEL" >/dev/null || { ok "$1"; return; }
        sleep 0.05
    done
    fail "$1" "left: $(pgrep -f -a -- "-k $KERNEL" | head -3)"
}

# open KEY NAME: the live run going, KEY pressed, its pane computing.
open() {
    tmux_start 160 45 -u OPENBLAS_NUM_THREADS "${UTF8[@]}" "$SLOW" -- run -k "$KERNEL"
    expect_screen "$2: the run goes" '^ npuscope +LIVE .*events: [1-9]' 30
    PRESSED=$(events)
    tmux_keys "$1"
    expect_screen "$2: the pane shows its progress" "$2: computing \\([0-9.]+ s\\)" 10
    expect_screen "$2: it says the run goes on" 'the run goes on, its view held until this is done' 5
    expect_screen "$2: the header says the view is held" '^ npuscope +LIVE .*view held by an analysis' 5
    PID=$(app_pid)
}

echo "-- v: the view held, the run, the screen and the keys going on, q in the middle"
open v verdict
expect_screen "verdict: the header shows the run's rate meanwhile" \
    '^ npuscope +LIVE .*events: [0-9]+ +[0-9.]+[kMG]? ev/s, view held by an analysis' 5
e0=$(events) s0=$(took verdict)
tmux_keys '?'
expect_screen "verdict: ? opens the help while it computes" 'npuscope keys' 5
tmux_keys Escape
expect_no_screen "verdict: Escape closes it" 'npuscope keys' 5
sleep 1
e1=$(events) s1=$(took verdict)
if [ -n "$PRESSED" ] && [ -n "$e1" ] && [ "$e1" -gt "$PRESSED" ]; then
    ok "verdict: the run goes on while it computes ($PRESSED events at v, $e1 now)"
else fail "verdict: the run goes on while it computes" "events $PRESSED at v, then $e1"; fi
if [ -n "$s0" ] && [ -n "$s1" ] && awk -v a="$s0" -v b="$s1" 'BEGIN {exit !(b > a)}'; then
    ok "verdict: its clock moves on the screen (${s0} s, then ${s1} s)"
else fail "verdict: its clock moves on the screen" "${s0:-?} s, then ${s1:-?} s"; fi
tmux_keys q
gone_within "verdict: q: the process is gone within 0.5 s" "$PID" 500
expect_exit "verdict: q: exit 0" 0

none_left "verdict: q: nothing left (the experiment the pane started ended with it)"

echo "-- y and A: q in the middle"
for k in "y layers" "A anomalies"; do
    key=${k%% *} name=${k#* }
    open "$key" "$name"
    tmux_keys '?'
    expect_screen "$name: ? opens the help while it computes" 'npuscope keys' 5
    tmux_keys Escape
    tmux_keys q
    gone_within "$name: q: the process is gone within 0.5 s" "$PID" 500
    expect_exit "$name: q: exit 0" 0
done

echo "-- s in the middle: the analysis is cancelled, the run steps"
open v verdict
tmux_keys Space
expect_screen "space: the run pauses" "^ (npuscope +)?PAUSED " 5
p0=$(events)
tmux_keys s
expect_screen "s: one more event" "events: $((p0 + 1)) " 5
expect_screen "the verdict computes again, over the model as it is now" 'verdict: computing' 5
tmux_keys q
gone_within "q after the cancel: the process is gone within 0.5 s" "$PID" 500
expect_exit "q after the cancel: exit 0" 0

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

echo "-- the terminal closed in the middle of the verdict"
open v verdict
tmux_stop # tmux takes its time to close its terminals: no bound on the process's part
gone_within "no process left once the terminal is gone" "$PID" 5000
none_left "terminal closed: nothing left"

echo "-- the verdict fills in, the run goes on, the pane says as of when"
tmux_start 160 45 -u OPENBLAS_NUM_THREADS "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US=1000 \
    -- run -k "$KERNEL"
expect_screen "the run goes" '^ npuscope +LIVE .*events: [1-9]' 30
tmux_keys v
expect_screen "the verdict is shown" 'Bottleneck  run: ' 30
e0=$(events)
expect_screen "the run goes on after it" '^ npuscope +(LIVE|FINISHED) ' 5
sleep 1
e1=$(events)
if [ -n "$e0" ] && [ -n "$e1" ] && [ "$e1" -gt "$e0" ]; then ok "the run goes on ($e0, then $e1 events)"
else fail "the run goes on" "events $e0, then $e1"; fi
tmux_screen
if grep -q FINISHED <<<"$SCREEN"; then ok "as of: the run finished first (nothing to say)"
else expect_screen "the result says as of when" 'Bottleneck  run: .* as of [0-9.]+ [num]?s' 10; fi
tmux_keys z # the pane maximized: the evidence, then the experiment below it
tmux_screen
if grep -q FINISHED <<<"$SCREEN"; then ok "the experiment: the run finished first"
else expect_screen "the experiment waits while the run goes (it would take its cores)" \
    'experiment: starts once the run is paused or finished' 10; fi
tmux_keys Space
expect_screen "paused: the experiment starts" 'experiment: running the workload again' 15
# the experiment (a process group of its own with its workers, below the viewer's) runs at
# the lowest priority: the analyses the user asks for meanwhile take the cores first
descendants() { # PID...: every process below them
    local p c
    for p in "$@"; do
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do echo "$c"; descendants "$c"; done
    done
}
app=$(app_pid)
group=$(ps -o pgid= -p "$app" | tr -d ' ')
exp_nice=$(for p in $(descendants "$app"); do ps -o pgid=,ni= -p "$p"; done |
    awk -v g="$group" '$1 != g { print $2 }' | sort | uniq -c |
    awk '{ printf "%s%s at nice %s", (NR > 1 ? ", " : ""), $1, $2 }')
app_nice=$(ps -o ni= -p "$app" | tr -d ' ')
if [[ "$exp_nice" =~ ^[0-9]+\ at\ nice\ 19$ ]] && [ "$app_nice" = 0 ]; then
    ok "the experiment's processes run at nice 19 ($exp_nice), the viewer at 0"
else fail "the experiment's processes run at nice 19, the viewer at 0" \
    "experiment: ${exp_nice:-no process}; viewer at nice $app_nice"; fi
tmux_keys q
expect_exit "q exits 0" 0
none_left "q: nothing left (the experiment ended with it)"

finish
