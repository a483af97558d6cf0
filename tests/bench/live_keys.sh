#!/usr/bin/env bash
# How a long run feels in the TUI (make bench, from live_bench.sh): the live TUI runs a
# workload at full speed in tmux; every few seconds `?` opens the help and Escape closes it,
# and the time from each key to the screen that answers it is measured (capture-pane polled
# every 5 ms: the figures carry that much resolution and the cost of tmux itself). Then
# the TUI's peak RSS at the end against the same run headless. Medians, since the machine is noisy.
#   live_keys.sh NPUSCOPE [CHIP] KERNEL
set -u
bin=$1
chip=""
if [ $# -ge 3 ]; then chip=$2; shift; fi
kernel=$2
command -v tmux >/dev/null || { echo "live_keys: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
tmp=$(mktemp -d)
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
# poll until the screen matches a regex / no longer does (20 s at most)
. "$(dirname "$0")/poll.sh" # until_match, until_gone

cargs=()
[ -n "$chip" ] && cargs=(-c "$chip")
cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 "$bin" run "${cargs[@]}" -k "$kernel")
tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 48 "$cmd; echo \"[exit \$?]\"; sleep 600"
pid=""
for ((i = 0; i < 400; i++)); do
    [ -n "$pid" ] && break
    pid=$(pgrep -f -n -- "$bin run .*-k $kernel" || true)
    sleep 0.05
done
if [ -z "$pid" ]; then echo "live_keys: the TUI did not start"; exit 1; fi
until_match ' LIVE | FINISHED ' || { echo "live_keys: no header"; screen; exit 1; }

lat=() esc=()
for ((k = 0; k < 200; k++)); do
    sleep 1
    screen | grep -q FINISHED && break
    t0=$(now_ms); tmux -L "$sock" send-keys -t 0 '?'
    until_match 'npuscope keys' || { echo "live_keys: help never opened"; exit 1; }
    t1=$(now_ms); tmux -L "$sock" send-keys -t 0 Escape
    until_gone 'npuscope keys' || { echo "live_keys: help never closed"; exit 1; }
    t2=$(now_ms)
    lat+=($((t1 - t0)))
    esc+=($((t2 - t1)))
done
until_match FINISHED
# the process the shell started watches the run (going back); the run is its child: the
# largest peak of the lot is the live run's
hwm=0
for p in "$pid" $(pgrep -P "$pid"); do
    v=$(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null)
    [ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
done
tmux -L "$sock" send-keys -t 0 q

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }
max() { printf '%s\n' "$@" | sort -n | tail -1; }
echo "live TUI on -k $kernel${chip:+ -c $chip}: $((2 * ${#lat[@]})) key presses while it ran"
echo "  ? to the help on screen: median $(median "${lat[@]}") ms, worst $(max "${lat[@]}") ms (tmux polling included)"
echo "  Escape to the help gone: median $(median "${esc[@]}") ms, worst $(max "${esc[@]}") ms (of which 25 ms is" \
    "the wait that tells a lone Escape from the start of an escape sequence)"
echo "  TUI peak RSS to the end: $((${hwm:-0} / 1024)) MB"
/usr/bin/env OPENBLAS_NUM_THREADS=1 "$bin" run --headless "${cargs[@]}" -k "$kernel" >/dev/null 2>"$tmp/err" &
hp=$!
hh=0
while kill -0 "$hp" 2>/dev/null; do
    v=$(awk '/VmHWM/ {print $2}' "/proc/$hp/status" 2>/dev/null)
    [ -n "$v" ] && hh=$v
    sleep 0.2
done
echo "  headless run to the end: peak RSS $((hh / 1024)) MB"

# the baseline, in the same invocation: the same keys on a TUI with nothing to do (a small
# run already finished): what tmux and the terminal add by themselves
tmux -L "$sock" kill-server >/dev/null 2>&1
tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 48 \
    "$(printf '%q ' env OPENBLAS_NUM_THREADS=1 "$bin" run -k vector_add); sleep 600"
until_match FINISHED || { echo "live_keys: the idle TUI did not start"; exit 1; }
bl=() be=()
for ((k = 0; k < 10; k++)); do
    t0=$(now_ms); tmux -L "$sock" send-keys -t 0 '?'
    until_match 'npuscope keys' || { echo "live_keys: help never opened (idle)"; exit 1; }
    t1=$(now_ms); tmux -L "$sock" send-keys -t 0 Escape
    until_gone 'npuscope keys' || { echo "live_keys: help never closed (idle)"; exit 1; }
    t2=$(now_ms)
    bl+=($((t1 - t0))) be+=($((t2 - t1)))
    sleep 0.2
done
echo "  baseline, an idle TUI: ? $(median "${bl[@]}") ms, Escape $(median "${be[@]}") ms (medians of 10);" \
    "while it runs: ? $(median "${lat[@]}") ms, $(awk -v a="$(median "${lat[@]}")" -v b="$(median "${bl[@]}")" \
    'BEGIN {printf "%+d", a - b}') ms over the baseline"
