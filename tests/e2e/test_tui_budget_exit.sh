#!/usr/bin/env bash
# Leaving a live run whose model is in the memory budget's file (--mem-budget): the file's
# last close (the kernel dropping its pages, a second at a hundred million events) is taken
# by a small process of its own, the keeper, so that q ends the run at once; the keeper ends
# as soon as the run's processes are gone, however they end (q, SIGKILL of the live process
# or of the process the shell started), and nothing is left: no process, no file; going back
# to before the budget lets the file of the past left go at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
# the budget's file (and the spill) go to this test's own directory
mkdir -p "$TMP/files"
FILES=$TMP/files

# the processes holding a file in $FILES (open or mapped), one per line: "pid comm"
holders() {
    local p
    for p in /proc/[0-9]*; do
        if ls -l "$p/fd" 2>/dev/null | grep -qF -- "$FILES/#" ||
            grep -qF -- "$FILES/#" "$p/maps" 2>/dev/null; then
            echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null)"
        fi
    done
}
# the live process: of the run's processes (children of the one the shell started: the live
# one and its checkpoints, which map the budget's file too), the one that works, once it
# maps the budget's file
live_pid() {
    local p t best="" most=-1
    for p in $(pgrep -P "$1"); do
        t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
        [ -n "$t" ] && [ "$t" -gt "$most" ] && { most=$t; best=$p; }
    done
    [ -n "$best" ] && grep -qE "rw-s .*$FILES/#" "/proc/$best/maps" 2>/dev/null && echo "$best"
}
# a process gone: no longer there, or exited and waiting for its reaper (init, for the
# keeper, which is nobody's child in the run)
ended() { [ ! -e "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
# nothing_left NAME: within 10 s, no process holds a file of the run (the keeper ended too,
# and with the last close the unlinked files are gone from the disk)
nothing_left() {
    local i h
    for ((i = 0; i < 200; i++)); do
        h=$(holders)
        if [ -z "$h" ] && { [ -z "${KEEPER:-}" ] || ended "$KEEPER"; }; then
            ok "$1 ($((i * 50)) ms after)"
            return
        fi
        sleep 0.05
    done
    fail "$1" "still holding the run's files after 10 s:" "$h"
}
# start NAME: a live run whose model engages the budget at once; sets SUP (the process the
# shell started), LIVE and KEEPER
start() {
    tmux_start 160 40 "${UTF8[@]}" TMPDIR="$FILES" -- run --mem-budget 2M -k llm_decode:layers=4,gen=64
    expect_screen "$1: the run starts" ' LIVE | FINISHED '
    SUP=$(app_pid) LIVE="" KEEPER=""
    local i
    for ((i = 0; i < 300; i++)); do
        LIVE=$(live_pid "$SUP")
        [ -n "$LIVE" ] && break
        sleep 0.05
    done
    if [ -n "$LIVE" ]; then ok "$1: the model is in the budget's file"
    else fail "$1: the model is in the budget's file" "no process maps one" "$(holders)"; fi
    KEEPER=$(holders | awk '$2 == "npuscope-keep" {print $1}')
    if [ -n "$KEEPER" ] &&
        ls -l "/proc/$KEEPER/fd" 2>/dev/null | grep -qF -- "$(grep -m1 -oE "rw-s .*$FILES/#[0-9]+" "/proc/$LIVE/maps" | grep -oE '#[0-9]+$')"; then
        ok "$1: the keeper holds the budget's file"
    else
        fail "$1: the keeper holds the budget's file" "holders:" "$(holders)"
    fi
    if [ -n "$KEEPER" ] && [ "$(awk '{print $6}' "/proc/$KEEPER/stat")" != "$(awk '{print $6}' "/proc/$SUP/stat")" ]; then
        ok "$1: the keeper is out of the run's session (no terminal signal reaches it)"
    else
        fail "$1: the keeper is out of the run's session"
    fi
}

echo "-- q"
start q
tmux_keys q
gone_within "q: the run ends at once" "$SUP" 500
expect_exit "q: exit 0, the terminal restored" 0
nothing_left "q: the keeper ends and no file is left"

echo "-- back before the budget, then q"
start back
file=$(grep -m1 -oE "rw-s .*$FILES/#[0-9]+" "/proc/$LIVE/maps" | grep -oE '#[0-9]+$')
tmux_keys U; tmux_keys -l 100; tmux_keys Enter
expect_screen "back: reached backwards, from the checkpoint before the budget" 'reached backwards' 30
for ((i = 0; i < 100; i++)); do
    h=$(for p in /proc/[0-9]*; do ls -l "$p/fd" 2>/dev/null | grep -qF -- "$FILES/$file " && echo "${p#/proc/}"; done)
    [ -z "$h" ] && break
    sleep 0.05
done
if [ -z "$h" ]; then ok "back: the keeper lets the budget file of the past left go ($((i * 50)) ms)"
else fail "back: the keeper lets the budget file of the past left go" "held by: $h"; fi
tmux_keys q
gone_within "back, q: the run ends at once" "$SUP" 500
nothing_left "back, q: the keeper ends and no file is left"

echo "-- SIGKILL of the live process"
start "kill live"
kill -KILL "$LIVE"
gone_within "kill live: the run ends" "$SUP" 2000
nothing_left "kill live: the keeper ends and no file is left"

echo "-- SIGKILL of the process the shell started"
start "kill all"
kill -KILL "$SUP"
for ((i = 0; i < 200; i++)); do ended "$LIVE" && break; sleep 0.01; done
if ended "$LIVE"; then ok "kill all: the live process ends ($((i * 10)) ms)"
else fail "kill all: the live process ends" "still running after 2 s"; fi
nothing_left "kill all: the keeper ends and no file is left"

finish
