#!/usr/bin/env bash
# Stepping through a kernel's source in a real terminal (tmux): J runs the selected PE's
# kernel to its next tl call on another line, live and on a saved trace, and the source
# pane's marker of that PE ('*') moves to the line; line breakpoints (B vector_add.c:47,
# with pe=N) stop at the call the line issues (the details pane names it), R goes back to
# the previous hit, and a file:line that cannot match is refused with the reason. Attached
# to a served run: the source pane has the call sites, J and line breakpoints work.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"
cd "$TMP" || exit 1
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)
# vector_add.c: line 45 loads x, 46 loads y, 47 adds, 48 stores, in a loop over tiles
L45='struct tl_tensor \*tx = tl_load'
L46='struct tl_tensor \*ty = tl_load'
L47='struct tl_tensor \*sum = tl_add'
L48='tl_store\(tl, tl_view\(tl, out'

echo "-- live: J steps line by line, the PE's marker follows"
tmux_start 160 45 "${U[@]}" -- run --paused -k vector_add:n=16384,pes=2
expect_screen "paused before the first event" 'events: 0 '
tmux_keys K z
tmux_keys J
expect_screen "J with nothing selected: the first call of any PE" \
    'sip0\.cube0\.pe[01] at vector_add\.c:45: dma_read on sip0\.cube0\.pe[01]\.pe_dma'
expect_screen "its PE's marker on line 45" "^\*1 +45 .*$L45"
pe=$(grep -oE 'sip0\.cube0\.pe[01] at' <<<"$SCREEN" | head -1 | cut -d' ' -f1)
tmux_keys J
expect_screen "J: the same PE at line 46" "$pe at vector_add\.c:46: dma_read"
expect_screen "the marker moved to line 46" "^\*1 +46 .*$L46"
expect_no_screen "and left line 45" "^\*1 +45 "
tmux_keys J
expect_screen "J: line 47 on the MATH engine" "$pe at vector_add\.c:47: add on $pe\.pe_math"
expect_screen "the marker on line 47" "^\*1 +47 .*$L47"
tmux_keys J
expect_screen "J: line 48 stores" "$pe at vector_add\.c:48: dma_write"
tmux_keys J
expect_screen "J: the next tile loads x again" "$pe at vector_add\.c:45: dma_read"
expect_screen "the marker back on line 45" "^\*1 +45 .*$L45"
tmux_keys c
expect_screen "c runs to the end" 'FINISHED'
tmux_keys q
expect_exit "q: exit 0, terminal restored" 0

echo "-- a saved trace: J walks the selected PE's ops line by line"
run "$NPUSCOPE" run --headless -k vector_add:n=8192 -o va.json
expect_status "headless run writes the trace" 0
tmux_start 160 45 "${U[@]}" -- view va.json
expect_screen "view: running" 'POST-MORTEM'
tmux_keys K z J
expect_screen "J: the first call of the kernel" \
    'sip0\.cube0\.pe0 at vector_add\.c:45: dma_read on sip0\.cube0\.pe0\.pe_dma \(op [0-9]+ of the trace\)'
expect_screen "the PE's marker at the cursor's line" "^\*1 +45 .*$L45"
tmux_keys J
expect_screen "J: line 46" 'sip0\.cube0\.pe0 at vector_add\.c:46: dma_read'
expect_screen "the marker on line 46" "^\*1 +46 .*$L46"
tmux_keys J J
expect_screen "J J: line 48" 'sip0\.cube0\.pe0 at vector_add\.c:48: dma_write'
expect_screen "the marker on line 48" "^\*1 +48 .*$L48"
tmux_keys q
expect_exit "view q: exit 0" 0
echo "-- line breakpoints: refused when they cannot match, stop at the line's call, R goes back"
tmux_start 160 60 "${U[@]}" -- run --paused -k vector_add:n=16384,pes=2
expect_screen "paused before the first event" 'events: 0 '
tmux_keys B; tmux_keys -l 'vector_ad.c:47'; tmux_keys Enter
expect_screen "a file of no kernel: refused, with the reason" \
    'vector_ad\.c is not a kernel source of this run'
tmux_keys B; tmux_keys -l 'vector_add.c:200'; tmux_keys Enter
expect_screen "a line past the end: refused" 'vector_add\.c has [0-9]+ lines: there is no line 200'
tmux_keys B; tmux_keys -l 'vector_add.c:44'; tmux_keys Enter
expect_screen "a line with no call issuing ops: refused, the lines that do named" \
    'line 44 of vector_add\.c makes no tl call that issues ops \(lines that do: 45, 46, 47, 48\)'
