#!/usr/bin/env bash
# Going back in a live run (tmux): a state reached backwards shows the same screen and the
# same model as the run that stopped there going forward: one event back over a host
# message, back to a time over kernel launches and IPCQ copies, back to an op start and to
# a breakpoint hit. The checkpoints stay within their bound on a long run, and no
# checkpoint process outlives the TUI, whichever way it ends (q, Ctrl-C, SIGTERM, SIGHUP).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

# The supervisor (the pane's process) and every process of the session, one a line.
session_pids() {
    local shell sup
    shell=$(tmux_format '#{pane_pid}')
    sup=$(pgrep -P "$shell" | head -1)
    [ -n "$sup" ] && { echo "$sup"; pgrep -P "$sup"; }
}

# The screen without its header and footer (the header says "reached backwards"), once it
# has settled (the summary refreshes a moment after a step).
body() {
    local a b i
    tmux_screen; a=$SCREEN
    for ((i = 0; i < 20; i++)); do
        sleep 0.6; tmux_screen; b=$SCREEN
        [ "$a" == "$b" ] && break
        a=$b
    done
    sed '1d;$d' <<<"$b"
}

# Summary of the trace written with w to FILE (the model as it stands).
model_of() { "$NPUSCOPE" summary --json "$1" 2>&1 | grep -v '"run_id"\|"timestamp"'; }

# same NAME A B: two texts are identical.
same() {
    if [ "$2" == "$3" ]; then ok "$1"; else
        fail "$1" "differs:" "$(diff <(echo "$2") <(echo "$3") | head -20 | cut -c1-200)"; fi
}

echo "-- one event back over a host message: the same screen as 8 steps forward"
tmux_start 160 40 "${UTF8[@]}" -- run --paused -k gemm -o "$TMP/direct.json"
expect_screen "paused before the first event" 'events: 0 '
for i in 1 2 3 4 5 6 7 8; do tmux_keys s; tmux_wait "events: $i " 5; done
expect_screen "8 steps" 'events: 8  ev 8'
direct=$(body)
tmux_keys w
expect_screen "direct: trace written" 'trace written'
tmux_keys q
expect_exit "q: exit 0" 0

tmux_start 160 40 "${UTF8[@]}" -- run --paused -k gemm -o "$TMP/back.json"
expect_screen "paused before the first event" 'events: 0 '
for i in 1 2 3 4 5 6 7 8 9; do tmux_keys s; tmux_wait "events: $i " 5; done
expect_screen "event 9 is a host message" 'events: 9  ev 9 at .*\(host\)'
tmux_keys p
expect_screen "p: back at event 8, reached backwards" 'events: 8 \(reached backwards\)'
expect_screen "the footer says where from" 'back at event 8 \(re-run from the checkpoint at event 0\)'
tmux_keys Escape
back=$(body)
same "the screen is the one 8 steps forward gave" "$direct" "$back"
tmux_keys w
expect_screen "back: trace written" 'trace written'
same "the model is the same" "$(model_of "$TMP/direct.json")" "$(model_of "$TMP/back.json")"
tmux_keys s
expect_screen "s again: forward to 9, no longer backwards" 'events: 9  ev 9'
expect_no_screen "not marked backwards" 'reached backwards'
tmux_keys q
expect_exit "q after going back: exit 0" 0

echo "-- 15 events back: the whole screen of 25 forward, the resource rows included"
# the whole screen but the footer (its message says how the state was reached), the header
# up to the event count (the rest says "reached backwards" and is cut where it fits)
whole() {
    body >/dev/null
    sed '$d' <<<"$SCREEN" | sed -E '1s/^(.*events: [0-9]+).*$/\1/'
}
tmux_start 120 40 "${UTF8[@]}" -- run --paused -k gemm_explicit
expect_screen "paused before the first event" 'events: 0 '
for i in $(seq 1 25); do tmux_keys s; tmux_wait "events: $i " 5; done
direct=$(whole)
tmux_keys q
expect_exit "q: exit 0" 0
tmux_start 120 40 "${UTF8[@]}" -- run --paused -k gemm_explicit
expect_screen "paused before the first event" 'events: 0 '
for i in $(seq 1 40); do tmux_keys s; tmux_wait "events: $i " 5; done
for i in $(seq 39 -1 25); do tmux_keys p; tmux_wait "events: $i \(reached" 10; done
expect_screen "15 back: at event 25" 'events: 25 \(reached backwards\)'
tmux_keys Escape
back=$(whole)
if grep -q '^. *links ' <<<"$back"; then ok "the screen has the links' row"; else
    fail "the screen has the links' row" "$back"; fi
