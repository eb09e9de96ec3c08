# zeprof: the LTTng session daemon of a run (private for a user, shared per node as root).
# Sourced by zeprof (scripts/zeprof.in), whose variables and helpers it uses and sets; not run
# alone. Checked on its own, its variables look unassigned or unused (SC2154, SC2034).
# shellcheck shell=bash disable=SC2154,SC2034

# ---------------------------------------------------------------------------------------------
# Session daemon

is_root=0
[ "$(id -u)" -eq 0 ] && is_root=1

work_dir=                # private scratch directory
client_home=             # LTTNG_HOME of zeprof's lttng clients
app_home=                # LTTNG_HOME of COMMAND when it needs a private daemon's
own_daemon_pid=          # a private daemon this run started (normal user)
started_pid=             # set by start_daemon
node_lock_fd=            # root: the node's sessiond.lock while this run holds it
node_users_fd=           # root: shared lock held while this run uses the node's daemon
session=                 # the session while it exists
app_pid=

# Runs the lttng client quietly; on failure its output goes to stderr. The client never sees the
# shim, even when the caller's environment preloads it.
lttng_quiet() {
  local output_text
  output_text=$(env -u LD_PRELOAD LTTNG_HOME="$client_home" lttng "$@" 2>&1) || {
    printf '%s\n' "$output_text" >&2
    return 1
  }
  [ "$verbose" -eq 0 ] || printf '%s\n' "$output_text" >&2
}

daemon_answers() {
  env -u LD_PRELOAD LTTNG_HOME="$client_home" lttng list >/dev/null 2>&1
}

