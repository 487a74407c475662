#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine runs the array job of `fits sweep --emit=slurm`:
#
#  1. installs Debian's slurm-wlm and munge when missing (root; no service is started by the install),
#  2. starts munged (as the munge user, with its own key and socket) and slurmctld + slurmd (no systemd)
#     from a slurm.conf in a state folder of this test, on ports of its own, and waits for the node,
#  3. builds bin/fits, emits a small sweep (2 experiments x 2 seeds, tiny training overrides), submits
#     it with sbatch and waits for every task (bounded),
#  4. checks that every run finished under Slurm, trains the same grid with the local executor in
#     another root, collects both and checks that the aggregated tables are identical,
#  5. stops every daemon it started (also on failure or Ctrl-C).
#
# Idempotent: leftovers of an earlier run of this script (daemons recorded in its pid files, its state
# folder, its sweep roots) are removed first. Needs root. Settings (environment):
#   SLURM_TEST_STATE    state folder of the cluster (default /tmp/fits-slurm-test)
#   SLURM_TEST_OUT      sweep roots (default test-output/slurm-test)
#   SLURM_TEST_TABLE    table whose first two quick experiments form the grid (default Table 3: the SSC
#                       ablation, whose quick stand-ins train on the embedded synthetic task)
#   SLURM_TEST_TIMEOUT  seconds to wait for the array job (default 600)
#   SLURM_TEST_PORT     slurmctld port; slurmd uses the next one (default 16817)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
t0=$(date +%s)
say() { printf '[slurm-test %3ds] %s\n' "$(($(date +%s) - t0))" "$*"; }
die() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || { echo "slurm-test: needs root (it installs and starts slurmctld, slurmd and munged)" >&2; exit 2; }

state=${SLURM_TEST_STATE:-/tmp/fits-slurm-test}
out=${SLURM_TEST_OUT:-test-output/slurm-test}
mkdir -p "$out"
out=$(cd "$out" && pwd)
timeout_s=${SLURM_TEST_TIMEOUT:-600}
port=${SLURM_TEST_PORT:-16817}
host=$(hostname -s)
export SLURM_CONF=$state/slurm.conf
export GOTOOLCHAIN=go1.27.3 GOEXPERIMENT=simd GOMLX_NO_AUTO_INSTALL=1
# Short runs: the reduced dataset and 2 epochs. The recipe's dataset, model, M, width and protocol stay, so
# that the table counts the runs.
train_flags=(--small --epochs=2 --quiet)

