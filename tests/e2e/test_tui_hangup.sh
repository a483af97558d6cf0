#!/usr/bin/env bash
# A terminal that goes away ends what runs in it, as when an ssh connection drops or a
# tmux pane is killed: npuscope runs in a tmux server of its own, as the session leader
# of its terminal (ssh -t host npuscope ..., a pane's command) or under a shell, and the
# server is killed, which closes the terminal. Within 2 s no process of the session is
# left (the supervisor, the live process, its checkpoints), and the trace given with -o
# is written: marked incomplete for a run still going, complete for a finished one.
# Covers a running, a paused and a FINISHED run, with and without -o, the session leader
# being npuscope or a shell, with and without checkpoints, with SIGHUP blocked (the end
# is read on the terminal), view of a trace and attach to a served run (which carries
# on), and a hang-up signalled again while the trace is written. With --keep-on-hangup the
# run survives and is served.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
export XDG_RUNTIME_DIR="$TMP/xdg" TMPDIR="$TMP/tmp"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$TMPDIR"
LONG=llm_decode:layers=32,gen=256 # millions of events: it never ends by itself here
SERVED=()
cleanup() {
    local p
    for p in "${SERVED[@]}"; do kill "$p" 2>/dev/null; done
    tmux_stop
    rm -rf "$TMP"
}
trap cleanup EXIT

# hup_start HOW [--block-signal=HUP] ARGS...: npuscope ARGS in a fresh tmux server; HOW
# is "leader" (npuscope is the terminal's session leader) or "shell" (a shell is,
# npuscope its child); --block-signal=HUP: npuscope starts with SIGHUP blocked. SID is the
# session's id: every process of the run is in it.
hup_start() {
    local how=$1
    shift
    local cmd
    local envs=("${UTF8[@]}")
    [ "${1:-}" = --block-signal=HUP ] && envs=("$1" "${envs[@]}") && shift
    tmux_stop
    ERRF=$TMP/stderr-$((TMUX_RUNS + 1))
    cmd="$(printf '%q ' env "${envs[@]}" "$NPUSCOPE" "$@")2>$(printf %q "$ERRF")"
    [ "$how" = leader ] && cmd="exec $cmd" || cmd="$cmd; echo \"[exit \$?]\"; sleep 600"
    TMUX_RUNS=$((TMUX_RUNS + 1))
    TMUX_SOCK=$TMUX_BASE-$TMUX_RUNS
    tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -x 160 -y 40 "$cmd"
    SID=$(tmux_format '#{pane_pid}')
}

# expect_up NAME REGEX: the screen comes to match; else what npuscope said on its standard
# error (which the pane does not keep once the process is gone) goes with the failure
expect_up() {
    if tmux_wait "$2"; then ok "$1"; else
        fail "$1" "screen never matched /$2/" "screen:" "$SCREEN" \
            "npuscope's standard error:" "$(cat "$ERRF" 2>/dev/null)"
    fi
}

session_left() { pgrep -s "$SID" 2>/dev/null | wc -l; }

# all_end NAME SECONDS [NOTE]: within SECONDS of the terminal's close nothing of the
# session is left (what is left is killed)
all_end() {
    local i left
    for ((i = 0; i < $2 * 20; i++)); do
        left=$(session_left)
        [ "$left" -eq 0 ] && break
        sleep 0.05
    done
    if [ "$left" -eq 0 ]; then ok "$1: every process ends${3:+ ($3)}"; else
        fail "$1: every process ends" "$left left $2 s after the terminal closed:" \
            "$(ps -o pid,ppid,stat,pcpu,args -s "$SID")"
        pkill -KILL -s "$SID" 2>/dev/null
    fi
}

# hangup NAME: kill the tmux server (the terminal closes), then within 2 s nothing of the
# session may be left
hangup() {
    local before
    before=$(session_left)
    tmux_stop
    all_end "$1" 2 "$before were running"
}

# expect_trace NAME FILE INCOMPLETE: FILE is a valid trace, marked incomplete or not
expect_trace() {
    run "$NPUSCOPE" validate "$2"
    expect_status "$1: the trace is written and valid" 0
    [ "$STATUS" = 0 ] || echo "       npuscope's standard error: $(cat "$ERRF" 2>/dev/null)"
    local got=false
    grep -q '"incomplete":true' "$2" 2>/dev/null && got=true
    if [ "$got" = "$3" ]; then ok "$1: run_metadata.incomplete is $3"; else
        fail "$1: run_metadata.incomplete is $3" "it is $got"; fi
}

echo "-- a running run, npuscope the session leader, with -o"
hup_start leader run -k "$LONG" -o "$TMP/live.json"
expect_up "running" ' LIVE +now'
hangup "running, -o"
expect_trace "running, -o" "$TMP/live.json" true

echo "-- a running run, without -o"
hup_start leader run -k "$LONG"
expect_up "running" ' LIVE +now'
hangup "running"

echo "-- a running run under a shell (the session leader)"
hup_start shell run -k "$LONG" -o "$TMP/shell.json"
expect_up "running" ' LIVE +now'
hangup "running under a shell"
expect_trace "running under a shell" "$TMP/shell.json" true

echo "-- a running run without checkpoints (--no-reverse)"
hup_start leader run --no-reverse -k "$LONG" -o "$TMP/norev.json"
expect_up "running" ' LIVE +now'
hangup "running, --no-reverse"
expect_trace "running, --no-reverse" "$TMP/norev.json" true

echo "-- a paused run"
hup_start leader run --paused -k "$LONG" -o "$TMP/paused.json"
expect_up "paused" ' PAUSED '
hangup "paused"
expect_trace "paused" "$TMP/paused.json" true

