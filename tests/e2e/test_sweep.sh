#!/usr/bin/env bash
# npuscope sweep from the command line: a 2 x 2 sweep through GNU parallel and through the
# local pool, the collected table and its trend, --resume, the sbatch script, GNU
# parallel over "ssh hosts" (a stand-in ssh that runs here), points that fail, bad sweep
# files, engines that are not installed, and text from the sweep's files escaped.
. "$(dirname "$0")/lib.sh"

# A DMA-bound kernel: more DMA bandwidth, fewer cycles; a small one, so it is quick.
cat >"$TMP/sweep.yaml" <<'EOF'
chip: default              # the embedded chip
kernel: vector_add
kernel_args: {pes: 1}
axes:
  pe.dma.gbps: [16, 64]    # a chip config key
  n: [65536, 262144]       # a kernel argument
EOF

# expect_trend NAME DIR: the collected CSV has the four points, all ok, and for each n
# the point with 64 GB/s of DMA takes fewer cycles than the one with 16.
expect_trend() {
    local csv
    csv=$("$NPUSCOPE" sweep --collect "$2" --csv 2>&1)
    if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["status"] == "ok" { rows++; c[$col["pe.dma.gbps"] "," $col["n"]] = $col["cycles_total"] }
        END {
            if (rows != 4) exit 1
            if (!(c["64,65536"] + 0 < c["16,65536"] + 0)) exit 1
            if (!(c["64,262144"] + 0 < c["16,262144"] + 0)) exit 1
            if (!(c["16,65536"] + 0 < c["16,262144"] + 0)) exit 1
        }' <<<"$csv"; then ok "$1"; else fail "$1" "the table:" "$csv"; fi
}

