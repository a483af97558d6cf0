#!/usr/bin/env bash
# npuscope view across terminals and hostile input: xterm, xterm-256color, screen,
# tmux-256color, vt100 (monochrome), NO_COLOR, an ASCII locale; a terminal that cannot run
# it; a trace whose strings try to retitle the terminal or write the clipboard; signals;
# themes. Every way out must leave the terminal as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

SPEC=$TESTS_DIR/data/traces/spec_example.json
HOSTILE=$TESTS_DIR/data/tui/hostile.json
GEN=$TMP/gen.json
awk -v PES=2 -v N=20 -f "$TESTS_DIR/data/tui/gen_trace.awk" >"$GEN"
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)

# The screen with its attributes, as escape sequences.
screen_sgr() { tmux_cmd capture-pane -e -p -t 0; }
# True when the screen uses colours (SGR 30-37, 40-47, 90-97, 38;5 / 48;5 ...).
has_colour() { screen_sgr | grep -qE $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7]|10[0-7]|38|48)[;m]'; }

echo "-- terminal types"
for term in xterm xterm-256color screen tmux-256color vt100; do
    tmux_start 80 24 "${U[@]}" TERM=$term -- view "$SPEC"
    expect_screen "$term: header" 'POST-MORTEM +spec_example\.json'
    # vt100 shows ASCII only, whatever the locale: its rows are drawn with '|'
    if [ "$term" = vt100 ]; then expect_screen "$term: rows, in ASCII" '^ TE 0 +\|'
    else expect_screen "$term: rows" '^ TE 0 +│'; fi
    case $term in
    vt100) if has_colour; then fail "vt100: monochrome" "colour codes on screen"; else
        ok "vt100: monochrome"; fi ;;
    *) if has_colour; then ok "$term: colours"; else fail "$term: colours" "no colour codes"; fi ;;
    esac
    if [ "$term" = xterm ]; then
        if screen_sgr | grep -qE $'\e\\[[0-9;]*38;5;'; then
            fail "xterm: 8 colours, no 256-colour codes"; else ok "xterm: 8 colours, no 256-colour codes"; fi
    fi
    tmux_keys q
    expect_exit "$term: q exits 0, terminal restored" 0
done

echo "-- NO_COLOR"
tmux_start 80 24 "${U[@]}" TERM=xterm-256color NO_COLOR=1 -- view "$SPEC"
expect_screen "NO_COLOR: runs" 'POST-MORTEM'
if has_colour; then fail "NO_COLOR: no colours" "$(screen_sgr | head -3 | cat -v)"; else
    ok "NO_COLOR: no colours"; fi
if screen_sgr | grep -q $'\e\\[[0-9;]*7[;m]'; then ok "NO_COLOR: reverse video instead"; else
    fail "NO_COLOR: reverse video instead"; fi
tmux_keys q
expect_exit "NO_COLOR: exit 0" 0

echo "-- an ASCII locale"
tmux_start 80 24 LANG=C LC_ALL=C TERM=xterm -- view "$GEN"
expect_screen "ASCII: rows" '^- sip0\.cube0'
expect_screen "ASCII: bars in ASCII" '^ +pe_dma +\|[ #=.:+-]+'
if LC_ALL=C grep -q $'[\x80-\xff]' <<<"$SCREEN"; then fail "ASCII: only ASCII on screen" "$SCREEN"
else ok "ASCII: only ASCII on screen"; fi
tmux_keys q
expect_exit "ASCII: exit 0" 0

echo "-- terminals that cannot run it"
tmux_start 80 24 "${U[@]}" TERM=dumb -- view "$SPEC"
expect_screen "TERM=dumb: a polite message" "npuscope view: TERM=dumb cannot move the cursor"
expect_exit "TERM=dumb: exit 2" 2
tmux_start 80 24 "${U[@]}" TERM=no-such-terminal -- view "$SPEC"
expect_screen "unknown TERM: a message" "unknown terminal type TERM=no-such-terminal"
expect_exit "unknown TERM: exit 2" 2
run env TERM=xterm "$NPUSCOPE" view "$SPEC"
expect_status "not a terminal: exit 2" 2
expect_err "not a terminal: says so" "needs a terminal"
expect_one_line "not a terminal: one line"

echo "-- files that are not traces"
tmux_start 80 24 "${U[@]}" TERM=xterm -- view "$TMP/missing.json"
expect_screen "missing file: message" "npuscope view: .*missing\.json: "
expect_exit "missing file: exit 2" 2
printf '{"version": "1.0", "timeline_events": [' >"$TMP/cut.json"
tmux_start 80 24 "${U[@]}" TERM=xterm -- view "$TMP/cut.json"
expect_screen "truncated trace: message with a position" "cut\.json:1:[0-9]+: "
expect_exit "truncated trace: exit 2" 2

