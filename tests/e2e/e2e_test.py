#!/usr/bin/env python3
"""End-to-end tests of zeprof: real Level Zero programs on the simulated device, traced.

    e2e_test.py CASE

Run inside `tests/harness/with-lttng --no-daemon` (meson does), so zeprof starts its own session
daemon in a private namespace (root) or with a private LTTNG_HOME (user). Paths come from the
environment that tests/e2e/meson.build sets: E2E_ZEPROF, E2E_APP, E2E_DLOPEN, E2E_SHIM and
ZE_ENABLE_ALT_DRIVERS. Traces are read with `babeltrace2 DIR` (text). Exit 0 when every check of
CASE holds; each failed check is printed.
"""
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'interposer', 'gen'))
from checks import check, exit_status, failures, lttng_processes_left  # noqa: E402
from shapes import is_one_event  # noqa: E402

ZEPROF = os.environ.get('E2E_ZEPROF', '')
APP = os.environ.get('E2E_APP', '')
DLOPEN = os.environ.get('E2E_DLOPEN', '')
SHIM = os.environ.get('E2E_SHIM', '')
API_PROVIDERS = {'zeprof_ze', 'zeprof_zet', 'zeprof_zes', 'zeprof_zel'}


def is_api_provider(provider):
    """Whether events of `provider` are API calls."""
    return provider in API_PROVIDERS
ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001
RUN_TIMEOUT_S = 120

# ---------------------------------------------------------------------------------------------
# Running things

def run(command, env=None, **options):
    return subprocess.run(command, env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, **options)


def zeprof(arguments, env=None):
    return run([ZEPROF] + arguments, env=env)


def environment(**changes):
    env = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


# ---------------------------------------------------------------------------------------------
# Reading what the program logged and what the trace holds

class CallLog:
    """e2e_app's log: calls per thread role ("main", "worker"), and other key/value lines."""

    def __init__(self, path):
        self.calls = {}       # role -> [(function, result)]
        self.tids = {}        # role -> tid
        self.values = {}      # e.g. checksum-vadd -> text
        with open(path) as log:
            for line in log:
                words = line.split()
                if len(words) == 4 and words[3].startswith('0x'):
                    role, tid, function, result = words
                    self.tids[role] = int(tid)
                    self.calls.setdefault(role, []).append((function, int(result, 16)))
                elif len(words) >= 2:
                    self.values[words[0]] = ' '.join(words[1:])

    def outcome(self):
        """What must not change when the program is traced: calls, results, computed data."""
        values = {key: value for key, value in self.values.items() if key != 'loader'}
        return {'calls': self.calls, 'values': values}


EVENT_LINE = re.compile(r'^\[[^\]]*\] \([^)]*\) (?P<host>\S+) (?P<provider>\w+):(?P<name>\w+): '
                        r'(?P<rest>.*)$')
VTID = re.compile(r'\bvtid = (\d+)')
VPID = re.compile(r'\bvpid = (\d+)')
PROCNAME = re.compile(r'\bprocname = "([^"]*)"')
NAME_FIELD = re.compile(r'\bname = "([^"]*)"')
RESULT = re.compile(r'\bresult = (0x[0-9a-fA-F]+|\d+)')
CYCLES = re.compile(r'^\[(\d+)\]')
CALL_START = re.compile(r'\bcall_start = (\d+)')


class Event:
    def __init__(self, match):
        self.provider = match['provider']
        self.name = match['name']
        rest = match['rest']
        self.rest = rest
        self.vtid = int(VTID.search(rest).group(1)) if VTID.search(rest) else None
        self.vpid = int(VPID.search(rest).group(1)) if VPID.search(rest) else None
        procname = PROCNAME.search(rest)
        self.procname = procname.group(1) if procname else None
        result = RESULT.search(rest)
        self.result = int(result.group(1), 0) if result else None
        # Read with --clock-cycles: the timestamp and a one-event call's start on one scale.
        cycles = CYCLES.match(match.string)
        self.cycles = int(cycles.group(1)) if cycles else None
        start = CALL_START.search(rest)
        self.call_start = int(start.group(1)) if start else None
        if self.name.endswith('_call_full'):  # full mode's one-event call: same shape
            self.name = self.name[:-len('_full')]


def read_trace(directory):
    """Every event of the trace, in babeltrace2's order; (events, babeltrace2's stderr)."""
    completed = run(['babeltrace2', '--clock-cycles', directory])
    if not check(completed.returncode == 0, f'babeltrace2 reads {directory}',
                 completed.stderr.strip()[-500:]):
        return [], completed.stderr
    events = []
    for line in completed.stdout.splitlines():
        match = EVENT_LINE.match(line)
        if match:
            events.append(Event(match))
    return events, completed.stderr


def api_calls_by_thread(events, vpid, with_events=False):
    """vtid -> [(event name, result)] of the entry, exit and call events of API calls of process
    vpid (with_events: [(event name, result, event)]). Other processes may be in a trace (a
    job's node trace holds every rank); e2e_isolation checks that a run's holds only its own."""
    threads = {}
    for event in events:
        if (is_api_provider(event.provider) and event.vpid == vpid
                and event.name.endswith(('_entry', '_exit', '_call'))):
            item = (event.name, event.result) + ((event,) if with_events else ())
            threads.setdefault(event.vtid, []).append(item)
    return threads


def expected_events(function, result):
    """The events of one call (docs/tracepoints.md): one `_call` event carrying the result for a
    call that cannot block, else an entry then an exit carrying it."""
    if is_one_event(function):
        return [(function + '_call', result)]
    return [(function + '_entry', None), (function + '_exit', result)]


def check_call_starts(traced, what):
    """Every one-event call started after the previous event of its thread and at or before its
    own event: its start is on the trace clock."""
    previous, wrong = None, []
    for name, _, event in traced:
        if name.endswith('_call'):
            start = event.call_start
            if start is None or event.cycles is None or start > event.cycles or \
                    (previous is not None and start < previous):
                wrong.append((name, previous, start, event.cycles))
        previous = event.cycles
    check(not wrong, f'{what}: each one-event call starts after the previous event of its thread '
          'and at or before its own event', str(wrong[:3]))


def check_trace_matches_log(events, log, what):
    """Every logged call appears once, in order per thread, with its result: one event if it
    cannot block, else entry and exit; and the process made no other call (its main thread's
    tid is its pid)."""
    threads = api_calls_by_thread(events, log.tids.get('main'), with_events=True)
    for role, calls in log.calls.items():
        tid = log.tids[role]
        traced = threads.pop(tid, [])
        expected = []
        for function, result in calls:
            expected += expected_events(function, result)
        traced_names = [item[0] for item in traced]
        expected_names = [name for name, _ in expected]
        if not check(traced_names == expected_names,
                     f'{what}: {role} thread: each call once, as one event or entry then exit, '
                     'in order', first_difference(expected_names, traced_names)):
            continue
        check_call_starts(traced, f'{what}: {role} thread')
        wrong = [(name, hex(want), hex(got if got is not None else -1))
                 for (name, want), (_, got, _) in zip(expected, traced)
                 if want is not None and want != got]
        check(not wrong, f'{what}: {role} thread: traced results are the results returned',
              str(wrong[:5]))
    check(not threads, f'{what}: no call in the trace that the program did not make',
          str({tid: calls[:4] for tid, calls in threads.items()}))


