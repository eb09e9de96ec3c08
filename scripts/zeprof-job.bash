# zeprof: the node's session of a job, shared by the job's ranks on the node.
# Sourced by zeprof (scripts/zeprof.in), whose variables and helpers it uses and sets; not run
# alone. Checked on its own, its variables look unassigned or unused (SC2154, SC2034).
# shellcheck shell=bash disable=SC2154,SC2034

# ---------------------------------------------------------------------------------------------
# The node's session of a job, shared by the job's ranks on this node.
#
# State in job_dir (state_base/job-<id>: root /var/run/zeprof, a user $TMPDIR/zeprof-<uid>):
# - lock: an exclusive flock around every decision to create or close the session.
# - users: every rank's wrapper holds a shared flock on it from before its program starts until
#   after it has ended; the kernel drops it however the wrapper ends. Whoever can take it
#   exclusively (under lock) is the last user and closes the session.
# - session: "<session name>" and "<its output directory>", written once tracing is live.
# - closed: the name of the session closed last (the node's reducer checks it before delivering).
# - home/, sessiond.pid, sessiond.log: the job's session daemon on this node, started as a run's
#   (start_daemon: LTTNG_HOME and application socket of its own, as root in a mount namespace of
#   its own), so two jobs on a node never record each other's processes. Not kept warm.
# The directory stays (a few bytes): a rank still waiting on the old lock file could otherwise
# lock a file that a newcomer recreated.

job_dir=
job_lock_fd=             # job_dir/lock while this wrapper holds it
job_users_fd=            # shared lock on job_dir/users while this rank uses the session
job_session=             # the session this rank recorded in (to tell when it is closed)
job_node_dir=            # <output>/<hostname>: the node's trace directory
job_wait_abandoned=0     # rank 0: a signal came while it waited for the node's other ranks
job_closed_session=      # the session this process closed (job_close_session), to reduce
job_closed_directory=    # and its trace directory
job_inputs=()            # rank 0 after job_gather: the delivered nodes' directories
job_missing=()           # and the nodes (host names) that delivered nothing in time
job_unseen=0             # and how many of the launcher's nodes wrote no directory at all

# lttng client for the daemon of job directory $1.
job_lttng() {
  local dir=$1 pid
  shift
  pid=$(job_daemon_pid "$dir")
  [ -n "$pid" ] || return 1
  lttng_at "$dir/home" "$pid" "$@"
}

job_lock() {
  lock_file "$job_dir/lock" job_lock_fd
}

job_unlock() {
  unlock_file job_lock_fd
}

# True when nobody uses the session of job directory $1 (call under its lock).
job_unused() {
  local fd status=1
  exec {fd}>"$1/users" || return 1
  flock -n -x "$fd" && status=0
  exec {fd}>&-
  return "$status"
}

# The live daemon that $1/sessiond.pid names; empty when there is none.
job_daemon_pid() {
  live_daemon_in "$1/sessiond.pid"
}

# Closes the session of job directory $1 and stops the job's daemon. Under the job's lock, by
# its last user (or by whoever finds that its users are all gone). The trace is complete once
# the session is stopped; stopping the daemon destroys it.
job_close_session() {
  local dir=$1 name='' directory='' pid closer start
  pid=$(job_daemon_pid "$dir")
  { read -r name && read -r directory; } 2>/dev/null <"$dir/session"
  if [ -n "$name" ] && [ -n "$pid" ]; then
    say "closing the node's session $name"
    stop_session_at "$name" "$dir/home" "$pid" ||
      echo "zeprof: cannot stop session $name" >&2
  fi
  if [ -n "$name" ]; then
    job_closed_session=$name
    job_closed_directory=$directory
    printf '%s\n' "$name" >"$dir/closed"
  fi
  rm -f "$dir/session"
  # The session's closer has nothing left to do.
  if read -r closer start 2>/dev/null <"$dir/closer.pid" && [ "$closer" != "$$" ] &&
     [ "$(process_start_time "$closer")" = "$start" ]; then
    kill -TERM "$closer" 2>/dev/null
  fi
  rm -f "$dir/closer.pid"
  [ -z "$pid" ] || stop_daemon "$pid"
  rm -f "$dir/sessiond.pid"
}

