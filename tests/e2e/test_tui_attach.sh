#!/usr/bin/env bash
# Served runs and their viewers, in real terminals (tmux): a run served headless and
# paused is listed by ps and noted beside its trace; a viewer attaches, steps, steps to
# the next op and detaches, and a viewer in a second window finds the same state; two
# viewers at once both count two; a viewer killed with SIGKILL leaves the run running
# (its events still grow); another user is refused with a message on both sides; stop
# ends the run with its trace written. In-process TUI runs: SIGHUP writes a valid trace
# marked incomplete; with --keep-on-hangup the run survives the SIGHUP, shows in ps, and
# is attached with its history. A viewer shows the energy the run's own TUI shows (the
# summary's lines, the power row W) at the same point of the run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
# the runs of this test, apart from anyone else's (ps and attach also look in the
# directory of runs started without XDG_RUNTIME_DIR, under TMPDIR)
export XDG_RUNTIME_DIR="$TMP/xdg" TMPDIR="$TMP/tmp"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$TMPDIR"
LONG=llm_decode:layers=32,gen=256 # millions of events: it never ends by itself here

# Viewers: each in a tmux server of its own, so several can run at once.
SERVED=()
cleanup() {
    local n
    for n in a b c d e f g h; do tmux -L "$TMUX_BASE-$n" kill-server >/dev/null 2>&1; done
    for n in "${SERVED[@]}"; do kill "$n" 2>/dev/null; done
    [ -n "${PUB:-}" ] && rm -rf "$PUB"
    tmux_stop
    rm -rf "$TMP"
}
trap cleanup EXIT

vstart() { # NAME ARGS...: ARGS in a 240x50 window of its own (a new NAME each time)
    local name=$1
    shift
    local cmd
    cmd=$(printf '%q ' env "${UTF8[@]}" "$@")
    tmux -L "$TMUX_BASE-$name" -f /dev/null new-session -d -x 240 -y 50 \
        "$cmd; echo \"[exit \$?]\"; sleep 600"
}
vscreen() { tmux -L "$TMUX_BASE-$1" capture-pane -p -t 0 2>/dev/null; }
vwait() { # NAME REGEX [SECONDS]
    local i
    for ((i = 0; i < ${3:-15} * 20; i++)); do
        vscreen "$1" | grep -qE -- "$2" && return 0
        sleep 0.05
    done
    return 1
}
vkeys() {
    local n=$1
    shift
    tmux -L "$TMUX_BASE-$n" send-keys -t 0 "$@"
}
vstop() { tmux -L "$TMUX_BASE-$1" kill-server >/dev/null 2>&1 || true; }
vpid() { # the npuscope process in a viewer's window
    local sh
    sh=$(tmux -L "$TMUX_BASE-$1" display-message -p -t 0 '#{pane_pid}')
    pgrep -P "$sh" -f npuscope | head -1
}
expect_v() { # NAME CHECK REGEX [SECONDS]
    if vwait "$1" "$3" "${4:-15}"; then ok "$2"; else
        fail "$2" "screen never matched /$3/" "screen:" "$(vscreen "$1")"; fi
}
events_of() { vscreen "$1" | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9; }
# ps fields of a run, from the end of its line (the workload and time hold spaces)
ps_field() { # RUN N: N=1 viewers, 2 state, 3 events
    "$NPUSCOPE" ps | awk -v id="$1" -v n="$2" '$1 == id { print $(NF - n + 1) }'
}
# start a served run: SERVED_PID, RUN (its id) and the stderr in $TMP/$1.err
serve() { # NAME ARGS...
    local name=$1 i
    shift
    "$NPUSCOPE" run --headless "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVED_PID=$!
    SERVED+=("$SERVED_PID")
    for ((i = 0; i < 200; i++)); do
        grep -q 'serving run' "$TMP/$name.err" 2>/dev/null && break
        sleep 0.05
    done
    RUN=$(grep -oE 'serving run [^ ]+' "$TMP/$name.err" | awk '{print $3}')
}

echo "-- nothing served yet"
run "$NPUSCOPE" ps
expect_status "ps with no runs: exit 0" 0
expect_out "ps says there are none" '^no served runs'

echo "-- a served run, paused: ps, the note beside the trace"
serve s --listen --paused -k "$LONG" -o "$TMP/s.json"
if [ -n "$RUN" ]; then ok "the run says where it is served ($RUN)"; else
    fail "the run says where it is served" "$(cat "$TMP/s.err")"; fi
expect_line() { if grep -qE -- "$2" <<<"$3"; then ok "$1"; else fail "$1" "no /$2/ in:" "$3"; fi; }
expect_line "its socket is in the runs' directory, mode 0600" \
    "^srw------- .* $XDG_RUNTIME_DIR/npuscope/$RUN\.sock$" \
    "$(ls -l "$XDG_RUNTIME_DIR/npuscope/$RUN.sock" | sed 's/  */ /g')"
