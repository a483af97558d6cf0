#!/usr/bin/env bash
# npuscope run in a real terminal (tmux): the simulation runs inside the TUI. Paused before
# the first event, s steps exactly one event and the header names it, space pauses and
# resumes, a run reaches FINISHED, a breakpoint on a component pauses there with its op
# selected, S stops at the next op record, u runs until a time, the live memory inspector
# shows what the kernel loaded, q mid-run leaves a trace that validates, a paused UI uses
# no CPU, and the help lists the live keys.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

UTF8=(LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color)

# events: N in the header of the current screen
events() { tmux_screen; grep -m1 -oE 'events: [0-9]+' <<<"$SCREEN" | tr -dc 0-9; }

# The process running npuscope in the pane (the child of the pane's shell).
npuscope_pid() {
    local shell
    shell=$(tmux_format '#{pane_pid}')
    pgrep -P "$shell" -x npuscope | head -1
}

# utime + stime of npuscope's processes, in clock ticks (/proc/PID/stat fields 14 and 15):
# the one the shell started (which watches the run), the live run and its checkpoints
# (the first one's children).
cpu_ticks() {
    local p sum=0 t
    for p in "$1" $(pgrep -P "$1"); do
        t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null) && sum=$((sum + t))
    done
    echo "$sum"
}

echo "-- paused before the first event, stepping"
# without a BLAS thread count of the user's, as a person starts it: npuscope sets one and
# runs itself again, and is still called npuscope (ps, top, pgrep; npuscope_pid below)
tmux_start 160 40 -u OPENBLAS_NUM_THREADS "${UTF8[@]}" -- run --paused -k gemm
expect_screen "PAUSED before the first event" '^ npuscope +PAUSED +now 0 \(0 ns\) +events: 0 '
expect_screen "the status line says how to go on" 'paused before the first event: s steps'
n0=$(events)
for i in 1 2 3 4 5; do tmux_keys s; done
expect_screen "five steps" 'events: 5 '
n1=$(events)
if [ -n "$n0" ] && [ $((n1 - n0)) -eq 5 ]; then ok "s five times: exactly 5 events"
else fail "s five times: exactly 5 events" "before '$n0', after '$n1'"; fi
expect_screen "the header names the last event: number, time, what happened" \
    'events: 5  ev 5 at [0-9.]+ [nu]?s: [a-z]'
expect_no_screen "still paused" ' LIVE '

echo "-- resume, pause again (at 10 events a second, so there is time to look)"
tmux_keys '{' '{' '{' '{' '{'
expect_screen "slowed down to 10 events a second" 'speed: 10 ev/s'
tmux_keys Space
expect_screen "space resumes: LIVE" ' LIVE +now'
expect_screen "the header shows the speed" 'speed 10 ev/s'
pid=$(npuscope_pid)
if [ -n "$pid" ]; then
    t0=$(cpu_ticks "$pid")
    sleep 2
    t1=$(cpu_ticks "$pid")
    # between two events the loop sleeps: it used a whole core before that was so
    if [ $((t1 - t0)) -le 40 ]; then ok "10 events a second: the UI sleeps between them ($((t1 - t0)) ticks in 2 s)"
    else fail "10 events a second: the UI sleeps between them" "$((t1 - t0)) clock ticks in 2 s"; fi
fi
tmux_wait 'events: (6|7|8|9|[1-9][0-9]+) ' 5
tmux_keys Space
expect_screen "space pauses again" ' PAUSED +now'
p1=$(events)
sleep 0.5
p2=$(events)
if [ -n "$p1" ] && [ "$p1" = "$p2" ] && [ "$p1" -gt 5 ]; then ok "paused: no more events ($p1)"
else fail "paused: no more events" "$p1 then $p2"; fi

echo "-- a paused UI uses no CPU"
pid=$(npuscope_pid)
if [ -n "$pid" ]; then
    t0=$(cpu_ticks "$pid")
    sleep 2
    t1=$(cpu_ticks "$pid")
    if [ $((t1 - t0)) -le 2 ]; then ok "paused for 2 s: $((t1 - t0)) clock ticks of CPU"
    else fail "paused for 2 s: about no CPU" "$((t1 - t0)) clock ticks"; fi
else
    fail "paused for 2 s: about no CPU" "no npuscope process found"
fi

echo "-- S: to the next op record"
tmux_keys '}' '}' '}' '}' '}' '}'
expect_screen "back to full speed" 'speed: as fast as possible'
tmux_keys S
expect_screen "S stops when an op starts or ends" 'op (starts|ends): [a-z_0-9/]+ on sip0\.'
expect_screen "paused after S" ' PAUSED +now'

