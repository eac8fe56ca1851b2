#!/usr/bin/env bash
# A Slurm cluster of N nodes on this machine (munged + slurmctld + N slurmd, Debian's slurm-wlm
# 22.05) for trying sharp-submit and for the scheduler tests. Nothing is installed as a service:
# everything -- config, munge key and socket, daemon state, pid files, logs -- lives under one state
# directory, so a test's cluster never collides with a developer's (own ports, own munge socket, own
# spool).
#
#   runners/slurm/local-cluster.sh [--dir DIR] [--nodes N] start
#        generate slurm.conf, start the daemons, wait (bounded) until every node is idle; after a
#        kill-node, start again brings the killed node back
#   runners/slurm/local-cluster.sh [--dir DIR] status           which daemons run (exit 0 when all do)
#   runners/slurm/local-cluster.sh [--dir DIR] stop             cancel every job, stop the daemons
#   runners/slurm/local-cluster.sh [--dir DIR] kill-node NODE   a node dies: SIGKILL its slurmd and
#        every process of its job steps (slurmctld marks it down after SlurmdTimeout = 10 s)
#   runners/slurm/local-cluster.sh [--dir DIR] env              the export line for the client commands
#
# One node (the default) is named after this host. N >= 2 nodes are node1..nodeN, each a `slurmd -N
# nodeK` with its own port, spool directory, log and pid file, and an equal share of this machine's
# CPUs (at least 1) and memory. Every node's address is 127.0.0.1 (the daemons listen on every
# interface, as Slurm's do, but accept only credentials of this cluster's private munge key).
# DIR defaults to $SHARP_SLURM_DIR, else /tmp/sharp-slurm-<uid>. Client commands (sbatch, squeue,
# sharp-submit) find this cluster through SLURM_CONF=DIR/slurm.conf, which `start` prints.
# Runs as root (slurmd launches jobs as their owner; munged must run as the munge user).
# Ports: free ones are picked at each start unless SHARP_SLURM_CTLD_PORT is set. Start timeout:
# SHARP_SLURM_START_TIMEOUT seconds (default 60).
set -euo pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 2
}

dir="${SHARP_SLURM_DIR:-/tmp/sharp-slurm-$(id -u)}"
nodes_wanted=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || usage; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --nodes) [ $# -ge 2 ] || usage; nodes_wanted="$2"; shift 2 ;;
    --nodes=*) nodes_wanted="${1#--nodes=}"; shift ;;
    -h|--help) usage ;;
    start|stop|status|env|kill-node) break ;;
    *) echo "local-cluster.sh: unknown argument '$1' (allowed: --dir DIR, --nodes N, start|status|stop|kill-node NODE|env)" >&2
       exit 2 ;;
  esac
