#!/usr/bin/env bash
# A trace cut short on disk while npuscope views it (rewritten in place by cp, an editor, a
# run killed as it rewrote it), in a real terminal (tmux): the pages past the file's new
# end, which the viewer maps, would end it with SIGBUS at the first read of an op's details
# there. Now those ops show no details, the status line says why, and the viewer goes on
# and quits as usual. Cut while it loads, the load stops at the cut with an error naming
# the file and the place, and the terminal is restored.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

TRACE=$TMP/run.json
"$NPUSCOPE" run --headless -k llm_decode:layers=1,gen=8 -o "$TRACE" >/dev/null
size=$(stat -c %s "$TRACE")
[ "$size" -gt 1000000 ] || fail "a trace of more than a megabyte to cut" "$size bytes"
UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)
export XDG_CACHE_HOME=$TMP/cache

echo "-- cut while viewed"
cp "$TRACE" "$TMP/cut.json"
tmux_start 150 40 "${UTF8[@]}" -- view --no-cache "$TMP/cut.json"
if tmux_wait 'POST-MORTEM' 30; then ok "the trace opens"; else fail "the trace opens" "$SCREEN"; fi
truncate -s $((size / 4)) "$TMP/cut.json"
tmux_keys G # the last op: its details are past the cut
if tmux_wait 'cut short on disk while open' 10; then
    ok "the last op's details read past the cut: the status line says the file was cut short"
else
    fail "the last op's details read past the cut: the status line says the file was cut short" \
        "$SCREEN"
fi
expect_screen "the last op shows no details" 'no details'
tmux_keys g # the first op: before the cut, as it was
if tmux_wait '│ details' 10; then ok "an op before the cut keeps its details"; else
    fail "an op before the cut keeps its details" "$SCREEN"; fi
tmux_keys q
expect_exit "q quits as usual, exit 0" 0

echo "-- cut while loading"
cp "$TRACE" "$TMP/cut.json"
tmux_start 150 40 "${UTF8[@]}" NPUSCOPE_TEST_LOAD_DELAY_MS=200 -- view --no-cache "$TMP/cut.json"
if tmux_wait 'loading' 15; then ok "the load is under way"; else fail "the load is under way" "$SCREEN"; fi
truncate -s $((size / 2)) "$TMP/cut.json"
if tmux_wait '^\[exit [0-9]+\]' 60; then
    if grep -q "cut.json" <<<"$SCREEN" && ! grep -qi "bus error" <<<"$SCREEN"; then
        ok "the load ends with an error naming the file, not a crash"
    else
        fail "the load ends with an error naming the file, not a crash" "$SCREEN"
    fi
fi
expect_exit "the cut load exits 2, the terminal restored" 2

finish