echo "-- help lists the live keys"
tmux_keys '?'
expect_screen "help opens" 'npuscope keys'
tmux_keys NPage NPage NPage # the simulation's keys come last
expect_screen "help: step" 'step one event'
expect_screen "help: run until" 'run until a time'
expect_screen "help: breakpoints" 'breakpoint: c GLOB'
tmux_keys Escape
tmux_wait_not 'npuscope keys'

echo "-- to the end, q"
tmux_keys c
expect_screen "c runs to the end: FINISHED" ' FINISHED +now'
expect_screen "every request answered" 'finished: [0-9]+ of [0-9]+ requests answered, 0 failed'
tmux_keys s
expect_screen "nothing left to step" 'the simulation has finished'
tmux_keys q
expect_exit "q exits 0 and restores the terminal" 0

echo "-- vector_add from the start to FINISHED, and the live memory inspector"
tmux_start 120 40 "${UTF8[@]}" -- run -k vector_add -o "$TMP/va.json"
expect_screen "vector_add runs to FINISHED" ' FINISHED +now 14379 '
expect_screen "the trace is written at the end" "trace written to .*va\.json"
tmux_keys m z
expect_screen "memory: a tab per space" 'Memory \(live\) +hbm 3 +tcm 2'
expect_screen "hbm: x, y, out from the host's MemoryWrites" 'p0:0x0000000000 +\(4096,\) +f32 +16\.0 KiB +MemoryWrite'
tmux_keys Enter
expect_screen "x's values" 'written by MemoryWrite'
tmux_screen
x_first=$(grep -m1 -E '^\[ +0\]' <<<"$SCREEN" | sed 's/^\[ *0\] *//' | awk '{print $1, $2, $3}')
tmux_keys Escape l
expect_screen "tcm: the tiles the kernel loaded" 'p0:0x0000000000 +\(4096,\) +f32 +16\.0 KiB +dma_read'
tmux_keys Enter
expect_screen "the loaded tile's values" 'tcm p0:0x0000000000 \(4096,\) f32 16\.0 KiB, written by dma_read'
tmux_screen
t_first=$(grep -m1 -E '^\[ +0\]' <<<"$SCREEN" | sed 's/^\[ *0\] *//' | awk '{print $1, $2, $3}')
if [ -n "$x_first" ] && [ "$x_first" = "$t_first" ]; then
    ok "the kernel's tile holds x's first values ($t_first)"
else fail "the kernel's tile holds x's first values" "x: '$x_first'" "tile: '$t_first'"; fi
tmux_keys x
expect_screen "x: the same bytes in hex" '^ +0: [0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2} '
tmux_keys q
expect_exit "q after the end: exit 0" 0

echo "-- llm_decode to FINISHED: the KV cache's writes and the tensors' names in the memory pane"
tmux_start 200 60 "${UTF8[@]}" -- run -k llm_decode
expect_screen "llm_decode runs" ' (RUNNING|PAUSED|FINISHED) '
tmux_keys c
expect_screen "llm_decode runs to FINISHED" ' FINISHED ' 60
tmux_keys m
expect_screen "the weights named from the kernel's argument table" \
    'p0:0x0000000200 +\(2, 1, 32, 16\) +f32 +4\.00 KiB +MemoryWrite +[0-9.]+ us +wq'
# the cache's zero pattern was written before the run; the stores of each token's K and V
# rows landed on it since: its last writer is the last of them
expect_screen "kcache: last written by a dma_write, not its zero pattern" \
    'p0:0x0000005a00 +\(2, 1, 8, 16\) +f32 +1\.00 KiB +dma_write +[0-9.]+ us +kcache'
expect_screen "vcache likewise" 'p0:0x0000005e00 +\(2, 1, 8, 16\) +f32 +1\.00 KiB +dma_write +.* vcache'
expect_no_screen "no cache left as its zero pattern" '(kcache|vcache).*pattern zero|pattern zero.*(kcache|vcache)'
# down the list to kcache: its values, row by row (a busy machine may lag behind the keys)
for _ in $(seq 1 14); do
    tmux_keys Enter
    tmux_wait '^ kcache hbm ' 2 && break
    tmux_keys Escape j
done
expect_screen "kcache's values: the stored rows are pending results of a timing run" \
    '^ kcache hbm p0:0x0000005a00 \(2, 1, 8, 16\) f32 1\.00 KiB, written by dma_write at [0-9.]+ us; pend: '
