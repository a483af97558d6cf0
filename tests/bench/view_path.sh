#!/usr/bin/env bash
# The critical path of a saved trace's launch on the Gantt (issue: each analysis pane ready
# within 1 s of its key): the viewer opens TRACE in tmux; `v`, and once the verdict is on
# screen, Down (the first launch's row) and Enter, which shows that launch's critical path on
# the Gantt; the time from Enter to the path's line in the status bar (its ops counted). The
# index of TRACE, and a verdict kept beside it, are read from (or written to)
# $XDG_CACHE_HOME, as `view` does.
#   view_path.sh NPUSCOPE TRACE
set -u
bin=$1
trace=$2
command -v tmux >/dev/null || { echo "view_path: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
. "$(dirname "$0")/poll.sh" # until_match

cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    ${XDG_CACHE_HOME:+XDG_CACHE_HOME=$XDG_CACHE_HOME} "$bin" view "$trace")
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
until_match ' POST-MORTEM ' || { echo "view_path: no first frame"; screen; exit 1; }
tmux -L "$sock" send-keys -t 0 v
until_match 'Bottleneck  run: ' || { echo "view_path: no verdict in a minute"; screen; exit 1; }
tmux -L "$sock" send-keys -t 0 Down
sleep 0.5
k0=$(now_ms)
tmux -L "$sock" send-keys -t 0 Enter
until_match 'path of .*: [0-9]+ ops' ||
    { echo "view_path: no path in a minute"; screen; exit 1; }
k1=$(now_ms)
line=$(screen | grep -oE 'path of .*: [0-9]+ ops' | head -1)
ms=$((k1 - k0))
echo "Enter on the first launch's row to its critical path on the Gantt: $ms ms ($line)$(
    [ "$ms" -gt 1000 ] && echo "  MISSED: over 1 s")"
tmux -L "$sock" send-keys -t 0 q
until_match '^\[exit [0-9]+\]' || { echo "view_path: q did not end it"; exit 1; }
