#!/usr/bin/env bash
# Going back in the TUI (tmux): a long run (llm_decode) paused past 1 M and 10 M events,
# then p (one event back), timed from the key to the screen saying "reached backwards";
# the median of several, and the checkpoints' memory from the header.
set -u
"$1"
cd "$(dirname "$0")/../.."
command -v tmux >/dev/null || { echo "reverse: tmux missing, skipped"; exit 0; }
sock=npuscope-bench-$$
t() { tmux -L "$sock" "$@"; }
trap 't kill-server 2>/dev/null' EXIT
events() { t capture-pane -p | grep -m1 -oE 'events: [0-9]+' | tr -dc 0-9; }
for target in 1000000 10000000; do
    t kill-server 2>/dev/null
    sock=npuscope-bench-$$-$target # a server of its own: never race the last one's end
    t -f /dev/null new-session -d -x 240 -y 40 \
        "env LANG=C.UTF-8 TERM=xterm-256color ./npuscope run -k llm_decode:layers=32,gen=256; sleep 600"
    for ((i = 0; i < 1200; i++)); do
        e=$(events); [ -n "$e" ] && [ "$e" -ge "$target" ] && break; sleep 0.1
    done
    t send-keys ' '
    sleep 1
    times=()
    for r in 1 2 3 4 5; do
        before=$(events)
        s=$(date +%s%N)
        t send-keys p
        for ((i = 0; i < 400; i++)); do
            e=$(events)
            [ -n "$e" ] && [ "$e" -lt "$before" ] && t capture-pane -p | grep -q 'reached backwards' && break
            sleep 0.005
        done
        times+=($((($(date +%s%N) - s) / 1000000)))
    done
    med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
    hdr=$(t capture-pane -p | head -1)
    mem=$(grep -oE 'ckpt [0-9]+/[0-9]+( [0-9.]+ [KMG]iB)?' <<<"$hdr")
    echo "reverse: one event back at $(events) events: median ${med} ms (of ${times[*]}), $mem"
done
