#!/usr/bin/env bash
# The analysis panes of a long live run (layers y, anomalies A, tokens T, the critical path C,
# or any pane key): for each key, a run of its own (each pane meets a model of the same size):
# the live TUI runs a workload at full speed in tmux until EVENTS simulation events; then the
# run's speed over SECONDS with no pane open, the pane opened,
# the run's speed over SECONDS with it open (its first analysis, from event 0, held the run
# meanwhile) and over SECONDS more (the updates alone), and every run of its analysis (from
# NPUSCOPE_TASK_LOG: how long it held the run, the first from event 0, the next ones updates),
# the pane closed, the run's speed over SECONDS again. The speed with the pane open, after its
# first analysis, is held against the mean of the two closed ones around it (the run's speed
# drifts as it goes, and the machine is shared): the drop a pane left open must keep within
# 10%. Speeds from the header's events counter, redrawn (Ctrl-L) to be read; each key's last
# line says "ok" or "over 10%". A run that finishes within a window fails the benchmark (its
# speed would say nothing): KERNEL must outlast EVENTS and four windows.
#   live_panes.sh NPUSCOPE [KERNEL] [EVENTS] [SECONDS] [KEYS]
set -u
bin=$1
kernel=${2:-llm_decode:layers=32,gen=1024}
target=${3:-50000000}
secs=${4:-10}
keys=${5:-y A T C}
command -v tmux >/dev/null || { echo "live_panes: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
log=$(mktemp)
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -f "$log"' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
# the header's events counter, drawn afresh (Ctrl-L): while running, frames are held back to
# forty times what one costs to draw, so that at tens of millions of events the counter on
# screen may be seconds old
events() {
    tmux -L "$sock" send-keys -t 0 C-l
    sleep 0.2
    screen | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9
}
. "$(dirname "$0")/poll.sh" # until_match, until_gone
. "$(dirname "$0")/live.sh" # live_wait, live_speed
cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    NPUSCOPE_TASK_LOG="$log" "$bin" run -k "$kernel")
# a run of its own for each key, from the same point: each pane meets a model of the same size
runs=0
for k in $keys; do
    tmux -L "$sock" kill-server >/dev/null 2>&1
    sock=npuscope-bench-$$-$((runs += 1)) # (a server of its own: the last may still be going)
    tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
    live_wait "$target"
    echo "live TUI on -k $kernel, from $(events) events:"
    live_speed "$k: no pane"
    before=$rate
    : >"$log"
    tmux -L "$sock" send-keys -t 0 "$k"
    live_speed "$k open"
    live_speed "$k open (later)"
    open=$rate
    tmux -L "$sock" send-keys -t 0 "$k"
    awk -v k="$k" '{n++; ms[n]=$1; if (n > 1) {s += $1; if ($1 > mx) mx = $1}}
        END {if (!n) {print "  " k ": no run"; exit}
             printf "  %s: %d runs; the first %.1f ms", k, n, ms[1];
             if (n > 1) printf ", the next %d: mean %.1f ms, the longest %.1f ms", n - 1, s / (n - 1), mx;
             printf " (last step: ";
             for (i = 4; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : "";
             print ")"}' "$log"
    live_speed "$k: no pane (again)"
    awk -v k="$k" -v a="$before" -v o="$open" -v b="$rate" 'BEGIN {
        m = (a + b) / 2; d = m > 0 ? 100 * (m - o) / m : 0;
        printf "  %s: open %.0f ev/s against %.0f closed around it: %+.1f%% %s\n", k, o, m, -d,
               (d > 10 ? "(over 10%)" : "(ok)")}'
done
tmux -L "$sock" send-keys -t 0 q
