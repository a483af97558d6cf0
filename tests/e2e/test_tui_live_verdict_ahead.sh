#!/usr/bin/env bash
# The verdict of a live run kept warm with its pane closed, in a real terminal (tmux): past a
# million events it follows the run (each verdict taken on from the last), so that v shows it
# at once rather than computing it from the run's first op on the key; the run goes on
# meanwhile. The runs of analyses are read from NPUSCOPE_TASK_LOG (a line per finished run).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
KERNEL=llm_decode:layers=32,gen=400 # a shape of its own: pgrep finds this test's processes
LOG=$TMP/tasks.log

now_ms() { date +%s%3N; }
events() { tmux_screen; grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9; }

echo "-- a live run past a million events: the verdict kept warm, v shows it at once"
tmux_start 160 45 -u OPENBLAS_NUM_THREADS "${UTF8[@]}" NPUSCOPE_TASK_LOG="$LOG" -- run -k "$KERNEL"
expect_screen "the run goes" '^ npuscope +LIVE .*events: [1-9]' 30
PID=$(app_pid)
for ((i = 0; i < 600; i++)); do
    e=$(events)
    [ "${e:-0}" -ge 1500000 ] && break
    sleep 0.05
done
if [ "${e:-0}" -ge 1500000 ]; then ok "the run passes a million events ($e)"
else fail "the run passes a million events" "events: ${e:-?}"; fi
for ((i = 0; i < 400; i++)); do
    grep -q ' ms live verdict' "$LOG" 2>/dev/null && break
    sleep 0.05
done
if grep -q ' ms live verdict' "$LOG" 2>/dev/null; then
    ok "the verdict was computed with its pane closed: $(grep -m1 ' ms live verdict' "$LOG")"
else fail "the verdict was computed with its pane closed" "task log: $(cat "$LOG" 2>/dev/null)"; fi
e0=$(events)
sleep 1
e1=$(events)
if [ -n "$e0" ] && [ -n "$e1" ] && [ "$e1" -gt "$e0" ]; then ok "the run goes on ($e0, then $e1 events)"
else
    tmux_screen
    grep -q FINISHED <<<"$SCREEN" && ok "the run goes on: it finished" ||
        fail "the run goes on" "events $e0, then $e1"
fi
t0=$(now_ms)
tmux_keys v
tmux_wait 'Bottleneck  run: ' 10
t=$(($(now_ms) - t0))
if grep -qE 'Bottleneck  run: ' <<<"$SCREEN" && [ "$t" -le 1000 ]; then ok "v shows the verdict at once ($t ms)"
else fail "v shows the verdict at once" "after $t ms (at most 1000)" "screen:" "$SCREEN"; fi
tmux_keys q
gone_within "q: the process is gone within 0.5 s" "$PID" 500
expect_exit "q exits 0" 0

finish