def app_pid(log_path):
    """The pid of the e2e_app that wrote log_path: its main thread's tid."""
    return CallLog(log_path).tids.get('main')


def first_difference(expected, got):
    for index, (want, have) in enumerate(zip(expected, got)):
        if want != have:
            return f'at {index}: expected {want}, traced {have}'
    return f'expected {len(expected)} events, traced {len(got)}'


# ---------------------------------------------------------------------------------------------
# Leftovers

def check_quiet(stderr, what):
    """A successful run says only where the trace is: no complaint from zeprof or lttng (a
    session that could not be stopped, a daemon that vanished)."""
    complaints = [line for line in stderr.splitlines()
                  if (line.startswith('zeprof: ') and not line.startswith('zeprof: trace in '))
                  or line.startswith(('Error:', 'Warning:'))]
    check(not complaints, f'{what}: zeprof and lttng report no problem', str(complaints))


def check_no_daemon_left(what):
    left = lttng_processes_left(home_prefix="zeprof-")
    if left is None:
        print(f'# {what}: leftover daemons not checked (root outside a private namespace)')
        return
    check(not left, f'{what}: no LTTng daemon left behind', str(left))
    check(not daemon_slots(), f'{what}: no daemon slot left behind', str(daemon_slots()))


# ---------------------------------------------------------------------------------------------
# Cases

def case_calls(work):
    """Computed results, results of failing calls and every call: identical traced or not."""
    plain_log = os.path.join(work, 'plain.log')
    traced_log = os.path.join(work, 'traced.log')
    trace_dir = os.path.join(work, 'trace')
    plain = run([APP, 'calls', plain_log])
    check(plain.returncode == 0, 'the program runs untraced', plain.stderr.strip())
    traced = zeprof(['--no-analysis', '-o', trace_dir, '--', APP, 'calls', traced_log])
    check(traced.returncode == 0, 'the program runs under zeprof', traced.stderr.strip())
    check_quiet(traced.stderr, 'calls')
    check_no_daemon_left('calls')
    if failures:
        return
    plain_calls = CallLog(plain_log)
    traced_calls = CallLog(traced_log)
    shim = os.path.realpath(SHIM)
    check(os.path.realpath(plain_calls.values.get('loader', '')) not in ('', shim),
          'untraced, the program calls the real loader', plain_calls.values.get('loader'))
    check(os.path.realpath(traced_calls.values.get('loader', '')) == shim,
          'under zeprof, the program calls the shim', traced_calls.values.get('loader'))
    check(plain_calls.outcome() == traced_calls.outcome(),
          'calls, results (failing ones included) and computed data are the same traced',
          f'untraced {plain_calls.outcome()} traced {traced_calls.outcome()}')
    failing = [call for calls in traced_calls.calls.values() for call in calls if call[1] != 0]
    check(len(failing) >= 3, 'the program made the failing calls it plans', str(failing))
    check('checksum-vadd' in traced_calls.values and 'checksum-fill' in traced_calls.values,
          'the program computed its data')
    events, _ = read_trace(trace_dir)
    check_trace_matches_log(events, traced_calls, 'calls')
    check(events and all(event.vpid is not None and event.vtid is not None for event in events),
          'every event has the vpid and vtid contexts')
    names = [event.name for event in events if event.provider == 'zeprof_device'
             and event.name == 'process']
    process = [NAME_FIELD.search(event.rest) for event in events
               if event.provider == 'zeprof_device' and event.name == 'process']
    check(len(names) == 1 and events[0].name == 'process' and process[0] and
          process[0].group(1) == 'e2e_app',
          'the process name is recorded once, before the process\'s other events',
          str([match.group(0) if match else None for match in process]))


def case_dlopen(work):
    """A program that dlopen()s libze_loader.so.1 and calls through dlsym is traced."""
    plain = run([DLOPEN, os.path.join(work, 'plain.log')])
    check(plain.returncode == 0, 'the dlopen program runs untraced', plain.stderr.strip())
    log_path = os.path.join(work, 'traced.log')
    trace_dir = os.path.join(work, 'trace')
    traced = zeprof(['--no-analysis', '-o', trace_dir, '--', DLOPEN, log_path])
    check(traced.returncode == 0, 'the dlopen program runs under zeprof', traced.stderr.strip())
    check_no_daemon_left('dlopen')
    if failures:
        return
    log = CallLog(log_path)
    check(len(log.calls.get('main', [])) == 4, 'the dlopen program made its 4 calls')
    events, _ = read_trace(trace_dir)
    check_trace_matches_log(events, log, 'dlopen')


def case_loader_missing(work):
    """ZEPROF_LOADER names no file: the program runs, zeInit says UNINITIALIZED, exit 0."""
    log_path = os.path.join(work, 'app.log')
    traced = zeprof(['--no-analysis', '-o', os.path.join(work, 'trace'), '--',
                     APP, 'calls', log_path],
                    env=environment(ZEPROF_LOADER='/nonexistent/libze_loader.so.1'))
    check(traced.returncode == 0, 'the program exits normally without a loader',
          f'status {traced.returncode}: {traced.stderr.strip()}')
    if os.path.exists(log_path):
        log = CallLog(log_path)
        check(log.calls.get('main') == [('zeInit', ZE_RESULT_ERROR_UNINITIALIZED)],
              'zeInit returns ZE_RESULT_ERROR_UNINITIALIZED', str(log.calls))
    else:
        check(False, 'the program ran')
    check_no_daemon_left('loader-missing')


def path_without_lttng(work):
    """A PATH holding everything of the current PATH but the LTTng tools."""
    bin_dir = os.path.join(work, 'bin')
    os.makedirs(bin_dir)
    seen = set()
    for directory in os.environ.get('PATH', '').split(':'):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            if name in seen or name.startswith('lttng'):
                continue
            seen.add(name)
            os.symlink(os.path.join(directory, name), os.path.join(bin_dir, name))
    return bin_dir


def case_lttng_missing(work):
    """No LTTng tools: zeprof refuses with one line and status 2, before running anything."""
    log_path = os.path.join(work, 'app.log')
    env = environment(PATH=path_without_lttng(work))
    check(shutil.which('lttng', path=env['PATH']) is None, 'the test PATH has no lttng')
    traced = zeprof(['--no-analysis', '-o', os.path.join(work, 'trace'), '--',
                     APP, 'calls', log_path], env=env)
    check(traced.returncode == 2, 'zeprof exits 2 without LTTng', f'status {traced.returncode}')
    lines = traced.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith('zeprof: ') and 'LTTng' in lines[0],
          'one line on stderr says why', repr(traced.stderr))
    check(not os.path.exists(log_path), 'the program was not started')