expect_line "the note beside the trace names the run and its socket" \
    "^socket $XDG_RUNTIME_DIR/npuscope/$RUN\.sock$" "$(cat "$TMP/.npuscope-run" 2>/dev/null)"
S_PID=$SERVED_PID
run "$NPUSCOPE" ps
expect_out "ps lists it: id, pid, workload, time, events, state, viewers" \
    "^$RUN +$SERVED_PID +$LONG +0 ns +0 +paused +0$"

echo "-- attach, step, step to the next op, detach"
vstart a "$NPUSCOPE" attach "${RUN##*-}"
expect_v a "attached: paused before the first event, one viewer" \
    '^ npuscope +PAUSED +now 0 \(0 ns\) +events: 0 +1 viewer '
expect_v a "the status line says how to leave" "attached to $RUN: q detaches, the run carries on"
for i in 1 2 3 4 5; do vkeys a s; done
expect_v a "five steps: five events" 'events: 5 +1 viewer +ev 5 at'
vkeys a S
expect_v a "S: the run stops when an op starts or ends" 'op (starts|ends): [a-z_0-9/]+ on sip0\.'
a_events=$(events_of a)
a_now=$(vscreen a | grep -m1 -oE 'now [0-9]+' | tr -dc 0-9)
vkeys a q
expect_v a "q leaves the viewer (exit 0)" '^\[exit 0\]'
for ((i = 0; i < 100; i++)); do [ "$(ps_field "$RUN" 1)" = 0 ] && break; sleep 0.05; done
if kill -0 "$SERVED_PID" 2>/dev/null; then ok "leaving does not stop the run"; else
    fail "leaving does not stop the run"; fi
if [ "$(ps_field "$RUN" 1)" = 0 ] && [ "$(ps_field "$RUN" 3)" = "$a_events" ]; then
    ok "ps: no viewer now, still $a_events events"
else fail "ps: no viewer, events kept" "$("$NPUSCOPE" ps)"; fi

echo "-- reattach from a second window: the same state"
vstart b "$NPUSCOPE" attach "$RUN"
expect_v b "the second window sees the same time and events" \
    "PAUSED +now $a_now .* +events: $a_events +1 viewer"
expect_v b "... and the op the run stopped at, selected" 'Details: selected op'

echo "-- two viewers at once"
vstart c "$NPUSCOPE" attach
expect_v c "attach with no id: the only run; two viewers" "events: $a_events +2 viewers"
expect_v b "the other viewer counts two as well" "events: $a_events +2 viewers"
vkeys c s
expect_v b "a step in one viewer shows in the other" "events: $((a_events + 1)) +2 viewers"

echo "-- a viewer whose terminal closes: the run goes on"
vstart g "$NPUSCOPE" attach "$RUN"
expect_v g "a third viewer" "events: $((a_events + 1)) +3 viewers"
g_pid=$(vpid g)
vstop g # its terminal goes: SIGHUP
expect_v b "the others count two again" "events: $((a_events + 1)) +2 viewers"
for ((i = 0; i < 100; i++)); do kill -0 "$g_pid" 2>/dev/null || break; sleep 0.05; done
if [ -n "$g_pid" ] && ! kill -0 "$g_pid" 2>/dev/null && kill -0 "$SERVED_PID" 2>/dev/null; then
    ok "the viewer is gone, the run is not"
else fail "the viewer is gone, the run is not" "viewer $g_pid, run $SERVED_PID"; fi

echo "-- the memory pane fetches tensor values"
vkeys b m
expect_v b "the memory pane lists the run's tensors" '(▶|>| )Memory \(live\) +hbm [0-9]+'
vkeys b Enter
expect_v b "Enter: a tensor's values arrive" '^\[ +0\] +-?[0-9]'
vkeys b Escape m

echo "-- SIGKILL a viewer: the run goes on"
vkeys c '{' '{' '{'
expect_v c "slower: 1000 events a second" 'speed: 1000 ev/s'
vkeys c Space
expect_v c "running" ' LIVE +now'
kill -KILL "$(vpid c)"
expect_v b "the other viewer counts one again" '1 viewer'
e1=$(ps_field "$RUN" 3)
for ((i = 0; i < 100; i++)); do
    sleep 0.1
    e2=$(ps_field "$RUN" 3)
    [ -n "$e1" ] && [ -n "$e2" ] && [ "$e2" -gt "$e1" ] && break
done
if [ -n "$e1" ] && [ -n "$e2" ] && [ "$e2" -gt "$e1" ]; then
    ok "after the SIGKILL the run's events still grow ($e1, then $e2)"
