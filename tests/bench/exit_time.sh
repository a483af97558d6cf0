#!/usr/bin/env bash
# Leaving a big run or trace (make bench, from live_bench.sh and analysis_bench.sh): the time from
# `q` to the process the shell started gone (polled every 5 ms: the figures carry that much
# resolution and the cost of tmux itself), in tmux at 200x60.
#   exit_time.sh NPUSCOPE live KERNEL EVENTS [ARGS...]: a live run of KERNEL at full speed,
#       q once the header counts EVENTS engine events (ARGS: more options of npuscope run)
#   exit_time.sh NPUSCOPE view TRACE [ARGS...]: npuscope view TRACE, q once its first frame
#       is up (ARGS: more options of npuscope view)
# Prints one line: what was left, the live process's RSS then, and the time to gone.
# The memory budget's unlinked, mapped file (gigabytes of dirty pages at a hundred million
# events, a few hundred ms per GB to drop) is closed last by a small process of its own, the
# keeper, after the run's processes are gone: it is not counted here.
set -u
bin=$1 mode=$2 what=$3
shift 3
target=0
if [ "$mode" = live ]; then target=$1; shift; fi
command -v tmux >/dev/null || { echo "exit_time: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
events() { screen | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9; }
. "$(dirname "$0")/poll.sh" # until_match, until_gone
# the process the shell started (the supervisor of a live run, or the viewer)
shell_child() {
    local sh
    sh=$(tmux -L "$sock" display-message -p -t 0 '#{pane_pid}')
    awk '{print $1}' "/proc/$sh/task/$sh/children" 2>/dev/null
}
# the largest resident set of that process and its children (the live run's), in MB
rss_mb() {
    local p v most=0
    for p in "$1" $(pgrep -P "$1"); do
        v=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null)
        [ -n "$v" ] && [ "$v" -gt "$most" ] && most=$v
    done
    echo $((most / 1024))
}

if [ "$mode" = live ]; then
    cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
        "$bin" run "$@" -k "$what")
else
    cmd=$(printf '%q ' env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color "$bin" view "$@" "$what")
fi
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
until_match ' LIVE | FINISHED | POST-MORTEM ' || { echo "exit_time: no header"; screen; exit 1; }
if [ "$mode" = live ]; then
    while e=$(events); [ "${e:-0}" -lt "$target" ]; do
        screen | grep -q FINISHED && { echo "exit_time: the run ended at $e events"; exit 1; }
        sleep 0.5
    done
    left="live -k $what at $(events) events"
else
    sleep 1 # the first frame drawn, the strips' work begun
    left="view $what"
fi
pid=$(shell_child)
[ -n "$pid" ] || { echo "exit_time: no process"; exit 1; }
rss=$(rss_mb "$pid")
t0=$(now_ms)
tmux -L "$sock" send-keys -t 0 q
while kill -0 "$pid" 2>/dev/null; do
    [ $(($(now_ms) - t0)) -gt 60000 ] && { echo "exit_time: $left: still running after 60 s"; exit 1; }
    sleep 0.005
done
t1=$(now_ms)
until_match '\[exit [0-9]+\]' || { echo "exit_time: no exit status"; screen; exit 1; }
echo "exit_time: $left (RSS $rss MB): q to gone in $((t1 - t0)) ms ($(screen | grep -oE '\[exit [0-9]+\]'))"
