#!/usr/bin/env bash
# The layout of the sources stays as sim/README.md, trace/README.md and tui/README.md draw it. Fails, one line per problem:
#   (a) a .c file under sim/, trace/ or tui/ longer than 1500 lines;
#   (b) two objects of the library that use each other's global symbols (from nm);
#   (c) a cycle of #includes among the project's headers;
#   (d) an #include against the order of the layers: a subfolder of sim/, trace/ or tui/
#       including a header of a subfolder above it in its layer's drawing, sim/ including
#       trace/ or tui/, trace/ including tui/, and curses anywhere but tui/;
#   (e) a folder of sim/, trace/ or tui/ with more than 15 .c files.
# Usage: tests/layout/check.sh [BUILD] (default build/: BUILD/libnpuscope.a must be built).
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
lib=$build/libnpuscope.a
MAX_LINES=1500

# The layers of sim/, lowest first: a subfolder may include headers of its own layer and
# of the layers before it. sim/kernels/ (the built-in kernels) is the kernel layer's.
SIM_LAYERS="util engine data chip program kernel:kernels host phase2"
# trace/ (trace/README.md): the model and the format's vocabulary, the measures, the verdict's
# findings, the files, the live feed, comparisons, the wire protocol of served runs.
TRACE_LAYERS="model analysis verdict file cache live diff wire"
# tui/ (tui/README.md): the terminal, the sweep engines, the data sources, the panes, the
# Gantt, the app, the commands.
TUI_LAYERS="term sweep source panes gantt app cli"
MAX_FILES=15

problems=0
problem() {
    echo "layout: $*"
    problems=$((problems + 1))
}

sources() { # the project's C sources and headers under the given folders
    find "$@" \( -name '*.c' -o -name '*.h' \) -type f 2>/dev/null | LC_ALL=C sort
}

# ---- (a) file length ---------------------------------------------------------------------
while read -r f; do
    [ "${f%.c}" != "$f" ] || continue
    n=$(wc -l <"$f")
    [ "$n" -le "$MAX_LINES" ] || problem "$f: $n lines, more than $MAX_LINES (split it along its seams)"
done < <(sources sim trace tui)

# ---- (b) objects that use each other ------------------------------------------------------
if [ ! -f "$lib" ]; then
    problem "$lib: not built (make $lib)"