# mtimes DIR: the modification times of the points' results, one line each.
mtimes() { stat -c '%n %Y.%y' "$1"/points/*/result.json 2>/dev/null; }

have_parallel=false
parallel --version 2>/dev/null | grep -q 'GNU parallel' && have_parallel=true

echo "-- --engine parallel"
if $have_parallel; then
    run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/par" --engine parallel -j 2
    expect_status "parallel: exit 0" 0
    expect_out "parallel: the counts" "4 points in .*/par: 4 ok, 0 failed"
    expect_trend "parallel: four rows, more DMA bandwidth fewer cycles" "$TMP/par"
    if [ -f "$TMP/par/joblog" ] && [ "$(grep -c 'sweep --run-point points/' "$TMP/par/joblog")" -eq 4 ]; then
        ok "parallel: its joblog has the four tasks"; else fail "parallel: joblog" "$(cat "$TMP/par/joblog" 2>&1)"; fi
    for f in points.jsonl sweep.json sweep.yaml points/0003/chip.yaml points/0003/trace.json \
        points/0003/summary.json points/0003/result.json; do
        [ -f "$TMP/par/$f" ] || fail "parallel: $f written" "missing"
    done
    ok "parallel: the sweep directory's files"
    if grep -q '"id":"0002","index":2,"params":{"pe.dma.gbps":64,"n":65536}' "$TMP/par/points.jsonl" &&
        grep -q '"cmd":"npuscope run --headless -c points/0002/chip.yaml -k vector_add:pes=1,n=65536 -o points/0002/trace.json"' "$TMP/par/points.jsonl"; then
        ok "points.jsonl: id, parameters, the run"; else fail "points.jsonl" "$(head -3 "$TMP/par/points.jsonl")"; fi
    if grep -qE '^    gbps: 64$' "$TMP/par/points/0002/chip.yaml"; then ok "the point's chip config has its key"
    else fail "the point's chip config has its key" "$(head -20 "$TMP/par/points/0002/chip.yaml")"; fi
    run "$NPUSCOPE" validate "$TMP/par/points/0000/trace.json"
    expect_status "a point's trace is valid" 0

    echo "-- --resume with GNU parallel's joblog"
    before=$(mtimes "$TMP/par")
    run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/par" --resume
    expect_status "resume of a finished sweep: exit 0" 0
    expect_out "resume of a finished sweep: every point was done before, none ran" "4 done before, 0 ran now \(0 failed\); 4 ok, 0 failed in all"
    if [ "$(mtimes "$TMP/par")" = "$before" ]; then ok "resume: the finished points did not run again"
    else fail "resume: the finished points did not run again" "$before" "$(mtimes "$TMP/par")"; fi
    # an interrupted sweep: the last point never finished (not in the joblog, no result)
    # (its own line: with -j 2 the points may finish out of order, 0003 before 0002)
    sed -i '/--run-point points\/0003$/d' "$TMP/par/joblog"
    rm "$TMP/par/points/0003/result.json"
    keep=$(mtimes "$TMP/par")
    run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/par" --resume
    expect_status "resume: exit 0" 0
    expect_out "resume: three done before, the unfinished one ran now" "3 done before, 1 ran now \(0 failed\); 4 ok, 0 failed in all"
    after=$(mtimes "$TMP/par")
    if [ "$(grep -v points/0003/ <<<"$after")" = "$keep" ] && grep -q points/0003/ <<<"$after"; then
        ok "resume: only the unfinished point ran"; else fail "resume: only the unfinished point ran" "$keep" "$after"; fi

    echo "-- GNU parallel over ssh hosts (a stand-in ssh that runs here)"
    if command -v rsync >/dev/null; then
        mkdir -p "$TMP/bin" "$TMP/home"
        ln -s "$NPUSCOPE" "$TMP/bin/npuscope"
        cat >"$TMP/bin/fakessh" <<'EOF'
#!/bin/sh
# a stand-in for ssh: drops the options and the host, runs the command in $HOME
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
shift
[ "${1:-}" = "--" ] && shift
cd "$HOME" || exit 255
exec sh -c "$*"
EOF
        chmod +x "$TMP/bin/fakessh"
        # without SHELL, as under cron or a CI job: GNU parallel needs one for remote commands
        run env -u SHELL HOME="$TMP/home" PATH="$TMP/bin:$PATH" PARALLEL_SSH="$TMP/bin/fakessh" \
            "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/ssh" -S host1,host2 -j 1
        expect_status "sshlogin: exit 0" 0
        expect_trend "sshlogin: the results came back" "$TMP/ssh"
        if cut -f2 "$TMP/ssh/joblog" | grep -q host2; then ok "sshlogin: both hosts ran points"
        else fail "sshlogin: both hosts ran points" "$(cat "$TMP/ssh/joblog")"; fi
        if [ -z "$(find "$TMP/home" -path '*/points/*' 2>/dev/null)" ]; then
            ok "sshlogin: the hosts' working directories are cleaned up"
        else fail "sshlogin: cleaned up" "$(find "$TMP/home" | head)"; fi
    else
        ok "sshlogin (no rsync: skipped)"
    fi
else
    fail "GNU parallel is installed (.ci/install-deps test installs it)" "parallel not found"
fi

echo "-- --engine local"
run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/loc" --engine local -j 2
expect_status "local: exit 0" 0
expect_out "local: the counts" "4 points in .*/loc: 4 ok, 0 failed"
expect_trend "local: four rows, more DMA bandwidth fewer cycles" "$TMP/loc"
run "$NPUSCOPE" sweep --collect "$TMP/loc"
expect_status "collect: exit 0" 0
expect_out "collect: the header" "^id +pe\.dma\.gbps +n +status +cycles_total +kernel_cycles +dma_util +te_util +ve_util +hbm_gbps +energy_j +perf_per_watt +error$"
expect_out "collect: a row" "^0002 +64 +65536 +ok +[0-9]+ +[0-9]+ +[0-9.]+% +[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.e+-]+ +[0-9.]+$"
if [ "$(grep -cE '^000[0-3] ' <<<"$OUT")" -eq 4 ]; then ok "collect: four rows"; else fail "collect: four rows" "$OUT"; fi
# the kernels' own cycles show what the DMA bandwidth changes, undiluted by the host's
# transfers around them: 4x the bandwidth shortens the launches more than the whole run
csv=$("$NPUSCOPE" sweep --collect "$TMP/loc" --csv 2>&1)
if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["n"] == 262144 { t[$col["pe.dma.gbps"]] = $col["cycles_total"]; k[$col["pe.dma.gbps"]] = $col["kernel_cycles"]
        b[$col["pe.dma.gbps"]] = $col["kernel_dma_busy"] }
    END {
        if (!(k[16] > 0 && k[64] > 0 && k[16] < t[16] && k[64] < t[64])) exit 1
        if (!(k[16] / k[64] > t[16] / t[64] + 0.05)) exit 1
        if (!(b[16] > 0 && b[16] <= 1)) exit 1
    }' <<<"$csv"; then ok "collect: kernel_cycles moves more with the DMA bandwidth than cycles_total"
else fail "collect: kernel_cycles moves more with the DMA bandwidth than cycles_total" "$csv"; fi
run "$NPUSCOPE" sweep --collect "$TMP/loc" --json
expect_status "collect --json: exit 0" 0
expect_out "collect --json: points with parameters and metrics" \
    '"points":\[\{"id":"0000","params":\{"pe\.dma\.gbps":16,"n":65536\},"status":"ok","cycles_total":[0-9]+,'
if command -v python3 >/dev/null; then
    if python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["points"]) == 4' <<<"$OUT"; then
        ok "collect --json: JSON with four points"; else fail "collect --json: JSON" "$OUT"; fi
