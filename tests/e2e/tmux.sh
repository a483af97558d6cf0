# Helpers for driving the TUI in tmux, as a person would: each test gets a private tmux
# server (its own socket, no configuration), starts npuscope in a window of a given size,
# sends keys and reads the screen with capture-pane. Screens are polled with a timeout,
# never waited for with fixed sleeps: the machine may be slow. Source after lib.sh.
TMUX_BASE=npuscope-test-$$
TMUX_RUNS=0
TMUX_SOCK=$TMUX_BASE
SCREEN=""

trap 'tmux_stop; rm -rf "$TMP"' EXIT

tmux_cmd() { tmux -L "$TMUX_SOCK" "$@"; }

# tmux_start COLS ROWS ENV... -- ARGS...: run "env ENV... npuscope ARGS..." in a new
# session; when npuscope exits, the window prints "[exit N]" and stays.
tmux_start() {
    local w=$1 h=$2; shift 2
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local cmd
    cmd=$(printf '%q ' env "${envs[@]}" "$NPUSCOPE" "$@")
    tmux_stop
    TMUX_RUNS=$((TMUX_RUNS + 1)) # a fresh server each time: never race a dying one
    TMUX_SOCK=$TMUX_BASE-$TMUX_RUNS
    tmux -L "$TMUX_SOCK" -f /dev/null new-session -d -x "$w" -y "$h" \
        "$cmd; echo \"[exit \$?]\"; sleep 600"
    tmux_cmd set-option -g window-size manual >/dev/null 2>&1
}

tmux_stop() { tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1 || true; }

tmux_screen() { SCREEN=$(tmux_cmd capture-pane -p -t 0 2>/dev/null); }

# tmux_wait REGEX [SECONDS]: poll the screen until a line matches (grep -E); 1 on timeout.
tmux_wait() {
    local re=$1 limit=${2:-15} i
    for ((i = 0; i < limit * 20; i++)); do
        tmux_screen
        if grep -qE -- "$re" <<<"$SCREEN"; then return 0; fi
        sleep 0.05
    done
    return 1
}

# tmux_wait_not REGEX [SECONDS]: poll until no line matches.
tmux_wait_not() {
    local re=$1 limit=${2:-15} i
    for ((i = 0; i < limit * 20; i++)); do
        tmux_screen
        if ! grep -qE -- "$re" <<<"$SCREEN"; then return 0; fi
        sleep 0.05
    done
    return 1
}

# tmux_wait_change: poll until the screen differs from $SCREEN.
tmux_wait_change() {
    local before=$SCREEN limit=${1:-15} i
    for ((i = 0; i < limit * 20; i++)); do
        tmux_screen
        [ "$SCREEN" != "$before" ] && return 0
        sleep 0.05
    done
    return 1
}

tmux_keys() { tmux_cmd send-keys -t 0 "$@"; }

# tmux_resize COLS ROWS
tmux_resize() { tmux_cmd resize-window -t 0 -x "$1" -y "$2"; }

# tmux_format FORMAT: a tmux format of the pane, e.g. '#{pane_title}'.
tmux_format() { tmux_cmd display-message -p -t 0 "$1"; }

# expect_screen NAME REGEX [SECONDS]: the screen comes to match.
expect_screen() {
    if tmux_wait "$2" "${3:-15}"; then ok "$1"; else
        fail "$1" "screen never matched /$2/" "screen:" "$SCREEN"; fi
}

# expect_no_screen NAME REGEX [SECONDS]: the screen does not match, or comes not to within
# SECONDS (default 5): the effect of a key just sent may take a frame to show.
expect_no_screen() {
    local i
    for ((i = 0; i < ${3:-5} * 20; i++)); do
        tmux_screen
        if ! grep -qE -- "$2" <<<"$SCREEN"; then ok "$1"; return; fi
        sleep 0.05
    done
    fail "$1" "screen matches /$2/" "screen:" "$SCREEN"
}

# expect_exit NAME STATUS: npuscope ended with STATUS and the terminal is back to normal
# (no alternate screen, cursor shown, no mouse reporting, keypad mode off).
expect_exit() {
    if ! tmux_wait '^\[exit [0-9]+\]' 15; then
        fail "$1" "npuscope did not exit" "screen:" "$SCREEN"
        return
    fi
    local got
    got=$(grep -oE '^\[exit [0-9]+\]' <<<"$SCREEN" | tail -1 | tr -dc 0-9)
    if [ "$got" -ne "$2" ]; then fail "$1" "expected exit $2, got $got" "screen:" "$SCREEN"; return; fi
    local modes
    modes=$(tmux_format '#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{keypad_flag}')
    if [ "$modes" = "0 1 0 0" ]; then ok "$1"; else
        fail "$1" "terminal not restored: alternate cursor mouse keypad = $modes"; fi
}

# The pid of npuscope: the child of the pane's shell.
app_pid() {
    local sh
    sh=$(tmux_format '#{pane_pid}')
    awk '{print $1}' "/proc/$sh/task/$sh/children" 2>/dev/null
}

# gone_within NAME PID MS: the process PID ends within MS milliseconds of now.
gone_within() {
    local start now
    start=$(date +%s%N)
    while kill -0 "$2" 2>/dev/null; do
        now=$(date +%s%N)
        if [ $(((now - start) / 1000000)) -gt "$3" ]; then
            fail "$1" "still running after $3 ms"
            return
        fi
        sleep 0.01
    done
    now=$(date +%s%N)
    ok "$1 ($(((now - start) / 1000000)) ms)"
}
