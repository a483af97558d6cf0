#!/usr/bin/env bash
# Critical paths of a saved trace on the Gantt (issue: each analysis pane ready within 1 s of
# its key), in one view of TRACE in tmux:
#  - at the first frame, the verdict (which computes the launches' critical paths) being
#    judged ahead: the cursor one column into the trace (inside its first launch; AT "start":
#    left where the first frame has it, on the host's first messages), C: the time to the
#    path's line in the status bar; then v: the time to the verdict on screen;
#  - then C (the path hidden), Down (the first launch's row of the verdict) and Enter: the
#    time to that launch's path on the Gantt.
# The index of TRACE is read from (or written to) $XDG_CACHE_HOME, as `view` does; a verdict
# kept beside it is for the caller to remove (with one, C and v show it at once).
#   view_path.sh NPUSCOPE TRACE [AT]
set -u
bin=$1
trace=$2
at=${3:-in}
command -v tmux >/dev/null || { echo "view_path: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
. "$(dirname "$0")/poll.sh" # until_match
over() { [ "$1" -gt 1000 ] && echo "  MISSED: over 1 s"; }

cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    ${XDG_CACHE_HOME:+XDG_CACHE_HOME=$XDG_CACHE_HOME} "$bin" view "$trace")
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
until_match ' POST-MORTEM ' || { echo "view_path: no first frame"; screen; exit 1; }
# path KEY REGEX: KEY sent, the time to a status line matching REGEX into ms, the line into line
path() {
    local k0
    k0=$(now_ms)
    tmux -L "$sock" send-keys -t 0 "$1"
    until_match "$2" || { echo "view_path: no path in a minute"; screen; exit 1; }
    ms=$(($(now_ms) - k0))
    line=$(screen | grep -oE "$2" | head -1)
}

[ "$at" = start ] || tmux -L "$sock" send-keys -t 0 '>'
path C '^critical path of .*: [0-9]+ ops'
c=$ms
k1=$(now_ms)
tmux -L "$sock" send-keys -t 0 v
until_match 'Bottleneck  run: ' || { echo "view_path: no verdict in a minute"; screen; exit 1; }
v=$(($(now_ms) - k1))
where="a column in"
[ "$at" = start ] && where="at the start"
echo "C at the first frame, $where, to the critical path on the Gantt: $c ms ($line)$(over "$c");" \
    "then v: $v ms$(over "$v")"

tmux -L "$sock" send-keys -t 0 C
for _ in $(seq 100); do
    screen | grep -qE '^critical path of .*: [0-9]+ ops' || break
    sleep 0.1
done
tmux -L "$sock" send-keys -t 0 Down
sleep 0.5
path Enter 'path of .*: [0-9]+ ops'
echo "then Enter on the first launch's row to its critical path on the Gantt: $ms ms ($line)$(
    over "$ms")"
tmux -L "$sock" send-keys -t 0 q
until_match '^\[exit [0-9]+\]' || { echo "view_path: q did not end it"; exit 1; }