tmux_keys B; tmux_keys -l 'vector_add.c:47 pe=1'; tmux_keys Enter
expect_screen "B FILE:LINE pe=N is set" 'breakpoint 1: line vector_add\.c:47 pe=1 issues an op'
tmux_keys c
expect_screen "it stops at the line's call on that PE" \
    'PAUSED .*breakpoint 1: vector_add\.c:47 issues add on sip0\.cube0\.pe1\.pe_math'
first=$(grep -oE 'events: [0-9]+' <<<"$SCREEN" | head -1)
tmux_keys Tab Tab z
expect_screen "the details pane names the op's call site" 'src: +vector_add\.c:47'
expect_screen "and its function" 'src_func: +vector_add'
tmux_keys z
tmux_keys c
tmux_wait_not "$first " 10
expect_screen "c: stopped again at the next tile's add on pe1" 'PAUSED .*breakpoint 1: vector_add\.c:47 issues add on sip0\.cube0\.pe1'
tmux_keys R
expect_screen "R: back at the previous hit" "$first \(reached backwards\)"
expect_screen "the status line says which" 'back at breakpoint 1: vector_add\.c:47 issues add on sip0\.cube0\.pe1\.pe_math'
tmux_keys q
expect_exit "q: exit 0" 0

echo "-- B FILE:LINE without pe= stops at any PE's call"
tmux_start 160 45 "${U[@]}" -- run --paused -k vector_add:n=16384,pes=2
expect_screen "paused before the first event" 'events: 0 '
tmux_keys B; tmux_keys -l 'vector_add.c:48'; tmux_keys Enter
tmux_keys c
expect_screen "any PE's store stops it" \
    'breakpoint 1: vector_add\.c:48 issues dma_write on sip0\.cube0\.pe[01]\.pe_dma'
tmux_keys q
expect_exit "q: exit 0" 0
echo "-- attached to a served run: the source pane, J and a line breakpoint"
export XDG_RUNTIME_DIR="$TMP/xdg" TMPDIR="$TMP/tmp"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$TMPDIR"
"$NPUSCOPE" run --headless --listen --paused -k vector_add:n=16384,pes=2 >"$TMP/s.out" 2>"$TMP/s.err" &
served=$!
for ((i = 0; i < 200; i++)); do grep -q 'serving run' "$TMP/s.err" 2>/dev/null && break; sleep 0.05; done
runid=$(grep -oE 'serving run [^ ]+' "$TMP/s.err" | awk '{print $3}')
tmux_start 160 60 "${U[@]}" -- attach "${runid##*-}"
expect_screen "attached, paused" 'PAUSED +now 0 '
tmux_keys K z J
expect_screen "J over the socket: the first call of a PE" \
    'sip0\.cube0\.pe[01] at vector_add\.c:45: dma_read on sip0\.cube0\.pe[01]\.pe_dma'
expect_screen "the source pane has the call sites: the line's ops and the PE's marker" \
    "^\*1 +45 +[0-9.]+% +1 +[0-9]+ +0 +0 .*$L45"
pe=$(grep -oE 'sip0\.cube0\.pe[01] at' <<<"$SCREEN" | head -1 | cut -d' ' -f1)
tmux_keys J
expect_screen "J again: line 46" "$pe at vector_add\.c:46: dma_read"
expect_screen "the marker moved over the socket" "^\*1 +46 .*$L46"
tmux_keys z
tmux_keys B; tmux_keys -l 'vector_add.c:44'; tmux_keys Enter
expect_screen "a line that cannot match, refused by the run" 'line 44 of vector_add\.c makes no tl call'
tmux_keys B; tmux_keys -l 'vector_add.c:47 pe=1'; tmux_keys Enter
expect_screen "a line breakpoint set over the socket" 'breakpoint 1: line vector_add\.c:47 pe=1'
tmux_keys c
expect_screen "it stops the served run at the line's call" \
    'PAUSED .*breakpoint 1: vector_add\.c:47 issues add on sip0\.cube0\.pe1\.pe_math'
tmux_keys Tab z # from the source pane, Tab focuses the details
expect_screen "the details pane names the call site" 'src: +vector_add\.c:47'
tmux_keys q
expect_exit "q detaches: exit 0" 0
kill "$served" 2>/dev/null
wait "$served" 2>/dev/null
tmux_stop
finish
