#!/usr/bin/env bash
# The source pane in a real terminal (tmux): K on a saved trace shows the kernel's source
# with ops, cycles and share per line (z maximizes it), Enter highlights a line's ops on the Gantt and Esc
# clears it; on a live run it shows the built-in kernel's source with the per-PE marker
# of the line each PE issued from last. Every way out leaves the terminal as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"
cp "$TESTS_DIR/data/traces/srcsites.json" "$TESTS_DIR/data/traces/mykern.c" "$TMP/"
cd "$TMP" || exit 1
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)

tmux_start 140 40 "${U[@]}" -- view srcsites.json
expect_screen "view: running" 'POST-MORTEM'
tmux_keys K z
expect_screen "K shows the source pane" 'Source  mykern  mykern\.c  9 ops 435 cyc'
expect_screen "line 3 with its loads" ' 3  34\.5% +2 +150 +0 +0 +struct tl_tensor \*x = tl_load'
expect_screen "a malformed src shown as such" 'malformed src "nocolon"'
tmux_keys Enter z
expect_screen "Enter marks the line's ops on the Gantt" 'Gantt .*line=mykern\.c:3'
tmux_keys Escape
expect_no_screen "Esc clears the mark" 'line=mykern\.c:3'
tmux_keys q
expect_exit "q: exit 0, terminal restored" 0

tmux_start 160 45 "${U[@]}" -- run -k vector_add:n=8192
expect_screen "live: running" 'npuscope'
tmux_keys K z
expect_screen "live: the built-in kernel's source" 'Source  vector_add  vector_add\.c'
expect_screen "live: the x loads' line has its ops" '[0-9.]+% +[0-9]+ +[0-9]+ +0 +0 +struct tl_tensor \*tx = tl_load'
tmux_keys j j j
expect_screen "live: the PE's last line marked" '^>1 +[0-9]+ .*tl_store\(tl, tl_view\(tl, out'
tmux_keys q
expect_exit "live q: exit 0, terminal restored" 0
tmux_stop
finish