# Ranks killed outright (every wrapper of a node) cannot close their session: the next zeprof run
# of the same user on the node does, for every job whose users are all gone. A job busy right now
# (its lock taken) is left for later.
reap_stale_jobs() {
  local dir fd
  for dir in "$(state_base)"/job-*/; do
    dir=${dir%/}
    if [ ! -f "$dir/lock" ] || [ ! -O "$dir" ]; then continue; fi
    [ -f "$dir/session" ] || [ -f "$dir/sessiond.pid" ] || continue
    [ "$dir" != "$job_dir" ] || continue
    exec {fd}>"$dir/lock" || continue
    if flock -n "$fd" && job_unused "$dir"; then
      say "closing the session of a job whose ranks were killed: $dir"
      job_close_session "$dir"
      job_closed_session=    # not this run's to reduce: zeprof -r reads its raw trace
    fi
    exec {fd}>&-
  done
}

# The job's session daemon on this node, started by the first rank (or adopted).
job_daemon_acquire() {
  local pid
  client_home=$job_dir/home
  app_home=$job_dir/home
  mkdir -p "$job_dir/home" || fail "cannot create $job_dir/home"
  pid=$(job_daemon_pid "$job_dir")
  if [ -n "$pid" ] && job_lttng "$job_dir" list >/dev/null 2>&1; then
    daemon_pid=$pid
    return 0
  fi
  command -v lttng-sessiond >/dev/null 2>&1 ||
    fail "LTTng is not installed (no 'lttng-sessiond' in PATH); install lttng-tools"
  need_isolation_tools
  [ -z "$pid" ] || stop_daemon "$pid"   # alive but not answering: broken
  start_daemon "$job_dir/home" "$job_dir/sessiond.log"
  pid=$started_pid
  echo "$pid $(process_start_time "$pid")" >"$job_dir/sessiond.pid"
  say "started the job's lttng-sessiond on this node (pid $pid, LTTNG_HOME=$job_dir/home)"
  if ! wait_daemon_ready "$pid" "$job_dir/home"; then
    stop_daemon "$pid"
    rm -f "$job_dir/sessiond.pid"
    fail "the session daemon did not start: $(grep -v 'open files limit' "$job_dir/sessiond.log" 2>/dev/null | tail -n 1)"
  fi
  daemon_pid=$pid
}

# The node's session, created by the first rank. Its trace goes to <output>/<hostname>; a later
# session of the same job on the node (ranks that came after the others had all ended, or after
# a session was lost) goes to a numbered subdirectory of it, which zeprof-merge reads as part of
# the same host. A directory that holds something else is refused.
job_create_session() {
  local directory=$job_node_dir marker previous number=1
  marker=$job_node_dir/.zeprof-job
  if [ -d "$directory" ] && [ -n "$(ls -A -- "$directory")" ]; then
    read -r previous 2>/dev/null <"$marker" || previous=
    [ "$previous" = "$job_id" ] || fail "the output directory is not empty: $directory"
    while [ -e "$directory/session-$number" ]; do number=$((number + 1)); done
    directory=$directory/session-$number
  fi
  mkdir -p -- "$directory" || fail "cannot create the output directory: $directory"
  [ -e "$marker" ] || echo "$job_id" >"$marker"
  # What the node delivered for its earlier sessions no longer covers its trace.
  rm -f -- "$job_node_dir/$NODE_PARTIAL" "$job_node_dir/$NODE_REDUCE_FAILED"
  session=zeprof-$HOSTNAME-$$-${EPOCHREALTIME/[.,]/}
  start_session_at "$session" "$directory" "$client_home" "$daemon_pid" ||
    { session=; fail "cannot set up the LTTng session"; }
  if ! printf '%s\n%s\n' "$session" "$directory" >"$job_dir/session.new" ||
     ! mv -f "$job_dir/session.new" "$job_dir/session"; then
    fail "cannot write $job_dir/session"
  fi
  say "rank $job_rank set up the node's session $session into $directory"
  job_session=$session
  job_start_closer
  session=    # the job's, no longer this wrapper's alone: closed by the last user
}

# The closer: a process of its own, in a session of its own (a launcher that kills its ranks,
# e.g. mpirun on Ctrl-C with SIGTERM and then SIGKILL 1 s later, kills their process groups and
# may cut their teardown short), that closes the node's session (and stops its daemon) once the
# session has no user left, however its ranks ended. It holds none of the locks.
job_start_closer() {
  local script
  local options=()
  script=$(readlink -f -- "$0") || return 0   # zeprof itself, not this sourced part
  [ "$reduce" -eq 1 ] || options=(--no-reduce)
  (
    close_lock_fds
    exec env -u LD_PRELOAD setsid bash "$script" "${options[@]}" --job-closer "$job_dir" \
      "$job_session" </dev/null >/dev/null 2>&1
  ) &
}

