#!/bin/sh
# Soak test of the plugin under real Slurm (`make soak`; not part of
# `make check`: several minutes). Uses the private test cluster of
# tests/slurm/cluster.sh.
#   A. real node (task/affinity): SOAK_SRUNS (500) sequential 2-task steps
#      with --numa-policy=local --omp-guard; every step must exit 0 and every
#      task must print numaguard's verbose line; slurmd's open fds and RSS
#      must not grow (after a warm-up of 50 steps), nor the per-step
#      slurmstepd's (first vs last step, read by the task from /proc/$PPID).
#   B. inflated 8-GPU node (g4dn.metal, task/none): SOAK_CONCURRENT (20)
#      steps at once, a mix of CPU-only and 1-GPU steps; all exit 0.
#   C. afterwards: no job, no slurmstepd of this cluster, no new file in
#      /dev/shm, node idle (not drained).
# TAP on stdout; a summary block ("# soak: ...") for docs/hardening.md.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../slurm/testlib.sh"
ngt_start_suite soak plugin
N=${SOAK_SRUNS:-500}
C=${SOAK_CONCURRENT:-20}
WARM=$(( N >= 100 ? 50 : (N / 2 > 0 ? N / 2 : 1) ))

fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
shm_before=$(ls /dev/shm | sort)

# --- A: sequential steps on the real node ------------------------------
NGC_NODES=1 NGC_TASK_PLUGIN=task/affinity NGC_TOPOLOGY= NGC_GPUS=0
NGC_PLUGSTACK="$(ngt_plugstack verbose)"
ngt_cluster
slurmd_pid=${NGC_SLURMD_PIDS[0]}
# The task prints its slurmstepd's fd count and RSS (its parent).
probe='echo "stepd $(ls /proc/$PPID/fd | wc -l) $(sed -n "s/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p" /proc/$PPID/status)"'
bad=0 quiet=0 t0=$(date +%s) first_stepd="" last_stepd=""
for i in $(seq 1 "$N"); do
    [ "$i" -eq $((WARM + 1)) ] && { fd_w=$(fds "$slurmd_pid"); rss_w=$(rss "$slurmd_pid"); }
    out=$NGT_OUT/seq.out
    if ! ngc_srun -D "$NGT_OUT" -n 2 --numa-policy=local --omp-guard sh -c "$probe" \
            >"$out" 2>"$out.err"; then
        bad=$((bad + 1))
        [ "$bad" -le 3 ] && sed 's/^/#   srun: /' "$out.err" | head -5
    fi
    [ "$(grep -c '^numaguard: ' "$out.err")" -ge 2 ] || quiet=$((quiet + 1))
    s=$(head -1 "$out")
    [ "$i" -eq 1 ] && first_stepd=$s
    last_stepd=$s
done
secs=$(( $(date +%s) - t0 ))
fd_e=$(fds "$slurmd_pid")
rss_e=$(rss "$slurmd_pid")
is "$bad" 0 "$N sequential sruns exit 0 (${secs}s)"
is "$quiet" 0 "every step printed numaguard's verbose line for both tasks"
ok $(( fd_e > fd_w + 2 )) "slurmd open fds steady: $fd_w after $WARM steps, $fd_e after $N"
ok $(( rss_e > rss_w + 4096 )) "slurmd RSS steady: ${rss_w} kB after $WARM steps, ${rss_e} kB after $N"
set -- $first_stepd
f_fd=${2:-0} f_rss=${3:-0}
set -- $last_stepd
l_fd=${2:-0} l_rss=${3:-0}
ok $(( l_fd > f_fd + 2 || l_rss > f_rss + 4096 )) \
    "slurmstepd per step steady: first $f_fd fds ${f_rss} kB, last $l_fd fds ${l_rss} kB"

# --- B: concurrent steps on an inflated GPU node ------------------------
NGC_TASK_PLUGIN=task/none NGC_TOPOLOGY=$NGT_TOPO/g4dn-metal-8xt4.xml NGC_GPUS=auto
NGC_PLUGSTACK="$(ngt_plugstack)"
ngt_cluster
t0=$(date +%s)
pids=()
for i in $(seq 1 "$C"); do
    if [ $((i % 2)) -eq 0 ]; then
        args=(-n 2 --gpus-per-task=1 --numa-policy=local,verbose)
    else
        args=(-n 4 -c 2 --numa-policy=prefer,verbose --omp-guard)
    fi
    timeout 300 srun -D "$NGT_OUT" "${args[@]}" true >"$NGT_OUT/c$i.out" 2>"$NGT_OUT/c$i.err" &
    pids+=($!)
done
cbad=0
for p in "${pids[@]}"; do wait "$p" || cbad=$((cbad + 1)); done
csecs=$(( $(date +%s) - t0 ))
is "$cbad" 0 "$C concurrent steps (CPU-only and 1-GPU) exit 0 (${csecs}s)"
cquiet=0
for i in $(seq 1 "$C"); do
    grep -q '^numaguard: ' "$NGT_OUT/c$i.err" || cquiet=$((cquiet + 1))
done
is "$cquiet" 0 "every concurrent step printed numaguard's verbose line"

# --- C: nothing left behind ---------------------------------------------
sleep 2
is "$(squeue -h | wc -l)" 0 "no job left in the queue"
is "$(ngc_node_states)" idle "node idle, not drained"
left=$(pgrep -f "slurmstepd: \[" | while read -r p; do
    grep -qs "$NGC_DIR" "/proc/$p/environ" && echo "$p"; done | wc -l)
is "$left" 0 "no slurmstepd of this cluster left"
is "$(comm -13 <(echo "$shm_before") <(ls /dev/shm | sort) | tr '\n' ' ')" "" \
    "no new file in /dev/shm"

echo "# soak: $N sequential 2-task sruns in ${secs}s, $bad failed; slurmd fds $fd_w -> $fd_e," \
     "RSS ${rss_w} -> ${rss_e} kB; slurmstepd fds $f_fd -> $l_fd, RSS ${f_rss} -> ${l_rss} kB;" \
     "$C concurrent steps in ${csecs}s, $cbad failed"
ngt_done
