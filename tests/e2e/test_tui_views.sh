#!/usr/bin/env bash
# The analysis panes in a real terminal (tmux), as a person drives them: y the layer
# breakdown, T the tokens, A the anomalies, each at 80x24 and 200x60, in colour, with
# NO_COLOR and on a vt100; Enter zooms the Gantt to a layer, n jumps to the planted slow
# op, and once the anomalies are closed walks the last search again (or says there is
# nothing to walk); a trace that records a failure is flagged in the header; a live run
# shows the panes as it grows. Every way out leaves the terminal as it was.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

V=$TESTS_DIR/data/traces/views.json
INVALID=$TESTS_DIR/data/traces/invalid_marker.json
U=(LANG=C.UTF-8 LC_ALL=C.UTF-8)

# expect_gone NAME REGEX: the screen comes to no longer match.
expect_gone() {
    if tmux_wait_not "$2" 15; then ok "$1"; else fail "$1" "screen still matches /$2/" "$SCREEN"; fi
}

screen_sgr() { tmux_cmd capture-pane -e -p -t 0; }
has_colour() { screen_sgr | grep -qE $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7]|10[0-7]|38|48)[;m]'; }

# drive SIZE TERMENV...: the three panes on views.json
drive() {
    local w=$1 h=$2; shift 2
    local what="${w}x$h $*"
    tmux_start "$w" "$h" "${U[@]}" "$@" -- view "$V"
    expect_screen "$what: running" 'POST-MORTEM'
    tmux_keys y
    expect_screen "$what: y shows the layers" '^(▶|>| )Layers +2 layers, by start up'
    expect_screen "$what: attn_0's busy cycles" '^ [▸>+] attn_0 .* 200 +300 +100 +60\.0%'
    expect_screen "$what: ffn_0's busy cycles" '^ [▸>+] ffn_0 .* 150 +100 +150 +40\.0%'
    tmux_keys j Enter
    expect_screen "$what: Enter zooms the Gantt to ffn_0" 'Gantt .*cyc/col +layer=ffn_0'
    expect_screen "$what: the cursor at the layer's start" 'cursor 600'
    expect_screen "$what: ffn_0 unfolds into its op names" '^ +add .* 150 +15\.0%'
    tmux_keys Escape
    expect_gone "$what: Esc clears the layer" 'layer=ffn_0'
    tmux_keys T
    expect_screen "$what: T shows the tokens" '^(▶|>| )Tokens +1 prefill, 2 decode'
    expect_screen "$what: a decode token's latency and bytes" '^ DECODE +1 +750 +250 +0 B +1\.00 KiB'
    # numbered as a user counts them: the first decode token is 0 (its token_index is 1)
    expect_screen "$what: tokens numbered from 0 in their phase" '^ phase +# +start'
    expect_screen "$what: the first decode token is #0" '^ DECODE +0 +600 +150 '
    # (TERM=vt100 shows ASCII only: the chart is drawn with _ . - = + * #)
    expect_screen "$what: the decode latency chart" '^ +250 +([▁▂▃▄▅▆▇]*█+|[_.=+*-]*#+)( +(│|\|).*)?$'
    tmux_keys A
    expect_screen "$what: A shows the anomalies" '^(▶|>| )Anomalies +1 \(1 slow op\)'
    expect_screen "$what: the planted op" '840 slow op +add on sip0\.cube0\.pe0\.pe_math'
    tmux_keys n
    expect_screen "$what: n jumps to it" 'cursor 840'
    expect_screen "$what: and says what it is" '^anomaly 1/1: add on sip0\.cube0\.pe0\.pe_math: 100 cycles, 10\.0x'
    # n and N follow the last thing walked: a search made with the anomalies open
    tmux_keys / a d d Enter
    expect_screen "$what: a search with the anomalies open" "^search 'add': [0-9]+ matches"
    tmux_keys n
    expect_screen "$what: n then walks the search's matches" "^search 'add': [0-9]+ matches"
    expect_no_screen "$what: not the anomalies" '^(anomaly 1/1|no anomalies)'
    tmux_keys N
    expect_screen "$what: N too" "^search 'add': [0-9]+ matches"
    tmux_keys Enter
    expect_screen "$what: Enter on the anomaly walks the anomalies again" '^anomaly 1/1: add on'
    tmux_keys n
    expect_screen "$what: and n follows it" '^anomaly 1/1: add on'
    tmux_keys A
    expect_screen "$what: A again gives the summary back" '^(▶|>| )Summary'
    tmux_keys n
    expect_screen "$what: the anomalies closed, n walks the last search again" \
        "^search 'add': [0-9]+ matches"
    expect_no_screen "$what: not the closed anomalies" '^anomaly 1/1'
    tmux_keys q
    expect_exit "$what: q exits 0, terminal restored" 0
}