done
[ $# -ge 1 ] || usage
action="$1"
shift
victim=""
if [ "$action" = kill-node ]; then
  [ $# -eq 1 ] || { echo "local-cluster.sh: kill-node needs one node name" >&2; exit 2; }
  victim="$1"
else
  [ $# -eq 0 ] || usage
fi
if [ -n "$nodes_wanted" ]; then
  if ! [[ "$nodes_wanted" =~ ^[0-9]+$ ]] || [ "$nodes_wanted" -lt 1 ] || [ "$nodes_wanted" -gt 64 ]; then
    echo "local-cluster.sh: --nodes: '$nodes_wanted' is not a node count (allowed: 1 to 64)" >&2
    exit 2
  fi
  [ "$action" = start ] || { echo "local-cluster.sh: --nodes goes with start" >&2; exit 2; }
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd -P)"

conf="$dir/slurm.conf"
munge_dir="$dir/munge"
munge_socket="$munge_dir/munge.socket.2"
munge_pidfile="$munge_dir/munged.pid"
ctld_pidfile="$dir/run/slurmctld.pid"
logs="$dir/log"
export SLURM_CONF="$conf"
start_timeout="${SHARP_SLURM_START_TIMEOUT:-60}"

say() { echo "local-cluster: $*"; }
die() { echo "local-cluster: error: $*" >&2; exit 1; }

# Each node's slurmd writes these (slurm.conf names them with %n, the node name).
slurmd_pidfile() { echo "$dir/run/slurmd-$1.pid"; }
slurmd_log() { echo "$logs/slurmd-$1.log"; }

# The nodes of the generated slurm.conf, one per line.
config_nodes() {
  [ -f "$conf" ] || return 0
  sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' "$conf"
}

# Prints the pid recorded in a pid file when that process is alive, no zombie, and (when $2 is
# given) runs the program $2 -- a pid file left by a killed daemon may name a recycled pid.
live_pid() {
  local file="$1" comm="${2:-}" pid
  [ -s "$file" ] || return 1
  pid="$(tr -dc '0-9' 2>/dev/null < "$file")" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  if [ -r "/proc/$pid/stat" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = "Z" ]; then return 1; fi
  if [ -n "$comm" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "$comm" ]; then return 1; fi
  echo "$pid"
}

# Waits up to $2 seconds for the command in $3.. to succeed.
wait_for() {
  local what="$1" seconds="$2"; shift 2
  local tries=$((seconds * 5)) i
  for ((i = 0; i < tries; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "local-cluster: timed out after ${seconds}s waiting for $what" >&2
  return 1
}

# SIGTERM to the daemons (program $1) named in the pid files $2.., all at once, then SIGKILL to
# any still alive after 10 s; only pids named in the files, and only when they run that program.
stop_daemons() {
  local comm="$1" file pid i pids=()
  shift
  for file in "$@"; do
    if pid="$(live_pid "$file" "$comm")"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$file"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for ((i = 0; i < 50; i++)); do
    for pid in "${pids[@]}"; do
      # A live process that is no zombie keeps the wait going.
      if kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
        continue 2
      fi
    done
    break
  done
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
      say "$comm (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  say "stopped $comm (pid ${pids[*]})"
}

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A free port not in the list $1 (space-separated): ports are picked one by one and released, so
# two picks could coincide.
another_free_port() {
  local taken=" $1 " port
  port="$(free_port)"
  while [[ "$taken" == *" $port "* ]]; do port="$(free_port)"; done
  echo "$port"
}

# The NodeName lines: one node named after this host with what `slurmd -C` reports (slurmd
# registers with exactly that, so the node is never rejected for a mismatch), or N nodes with a
# share of it each, registered larger than configured (config_overrides keeps the configured share).
node_lines() {
  local count="$1" ports="$2" hw cpus mem k port
  hw="$(slurmd -C 2>/dev/null | head -n 1)"
  case "$hw" in NodeName=*) ;; *) die "'slurmd -C' did not describe this node (is slurmd installed?)" ;; esac
  if [ "$count" -eq 1 ]; then
    # CPUs=.. Boards=.. SocketsPerBoard=.. CoresPerSocket=.. ThreadsPerCore=.. RealMemory=..
    echo "NodeName=$(hostname -s) NodeAddr=127.0.0.1 Port=${ports%% *} ${hw#NodeName=* } State=UNKNOWN"
    return
  fi
  cpus="$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<< "$hw")"
  mem="$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<< "$hw")"
  cpus=$((cpus / count)); [ "$cpus" -ge 1 ] || cpus=1
  mem=$((mem / count)); [ "$mem" -ge 1 ] || mem=1
  k=1
  for port in $ports; do
    echo "NodeName=node$k NodeAddr=127.0.0.1 Port=$port CPUs=$cpus RealMemory=$mem State=UNKNOWN"
    k=$((k + 1))
  done
}

write_config() {
  local count="$1" ctld_port ports="" k nodelist
  ctld_port="${SHARP_SLURM_CTLD_PORT:-$(free_port)}"
  for ((k = 0; k < count; k++)); do ports="$ports $(another_free_port "$ctld_port $ports")"; done
  ports="${ports# }"
  if [ "$count" -eq 1 ]; then nodelist="$(hostname -s)"; else nodelist="node[1-$count]"; fi
  cat > "$conf.tmp" <<EOF
# Generated by runners/slurm/local-cluster.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ): a cluster of
# $count node(s) on this machine whose state, logs and munge socket all live under $dir.
ClusterName=sharp-local
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$dir/state
# Per node (%n: the node name), since several slurmd share this machine.
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmdLogFile=$logs/slurmd-%n.log
# PMIx puts each step's directory spmix_appdir_<uid>_<job>.<step> in TmpFS: one per node, or two
# nodes of one MPI step would collide.
TmpFS=$dir/tmp/%n
SlurmctldPidFile=$ctld_pidfile
SlurmctldLogFile=$logs/slurmctld.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
# No cgroups needed: processes are tracked through /proc, tasks are not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
PropagateResourceLimits=NONE
SelectType=select/cons_tres
# Cores only: memory is not a consumable, so several array tasks share a node.
SelectTypeParameters=CR_Core
MpiDefault=pmix
# Quick turnaround for tests: schedule every second, kill 2 s after SIGTERM, keep finished jobs
# visible to scontrol for 10 minutes.
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1,batch_sched_delay=0,sched_min_interval=100000
KillWait=2
MinJobAge=600
MessageTimeout=10
# A node whose slurmd stops answering is down after 10 s; its jobs end (NODE_FAIL) and are not
# requeued: what is missing is for sharp-submit --resubmit-missing to find.
SlurmdTimeout=10
JobRequeue=0
InactiveLimit=0
ReturnToService=2
$(node_lines "$count" "$ports")
PartitionName=local Nodes=$nodelist Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$conf.tmp" "$conf"
}

start_munged() {
  if pid="$(live_pid "$munge_pidfile" munged)"; then say "munged already running (pid $pid)"; return 0; fi
  id munge >/dev/null 2>&1 || die "no 'munge' user (apt-get install munge)"
  # munged runs as the munge user and checks that every directory above its files is not
  # writable by others: the state directory must be reachable and safe.
  install -d -o munge -g munge -m 0755 "$munge_dir"
  runuser -u munge -- test -x "$munge_dir" ||
    die "the munge user cannot reach '$munge_dir' (make its parent directories world-searchable, e.g. chmod 755)"
  if [ ! -s "$munge_dir/munge.key" ]; then
    # A private key: this cluster trusts nobody else's credentials.
    dd if=/dev/urandom of="$munge_dir/munge.key.tmp" bs=1024 count=1 status=none
    chown munge:munge "$munge_dir/munge.key.tmp"
    chmod 0600 "$munge_dir/munge.key.tmp"
    mv "$munge_dir/munge.key.tmp" "$munge_dir/munge.key"
  fi
  rm -f "$munge_socket" "$munge_socket.lock"
  runuser -u munge -- /usr/sbin/munged --socket="$munge_socket" --key-file="$munge_dir/munge.key" \
    --pid-file="$munge_pidfile" --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" ||
    { tail -n 5 "$munge_dir/munged.log" >&2 || true; return 1; }
  wait_for "munged to answer" 15 bash -c "munge -n -S '$munge_socket' | unmunge -S '$munge_socket'" ||
    { tail -n 5 "$munge_dir/munged.log" >&2 || true; return 1; }
  say "munged running (pid $(live_pid "$munge_pidfile"), socket $munge_socket)"
}

start_slurmctld() {
  if pid="$(live_pid "$ctld_pidfile" slurmctld)"; then say "slurmctld already running (pid $pid)"; return 0; fi
  /usr/sbin/slurmctld -f "$conf" || { tail -n 20 "$logs/slurmctld.log" >&2 || true; return 1; }
  wait_for "slurmctld to answer 'scontrol ping'" "$start_timeout" \
    bash -c "scontrol ping | grep -q 'is UP'" || { tail -n 20 "$logs/slurmctld.log" >&2 || true; return 1; }
  say "slurmctld running (pid $(live_pid "$ctld_pidfile"))"
}

start_slurmd() {
  local node="$1" pidfile
  pidfile="$(slurmd_pidfile "$node")"
  if pid="$(live_pid "$pidfile" slurmd)"; then say "slurmd of $node already running (pid $pid)"; return 0; fi
  mkdir -p "$dir/spool/$node" "$dir/tmp/$node"
  /usr/sbin/slurmd -f "$conf" -N "$node" || { tail -n 20 "$(slurmd_log "$node")" >&2 || true; return 1; }
  wait_for "slurmd of $node to write its pid file" 15 live_pid "$pidfile" slurmd ||
    { tail -n 20 "$(slurmd_log "$node")" >&2 || true; return 1; }
  say "slurmd running (pid $(live_pid "$pidfile")), node $node, port $(sed -n "s/^NodeName=$node .*Port=\([0-9]*\).*/\1/p" "$conf")"
}

# True when every node is idle; a node down from an earlier kill-node is resumed on the way.
nodes_are_idle() {
  local line node state busy=0
  while read -r node state; do
    case "$state" in
      idle) ;;
      down*|drain*) scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true; busy=1 ;;
      *) busy=1 ;;
    esac
  done < <(sinfo -h -N -o '%N %T' 2>/dev/null)
  line="$(sinfo -h -N -o %N 2>/dev/null | wc -l)"
  [ "$busy" -eq 0 ] && [ "$line" -eq "$(config_nodes | wc -l)" ]
}

