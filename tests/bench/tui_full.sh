#!/usr/bin/env bash
# The cost of watching a run (make bench, from live_bench.sh): the same workload headless
# and in the live TUI at full speed (in tmux, 160x48, until the header says FINISHED), each
# RUNS times; medians and their ratio against the target of 1.3x. The screen is polled every
# 50 ms, so the TUI's figure carries that much resolution.
#   tui_full.sh NPUSCOPE KERNEL [EXTRA RUN OPTIONS...]
set -u
bin=$1
kernel=$2
shift 2
RUNS=${RUNS:-3}
command -v tmux >/dev/null || { echo "tui_full: tmux not found, skipped"; exit 0; }
sock=npuscope-full-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT
now_ms() { date +%s%3N; }
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

hl=() tu=()
for ((r = 0; r < RUNS; r++)); do
    t0=$(now_ms)
    OPENBLAS_NUM_THREADS=1 "$bin" run --headless -k "$kernel" "$@" >/dev/null 2>&1 || {
        echo "tui_full: the headless run failed"; exit 1; }
    hl+=($(($(now_ms) - t0)))

    cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 "$bin" run -k "$kernel" "$@")
    sock=npuscope-full-$$-$r # a server of its own: never race the last one's end
    t0=$(now_ms)
    tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 48 "$cmd; sleep 600"
    done=0
    for ((i = 0; i < 2400; i++)); do
        if tmux -L "$sock" capture-pane -p -t 0 2>/dev/null | head -1 | grep -q FINISHED; then
            done=1; break; fi
        sleep 0.05
    done
    tu+=($(($(now_ms) - t0)))
    tmux -L "$sock" kill-server >/dev/null 2>&1
    [ "$done" = 1 ] || { echo "tui_full: the TUI never said FINISHED"; exit 1; }
done
h=$(median "${hl[@]}") t=$(median "${tu[@]}")
ratio=$(awk -v a="$t" -v b="$h" 'BEGIN {printf "%.2f", a / b}')
verdict=$(awk -v r="$ratio" 'BEGIN {print (r <= 1.3 ? "ok" : "MISSED")}')
echo "full TUI on -k $kernel $*: ${t} ms to FINISHED against ${h} ms headless (medians of $RUNS):" \
    "${ratio}x (target <= 1.3: $verdict)"