else
    # Name each member by its source when exactly one source of the tree builds an object
    # of that name, else by its name and its rank among the members of that name.
    mapfile -t members < <(ar t "$lib")
    declare -A seen=()
    labels=()
    for m in "${members[@]}"; do
        seen[$m]=$((${seen[$m]:-0} + 1))
        mapfile -t found < <(find sim trace tui -name "${m%.o}.[cS]" -type f 2>/dev/null)
        if [ "${#found[@]}" -eq 1 ]; then
            labels+=("${found[0]}")
        else
            labels+=("$m#${seen[$m]}")
        fi
    done
    pairs=$(nm "$lib" 2>/dev/null | awk -v labels="${labels[*]}" '
        BEGIN { nl = split(labels, label, " ") }
        /^$/ { next }
        /^[^ ]+\.o:$/ { cur = label[++k]; next }
        NF == 2 && $1 == "U" { nu[cur]++; und[cur, nu[cur]] = $2; next }
        NF == 3 && $2 ~ /^[A-TV-Z]$/ { def[$3] = cur; next }
        END {
            for (i = 1; i <= nl; i++) {
                a = label[i]
                for (j = 1; j <= nu[a]; j++) {
                    s = und[a, j]; b = def[s]
                    if (b != "" && b != a && !((a, b, s) in got)) {
                        got[a, b, s] = 1
                        uses[a, b] = uses[a, b] " " s
                    }
                }
            }
            for (k2 in uses) {
                split(k2, p, SUBSEP)
                if (p[1] < p[2] && ((p[2], p[1]) in uses))
                    printf "%s and %s use each other: %s uses%s; %s uses%s\n",
                           p[1], p[2], p[1], uses[p[1], p[2]], p[2], uses[p[2], p[1]]
            }
        }' | LC_ALL=C sort)
    while IFS= read -r l; do
        [ -n "$l" ] && problem "$l"
    done <<<"$pairs"
fi

# ---- the #include graph: "FILE INCLUDED" per quoted include, resolved like the compiler
# (from the including file's folder, then from the root: -I.) ----------------------------
includes() {
    local f dir inc
    while read -r f; do
        dir=$(dirname "$f")
        while read -r inc; do
            if [ -f "$dir/$inc" ]; then
                echo "$f $dir/$inc"
            elif [ -f "$inc" ]; then
                echo "$f $inc"
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done < <(sources sim trace tui tests)
}
graph=$(includes)

# ---- (c) header include cycles ------------------------------------------------------------
cycles=$(awk '
    $1 ~ /\.h$/ { n[$1]++; adj[$1, n[$1]] = $2; node[$1] = 1; node[$2] = 1 }
    function visit(h,    i, j, c) {
        state[h] = 1
        stack[++depth] = h
        for (i = 1; i <= n[h]; i++) {
            j = adj[h, i]
            if (state[j] == 1) {
                c = j
                for (k = depth; k >= 1 && stack[k] != j; k--)
                    ;
                c = ""
                for (; k <= depth; k++)
                    c = c stack[k] " -> "
                print c j
            } else if (!state[j])
                visit(j)
        }
        depth--
        state[h] = 2
    }
    END { for (h in node) if (!state[h]) visit(h) }' <<<"$graph" | LC_ALL=C sort -u)
while IFS= read -r l; do
    [ -n "$l" ] && problem "include cycle: $l"
done <<<"$cycles"

# ---- (d) the order of the layers ------------------------------------------------------------
# Each layer's subfolders, lowest first (trace/README.md and tui/README.md draw the last two).
# A file may include headers of its own subfolder and of the subfolders before it; sim/
# includes nothing of trace/ or tui/, trace/ nothing of tui/.
declare -A rank=()
rank_layers() { # LAYER "SUB SUB:SUB ..."
    local r=0 sub name
    for sub in $2; do
        for name in ${sub//:/ }; do rank[$1/$name]=$r; done
        r=$((r + 1))
    done
}
rank_layers sim "$SIM_LAYERS"
rank_layers trace "$TRACE_LAYERS"
rank_layers tui "$TUI_LAYERS"
layer_of() { echo "${1%%/*}"; }
sub_of() { # LAYER/SUB/... -> LAYER/SUB
    local rest=${1#*/}
    [ "${rest%%/*}" != "$rest" ] && echo "${1%%/*}/${rest%%/*}"
}
while read -r f; do
    s=$(sub_of "$f")
    [ -n "$s" ] && [ -n "${rank[$s]+x}" ] || problem "$f: not in a subfolder its layer lists ($0)"
done < <(sources sim trace tui)
while read -r f inc; do
    from=$(layer_of "$f") to=$(layer_of "$inc")
    case "$from" in sim | trace | tui) ;; *) continue ;; esac
    case "$from:$to" in
    sim:trace | sim:tui) problem "$f includes $inc: sim/ depends on nothing of ours"; continue ;;
    trace:tui) problem "$f includes $inc: trace/ does not depend on tui/"; continue ;;
    esac
    [ "$from" = "$to" ] || continue
    a=$(sub_of "$f") b=$(sub_of "$inc")
    if [ -n "$a" ] && [ -n "$b" ] && [ -n "${rank[$a]+x}" ] && [ -n "${rank[$b]+x}" ] &&
        [ "${rank[$b]}" -gt "${rank[$a]}" ]; then
        problem "$f includes $inc: $a/ is below $b/ in its layer's drawing"
    fi
done <<<"$graph"

# ---- (e) folder size ------------------------------------------------------------------------
while read -r d; do
    n=$(find "$d" -maxdepth 1 -name '*.c' -type f | wc -l)
    [ "$n" -le "$MAX_FILES" ] || problem "$d: $n .c files, more than $MAX_FILES (split it into subsystems)"
done < <(find sim trace tui -mindepth 1 -type d | LC_ALL=C sort)
while IFS=: read -r f line text; do
    problem "$f:$line: ${text#"${text%%[![:space:]]*}"}: only tui/ uses curses"
done < <(sources sim trace | xargs grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(n?cursesw?|ncursesw/[a-z]+)\.h>' /dev/null)

if [ "$problems" -gt 0 ]; then
    echo "layout: $problems problem(s); sim/, trace/ and tui/README.md draw the layout"
    exit 1
fi
echo "layout: ok (files at most $MAX_LINES lines, no objects using each other, no include cycles, layers in order, folders of at most $MAX_FILES .c files)"