# The closer's loop: until the session is closed by someone else, or closed here once unused.
job_closer() {
  local name pause_fd
  job_dir=$1
  job_session=$2
  mkdir -p "$job_dir/home"
  client_home=$job_dir/home
  echo "$$ $(process_start_time $$)" >"$job_dir/closer.pid"
  # Pauses with a read that times out (a pipe nobody writes to): no sleep child, so a TERM from
  # whoever closes the session first ends the closer at once, leaving nothing behind.
  exec {pause_fd}<> <(:)
  while ! read -r -t "$JOB_CLOSER_POLL_S" -u "$pause_fd" _; do
    job_lock || continue
    read -r name 2>/dev/null <"$job_dir/session" || name=
    if [ "$name" != "$job_session" ]; then
      job_unlock
      return 0
    fi
    if job_unused "$job_dir"; then
      job_close_session "$job_dir"
      job_unlock
      job_reduce
      return 0
    fi
    job_unlock
  done
}

# Joins the node's session, creating it when there is none; returns once tracing is live.
job_join() {
  local name base
  base=$(state_base)
  job_dir=$base/job-$job_id
  job_node_dir=$output/$(uname -n)
  # A normal user's base is in a shared /tmp: ours, private, and no symbolic link.
  [ -d "$base" ] || mkdir -m 0700 "$base" 2>/dev/null
  if [ ! -d "$base" ] || [ ! -O "$base" ] || [ -L "$base" ]; then
    fail "cannot use $base (not a directory of ours)"
  fi
  mkdir -p "$job_dir" || fail "cannot create $job_dir"
  job_lock || fail "cannot lock $job_dir/lock"
  # A session whose users are all gone was left by wrappers killed outright: close it first.
  if [ -f "$job_dir/session" ] && job_unused "$job_dir"; then
    job_close_session "$job_dir"
    job_closed_session=    # the session started below covers the node's trace: its closer reduces
  fi
  exec {job_users_fd}>"$job_dir/users" || fail "cannot open $job_dir/users"
  # Cannot block: an exclusive holder holds the job's lock too, and we hold that.
  flock -s "$job_users_fd"
  job_daemon_acquire
  name=
  read -r name 2>/dev/null <"$job_dir/session" || name=
  if [ -n "$name" ] && job_lttng "$job_dir" list "$name" >/dev/null 2>&1; then
    job_session=$name
    say "rank $job_rank joins the node's session $name"
  else
    [ -z "$name" ] || echo "zeprof: the node's session $name is gone; starting another" >&2
    rm -f "$job_dir/session"
    job_create_session
  fi
  job_unlock
}

# Leaves the node's session; the last user closes it. With $1 = wait (rank 0 before analysing),
# returns only once the node's session is closed, by whoever was last: when the other users all
# vanish (killed outright), this rank closes it itself.
job_leave() {
  local wait=${1:-} name
  if [ -z "$job_users_fd" ]; then
    job_unlock
    return 0
  fi
  if [ -z "$job_lock_fd" ] && ! job_lock; then
    echo "zeprof: cannot lock $job_dir/lock; leaving the node's session open" >&2
    exec {job_users_fd}>&-
    job_users_fd=
    return 0
  fi
  exec {job_users_fd}>&-
  job_users_fd=
  while :; do
    read -r name 2>/dev/null <"$job_dir/session" || name=
    # Closed (or replaced by a later session) already.
    if [ -z "$name" ] || [ "$name" != "$job_session" ]; then break; fi
    if job_unused "$job_dir"; then
      job_close_session "$job_dir"
      break
    fi
    [ "$wait" = wait ] || { say "other ranks still record on this node"; break; }
    if [ "$job_wait_abandoned" -eq 1 ]; then
      echo "zeprof: interrupted while other ranks still record on this node; no analysis" >&2
      break
    fi
    job_unlock
    sleep "$JOB_CLOSE_POLL_S"
    job_lock || { echo "zeprof: cannot lock $job_dir/lock" >&2; return 0; }
  done
  job_unlock
}

# ---------------------------------------------------------------------------------------------
# The node's partial: its trace reduced where it was recorded (docs/cluster.md, "The job's tally").
#
# Whoever closed the node's session (its last rank, or its closer) reduces the node's whole trace
# (<output>/<hostname>, later sessions' subdirectories included) right away, so every node
# reduces in parallel with the others. The result is delivered into the node's directory under a
# lock: NODE_PARTIAL (zeprof-merge --reduce's file), or NODE_REDUCE_FAILED (one line: why) when
# the reduction failed, whose raw trace is complete all the same. Delivered only if no later
# session of the job started on the node meanwhile (that one's closer reduces again); a new
# session removes what was delivered before (job_create_session).

