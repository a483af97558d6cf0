#!/usr/bin/env bash
# make test-slurm (opt-in, not part of make test): a real single-node Slurm on this
# machine runs a small sweep submitted by `npuscope sweep --engine slurm --submit --wait`,
# and the collected table is checked. It installs slurm-wlm and munge when they are
# missing (.ci/install-deps slurm), then starts its own munged, slurmctld and slurmd with
# a generated configuration and private ports, all under a temporary directory, and
# stops exactly those processes at the end. It needs root: slurmd starts every job as
# the user who submitted it.
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
NPUSCOPE=$PWD/$build/npuscope
[ -x "$NPUSCOPE" ] || { echo "test-slurm: $NPUSCOPE is not built (make)" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
    echo "test-slurm: needs root (slurmd runs each job as its user); try: sudo make test-slurm" >&2
    exit 1
fi
.ci/install-deps slurm </dev/null || exit 1

T=$(mktemp -d "${TMPDIR:-/tmp}/npuscope-slurm.XXXXXX")
chmod 700 "$T"
pids=()
cleanup() {
    local i # the daemons in the reverse order of their start: slurmd, slurmctld, munged
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null
        wait "${pids[i]}" 2>/dev/null
    done
    rm -rf "$T"
}
trap cleanup EXIT
die() {
    echo "test-slurm: FAIL: $*" >&2
    for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
    exit 1
}

# ---- munge: a key and a daemon of our own, on a socket in $T -------------------------------
mungekey --create --keyfile="$T/munge.key" 2>/dev/null ||
    dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$T/munge.key"
mkdir -m 700 "$T/munge"
munged --foreground --force --key-file="$T/munge.key" --socket="$T/munge/munge.socket" \
    --pid-file="$T/munged.pid" --log-file="$T/munged.log" --seed-file="$T/munge.seed" \
    >"$T/munged.out.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$T/munge/munge.socket" ] && break; sleep 0.1; done
munge -S "$T/munge/munge.socket" -n | unmunge -S "$T/munge/munge.socket" >/dev/null ||
    die "munge does not work"

# ---- slurm.conf for one node: this machine -----------------------------------------------------
host=$(hostname -s)
mkdir -p "$T/state" "$T/spool"
cat >"$T/slurm.conf" <<EOF
ClusterName=npuscope-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=sweep Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf

slurmctld -D -c -f "$SLURM_CONF" >"$T/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$T/slurmd.out.log" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 120); do
    state=$(sinfo -h -o %t 2>/dev/null | head -1)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || die "the node did not come up (sinfo says '${state:-nothing}')"
echo "test-slurm: a one-node Slurm runs on $host ($(sinfo -h -o '%P %D %t %C'))"

# ---- the sweep, submitted and waited for ------------------------------------------------------
cat >"$T/sweep.yaml" <<'EOF'
kernel: vector_add
axes:
  pe.dma.gbps: [16, 64]
  n: [65536, 262144]
EOF
mkdir -m 755 "$T/sw"
timeout 600 "$NPUSCOPE" sweep "$T/sweep.yaml" -o "$T/sw/out" --engine slurm -j 2 --submit --wait \
    --bin "$NPUSCOPE" >"$T/sweep.log" 2>&1
rc=$?
cat "$T/sweep.log"
[ "$rc" -eq 0 ] || die "npuscope sweep --engine slurm --submit --wait exited $rc"
grep -q '^#SBATCH --array=0-3%2$' "$T/sw/out/sweep.sbatch" || die "the array in sweep.sbatch"
ls "$T"/sw/out/slurm/*_*.out >/dev/null 2>&1 || die "no output of the array tasks in slurm/"

"$NPUSCOPE" sweep --collect "$T/sw/out" | tee "$T/table.txt"
"$NPUSCOPE" sweep --collect "$T/sw/out" --csv >"$T/table.csv" || die "collect exited non-zero"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["status"] == "ok" { rows++; c[$col["pe.dma.gbps"] "," $col["n"]] = $col["cycles_total"] }
    END { exit !(rows == 4 && c["64,65536"] < c["16,65536"] && c["64,262144"] < c["16,262144"]) }' \
    "$T/table.csv" || die "the table does not have four ok rows with the DMA trend"
hosts=$(grep -ho '"host":"[^"]*"' "$T"/sw/out/points/*/result.json | sort -u | wc -l)
echo "test-slurm: PASS: 4 points ran as Slurm array tasks (on $hosts node), the table has the trend"