expect_screen "its cells say pend" '^\[ +0\] +pend +pend'
tmux_keys q
expect_exit "q: exit 0" 0
run "$NPUSCOPE" validate "$TMP/va.json"
expect_status "the trace of the TUI run validates" 0
if grep -q '"incomplete":false' "$TMP/va.json"; then ok "a finished run's trace is complete"
else fail "a finished run's trace is complete"; fi

echo "-- a breakpoint on a component"
tmux_start 140 40 "${UTF8[@]}" -- run --paused -k vector_add:pes=2
expect_screen "paused" ' PAUSED '
tmux_keys B
expect_screen "breakpoint prompt" 'break on \(c GLOB, o NAME, m NAME, hbm\.util > 0\.9\): '
tmux_keys 'c sip0.cube0.pe1.*' Enter
expect_screen "breakpoint added" 'breakpoint 1: an op starts on sip0\.cube0\.pe1\.\*'
tmux_keys Space
expect_screen "the breakpoint pauses the run" 'breakpoint 1: dma_read starts on sip0\.cube0\.pe1\.pe_dma'
expect_screen "PAUSED there" ' PAUSED +now'
expect_screen "its op is selected: the details show it" 'sip0\.cube0\.pe1\.pe_dma'
expect_screen "the details name the op" 'dma_read'
tmux_keys X
expect_screen "X lists the breakpoints" 'an op starts on sip0\.cube0\.pe1\.\*, hit 1 time'
tmux_keys d
expect_screen "d removes it" 'breakpoint 1 removed'
tmux_keys Escape c
expect_screen "no breakpoint left: to the end" ' FINISHED '
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- run until a time, at 80x24"
tmux_start 80 24 "${UTF8[@]}" -- run --paused -k vector_add
expect_screen "80x24: mode, time and events in the header" ' PAUSED +now 0 \(0 ns\) +events: 0'
tmux_keys u
expect_screen "run-until prompt" 'run until \(cycles, 12us, \+N\): '
tmux_keys 9us Enter
expect_screen "u stops at the time" 'reached 9\.00 us'
expect_screen "paused at or before 9000 cycles" ' PAUSED +now (8[0-9]{3}|9000) '
tmux_keys q
expect_exit "q at 80x24: exit 0" 0

echo "-- q before the end writes the trace up to now, marked incomplete"
tmux_start 120 32 "${UTF8[@]}" -- run --paused -k vector_add:pes=8,n=4194304 -o "$TMP/early.json"
expect_screen "paused" ' PAUSED '
tmux_keys '{' '{' '{' Space
expect_screen "running slowly" ' LIVE '
tmux_wait 'events: [1-9]' 5
tmux_keys w
expect_screen "w writes the trace as it stands" 'trace written to .*early\.json \(up to now, marked incomplete\)'
tmux_keys q
expect_exit "q mid-run: exit 0" 0
run "$NPUSCOPE" validate "$TMP/early.json"
expect_status "the early trace validates" 0
if grep -q '"incomplete":true' "$TMP/early.json"; then ok "marked incomplete in run_metadata"
else fail "marked incomplete in run_metadata"; fi
left=$(ls -A "$TMP" | grep -c '\.tmp\.' || true)
if [ "$left" -eq 0 ]; then ok "no temporary file left"; else fail "no temporary file left"; fi

echo "-- no arguments: the demo workload in the TUI; --chrome at the end"
tmux_start 100 30 "${UTF8[@]}" --
expect_screen "npuscope alone runs the demo live, at a pace a person can watch" \
    ' LIVE +now [0-9]+ .*speed 1000 ev/s +the demo workload'
tmux_keys '}' '}'
expect_screen "faster, the demo finishes" ' FINISHED +now [0-9]+ .*the demo workload'
tmux_keys q
expect_exit "q: exit 0" 0
tmux_start 100 30 "${UTF8[@]}" -- run -k vector_add --chrome "$TMP/c.json"
expect_screen "FINISHED" ' FINISHED '
tmux_keys q
expect_exit "q: exit 0" 0
if [ -s "$TMP/c.json" ] && grep -q '"traceEvents"' "$TMP/c.json"; then ok "--chrome written at exit"
else fail "--chrome written at exit"; fi