# Reduces after job_close_session closed a session here; nothing to do otherwise.
job_reduce() {
  local node temporary reason status closed started
  [ -n "$job_closed_session" ] && [ -n "$job_closed_directory" ] || return 0
  [ "$reduce" -eq 1 ] || return 0
  node=${job_closed_directory%/session-[0-9]*}
  [ -d "$node" ] || return 0
  temporary=$node/.zeprof-partial.$$
  if merger_missing; then
    reason="zeprof-merge is not built: $MERGE"
    status=2
  else
    say "reducing the node's trace $node (at most ${reduce_timeout_s} s)"
    # timeout(1) signals the reducer (and its -J workers, its process group) by pid.
    started=$SECONDS
    reason=$(timeout --kill-after="$REDUCE_KILL_GRACE_S" "$reduce_timeout_s" \
      "$MERGE" --reduce "$node" -o "$temporary" 2>&1 >/dev/null)
    status=$?
    reason=${reason##*$'\n'}
    if [ "$status" -eq 124 ] || { [ "$status" -eq 137 ] &&
         [ $((SECONDS - started)) -ge "$reduce_timeout_s" ]; }; then
      # timed out: stopped by SIGTERM, or by SIGKILL after the grace
      reason="zeprof-merge --reduce did not finish within ${reduce_timeout_s} s (ZEPROF_REDUCE_TIMEOUT)"
      rm -f -- "$temporary".tmp.*   # the killed reducer's own temporary file
    elif [ -z "$reason" ]; then
      reason="zeprof-merge --reduce exited with status $status"
    fi
  fi
  if [ "$status" -ne 0 ]; then
    echo "zeprof: cannot reduce the trace of $(uname -n): $reason; zeprof -r reads its raw" \
      "trace" >&2
    rm -f -- "$temporary"
    printf '%s\n' "$reason" >"$temporary" || { rm -f -- "$temporary"; return 0; }
  fi
  if job_lock; then
    read -r closed 2>/dev/null <"$job_dir/closed" || closed=
    if [ "$closed" = "$job_closed_session" ] && [ ! -f "$job_dir/session" ]; then
      if [ "$status" -eq 0 ]; then
        mv -f -- "$temporary" "$node/$NODE_PARTIAL" && say "delivered $node/$NODE_PARTIAL"
      else
        mv -f -- "$temporary" "$node/$NODE_REDUCE_FAILED"
      fi
    else
      say "a later session records on this node; its closer reduces the node's trace"
    fi
    job_unlock
  fi
  rm -f -- "$temporary"
}

# Rank 0, its own node closed: waits until every node of the job has delivered (its partial, or
# the word that its reduction failed), at most partial_wait_s seconds. The nodes are the job's
# directories in the shared output directory $1 (those whose .zeprof-job names the job: each made
# by its node's first rank before any program there started), and at least as many as the
# launcher says (job_nodes) when every rank is traced. Sets job_inputs (the delivered nodes'
# directories), job_missing (the host names of the nodes that delivered nothing) and job_unseen
# (nodes the launcher counts that wrote no directory: they never started, or the output
# directory is not shared). A signal (job_wait_abandoned) ends the wait early. Each look lists
# the output directory once and reads only what it has not seen yet (on a shared file system
# with many nodes, every file opened costs).
job_gather() {
  local output_dir=$1 node id deadline expected=0 count
  local -A seen=()        # node directory -> other (another job's), waiting, delivered
  [ -z "$job_nodes" ] || [ -n "$traced_ranks" ] || expected=$job_nodes
  deadline=$((SECONDS + partial_wait_s))
  while :; do
    job_inputs=()
    job_missing=()
    count=0
    for node in "$output_dir"/*/; do
      node=${node%/}
      if [ -z "${seen[$node]:-}" ]; then
        read -r id 2>/dev/null <"$node/.zeprof-job" || continue   # not set up yet
        if [ "$id" = "$job_id" ]; then seen[$node]=waiting; else seen[$node]=other; fi
      fi
      [ "${seen[$node]}" != other ] || continue
      count=$((count + 1))
      if [ "${seen[$node]}" = waiting ] &&
         { [ -f "$node/$NODE_PARTIAL" ] || [ -f "$node/$NODE_REDUCE_FAILED" ]; }; then
        seen[$node]=delivered
      fi
      if [ "${seen[$node]}" = delivered ]; then
        job_inputs+=("$node")
      else
        job_missing+=("${node##*/}")
      fi
    done
    job_unseen=$((expected > count ? expected - count : 0))
    if [ ${#job_missing[@]} -eq 0 ] && [ "$job_unseen" -eq 0 ]; then return 0; fi
    [ "$SECONDS" -lt "$deadline" ] && [ "$job_wait_abandoned" -eq 0 ] || return 1
    sleep "$PARTIAL_POLL_S"
  done
}