# The pid's process state letter, empty when it is gone.
process_state() {
  local stat
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
  stat=${stat##*) }
  echo "${stat%% *}"
}

# The pid's start time (clock ticks after boot): with the pid, it names one process for good.
process_start_time() {
  local stat fields
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
  read -r -a fields <<<"${stat##*) }"
  echo "${fields[19]}"
}

is_live_sessiond() {
  local state
  state=$(process_state "$1")
  [ -n "$state" ] && [ "$state" != Z ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = lttng-sessiond ]
}

# The pid of the live session daemon that the pid file $1 names as "<pid> <start time>" (the start
# time guards against pid reuse); empty when there is none.
live_daemon_in() {
  local pid start
  read -r pid start 2>/dev/null <"$1" || return 0
  [ -n "$pid" ] && [ -n "$start" ] || return 0
  is_live_sessiond "$pid" && [ "$(process_start_time "$pid")" = "$start" ] && echo "$pid"
  return 0
}

# Stops a session daemon that zeprof started: TERM, a bounded wait, then KILL. By pid only.
stop_daemon() {
  local pid=$1 tries=0 state
  is_live_sessiond "$pid" || { wait "$pid" 2>/dev/null; return 0; }
  say "stopping lttng-sessiond (pid $pid)"
  kill -TERM "$pid" 2>/dev/null
  while :; do
    state=$(process_state "$pid")
    if [ -z "$state" ] || [ "$state" = Z ]; then
      break
    fi
    if [ "$tries" -ge "$DAEMON_STOP_TRIES" ]; then
      echo "zeprof: lttng-sessiond (pid $pid) ignored TERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null
      break
    fi
    sleep 0.1
    tries=$((tries + 1))
  done
  wait "$pid" 2>/dev/null   # reaps it when it is our child
  return 0
}

# Starts lttng-sessiond (LTTNG_HOME=$1, output to the log file $2) in the background, as a child
# of zeprof in a session of its own: a Ctrl-C at the terminal must not reach it before the trace
# is closed. Sets started_pid (setsid does not fork here: a background child of a shell without
# job control is no process group leader, so the pid is the daemon's). It holds none of zeprof's
# lock descriptors.
start_daemon() {
  local home=$1 log=$2
  (
    [ -z "$node_lock_fd" ] || eval "exec $node_lock_fd>&-"
    [ -z "$node_users_fd" ] || eval "exec $node_users_fd>&-"
    [ -z "$job_lock_fd" ] || eval "exec $job_lock_fd>&-"
    [ -z "$job_users_fd" ] || eval "exec $job_users_fd>&-"
    exec env -u LD_PRELOAD LTTNG_HOME="$home" setsid lttng-sessiond --no-kernel </dev/null >"$log" 2>&1
  ) &
  started_pid=$!
}

# Waits until the daemon answers; false if it died or did not answer in time.
wait_daemon_ready() {
  local pid=$1 tries=0 state
  until daemon_answers; do
    state=$(process_state "$pid")
    if [ -z "$state" ] || [ "$state" = Z ]; then
      return 1
    fi
    [ "$tries" -lt "$DAEMON_READY_TRIES" ] || return 1
    sleep 0.1
    tries=$((tries + 1))
  done
}

# A run killed outright (SIGKILL) cannot clean up. Its scratch directory names the run
# (zeprof.pid) and, for a normal user, its private daemon (sessiond.pid), each as "<pid> <start
# time>". The next run of the same user stops such an orphaned daemon, by pid, and removes the
# directory. Directories of live runs, of other users, or not yet labelled are left alone.
reap_orphans() {
  local dir owner owner_start pid
  for dir in "${TMPDIR:-/tmp}"/zeprof.*/; do
    if [ ! -O "$dir" ] || [ ! -f "$dir/zeprof.pid" ]; then
      continue
    fi
    read -r owner owner_start 2>/dev/null <"$dir/zeprof.pid" || continue
    [ "$(process_start_time "$owner")" != "$owner_start" ] || continue   # its run is alive
    # Start times are counted from the reader's boot: a live run in another time namespace (a
    # container sharing /tmp) reads differently, and is left alone.
    if [ -e "/proc/$owner" ] &&
       [ "$(readlink "/proc/$owner/ns/time" 2>/dev/null)" != "$(readlink /proc/self/ns/time)" ]; then
      continue
    fi
    pid=$(live_daemon_in "$dir/sessiond.pid")
    if [ -n "$pid" ]; then
      say "stopping lttng-sessiond (pid $pid) of a zeprof run that was killed"
      stop_daemon "$pid"
    fi
    rm -rf -- "$dir"
  done
}

# Normal user: a daemon of our own with a private LTTNG_HOME, which the program shares.
daemon_acquire_private() {
  command -v lttng-sessiond >/dev/null 2>&1 ||
    fail "LTTng is not installed (no 'lttng-sessiond' in PATH); install lttng-tools"
  client_home=$work_dir
  app_home=$work_dir
  start_daemon "$work_dir" "$work_dir/sessiond.log"
  own_daemon_pid=$started_pid
  echo "$own_daemon_pid $(process_start_time "$own_daemon_pid")" >"$work_dir/sessiond.pid"
  say "started a private lttng-sessiond (pid $own_daemon_pid, LTTNG_HOME=$work_dir)"
  wait_daemon_ready "$own_daemon_pid" ||
    fail "the session daemon did not start: $(tail -n 1 "$work_dir/sessiond.log" 2>/dev/null)"
}

daemon_release_private() {
  [ -n "$own_daemon_pid" ] || return 0
  stop_daemon "$own_daemon_pid"
  own_daemon_pid=
}

# Root: one daemon per node, shared by concurrent zeprof runs (and by the ranks of a job later).
# - sessiond.lock: exclusive flock around every decision to start or stop the daemon.
# - sessiond.users: every run holds a shared flock on it while it uses the daemon; the kernel drops
#   it when the run ends however it ends, so the count cannot leak. Whoever can take it exclusively
#   (under sessiond.lock) is the last user.
# - sessiond.pid: "<pid> <start time>" of the daemon zeprof started. A daemon it does not name
#   (start time included, against pid reuse) is someone else's and is never stopped.
# The pid of the live daemon that sessiond.pid names; empty when there is none.
node_daemon_pid() {
  live_daemon_in "$NODE_STATE_DIR/sessiond.pid"
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

node_lock() {
  lock_file "$NODE_STATE_DIR/sessiond.lock" node_lock_fd
}

node_unlock() {
  unlock_file node_lock_fd
}

daemon_acquire_root() {
  local pid
  # The client's LTTNG_HOME only holds its .lttngrc: keep it away from root's own.
  client_home=$work_dir
  [ -d "$NODE_STATE_DIR" ] || mkdir -m 0700 "$NODE_STATE_DIR" 2>/dev/null || fail "cannot create $NODE_STATE_DIR"
  node_lock || fail "cannot lock $NODE_STATE_DIR/sessiond.lock"
  exec {node_users_fd}>"$NODE_STATE_DIR/sessiond.users" || fail "cannot open $NODE_STATE_DIR/sessiond.users"
  # Cannot block: an exclusive holder holds sessiond.lock too, and we hold that.
  flock -s "$node_users_fd"

  pid=$(node_daemon_pid)
  [ -n "$pid" ] || rm -f "$NODE_STATE_DIR/sessiond.pid"   # stale: that daemon is gone
  if daemon_answers; then
    if [ -n "$pid" ]; then
      say "sharing the node's lttng-sessiond (pid $pid) started by zeprof"
    else
      say "using the running root session daemon (not zeprof's; it will not be stopped)"
    fi
  else
    command -v lttng-sessiond >/dev/null 2>&1 ||
      fail "LTTng is not installed (no 'lttng-sessiond' in PATH); install lttng-tools"
    [ -z "$pid" ] || stop_daemon "$pid"   # alive but not answering: ours, and broken
    mkdir -p "$NODE_STATE_DIR/home"
    start_daemon "$NODE_STATE_DIR/home" "$NODE_STATE_DIR/sessiond.log"
    pid=$started_pid
    echo "$pid $(process_start_time "$pid")" >"$NODE_STATE_DIR/sessiond.pid"
    say "started the node's lttng-sessiond (pid $pid)"
    if ! wait_daemon_ready "$pid"; then
      stop_daemon "$pid"
      rm -f "$NODE_STATE_DIR/sessiond.pid"
      fail "the session daemon did not start: $(tail -n 1 "$NODE_STATE_DIR/sessiond.log" 2>/dev/null)"
    fi
  fi
  node_unlock
}

daemon_release_root() {
  local probe_fd pid
  [ -n "$node_users_fd" ] || { node_unlock; return 0; }
  # After a failure in daemon_acquire_root we may still hold the lock.
  if [ -z "$node_lock_fd" ] && ! node_lock; then
    echo "zeprof: cannot lock $NODE_STATE_DIR/sessiond.lock; leaving the session daemon running" >&2
    exec {node_users_fd}>&-
    node_users_fd=
    return 0
  fi
  exec {node_users_fd}>&-
  node_users_fd=
  exec {probe_fd}>"$NODE_STATE_DIR/sessiond.users"
  if flock -n -x "$probe_fd"; then
    pid=$(node_daemon_pid)
    [ -z "$pid" ] || stop_daemon "$pid"
    rm -f "$NODE_STATE_DIR/sessiond.pid"
  else
    say "other zeprof runs still use the session daemon; leaving it running"
  fi
  exec {probe_fd}>&-
  node_unlock
}