echo "-- an op in flight: a TileToken stage's details from its start"
# S until the status line says REGEX (at most 60 times); 0 when it did
step_ops_until() {
    local i j prev
    for ((i = 0; i < 60; i++)); do
        tmux_screen
        tmux_keys S
        tmux_wait_change 5 || true
        # a step may be drawn in stages (the key answered before the work): let it settle
        prev= j=0
        while [ "$SCREEN" != "$prev" ] && [ $((j++)) -lt 25 ]; do
            prev=$SCREEN
            sleep 0.2
            tmux_screen
        done
        if grep -qE -- "$1" <<<"$SCREEN"; then return 0; fi
    done
    return 1
}
tmux_start 170 46 "${UTF8[@]}" -- run --paused -k gemm_explicit
expect_screen "paused" ' PAUSED +now 0 '
if step_ops_until 'op starts: TileToken/DMA_READ on '; then ok "S reaches a TileToken/DMA_READ that starts"
else fail "S reaches a TileToken/DMA_READ that starts" "$SCREEN"; fi
expect_screen "in flight: the record's kind and the stage's work" \
    '│ kind +unknown \(TileToken stage DMA_READ: memory\), engine DMA [0-9]+, in flight'
expect_screen "in flight: the stage type" '│ +stage_type: DMA_READ'
expect_screen "in flight: the stage's params" '│ +src_space: hbm'
expect_no_screen "in flight: not 'no details'" 'no details'
tmux_keys Tab Tab NPage # to the details pane (Gantt, summary, details), a page down
expect_screen "in flight, scrolled: every param known at the start" '│ +handle_id: sip0\.'
expect_screen "in flight, scrolled: its size" '│ +nbytes: [0-9]+'
if step_ops_until 'op ends: TileToken/DMA_READ on '; then ok "S reaches the end of a TileToken/DMA_READ"
else fail "S reaches the end of a TileToken/DMA_READ" "$SCREEN"; fi
expect_screen "finished: the same kind line" \
    '│ kind +unknown \(TileToken stage DMA_READ: memory\), engine DMA [0-9]+ *$'
expect_screen "finished: the stage type" '│ +stage_type: DMA_READ'
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- run --speed: the pace a run starts at; the keys step from it"
tmux_start 120 30 "${UTF8[@]}" -- run --speed 250 -k llm_decode
expect_screen "--speed 250: LIVE at 250 events a second" ' LIVE +now .*speed 250 ev/s'
# the pace between two readings two seconds apart (not from the start: a loaded machine may
# take a while to draw the first frames)
n0=$(events)
sleep 2
n1=$(events)
n=$(( ${n1:-0} - ${n0:-0} ))
if [ -n "$n0" ] && [ -n "$n1" ] && [ "$n" -ge 200 ] && [ "$n" -le 1200 ]; then
    ok "--speed 250: about 250 events in a second ($n in 2 s)"
else fail "--speed 250: about 250 events in a second" "events: '$n0' then '$n1' two seconds later"; fi
tmux_keys '}'
expect_screen "} from 250: the next step, 1000" 'speed: 1000 ev/s'
tmux_keys '{' '{'
expect_screen "{ twice from 1000: 10" 'speed: 10 ev/s'
tmux_keys q
expect_exit "q: exit 0" 0
tmux_start 120 30 "${UTF8[@]}" -- run --speed max --paused -k vector_add
expect_screen "--speed max: paused, no pace in the header" ' PAUSED +now'
expect_no_screen "--speed max: no speed shown" 'speed [0-9]+ ev/s'
tmux_keys '{'
expect_screen "{ from max: the fastest step" 'speed: 100000 ev/s'
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- --verify: the verdict in the header, the report after the UI"
tmux_start 140 30 "${UTF8[@]}" -- run --verify -k vector_add
expect_screen "PASS in the header" ' FINISHED .*verify: PASS, 1 of 1 output agree'
tmux_keys q
expect_screen "the report after the UI" '^verify: PASS$'
expect_exit "verified: exit 0" 0
tmux_start 140 30 "${UTF8[@]}" NPUSCOPE_TEST_CORRUPT_OP=2 -- run --verify -k vector_add
expect_screen "a mismatch: FAIL in the header" ' FINISHED .*verify: FAIL, 0 of 1 output agree'
tmux_keys q
expect_screen "the report names the first mismatch" 'FAIL: 1 of 4096 elements differ'
expect_exit "a mismatch: exit 1" 1

echo "-- following now"
tmux_start 120 32 "${UTF8[@]}" -- run --paused -k vector_add:pes=8,n=4194304
expect_screen "paused" ' PAUSED '
tmux_keys '{' '{' Space
expect_screen "running" ' LIVE '
tmux_keys + + + h
expect_screen "scrolled away: it says so" 'not following now \(L\)'
tmux_keys L
tmux_wait_not 'not following now' 5 && ok "L follows now again" ||
    fail "L follows now again" "$SCREEN"
tmux_keys q
expect_exit "q: exit 0" 0

finish