echo "-- a hostile trace"
evil="$TMP/"$'\e]0;pwned-file\a'".json"
cp "$HOSTILE" "$evil"
tmux_start 100 40 "${U[@]}" TERM=xterm-256color -- view "$evil"
tmux_cmd set-option -g set-clipboard on
title=$(tmux_format '#{pane_title}')
expect_screen "hostile: shown" 'POST-MORTEM'
expect_screen "hostile: file name escaped" '\\e\]0;pwned-file\\x07\.json'
expect_screen "hostile: run id escaped" '\\e\]0;pwned-run\\x07'
expect_screen "hostile: component escaped" '\\e\]52;c;cHduZWQ=\\x07'
expect_screen "hostile: op name escaped" '\\e\]0;pwned\\x07'
expect_screen "hostile: marker escaped" '\\e\]0;pwned-marker'
tmux_keys Enter # the op under the cursor on the first row, in the details pane
expect_screen "hostile: details key with a carriage return" 'note\\r: '
expect_screen "hostile: details value" '\\e\]0;pwned-details\\x07'
expect_screen "hostile: bidi override escaped" '\\u202egpj\.exe'
expect_screen "hostile: C1 control escaped" '\\x9b31m'
expect_screen "hostile: zero-width escaped" 'a\\u200bb'
expect_screen "hostile: invalid UTF-8 replaced" 'x��y'
tmux_keys j
expect_screen "hostile: CR in an op name escaped" 'ok\\rEVIL\\e\[31mred'
if [ "$(tmux_format '#{pane_title}')" = "$title" ]; then ok "hostile: pane title unchanged"; else
    fail "hostile: pane title unchanged" "was '$title', now '$(tmux_format '#{pane_title}')'"; fi
if [ -z "$(tmux_cmd list-buffers)" ]; then ok "hostile: nothing reached the clipboard"; else
    fail "hostile: nothing reached the clipboard" "$(tmux_cmd list-buffers)"; fi
tmux_keys q
expect_exit "hostile: exit 0" 0
if [ "$(tmux_format '#{pane_title}')" = "$title" ]; then ok "hostile: title unchanged after exit"
else fail "hostile: title unchanged after exit"; fi

echo "-- signals"
# the pid of npuscope: the child of the pane's shell
app_pid() {
    local sh
    sh=$(tmux_format '#{pane_pid}')
    cat "/proc/$sh/task/$sh/children" 2>/dev/null | awk '{print $1}'
}
for sig in TERM HUP; do
    tmux_start 80 24 "${U[@]}" TERM=xterm-256color -- view "$SPEC"
    expect_screen "SIG$sig: running" 'POST-MORTEM'
    kill -s "$sig" "$(app_pid)"
    expect_exit "SIG$sig: exit 128+n, terminal restored" $((128 + $(kill -l "$sig")))
done
tmux_start 80 24 "${U[@]}" TERM=xterm-256color -- view "$SPEC"
expect_screen "Ctrl-C: running" 'POST-MORTEM'
tmux_keys C-c
expect_exit "Ctrl-C: exit 130, terminal restored" 130

echo "-- themes"
run "$NPUSCOPE" view --theme no-such-theme "$SPEC"
expect_status "unknown theme: exit 2" 2
expect_err "unknown theme: names the themes there are" \
    "^npuscope view: no theme named 'no-such-theme' \(themes: default, light, high-contrast, mono\)$"
run "$NPUSCOPE" attach --theme no-such-theme no-such-run
expect_status "attach, unknown theme: exit 2" 2
expect_err "attach, unknown theme: the same message, before looking for the run" \
    "^npuscope attach: no theme named 'no-such-theme' \(themes: default, light, high-contrast, mono\)$"
expect_one_line "attach, unknown theme: one line"
tmux_start 80 24 "${U[@]}" TERM=xterm-256color -- view --theme light "$SPEC"
expect_screen "--theme light: runs" 'POST-MORTEM'
tmux_keys t
expect_screen "t: next theme" 'theme: high-contrast'
tmux_keys t
expect_screen "t: next theme again" 'theme: mono'
if has_colour; then fail "mono theme: no colours"; else ok "mono theme: no colours"; fi
tmux_keys t
expect_screen "t: cycles back" 'theme: default'
tmux_keys q
expect_exit "themes: exit 0" 0
mkdir -p "$TMP/cfg/npuscope/themes"
printf 'header: {fg: pnik}\n' >"$TMP/cfg/npuscope/themes/broken.yaml"
printf 'header: {fg: black, bg: "#ff0000"}\n' >"$TMP/cfg/npuscope/themes/mine.yaml"
tmux_start 160 24 "${U[@]}" TERM=xterm-256color XDG_CONFIG_HOME="$TMP/cfg" -- view --theme broken "$SPEC"
expect_screen "a broken theme: said in the status line" \
    "theme: .*broken\.yaml:1:14: key 'header\.fg': unknown colour 'pnik'"
expect_screen "a broken theme: the viewer still runs" '^ TE 0 +│'
tmux_keys q
expect_exit "broken theme: exit 0" 0
tmux_start 100 24 "${U[@]}" TERM=xterm-256color XDG_CONFIG_HOME="$TMP/cfg" -- view --theme mine "$SPEC"
expect_screen "a user's theme: runs" 'POST-MORTEM'
if screen_sgr | grep -q $'\e\\[[0-9;]*48;5;196[;m]'; then ok "a user's theme: its red header"; else
    fail "a user's theme: its red header" "$(screen_sgr | head -1 | cat -v)"; fi
tmux_keys q
expect_exit "user theme: exit 0" 0

finish
