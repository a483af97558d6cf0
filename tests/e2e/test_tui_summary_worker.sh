#!/usr/bin/env bash
# The summary pane of a big loaded trace, in a real terminal (tmux): its figures are summed
# up on a worker from the first frame on, the pane says so meanwhile, keys are answered, and
# the figures come once the worker is done, those a small trace's first frame shows at once.
# q while they are summed up ends the process within 0.5 s.
# The worker is made slow by NPUSCOPE_TEST_ANALYSIS_DELAY_US (tests only: a pause at every
# progress check of an analysis; the summary checks before it starts, then every 16384 events
# and transfers it goes through: some thirty times here).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

BIG=$TMP/big.json # past 2^18 events: its summary is summed up on a worker
run "$NPUSCOPE" run --headless -k llm_decode:layers=32,gen=8 -o "$BIG"
expect_status "a trace of 340k events" 0
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

now_ms() { date +%s%3N; }

# view DELAY_US: the trace opened, its analyses slowed down, the first frame on screen.
view() {
    tmux_start 160 45 "${UTF8[@]}" NPUSCOPE_TEST_ANALYSIS_DELAY_US="$1" -- view "$BIG"
    expect_screen "the trace opens" 'POST-MORTEM' 60
    PID=$(app_pid)
}

echo "-- the figures summed up on a worker, the screen answering meanwhile"
view 100000
expect_screen "the summary says it is summing up" 'summing up 3[0-9]{2}k events\.\.\.' 5
t0=$(now_ms)
tmux_keys '?'
expect_screen "a key is answered meanwhile" 'npuscope keys' 5
t=$(($(now_ms) - t0))
if [ "$t" -le 1000 ] && grep -q 'summing up' <<<"$(tmux_cmd capture-pane -p -t 0)"; then
    ok "at once ($t ms), the figures still being summed up"
else fail "a key is answered at once while the figures are summed up" "after $t ms" "$SCREEN"; fi
tmux_keys Escape
expect_screen "then the figures" 'utilization of [0-9]+ cyc' 15
expect_no_screen "no word of summing up left" 'summing up'
FIGS=$(tmux_cmd capture-pane -p -t 0 | grep -E '^ (DMA|TE|VE|DRAM|BW) ' | cut -c1-100)
tmux_keys q
expect_exit "q exits 0" 0

echo "-- the same figures as without the worker's delay"
view 0
expect_screen "the figures" 'utilization of [0-9]+ cyc' 15
NOW=$(tmux_cmd capture-pane -p -t 0 | grep -E '^ (DMA|TE|VE|DRAM|BW) ' | cut -c1-100)
if [ -n "$FIGS" ] && [ "$FIGS" = "$NOW" ]; then ok "the same figures ($(wc -l <<<"$NOW") lines)"
else fail "the same figures" "slowed:" "$FIGS" "at once:" "$NOW"; fi
tmux_keys q
expect_exit "q exits 0" 0

echo "-- q while the figures are summed up"
view 100000
expect_screen "summing up" 'summing up' 5
tmux_keys q
gone_within "q: the process is gone within 0.5 s" "$PID" 500
expect_exit "q: exit 0" 0

finish
