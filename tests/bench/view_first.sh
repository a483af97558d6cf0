#!/usr/bin/env bash
# The first open of a trace in the viewer (targets: the first frame of `view` within 10 s,
# the reopen through the index within 1 s): RUNS times (VIEW_FIRST_RUNS, default 3), the
# viewer opens TRACE in tmux at 200x60 with a cache directory of its own, empty, so that the
# trace is parsed and its index written as on a first open: the time to the first frame, the
# viewer's resident memory then, the time until the index is in the cache, whole (written
# behind the first frame), q and the time to the exit; then a second open, through the index
# just written, gives the reopen's first frame. Medians of the runs, with MISSED against the
# targets.
# The first frame is seen in the pane's output stream (tmux pipe-pane into grep, a line per
# escape sequence), not by capturing the screen every few ms: on two cores such a poll takes
# most of one, and the figure would be the bench's own cost rather than the viewer's.
# NPUSCOPE_LOAD_THREADS, when set, is passed on (2: the parse on two threads even on a busy
# machine, where the loader would otherwise keep to one).
#   view_first.sh NPUSCOPE TRACE
set -u
bin=$1
trace=$2
nruns=${VIEW_FIRST_RUNS:-3}
command -v tmux >/dev/null || { echo "view_first: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
cache=$(mktemp -d /tmp/npuscope-view-first.XXXXXX)
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$cache"' EXIT
runs=0

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
. "$(dirname "$0")/poll.sh" # until_match
index_whole() { ls "$cache"/npuscope/*.idx >/dev/null 2>&1 && ! ls "$cache"/npuscope/ | grep -q '\.tmp\.'; }
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

open() {
    local cmd
    cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
        ${NPUSCOPE_LOAD_THREADS:+NPUSCOPE_LOAD_THREADS=$NPUSCOPE_LOAD_THREADS} \
        XDG_CACHE_HOME="$cache" "$bin" view "$trace")
    tmux -L "$sock" kill-server >/dev/null 2>&1
    runs=$((runs + 1))
    sock=npuscope-bench-$$-$runs # a fresh server each time: never race a dying one
    local stamp=$cache/first-frame.$runs
    # the viewer starts once the pane's output goes to grep, which stamps the first frame
    tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 \
        "tmux -L $sock wait-for go; $cmd; echo \"[exit \$?]\"; sleep 600"
    # (a script of its own: tmux would expand the strftime escapes of a command given inline)
    printf '%s\n' "stdbuf -oL tr '\\033' '\\n' | grep -a -m1 -F POST-MORTEM >/dev/null" \
        "date +%s%3N >$stamp.tmp && mv $stamp.tmp $stamp" >"$stamp.sh"
    tmux -L "$sock" pipe-pane -o -t 0 "sh $stamp.sh"
    t0=$(now_ms)
    tmux -L "$sock" wait-for -S go
    local i
    for ((i = 0; i < 6000; i++)); do [[ -s $stamp ]] && break; sleep 0.1; done
    [[ -s $stamp ]] || { echo "view_first: no first frame"; screen; exit 1; }
    t1=$(<"$stamp")
    local sh pid
    sh=$(tmux -L "$sock" display-message -p -t 0 '#{pane_pid}')
    pid=$(awk '{print $1}' "/proc/$sh/task/$sh/children" 2>/dev/null)
    rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null)
}

quit() {
    local k0
    k0=$(now_ms)
    tmux -L "$sock" send-keys -t 0 q
    until_match '^\[exit [0-9]+\]' || { echo "view_first: q did not end it"; exit 1; }
    gone=$(($(now_ms) - k0))
}

first=() indexed=() reopen=() exits=()
echo "view $trace, $nruns first opens with an empty cache, each then opened again"
for ((r = 0; r < nruns; r++)); do
    rm -rf "${cache:?}"/npuscope
    open
    first+=($((t1 - t0)))
    frss=$rss
    for ((i = 0; i < 1200; i++)); do index_whole && break; sleep 0.05; done
    index_whole || { echo "view_first: no index written in a minute"; exit 1; }
    indexed+=($(($(now_ms) - t0)))
    quit
    exits+=("$gone")
    open
    reopen+=($((t1 - t0)))
    quit
    echo "  run $((r + 1)): first frame ${first[r]} ms (RSS $frss MB), index whole at ${indexed[r]} ms, q ${exits[r]} ms; reopen ${reopen[r]} ms (RSS $rss MB)"
done
f=$(median "${first[@]}") o=$(median "${reopen[@]}")
echo "view, first frame    $f ms (median of $nruns)$([ "$f" -gt 10000 ] && echo "  MISSED: over 10 s")"
echo "view, index whole    $(median "${indexed[@]}") ms after the start"
echo "view, q to the exit  $(median "${exits[@]}") ms"
echo "view, reopen         $o ms$([ "$o" -gt 1000 ] && echo "  MISSED: over 1 s")"
