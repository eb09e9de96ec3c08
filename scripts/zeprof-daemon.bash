# zeprof: the LTTng session daemons of runs: one per run at a time, kept warm between runs.
# Sourced by zeprof (scripts/zeprof.in), whose variables and helpers it uses and sets; not run
# alone. Checked on its own, its variables look unassigned or unused (SC2154, SC2034).
# shellcheck shell=bash disable=SC2154,SC2034
#
# Isolation: a session daemon serves one run (or one job on a node, zeprof-job.bash) at a time,
# so a session records only the processes of its run. The program and its children register
# with that daemon alone: they get LTTNG_HOME=<slot>/home, and the daemon listens for
# applications on <slot>/home/.lttng/lttng-ust-sock-8 (--apps-sock), the socket lttng-ust looks
# for under LTTNG_HOME. As root the daemon's other sockets live in /var/run/lttng whatever
# LTTNG_HOME says, so it runs in a mount namespace of its own with a fresh tmpfs there: the
# machine's root daemon (if any) and other runs' daemons are never seen, and zeprof's lttng
# clients reach it with nsenter. The program itself stays in the machine's namespace.
#
# Warm reuse: a daemon is a "slot" directory, <state>/daemons/slot-XXXXXX (state: root
# /var/run/zeprof, a user ${TMPDIR:-/tmp}/zeprof-<uid>):
# - lock: a run holds an exclusive flock on it while it uses the daemon (and its finisher until
#   the session is destroyed); the kernel drops it however the run ends.
# - sessiond.pid: "<pid> <start time>" of the daemon (the start time guards against pid reuse).
# - idle: present while the daemon waits, session-less and with no application registered, for
#   the next run; its time stamp is when it became idle.
# - home/ (LTTNG_HOME of the daemon, the clients and the program), sessiond.log.
# A run takes an idle slot whose lock it can get, or starts a daemon in a new slot (and sets up
# its session the moment the daemon answers). A keeper process per
# slot (zeprof --daemon-keeper SLOT) stops the daemon once it has been idle for
# ZEPROF_DAEMON_IDLE seconds, or as soon as the lock is free without the slot being idle (its run
# was killed outright), and removes the slot. ZEPROF_DAEMON_IDLE=0: each run stops its daemon.

is_root=0
[ "$EUID" -eq 0 ] && is_root=1

slot=                    # the daemon slot this run uses
slot_lock_fd=            # its lock, while this run holds it
daemon_pid=              # the daemon this run's lttng clients talk to
daemon_warm=0            # 1 when the daemon was already running (an idle slot was reused)
client_home=             # LTTNG_HOME of zeprof's lttng clients
app_home=                # LTTNG_HOME of COMMAND
started_pid=             # set by start_daemon
session=                 # the session while this run owns it
app_pid=

# Where slots (and jobs, zeprof-job.bash) live. Computed once: every process a run starts before
# COMMAND delays it, so the functions on that path set variables instead of printing into $(...).
if [ "$is_root" -eq 1 ]; then
  zeprof_state_base=/var/run/zeprof
else
  zeprof_state_base=${TMPDIR:-/tmp}/zeprof-$EUID
fi
state_base() {
  echo "$zeprof_state_base"
}

# Sleeps $1 seconds without starting a process (read's timeout on a pipe nobody writes to).
pause_fd=
pause_s() {
  [ -n "$pause_fd" ] || exec {pause_fd}<> <(:)
  read -r -t "$1" -u "$pause_fd" _ || :
}

# Creates directory $1 (mode 0700) unless it exists; refuses one that is not ours or is a link
# (a user's state lives in a shared /tmp).
private_directory() {
  [ -d "$1" ] || mkdir -m 0700 "$1" 2>/dev/null
  [ -d "$1" ] && [ -O "$1" ] && [ ! -L "$1" ]
}

# The lttng client (or another LTTng control program), against the daemon $2 whose LTTNG_HOME is
# $1. The client never sees the shim, even when the caller's environment preloads it.
lttng_program_at() {
  local home=$1 pid=$2
  shift 2
  if [ "$is_root" -eq 1 ]; then
    nsenter --mount="/proc/$pid/ns/mnt" -- env -u LD_PRELOAD LTTNG_HOME="$home" "$@"
  else
    env -u LD_PRELOAD LTTNG_HOME="$home" "$@"
  fi
}

