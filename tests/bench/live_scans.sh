#!/usr/bin/env bash
# The scans a key starts on a big model, in the TUI in tmux (issue: no key waits more than
# 100 ms while an analysis runs): the search (/gemm, then n) and the source pane's line
# profile (K), each scanning every op on a worker, the run held still meanwhile when live;
# then the utilization and bandwidth strips (E, H), drawn every frame. For each: the time
# from the key to its result on screen and the waits of keys sent meanwhile (`?` opening the
# help, Escape closing it, one after the other; capture-pane polled every 5 ms: the figures
# carry that much resolution and tmux's own cost, and Escape's 25 ms). Either a live run
# at full speed until EVENTS events, or a saved trace opened as `npuscope view` opens it.
#   live_scans.sh NPUSCOPE live KERNEL EVENTS
#   live_scans.sh NPUSCOPE view TRACE
set -u
bin=$1 mode=$2
command -v tmux >/dev/null || { echo "live_scans: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
events() { screen | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9; }
. "$(dirname "$0")/poll.sh" # until_match, until_gone
. "$(dirname "$0")/live.sh" # live_wait
send() { tmux -L "$sock" send-keys -t 0 "$@"; }

envs=(env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
if [ "$mode" = live ]; then
    kernel=$3 target=$4
    cmd=$(printf '%q ' "${envs[@]}" "$bin" run -k "$kernel")
else
    trace=$3
    cmd=$(printf '%q ' "${envs[@]}" "$bin" view "$trace")
fi
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
if [ "$mode" = live ]; then
    live_wait "$target"
    echo "live TUI on -k $kernel, from $(events) events:"
else
    for ((i = 0; i < 600; i++)); do screen | grep -q 'POST-MORTEM' && break; sleep 0.5; done
    screen | grep -q 'POST-MORTEM' || { echo "live_scans: the trace did not open"; exit 1; }
    echo "view $(basename "$trace"):"
fi

all=()
cursor() { screen | grep -m1 -oE 'cursor [0-9]+' | tr -dc 0-9; }
# done: what shows once the scan is done (the next key clears the status line, so not that):
# the details of a gemm op selected, the cursor moved, the source pane's title
gemm_selected() { screen | grep -qE '│ op +gemm'; }
cursor_moved() { [ "$(cursor)" != "$was" ]; }
source_shown() { screen | grep -qE 'Source  .* ops |no call sites in this trace'; }
# scan NAME DONE KEYS...: the keys sent, then ? and Escape until the function DONE says so
scan() {
    local name=$1 done=$2 t0 t1 k0 k1 k2 waits=()
    shift 2
    t0=$(now_ms)
    send "$@"
    while ! "$done"; do
        k0=$(now_ms); send '?'
        until_match 'npuscope keys' || { echo "live_scans: the help never opened"; exit 1; }
        k1=$(now_ms); send Escape
        until_gone 'npuscope keys' || { echo "live_scans: the help never closed"; exit 1; }
        k2=$(now_ms)
        waits+=($((k1 - k0)) $((k2 - k1)))
        [ $(($(now_ms) - t0)) -gt 120000 ] && { echo "live_scans: $name not done in 2 minutes"; exit 1; }
    done
    t1=$(now_ms)
    all+=("${waits[@]}")
    local sorted
    sorted=$(printf '%s\n' "${waits[@]}" | sort -n)
    echo "  $name: on screen $((t1 - t0)) ms after the key; ${#waits[@]} keys meanwhile, median" \
        "$(awk '{a[NR]=$1} END {print NR ? a[int((NR+1)/2)] : "-"}' <<<"$sorted") ms, the longest" \
        "$(tail -1 <<<"$sorted") ms"
}

# keys ( ? then Escape, COUNT times) with nothing computing, into waits
idle_keys() {
    local k k0 k1 k2
    waits=()
    for ((k = 0; k < $1; k++)); do
        k0=$(now_ms); send '?'
        until_match 'npuscope keys' || { echo "live_scans: the help never opened"; exit 1; }
        k1=$(now_ms); send Escape
        until_gone 'npuscope keys' || { echo "live_scans: the help never closed"; exit 1; }
        k2=$(now_ms)
        waits+=($((k1 - k0)) $((k2 - k1)))
        sleep 0.2
    done
}
summary() { # NAME: the waits' median and longest
    local sorted
    sorted=$(printf '%s\n' "${waits[@]}" | sort -n)
    echo "  $1: ${#waits[@]} keys, median $(awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}' <<<"$sorted") ms," \
        "the longest $(tail -1 <<<"$sorted") ms"
}
idle_keys 6
summary "baseline, nothing computing (the same keys)"

scan "/gemm Enter (search)" gemm_selected / g e m m Enter
was=$(cursor)
scan "n (search on)" cursor_moved n
scan "K (line profile)" source_shown K
send K
# the strips: drawn every frame from the model's summaries; keys answered while they show
send E H
idle_keys 6
all+=("${waits[@]}")
summary "E H (the strips shown)"
sorted=$(printf '%s\n' "${all[@]}" | sort -n)
worst=$(tail -1 <<<"$sorted")
echo "  every key: ${#all[@]}, the longest wait $worst ms (target 100 ms, tmux and Escape included):" \
    "$([ "$worst" -le 100 ] && echo met || echo MISSED)"
[ "$mode" = live ] && echo "  at $(events) events"
k0=$(now_ms)
send q
until_match '^\[exit [0-9]+\]' || { echo "live_scans: q did not end it"; exit 1; }
echo "  q to the exit: $(($(now_ms) - k0)) ms"
