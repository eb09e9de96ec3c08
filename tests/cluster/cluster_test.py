#!/usr/bin/env python3
"""Cluster jobs under zeprof: ranks of a job share one session per node, traces merge by host.

    cluster_test.py CASE

Run inside `tests/harness/with-lttng --no-daemon` (meson does). Paths come from the environment
that tests/cluster/meson.build sets: CLUSTER_ZEPROF, CLUSTER_APP (tests/e2e's e2e_app) and
ZE_ENABLE_ALT_DRIVERS. The ranks are started by hand with a launcher's variables (Open MPI,
Slurm, ...), by Debian's Open MPI mpirun, or on four simulated hosts (tests/multihost/testbed.py).
Exit 0 when every check of CASE holds, 77 when CASE cannot run here (no mpirun; not root).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'multihost'))
sys.path.insert(0, os.path.join(HERE, '..', 'harness'))
from checks import check, exit_status, lttng_processes_left  # noqa: E402

ZEPROF = os.environ.get('CLUSTER_ZEPROF', '')
APP = os.environ.get('CLUSTER_APP', '')
SHIM = os.environ.get('CLUSTER_SHIM', '')
MERGE = os.environ.get('CLUSTER_MERGE', '')
RUN_TIMEOUT_S = 120
SKIP = 77

def environment(**changes):
    env = dict(os.environ)
    env.update(changes)
    return env


def openmpi_rank(rank, local_rank, local_size, namespace):
    """The variables Open MPI's mpirun gives a rank (as it runs here, one node)."""
    return {'OMPI_COMM_WORLD_RANK': str(rank), 'OMPI_COMM_WORLD_LOCAL_RANK': str(local_rank),
            'OMPI_COMM_WORLD_LOCAL_SIZE': str(local_size), 'OMPI_COMM_WORLD_SIZE': '4',
            'PMIX_RANK': str(rank), 'PMIX_NAMESPACE': namespace}


def slurm_rank(rank, job, step):
    return {'SLURM_PROCID': str(rank), 'SLURM_LOCALID': str(rank), 'SLURM_NODEID': '0',
            'SLURM_STEP_TASKS_PER_NODE': '4', 'SLURM_JOB_ID': job, 'SLURM_STEP_ID': step,
            'SLURM_NTASKS': '4'}


# ---------------------------------------------------------------------------------------------
# Traces, tallies, leftovers

def metadata_dirs(directory):
    return sorted(root for root, _, files in os.walk(directory) if 'metadata' in files)