lttng_at() {
  local home=$1 pid=$2
  shift 2
  lttng_program_at "$home" "$pid" lttng "$@"
}

# Runs the lttng client against this run's daemon quietly; on failure its output goes to stderr.
lttng_quiet() {
  local output_text
  output_text=$(lttng_at "$client_home" "$daemon_pid" "$@" 2>&1) || {
    printf '%s\n' "$output_text" >&2
    return 1
  }
  [ "$verbose" -eq 0 ] || printf '%s\n' "$output_text" >&2
}

# Sets proc_state to the pid's process state letter (empty when it is gone) and proc_start to its
# start time (clock ticks after boot: with the pid, it names one process for good).
read_process() {
  local stat fields
  proc_state='' proc_start=''
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
  read -r -a fields <<<"${stat##*) }"
  proc_state=${fields[0]} proc_start=${fields[19]}
}

process_state() {
  read_process "$1"
  echo "$proc_state"
}

process_start_time() {
  read_process "$1"
  echo "$proc_start"
}

# True when pid $1 is a live lttng-sessiond (proc_start is then its start time).
is_live_sessiond() {
  local comm
  read_process "$1"
  [ -n "$proc_state" ] && [ "$proc_state" != Z ] &&
    read -r comm 2>/dev/null <"/proc/$1/comm" && [ "$comm" = lttng-sessiond ]
}

# Sets live_pid to the live session daemon that the pid file $1 names as "<pid> <start time>";
# empty when there is none.
find_live_daemon() {
  local pid start
  live_pid=
  read -r pid start 2>/dev/null <"$1" || return 0
  [ -n "$pid" ] && [ -n "$start" ] || return 0
  if is_live_sessiond "$pid" && [ "$proc_start" = "$start" ]; then
    live_pid=$pid
  fi
  return 0
}

# The same, printed.
live_daemon_in() {
  find_live_daemon "$1"
  [ -z "$live_pid" ] || echo "$live_pid"
}

# Process $1's descendants (a session daemon's consumer daemons and their helpers), one
# "<pid>:<start time>" a line.
descendants() {
  local line child
  while read -r line; do
    for child in $line; do
      read_process "$child"
      echo "$child:$proc_start"
      descendants "$child"
    done
  done < <(cat "/proc/$1/task/"*/children 2>/dev/null)
}

# True once none of the processes given ("<pid>:<start time>") lives (zombies are dead).
all_gone() {
  local process
  for process; do
    read_process "${process%%:*}"
    if [ -n "$proc_state" ] && [ "$proc_state" != Z ] && [ "$proc_start" = "${process#*:}" ]; then
      return 1
    fi
  done
}

# Kills with SIGKILL those of the processes given ("<pid>:<start time>") that still live.
kill_left() {
  local process
  for process; do
    all_gone "$process" || kill -KILL "${process%%:*}" 2>/dev/null
  done
}

# Stops a session daemon that zeprof started, and the consumer daemons it started (they end just
# after it, or are orphaned): TERM, a bounded wait, then KILL. By pid only.
stop_daemon() {
  local pid=$1 tries=0 daemon helpers
  is_live_sessiond "$pid" || { wait "$pid" 2>/dev/null; return 0; }
  say "stopping lttng-sessiond (pid $pid)"
  daemon=$pid:$proc_start   # is_live_sessiond read it
  mapfile -t helpers < <(descendants "$pid")
  kill -TERM "$pid" 2>/dev/null
  until all_gone "$daemon" "${helpers[@]}"; do
    if [ "$tries" -ge "$DAEMON_STOP_TRIES" ]; then
      echo "zeprof: lttng-sessiond (pid $pid) or its consumer did not end on TERM; killing them" >&2
      kill_left "$daemon" "${helpers[@]}"
      break
    fi
    pause_s 0.1
    tries=$((tries + 1))
  done
  wait "$pid" 2>/dev/null   # reaps it when it is our child
  return 0
}

# Takes an exclusive flock on file $1, waiting at most LOCK_TIMEOUT_S; the descriptor that holds
# it goes into the variable named $2.
lock_file() {
  local fd
  exec {fd}>"$1" || return 1
  flock -w "$LOCK_TIMEOUT_S" "$fd" || { exec {fd}>&-; return 1; }
  printf -v "$2" '%s' "$fd"
}

# Closes the descriptor held in the variable named $1 (so releases its lock) and empties it.
unlock_file() {
  local fd=${!1}
  [ -z "$fd" ] || exec {fd}>&-
  printf -v "$1" '%s' ''
}