else fail "after the SIGKILL the run's events still grow" "$e1 then $e2"; fi
expect_line "ps: running, one viewer" '^running 1$' "$(ps_field "$RUN" 2) $(ps_field "$RUN" 1)"
vkeys b Space
expect_v b "the remaining viewer pauses it" ' PAUSED +now'

echo "-- another user is refused, with a message on both sides"
# nobody runs a copy of the binary in a directory open to all (the tree may not be)
PUB=$(mktemp -d /tmp/npuscope-e2e-pub.XXXXXX)
chmod 755 "$PUB"
cp "$NPUSCOPE" "$PUB/npuscope"
chmod 755 "$PUB/npuscope"
if [ "$(id -u)" -ne 0 ] || ! command -v runuser >/dev/null ||
    ! runuser -u nobody -- "$PUB/npuscope" --version >/dev/null 2>&1; then
    echo "  (skipped: needs root, runuser and a user nobody)"
else
    vstart d runuser -u nobody -- "$PUB/npuscope" attach "$XDG_RUNTIME_DIR/npuscope/$RUN.sock"
    expect_v d "nobody cannot even reach the socket" \
        'npuscope attach: .*: permission denied: a run is served to the user who started it only'
    expect_v d "... exit 2" '^\[exit 2\]'
    # a socket left open to all by mistake: the run itself refuses
    R1=$RUN
    serve p --listen="$PUB/r.sock" --paused -k vector_add
    RUN=$R1
    chmod 666 "$PUB/r.sock"
    vstart f runuser -u nobody -- "$PUB/npuscope" attach "$PUB/r.sock"
    expect_v f "the viewer refuses a run of another user" \
        'npuscope attach: .*r\.sock is served by root \(uid 0\), not by you: not attaching to it'
    expect_v f "... exit 2" '^\[exit 2\]'
    if grep -qE '^npuscope: refused a connection from nobody \(uid [0-9]+\): the run belongs to root \(uid 0\)$' \
        "$TMP/p.err"; then ok "the run says whom it refused"
    else fail "the run says whom it refused" "$(cat "$TMP/p.err")"; fi
    run "$NPUSCOPE" stop "$PUB/r.sock"
    expect_status "a run at a path of its own is stopped by its path" 0
    vstop d
    vstop f
fi
rm -rf "$PUB"

echo "-- stop: the trace written, the viewers told"
run "$NPUSCOPE" stop "$RUN"
expect_status "stop: exit 0" 0
expect_out "stop says where the trace is" "^npuscope stop: $RUN stopped; trace written to .*/s\.json$"
wait "$S_PID"
served_status=$?
if [ "$served_status" -eq 0 ]; then ok "the served run ends with exit 0"; else
    fail "the served run ends with exit 0" "exit $served_status"; fi
expect_line "it prints how far it got" "^npuscope run: $RUN stopped after [0-9]+ events" "$(cat "$TMP/s.out")"
run "$NPUSCOPE" validate "$TMP/s.json"
expect_status "the trace validates" 0
if grep -q '"incomplete":true' "$TMP/s.json"; then ok "marked incomplete"; else
    fail "marked incomplete"; fi
expect_v b "the viewer hears it and keeps what it had" \
    'detached: the run was stopped \(npuscope stop\)'
if [ ! -e "$TMP/.npuscope-run" ] && [ ! -e "$XDG_RUNTIME_DIR/npuscope/$RUN.sock" ]; then
    ok "the note and the socket are gone"
else fail "the note and the socket are gone" "$(ls -la "$TMP" "$XDG_RUNTIME_DIR/npuscope")"; fi
run "$NPUSCOPE" stop "$RUN"
expect_status "stop of a run that is gone: exit 2" 2
expect_err "... says so in one line" "^npuscope stop: no served run named '$RUN'"
vstop b
vstop a
vstop c

echo "-- the energy, as the run's own TUI shows it"
energy_lines() { grep -oE '(energy [0-9.]+ [munp]?J, avg [0-9.]+ [munp]?W|dynamic [0-9.]+ [munp]?J +static [0-9.]+ [munp]?J|power <=[0-9.]+ [munp]?W)'; }
tmux_start 240 50 "${UTF8[@]}" -- run --paused -k "$LONG"
expect_screen "a TUI run, paused" ' PAUSED '
for i in 1 2 3 4 5 6 7 8; do tmux_keys s; done
expect_screen "eight steps" 'events: 8 '
tmux_keys W
expect_screen "its power row" '^ power <=[0-9.]+ [munp]?W'
# the summary and the power row catch up with the last step within their refresh: read
# them once two captures half a second apart agree
tmux_screen
local_energy=$(energy_lines <<<"$SCREEN")
for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 0.5
    tmux_screen
    again=$(energy_lines <<<"$SCREEN")
    [ "$again" = "$local_energy" ] && break
    local_energy=$again
