#!/usr/bin/env bash
# The live TUI under a memory budget (--mem-budget): a long run at full speed in tmux; at
# each mark of engine events (the header's count) the live process's resident memory
# (VmRSS, RssAnon, RssFile of /proc/PID/status) and the frame time as a user sees it: the
# time from `?` to the help on screen and from Escape to the Gantt again (capture-pane
# polled every 5 ms; medians of 5). Also the peak VmRSS over the run (polled every 0.5 s).
#   [CHIP=FILE.yaml] live_budget.sh NPUSCOPE BUDGET KERNEL MARKS...
# (BUDGET: as --mem-budget; MARKS: counts of engine events, as the header shows them)
set -u
bin=$1 budget=$2 kernel=$3
shift 3
marks=("$@")
command -v tmux >/dev/null || { echo "live_budget: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
. "$(dirname "$0")/poll.sh" # until_match, until_gone
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
events() { screen | head -1 | sed -nE 's/.*events: ([0-9]+).*/\1/p'; }
field() { awk -v k="$2:" '$1 == k {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null; }

cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 "$bin" run --mem-budget "$budget" ${CHIP:+-c "$CHIP"} -k "$kernel")
tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 48 "$cmd; echo \"[exit \$?]\"; sleep 600"
until_match ' LIVE | FINISHED ' || { echo "live_budget: no header"; screen; exit 1; }
# the live process: of the run's processes (the supervisor, checkpoints), the one working
live() {
    local best="" most=-1 p t
    for p in $(pgrep -f -- "$bin run --mem-budget $budget "); do
        t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
        [ -n "$t" ] && [ "$t" -gt "$most" ] && { most=$t; best=$p; }
    done
    echo "$best"
}
peak=0 peak_at=0
echo "budget $budget, $kernel"
for mark in "${marks[@]}"; do
    while :; do
        n=$(events)
        pid=$(live)
        r=$(field "$pid" VmRSS)
        [ -n "$r" ] && [ "$r" -gt "$peak" ] && { peak=$r; peak_at=$n; }
        [ -n "$n" ] && [ "$n" -ge "$mark" ] && break
        screen | grep -q FINISHED && { echo "finished before $mark events"; break 2; }
        sleep 0.5
    done
    lat=() esc=()
    for ((k = 0; k < 5; k++)); do
        t0=$(now_ms); tmux -L "$sock" send-keys -t 0 '?'
        until_match 'npuscope keys' && lat+=($(($(now_ms) - t0)))
        t0=$(now_ms); tmux -L "$sock" send-keys -t 0 Escape
        until_gone 'npuscope keys' && esc+=($(($(now_ms) - t0)))
        sleep 0.3
    done
    echo "at $(events) events (mark $mark): VmRSS $(field "$pid" VmRSS) MB (anon $(field "$pid" RssAnon), file $(field "$pid" RssFile)); ? $(median "${lat[@]}") ms, Escape $(median "${esc[@]}") ms (medians of 5)"
done
while ! screen | grep -q FINISHED; do
    pid=$(live); r=$(field "$pid" VmRSS)
    [ -n "$r" ] && [ "$r" -gt "$peak" ] && { peak=$r; peak_at=$(events); }
    sleep 0.5
done
echo "finished at $(events) events; peak VmRSS $peak MB (at $peak_at events)"