# Closes, in a child about to run something else, every lock descriptor of this run: a daemon,
# keeper or program that inherited one would hold the lock after the run.
close_lock_fds() {
  local name fd
  for name in slot_lock_fd job_lock_fd job_users_fd; do
    fd=${!name:-}
    [ -z "$fd" ] || eval "exec $fd>&-"
  done
}

# Starts lttng-sessiond for LTTNG_HOME $1, logging to $2, in the background, as a child of zeprof in a session of its own (a Ctrl-C
# at the terminal must not reach it before the trace is closed). Sets started_pid: setsid,
# unshare (without --fork) and sh -c exec in place, so the pid is the daemon's. As root it runs
# in a new mount namespace with a fresh tmpfs on /var/run/lttng (created, empty, if the machine
# has none yet, as lttng-sessiond itself would).
start_daemon() {
  local home=$1 log=$2 arguments preload=(-u LD_PRELOAD)
  mkdir -p "$home/.lttng"
  arguments=(--no-kernel "--apps-sock=$home/.lttng/lttng-ust-sock-8")
  # The daemon (and its consumer daemons) get zeprof's short polls, nothing of the caller's.
  [ ! -e "$DAEMON_POLL" ] || preload=(LD_PRELOAD="$DAEMON_POLL")
  (
    close_lock_fds
    if [ "$is_root" -eq 1 ]; then
      # shellcheck disable=SC2016 # expanded by that sh
      exec env "${preload[@]}" LTTNG_HOME="$home" setsid unshare --mount --propagation private -- \
        sh -c 'mkdir -p /var/run/lttng && mount -t tmpfs zeprof-lttng /var/run/lttng &&
               exec lttng-sessiond "$@"' \
        zeprof-sessiond "${arguments[@]}"
    fi
    exec env "${preload[@]}" LTTNG_HOME="$home" setsid lttng-sessiond "${arguments[@]}"
  ) </dev/null >"$log" 2>&1 &
  started_pid=$!
}

# Waits until daemon $1 (LTTNG_HOME $2) answers; false if it died or did not get there in time
# (the job's daemon: zeprof-start waits by itself for a run's). As root the daemon is only asked
# once it is lttng-sessiond (so in its own namespace): before, nsenter would reach the caller's
# /var/run/lttng.
wait_daemon_ready() {
  local pid=$1 home=$2 tries=0
  while :; do
    read_process "$pid"
    if [ -z "$proc_state" ] || [ "$proc_state" = Z ]; then
      return 1
    fi
    if is_live_sessiond "$pid"; then
      lttng_at "$home" "$pid" list >/dev/null 2>&1 && return 0
    fi
    [ "$tries" -lt "$DAEMON_READY_TRIES" ] || return 1
    pause_s "$DAEMON_READY_POLL_S"
    tries=$((tries + 1))
  done
}

# ---------------------------------------------------------------------------------------------
# The session: created, configured and started by zeprof-start (scripts/zeprof-start.c) in one
# process, which also waits for a daemon that is still starting.

# Creates and starts session $1 recording into $2 on daemon $4 (LTTNG_HOME $3), waiting up to $5
# ms (default 0) for the daemon to answer. Its one-line reason goes to stderr on failure.
start_session_at() {
  local name=$1 directory=$2 home=$3 pid=$4 wait_ms=${5:-0} options
  # No procname: the shim records the process name once (zeprof_device:process).
  local contexts=vpid,vtid
  options=(--wait-ms="$wait_ms" --output="$directory" --subbuf-size="$subbuf_bytes"
           --num-subbuf="$num_subbuf" --metadata-subbuf-size="$METADATA_SUBBUF_SIZE"
           --context="$contexts")
  [ "$discard" -eq 1 ] || options+=(--blocking)
  lttng_program_at "$home" "$pid" "$START_TOOL" "${options[@]}" "$name" "$CHANNEL" "$EVENTS"
}

# Waits until the daemon $1 that start_daemon started runs lttng-sessiond (as root: in its own
# mount namespace, which zeprof's clients may then enter); false if it died first.
wait_daemon_exec() {
  local pid=$1 tries=0
  until is_live_sessiond "$pid"; do
    # is_live_sessiond read the state.
    if [ -z "$proc_state" ] || [ "$proc_state" = Z ] || [ "$tries" -ge "$DAEMON_READY_TRIES" ]; then
      return 1
    fi
    pause_s "$DAEMON_EXEC_POLL_S"
    tries=$((tries + 1))
  done
}