do_start() {
  [ "$(id -u)" -eq 0 ] || die "run as root (munged runs as the munge user, slurmd launches jobs as their owner)"
  for exe in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
    [ -x "$exe" ] || die "$exe not found (apt-get install slurm-wlm munge, or: make deps)"
  done
  if live_pid "$ctld_pidfile" slurmctld >/dev/null; then
    local running
    running="$(config_nodes | wc -l)"
    [ -z "$nodes_wanted" ] || [ "$nodes_wanted" -eq "$running" ] ||
      die "a cluster of $running node(s) already runs in $dir; stop it first for $nodes_wanted"
    say "already running in $dir"
  else
    # The state directory must be searchable by the munge user (mktemp -d makes it 0700).
    chmod 0755 "$dir"
    mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$logs"
    write_config "${nodes_wanted:-1}"
  fi
  # Whatever fails below, stop what was started: a failed start leaves no daemon behind.
  local ok=1 node
  if start_munged && start_slurmctld; then
    for node in $(config_nodes); do start_slurmd "$node" || { ok=0; break; }; done
  else
    ok=0
  fi
  if [ "$ok" -eq 0 ] || ! wait_for "every node to become idle" "$start_timeout" nodes_are_idle; then
    echo "local-cluster: start failed; logs in $logs and $munge_dir" >&2
    sinfo -N >&2 2>/dev/null || true
    do_stop >&2
    exit 1
  fi
  say "$(config_nodes | wc -l) node(s) idle: $(sinfo -h -N -o '%N (%c CPUs)' | tr '\n' ' ')"
  echo "export SLURM_CONF=$conf"
}