# stop_pidfile FILE NAME: stops the process recorded in FILE if it is still the daemon NAME we started.
stop_pidfile() {
	local file=$1 name=$2 pid
	[ -f "$file" ] || return 0
	pid=$(cat "$file" 2>/dev/null || true)
	if [[ "$pid" =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$name"; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
		[ -d "/proc/$pid" ] && kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$file"
}

# kill_sweep_processes: the training processes of this test's sweep roots, found by their --out, by id.
kill_sweep_processes() {
	local p
	for p in /proc/[0-9]*; do
		if { tr '\0' ' ' < "$p/cmdline"; } 2> /dev/null | grep -qF -- "--out=$out/"; then
			kill -9 "${p#/proc/}" 2>/dev/null || true
		fi
	done
}

stop_cluster() {
	if [ -f "$state/slurmctld.pid" ] && command -v scancel > /dev/null; then
		scancel --quiet --user=root 2> /dev/null || true
		for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
	fi
	stop_pidfile "$state/slurmd.pid" slurmd
	stop_pidfile "$state/slurmctld.pid" slurmctld
	stop_pidfile "$state/munge/munged.pid" munged
	kill_sweep_processes
}
trap 'status=$?; stop_cluster; say "daemons stopped"; exit $status' EXIT
trap 'exit 130' INT TERM

# 0. Leftovers of an earlier run.
stop_cluster
rm -rf "$state" "$out/slurm" "$out/local"

# 1. Packages.
if ! command -v slurmctld > /dev/null || ! command -v slurmd > /dev/null || ! command -v sbatch > /dev/null ||
	! command -v munged > /dev/null; then
	say "installing slurm-wlm and munge"
	policy=/usr/sbin/policy-rc.d
	made_policy=0
	if [ ! -e "$policy" ]; then
		# Keep the packages' maintainer scripts from starting system daemons: this test starts its own.
		printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && made_policy=1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge > /dev/null
	if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi
fi
say "$(slurmctld -V), $(munged --version 2>&1 | head -1 | awk '{print $1}')"

# 2. munge with a key and socket of its own.
mkdir -p "$state"
# munged wants its socket folder searchable by all and its key readable by the munge user only.
install -d -o munge -g munge -m 0755 "$state/munge"
install -d -o munge -g munge -m 0700 "$state/munge/key"
key=$state/munge/key/munge.key
dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
chown munge:munge "$key"
chmod 0400 "$key"
socket=$state/munge/munge.socket
runuser -u munge -- munged --key-file="$key" --socket="$socket" \
	--pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed"
munge -n --socket="$socket" | unmunge --socket="$socket" > /dev/null || die "munge round trip failed"

# 3. slurmctld and slurmd.
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
mkdir -p "$state/spool" "$state/ctld"
cat > "$SLURM_CONF" <<EOF
# Single-node test cluster of scripts/slurm-test.sh.
ClusterName=fitstest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 120); do
	[ "$(sinfo -h -o %T 2> /dev/null)" = idle ] && break
	sleep 0.5
done
[ "$(sinfo -h -o %T)" = idle ] || die "node not idle after 60 s: $(sinfo 2>&1); see $state/*.log"
say "cluster up: $(sinfo -h -o '%P %D %T %c CPUs %m MB')"

# 4. The sweep under Slurm.
say "building bin/fits"
mkdir -p bin
go build -o bin/fits ./cmd/fits
fits=$repo/bin/fits
table=${SLURM_TEST_TABLE:-Table 3}
exps=$("$fits" sweep --table="$table" --mode=quick --out="$out/slurm" --dry-run 2> /dev/null | cut -f1 | uniq | sed -n 1,2p | paste -sd, -)
[ -n "$exps" ] || die "table $table has no experiments"
grid=(--experiments="$exps" --seeds=1-2 --mode=quick)
say "grid: table $table, experiments $exps, seeds 1-2, quick mode, flags ${train_flags[*]}"
"$fits" sweep "${grid[@]}" --out="$out/slurm" --emit=slurm --cpus-per-task=1 --mem=1G --time=00:10:00 \
	--job-name=fits-slurm-test -- "${train_flags[@]}"
tasks=$(wc -l < "$out/slurm/runs.txt")
grep -q "^#SBATCH --array=0-$((tasks - 1))$" "$out/slurm/sweep.sbatch" || die "sweep.sbatch has no --array=0-$((tasks - 1))"
job=$(sbatch --parsable "$out/slurm/sweep.sbatch")
job=${job%%;*}
say "submitted array job $job ($tasks tasks)"
deadline=$(($(date +%s) + timeout_s))
while [ -n "$(squeue -h -j "$job" 2> /dev/null)" ]; do
	[ "$(date +%s)" -lt "$deadline" ] || die "job $job still queued or running after $timeout_s s: $(squeue -j "$job")"
	sleep 1
done
say "array job $job done"
while IFS= read -r line; do
	eval "set -- $line"
	dir=
	for a in "$@"; do case $a in --out=*) dir=${a#--out=} ;; esac; done
	[ -f "$dir/result.json" ] || die "run $dir did not finish: $(tail -n 5 "$dir/log.txt" 2> /dev/null | tr '\r' '\n' | tail -n 3)"
	grep -q "job $job task" "$dir/log.txt" || die "run $dir was not trained by job $job"
done < "$out/slurm/runs.txt"
say "all $tasks runs finished under Slurm"

# 5. The same grid on the local executor, then both collected.
"$fits" sweep "${grid[@]}" --out="$out/local" --workers=2 --quiet -- "${train_flags[@]}"
say "local sweep done"
for root in "$out/slurm" "$out/local"; do
	summary=$("$fits" sweep "${grid[@]}" --out="$root" --collect | sed -n 1p)
	[[ "$summary" == "$tasks runs: $tasks finished;"* ]] || die "collect in $root: $summary"
done
# The table of $table from both roots: identical but for the root named in the Markdown caption and the
# wall times (the CSV's last column).
stem=$(printf '%s' "$table" | tr 'A-Z ' 'a-z-' | tr -d .)
[ -f "$out/slurm/$stem.md" ] || die "collect wrote no $stem.md"
cmp <(sed "s#$out/slurm#ROOT#g" "$out/slurm/$stem.md") <(sed "s#$out/local#ROOT#g" "$out/local/$stem.md") ||
	die "$stem.md differs between the Slurm and the local sweep"
cmp <(sed 's/,[^,]*$//' "$out/slurm/$stem.csv") <(sed 's/,[^,]*$//' "$out/local/$stem.csv") ||
	die "$stem.csv differs between the Slurm and the local sweep"
# Both experiments' cells count 2 finished seeds (of the 3 that quick mode asks for).
[ "$(grep -c ',2,3,' "$out/slurm/$stem.csv")" = 2 ] || die "$stem.csv does not count two seeds in two cells"
# Stronger than the tables: every run's per-epoch losses are bit-identical.
while IFS= read -r line; do
	eval "set -- $line"
	for a in "$@"; do case $a in --out=*) dir=${a#--out=} ;; esac; done
	twin=$out/local/${dir#"$out/slurm/"}
	losses() { grep -o '"loss": [^,]*' "$1/result.json"; }
	[ "$(losses "$dir")" = "$(losses "$twin")" ] || die "per-epoch losses differ: $dir vs $twin"
done < "$out/slurm/runs.txt"
cat "$out/slurm/$stem.md"
say "PASS: the Slurm array job and the local sweep aggregate to the same $table ($out/{slurm,local}/$stem.{md,csv}), with identical per-epoch losses"