def tally(directories, extended=False):
    """zeprof -r -j [-e] DIRS as a dict (empty when it failed)."""
    completed = subprocess.run([ZEPROF, '-r', '-j'] + (['-e'] if extended else []) + directories,
                               capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    check(completed.returncode == 0, f'zeprof -r analyses {directories}', completed.stderr[-400:])
    try:
        return json.loads(completed.stdout)
    except ValueError:
        return {}


def api_calls(summary, name):
    return sum(row.get('calls', 0) for row in summary.get('api', []) if row.get('name') == name)


def check_no_daemon_left(what, namespace=None, patience_s=0):
    """No LTTng daemon left; with patience, once the node's closer (which polls) has had time."""
    left = lttng_processes_left(namespace)
    deadline = time.monotonic() + patience_s
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = lttng_processes_left(namespace)
    if left is None:
        print(f'# {what}: leftover daemons not checked (root outside a private namespace)')
        return
    check(not left, f'{what}: no LTTng daemon left behind', str(left))


# ---------------------------------------------------------------------------------------------
# Ranks started by hand

class Rank:
    """One rank's zeprof wrapper around e2e_app, with its launcher variables."""

    def __init__(self, work, rank, variables, mode='calls', options=(), exit_status=None):
        self.rank = rank
        self.log = os.path.join(work, f'rank{rank}.log')
        self.ready = os.path.join(work, f'rank{rank}.ready')
        command = [APP, mode, self.log] + ([self.ready] if mode == 'wait-signal' else [])
        if exit_status is not None:
            command = ['sh', '-c', '"$@"; exit ' + str(exit_status), 'sh'] + command
        self.process = subprocess.Popen(
            [ZEPROF] + list(options) + ['--'] + command, cwd=work,
            env=environment(**variables), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        self.stdout = self.stderr = ''

    def app_pid(self):
        """The program's pid: the wrapper's child that runs e2e_app (the rank that started the
        node's session daemon has that as a child too). None when there is none."""
        return self.child_pid('e2e_app')

    def child_pid(self, command):
        """The pid of the wrapper's child whose command name is COMMAND, or None."""
        try:
            with open(f'/proc/{self.process.pid}/task/{self.process.pid}/children') as children:
                pids = [int(pid) for pid in children.read().split()]
        except OSError:
            return None
        for pid in pids:
            try:
                with open(f'/proc/{pid}/comm') as comm:
                    if comm.read().strip() == command:
                        return pid
            except OSError:
                continue
        return None

    def finish(self):
        try:
            self.stdout, self.stderr = self.process.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.stdout, self.stderr = self.process.communicate()
        return self.process.returncode


def wait_ready(ranks):
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        if all(os.path.exists(rank.ready) for rank in ranks):
            return True
        if any(rank.process.poll() is not None for rank in ranks):
            return False
        time.sleep(0.05)
    return False


def signal_logged(log_path):
    with open(log_path) as log:
        return any(line.startswith('signal 2') for line in log)


def check_one_node_trace(node_dir, processes, what):
    """The node's ranks wrote one trace (one session), which counts every rank's program."""
    check(os.path.isdir(node_dir), f'{what}: the node trace is at <output>/<hostname>', node_dir)
    check(len(metadata_dirs(node_dir)) == 1, f'{what}: one trace for the node',
          str(metadata_dirs(node_dir)))
    summary = tally([node_dir])
    check(summary.get('hosts') == 1 and summary.get('processes') == processes,
          f'{what}: the tally has 1 host and {processes} processes',
          str({k: summary.get(k) for k in ('hosts', 'processes')}))
    check(api_calls(summary, 'zeInit') == processes,
          f'{what}: zeInit is counted once per rank', str(api_calls(summary, 'zeInit')))
    return summary


# ---------------------------------------------------------------------------------------------
# Cases

def loader_of(rank):
    """The file e2e_app's zeInit came from ("loader <path>" in its log), resolved."""
    try:
        with open(rank.log) as log:
            for line in log:
                if line.startswith('loader '):
                    return os.path.realpath(line.split(' ', 1)[1].strip())
    except OSError:
        pass
    return ''


def case_fake_ranks(work):
    """Four wrappers with Open MPI's variables, then four with Slurm's: one session per node, all
    ranks' calls in it, each wrapper returns its rank's status, rank 0 alone prints the tally.
    The Slurm ranks run with --traced-ranks 1-3: rank 0 runs untraced and prints no tally, the
    node's trace holds ranks 1 to 3 alone; a job whose node has no traced rank writes nothing."""
    ranks = [Rank(work, r, openmpi_rank(r, r, 4, '4242'), options=['-j'],
                  exit_status=5 if r == 3 else None) for r in range(4)]
    statuses = [rank.finish() for rank in ranks]
    check(statuses == [0, 0, 0, 5], 'each wrapper exits with its rank\'s status', str(statuses))
    node_dir = os.path.join(work, 'zeprof-trace', '4242', socket.gethostname())
    summary = check_one_node_trace(node_dir, 4, 'Open MPI')
    try:
        printed = json.loads(ranks[0].stdout)
    except ValueError:
        printed = {}
    check(api_calls(printed, 'zeInit') == 4 and printed.get('processes') == 4,
          'rank 0 prints the node\'s tally (-j) once the node\'s last rank has ended',
          ranks[0].stdout[:300] + ranks[0].stderr[-300:])
    check(all(not rank.stdout for rank in ranks[1:]), 'the other ranks print no tally')
    check(f'zeprof -r {os.path.dirname(node_dir)}/*' in ranks[0].stderr,
          'rank 0 says how to merge the job', ranks[0].stderr[-300:])
    check_no_daemon_left('Open MPI ranks')
    check(api_calls(summary, 'zeContextCreate') == 8, 'zeContextCreate: 2 per rank',
          str(api_calls(summary, 'zeContextCreate')))

    slurm = [Rank(work, 10 + r, slurm_rank(r, '777', '3'), options=['-j', '--traced-ranks', '1-3'],
                  exit_status=6 if r == 0 else None) for r in range(4)]
    statuses = [rank.finish() for rank in slurm]
    check(statuses == [6, 0, 0, 0], 'Slurm ranks exit with their status, traced or not',
          str(statuses) + ''.join(rank.stderr for rank in slurm)[-400:])
    shim = os.path.realpath(SHIM)
    loaders = [loader_of(rank) for rank in slurm]
    check(loaders[0] not in ('', shim) and loaders[1:] == [shim] * 3,
          '--traced-ranks 1-3: rank 0 calls the real loader, ranks 1 to 3 the shim', str(loaders))
    node_dir = os.path.join(work, 'zeprof-trace', '777.3', socket.gethostname())
    check_one_node_trace(node_dir, 3, 'Slurm (<job>.<step>), ranks 1-3 traced')
    expected, traced = {logged_pid(rank.log) for rank in slurm[1:]}, traced_pids(node_dir)
    check(traced == expected, 'the node trace holds the traced ranks\' processes alone',
          f'{traced} != {expected}')
    check(not slurm[0].stdout and 'rank 0 is not traced' in slurm[0].stderr,
          'an untraced rank 0 prints no tally, and says why', slurm[0].stderr[-300:])
    check_no_daemon_left('Slurm ranks', patience_s=5)

    untraced = Rank(work, 20, openmpi_rank(1, 1, 1, '999'), options=['--traced-ranks', '0,2-5'])
    check(untraced.finish() == 0 and loader_of(untraced) not in ('', shim),
          'a rank left out of --traced-ranks runs untraced', untraced.stderr[-300:])
    check(not os.path.exists(os.path.join(work, 'zeprof-trace', '999')),
          'a node without a traced rank writes no trace directory')


def logged_pid(log_path):
    """The pid of the e2e_app that wrote log_path (its main thread's tid)."""
    with open(log_path) as log:
        for line in log:
            words = line.split()
            if len(words) == 4 and words[0] == 'main':
                return int(words[1])
    return None


def traced_pids(node_dir):
    """The pids with zeInit calls in a node's trace (tally -e rows)."""
    return {row.get('pid') for row in tally([node_dir], extended=True).get('api', [])
            if row.get('name') == 'zeInit'}


def case_two_jobs(work):
    """Two jobs on one node at once (one waiting for a signal while the other runs to its end):
    each node trace holds its own job's ranks and nobody else's."""
    waiting = [Rank(work, r, openmpi_rank(r, r, 2, '31'), mode='wait-signal',
                    options=['--no-analysis']) for r in range(2)]
    if not check(wait_ready(waiting), 'the first job\'s ranks are under way'):
        for rank in waiting:
            rank.process.kill()
            rank.finish()
        return
    quick = [Rank(work, 10 + r, openmpi_rank(r, r, 2, '32'), options=['--no-analysis'])
             for r in range(2)]
    statuses = [rank.finish() for rank in quick]
    check(statuses == [0, 0], 'the second job succeeds meanwhile',
          ''.join(rank.stderr for rank in quick)[-400:])
    for rank in waiting:
        pid = rank.app_pid()
        if pid:
            os.kill(pid, signal.SIGINT)
    statuses = [rank.finish() for rank in waiting]
    check(statuses == [0, 0], 'the first job succeeds', ''.join(r.stderr for r in waiting)[-400:])
    host = socket.gethostname()
    for job, ranks in [('31', waiting), ('32', quick)]:
        node_dir = os.path.join(work, 'zeprof-trace', job, host)
        check_one_node_trace(node_dir, 2, f'job {job}')
        own = {logged_pid(rank.log) for rank in ranks}
        pids = traced_pids(node_dir)
        check(pids == own, f'job {job}: the trace holds its own ranks only',
              f'{sorted(pids, key=str)} vs {sorted(own, key=str)}')
    check_no_daemon_left('two jobs', patience_s=10)


def case_detection(work):
    """Every launcher's variables name the rank, local rank and size, and the job directory; a
    node that Slurm counts but that never wrote its directory ends rank 0's bounded wait; a node
    whose reduction fails is tallied from its raw trace."""
    launchers = [
        ('Open MPI', openmpi_rank(1, 1, 4, '99'), 'rank 1 (local rank 1 of 4) of job 99'),
        ('PALS', {'PALS_RANKID': '5', 'PALS_LOCAL_RANKID': '1', 'PALS_LOCAL_SIZE': '2',
                  'PALS_APID': 'ab12', 'PBS_JOBID': '123.pbs01.example'},
         'rank 5 (local rank 1 of 2) of job 123.ab12'),
        ('MPICH', {'PMI_RANK': '3', 'MPI_LOCALRANKID': '0', 'MPI_LOCALNRANKS': '2',
                   'SLURM_JOB_ID': '55'}, 'rank 3 (local rank 0 of 2) of job 55'),
        ('PMIx', {'PMIX_RANK': '2', 'PMIX_NAMESPACE': 'prterun-vm-1@1'},
         'rank 2 (local rank ? of ?) of job prterun-vm-1_1'),
        ('Slurm', {'SLURM_PROCID': '6', 'SLURM_LOCALID': '2', 'SLURM_NODEID': '1',
                   'SLURM_STEP_TASKS_PER_NODE': '4,3(x2)', 'SLURM_JOB_ID': '9',
                   'SLURM_STEP_ID': '0'}, 'rank 6 (local rank 2 of 3) of job 9.0'),
    ]
    for index, (name, variables, expected) in enumerate(launchers):
        directory = os.path.join(work, f'detect{index}')
        os.makedirs(directory)
        completed = subprocess.run([ZEPROF, '-v', '--no-analysis', 'true'], cwd=directory,
                                   env=environment(**variables), capture_output=True, text=True,
                                   timeout=RUN_TIMEOUT_S)
        check(completed.returncode == 0, f'{name}: the rank runs', completed.stderr[-300:])
        check(f'{expected} ({name})' in completed.stderr, f'{name}: {expected}',
              completed.stderr[:300])
        job = expected.rsplit(' ', 1)[1]
        check(os.path.isdir(os.path.join(directory, 'zeprof-trace', job, socket.gethostname())),
              f'{name}: the trace is in zeprof-trace/{job}/<hostname>',
              str(list(os.walk(directory))[:3]))
    plain = subprocess.run([ZEPROF, '-v', '--no-analysis', 'true'], cwd=work,
                           env=environment(SLURM_JOB_ID='9'), capture_output=True, text=True,
                           timeout=RUN_TIMEOUT_S)
    check(plain.returncode == 0 and ' of job ' not in plain.stderr,
          'a batch job\'s variables without a rank (a job script) make no rank',
          plain.stderr[:300])
    # Slurm says the step has two nodes; the other never comes (or does not share the output
    # directory): rank 0 waits ZEPROF_PARTIAL_WAIT, says so, and tallies its own node.
    alone = subprocess.run(
        [ZEPROF, '-j', '--', 'sh', '-c', '"$0" calls "$1"; exit 3', APP,
         os.path.join(work, 'alone.log')], cwd=work, capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S,
        env=environment(SLURM_PROCID='0', SLURM_LOCALID='0', SLURM_NODEID='0',
                        SLURM_STEP_TASKS_PER_NODE='1(x2)', SLURM_STEP_NUM_NODES='2',
                        SLURM_JOB_ID='56', SLURM_STEP_ID='1', ZEPROF_PARTIAL_WAIT='1'))
    try:
        printed = json.loads(alone.stdout)
    except ValueError:
        printed = {}
    check(alone.returncode == 3 and '1 node(s) of the job wrote no trace directory' in alone.stderr
          and printed.get('hosts') == 1 and api_calls(printed, 'zeInit') == 1,
          'a node that Slurm counts but that wrote nothing: rank 0 says so after its wait, '
          'tallies its own node and returns its program\'s status',
          f'{alone.returncode} {alone.stderr[-400:]}')
    check_failed_reduction(work)
    check_hung_reduction(work)
    check_no_daemon_left('detection')


REFUSING_MERGE = '''#!/bin/sh
# zeprof-merge that refuses --reduce (as on a full disk) and does everything else.
for argument; do
  if [ "$argument" = --reduce ]; then
    echo "Failed to write partial: path=x, reason=refused by the test" >&2
    exit 2
  fi
done
exec "$REAL_MERGE" "$@"
'''

# zeprof-merge whose --reduce hangs and ignores SIGTERM (as on a trace babeltrace2 hangs on),
# leaving its temporary file; its pid and its child's go to $HUNG_PIDS. Does everything else.
HUNG_MERGE = '''#!/bin/sh
for argument; do
  if [ "$argument" = --reduce ]; then
    trap '' TERM
    while [ $# -gt 1 ]; do shift; done
    : >"$1.tmp.hung"
    sleep 600 &
    echo "$$ $!" >"$HUNG_PIDS"
    wait
    exit 0
  fi
done
exec "$REAL_MERGE" "$@"
'''


def with_merge(directory, script):
    """A copy of zeprof in `directory` whose zeprof-merge is `script` (written there)."""
    os.makedirs(directory)
    merge = os.path.join(directory, 'zeprof-merge')
    with open(merge, 'w') as out:
        out.write(script)
    os.chmod(merge, 0o755)
    zeprof = os.path.join(directory, 'zeprof')
    with open(ZEPROF) as original, open(zeprof, 'w') as copy:
        copy.write(''.join(f"readonly MERGE='{merge}'\n" if line.startswith('readonly MERGE=')
                           else line for line in original))
    os.chmod(zeprof, 0o755)
    return zeprof


def run_failing_reduction(directory, script, job, **extra_env):
    """One traced rank 0 of a one-node job under a zeprof whose reducer is `script`: the
    completed run and its node directory."""
    zeprof = with_merge(directory, script)
    completed = subprocess.run(
        [zeprof, '-j', '--', APP, 'calls', os.path.join(directory, 'app.log')], cwd=directory,
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
        env=environment(REAL_MERGE=MERGE, ZEPROF_PARTIAL_WAIT='20',
                        **openmpi_rank(0, 0, 1, job), **extra_env))
    return completed, os.path.join(directory, 'zeprof-trace', job, socket.gethostname())


def check_raw_tally(completed, node_dir):
    """Rank 0 printed the tally of the node's raw trace, without waiting for a partial."""
    raw = subprocess.run([MERGE, '-j', node_dir], capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    check(raw.returncode == 0 and completed.stdout == raw.stdout and 'no partial within' not in
          completed.stderr, 'rank 0 tallies that node\'s raw trace at once',
          completed.stdout[:300] + completed.stderr[-300:])


def check_failed_reduction(work):
    """A node whose reduction fails delivers the word (.zeprof-reduce-failed) and no partial: its
    rank says so, rank 0 does not wait for it and tallies its raw trace."""
    completed, node_dir = run_failing_reduction(os.path.join(work, 'refusing'), REFUSING_MERGE,
                                                '606')
    with_marker = os.path.isfile(os.path.join(node_dir, '.zeprof-reduce-failed'))
    check(completed.returncode == 0 and with_marker and 'cannot reduce the trace of' in
          completed.stderr and not os.path.exists(os.path.join(node_dir, 'zeprof.partial')),
          'a failed reduction: one line, .zeprof-reduce-failed delivered, no partial',
          f'{completed.returncode} {completed.stderr[-400:]}')
    check_raw_tally(completed, node_dir)


def check_hung_reduction(work):
    """A reducer that hangs, deaf to SIGTERM, is killed by its pid after ZEPROF_REDUCE_TIMEOUT
    and the grace: the run ends with its program's status, one line says why, the node delivers
    the word and no partial or temporary file, and rank 0 tallies the raw trace."""
    directory = os.path.join(work, 'hung')
    pids_file = os.path.join(work, 'hung.pids')
    started = time.monotonic()
    completed, node_dir = run_failing_reduction(directory, HUNG_MERGE, '607',
                                                ZEPROF_REDUCE_TIMEOUT='2', HUNG_PIDS=pids_file)
    elapsed = time.monotonic() - started
    try:
        with open(pids_file) as pids:
            hung = [int(pid) for pid in pids.read().split()]
    except (OSError, ValueError):
        hung = []
    alive = [pid for pid in hung if os.path.exists(f'/proc/{pid}')]
    leftovers = [name for name in os.listdir(node_dir) if name.startswith('.zeprof-partial')]
    check(completed.returncode == 0 and len(hung) == 2 and not alive and elapsed < 60 and
          'did not finish within 2 s (ZEPROF_REDUCE_TIMEOUT)' in completed.stderr and
          os.path.isfile(os.path.join(node_dir, '.zeprof-reduce-failed')) and not leftovers and
          not os.path.exists(os.path.join(node_dir, 'zeprof.partial')),
          'a hung reduction is killed after ZEPROF_REDUCE_TIMEOUT: one line, the word '
          'delivered, nothing left behind',
          f'{completed.returncode} {elapsed:.1f} s, pids {hung} alive {alive}, left {leftovers}: '
          f'{completed.stderr[-400:]}')
    check_raw_tally(completed, node_dir)


def job_dir(job):
    """The node's state directory of a job (zeprof's, see scripts/zeprof.in)."""
    if os.geteuid() == 0:
        return f'/var/run/zeprof/job-{job}'
    return os.path.join(os.environ['TMPDIR'], f'zeprof-{os.geteuid()}', f'job-{job}')


def case_mpirun(work):
    """Debian's Open MPI starts four ranks of zeprof on one machine; Ctrl-C of mpirun (which
    sends SIGTERM to every rank, then SIGKILL a second later) leaves an analysable trace."""
    mpirun = subprocess.run(['sh', '-c', 'command -v mpirun'], capture_output=True, text=True)
    if mpirun.returncode != 0:
        print('SKIP: no mpirun (Debian: openmpi-bin)')
        return SKIP
    env = environment(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1',
                      OMPI_MCA_rmaps_base_oversubscribe='1')
    output = os.path.join(work, 'out')
    per_rank = ('exec "$0" calls "$1.$OMPI_COMM_WORLD_RANK"; ')
    completed = subprocess.run(
        ['mpirun', '--allow-run-as-root', '--oversubscribe', '-n', '4', ZEPROF, '-j', '-o', output,
         '--', 'sh', '-c', per_rank, APP, os.path.join(work, 'rank')],
        cwd=work, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    check(completed.returncode == 0, 'mpirun -n 4 zeprof succeeds', completed.stderr[-600:])
    try:
        printed = json.loads(completed.stdout)
    except ValueError:
        printed = {}
    check(api_calls(printed, 'zeInit') == 4 and printed.get('processes') == 4,
          'one tally (rank 0\'s) with the four ranks\' calls', completed.stdout[:300])
    check_one_node_trace(os.path.join(output, socket.gethostname()), 4, 'mpirun')
    check_no_daemon_left('mpirun')

    failing = subprocess.run(
        ['mpirun', '--allow-run-as-root', '--oversubscribe', '-n', '2', ZEPROF, '--no-analysis',
         '-o', os.path.join(work, 'failing'), '--', 'sh', '-c',
         'exit $((OMPI_COMM_WORLD_RANK + 3))'],
        cwd=work, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    check(failing.returncode in (3, 4), 'the job\'s status is the programs\'',
          f'{failing.returncode}: {failing.stderr[-300:]}')
    check_no_daemon_left('mpirun with failing ranks')

    ready = os.path.join(work, 'ready')
    interrupted = subprocess.Popen(
        ['mpirun', '--allow-run-as-root', '--oversubscribe', '-n', '4', ZEPROF, '--no-analysis',
         '-o', os.path.join(work, 'interrupted'), '--', 'sh', '-c',
         'exec "$0" wait-signal "$1.$OMPI_COMM_WORLD_RANK" "$2.$OMPI_COMM_WORLD_RANK"', APP,
         os.path.join(work, 'waiting'), ready],
        cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while (not all(os.path.exists(f'{ready}.{r}') for r in range(4))
           and interrupted.poll() is None and time.monotonic() < deadline):
        time.sleep(0.05)
    check(interrupted.poll() is None, 'four ranks are under way under mpirun')
    interrupted.send_signal(signal.SIGINT)
    try:
        interrupted.wait(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        interrupted.kill()
        interrupted.wait()
    check_no_daemon_left('Ctrl-C of mpirun', patience_s=30)
    summary = tally([os.path.join(work, 'interrupted', socket.gethostname())])
    check(api_calls(summary, 'zeInit') == 4, 'after Ctrl-C of mpirun the trace holds every rank',
          str(summary.get('api', [])[:2]))
    return 0


def case_killed_rank(work):
    """One rank's program is killed (SIGKILL), another rank's wrapper is killed outright: the
    other ranks are not held up, the trace is analysable, and no daemon is left. Then every
    wrapper of a node killed outright: the node's closer closes the session and reduces the
    trace into the node's partial, whose tally is the raw trace's."""
    ranks = [Rank(work, r, openmpi_rank(r, r, 4, '31'), mode='wait-signal',
                  options=['--no-analysis']) for r in range(4)]
    if not check(wait_ready(ranks), 'four ranks are under way'):
        for rank in ranks:
            rank.process.kill()
            rank.finish()
        return
    killed_app = ranks[1].app_pid()
    orphan = ranks[2].app_pid()
    os.kill(killed_app, signal.SIGKILL)
    check(ranks[1].finish() == 137, 'the wrapper of the killed program returns 137')
    os.kill(ranks[2].process.pid, signal.SIGKILL)     # its program lives on, an orphan
    ranks[2].process.wait()     # (its output pipes stay open as long as the orphan runs)
    for rank in (ranks[0], ranks[3]):
        rank.process.send_signal(signal.SIGINT)
    os.kill(orphan, signal.SIGINT)
    statuses = [ranks[0].finish(), ranks[3].finish()]
    check(statuses == [0, 0], 'the other ranks end with their programs\' status',
          str(statuses) + ranks[0].stderr[-300:] + ranks[3].stderr[-300:])
    ranks[2].finish()
    check(signal_logged(ranks[0].log) and signal_logged(ranks[3].log),
          'their programs got SIGINT from their wrappers')
    node_dir = os.path.join(work, 'zeprof-trace', '31', socket.gethostname())
    summary = tally([node_dir])
    check(api_calls(summary, 'zeInit') == 4 and summary.get('processes') == 4,
          'the trace is analysable and holds every rank\'s calls',
          str({k: summary.get(k) for k in ('processes', 'anomalies')}))
    check_no_daemon_left('after a killed program and a killed wrapper', patience_s=30)

    ranks = [Rank(work, 10 + r, openmpi_rank(r, r, 2, '32'), mode='wait-signal')
             for r in range(2)]
    if not check(wait_ready(ranks), 'two ranks of another job are under way'):
        for rank in ranks:
            rank.process.kill()
            rank.finish()
        return
    apps = [rank.app_pid() for rank in ranks]
    for rank in ranks:
        os.kill(rank.process.pid, signal.SIGKILL)
        rank.process.wait()
    for pid in apps:
        os.kill(pid, signal.SIGINT)
    for rank in ranks:
        rank.finish()
    node_dir = os.path.join(work, 'zeprof-trace', '32', socket.gethostname())
    partial = os.path.join(node_dir, 'zeprof.partial')
    deadline = time.monotonic() + 30     # the closer polls twice a second, then reduces
    while not os.path.exists(partial) and time.monotonic() < deadline:
        time.sleep(0.1)
    check(os.path.isfile(partial), 'every wrapper killed: the closer delivers the node\'s partial',
          str(os.listdir(node_dir)))
    raw = subprocess.run([MERGE, '-j', node_dir], capture_output=True, text=True,
                         timeout=RUN_TIMEOUT_S)
    summary = tally([partial])
    check(raw.returncode == 0 and json.loads(raw.stdout or '{}') == summary
          and api_calls(summary, 'zeInit') == 2,
          'its partial\'s tally is the raw trace\'s, with both ranks\' calls', raw.stderr[-300:])
    check_no_daemon_left('after every wrapper of a node was killed', patience_s=30)


def case_sigint(work):
    """SIGINT to every wrapper at once (Ctrl-C of the launcher): programs get it, the node's
    trace is closed and analysable, no daemon is left."""
    ranks = [Rank(work, r, slurm_rank(r, '88', '0'), mode='wait-signal',
                  options=['--no-analysis']) for r in range(4)]
    if not check(wait_ready(ranks), 'four ranks are under way'):
        for rank in ranks:
            rank.process.kill()
            rank.finish()
        return
    for rank in ranks:
        rank.process.send_signal(signal.SIGINT)
    statuses = [rank.finish() for rank in ranks]
    check(statuses == [0] * 4, 'every wrapper returns its program\'s status', str(statuses))
    check(all(signal_logged(rank.log) for rank in ranks), 'every program got SIGINT')
    check_one_node_trace(os.path.join(work, 'zeprof-trace', '88.0', socket.gethostname()), 4,
                         'SIGINT')
    check_no_daemon_left('SIGINT to every rank')

    # Rank 0, its program done, waits for the node's other rank before analysing: a signal then
    # ends the wait (no analysis) but not the node's recording, which the other rank closes.
    waiting = Rank(work, 20, slurm_rank(1, '89', '0'), mode='wait-signal',
                   options=['--no-analysis'])
    if not check(wait_ready([waiting]), 'rank 1 is under way'):
        waiting.process.kill()
        waiting.finish()
        return
    first = Rank(work, 21, slurm_rank(0, '89', '0'))
    # Signal rank 0 only once its program has ended and the wrapper waits for its node: that wait
    # polls with sleep(1), so a sleep child after the program's log exists is the sign. Neither
    # the program's absence from the children list (which can miss a running child) nor its log
    # (a full stdio buffer reaches the file while the program runs) proves the program ended.
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline and first.process.poll() is None:
        if os.path.exists(first.log) and first.child_pid('sleep') is not None:
            break
        time.sleep(0.05)
    first.process.send_signal(signal.SIGTERM)
    status = first.finish()
    check(status == 0 and 'no analysis' in first.stderr and not first.stdout,
          'a signal ends rank 0\'s wait for its node: its program\'s status, no analysis',
          f'status {status}, stdout {first.stdout[-200:]!r}, stderr {first.stderr[-300:]!r}')
    waiting.process.send_signal(signal.SIGINT)
    check(waiting.finish() == 0, 'the node\'s other rank ends normally', waiting.stderr[-300:])
    check_one_node_trace(os.path.join(work, 'zeprof-trace', '89.0', socket.gethostname()), 2,
                         'rank 0 interrupted while waiting')
    check_no_daemon_left('rank 0 interrupted while waiting')


def case_stale(work):
    """Every wrapper of a node and the node's closer killed outright: their session and daemon
    outlive them, and the next zeprof run of the user on the node closes that session and stops
    the daemon."""
    ranks = [Rank(work, r, openmpi_rank(r, r, 2, '61'), mode='wait-signal',
                  options=['--no-analysis']) for r in range(2)]
    if not check(wait_ready(ranks), 'two ranks are under way'):
        for rank in ranks:
            rank.process.kill()
            rank.finish()
        return
    apps = [rank.app_pid() for rank in ranks]
    # The node's closer would close the session once the wrappers are gone: kill it first (as a
    # batch system that kills every process of a job step would).
    with open(os.path.join(job_dir('61'), 'closer.pid')) as closer:
        os.kill(int(closer.read().split()[0]), signal.SIGKILL)
    for rank in ranks:
        os.kill(rank.process.pid, signal.SIGKILL)
        rank.process.wait()
    for pid in apps:
        os.kill(pid, signal.SIGINT)
    for rank in ranks:
        rank.finish()     # once the orphaned programs have closed the output pipes
    left = lttng_processes_left()
    if left is not None:
        check(any(name == 'lttng-sessiond' for _, name in left),
              'the killed wrappers left their session daemon', str(left))
    later = subprocess.run([ZEPROF, '--no-analysis', '-o', os.path.join(work, 'later'), 'true'],
                           cwd=work, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    check(later.returncode == 0, 'the next run succeeds', later.stderr[-300:])
    check_no_daemon_left('after the next run')
    summary = tally([os.path.join(work, 'zeprof-trace', '61', socket.gethostname())])
    check(api_calls(summary, 'zeInit') == 2, 'the killed wrappers\' trace is analysable',
          str(summary.get('api', [])[:3]))


# The four-node job: host, its ranks.
NODES = [('alpha', [0, 1]), ('beta', [2, 3]), ('gamma', [4]), ('delta', [5])]
# Each host starts its ranks (zeprof with Open MPI's variables, options in $OPTIONS), each rank's
# stdout and stderr in files of its own, and $JOB.<rank>.exited once its zeprof has ended; exits 0
# when every rank did, else the first failure. Rank 3's program exits 7; rank 0's waits (30 s at
# most) for the files in $RANK0_WAITS_FOR before it ends.
NODE_SCRIPT = r'''
cd "$WORK" || exit 1
program='"$0" calls "$1"; s=$(($2 == 3 ? 7 : 0))
if [ "$2" = 0 ]; then
  for f in $RANK0_WAITS_FOR; do
    n=0; until [ -e "$f" ] || [ $n -ge 600 ]; do sleep 0.05; n=$((n + 1)); done
  done
fi
exit $s'
for r in $RANKS; do
  (
    OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_LOCAL_RANK=$r OMPI_COMM_WORLD_LOCAL_SIZE=$LOCAL \
      OMPI_COMM_WORLD_SIZE=6 OMPI_MCA_orte_num_nodes=4 PMIX_NAMESPACE=$JOB \
      "$ZEPROF" $OPTIONS -- sh -c "$program" "$APP" "$WORK/$JOB.$r.log" "$r" \
      >"$WORK/$JOB.$r.stdout" 2>"$WORK/$JOB.$r.stderr"
    s=$?
    touch "$WORK/$JOB.$r.exited"
    exit $s
  ) &
done
s=0
for r in $RANKS; do wait -n || { c=$?; [ $s -ne 0 ] || s=$c; }; done
readlink /proc/self/ns/mnt >"$WORK/$(hostname).ns"
exit $s
'''


def run_job(bed, hosts, work, job, options_of, rank0_waits_for=()):
    """One job across the hosts (options_of(host name) gives its ranks' zeprof options; rank 0's
    program ends once the files rank0_waits_for exist); returns the hosts' statuses, and each
    rank's (stdout, stderr)."""
    processes = []
    for host, (name, ranks) in zip(hosts, NODES):
        host.env.update({'WORK': work, 'ZEPROF': ZEPROF, 'APP': APP, 'JOB': job,
                         'RANK0_WAITS_FOR': ' '.join(rank0_waits_for),
                         'RANKS': ' '.join(map(str, ranks)), 'LOCAL': str(len(ranks)),
                         'OPTIONS': ' '.join(options_of(name)),
                         'ZE_ENABLE_ALT_DRIVERS': os.environ['ZE_ENABLE_ALT_DRIVERS']})
        processes.append(host.start(['bash', '-c', NODE_SCRIPT],
                                    os.path.join(work, f'{job}.{name}.out')))
    statuses = [process.wait(timeout=RUN_TIMEOUT_S) for process in processes]
    outputs = {}
    for _, ranks in NODES:
        for rank in ranks:
            with open(os.path.join(work, f'{job}.{rank}.stdout')) as out, \
                 open(os.path.join(work, f'{job}.{rank}.stderr')) as err:
                outputs[rank] = (out.read(), err.read())
    return statuses, outputs


def merged(arguments):
    """zeprof-merge ARGUMENTS (raw traces): its stdout, or '' when it failed."""
    completed = subprocess.run([MERGE] + arguments, capture_output=True, text=True,
                               timeout=RUN_TIMEOUT_S)
    check(completed.returncode == 0, f'zeprof-merge {arguments[-1]} ...', completed.stderr[-300:])
    return completed.stdout if completed.returncode == 0 else ''


def replayed(arguments):
    """zeprof -r ARGUMENTS: its stdout, or '' when it failed."""
    completed = subprocess.run([ZEPROF, '-r'] + arguments, capture_output=True, text=True,
                               timeout=RUN_TIMEOUT_S)
    check(completed.returncode == 0, f'zeprof -r {arguments[-1]} ...', completed.stderr[-300:])
    return completed.stdout if completed.returncode == 0 else ''


def case_four_nodes(work):
    """A job on four simulated hosts (2, 2, 1 and 1 ranks): one trace per host in the shared
    output directory; each node's last rank reduces its trace into a partial, and rank 0 prints
    the job's tally (device telemetry sampled) from the four partials, identical to
    zeprof-merge's on the raw traces, as is
    zeprof -r <output>/*; -e splits it by host and process. Then the same job with delta's
    reduction disabled: rank 0's bounded wait ends with one line naming delta, the tally is the
    other three nodes', every rank's status is its program's; zeprof -r <output>/* mixes the
    three partials with delta's raw trace."""
    import testbed
    reason = testbed.can_run()
    if reason:
        print(f'SKIP: {reason}')
        return SKIP
    bed = testbed.Testbed()
    try:
        hosts = [bed.add_host(name) for name, _ in NODES]
        # Each node's reduction splits its trace across workers whatever its size (merger/
        # split.h), as a large one would be: its partial must be one reader's, byte for byte.
        for host in hosts:
            host.env['ZEPROF_MERGE_SPLIT_MIN_BYTES'] = '0'
        # -v on alpha: rank 0 names what it analyses. Device telemetry sampled (one sampler per
        # node): the partials carry it too.
        statuses, outputs = run_job(
            bed, hosts, work, '5150',
            lambda name: ['--sample=5'] + (['-v'] if name == 'alpha' else []))
        logs = ''.join(outputs[rank][1] for rank in outputs)
        check(statuses == [0, 7, 0, 0], 'each host\'s ranks end with their programs\' status',
              f'{statuses} {logs[-600:]}')
        output = os.path.join(work, 'zeprof-trace', '5150')
        names = sorted(name for name, _ in NODES)
        made = sorted(os.listdir(output)) if os.path.isdir(output) else []
        check(made == names, 'one trace directory per host', str(made))
        directories = [os.path.join(output, name) for name in made]
        for directory in directories:
            check(len(metadata_dirs(directory)) == 1, f'{directory}: one trace for its ranks')
            check(os.path.isfile(os.path.join(directory, 'zeprof.partial')),
                  f'{os.path.basename(directory)} reduced its trace into zeprof.partial',
                  str(os.listdir(directory)))
        for directory in directories:
            one_reader = os.path.join(work, os.path.basename(directory) + '.one-reader.partial')
            completed = subprocess.run([MERGE, '-J', '1', '--reduce', directory, '-o', one_reader],
                                       capture_output=True, timeout=RUN_TIMEOUT_S)
            split = subprocess.run([MERGE, '-v', '-J', '2', '--reduce', directory, '-o',
                                    one_reader + '.split'], capture_output=True,
                                   timeout=RUN_TIMEOUT_S,
                                   env=dict(os.environ, ZEPROF_MERGE_SPLIT_MIN_BYTES='0'))
            partial = os.path.join(directory, 'zeprof.partial')
            check(completed.returncode == 0 and b'runs of packets' in split.stderr and
                  os.path.isfile(partial) and
                  open(partial, 'rb').read() == open(one_reader, 'rb').read(),
                  f'{os.path.basename(directory)}: the node\'s split reduction is one reader\'s, '
                  'byte for byte', (completed.stderr + split.stderr)[-300:])
        raw_tally = merged(directories)
        check(outputs[0][0] == raw_tally and 'zeInit' in raw_tally
              and 'Device telemetry' in raw_tally,
              'rank 0 prints the job\'s tally (from the partials), identical to the raw traces\'',
              f'{outputs[0][0][:300]!r} vs {raw_tally[:300]!r} {outputs[0][1][-400:]}')
        check(all(not outputs[rank][0] for rank in outputs if rank != 0),
              'the other ranks print no tally')
        check(f'zeprof -r {output}/*' in outputs[0][1], 'rank 0 says how to get it again',
              outputs[0][1][-300:])
        analysed = [line for line in outputs[0][1].splitlines()
                    if line.startswith('zeprof: analysing ')]
        partials = [os.path.join(directory, 'zeprof.partial') for directory in directories]
        check(len(analysed) == 1 and sorted(analysed[0].split()[2:]) == partials,
              'rank 0 analyses the four partials', str(analysed))
        raw_json = merged(['-j'] + directories)
        check(replayed(['-j'] + directories) == raw_json,
              'zeprof -r -j <output>/* (partials) is identical to the raw traces\'')
        summary = json.loads(raw_json or '{}')
        check(summary.get('hosts') == 4 and summary.get('processes') == 6,
              'the job\'s tally has 4 hosts and 6 processes',
              str({k: summary.get(k) for k in ('hosts', 'processes')}))
        # With the raw traces out of the way, zeprof -r still gives the same bytes: it reads the
        # partials.
        hidden = [os.path.join(work, 'hidden', name) for name in made]
        for directory, away in zip(directories, hidden):
            os.makedirs(away)
            os.rename(os.path.join(directory, 'ust'), os.path.join(away, 'ust'))
        raw_extended = merged(['-j', '-e'] + hidden)
        check(replayed(['-j', '-e'] + directories) == raw_extended != '',
              'zeprof -r -j -e <output>/* reads the partials, and gives the raw traces\' bytes')
        check(replayed(['-j', '-e', output]) == raw_extended,
              'zeprof -r -j -e <output> (the job\'s directory) reads its nodes\' partials too')
        per_host, processes = {}, set()
        for row in json.loads(raw_extended or '{}').get('api', []):
            if row.get('name') == 'zeInit':
                host = row.get('hostname')
                per_host[host] = per_host.get(host, 0) + row.get('calls', 0)
                processes.add((host, row.get('pid')))
        check(per_host == {'alpha': 2, 'beta': 2, 'gamma': 1, 'delta': 1},
              '-e splits zeInit by host', str(per_host))
        check(len(processes) == 6, '-e splits zeInit by process: one row per rank',
              str(sorted(processes, key=str)))
        timelines = [os.path.join(work, f'timeline.{source}.json')
                     for source in ('partials', 'raw')]
        replayed(['-l', timelines[0]] + directories)
        merged(['-l', timelines[1]] + hidden)
        contents = []
        for timeline in timelines:
            try:
                with open(timeline, 'rb') as data:
                    contents.append(data.read())
            except OSError:
                contents.append(b'')
        check(contents[0] == contents[1] != b'',
              'zeprof -r -l from the partials writes the raw traces\' timeline, byte for byte',
              f'{len(contents[0])} vs {len(contents[1])} bytes')
        for directory, away in zip(directories, hidden):
            os.rename(os.path.join(away, 'ust'), os.path.join(directory, 'ust'))
        for host in hosts:
            try:
                with open(os.path.join(work, f'{host.name}.ns')) as ns:
                    namespace = ns.read().strip()
            except OSError:
                continue
            check_no_daemon_left(f'host {host.name}', namespace)

        # delta never delivers: rank 0 waits 1 s, says so, and tallies the three others. Its
        # program ends once beta and gamma have delivered and rank 1 has left alpha, so rank 0
        # closes and reduces alpha itself, and only delta is missing, however slow the machine.
        for host in hosts:
            host.env['ZEPROF_PARTIAL_WAIT'] = '1'
        output = os.path.join(work, 'zeprof-trace', '5151')
        statuses, outputs = run_job(
            bed, hosts, work, '5151', lambda name: ['--no-reduce'] if name == 'delta' else ['-j'],
            rank0_waits_for=[os.path.join(work, '5151.1.exited')] + [
                os.path.join(output, name, 'zeprof.partial') for name in ('beta', 'gamma')])
        check(statuses == [0, 7, 0, 0], 'with a node that never delivers, every rank\'s status is '
              'its program\'s', f'{statuses} {outputs[0][1][-400:]}')
        check(not os.path.exists(os.path.join(output, 'delta', 'zeprof.partial')),
              'delta delivered no partial')
        lines = [line for line in outputs[0][1].splitlines() if 'no partial within' in line]
        check(len(lines) == 1 and 'delta' in lines[0] and '3 other node' in lines[0]
              and all(name not in lines[0] for name in ('alpha', 'beta', 'gamma')),
              'rank 0\'s wait ends with one line naming the node that did not deliver',
              outputs[0][1][-500:])
        try:
            printed = json.loads(outputs[0][0])
        except ValueError:
            printed = {}
        three = [os.path.join(output, name) for name in ('alpha', 'beta', 'gamma')]
        check(outputs[0][0] == merged(['-j'] + three) and printed.get('hosts') == 3,
              'its tally is the other three nodes\' (identical to their raw traces\')',
              outputs[0][0][:300])
        directories = [os.path.join(output, name) for name in names]
        check(replayed(['-j'] + directories) == merged(['-j'] + directories),
              'zeprof -r <output>/* with three partials and one raw trace: the raw traces\' tally')
    finally:
        bed.close()
    return 0


FAKE_SRUN = r'''#!/bin/bash
# srun for one node: --ntasks-per-node=1 runs one task, anything else four; options are dropped.
tasks=4
while [[ ${1:-} == --* ]]; do [ "$1" = --ntasks-per-node=1 ] && tasks=1; shift; done
pids=()
for ((rank = 0; rank < tasks; rank++)); do
  SLURM_PROCID=$rank SLURM_LOCALID=$rank SLURM_STEP_ID=$tasks "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit $status
'''


def case_job_script(work):
    """docs/cluster.md's Slurm batch script (tracing with --print-env, no wrapper around the
    ranks), run with a one-node stand-in for srun: every rank is traced, no daemon is left."""
    with open(os.path.join(HERE, '..', '..', 'docs', 'cluster.md')) as doc:
        text = doc.read()
    start = text.index('```bash', text.index('### Slurm')) + len('```bash\n')
    script = text[start:text.index('\n```', start)]
    bin_dir = os.path.join(work, 'bin')
    os.makedirs(bin_dir)
    with open(os.path.join(bin_dir, 'srun'), 'w') as srun:
        srun.write(FAKE_SRUN)
    os.chmod(os.path.join(bin_dir, 'srun'), 0o755)
    os.symlink(ZEPROF, os.path.join(bin_dir, 'zeprof'))
    with open(os.path.join(work, 'app'), 'w') as app:
        app.write('#!/bin/sh\nexec "$CLUSTER_APP" calls "$PWD/rank$SLURM_PROCID.log"\n')
    os.chmod(os.path.join(work, 'app'), 0o755)
    with open(os.path.join(work, 'job.sh'), 'w') as job:
        job.write(script)
    completed = subprocess.run(
        ['bash', 'job.sh'], cwd=work, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
        env=environment(PATH=bin_dir + ':' + os.environ['PATH'], SLURM_JOB_ID='4711',
                        SLURM_JOB_NUM_NODES='1'))
    check(completed.returncode == 0, 'the batch script succeeds', completed.stderr[-500:])
    check('zeInit' in completed.stdout, 'it prints the job\'s tally', completed.stdout[:300])
    node_dir = os.path.join(work, 'trace-4711', socket.gethostname())
    check_one_node_trace(node_dir, 4, 'job script')
    check_no_daemon_left('job script')


CASES = {
    'job-script': case_job_script,
    'fake-ranks': case_fake_ranks,
    'detection': case_detection,
    'mpirun': case_mpirun,
    'killed-rank': case_killed_rank,
    'sigint': case_sigint,
    'stale': case_stale,
    'four-nodes': case_four_nodes,
    'two-jobs': case_two_jobs,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f'usage: cluster_test.py {"|".join(CASES)}', file=sys.stderr)
        return 2
    os.environ.pop('LD_LIBRARY_PATH', None)
    os.environ.pop('LD_PRELOAD', None)
    # A job's launcher variables in the test's own environment would make every run a rank.
    for name in list(os.environ):
        if name.startswith(('OMPI_', 'PMIX_', 'PMI_', 'PALS_', 'SLURM_', 'PBS_', 'MPI_LOCAL')):
            del os.environ[name]
    with tempfile.TemporaryDirectory(prefix='zeprof-cluster-') as work:
        os.chmod(work, 0o755)
        os.environ['TMPDIR'] = os.path.join(work, 'tmp')
        os.mkdir(os.environ['TMPDIR'])
        status = CASES[sys.argv[1]](work)
    return exit_status() or status or 0


if __name__ == '__main__':
    sys.exit(main())