# Every descendant of the pids given (them included), one per line.
with_descendants() {
  [ $# -gt 0 ] || return 0
  ps -eo pid=,ppid= | awk -v roots="$*" '
    { parent[$1] = $2 }
    END {
      n = split(roots, r, " "); for (i = 1; i <= n; i++) mine[r[i]] = 1
      do { grew = 0; for (p in parent) if (!(p in mine) && (parent[p] in mine)) { mine[p] = 1; grew = 1 } } while (grew)
      for (p in mine) print p
    }'
}

# The slurmstepds of this cluster's node $1 (of every node when $1 is empty). A slurmstepd clears
# its environment and is reparented to init, but it keeps its node's slurmd log open: that names
# the node and the cluster.
stepd_pids() {
  local log="$logs/slurmd-${1:-}" p
  for p in $(ps -eo pid=,comm= | awk '$2 == "slurmstepd" {print $1}'); do
    if [ -n "${1:-}" ]; then
      find "/proc/$p/fd" -maxdepth 1 -lname "$log.log" 2>/dev/null | grep -q . && echo "$p"
    else
      find "/proc/$p/fd" -maxdepth 1 -lname "$log*.log" 2>/dev/null | grep -q . && echo "$p"
    fi
  done
  return 0
}

do_kill_node() {
  config_nodes | grep -qx -- "$victim" ||
    { echo "local-cluster: kill-node: '$victim' is not a node of this cluster (nodes: $(config_nodes | tr '\n' ' '))" >&2
      exit 2; }
  local pidfile slurmd_pid="" victims
  pidfile="$(slurmd_pidfile "$victim")"
  slurmd_pid="$(live_pid "$pidfile" slurmd)" || slurmd_pid=""
  # The whole tree at once, collected before any kill: a killed slurmstepd's children are
  # reparented and could no longer be told apart from other nodes' processes.
  # shellcheck disable=SC2046,SC2086  # pids
  victims="$(with_descendants $slurmd_pid $(stepd_pids "$victim") | sort -n | tr '\n' ' ')"
  if [ -z "${victims// /}" ]; then
    say "node $victim: nothing running"
    return 0
  fi
  # shellcheck disable=SC2086
  kill -KILL $victims 2>/dev/null || true
  rm -f "$pidfile"
  say "node $victim killed (SIGKILL): slurmd ${slurmd_pid:-(not running)}, processes $victims"
}

do_stop() {
  if live_pid "$ctld_pidfile" slurmctld >/dev/null; then
    # Cancel every job first: slurmd leaves running steps alone when it stops.
    local jobs
    jobs="$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')"
    if [ -n "${jobs// /}" ]; then
      say "cancelling jobs $jobs"
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      # shellcheck disable=SC2016  # expanded by the inner bash
      wait_for "cancelled jobs to end" 20 bash -c '[ -z "$(squeue -h -t R,CG,PD -o %A 2>/dev/null)" ]' || true
    fi
  fi
  local files=() file
  for file in "$dir"/run/slurmd-*.pid; do [ -e "$file" ] && files+=("$file"); done
  stop_daemons slurmd "${files[@]}"
  stop_daemons slurmctld "$ctld_pidfile"
  local strays
  # shellcheck disable=SC2046  # pids
  strays="$(with_descendants $(stepd_pids "") | tr '\n' ' ')"
  if [ -n "${strays// /}" ]; then
    say "killing processes left by jobs of this cluster: $strays"
    # shellcheck disable=SC2086
    kill -KILL $strays 2>/dev/null || true
  fi
  stop_daemons munged "$munge_pidfile"
  rm -f "$munge_socket" "$munge_socket.lock"
}

do_status() {
  local all=0 pid node
  if pid="$(live_pid "$munge_pidfile" munged)"; then echo "munged: running (pid $pid)"; else echo "munged: stopped"; all=1; fi
  if pid="$(live_pid "$ctld_pidfile" slurmctld)"; then echo "slurmctld: running (pid $pid)"; else echo "slurmctld: stopped"; all=1; fi
  for node in $(config_nodes); do
    if pid="$(live_pid "$(slurmd_pidfile "$node")" slurmd)"; then
      echo "slurmd $node: running (pid $pid)"
    else
      echo "slurmd $node: stopped"; all=1
    fi
  done
  [ -n "$(config_nodes)" ] || { echo "slurmd: no cluster configured in $dir"; all=1; }
  if live_pid "$ctld_pidfile" slurmctld >/dev/null; then
    sinfo -N -o '%N %T %c %m' 2>/dev/null || true
    squeue 2>/dev/null || true
  fi
  echo "state directory: $dir"
  echo "export SLURM_CONF=$conf"
  return $all
}

case "$action" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  kill-node) do_kill_node ;;
  env) echo "export SLURM_CONF=$conf" ;;
esac
