#!/usr/bin/env bash
# The verdict of a long live run (issue: analyses of a live run must not block): the live TUI
# runs a workload at full speed in tmux until EVENTS simulation events; then the run's speed
# with the bottleneck pane closed, `v` pressed, the time until its verdict is on screen and,
# meanwhile, the longest wait of a key (`?` opening the help, Escape closing it, one after the
# other; capture-pane polled every 5 ms: the figures carry that much resolution and tmux's own
# cost); then the run's speed with the pane open (a live verdict holds the run while it
# computes, and runs again after ten times its cost), and closed again. Speeds from the
# header's events counter over SECONDS each; a run that finishes within one fails the benchmark
# (KERNEL must outlast EVENTS and four of them).
#   live_verdict.sh NPUSCOPE [KERNEL] [EVENTS] [SECONDS]
set -u
bin=$1
kernel=${2:-llm_decode:layers=32,gen=1024}
target=${3:-50000000}
secs=${4:-15}
command -v tmux >/dev/null || { echo "live_verdict: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
events() { screen | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9; }
. "$(dirname "$0")/poll.sh" # until_match, until_gone
. "$(dirname "$0")/live.sh" # live_wait, live_speed
cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    "$bin" run -k "$kernel")
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
live_wait "$target"
echo "live TUI on -k $kernel, from $(events) events:"
live_speed "the run, the pane closed"

t0=$(now_ms)
tmux -L "$sock" send-keys -t 0 v
waits=()
while ! screen | grep -qE 'Bottleneck  run: '; do
    k0=$(now_ms); tmux -L "$sock" send-keys -t 0 '?'
    until_match 'npuscope keys' || { echo "live_verdict: the help never opened"; exit 1; }
    k1=$(now_ms); tmux -L "$sock" send-keys -t 0 Escape
    until_gone 'npuscope keys' || { echo "live_verdict: the help never closed"; exit 1; }
    k2=$(now_ms)
    waits+=($((k1 - k0)) $((k2 - k1)))
    sleep 0.2
    [ $(($(now_ms) - t0)) -gt 300000 ] && { echo "live_verdict: no verdict in 5 minutes"; exit 1; }
done
t1=$(now_ms)
echo "  v to the verdict on screen: $((t1 - t0)) ms, at $(events) events"
sorted=$(printf '%s\n' "${waits[@]}" | sort -n)
pct() { awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p+0.999); if (i<1) i=1; print a[i]}' <<<"$sorted"; }
echo "  meanwhile ${#waits[@]} keys: median $(pct 0.5) ms, 90% within $(pct 0.9) ms, the longest" \
    "$(pct 1) ms (tmux polling included; Escape's 25 ms included)"
live_speed "the run, the pane open"
live_speed "the run, the pane open (later)"
tmux -L "$sock" send-keys -t 0 v
live_speed "the run, the pane closed again"
k0=$(now_ms)
tmux -L "$sock" send-keys -t 0 q
until_match '^\[exit [0-9]+\]' || { echo "live_verdict: q did not end it"; exit 1; }
echo "  q to the exit: $(($(now_ms) - k0)) ms"