fi

echo "-- --resume with the local pool"
rm "$TMP/loc/points/0001/result.json"
keep=$(mtimes "$TMP/loc")
run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/loc" --engine local --resume
expect_status "local resume: exit 0" 0
after=$(mtimes "$TMP/loc")
if [ "$(grep -v points/0001/ <<<"$after")" = "$keep" ] && grep -q points/0001/ <<<"$after"; then
    ok "local resume: only the unfinished point ran"; else fail "local resume" "$keep" "$after"; fi
run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/loc" --engine local
expect_status "a sweep directory is not run over without --resume: exit 2" 2
expect_err "... and says so" "holds a sweep already \(--resume"
expect_one_line "... in one line"

echo "-- --engine slurm: the batch script"
run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/slurm" --engine slurm -j 2 --bin /opt/npu/bin/npuscope
expect_status "slurm: the script is written, exit 0" 0
expect_out "slurm: how to submit it" "wrote .*/slurm/sweep\.sbatch \(4 array tasks\); submit it with: sbatch "
script=$TMP/slurm/sweep.sbatch
abs=$(cd "$TMP/slurm" && pwd -P)
if grep -qx '#SBATCH --array=0-3%2' "$script"; then ok "slurm: an array of the 4 points, at most 2 at once"
else fail "slurm: --array" "$(cat "$script")"; fi
if grep -qx "#SBATCH --chdir=$abs" "$script" && grep -qx 'id=$(printf '"'"'%04d'"'"' "$SLURM_ARRAY_TASK_ID")' "$script" &&
    grep -qx 'exec /opt/npu/bin/npuscope sweep --run-point "points/$id"' "$script"; then
    ok "slurm: each task runs its point in the sweep directory"; else fail "slurm: the task" "$(cat "$script")"; fi
if [ ! -e "$TMP/slurm/points/0000/result.json" ]; then ok "slurm: nothing ran"; else fail "slurm: nothing ran"; fi
# a task by hand, as Slurm would run it
sed -e "s|/opt/npu/bin/npuscope|$NPUSCOPE|" "$script" >"$TMP/task.sh"
(cd "$TMP/slurm" && SLURM_ARRAY_TASK_ID=3 sh "$TMP/task.sh") >/dev/null 2>&1
if grep -q '"status":"ok"' "$TMP/slurm/points/0003/result.json" 2>/dev/null; then
    ok "slurm: the script's task runs point 3"; else fail "slurm: the script's task runs point 3"; fi
run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/slurm" --engine slurm --resume
expect_out "slurm --resume: only the points not done" "\(3 array tasks\)"
if grep -qx '#SBATCH --array=0-2' "$TMP/slurm/sweep.sbatch"; then ok "slurm --resume: the array leaves point 3 out"
else fail "slurm --resume: the array" "$(grep array "$TMP/slurm/sweep.sbatch")"; fi

echo "-- a point that fails"
cat >"$TMP/fail.yaml" <<'EOF'
kernel: vector_add
axes:
  pes: [1, 16, 2]   # the default chip has 8 PEs
EOF
run "$NPUSCOPE" sweep "$TMP/fail.yaml" -o "$TMP/fail" --engine local
expect_status "a failed point: exit 1" 1
expect_out "the others ran" "3 points in .*: 2 ok, 1 failed"
expect_err "the failed point with its first error line" "point 0001 \(pes=16\) failed: -k vector_add: key 'pes': 16 PEs asked, the chip has 8$"
run "$NPUSCOPE" sweep --collect "$TMP/fail"
expect_status "collect with a failed point: exit 1" 1
expect_out "collect: the failed row and its error" "^0001 +16 +failed +-k vector_add: key 'pes': 16 PEs asked, the chip has 8$"