def case_exit_status(work):
    """COMMAND's status is zeprof's; 128+N when COMMAND is killed by signal N."""
    expectations = [
        (['sh', '-c', 'exit 3'], 3, 'exit 3'),
        (['sh', '-c', 'kill -KILL $$'], 137, 'killed by SIGKILL'),
        (['sh', '-c', 'kill -INT $$'], 130, 'killed by SIGINT'),
        (['sh', '-c', 'exit 0'], 0, 'exit 0'),
        ([os.path.join(work, 'no-such-program')], 127, 'a command that does not exist'),
    ]
    for index, (command, status, what) in enumerate(expectations):
        completed = zeprof(['--no-analysis', '-o', os.path.join(work, f'trace{index}'), '--']
                           + command)
        check(completed.returncode == status, f'{what}: zeprof exits {status}',
              f'status {completed.returncode}: {completed.stderr.strip()}')
        check_no_daemon_left(what)


def case_stdin(work):
    """COMMAND reads zeprof's standard input (a background job would get /dev/null)."""
    completed = run([ZEPROF, '--no-analysis', '-o', os.path.join(work, 'trace'), '--',
                     'sh', '-c', 'read line && [ "$line" = "from stdin" ]'],
                    input='from stdin\n')
    check(completed.returncode == 0, 'the program reads what zeprof was given on stdin',
          f'status {completed.returncode}: {completed.stderr.strip()}')
    check_no_daemon_left('stdin')


def case_environment(work):
    """The program gets the shim first in LD_PRELOAD and the variables the options ask for."""
    script = ('printf "%s\\n" "$LD_PRELOAD" "$ZEPROF_PROFILE" "$ZEPROF_MODE" "$ZEPROF_VERBOSE" '
              '"$LTTNG_UST_ALLOW_BLOCKING" "$LTTNG_UST_REGISTER_TIMEOUT"')
    completed = run([ZEPROF, '--no-analysis', '--no-profile', '-m', 'full', '--blocking', '-v',
                     '-o', os.path.join(work, 'trace'), '--', 'sh', '-c', script],
                    env=environment(LD_PRELOAD='libother.so', LTTNG_UST_REGISTER_TIMEOUT=None))
    values = completed.stdout.splitlines()
    check(completed.returncode == 0 and len(values) == 6, 'the program ran', completed.stderr)
    if len(values) == 6:
        check(values[0] == f'{SHIM}:libother.so', 'LD_PRELOAD: the shim, then what was there',
              values[0])
        check(values[1:5] == ['0', 'full', '1', '1'],
              'ZEPROF_PROFILE, ZEPROF_MODE, ZEPROF_VERBOSE, LTTNG_UST_ALLOW_BLOCKING', str(values))
        check(values[5].lstrip('-').isdigit() and values[5] != '0',
              'LTTNG_UST_REGISTER_TIMEOUT makes the program wait for registration', values[5])
    defaults = run([ZEPROF, '--no-analysis', '-o', os.path.join(work, 'defaults'), '--',
                    'sh', '-c', script], env=environment(LD_PRELOAD=None))
    check(defaults.stdout.splitlines()[:5] == [SHIM, '1', '', '', '1'],
          'by default: the shim alone, profiling on, no mode, quiet, blocking (lossless)',
          defaults.stdout)
    discarding = run([ZEPROF, '--no-analysis', '--discard', '-o', os.path.join(work, 'discard'),
                      '--', 'sh', '-c', script], env=environment(LD_PRELOAD=None))
    check(discarding.stdout.splitlines()[4:5] == [''],
          '--discard: the program may not block', discarding.stdout)

    # Default output directories: under ./zeprof-trace, distinct for runs in the same second.
    for _ in range(2):
        run([ZEPROF, '--no-analysis', 'true'], cwd=work)
    made = sorted(os.listdir(os.path.join(work, 'zeprof-trace')))
    check(len(made) == 2 and all(re.match(r'^\S+-\d{8}T\d{6}(-\d+)?$', name) for name in made),
          'default trace directories are zeprof-trace/<hostname>-<YYYYmmddTHHMMSS>', str(made))
    check_no_daemon_left('environment')


