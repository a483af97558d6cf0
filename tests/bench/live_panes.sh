#!/usr/bin/env bash
# The analysis panes of a long live run (layers y, anomalies A, tokens T, or any pane key):
# the live TUI runs a workload at full speed in tmux until EVENTS simulation events; then the
# run's speed with no pane open; then, for each key, the pane opened, the run's speed over
# SECONDS with it open, and every run of its analysis meanwhile (from NPUSCOPE_TASK_LOG: how
# long it held the run, the first from event 0, the next ones updates), the pane closed.
# Speeds from the header's events counter.
#   live_panes.sh NPUSCOPE [KERNEL] [EVENTS] [SECONDS] [KEYS]
set -u
bin=$1
kernel=${2:-llm_decode:layers=32,gen=512}
target=${3:-50000000}
secs=${4:-10}
keys=${5:-y A T}
command -v tmux >/dev/null || { echo "live_panes: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
log=$(mktemp)
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -f "$log"' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
events() { screen | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9; }
until_match() { local i; for ((i = 0; i < 4000; i++)); do screen | grep -qE -- "$1" && return 0; sleep 0.005; done; return 1; }
speed() {
    local e0 e1 t0 t1
    e0=$(events) t0=$(now_ms)
    sleep "$secs"
    e1=$(events) t1=$(now_ms)
    echo "  $1: $(((e1 - e0) * 1000 / (t1 - t0))) ev/s ($e0 to $e1 events in $((t1 - t0)) ms)"
}

cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    NPUSCOPE_TASK_LOG="$log" "$bin" run -k "$kernel")
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
until_match ' LIVE ' || { echo "live_panes: no header"; screen; exit 1; }
while e=$(events); [ "${e:-0}" -lt "$target" ]; do
    screen | grep -q FINISHED && { echo "live_panes: the run ended at $e events"; exit 1; }
    sleep 0.5
done
echo "live TUI on -k $kernel, from $(events) events:"
speed "no pane"
for k in $keys; do
    : >"$log"
    tmux -L "$sock" send-keys -t 0 "$k"
    speed "$k open"
    tmux -L "$sock" send-keys -t 0 "$k"
    sleep 0.5
    awk -v k="$k" '{n++; ms[n]=$1; if (n > 1) {s += $1; if ($1 > mx) mx = $1}}
        END {if (!n) {print "  " k ": no run"; exit}
             printf "  %s: %d runs; the first %.1f ms", k, n, ms[1];
             if (n > 1) printf ", the next %d: mean %.1f ms, the longest %.1f ms", n - 1, s / (n - 1), mx;
             printf " (last step: ";
             for (i = 4; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : "";
             print ")"}' "$log"
done
speed "no pane (again)"
tmux -L "$sock" send-keys -t 0 q