echo "-- a finished run, with -o"
hup_start leader run -k vector_add -o "$TMP/done.json"
expect_up "finished" ' FINISHED '
hangup "finished, -o"
expect_trace "finished, -o" "$TMP/done.json" false

echo "-- a finished run, without -o"
hup_start leader run -k vector_add
expect_up "finished" ' FINISHED '
hangup "finished"

echo "-- a finished run under a shell"
hup_start shell run -k vector_add
expect_up "finished" ' FINISHED '
hangup "finished under a shell"

echo "-- the hang-up signalled again while the trace is written, a thread beside the main one"
# past its memory budget a run has a thread that watches its memory: a SIGHUP that thread
# took with the default action would end the process before its trace is written. The
# process waits a moment once its terminal is gone (NPUSCOPE_TEST_HANGUP_DELAY_MS, tests
# only), while SIGHUP comes again and again
export NPUSCOPE_TEST_HANGUP_DELAY_MS=800
hup_start leader run --no-reverse --mem-budget 64M -k "$LONG" -o "$TMP/again.json"
unset NPUSCOPE_TEST_HANGUP_DELAY_MS
expect_up "running" ' LIVE +now'
for ((i = 0; i < 300; i++)); do # (the budget engaged: its watcher started)
    [ "$(ls /proc/"$SID"/task 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.05
done
if [ "$(ls /proc/"$SID"/task 2>/dev/null | wc -l)" -ge 2 ]; then ok "a thread beside the main one"
else fail "a thread beside the main one" "$(ls /proc/"$SID"/task 2>&1)"; fi
tmux_stop
for ((i = 0; i < 150; i++)); do # (for 3 s, or until it is gone: the wait inside too)
    kill -HUP "$SID" 2>/dev/null || break
    sleep 0.02
done
# (the time it takes is not the point here: a big model past its budget, under the
# sanitizers, takes seconds to write)
all_end "signalled again" 60
expect_trace "signalled again" "$TMP/again.json" true

echo "-- no signal at all (SIGHUP blocked): the terminal's end is read"
# what is left to notice when no SIGHUP comes through: the terminal reads at an end
if env --block-signal=HUP true 2>/dev/null; then
    hup_start leader --block-signal=HUP run -k "$LONG" -o "$TMP/blocked.json"
    expect_up "running" ' LIVE +now'
    hangup "running, SIGHUP blocked"
    expect_trace "running, SIGHUP blocked" "$TMP/blocked.json" true
    hup_start leader --block-signal=HUP run -k vector_add
    expect_up "finished" ' FINISHED '
    hangup "finished, SIGHUP blocked"
    hup_start leader --block-signal=HUP view "$TMP/done.json"
    expect_up "the trace is shown" 'vector_add'
    hangup "view, SIGHUP blocked"
else
    echo "  (skipped: env cannot block a signal)"
fi

echo "-- view of a trace"
hup_start leader view "$TMP/done.json"
expect_up "the trace is shown" 'vector_add'
hangup "view"
hup_start shell view "$TMP/done.json"
expect_up "the trace is shown" 'vector_add'
hangup "view under a shell"

echo "-- attach to a served run: the viewer ends, the run carries on"
"$NPUSCOPE" run --headless --listen --paused -k "$LONG" >"$TMP/s.out" 2>"$TMP/s.err" &
S_PID=$!
SERVED+=("$S_PID")
for ((i = 0; i < 200; i++)); do
    grep -q 'serving run' "$TMP/s.err" 2>/dev/null && break
    sleep 0.05
done
RUN=$(grep -oE 'serving run [^ ]+' "$TMP/s.err" | awk '{print $3}')
hup_start leader attach "$RUN"
expect_up "attached" '1 viewer'
hangup "attach"
if kill -0 "$S_PID" 2>/dev/null; then ok "the served run carries on"; else
    fail "the served run carries on"; fi
hup_start shell attach "$RUN"
expect_up "attached" '1 viewer'
hangup "attach under a shell"
run "$NPUSCOPE" stop "$RUN"
expect_status "the served run stops" 0

echo "-- --keep-on-hangup: the run survives the closed terminal, served"
hup_start leader run --keep-on-hangup -k "$LONG" -o "$TMP/keep.json"
expect_up "running" ' LIVE +now'
tmux_stop
for ((i = 0; i < 100; i++)); do
    [ -f "$TMP/.npuscope-run" ] && break
    sleep 0.05
done
KRUN=$(sed -n 's/^run_id //p' "$TMP/.npuscope-run" 2>/dev/null)
KPID=$(sed -n 's/^pid //p' "$TMP/.npuscope-run" 2>/dev/null)
sleep 1
if [ -n "$KPID" ] && kill -0 "$KPID" 2>/dev/null; then ok "the run survives ($KRUN)"; else
    fail "the run survives" "note: $(cat "$TMP/.npuscope-run" 2>&1)"; fi
if "$NPUSCOPE" ps | grep -q "^$KRUN "; then ok "ps lists it"; else
    fail "ps lists it" "$("$NPUSCOPE" ps)"; fi
run "$NPUSCOPE" stop "$KRUN"
expect_status "stop: exit 0" 0
for ((i = 0; i < 100; i++)); do [ "$(session_left)" -eq 0 ] && break; sleep 0.05; done
if [ "$(session_left)" -eq 0 ]; then ok "after stop nothing of it is left"; else
    fail "after stop nothing of it is left" "$(ps -o pid,ppid,stat,args -s "$SID")"
    pkill -KILL -s "$SID" 2>/dev/null
fi
expect_trace "--keep-on-hangup, stopped" "$TMP/keep.json" true

finish
