#!/usr/bin/env bash
# Leaving a live run at once loses nothing: q, Ctrl-C and a hang-up end the process without
# freeing the model (the kernel takes it back), but only once what the user asked for is
# written. A run with -o left with q at a few hundred thousand events, and one left with
# Ctrl-C while the verdict computes, leave a trace (up to now, marked incomplete) that
# `npuscope validate` accepts, the terminal restored; without -o, q ends the run, its
# checkpoints for going back included, within 0.5 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
LONG=llm_decode:layers=32,gen=256 # millions of events: it never ends by itself here
SLOW=NPUSCOPE_TEST_ANALYSIS_DELAY_US=3000000

# events_at_least N: wait until the header counts N engine events (60 s at most)
events_at_least() {
    local i n
    for ((i = 0; i < 1200; i++)); do
        tmux_screen
        n=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
        [ -n "$n" ] && [ "$n" -ge "$1" ] && return 0
        sleep 0.05
    done
    return 1
}

# valid NAME FILE: the trace is there, marked incomplete, and validate accepts it
valid() {
    if [ ! -s "$2" ]; then fail "$1: the trace is written" "no $2"; return; fi
    run "$NPUSCOPE" validate "$2"
    if [ "$STATUS" -le 1 ]; then ok "$1: validate accepts the trace (exit $STATUS)"; else
        fail "$1: validate accepts the trace" "exit $STATUS" "${OUT:0:400}" "${ERR:0:400}"; fi
    if grep -q '"incomplete":true' "$2"; then ok "$1: marked incomplete"; else
        fail "$1: marked incomplete" "$(head -c 400 "$2")"; fi
}

echo "-- q with -o at a few hundred thousand events"
tmux_start 160 45 "${UTF8[@]}" -- run -k "$LONG" -o "$TMP/q.json"
if events_at_least 300000; then ok "q: the run passes 300000 events"; else
    fail "q: the run passes 300000 events" "screen:" "$SCREEN"; fi
tmux_keys q
expect_exit "q: exit 0, the terminal restored" 0
expect_screen "q: says where the trace went" 'trace written to .*q\.json \(incomplete: the run was stopped\)'
valid q "$TMP/q.json"

echo "-- Ctrl-C with -o while the verdict computes"
tmux_start 160 45 "${UTF8[@]}" "$SLOW" -- run -k "$LONG" -o "$TMP/c.json"
events_at_least 200000 || fail "C-c: the run passes 200000 events" "screen:" "$SCREEN"
tmux_keys v
expect_screen "C-c: the verdict computes" 'verdict: computing \([0-9.]+ s\)' 10
tmux_keys C-c
expect_exit "C-c: exit 130, the terminal restored" 130
valid C-c "$TMP/c.json"

echo "-- q without -o: the run and its checkpoints end within 0.5 s"
tmux_start 160 45 "${UTF8[@]}" -- run -k "$LONG"
events_at_least 300000 || fail "q: the run passes 300000 events" "screen:" "$SCREEN"
PID=$(app_pid)
tmux_keys q
gone_within "q: the process is gone within 0.5 s" "$PID" 500
expect_exit "q: exit 0" 0

finish