done
tmux_keys q
expect_exit "q: exit 0" 0
[ "$(wc -l <<<"$local_energy")" = 3 ] && ok "the TUI run: energy, its parts, the power row" ||
    fail "the TUI run's energy lines" "$local_energy"
serve en --listen --paused -k "$LONG"
vstart h "$NPUSCOPE" attach "$RUN"
expect_v h "attached" 'PAUSED .*events: 0 +1 viewer'
for i in 1 2 3 4 5 6 7 8; do vkeys h s; done
expect_v h "eight steps" 'events: 8 +1 viewer'
vkeys h W
expect_v h "the viewer's power row, the energy known" '^ power <=[0-9.]+ [munp]?W'
expect_v h "the viewer's summary: the energy" '^ energy [0-9.]+ [munp]?J, avg'
remote_energy=$(vscreen h | energy_lines)
for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ "$remote_energy" = "$local_energy" ] && break
    sleep 0.5
    remote_energy=$(vscreen h | energy_lines)
done
if [ "$remote_energy" = "$local_energy" ]; then ok "the same energy lines as the run's own TUI"; else
    fail "the same energy lines" "local:" "$local_energy" "attached:" "$remote_energy"; fi
run "$NPUSCOPE" stop "$RUN"
expect_status "stop: exit 0" 0
vstop h

echo "-- SIGHUP to a TUI run: a valid trace, marked incomplete"
tmux_start 160 40 "${UTF8[@]}" -- run --paused -k "$LONG" -o "$TMP/hup.json"
expect_screen "paused" ' PAUSED '
tmux_keys S
expect_screen "an op" 'op (starts|ends)'
app=$(pgrep -P "$(tmux_format '#{pane_pid}')" -f npuscope | head -1)
kill -HUP "$app"
expect_exit "SIGHUP: exit 129, terminal restored" 129
run "$NPUSCOPE" validate "$TMP/hup.json"
expect_status "the trace validates" 0
if grep -q '"incomplete":true' "$TMP/hup.json"; then ok "marked incomplete"; else
    fail "marked incomplete"; fi

echo "-- --keep-on-hangup: the run survives, served, with its history"
tmux_start 160 40 "${UTF8[@]}" -- run --keep-on-hangup --paused -k "$LONG" -o "$TMP/keep.json"
expect_screen "paused" ' PAUSED '
tmux_keys S S S
expect_screen "ops have run" 'op (starts|ends)'
# the events once the three steps are done: the paused screen stops changing
k_events=
for ((i = 0; i < 50; i++)); do
    e=$(tmux_screen; grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9)
    [ -n "$e" ] && [ "$e" = "$k_events" ] && break
    k_events=$e
    sleep 0.2
done
app=$(pgrep -P "$(tmux_format '#{pane_pid}')" -f npuscope | head -1)
kill -HUP "$app" # the process the shell started: the run itself, or its supervisor (tui/source/ckpt.h)
expect_screen "the terminal is told where the run went" \
    'the terminal hung up; the run carries on, serving run npuscope-'
# the note beside the trace names the run and the process that serves it
KRUN=$(sed -n 's/^run_id //p' "$TMP/.npuscope-run" 2>/dev/null)
KPID=$(sed -n 's/^pid //p' "$TMP/.npuscope-run" 2>/dev/null)
if [ -n "$KRUN" ] && [ -n "$KPID" ]; then ok "its note beside the trace: $KRUN, process $KPID"; else
    fail "its note beside the trace" "$(cat "$TMP/.npuscope-run" 2>&1)"; fi
sleep 0.5
if kill -0 "$KPID" 2>/dev/null; then ok "the run survives the SIGHUP"; else
    fail "the run survives the SIGHUP"; fi
if [ "$(ps_field "$KRUN" 3)" = "$k_events" ] &&
    "$NPUSCOPE" ps | awk -v id="$KRUN" -v p="$KPID" '$1 == id && $2 == p { f = 1 } END { exit !f }'; then
    ok "ps lists it, at the $k_events events it had"
else fail "ps lists it" "$("$NPUSCOPE" ps)"; fi
tmux_stop # the window goes too (SIGHUP to all its processes): the run does not care
sleep 0.3
if kill -0 "$KPID" 2>/dev/null; then ok "closing its window does not end it"; else
    fail "closing its window does not end it"; fi
vstart e "$NPUSCOPE" attach "$KRUN"
expect_v e "attached: its history, paused where it was" "PAUSED .*events: $k_events +1 viewer"
expect_v e "the Gantt has the rows of the ops run before the hang-up" '(^ +|\.)pe_(dma|cpu|gemm|math) +│'
vkeys e s
expect_v e "and it steps on" "events: $((k_events + 1)) "
run "$NPUSCOPE" stop "$KRUN"
expect_status "stop: exit 0" 0
run "$NPUSCOPE" validate "$TMP/keep.json"
expect_status "its trace validates" 0
vstop e

finish