# Stops session $1 of daemon $3 (LTTNG_HOME $2) and returns once its trace is complete.
stop_session_at() {
  local name=$1 home=$2 pid=$3
  if [ -x "$STOP_TOOL" ]; then
    lttng_program_at "$home" "$pid" "$STOP_TOOL" "$name" && return 0
  fi
  lttng_at "$home" "$pid" stop "$name" >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------------------
# Slots

# True when descriptor $2 holds the file that path $1 names now (a slot removed and recreated
# meanwhile has another lock file).
holds_file() {
  [ -e "$1" ] && [ "$1" -ef "/proc/self/fd/$2" ]
}

# Locks slot $1's lock on fd $2 without waiting, but for an idle slot, whose lock is only ever
# held for a moment (its last run's release, its keeper's check).
try_lock_slot() {
  if [ -e "$1/idle" ]; then
    flock -w "$IDLE_SLOT_LOCK_WAIT_S" -x "$2"
  else
    flock -n -x "$2"
  fi
}

# Takes a reusable idle slot (sets slot, slot_lock_fd, daemon_pid); false when there is none.
# Slots that are neither in use nor idle (their run was killed) are cleared on the way, and with
# $1 = clear so are idle ones (nothing is to be kept warm).
claim_idle_slot() {
  local how=${1:-} dir fd pid
  for dir in "$zeprof_state_base"/daemons/slot-*/; do
    dir=${dir%/}
    [ -d "$dir" ] || continue
    exec {fd}>>"$dir/lock" || continue
    if try_lock_slot "$dir" "$fd" && holds_file "$dir/lock" "$fd"; then
      find_live_daemon "$dir/sessiond.pid"
      pid=$live_pid
      if [ -n "$pid" ] && [ -e "$dir/idle" ] && [ "$how" != clear ]; then
        rm -f "$dir/idle"
        slot=$dir slot_lock_fd=$fd daemon_pid=$pid
        return 0
      fi
      say "clearing the daemon slot $dir (idle, or its run was killed)"
      [ -z "$pid" ] || stop_daemon "$pid"
      rm -rf -- "$dir"
    fi
    exec {fd}>&-
  done
  return 1
}

# A new slot, locked: made under a name claim_idle_slot does not look at, then renamed.
new_slot() {
  local base fresh fd
  base=$zeprof_state_base/daemons
  fresh=$(mktemp -d "$base/new.XXXXXX") || return 1
  exec {fd}>>"$fresh/lock" || return 1
  flock -x "$fd"
  slot=$base/slot-${fresh##*.}
  mv -- "$fresh" "$slot" || { exec {fd}>&-; return 1; }
  slot_lock_fd=$fd
}

# Starts the keeper of the current slot (see the top of this file).
start_keeper() {
  local script
  # zeprof itself, not this sourced part; an absolute path without starting a process.
  case $0 in
    /*) script=$0 ;;
    *) script=$PWD/$0 ;;
  esac
  (
    close_lock_fds
    exec env -u LD_PRELOAD setsid bash "$script" --daemon-keeper "$slot" </dev/null >/dev/null 2>&1
  ) &
}

# The keeper's loop (zeprof --daemon-keeper SLOT).
daemon_keeper() {
  local dir=$1 pause_fd fd pid since now
  exec {pause_fd}<> <(:)
  while ! read -r -t "$KEEPER_POLL_S" -u "$pause_fd" _; do
    [ -d "$dir" ] || return 0
    exec {fd}>>"$dir/lock" || return 0
    if flock -n -x "$fd"; then
      holds_file "$dir/lock" "$fd" || return 0
      find_live_daemon "$dir/sessiond.pid"
      pid=$live_pid
      if [ -e "$dir/idle" ] && [ -n "$pid" ]; then
        since=$(stat -c %Y "$dir/idle" 2>/dev/null) || since=0
        printf -v now '%(%s)T' -1
        if [ $((now - since)) -lt "$daemon_idle_s" ]; then
          exec {fd}>&-
          continue
        fi
      fi
      # Idle long enough, gone, or abandoned by a run that was killed.
      [ -z "$pid" ] || stop_daemon "$pid"
      rm -rf -- "$dir"
      return 0
    fi
    exec {fd}>&-
  done
}

# Root: a daemon's mount namespace is made with unshare and entered with nsenter.
need_isolation_tools() {
  [ "$is_root" -eq 1 ] || return 0
  if ! command -v unshare >/dev/null 2>&1 || ! command -v nsenter >/dev/null 2>&1; then
    fail "unshare and nsenter (util-linux) are needed to isolate runs as root"
  fi
}

# Gets this run a daemon with its session $1 recording into $2: an idle one, or a new one.
daemon_acquire() {
  local name=$1 directory=$2 base reason
  base=$zeprof_state_base
  if ! private_directory "$base" || ! private_directory "$base/daemons"; then
    fail "cannot use $base (not a directory of ours)"
  fi
  command -v lttng-sessiond >/dev/null 2>&1 ||
    fail "LTTng is not installed (no 'lttng-sessiond' in PATH); install lttng-tools"
  need_isolation_tools
  if [ "$daemon_idle_s" -eq 0 ]; then
    claim_idle_slot clear
  elif claim_idle_slot; then
    daemon_warm=1
    client_home=$slot/home app_home=$slot/home
    say "reusing the idle lttng-sessiond (pid $daemon_pid) of $slot"
    session=$name
    start_session_at "$name" "$directory" "$client_home" "$daemon_pid" ||
      { session=; fail "cannot set up the LTTng session"; }
    return 0
  fi
  new_slot || fail "cannot create a daemon slot in $base/daemons"
  client_home=$slot/home app_home=$slot/home
  start_daemon "$slot/home" "$slot/sessiond.log"
  daemon_pid=$started_pid
  read_process "$daemon_pid"
  echo "$daemon_pid $proc_start" >"$slot/sessiond.pid"
  [ "$daemon_idle_s" -eq 0 ] || start_keeper
  say "started lttng-sessiond (pid $daemon_pid) in $slot"
  # The session is set up as soon as the daemon answers (zeprof-start waits for it).
  if ! wait_daemon_exec "$daemon_pid" ||
     ! start_session_at "$name" "$directory" "$client_home" "$daemon_pid" \
         "$DAEMON_ANSWER_TIMEOUT_MS" 2>"$slot/start.err"; then
    # The daemon's last word (its complaint about the open files limit is routine), else ours.
    reason=$(grep -v 'open files limit' "$slot/sessiond.log" 2>/dev/null | tail -n 1)
    [ -n "$reason" ] || reason=$(tail -n 1 "$slot/start.err" 2>/dev/null)
    daemon_release wait
    fail "the session daemon did not start: $reason"
  fi
  session=$name
}

# Ends this run's use of its daemon once the session is stopped: destroys the session and either
# leaves the daemon idle for the next run or stops it and removes the slot. Waits for all that
# with $1 = wait; otherwise a finisher in the background does it (destroying takes lttng-sessiond
# half a second, which the trace does not need) and holds the slot's lock until it is done.
daemon_release() {
  local how=${1:-}
  [ -n "$slot" ] || return 0
  if [ "$how" = wait ] || [ "$daemon_idle_s" -eq 0 ]; then
    finish_slot
  else
    (
      trap '' INT TERM HUP QUIT
      finish_slot
    ) </dev/null >/dev/null 2>&1 &
  fi
  [ -z "$slot_lock_fd" ] || exec {slot_lock_fd}>&-
  slot='' slot_lock_fd='' daemon_pid=
}

finish_slot() {
  local registered idle_ok=1
  if [ -n "$session" ]; then
    # The trace is complete already; a failure here (e.g. a full disk) only costs the reuse.
    lttng_at "$client_home" "$daemon_pid" destroy "$session" >/dev/null 2>&1 ||
      { say "cannot destroy session $session"; idle_ok=0; }
    session=
  fi
  # A process of the run that outlived it is still registered: the daemon is not reused, or the
  # next run would record it.
  registered=$(lttng_at "$client_home" "$daemon_pid" list -u 2>/dev/null) || registered='PID: ?'
  if [ "$daemon_idle_s" -gt 0 ] && [ "$idle_ok" -eq 1 ] && [[ $registered != *"PID: "* ]] &&
     find_live_daemon "$slot/sessiond.pid" && [ -n "$live_pid" ]; then
    : >"$slot/idle"
  else
    stop_daemon "$daemon_pid"
    rm -rf -- "$slot"
  fi
}
