#!/usr/bin/env bash
# The verdict of a loaded trace computed ahead of its key, in a real terminal (tmux): from
# the first frame on, so that v shows it at once once it is done, and the progress of the
# computation under way (never a second one from the start) when it is not. q, Ctrl-C and
# a hang-up in the middle of a computation ahead end the process within 0.5 s. The user's
# analyses come first: the verdict ahead runs at the lowest priority, raised when its pane
# opens (unless the process could not raise it back: then it is not lowered); a pane opened
# meanwhile computes while it waits.
# The analyses are made slow by NPUSCOPE_TEST_ANALYSIS_DELAY_US (tests only: a pause at
# every progress check of an analysis; this trace's verdict checks a few times); the runs
# of analyses are read from NPUSCOPE_TASK_LOG (a line per finished or cancelled run). A
# verdict judged is kept beside the trace's index for the next view of it, as soon as it is
# judged (the last section); the sections before drop it, to see each view judge it. Once
# the verdict is done, the layers are computed ahead of y too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

GEN=$TMP/gen.json
awk -v PES=4 -v N=2000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
LOG=$TMP/tasks.log

now_ms() { date +%s%3N; }

# logged REGEX [SECONDS]: a line of the task log comes to match.
logged() {
    local i
    for ((i = 0; i < ${2:-15} * 20; i++)); do
        grep -qE -- "$1" "$LOG" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# at_once NAME REGEX MS: after a key, the screen matches REGEX within MS milliseconds.
at_once() {
    local t0=$(now_ms) t
    tmux_wait "$2" 10
    t=$(($(now_ms) - t0))
    if grep -qE -- "$2" <<<"$SCREEN" && [ "$t" -le "$3" ]; then ok "$1 ($t ms)"
    else fail "$1" "after $t ms (at most $3)" "screen:" "$SCREEN"; fi
}

# niced: how many threads of npuscope ($PID) run at nice 19 (/proc/PID/task/TID/stat: the
# 19th field; 17th after the command's name in parentheses).
niced() {
    local f n=0
    for f in /proc/"$PID"/task/*/stat; do
        [ "$(sed 's/^.*) //' "$f" 2>/dev/null | awk '{print $17}')" = 19 ] && n=$((n + 1))
    done
    echo "$n"
}

# view DELAY_US [TRACE]: the trace ($GEN by default) opened, its analyses slowed down, the
# first frame on screen (no verdict kept from the views before).
view() {
    rm -f "$LOG" "$XDG_CACHE_HOME"/npuscope/*.vrd
    tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US="$1" NPUSCOPE_TASK_LOG="$LOG" \
        -- view "${2:-$GEN}"
    expect_screen "the trace opens" 'POST-MORTEM' 30
    PID=$(app_pid)
}

echo "-- a loaded trace: the verdict computed before v, shown at once"
view 1000000 # the verdict takes seconds
if logged ' loaded ' 30; then ok "the verdict was computed with its pane closed: $(head -1 "$LOG")"
else fail "the verdict was computed with its pane closed" "no analysis ran in 30 s"; fi
# kept beside the index as soon as it is done, no key pressed: a viewer left alone, then
# closed, keeps it too
for ((i = 0; i < 100; i++)); do
    ls "$XDG_CACHE_HOME"/npuscope/*.vrd >/dev/null 2>&1 && break
    sleep 0.05
done
if ls "$XDG_CACHE_HOME"/npuscope/*.vrd >/dev/null 2>&1; then
    ok "the verdict is kept beside the index once judged, with no key pressed"
else fail "the verdict is kept beside the index once judged, with no key pressed" \
    "nothing in 5 s: $(ls "$XDG_CACHE_HOME"/npuscope 2>&1)"; fi
tmux_keys v
at_once "v shows the verdict at once" 'Bottleneck  run: ' 1000
tmux_keys z # the pane maximized: the experiment below the evidence
expect_screen "the experiment starts only now, with the pane open" \
    'experiment: (running the workload again|none|not started|[0-9]+ runs)' 15
tmux_keys q
expect_exit "q exits 0" 0

echo "-- v while it is still computing: its progress, then the verdict, one computation"
view 1000000
sleep 1.5
if [ "$(niced)" -eq 1 ]; then ok "the verdict ahead runs at the lowest priority (nice 19)"
else fail "the verdict ahead runs at the lowest priority (nice 19)" "threads at nice 19: $(niced)"; fi
tmux_keys v
expect_screen "v shows the progress of the computation" 'verdict: computing \([0-9.]+ s\)' 5
took=$(grep -m1 -oE 'verdict: computing \([0-9.]+' <<<"$SCREEN" | grep -oE '[0-9.]+$')
if awk -v t="${took:-0}" 'BEGIN {exit !(t >= 1.2)}'; then
    ok "it is the computation started before the key (${took} s in)"
else fail "it is the computation started before the key" "computing for ${took:-?} s when v was pressed"; fi
if [ "$(niced)" -eq 0 ]; then ok "its pane open, its priority is raised back"
else fail "its pane open, its priority is raised back" "threads at nice 19: $(niced)"; fi
expect_screen "then the verdict" 'Bottleneck  run: ' 20
n=$(grep -c ' loaded ' "$LOG" 2>/dev/null)
if [ "${n:-0}" -eq 1 ] && ! grep -q cancelled "$LOG"; then ok "one computation of the verdict"
else fail "one computation of the verdict" "$(cat "$LOG" 2>/dev/null)"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- beside the summary's first figures (one thread), the verdict ahead takes the other core"
# 264,000 ops: the summary sums a trace of 262,144 events or more up on a worker, slowed down
# here for seconds; the verdict ahead starts from the first frame beside it, at nice 19, not
# once the summary is done
WIDE=$TMP/wide.json
awk -v PES=4 -v N=22000 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$WIDE"
view 3000000 "$WIDE"
beside=
for ((i = 0; i < 60; i++)); do
    tmux_screen
    grep -q 'summing up' <<<"$SCREEN" || break
    [ "$(niced)" -eq 1 ] && beside=1 && break
    sleep 0.05
done
if [ -n "$beside" ]; then ok "the verdict ahead runs while the summary is summed up"
else fail "the verdict ahead runs while the summary is summed up" \
    "threads at nice 19: $(niced)" "screen:" "$SCREEN"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- q, Ctrl-C and a hang-up while the verdict is computed ahead"
for how in q C-c HUP; do
    view 3000000
    sleep 0.5
    # under way: its thread at nice 19, no verdict finished (the process then ends without
    # waiting for it: nothing of it is written)
    if [ "$(niced)" -eq 1 ] && [ ! -s "$LOG" ]; then ok "$how: the verdict is under way"
    else fail "$how: the verdict is under way" "threads at nice 19: $(niced), log: $(cat "$LOG" 2>/dev/null)"; fi
    if [ "$how" = HUP ]; then kill -HUP "$PID"; else tmux_keys "$how"; fi
    gone_within "$how: the process is gone within 0.5 s" "$PID" 500
    case $how in q) expect_exit "q: exit 0" 0 ;; C-c) expect_exit "Ctrl-C: exit 130" 130 ;;
    HUP) expect_exit "SIGHUP: exit 129" 129 ;; esac
done

echo "-- y while the verdict is computed ahead: the layers meanwhile, the verdict goes on"
view 1000000
sleep 0.5
tmux_keys y
expect_screen "y: the layers are shown" 'Layers  [0-9]+ layer' 30
tmux_keys v
expect_screen "v: the verdict" 'Bottleneck  run: ' 30
n=$(grep -vc 'layers' "$LOG" 2>/dev/null) # the verdict's line says its last step
if [ "${n:-0}" -eq 1 ] && ! grep -q cancelled "$LOG"; then ok "one computation of the verdict, not cancelled"
else fail "one computation of the verdict, not cancelled" "$(cat "$LOG" 2>/dev/null)"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- a loaded trace's layers computed ahead once the verdict is: y shows them at once"
view 20000
if logged ' loaded layers' 30; then ok "the layers were computed with their pane closed"
else fail "the layers were computed with their pane closed" "$(cat "$LOG" 2>/dev/null)"; fi
first=$(grep -n ' loaded ' "$LOG" | head -1)
if [[ $first != *layers* ]]; then ok "after the verdict: $first"
else fail "after the verdict" "$(cat "$LOG")"; fi
tmux_keys y
at_once "y shows the layers at once" 'Layers  [0-9]+ layer' 1000
sleep 0.3
n=$(grep -c ' loaded layers' "$LOG" 2>/dev/null)
if [ "${n:-0}" -eq 1 ]; then ok "one computation of the layers"
else fail "one computation of the layers" "$(cat "$LOG" 2>/dev/null)"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- C while the verdict is computed ahead: the path waits for it, then v at once"
# the verdict computes the critical paths (here the run's: the trace has no launches): C
# takes it from there rather than computing it beside it, which would hold the verdict
# (a run ahead) back until C's own was done, and v would wait for it afterwards
view 1000000
tmux_keys C # (at the first frame: a key of that frame comes before the verdict ahead starts)
expect_screen "C says it waits for the verdict under way, with its progress" \
    'computing the critical path with the verdict: [a-z]' 5
if [ "$(niced)" -eq 0 ]; then ok "the verdict C waits for runs as the user's (nothing at nice 19)"
else fail "the verdict C waits for runs as the user's (nothing at nice 19)" "threads at nice 19: $(niced)"; fi
expect_screen "then the run's critical path" 'critical path of the run: [0-9]+ ops over' 30
tmux_keys v
at_once "v then shows the verdict at once" 'Bottleneck  run: ' 1000
n=$(grep -c ' loaded verdict' "$LOG" 2>/dev/null)
if [ "${n:-0}" -eq 1 ] && ! grep -q cancelled "$LOG"; then ok "one computation of the verdict"
else fail "one computation of the verdict" "$(cat "$LOG" 2>/dev/null)"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- a user who may not raise a priority back: nothing lowered, the verdict still ahead"
# RLIMIT_NICE 0 and no CAP_SYS_NICE, as for a user's account: a thread lowered to nice 19
# would stay there once its pane opened; the run ahead keeps the process's priority instead
# and gives way to the user's analyses by waiting for them
if [ "$(id -u)" = 0 ] && setpriv --bounding-set -sys_nice true 2>/dev/null; then
    REAL=$NPUSCOPE
    NPUSCOPE=$TMP/unprivileged
    printf '#!/bin/sh\nexec prlimit --nice=0:0 setpriv --bounding-set -sys_nice -- %q "$@"\n' \
        "$REAL" >"$NPUSCOPE"
    chmod +x "$NPUSCOPE"
    view 1000000
    sleep 1.5
    if [ "$(niced)" -eq 0 ] && [ ! -s "$LOG" ]; then ok "no right to raise it back: the verdict ahead is not lowered"
    else fail "no right to raise it back: the verdict ahead is not lowered" "threads at nice 19: $(niced), log: $(cat "$LOG" 2>/dev/null)"; fi
    if logged ' loaded ' 30; then ok "the verdict is computed ahead all the same"
    else fail "the verdict is computed ahead all the same" "no analysis ran in 30 s"; fi
    tmux_keys v
    at_once "v shows it at once" 'Bottleneck  run: ' 1000
    tmux_keys q
    expect_exit "q exits 0" 0
    NPUSCOPE=$REAL
else
    ok "skipped: dropping CAP_SYS_NICE needs root"
fi

echo "-- a verdict kept from an earlier view: the next view of the trace shows it, not judged again"
rm -rf "$XDG_CACHE_HOME"
# verdict_lines: the bottleneck pane's table and evidence as on screen (from its title on)
verdict_lines() { sed -n '/Bottleneck  run: /,$p' <<<"$SCREEN"; }
kept_view() {
    rm -f "$LOG"
    tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TASK_LOG="$LOG" -- view "$GEN"
    expect_screen "$1: the trace opens" 'POST-MORTEM' 30
    logged ' loaded verdict' 30 || fail "$1: the verdict ahead ends" "no verdict in 30 s"
    tmux_keys v
    expect_screen "$1: v shows the verdict" 'Bottleneck  run: ' 10
    sleep 0.3 # (the evidence drawn whole)
    tmux_screen
}
kept_view "first view"
FIRST=$(verdict_lines)
# judged: what its log line names is the last step of a judgement, not a reading
judged() { grep -q ' loaded verdict' "$LOG" && ! grep -q 'kept from an earlier view' "$LOG"; }
if judged; then ok "the first view judged the verdict"
else fail "the first view judged the verdict" "$(cat "$LOG")"; fi
tmux_keys q
expect_exit "q exits 0" 0
if ls "$XDG_CACHE_HOME"/npuscope/*.vrd >/dev/null 2>&1 && ! ls "$XDG_CACHE_HOME"/npuscope/ | grep -q '\.tmp\.'
then ok "the verdict is kept beside the index, no temporary file left"
else fail "the verdict is kept beside the index, no temporary file left" "$(ls -la "$XDG_CACHE_HOME"/npuscope 2>&1)"; fi
kept_view "second view"
if [ "$(grep -c ' loaded verdict' "$LOG")" = 1 ] && grep -q ' loaded verdict: kept from an earlier view' "$LOG"
then ok "the second view read the kept verdict, judging nothing"
else fail "the second view read the kept verdict, judging nothing" "$(cat "$LOG")"; fi
if [ "$(verdict_lines)" = "$FIRST" ]; then ok "the same verdict on screen"
else fail "the same verdict on screen" "first:" "$FIRST" "second:" "$(verdict_lines)"; fi
tmux_keys q
expect_exit "q exits 0" 0
touch "$GEN"
kept_view "the trace changed"
if judged; then ok "a changed trace's verdict is judged again"
else fail "a changed trace's verdict is judged again" "$(cat "$LOG")"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- q while the pane's experiment runs: the experiment and its workers end with the viewer"
OWN=$TMP/own.json
# a small trace whose workload, as recorded, is a long one: each of the experiment's runs
# lasts seconds (a worker of it writes to the experiment only once its run ends)
"$NPUSCOPE" run --headless -k llm_decode:layers=2,gen=4 -o "$OWN" >/dev/null
sed -i 's/"kernel:llm_decode:layers=2,gen=4"/"kernel:llm_decode:layers=32,gen=256"/' "$OWN"
tmux_start 160 45 "${UTF8[@]}" -- view "$OWN"
expect_screen "the trace opens" 'POST-MORTEM' 30
PID=$(app_pid)
SID=$(ps -o sid= -p "$PID" | tr -d ' ')
tmux_keys v
expect_screen "v: the verdict" 'Bottleneck  run: ' 30
tmux_keys z
expect_screen "the experiment runs" 'experiment: running the workload again' 15
tmux_keys q
expect_exit "q exits 0" 0
# npuscope processes of the pane's session: the experiment and its workers are copies of
# the viewer (they end on its exit even though it leaves at once, without freeing them)
left=x
for ((i = 0; i < 60; i++)); do
    left=$(ps -eo sid=,pid=,comm= | awk -v s="$SID" '$1 == s && $3 == "npuscope" {print $2}')
    [ -z "$left" ] && break
    sleep 0.05
done
if [ -z "$left" ]; then ok "q: nothing of the experiment is left within 3 s"
else fail "q: nothing of the experiment is left within 3 s" "left: $left"; kill -9 $left 2>/dev/null; fi

finish