same "the whole screen is the one 25 steps forward gave" "$direct" "$back"
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- back to a time over kernel launches and IPCQ copies (allreduce_ring)"
RING=(run --paused -k allreduce_ring:pes=4,n=4096)
tmux_start 160 40 "${UTF8[@]}" -- "${RING[@]}" -o "$TMP/ring_direct.json"
expect_screen "paused" 'events: 0 '
tmux_keys u; tmux_keys -l 3000; tmux_keys Enter
expect_screen "u 3000: reached" 'reached'
direct=$(body)
tmux_keys w
expect_screen "direct: trace written" 'trace written'
tmux_keys q
expect_exit "exit 0" 0

tmux_start 160 40 "${UTF8[@]}" -- "${RING[@]}" -o "$TMP/ring_back.json"
expect_screen "paused" 'events: 0 '
tmux_keys u; tmux_keys -l 60000; tmux_keys Enter
expect_screen "u 60000: reached (or finished)" 'reached|finished'
tmux_keys w
expect_screen "at 60000: trace written" 'trace written'
cp "$TMP/ring_back.json" "$TMP/ring_9000.json"
tmux_keys U; tmux_keys -l 3000; tmux_keys Enter
expect_screen "U 3000: reached backwards" 'reached backwards'
tmux_keys Escape
back=$(body)
same "the screen is the one u 3000 gave" "$direct" "$back"
tmux_keys w
expect_screen "back: trace written" 'trace written'
same "the model is the same" "$(model_of "$TMP/ring_direct.json")" "$(model_of "$TMP/ring_back.json")"
tmux_screen; now0=$(grep -m1 -oE ' now [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
tmux_keys U; tmux_keys -l -- -1000; tmux_keys Enter
tmux_wait " now (1[0-9]{3}|[0-9]{1,3}) " 10
tmux_screen; now=$(grep -m1 -oE ' now [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
if [ -n "$now" ] && [ -n "$now0" ] && [ "$now" -le $((now0 - 1000)) ] && [ "$now" -gt $((now0 - 2000)) ]
then ok "U -1000: back 1000 cycles from $now0 (at the last event before: $now)"
else fail "U -1000: back 1000 cycles from ${now0:-?}" "$(head -1 <<<"$SCREEN")"; fi
c9=$(grep -o '"op":"ipcq_copy"' "$TMP/ring_9000.json" | wc -l)
c3=$(grep -o '"op":"ipcq_copy"' "$TMP/ring_back.json" | wc -l)
if [ "$c9" -gt "$c3" ]; then ok "the stretch gone back over has IPCQ copies ($c9 at 60000, $c3 at 3000)"
else fail "the stretch gone back over has IPCQ copies" "$c9 at 60000, $c3 at 3000"; fi
grep -o '"op":"ipcq_copy"' "$TMP/ring_direct.json" | wc -l | grep -qx "$c3" &&
    ok "as many IPCQ copies as the direct run" || fail "as many IPCQ copies as the direct run"

echo "-- P: back to the previous op start or end; R: back to the previous breakpoint hit"
tmux_keys S
expect_screen "S: the next op" 'op (starts|ends): '
tmux_screen; fwd=$(grep -oE 'op (starts|ends): .*' <<<"$SCREEN" | tail -1)
tmux_keys S
expect_screen "S again" 'op (starts|ends): '
tmux_keys f + +
tmux_wait 'Gantt +[0-9.k]+ cyc/col  ' 5
tmux_screen; zoom=$(grep -m1 -oE 'Gantt +[0-9.k]+ cyc/col' <<<"$SCREEN")
tmux_keys P
expect_screen "P: back at the op S stopped at first" 'reached backwards'
tmux_screen; got=$(grep -oE 'op (starts|ends): .*' <<<"$SCREEN" | tail -1)
same "P names the same op as the first S" "$fwd" "$got"
same "P keeps the user's zoom (the op is on screen)" "$zoom" "$(grep -m1 -oE 'Gantt +[0-9.k]+ cyc/col' <<<"$SCREEN")"
# zoomed in to a cycle a column: the ns ruler's labels take the decimals they need
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do tmux_keys +; done
tmux_wait 'Gantt +1 cyc/col' 5
tmux_screen
ns_labels=$(grep -m1 '^ns ' <<<"$SCREEN" | grep -oE '[0-9.]+ [num]?s' | head -n -1)
if [ "$(wc -l <<<"$ns_labels")" -ge 3 ] && [ -z "$(sort <<<"$ns_labels" | uniq -d)" ]; then
    ok "at 1 cyc/col no ns label repeats ($(head -2 <<<"$ns_labels" | tr '\n' ' '))"
else fail "at 1 cyc/col no ns label repeats" "$(grep -m1 '^ns ' <<<"$SCREEN")"; fi
tmux_keys B; tmux_keys -l 'c *pe_dma*'; tmux_keys Enter
tmux_keys c
expect_screen "c: stops at the breakpoint" 'breakpoint 1: '
tmux_screen; hit=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN")
tmux_keys c
expect_screen "c again: the next hit" 'PAUSED .*events: [0-9]+ .*' 
tmux_wait_not "$hit " 10
expect_screen "c again: stopped at the next hit" 'breakpoint 1: '
tmux_screen; second=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
tmux_keys R
expect_screen "R: back at the previous hit" 'back at breakpoint 1: '
tmux_screen; got=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
if [ -n "$got" ] && [ "$got" = "${hit//[^0-9]/}" ]; then
    ok "R: back at the hit c stopped at before ($got)"
else fail "R: back at the hit c stopped at before" "$hit, then $second, R at $got"; fi
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- a checkpoint whose process is gone: an older one, and the footer says so"
tmux_start 160 40 "${UTF8[@]}" -- run --paused -k llm_decode:layers=4,gen=8
expect_screen "paused" 'events: 0 '
tmux_keys u; tmux_keys -l 200000; tmux_keys Enter
expect_screen "u 200000: reached" 'reached' 30
tmux_screen; stood=$(grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
tmux_keys u; tmux_keys -l 450000; tmux_keys Enter
expect_screen "u 450000: reached" ' now (450000|449[0-9]{3}) ' 30
# the supervisor's children: the live process, then the checkpoints as they were taken (the
# one at event 0 first); every checkpoint but that one killed (the one where the run stood
# included)
gone=$(session_pids | tail -n +2 | sort -n | tail -n +3)
if [ -n "$gone" ]; then ok "checkpoints after event 0 ($(wc -w <<<"$gone"))"
else fail "checkpoints after event 0" "$(session_pids | wc -l) processes"; fi
kill -KILL $gone 2>/dev/null
tmux_keys U; tmux_keys -l 200000; tmux_keys Enter
expect_screen "U 200000: reached backwards" 'reached backwards' 30
expect_screen "from the checkpoint at event 0, the nearer one's loss said" \
    "back at event $stood \(re-run from the checkpoint at event 0: (the one at event [0-9]+ could not be resumed|[0-9]+ nearer ones could not be resumed, the nearest at event [0-9]+)\)"
# (the nearest is where the run stood, or, on a machine slow enough for a checkpoint by
# running time in the last few thousand events before it, that one)
lost=$(grep -oE 'the (one|nearest) at event [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
if [ -n "$lost" ] && [ "$lost" -gt 0 ] && [ "$lost" -le "$stood" ]; then
    ok "the lost one is the nearest before the target (event $lost, the run stood at $stood)"
else fail "the lost one is the nearest before the target" "$(tail -1 <<<"$SCREEN")"; fi
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- the checkpoints stay within their bound on a long run"
tmux_start 160 40 "${UTF8[@]}" -- run -k llm_decode:layers=32,gen=64
sleep 10
tmux_screen
n=$(grep -m1 -oE 'ckpt [0-9]+/16' <<<"$SCREEN" | grep -oE '[0-9]+' | head -1)
# a checkpoint taken and an old one dropped overlap for a moment: the fewest of a few looks
procs=999
for i in 1 2 3 4 5 6 7 8 9 10; do
    k=$(session_pids | wc -l)
    [ "$k" -lt "$procs" ] && procs=$k
    sleep 0.1
done
if [ -n "$n" ] && [ "$n" -ge 2 ] && [ "$n" -le 16 ]; then ok "checkpoints taken, at most 16 ($n)"
else fail "checkpoints taken, at most 16" "header: $(head -1 <<<"$SCREEN")"; fi
if [ "$procs" -le 18 ]; then ok "processes: supervisor, live, checkpoints ($procs)"
else fail "processes bounded" "$procs processes"; fi
grep -qE 'ckpt [0-9]+/16 [0-9.]+ [KMG]iB' <<<"$SCREEN" && ok "their memory is shown" ||
    fail "their memory is shown" "$(head -1 <<<"$SCREEN")"

echo "-- no checkpoint process outlives the TUI"
# ends ARG: start a run, step and go back once, end it with ARG, check every process went
ends() {
    local how=$1 status=$2
    tmux_start 120 30 "${UTF8[@]}" -- run --paused -k gemm
    expect_screen "$how: paused" 'events: 0 '
    for i in 1 2 3; do tmux_keys s; tmux_wait "events: $i " 5; done
    tmux_keys p
    expect_screen "$how: went back" 'reached backwards'
    local pids
    pids=$(session_pids)
    case $how in
        q) tmux_keys q ;;
        C-c) tmux_keys C-c ;;
        TERM | HUP) kill -"$how" "$(head -1 <<<"$pids")" ;;
    esac
    expect_exit "$how: exit $status" "$status"
    sleep 0.3
    local left=0 p
    for p in $pids; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
    if [ "$(wc -l <<<"$pids")" -ge 3 ] && [ $left -eq 0 ]; then
        ok "$how: every process of the session is gone ($(wc -l <<<"$pids") were running)"
    else fail "$how: every process of the session is gone" "$left of: $pids"; fi
}
ends q 0
ends C-c 130
ends TERM 143
ends HUP 129

finish
