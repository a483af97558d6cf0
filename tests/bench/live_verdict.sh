#!/usr/bin/env bash
# The verdict of a long live run (issue: analyses of a live run must not block): the live TUI
# runs a workload at full speed in tmux until EVENTS simulation events; then the run's speed
# with the bottleneck pane closed, `v` pressed, the time until its verdict is on screen and,
# meanwhile, the longest wait of a key (`?` opening the help, Escape closing it, one after the
# other; capture-pane polled every 5 ms: the figures carry that much resolution and tmux's own
# cost). Then the run's speed with the pane open and closed in turn, PAIRS times (a live
# verdict holds the model still while it computes, the run going on beside it until what it
# keeps for the model reaches an eighth of the memory budget, and runs again after ten times
# its cost; closed, after forty times, as it is kept warm): each open window is held against
# the mean of the two closed ones around it (the run's speed drifts as it goes, and the
# machine is shared), and the median of those drops must keep within 10%; with it, the share
# of the open and of the closed windows the model was held by the verdict's runs (their times from
# NPUSCOPE_TASK_LOG, by the window they ended in), which the machine's noise moves far less.
# Speeds from the header's events counter over SECONDS each, redrawn (Ctrl-L) to be read; a
# run that finishes within one fails the benchmark (KERNEL must outlast EVENTS and 2 * PAIRS
# + 1 of them).
#   live_verdict.sh NPUSCOPE [KERNEL] [EVENTS] [SECONDS] [PAIRS]
set -u
bin=$1
kernel=${2:-llm_decode:layers=32,gen=1024}
target=${3:-50000000}
secs=${4:-15}
pairs=${5:-3}
command -v tmux >/dev/null || { echo "live_verdict: tmux not found, skipped"; exit 0; }
sock=npuscope-bench-$$
# (LIVE_VERDICT_LOG: the verdict's runs kept in that file, to be read after)
log=${LIVE_VERDICT_LOG:-$(mktemp)}
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; [ -n "${LIVE_VERDICT_LOG:-}" ] || rm -f "$log"' EXIT

now_ms() { date +%s%3N; }
screen() { tmux -L "$sock" capture-pane -p -t 0 2>/dev/null; }
# the header's events counter, drawn afresh (Ctrl-L): while running, frames are held back to
# forty times what one costs to draw, so that the counter on screen may be seconds old
events() {
    tmux -L "$sock" send-keys -t 0 C-l
    sleep 0.2
    screen | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9
}
. "$(dirname "$0")/poll.sh" # until_match, until_gone
. "$(dirname "$0")/live.sh" # live_wait, live_speed
cmd=$(printf '%q ' env OPENBLAS_NUM_THREADS=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color \
    NPUSCOPE_TASK_LOG="$log" "$bin" run -k "$kernel")
tmux -L "$sock" -f /dev/null new-session -d -x 200 -y 60 "$cmd; echo \"[exit \$?]\"; sleep 600"
live_wait "$target"
echo "live TUI on -k $kernel, from $(events) events:"
live_speed "the run, the pane closed"
closed=("$rate")

t0=$(now_ms)
tmux -L "$sock" send-keys -t 0 v
waits=()
while ! screen | grep -qE 'Bottleneck  run: '; do
    k0=$(now_ms); tmux -L "$sock" send-keys -t 0 '?'
    until_match 'npuscope keys' || { echo "live_verdict: the help never opened"; exit 1; }
    k1=$(now_ms); tmux -L "$sock" send-keys -t 0 Escape
    until_gone 'npuscope keys' || { echo "live_verdict: the help never closed"; exit 1; }
    k2=$(now_ms)
    waits+=($((k1 - k0)) $((k2 - k1)))
    sleep 0.2
    [ $(($(now_ms) - t0)) -gt 300000 ] && { echo "live_verdict: no verdict in 5 minutes"; exit 1; }
done
t1=$(now_ms)
echo "  v to the verdict on screen: $((t1 - t0)) ms, at $(events) events"
sorted=$(printf '%s\n' "${waits[@]}" | sort -n)
pct() { awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p+0.999); if (i<1) i=1; print a[i]}' <<<"$sorted"; }
echo "  meanwhile ${#waits[@]} keys: median $(pct 0.5) ms, 90% within $(pct 0.9) ms, the longest" \
    "$(pct 1) ms (tmux polling included; Escape's 25 ms included)"
# the pane open and closed in turn (closed, the verdict is still kept warm, four times less
# often); the time the verdict's runs held the run, by the window they ended in
: >"$log"
logged() { awk '{s += $1} END {printf "%.0f", s}' "$log"; }
open=() held_open=0 held_closed=0 ms_open=0 ms_closed=0
for ((i = 1; i <= pairs; i++)); do
    w0=$(now_ms) h0=$(logged)
    live_speed "the run, the pane open ($i)"
    w1=$(now_ms) h1=$(logged)
    open+=("$rate") ms_open=$((ms_open + w1 - w0)) held_open=$((held_open + h1 - h0))
    tmux -L "$sock" send-keys -t 0 v
    live_speed "the run, the pane closed ($i)"
    closed+=("$rate") ms_closed=$((ms_closed + $(now_ms) - w1)) held_closed=$((held_closed + $(logged) - h1))
    ((i < pairs)) && tmux -L "$sock" send-keys -t 0 v
done
awk -v o="${open[*]}" -v c="${closed[*]}" -v ho="$held_open" -v hc="$held_closed" \
    -v mo="$ms_open" -v mc="$ms_closed" -v runs="$(wc -l <"$log")" 'BEGIN {
    n = split(o, op, " "); split(c, cl, " ");
    for (i = 1; i <= n; i++) {
        m = (cl[i] + cl[i + 1]) / 2; d[i] = m > 0 ? 100 * (m - op[i]) / m : 0;
        printf "  open %d: %.0f ev/s against %.0f closed around it: %+.1f%%\n", i, op[i], m, -d[i]
    }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (d[j] < d[i]) {t = d[i]; d[i] = d[j]; d[j] = t}
    med = d[int((n + 1) / 2)];
    printf "  held by the verdict (%d runs): %.1f%% of the open windows, %.1f%% of the closed\n",
           runs, (mo > 0 ? 100 * ho / mo : 0), (mc > 0 ? 100 * hc / mc : 0);
    printf "  the pane open: the run %.1f%% slower than closed (median of %d) %s\n", med, n,
           (med > 10 ? "(over 10%)" : "(ok)")}'
k0=$(now_ms)
tmux -L "$sock" send-keys -t 0 q
until_match '^\[exit [0-9]+\]' || { echo "live_verdict: q did not end it"; exit 1; }
echo "  q to the exit: $(($(now_ms) - k0)) ms"