def case_sigint(work):
    """SIGINT to zeprof reaches the program; the trace is closed and analysable; no daemon left."""
    log_path = os.path.join(work, 'app.log')
    ready = os.path.join(work, 'ready')
    trace_dir = os.path.join(work, 'trace')
    # A session of its own: no controlling terminal, as under a batch system or mpirun.
    process = subprocess.Popen([ZEPROF, '--no-analysis', '-o', trace_dir, '--',
                                APP, 'wait-signal', log_path, ready],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not os.path.exists(ready) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not check(os.path.exists(ready), 'the program started under zeprof'):
        process.kill()
        process.communicate()
        return
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    check(process.returncode == 0, 'zeprof exits with the program status after SIGINT',
          f'status {process.returncode}: {stderr.strip()}')
    log = CallLog(log_path)
    check(log.values.get('signal') == str(int(signal.SIGINT)), 'the program received SIGINT',
          str(log.values))
    check_quiet(stderr, 'sigint')
    check_no_daemon_left('sigint')
    events, _ = read_trace(trace_dir)
    check_trace_matches_log(events, log, 'sigint')


def case_ctrl_c(work):
    """Ctrl-C at a terminal: the whole foreground process group gets SIGINT; the program handles
    it, zeprof closes the trace (its daemon, in a session of its own, is untouched)."""
    log_path = os.path.join(work, 'app.log')
    ready = os.path.join(work, 'ready')
    trace_dir = os.path.join(work, 'trace')
    pid, terminal = pty.fork()
    if pid == 0:
        try:
            os.execv(ZEPROF, [ZEPROF, '--no-analysis', '-o', trace_dir, '--',
                              APP, 'wait-signal', log_path, ready])
        finally:
            os._exit(127)
    output = b''
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not os.path.exists(ready) and time.monotonic() < deadline:
        if select.select([terminal], [], [], 0.05)[0]:
            try:
                output += os.read(terminal, 4096)
            except OSError:
                break
    started = check(os.path.exists(ready), 'the program started under zeprof on a terminal',
                    output.decode(errors='replace'))
    os.write(terminal, b'\x03' if started else b'\x1c')   # Ctrl-C (else Ctrl-\\ to end it)
    # Until the terminal closes (everything zeprof started has let go of it), within a bound: a
    # run that does not end is a failure that shows what was left running, not a test that meson
    # kills without a word (45 s: the program ends at most 60 s after it started, zeprof soon
    # after; meson's 180 s also hold the wait for READY above).
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        if not select.select([terminal], [], [], 0.5)[0]:
            continue
        try:
            chunk = os.read(terminal, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    else:
        processes = subprocess.run(['ps', '-eo', 'pid,ppid,pgid,sid,stat,etime,args', '--forest'],
                                   capture_output=True, text=True).stdout
        check(False, 'zeprof and what it started let go of the terminal after Ctrl-C',
              f'{output.decode(errors="replace")[-1500:]}\n{processes[-6000:]}')
        os.killpg(pid, signal.SIGKILL)  # pty.fork: zeprof leads a session and group of its own
    _, wait_status = os.waitpid(pid, 0)
    os.close(terminal)
    status = os.waitstatus_to_exitcode(wait_status)
    check(status == 0, 'zeprof exits with the program status after Ctrl-C',
          f'status {status}: {output.decode(errors="replace").strip()}')
    if not started:
        return
    log = CallLog(log_path)
    check(log.values.get('signal') == str(int(signal.SIGINT)), 'the program received SIGINT',
          str(log.values))
    check_quiet(output.decode(errors='replace').replace('\r', '').replace('^C', ''), 'ctrl-c')
    check_no_daemon_left('ctrl-c')
    events, _ = read_trace(trace_dir)
    check_trace_matches_log(events, log, 'ctrl-c')


def traced_calls(trace_dir, log_path, name):
    """How many calls of `name` the program that wrote log_path has in the trace (a call is one
    `_call` event, or an entry and an exit: counted by their `_call` and `_exit` events), and
    babeltrace2's complaints."""
    if not os.path.exists(log_path):
        return 0, 'the program did not run'
    events, errors = read_trace(trace_dir)
    made = [event for thread in api_calls_by_thread(events, app_pid(log_path)).values()
            for event, _ in thread]
    return made.count(name + '_call') + made.count(name + '_exit'), errors


def tally_json(stdout):
    try:
        return json.loads(stdout)
    except ValueError:
        return {}


def discarded(tally):
    anomalies = tally.get('anomalies', {}) if isinstance(tally, dict) else {}
    return anomalies.get('discarded_events', 0) + anomalies.get('discarded_packets', 0)


def case_lossless(work):
    """By default no event is lost, even with buffers far too small for the program's pace (the
    program waits for space); --discard loses events then, and the tally says how many."""
    calls = 20000
    tiny = {'ZEPROF_SUBBUF_SIZE': '4096', 'ZEPROF_NUM_SUBBUF': '2'}
    log_path = os.path.join(work, 'app.log')
    trace_dir = os.path.join(work, 'trace')
    completed = zeprof(['-j', '--no-profile', '-o', trace_dir, '--',
                        APP, 'loop', log_path, str(calls)], env=environment(**tiny))
    check(completed.returncode == 0, 'the program runs under zeprof with tiny buffers',
          completed.stderr.strip())
    check_no_daemon_left('lossless')
    recorded, babeltrace_errors = traced_calls(trace_dir, log_path, 'zeDriverGet')
    # open_device calls zeDriverGet once before the loop.
    check(recorded == calls + 1, 'every call is in the trace',
          f'{recorded} calls recorded, {calls + 1} made')
    check('discarded' not in babeltrace_errors.lower(), 'babeltrace2 reports no discarded event',
          babeltrace_errors.strip()[:300])
    check(discarded(tally_json(completed.stdout)) == 0, 'the tally counts no lost event',
          str(tally_json(completed.stdout).get('anomalies')))

    # The same with --discard: events are lost, and both tallies say so.
    lossy_dir = os.path.join(work, 'lossy')
    lossy_log = os.path.join(work, 'lossy.log')
    lossy = zeprof(['-j', '--discard', '--no-profile', '-o', lossy_dir, '--',
                    APP, 'loop', lossy_log, str(4 * calls)], env=environment(**tiny))
    check(lossy.returncode == 0, 'the program runs under zeprof --discard', lossy.stderr.strip())
    recorded, _ = traced_calls(lossy_dir, lossy_log, 'zeDriverGet')
    lost = discarded(tally_json(lossy.stdout))
    check(recorded < 4 * calls + 1 and lost > 0,
          '--discard with tiny buffers loses events and the JSON tally counts them',
          f'{recorded} calls recorded of {4 * calls + 1}, {lost} counted lost')
    text = zeprof(['-r', lossy_dir])
    check(text.returncode == 0 and re.search(r'discarded', text.stdout + text.stderr),
          'the text tally says that events were lost', (text.stdout + text.stderr)[-400:])

    # The session as zeprof sets it up, asked of its daemon.
    process, waiting_log = start_waiting_run(work, 'listed')
    listing = ''
    if check(waiting_log is not None, 'a run is under way'):
        daemons = session_daemons()
        if check(len(daemons) == 1, 'the run has one session daemon', str(daemons)):
            listing = lttng_of_daemon(daemons[0], ['list']).stdout
            sessions = re.findall(r'\) (zeprof-\S+) \[', listing)
            if check(len(sessions) == 1, 'its daemon lists its session', listing[-300:]):
                listing = lttng_of_daemon(daemons[0], ['list', sessions[0]]).stdout
    end_waiting_run(process, 'the listed run')
    for expected in ['Buffering scheme: per-user', 'Blocking timeout: infinite',
                     'Sub-buffer size:  262144 bytes', 'Sub-buffer count: 8', 'zeprof_*']:
        check(expected in listing, f'the session has {expected}', listing[-400:])


def lttng_of_daemon(pid, arguments):
    """The lttng client talking to session daemon `pid` (as root in its mount namespace)."""
    with open(f'/proc/{pid}/environ', 'rb') as environ:
        homes = [v[len(b'LTTNG_HOME='):].decode() for v in environ.read().split(b'\0')
                 if v.startswith(b'LTTNG_HOME=')]
    env = environment(LTTNG_HOME=homes[0] if homes else None)
    prefix = ['nsenter', f'--mount=/proc/{pid}/ns/mnt', '--'] if os.geteuid() == 0 else []
    return run(prefix + ['lttng'] + arguments, env=env)


def case_print_env(work):
    """--print-env gives a job script what it needs: the recipe it prints records a trace."""
    completed = zeprof(['--print-env', '--no-profile', '-m', 'minimal'])
    check(completed.returncode == 0, 'zeprof --print-env succeeds', completed.stderr.strip())
    probe = run(['bash', '-c', 'eval "$1"; printf "%s\\n" "$LD_PRELOAD" "$ZEPROF_PROFILE" '
                 '"$ZEPROF_MODE" "$LTTNG_UST_REGISTER_TIMEOUT"', 'probe', completed.stdout],
                env=environment(LD_PRELOAD='libother.so'))
    values = probe.stdout.splitlines()
    check(len(values) == 4 and values[0] == f'{SHIM}:libother.so',
          'LD_PRELOAD puts the shim first and keeps what was there', str(values))
    check(len(values) == 4 and values[1:3] == ['0', 'minimal'],
          'ZEPROF_PROFILE and ZEPROF_MODE follow the options', str(values))
    check(len(values) == 4 and values[3] != '', 'LTTNG_UST_REGISTER_TIMEOUT is set', str(values))
    sampled = zeprof(['--print-env', '--sample=30']).stdout
    check('export ZEPROF_SAMPLE_MS=30\n' in sampled and 'export ZES_ENABLE_SYSMAN=1\n' in sampled
          and 'ZEPROF_SAMPLE_MS' not in completed.stdout,
          '--sample sets ZEPROF_SAMPLE_MS and ZES_ENABLE_SYSMAN, only when given', sampled)

    # The job-script recipe from the printed comments, with a daemon this test owns.
    trace_dir = os.path.join(work, 'trace')
    log_path = os.path.join(work, 'app.log')
    home = os.path.join(work, 'home')
    os.makedirs(home)
    script = r'''
set -u
session=jobscript
lttng-sessiond --no-kernel >"$LTTNG_HOME/sessiond.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon; wait $daemon' EXIT
for _ in $(seq 100); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
lttng create $session --output="$TRACE" >/dev/null &&
lttng enable-channel -u -s $session --buffers-uid zeprof >/dev/null &&
lttng enable-event -u -s $session -c zeprof 'zeprof_*' >/dev/null &&
lttng add-context -u -s $session -c zeprof -t vpid -t vtid -t procname >/dev/null &&
lttng start $session >/dev/null || exit 99
( eval "$("$ZEPROF" --print-env)"; exec "$APP" calls "$LOG" )
status=$?
lttng stop $session >/dev/null && lttng destroy $session >/dev/null || exit 99
exit $status
'''
    job = run(['bash', '-c', script], env=environment(
        LTTNG_HOME=home, TRACE=trace_dir, LOG=log_path, ZEPROF=ZEPROF, APP=APP))
    check(job.returncode == 0, 'a job script traces with --print-env', job.stderr.strip())
    if job.returncode == 0:
        events, _ = read_trace(trace_dir)
        check_trace_matches_log(events, CallLog(log_path), 'job script')


def read_text(path):
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return None


def case_analysis(work):
    """After recording, the merger runs (or zeprof says it is not built); status is COMMAND's.
    Two traces go to the default output (zeprof-trace/ under the current directory): -r without
    a directory analyses the newest. --analysis-output puts the analysis in a file, not stdout."""
    here = os.path.join(work, 'here')
    os.mkdir(here)
    first_log = os.path.join(work, 'first.log')
    completed = run([ZEPROF, '--', 'sh', '-c', '"$@"; exit 4', 'sh', APP, 'calls', first_log],
                    cwd=here)
    check(completed.returncode == 4, 'the status is the program\'s with analysis',
          f'status {completed.returncode}')
    printed = re.search(r'^zeprof: trace in (\S+)$', completed.stderr, re.MULTILINE)
    trace_dir = printed.group(1) if printed else ''
    check(os.path.realpath(os.path.dirname(trace_dir)) ==
          os.path.join(os.path.realpath(here), 'zeprof-trace'),
          'the trace path is printed, in the default output', completed.stderr.strip())
    merge = os.environ.get('E2E_MERGE', '')
    if merge and os.access(merge, os.X_OK):
        # Analysis options reach the merger: -j gives the tally as JSON (docs/interface.md). The
        # program's own stdout stays its own; the analysis goes to --analysis-output's file.
        log_path = os.path.join(work, 'app.log')
        saved = os.path.join(work, 'recorded.json')
        # --sample: the program runs sampled (device telemetry, docs/interface.md); its calls
        # are counted as without it, the sampler's own are not.
        tallied = run([ZEPROF, '-j', '--sample=10', '--analysis-output', saved, '--',
                       'sh', '-c', 'echo program output; exec "$@"', 'sh', APP, 'calls', log_path],
                      cwd=here)
        check(tallied.returncode == 0, 'a run with analysis succeeds', tallied.stderr.strip())
        check(tallied.stdout == 'program output\n',
              '--analysis-output: stdout has the program\'s output and none of the analysis',
              tallied.stdout[:300])
        tally = {}
        try:
            tally = json.loads(read_text(saved) or '')
            names = {row.get('name'): row.get('calls') for row in tally.get('api', [])}
        except (ValueError, AttributeError) as error:
            names = {'unparsable': str(error)}
        check(names.get('zeInit') == 1 and names.get('zeContextCreate') == 2,
              '-j reaches the merger: the JSON tally counts the program\'s calls', str(names)[:300])
        check(not any(name.startswith('zes') for name in names),
              '--sample: the sampler\'s Sysman calls are not the program\'s', str(names)[:300])
        sampled = tally.get('telemetry', []) if isinstance(tally, dict) else []
        check(len(sampled) == 1 and 'Simulated GPU' in sampled[0].get('device', '') and
              sampled[0].get('samples', 0) >= 2,
              '--sample: the tally has the device\'s telemetry', str(sampled)[:300])
        printed = re.search(r'^zeprof: trace in (\S+)$', tallied.stderr, re.MULTILINE)
        json_dir = printed.group(1) if printed else ''
        replay = run([ZEPROF, '-r', '-j'], cwd=here)
        check(replay.returncode == 0 and '"zeInit"' in replay.stdout,
              '-r analyses a recorded trace with the options given', replay.stderr.strip())
        check(replay.stderr.strip() == f'zeprof: analysing the newest trace under zeprof-trace/: '
              f'zeprof-trace/{os.path.basename(json_dir)}',
              '-r without a directory analyses the newest trace and names it', replay.stderr)
        check(replay.stdout == read_text(saved),
              '--analysis-output\'s file holds what stdout would have had')
        detailed = run([ZEPROF, '-r', '-k', '-j', json_dir], cwd=here)
        check(detailed.returncode == 0 and '"kernels"' in detailed.stdout and
              '"kernels"' not in replay.stdout,
              '-k reaches the merger: the JSON tally has the kernel detail',
              detailed.stderr.strip() + detailed.stdout[:200])
        # Made newer, the first trace is the one analysed; --analysis-output works with -r.
        later = time.time() + 60
        os.utime(trace_dir, (later, later))
        saved_replay = os.path.join(work, 'replay.txt')
        replay = run([ZEPROF, '-r', '--analysis-output', saved_replay], cwd=here)
        check(replay.returncode == 0 and not replay.stdout and
              f'zeprof-trace/{os.path.basename(trace_dir)}' in replay.stderr and
              'zeInit' in (read_text(saved_replay) or ''),
              '-r without a directory picks the newest by time; --analysis-output with -r',
              replay.stderr + replay.stdout[:200])
        check_recording_passed_over(here, trace_dir)
        failed = run([ZEPROF, '-r', '--analysis-output', saved_replay,
                      os.path.join(work, 'not-a-trace')], cwd=here)
        check(failed.returncode == 2 and 'zeInit' in (read_text(saved_replay) or '') and
              not any(name.startswith('.zeprof') for name in os.listdir(work)),
              'a failed analysis leaves --analysis-output\'s file as it was, no temporary file',
              failed.stderr.strip())
    elif merge:
        check(f'zeprof: zeprof-merge is not built; trace left in {trace_dir}' in completed.stderr,
              'a missing merger is reported', completed.stderr.strip())
        replay = zeprof(['-r', trace_dir])
        check(replay.returncode == 2 and replay.stderr.startswith('zeprof: '),
              '-r without a merger exits 2 with a reason', replay.stderr.strip())
    check_no_daemon_left('analysis')


def check_recording_passed_over(here, newest_complete):
    """-r without a directory passes over a trace still being recorded (its zeprof still runs),
    saying so, and analyses the newest complete one; once the recording ends it is the newest."""
    release = os.path.join(here, 'release')
    recording = subprocess.Popen(
        [ZEPROF, '--no-analysis', '--', 'sh', '-c',
         '"$1" calls "$2" && while [ ! -e "$0" ]; do sleep 0.05; done', release, APP,
         os.path.join(here, 'recording.log')],
        cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        recorded = []
        while time.monotonic() < deadline and not recorded:
            recorded = [name for name in os.listdir(os.path.join(here, 'zeprof-trace'))
                        if os.path.exists(os.path.join(here, 'zeprof-trace', name,
                                                       '.zeprof-recording'))]
            time.sleep(0.05)
        newest = os.path.join(here, 'zeprof-trace', recorded[0]) if recorded else ''
        if newest:
            # The recording is the newest directory and already holds LTTng's metadata.
            later = time.time() + 120
            os.utime(newest, (later, later))
        while newest and time.monotonic() < deadline and not any(
                'metadata' in files for _, _, files in os.walk(newest)):
            time.sleep(0.05)
        during = run([ZEPROF, '-r', '-j'], cwd=here)
        check(during.returncode == 0 and
              f'zeprof: passing over zeprof-trace/{recorded[0] if recorded else "?"}: still being '
              f'recorded (zeprof pid {recording.pid})' in during.stderr and
              f'zeprof-trace/{os.path.basename(newest_complete)}' in during.stderr,
              '-r without a directory passes over a trace still being recorded, saying so',
              during.stderr)
    finally:
        open(release, 'w').close()
        _, errors = recording.communicate(timeout=RUN_TIMEOUT_S)
    if newest:
        # Removing the mark made the directory older than the complete one (made newer above).
        later = time.time() + 180
        os.utime(newest, (later, later))
    after = run([ZEPROF, '-r', '-j'], cwd=here)
    check(recording.returncode == 0 and newest and
          not os.path.exists(os.path.join(newest, '.zeprof-recording')) and
          after.returncode == 0 and f'zeprof-trace/{os.path.basename(newest)}' in after.stderr,
          'once recorded, the mark is gone and the trace is the newest',
          f'{recording.returncode} {errors[-300:]} {after.stderr}')


def case_usage(work):
    """zeprof's own errors: status 2 and one line, nothing run; --help, --version. The process
    outside a launcher is rank 0: --traced-ranks without 0 runs COMMAND untraced."""
    usage_dir = os.path.join(work, 'usage')
    os.makedirs(os.path.join(usage_dir, 'zeprof-trace', 'empty'))
    for arguments, what in [(['--bogus', 'true'], 'an unknown option'),
                            (['-m', 'everything', 'true'], 'a bad mode'),
                            (['--no-analysis'], 'no command'),
                            (['-o'], 'an option without its value'),
                            (['--max-rate-ppm', 'many', 'true'], 'a bad number'),
                            (['--max-name-size', '0', 'true'], 'a bad name size'),
                            (['--traced-ranks', '1-x', 'true'], 'a malformed rank list'),
                            (['--traced-ranks', '0,,2', 'true'], 'an empty rank'),
                            (['--traced-ranks=5-2', 'true'], 'a range going backwards'),
                            (['--traced-ranks', '', 'true'], 'an empty rank list'),
                            (['--analysis-output', work, 'true'], 'a directory as the output'),
                            (['--sample=0', 'true'], 'a sampling period of 0'),
                            (['--sample=20ms', 'true'], 'a sampling period with a unit'),
                            (['-r'], '-r without a directory and no trace'),
                            (['--traced-ranks', '1', '-r', 'x'], '--traced-ranks with -r'),
                            (['--traced-ranks', '1', '--print-env'],
                             '--traced-ranks with --print-env')]:
        # The current directory has a zeprof-trace/ with no trace in it.
        completed = run([ZEPROF] + arguments, cwd=usage_dir)
        lines = completed.stderr.strip().splitlines()
        check(completed.returncode == 2 and len(lines) == 1 and lines[0].startswith('zeprof: '),
              f'{what}: exit 2 with one line', f'{completed.returncode} {completed.stderr!r}')
    version = zeprof(['--version'])
    check(version.returncode == 0 and re.match(r'^zeprof \d+\.\d+', version.stdout),
          '--version prints the version', version.stdout)
    usage = zeprof(['--help'])
    check(usage.returncode == 0 and 'Usage: zeprof' in usage.stdout, '--help prints the usage')
    busy = os.path.join(work, 'busy')
    os.makedirs(busy)
    open(os.path.join(busy, 'file'), 'w').close()
    completed = zeprof(['--no-analysis', '-o', busy, 'true'])
    check(completed.returncode == 2, 'an output directory that is not empty is refused',
          completed.stderr.strip())
    log_path = os.path.join(work, 'untraced.log')
    completed = run([ZEPROF, '--traced-ranks', '1-3', '--', 'sh', '-c', '"$@"; exit 3', 'sh',
                     APP, 'calls', log_path], cwd=usage_dir)
    loader = os.path.realpath(CallLog(log_path).values.get('loader', ''))
    check(completed.returncode == 3 and loader not in ('', os.path.realpath(SHIM)),
          'outside a launcher, --traced-ranks without 0 runs the program untraced, same status',
          f'{completed.returncode} {loader} {completed.stderr.strip()}')
    check(os.listdir(os.path.join(usage_dir, 'zeprof-trace')) == ['empty'],
          'an untraced run writes no trace')


def start_waiting_run(work, name, options=()):
    """zeprof running e2e_app wait-signal in the background; (process, log path) once the
    program is under way, or (process, None) when it did not get there."""
    log_path = os.path.join(work, f'{name}.log')
    ready = os.path.join(work, f'{name}.ready')
    process = subprocess.Popen([ZEPROF, '--no-analysis', '-o', os.path.join(work, name)]
                               + list(options) + ['--', APP, 'wait-signal', log_path, ready],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not os.path.exists(ready) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return process, (log_path if os.path.exists(ready) else None)


def end_waiting_run(process, what):
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    check(process.returncode == 0, f'{what} ends normally', stderr.strip())


def session_daemons():
    return [pid for pid, name in lttng_processes_left(home_prefix="zeprof-") or [] if name == 'lttng-sessiond']


def case_killed_run(work):
    """A zeprof run killed outright (SIGKILL, no cleanup possible) leaves its daemon; the next run
    of the user stops it (root: adopts the node's daemon; user: reaps the orphaned private one)."""
    if lttng_processes_left(home_prefix="zeprof-") is None:
        print('# killed-run: leftover daemons cannot be told here')
        return
    killed, killed_log = start_waiting_run(work, 'killed')
    check(killed_log is not None, 'a run to be killed is under way')
    os.killpg(killed.pid, signal.SIGKILL)
    killed.communicate()
    check(len(session_daemons()) == 1, 'the killed run leaves its daemon running',
          str(lttng_processes_left(home_prefix="zeprof-")))
    after = zeprof(['--no-analysis', '-o', os.path.join(work, 'after'), '--',
                    APP, 'calls', os.path.join(work, 'after.log')])
    check(after.returncode == 0, 'the next run succeeds', after.stderr.strip())
    check_no_daemon_left('after the run that followed a killed one')
    events, _ = read_trace(os.path.join(work, 'after'))
    check_trace_matches_log(events, CallLog(os.path.join(work, 'after.log')), 'next run')


def trace_pids(trace_dir):
    """The vpids of the processes that have API calls in the trace."""
    events, _ = read_trace(trace_dir)
    return {event.vpid for event in events if is_api_provider(event.provider)}


def check_only_own_calls(work, name, log_path, what):
    pids = trace_pids(os.path.join(work, name))
    check(pids == {app_pid(log_path)}, f'{what}: the trace holds its own process only',
          f'{pids} (own {app_pid(log_path)})')


def case_isolation(work):
    """Each run records only its own processes: concurrent runs, a long run overlapped by short
    ones, and (root) a run while a root session daemon zeprof did not start records a session of
    its own with the same events enabled."""
    first, first_log = start_waiting_run(work, 'first')
    second, second_log = start_waiting_run(work, 'second')
    if not check(first_log and second_log, 'two runs are under way at once'):
        for process in (first, second):
            process.kill()
            process.communicate()
        return
    check(len(session_daemons()) == 2, 'each has a session daemon of its own',
          str(session_daemons()))
    short_log = os.path.join(work, 'short.log')
    short = zeprof(['--no-analysis', '-o', os.path.join(work, 'short'), '--',
                    APP, 'calls', short_log])
    check(short.returncode == 0, 'a third, short run meanwhile succeeds', short.stderr.strip())
    end_waiting_run(first, 'the first run')
    end_waiting_run(second, 'the second run')
    check_no_daemon_left('after concurrent runs')
    for name, log_path in [('first', first_log), ('second', second_log), ('short', short_log)]:
        check_only_own_calls(work, name, log_path, f'{name} run')
        events, _ = read_trace(os.path.join(work, name))
        check_trace_matches_log(events, CallLog(log_path), f'{name} run')

    # A long run, whose program keeps starting children that call, overlapped by short runs: its
    # trace holds its children (and no one else), theirs only themselves.
    stop = os.path.join(work, 'stop-long')
    script = ('n=0; while [ ! -e "$1" ]; do "$2" calls "$3/long.$n.log" || exit 1; '
              'n=$((n + 1)); done')
    long_run = subprocess.Popen([ZEPROF, '--no-analysis', '-o', os.path.join(work, 'long'), '--',
                                 'sh', '-c', script, 'sh', stop, APP, work],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: os.path.exists(os.path.join(work, 'long.1.log')), RUN_TIMEOUT_S)
    for index in range(3):
        log_path = os.path.join(work, f'overlap{index}.log')
        completed = zeprof(['--no-analysis', '-o', os.path.join(work, f'overlap{index}'), '--',
                            APP, 'calls', log_path])
        check(completed.returncode == 0, f'short run {index} succeeds', completed.stderr.strip())
        check_only_own_calls(work, f'overlap{index}', log_path, f'short run {index}')
    open(stop, 'w').close()
    _, stderr = long_run.communicate(timeout=RUN_TIMEOUT_S)
    check(long_run.returncode == 0, 'the long run succeeds', stderr.strip())
    children = {app_pid(os.path.join(work, name)) for name in os.listdir(work)
                if re.match(r'^long\.\d+\.log$', name)}
    check(len(children) >= 2, 'the long run\'s program started children while short runs ran',
          str(children))
    pids = trace_pids(os.path.join(work, 'long'))
    check(pids == children, 'the long run\'s trace holds its children and no one else',
          f'{sorted(pids)} vs {sorted(children)}')
    check_no_daemon_left('after overlapping runs')

    if os.geteuid() != 0 or lttng_processes_left() is None:
        print('# isolation: a foreign root daemon only as root in a private namespace')
        return
    # A root daemon someone else started, recording every zeprof_* event of its own processes.
    foreign = subprocess.Popen(['lttng-sessiond', '--no-kernel'], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if run(['lttng', 'list']).returncode == 0:
                break
            time.sleep(0.1)
        foreign_dir = os.path.join(work, 'foreign-session')
        setup = run(['sh', '-c', 'lttng create foreign --output="$1" && '
                     'lttng enable-event -u "zeprof_*" && lttng add-context -u -t vpid && '
                     'lttng start', 'sh', foreign_dir])
        check(setup.returncode == 0, 'the foreign daemon records a session of its own',
              setup.stderr.strip())
        foreign_log = os.path.join(work, 'foreign-app.log')
        foreign_ready = os.path.join(work, 'foreign-app.ready')
        foreign_app = subprocess.Popen([APP, 'wait-signal', foreign_log, foreign_ready],
                                       env=environment(LD_PRELOAD=SHIM),
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(foreign_ready) and foreign_app.poll() is None:
            time.sleep(0.05)
        ours_log = os.path.join(work, 'ours.log')
        ours = zeprof(['--no-analysis', '-o', os.path.join(work, 'ours'), '--',
                       APP, 'calls', ours_log])
        check(ours.returncode == 0, 'a run beside the foreign daemon succeeds', ours.stderr.strip())
        check(foreign.poll() is None, 'the foreign daemon is left running')
        check_only_own_calls(work, 'ours', ours_log, 'the run beside a foreign daemon')
        events, _ = read_trace(os.path.join(work, 'ours'))
        check_trace_matches_log(events, CallLog(ours_log), 'the run beside a foreign daemon')
        foreign_app.send_signal(signal.SIGINT)
        foreign_app.wait(timeout=RUN_TIMEOUT_S)
        run(['lttng', 'stop', 'foreign'])
        foreign_pids = trace_pids(foreign_dir)
        check(app_pid(foreign_log) in foreign_pids,
              'the foreign session recorded its own program', str(foreign_pids))
    finally:
        foreign.terminate()
        foreign.wait(timeout=RUN_TIMEOUT_S)


def daemon_slots():
    """zeprof's daemon slots for this user (scripts/zeprof-daemon.bash)."""
    if os.geteuid() == 0:
        base = '/var/run/zeprof/daemons'
    else:
        base = os.path.join(os.environ['TMPDIR'], f'zeprof-{os.geteuid()}', 'daemons')
    return sorted(os.path.join(base, name) for name in os.listdir(base)
                  if name.startswith('slot-')) if os.path.isdir(base) else []


def wait_until(condition, patience_s):
    deadline = time.monotonic() + patience_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def case_warm_daemon(work):
    """With ZEPROF_DAEMON_IDLE, a run's daemon waits idle for the next run, which reuses it; a
    run that comes while the idle daemon is in use gets one of its own; idle daemons are stopped
    after the idle time."""
    # Long enough that a loaded machine still starts the next run before the idle daemon times
    # out (4 s raced the holder's start), short enough for the 60 s cleanup check below.
    env = environment(ZEPROF_DAEMON_IDLE='15')

    def traced(name):
        log_path = os.path.join(work, f'{name}.log')
        completed = run([ZEPROF, '--no-analysis', '-o', os.path.join(work, name), '--',
                         APP, 'calls', log_path], env=env)
        check(completed.returncode == 0, f'{name}: the run succeeds', completed.stderr.strip())
        check_quiet(completed.stderr, name)
        check_only_own_calls(work, name, log_path, name)
        return log_path

    def idle():
        return [slot for slot in daemon_slots() if os.path.exists(os.path.join(slot, 'idle'))]

    traced('cold')
    check(wait_until(lambda: len(idle()) == 1, 30), 'the daemon waits idle after the run',
          str(daemon_slots()))
    daemons = session_daemons()
    check(len(daemons) == 1, 'one daemon is left running, idle', str(daemons))
    traced('warm')
    check(session_daemons() == daemons, 'the next run reused it', str(session_daemons()))
    check(wait_until(lambda: len(idle()) == 1, 30), 'it is idle again after the warm run')

    # A run holding the warm daemon; another one meanwhile starts a daemon of its own.
    process = subprocess.Popen([ZEPROF, '--no-analysis', '-o', os.path.join(work, 'holder'), '--',
                                APP, 'wait-signal', os.path.join(work, 'holder.log'),
                                os.path.join(work, 'holder.ready')],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    wait_until(lambda: os.path.exists(os.path.join(work, 'holder.ready')), RUN_TIMEOUT_S)
    check(session_daemons() == daemons, 'the holder took the idle daemon')
    traced('beside')
    check(len(session_daemons()) == 2, 'the run beside it got a daemon of its own',
          str(session_daemons()))
    end_waiting_run(process, 'the holder')
    check_only_own_calls(work, 'holder', os.path.join(work, 'holder.log'), 'the holder')
    check(wait_until(lambda: not session_daemons(), 60) and wait_until(lambda: not daemon_slots(), 10),
          'idle daemons are stopped after the idle time, their slots removed',
          f'{session_daemons()} {daemon_slots()}')


def case_signal_message(work):
    """A program killed by a signal: one line of zeprof's, not bash's report of its subshell; the
    status stays 128+N. A program exiting with such a status is not said to be killed."""
    # In the sanitizer build the shim brings AddressSanitizer into sh, whose SIGFPE handler would
    # turn the signal into an exit.
    asan = (os.environ.get('ASAN_OPTIONS', '') + ':handle_sigfpe=0').lstrip(':')
    killed = zeprof(['--no-analysis', '-o', os.path.join(work, 'fpe'), '--',
                     'sh', '-c', 'kill -FPE $$'], env=environment(ASAN_OPTIONS=asan))
    check(killed.returncode == 136, 'the status is 128+SIGFPE', str(killed.returncode))
    lines = [line for line in killed.stderr.splitlines() if not line.startswith('zeprof: trace in')]
    check(lines == ['zeprof: sh killed by SIGFPE'], 'one line says which signal killed COMMAND',
          repr(killed.stderr))
    exited = zeprof(['--no-analysis', '-o', os.path.join(work, 'exit'), '--', 'sh', '-c', 'exit 136'])
    check(exited.returncode == 136 and 'killed' not in exited.stderr,
          'a program exiting with 136 is not reported killed', repr(exited.stderr))


def case_disk_full(work):
    """A disk that fills while recording: the program runs to its end, and zeprof says in one
    line that the trace is incomplete because the disk was full (root: a small tmpfs mounted in
    the test's private mount namespace)."""
    if os.geteuid() != 0 or lttng_processes_left() is None:
        print('# disk-full: root in a private namespace only')
        return
    small = os.path.join(work, 'small')
    os.makedirs(small)
    mounted = run(['mount', '-t', 'tmpfs', '-o', 'size=256k', 'zeprof-test-small', small])
    if not check(mounted.returncode == 0, 'a small tmpfs is mounted', mounted.stderr.strip()):
        return
    try:
        plain_log = os.path.join(work, 'plain.log')
        run([APP, 'loop', plain_log, '100000'])
        log_path = os.path.join(work, 'app.log')
        trace_dir = os.path.join(small, 'trace')
        completed = zeprof(['-o', trace_dir, '--', APP, 'loop', log_path, '100000'])
        check(completed.returncode == 0, 'the program exits normally', completed.stderr.strip())
        check(CallLog(log_path).outcome() == CallLog(plain_log).outcome(),
              'the program made all its calls, with the same results')
        lines = [line for line in completed.stderr.splitlines()
                 if not line.startswith('zeprof: trace in')]
        check(len(lines) == 1 and 'incomplete' in lines[0] and 'full' in lines[0],
              'one line says that the trace is incomplete because the disk was full',
              repr(completed.stderr[-600:]))
        check_no_daemon_left('disk-full')
    finally:
        run(['umount', '-l', small])


CASES = {
    'calls': case_calls,
    'dlopen': case_dlopen,
    'loader-missing': case_loader_missing,
    'lttng-missing': case_lttng_missing,
    'exit-status': case_exit_status,
    'stdin': case_stdin,
    'environment': case_environment,
    'sigint': case_sigint,
    'ctrl-c': case_ctrl_c,
    'lossless': case_lossless,
    'print-env': case_print_env,
    'analysis': case_analysis,
    'usage': case_usage,
    'killed-run': case_killed_run,
    'isolation': case_isolation,
    'warm-daemon': case_warm_daemon,
    'signal-message': case_signal_message,
    'disk-full': case_disk_full,
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f'usage: e2e_test.py {"|".join(CASES)}', file=sys.stderr)
        return 2
    # meson puts the build's library directories (the shim's among them) in LD_LIBRARY_PATH for
    # tests that depend on them: an "untraced" run would then load the shim as its loader.
    os.environ.pop('LD_LIBRARY_PATH', None)
    os.environ.pop('LD_PRELOAD', None)
    with tempfile.TemporaryDirectory(prefix='zeprof-e2e-') as work:
        os.chmod(work, 0o755)
        # zeprof's scratch directories (and a normal user's private daemons) live here.
        os.environ['TMPDIR'] = os.path.join(work, 'tmp')
        os.mkdir(os.environ['TMPDIR'])
        CASES[sys.argv[1]](work)
    return exit_status()


if __name__ == '__main__':
    sys.exit(main())
