#!/usr/bin/env bash
# Keys and messages that say what they do, as a new user meets them (tmux): the hint of a
# toggle names the key that toggles it, going back at the first event says it is there,
# `view` of a directory that holds no sweep says so, and a trace written before its run
# ended says so in validate, summary and the viewer's header.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

echo "-- E: the utilization strip's hint names E"
tmux_start 120 40 "${UTF8[@]}" -- run --paused -k vector_add
expect_screen "paused at the first event" 'PAUSED'
tmux_keys E
expect_screen "E shows the strip and says E hides it" 'utilization: .*E hides it'
expect_no_screen "the hint does not send the user to U (which goes back)" 'U hides it'

echo "-- p at event 0: already at the first event"
tmux_keys p
expect_screen "p at the first event says so" 'at the first event already: there is nothing before it'
expect_no_screen "no talk of checkpoints" 'none were taken'
tmux_keys q
tmux_stop

echo "-- view of a directory that is not a sweep"
mkdir -p "$TMP/notasweep"
tmux_start 100 30 "${UTF8[@]}" -- view "$TMP/notasweep"
expect_screen "one line: a directory, not a sweep" 'npuscope view: .*/notasweep: a directory, and not a sweep \(no points\.jsonl'
expect_screen "exit 2" '^\[exit 2\]'
tmux_stop

echo "-- c in the demo (1,000 events a second): to the end at full speed, and says so"
tmux_start 140 40 "${UTF8[@]}" --
expect_screen "the demo runs at its pace" 'speed 1000'
tmux_keys c
# (on a fast machine the run is over before the screen is read: FINISHED says it then)
expect_screen "c says it runs at full speed" 'running to the end at full speed| FINISHED '
# 17,000 events at 1,000 a second would take 17 s
expect_screen "and reaches the end within seconds" ' FINISHED ' 8
tmux_keys q
tmux_stop

echo "-- q after a live run with -o says where the trace went"
tmux_start 120 30 "${UTF8[@]}" -- run --paused -k vector_add -o "$TMP/q.json"
expect_screen "paused" ' PAUSED '
tmux_keys q
expect_screen "q: the trace's path, marked incomplete" "npuscope: trace written to .*/q\.json \(incomplete: the run was stopped\)"
tmux_stop
tmux_start 120 30 "${UTF8[@]}" -- run -k vector_add -o "$TMP/q2.json"
expect_screen "the run finishes" ' FINISHED '
tmux_keys q
expect_screen "q after the end: the trace's path" "npuscope: trace written to .*/q2\.json$"
tmux_stop

echo "-- breakpoints that cannot match are refused; numbers stay after a removal"
tmux_start 140 40 "${UTF8[@]}" -- run --paused -k vector_add:pes=2
expect_screen "paused" ' PAUSED '
tmux_keys B 'foo bar' Enter
expect_screen "an op name with a space: refused, with the reason" "'foo bar' cannot match: op names have no spaces"
tmux_keys B 'c sip9.*' Enter
expect_screen "a component this chip lacks: refused" "no component of this chip matches 'sip9\.\*'"
tmux_keys B 'o dma_read' Enter
expect_screen "a first breakpoint" 'breakpoint 1: op dma_read starts'
tmux_keys B 'o add' Enter
expect_screen "a second" 'breakpoint 2: op add starts'
tmux_keys B 'c sip0.cube0.pe1.*' Enter
expect_screen "a third" 'breakpoint 3: an op starts on sip0\.cube0\.pe1'
tmux_keys X Down d
expect_screen "d on the second removes breakpoint 2" 'breakpoint 2 removed'
expect_screen "the third keeps its number" '3: an op starts on sip0\.cube0\.pe1\.\*'
expect_no_screen "nothing is renumbered 2" '2: an op starts on'
tmux_keys Escape
tmux_keys B 'o mul' Enter
expect_screen "the next one is 4, not a reused number" 'breakpoint 4: op mul starts'
tmux_keys X; for i in 1 2 3 4; do tmux_keys d; sleep 0.2; done; tmux_keys Escape c
expect_screen "run to the end" ' FINISHED '
tmux_keys B 'o dma_reed' Enter
expect_screen "after the run, an op name no op had: refused, with what was meant" \
    "the run is over and no op was named 'dma_reed' \(did you mean 'dma_read'\?\)"
tmux_keys q
tmux_stop

echo "-- TERM=vt100 under a UTF-8 locale: ASCII only; NO_COLOR: a character per op kind"
tmux_start 120 30 LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=vt100 NO_COLOR=1 -- run --paused -k gemm
expect_screen "the run opens paused" 'PAUSED'
tmux_keys c
expect_screen "c runs it to the end" 'FINISHED'
if LC_ALL=C grep -q $'[\x80-\xff]' <<<"$SCREEN"; then fail "vt100: nothing but ASCII on screen" "$SCREEN"
else ok "vt100: nothing but ASCII on screen"; fi
expect_screen "NO_COLOR: GEMM ops drawn with #" '^ +pe_gemm +\|\|? *[ #]*#'
expect_screen "NO_COLOR: host messages drawn with %" '^ host +\|[^|]*%'
tmux_keys q
tmux_stop

echo "-- a trace written before its run ended says so: validate, summary, the viewer"
"$NPUSCOPE" run --headless -k vector_add -o "$TMP/full.json" >/dev/null
python3 -c 'import json,sys
t = json.load(open(sys.argv[1])); t["run_metadata"]["incomplete"] = True
json.dump(t, open(sys.argv[2], "w"))' "$TMP/full.json" "$TMP/part.json"
run "$NPUSCOPE" validate "$TMP/part.json"
expect_status "validate: an incomplete trace is still valid: exit 0" 0
expect_out "validate: a note says it is incomplete" 'part\.json: note: incomplete: written before the run ended'
run "$NPUSCOPE" validate --strict "$TMP/part.json"
expect_status "validate --strict: an incomplete trace fails: exit 1" 1
run "$NPUSCOPE" validate "$TMP/full.json"
if ! grep -q incomplete <<<"$OUT"; then ok "validate: a complete trace has no such note"; else fail "validate: a complete trace has no such note" "$OUT"; fi
run "$NPUSCOPE" summary "$TMP/part.json"
expect_out "summary: the figures cover only part of the run" '^INCOMPLETE +written before the run ended'
run "$NPUSCOPE" summary --json "$TMP/part.json"
if python3 -c 'import json,sys; assert json.loads(sys.stdin.read())["incomplete"] is True' <<<"$OUT"; then
    ok "summary --json: incomplete"; else fail "summary --json: incomplete" "$OUT"; fi
tmux_start 140 30 "${UTF8[@]}" -- view "$TMP/part.json"
expect_screen "the viewer's header says it is incomplete" 'INCOMPLETE: written before the run ended'
tmux_keys q
tmux_stop
tmux_start 140 30 "${UTF8[@]}" -- view "$TMP/full.json"
expect_screen "a complete trace opens" 'POST-MORTEM'
expect_no_screen "... without that badge" 'INCOMPLETE'
tmux_keys q
tmux_stop

finish