echo "-- bad sweep files: one line, exit 2, nothing written"
bad() { # NAME FILE-TEXT STDERR-REGEX
    printf '%s' "$2" >"$TMP/bad.yaml"
    run "$NPUSCOPE" sweep "$TMP/bad.yaml" -o "$TMP/bad-out"
    expect_status "$1: exit 2" 2
    expect_err "$1: the message" "$3"
    expect_one_line "$1: one line"
    [ ! -e "$TMP/bad-out" ] || fail "$1: nothing written" "$(ls "$TMP/bad-out")"
}
bad "unknown chip key" $'kernel: vector_add\naxes:\n  pe.dma.gbsp: [16, 64]\n' \
    "^.*/bad\.yaml:3:3: key 'pe\.dma\.gbsp': unknown key \(did you mean 'gbps'\?\)$"
bad "unknown kernel argument" $'kernel: vector_add\naxes:\n  pe.dma.gbps: [16]\n  nn: [1, 2]\n' \
    "^.*/bad\.yaml:4:3: key 'nn': kernel vector_add has no argument 'nn' \(arguments: n, pes, dtype, seed"
bad "bad YAML" $'kernel: vector_add\naxes:\n  n: [16, 64\n' "^.*/bad\.yaml:[0-9]+:[0-9]+: YAML syntax error"
bad "a value out of range" $'kernel: vector_add\naxes:\n  pe.dma.gbps: [16, 0]\n' \
    "bad\.yaml:3:21: key 'pe\.dma\.gbps': must be > 0, got 0$"
bad "an unknown kernel" $'kernel: vectoradd\n' "bad\.yaml:1:9: key 'kernel': unknown kernel 'vectoradd'"
run "$NPUSCOPE" sweep "$TMP/missing.yaml" -o "$TMP/bad-out"
expect_status "a missing sweep file: exit 2" 2
expect_err "... named" "missing\.yaml: cannot open: No such file or directory$"
run "$NPUSCOPE" sweep "$TMP/sweep.yaml"
expect_status "no -o: exit 2" 2
expect_err "... a usage error" "missing -o DIR"
run "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/x" --engine make
expect_status "an unknown engine: exit 2" 2
expect_err "... named with the engines there are" "unknown engine 'make' \(parallel, slurm, local\)"
run "$NPUSCOPE" sweep --collect "$TMP"
expect_status "collect of a directory that is no sweep: exit 2" 2
expect_err "... says so" "not a sweep directory"

echo "-- engines that are not installed"
mkdir -p "$TMP/empty"
run env PATH="$TMP/empty" "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/np" --engine parallel
expect_status "no GNU parallel: exit 2" 2
expect_err "... one line naming the package" "^npuscope sweep: --engine parallel needs GNU parallel, which is not installed \(Debian package: parallel\)$"
expect_one_line "... in one line"
run env PATH="$TMP/empty" "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/ns" --engine slurm --submit
expect_status "no sbatch: exit 2" 2
expect_err "... one line naming the package" "needs Slurm's sbatch, which is not installed \(Debian package: slurm-client\)$"
run env PATH="$TMP/empty" "$NPUSCOPE" sweep "$TMP/sweep.yaml" -o "$TMP/nd"
expect_status "no GNU parallel and no --engine: the local pool runs it" 0
expect_err "... and says so" "GNU parallel is not installed \(Debian package: parallel\): running the points with --engine local"

echo "-- text from the sweep's files is escaped; versions"
res=$TMP/loc/points/0002/result.json
sed -i -e 's/"status":"ok"/"status":"failed"/' -e 's/"error":null/"error":"evil \\u001b]0;pwned\\u0007"/' \
    -e 's/"npuscope_version":"[^"]*"/"npuscope_version":"9.9"/' "$res"
run "$NPUSCOPE" sweep --collect "$TMP/loc"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/out"; then fail "collect: no control character reaches the terminal" "$(od -c "$TMP/out" | head)"
else ok "collect: no control character reaches the terminal"; fi
expect_out "collect: the error escaped" 'evil \\e\]0;pwned\\x07'
expect_err "collect: a mix of npuscope versions is pointed out" "warning: the points ran on different npuscope versions \(.*9\.9 on 1.*\)"
finish
