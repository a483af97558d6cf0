#!/usr/bin/env bash
# The verdict of a loaded trace (issue: each analysis pane ready within 1 s of its key): the
# viewer opens TRACE in tmux; once its first frame is on screen, WAIT seconds pass, then `v`;
# the time from the key to the verdict on screen (capture-pane polled every 5 ms). The
# viewer computes the verdict ahead from its first frame on: with WAIT longer than the
# verdict takes, `v` shows it at once; with WAIT 0, the rest of the computation under way.
# The first frame's time is said too (computing ahead must not delay it). The index of TRACE
# is read from (or written to) $XDG_CACHE_HOME, as `view` does. KEY and READY time another
# pane instead (its key, and a regex of its title once its result is shown: `y` and
# 'Layers  [0-9]+ layer'), to see what the verdict computed meanwhile costs it.
#   view_verdict.sh NPUSCOPE TRACE [WAIT] [KEY READY]
set -u
bin=$1
trace=$2
wait=${3:-10}
key=${4:-v}
ready=${5:-'Bottleneck  run: '}
command -v tmux >/dev/null || { echo "view_verdict: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
. "$(dirname "$0")/poll.sh" # until_match, until_gone

cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    ${XDG_CACHE_HOME:+XDG_CACHE_HOME=$XDG_CACHE_HOME} "$bin" view "$trace")
t0=$(now_ms)
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
until_match ' POST-MORTEM ' || { echo "view_verdict: no first frame"; screen; exit 1; }
t1=$(now_ms)
echo "view $trace: the first frame in $((t1 - t0)) ms; $key after $wait s more"
sleep "$wait"
k0=$(now_ms)
tmux -L "$sock" send-keys -t 0 "$key"
until_match "$ready" || { echo "view_verdict: nothing ready in a minute"; screen; exit 1; }
k1=$(now_ms)
echo "  $key to its result on screen: $((k1 - k0)) ms"
k0=$(now_ms)
tmux -L "$sock" send-keys -t 0 q
until_match '^\[exit [0-9]+\]' || { echo "view_verdict: q did not end it"; exit 1; }
echo "  q to the exit: $(($(now_ms) - k0)) ms"