echo "-- the panes at two sizes and three kinds of terminal"
for size in "80 24" "200 60"; do
    # shellcheck disable=SC2086
    drive $size TERM=xterm-256color
    if [ "$size" = "200 60" ]; then
        tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- view "$V"
        tmux_keys y
        expect_screen "200x60: every column" '^ layer +▲start +span +slowest +DMA +TE +VE +share +DRAM +ops'
        tmux_keys A
        expect_screen "200x60: the details beside the anomalies" '│ Details'
        tmux_keys n
        expect_screen "200x60: n walks the anomalies" '^anomaly 1/1: add on'
        tmux_keys A
        expect_screen "200x60: A closes them" '^(▶|>| )Summary'
        tmux_keys n
        expect_screen "200x60: then n, with no search, says there is nothing to walk" \
            '^nothing to walk: the anomalies pane is closed and there is no search \(/ starts one\)'
        tmux_keys q
        expect_exit "200x60: exit 0" 0
    fi
    # shellcheck disable=SC2086
    drive $size TERM=xterm-256color NO_COLOR=1
    tmux_start $size "${U[@]}" TERM=xterm-256color NO_COLOR=1 -- view "$V"
    tmux_keys y
    expect_screen "NO_COLOR $size: layers" '^(▶|>| )Layers'
    if has_colour; then fail "NO_COLOR $size: no colours"; else ok "NO_COLOR $size: no colours"; fi
    tmux_keys q
    expect_exit "NO_COLOR $size: exit 0" 0
    # shellcheck disable=SC2086
    drive $size TERM=vt100
    tmux_start $size "${U[@]}" TERM=vt100 -- view "$V"
    tmux_keys T
    expect_screen "vt100 $size: tokens" '^(▶|>| )Tokens'
    if has_colour; then fail "vt100 $size: monochrome"; else ok "vt100 $size: monochrome"; fi
    tmux_keys q
    expect_exit "vt100 $size: exit 0" 0
done

echo "-- an ASCII terminal"
tmux_start 100 30 LANG=C LC_ALL=C TERM=xterm -- view "$V"
tmux_keys y
expect_screen "ASCII: layers" '^(▶|>| )Layers +2 layers'
tmux_keys T
expect_screen "ASCII: the chart in ASCII" '^ +250 +[_.=+*-]*#+( +\|.*)?$'
if LC_ALL=C grep -q $'[\x80-\xff]' <<<"$SCREEN"; then fail "ASCII: only ASCII on screen" "$SCREEN"
else ok "ASCII: only ASCII on screen"; fi
tmux_keys q
expect_exit "ASCII: exit 0" 0

echo "-- a trace that records a failure"
for size in "80 24" "200 60"; do
    tmux_start $size "${U[@]}" TERM=xterm-256color -- view "$INVALID"
    title=$(tmux_format '#{pane_title}')
    expect_screen "invalid $size: the header says so" '^ ?(npuscope +)?POST-MORTEM +INVALID TRACE '
    tmux_keys A
    expect_screen "invalid $size: listed" '^(▶|>| )Anomalies +1 \(1 invalid\)'
    expect_screen "invalid $size: on the PE CPU" 'INVALID_TRACE on sip0\.cube0\.pe0\.pe_cpu: kernel'
    if [ "$size" = "200 60" ]; then
        tmux_keys n
        expect_screen "invalid $size: n shows it, its error escaped" \
            '^anomaly 1/1: INVALID_TRACE on sip0\.cube0\.pe0\.pe_cpu: kernel .broken. on sip0\.cube0\.pe0: \\e\]0;pwned\\x07tile 7 is out of range$'
    fi
    if [ "$(tmux_format '#{pane_title}')" = "$title" ]; then ok "invalid $size: pane title unchanged"
    else fail "invalid $size: pane title unchanged" "now '$(tmux_format '#{pane_title}')'"; fi
    tmux_keys q
    expect_exit "invalid $size: exit 0" 0
done
tmux_start 200 60 "${U[@]}" TERM=xterm-256color -- view "$INVALID"
expect_screen "invalid 200x60: the error in the header" 'INVALID TRACE +kernel .broken.'
tmux_keys q
expect_exit "invalid 200x60: exit 0" 0

echo "-- a live run"
for size in "80 24" "200 60"; do
    tmux_start $size "${U[@]}" TERM=vt100 NO_COLOR=1 -- run -k llm_decode
    expect_screen "live $size: runs" '(LIVE|FINISHED)'
    tmux_keys y
    expect_screen "live $size: layers" '^ [▸>+] layer1 '
    tmux_keys T
    expect_screen "live $size: tokens" '^ PREFILL +0 '
    tmux_keys A
    expect_screen "live $size: anomalies" '^(▶|>| )Anomalies '
    tmux_keys q
    expect_exit "live $size: exit 0" 0
done

finish
