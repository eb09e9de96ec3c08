#!/usr/bin/env python3
"""The shim's tests, one subcommand each (run by meson, see meson.build).

  exports SHIM REAL_LOADER RESOLVER
      Every ze*/zet*/zes*/zel* symbol the real loader exports is exported by the shim, and with the
      shim preloaded resolves into the shim (through the global scope and through
      dlopen("libze_loader.so.1")); the counts match; the shim exports nothing but API functions,
      the frame API (which resolves into the shim too) and, on x86-64, dlopen and dlsym.
  same-results SHIM REAL_LOADER WORKLOAD MODE
      The workload's output and exit status are identical without and with the shim; without it
      the functions it binds to lie in the real loader, with it every one lies in the shim.
  missing-loader SHIM WORKLOAD
      ZEPROF_LOADER=/nonexistent: every call returns ZE_RESULT_ERROR_UNINITIALIZED, one stderr line.
  missing-lttng SHIM WORKLOAD
      A shim without its providers next to it: one stderr line, results unchanged.
  valgrind SHIM WORKLOAD SUPPRESSIONS
      The workload under the shim is memcheck-clean (no error, no definite or indirect leak), in
      one of its modes with the device telemetry sampler running.
  traced RECORD SHIM WORKLOAD MODE ZEPROF_MODE [--fork] [--clock-plugin PLUGIN]
      A recorded run: every call the workload made is recorded once, in order, with the result it
      saw: a call that cannot block as one `_call` event (`_call_full` in full mode) whose start
      lies between the thread's previous event and its own, the others as one entry and one exit;
      descriptors per mode. --fork: a forked child (no exec) keeps
      tracing: its zeInit and zeDriverGet appear, paired, under its own vpid. --clock-plugin: the
      run uses an LTTng clock plugin an hour ahead of CLOCK_MONOTONIC (tests/multihost/skewclock.c).
  generator GEN_SCRIPT INCLUDE_DIR COMPAT
      A newer header (a copy with one more prototype and one more descriptor struct) gives one
      more wrapper, argument struct, table member, export and set of events, with no hand edit.
  constructor RECORD SHIM PROGRAM
      l0_constructor calls zeInit before main(): that call is traced like any other.
  threads RECORD SHIM PROGRAM
      l0_threads races the lazy initialization from 8 threads, traced: all calls succeed and
      every one of them is recorded (one event, or entry and exit) on its own thread.
  dl-callers SHIM PROGRAM LOCAL_LIB
      The shim's dlsym keeps glibc's caller-dependent answers (dlsym(RTLD_NEXT) from a library,
      dlsym(RTLD_DEFAULT) from a library opened RTLD_LOCAL): same output with and without it.
  newer-loader RECORD SHIM PROGRAM STANDIN REAL_LOADER MODE
      l0_newer_loader against a loader newer than the shim's headers (the stand-in, which exports
      one function the shim does not wrap), with ZEPROF_LOADER pointing at it: the same output and
      status as without the shim, and zeInit/zeDriverGet traced. MODE: lazy (the extra function
      by lazy binding), dlsym-handle (on dlopen("libze_loader.so.1")), dlsym-default
      (RTLD_DEFAULT, before any other call), abs-path-standin (dlopen of the stand-in's path),
      abs-path-real (dlopen of the real loader's absolute path, on the simulated device: the
      program gets the shim, and its calls are traced).
Exit status: 0 pass, 1 fail, 77 skip (meson's protocol).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'interposer', 'gen'))
from shapes import is_one_event  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

API = re.compile(r'^ze[tsl]?[A-Z]\w*$')

# Independent of the generator's rules: calls that must keep an entry and an exit (they wait on
# the device or create and destroy objects) and calls that must be one event (cheap, frequent).
MUST_BLOCK = {'zeInit', 'zeContextCreate', 'zeCommandListCreate', 'zeCommandListCreateImmediate',
              'zeEventHostSynchronize', 'zeCommandQueueExecuteCommandLists',
              'zeCommandQueueSynchronize', 'zeFenceHostSynchronize', 'zeCommandListReset',
              'zeCommandListDestroy', 'zeContextDestroy', 'zeModuleCreate', 'zeMemAllocDevice',
              'zeMemFree'}
MUST_BE_ONE_EVENT = {'zeKernelSetArgumentValue', 'zeCommandListAppendLaunchKernel',
                     'zeCommandListAppendMemoryCopy', 'zeEventQueryStatus', 'zeKernelSetGroupSize',
                     'zeDeviceGetProperties', 'zeDriverGet', 'zeEventHostSignal'}


def preload(shim):
    """LD_PRELOAD for the shim; a sanitizer runtime must come first (SHIM_TEST_PRELOAD_FIRST)."""
    first = os.environ.get('SHIM_TEST_PRELOAD_FIRST', '')
    return f'{first}:{shim}' if first else shim


def fail(message):
    """A failed check the test cannot go on after (tests/harness/checks.py): exit 1."""
    check(False, message)
    sys.exit(exit_status())


def run(cmd, env_extra=None, drop=()):
    # meson points LD_LIBRARY_PATH at build/interposer, where the shim is named like the loader:
    # a run "without the shim" would get it anyway.
    drop = tuple(drop) + ('LD_LIBRARY_PATH',)
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra or {})
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


# The shim's deliberate non-API exports: the frame API (zeprof.h's recorder and the four
# documented functions, interposer/frame.c) and the dl routes (interposer/dl_route.c, x86-64).
FRAME_API = ['zeprof_frame_record', 'zeprof_dispatch_begin', 'zeprof_dispatch_end',
             'zeprof_serve_begin', 'zeprof_serve_end']
DL_ROUTES = ['dlopen', 'dlsym']


def defined_dynamic_symbols(path):
    out = subprocess.run(['nm', '-D', '--defined-only', path], capture_output=True, text=True,
                         check=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[parts[2]] = parts[1]
    return symbols


def test_exports(shim, real, resolver):
    shim_syms = defined_dynamic_symbols(shim)
    real_api = sorted(s for s in defined_dynamic_symbols(real) if API.match(s))
    own = FRAME_API + (DL_ROUTES if os.uname().machine == 'x86_64' else [])
    for name in own:
        if shim_syms.pop(name, None) != 'T':
            fail(f'the shim does not export {name}')
    not_api = sorted(s for s in shim_syms if not API.match(s) or shim_syms[s] != 'T')
    if not_api:
        fail(f'the shim exports non-API symbols: {not_api[:10]}')
    missing = [s for s in real_api if s not in shim_syms]
    if missing:
        fail(f'the shim lacks {len(missing)} of the loader\'s functions: {missing[:10]}')
    extra = sorted(set(shim_syms) - set(real_api))
    print(f'real loader API functions: {len(real_api)}, found in the shim: '
          f'{len(real_api) - len(missing)}, shim exports: {len(shim_syms)} '
          f'(declared by the headers, absent from this loader: {extra})')
    with tempfile.NamedTemporaryFile('w', suffix='.txt') as names:
        names.write('\n'.join(real_api + FRAME_API) + '\n')
        names.flush()
        r = run([resolver, names.name, shim], {'LD_PRELOAD': preload(shim)})
    print(r.stdout, end='')
    print(f'own exports: {own}')
    if r.returncode != 0:
        fail(f'symbols do not resolve into the shim: {r.stderr.strip()}')
    if f'resolved={len(real_api) + len(FRAME_API)}' not in r.stdout:
        fail('resolver count mismatch')


def workload_env(shim):
    env = {}
    if shim:
        env['LD_PRELOAD'] = preload(shim)
    return env


def test_same_results(shim, real, workload, mode):
    drop = ('LD_PRELOAD', 'ZEPROF_LOADER', 'ZEPROF_MODE')
    # Without the shim, the real loader hands out its own functions; its tables may point
    # straight into the driver, so only direct calls and dlsym have a known origin.
    origin = ['--expect-origin', real] if mode != 'tables' else []
    plain = run([workload, mode] + origin, drop=drop)
    traced = run([workload, mode, '--expect-origin', shim], workload_env(shim), drop=drop)
    print(plain.stdout, end='')
    if plain.returncode != 0:
        fail(f'the workload fails without the shim: {plain.stderr.strip()}')
    if traced.returncode != plain.returncode:
        fail(f'exit status differs: {plain.returncode} vs {traced.returncode}: {traced.stderr}')
    if traced.stdout != plain.stdout:
        fail(f'results differ:\n{plain.stdout}\nvs\n{traced.stdout}')
    if 'bad_argument_size=0x0' in plain.stdout or 'bad_argument_size' not in plain.stdout:
        fail('the error path did not fail')
    if traced.stderr.strip():
        fail(f'the shim printed something unasked: {traced.stderr.strip()}')


def test_missing_loader(shim, workload):
    for mode in ('direct', 'dlsym'):
        r = run([workload, mode, '--expect-uninit'],
                {'LD_PRELOAD': preload(shim), 'ZEPROF_LOADER': '/nonexistent'})
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        if r.returncode != 0:
            fail(f'{mode}: calls were not refused with ZE_RESULT_ERROR_UNINITIALIZED: '
                 f'{r.stdout} {r.stderr}')
        want = 'zeprof: cannot open the real Level Zero loader: path=/nonexistent, reason='
        if len(lines) != 1 or not lines[0].startswith(want):
            fail(f'{mode}: expected one line starting {want!r}, got {lines}')
        print(f'{mode}: {r.stdout.strip()} | {lines[0]}')


def test_missing_lttng(shim, workload):
    drop = ('LD_PRELOAD', 'ZEPROF_LOADER', 'ZEPROF_MODE')
    plain = run([workload, 'direct'], drop=drop)
    with tempfile.TemporaryDirectory() as lonely:
        copy = os.path.join(lonely, 'libze_loader.so.1')
        shutil.copy(shim, copy)
        r = run([workload, 'direct'], {'LD_PRELOAD': preload(copy)}, drop=drop)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    if r.returncode != plain.returncode or r.stdout != plain.stdout:
        fail(f'results differ without the providers: {r.stdout} {r.stderr}')
    if len(lines) != 1 or not lines[0].startswith('zeprof: LTTng-UST tracing unavailable'):
        fail(f'expected one line about LTTng-UST, got {lines}')
    print(lines[0])


def test_valgrind(shim, workload, suppressions):
    if shutil.which('valgrind') is None:
        print('valgrind not installed')
        sys.exit(77)
    # dlsym: dlopen("libze_loader.so.1") and dlsym through the shim's dl routes (dl_route.c).
    # direct: with the device telemetry sampler too (its thread, its exit and its zes calls).
    sampling = {'ZEPROF_SAMPLE_MS': '2', 'ZES_ENABLE_SYSMAN': '1'}
    for mode in ('direct', 'tables', 'dlsym'):
        r = run(['valgrind', '--error-exitcode=9', '--leak-check=full', '--num-callers=30',
                 '--errors-for-leak-kinds=definite,indirect', f'--suppressions={suppressions}',
                 workload, mode],
                {'LD_PRELOAD': preload(shim), **(sampling if mode == 'direct' else {})})
        summary = [line for line in r.stderr.splitlines() if 'ERROR SUMMARY' in line]
        print(f'{mode}: {summary}')
        if r.returncode != 0:
            fail(f'{mode}: valgrind status {r.returncode}:\n{r.stderr[-3000:]}')


EVENT = re.compile(r'^\[[^\]]*\] \([^)]*\) \S+ (zeprof_\w+):(\w+): \{[^}]*\}, \{ (.*?) \}, '
                   r'\{ ?(.*?) ?\}$')


CALL_START = re.compile(r'\bcall_start = (\d+)')


def read_trace(trace_dir, with_cycles=False):
    """(provider, name, vtid, payload, vpid) per event; with_cycles: plus the timestamp in clock
    cycles and, for a one-event call, its call_start (same scale), else None."""
    r = subprocess.run(['babeltrace2', '--clock-cycles', trace_dir], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        fail(f'babeltrace2 failed: {r.stderr.strip()}')
    events = []
    for line in r.stdout.splitlines():
        m = EVENT.match(line)
        if not m:
            fail(f'unexpected trace line: {line}')
        context = dict(kv.split(' = ', 1) for kv in m.group(3).split(', '))
        event = (m.group(1), m.group(2), context['vtid'], m.group(4), context['vpid'])
        if with_cycles:
            start = CALL_START.search(m.group(4))
            event += (int(line[1:line.index(']')]), int(start.group(1)) if start else None)
        events.append(event)
    return events


def split_name(name):
    """'zeFoo_call_full' -> ('zeFoo', 'call_full'); 'zeFoo_entry' -> ('zeFoo', 'entry')."""
    if name.endswith('_call_full'):
        return name[:-len('_call_full')], 'call_full'
    function, _, kind = name.rpartition('_')
    return function, kind


def test_traced(record, shim, workload, mode, zeprof_mode, *options):
    extra = ['--fork'] if '--fork' in options else []
    clock = {}
    if '--clock-plugin' in options:
        # For the session daemon, its consumer and the program alike (record passes its
        # environment on): every event and every call start on a clock an hour ahead.
        clock = {'LTTNG_UST_CLOCK_PLUGIN': options[options.index('--clock-plugin') + 1],
                 'ZEPROF_TEST_CLOCK_SKEW_NS': str(3600 * 10**9)}
    with tempfile.TemporaryDirectory() as tmp:
        calls_path = os.path.join(tmp, 'calls.txt')
        trace_dir = os.path.join(tmp, 'trace')
        r = run([record, '--blocking', trace_dir, '--', 'env', f'LD_PRELOAD={preload(shim)}',
                 f'ZEPROF_MODE={zeprof_mode}', workload, mode, '--calls', calls_path] + extra,
                clock)
        if r.returncode == 77:
            print(r.stderr)
            sys.exit(77)
        if r.returncode != 0:
            fail(f'traced run failed ({r.returncode}): {r.stdout} {r.stderr}')
        with open(calls_path, encoding='utf-8') as f:
            calls = f.read().split()
        events = read_trace(trace_dir, with_cycles=True)

    api = [e for e in events if e[0] in ('zeprof_ze', 'zeprof_zet', 'zeprof_zes', 'zeprof_zel')]
    if not api:
        fail('no API event recorded')
    parent = api[0][4]
    children = {e[4] for e in api} - {parent}
    if extra:
        child_calls = [e[1] for e in api if e[4] in children and
                       e[1].endswith(('_entry', '_call', '_call_full'))]
        want = ['zeInit_entry', 'zeDriverGet_call_full' if zeprof_mode == 'full' else
                'zeDriverGet_call']
        if len(children) != 1 or child_calls != want:
            fail(f'the forked child is not traced as expected: {children} {child_calls}')
    elif children:
        fail(f'events from unexpected processes: {children}')
    # Per thread: the stack of open entry/exit calls, the descriptor of a one-event call awaiting
    # its call event, and the timestamp of the thread's previous event.
    stacks, pending_desc, previous_ts, top_level, exits = {}, {}, {}, [], []
    shapes_seen = {}
    call_kind = 'call_full' if zeprof_mode == 'full' else 'call'
    for provider, name, vtid, payload, vpid, ts, start in api:
        if vpid != parent:
            vtid = f'{vpid}/{vtid}'
        function, kind = split_name(name)
        stack = stacks.setdefault(vtid, [])
        waiting = pending_desc.pop(vtid, None)
        if waiting is not None and (kind not in ('call', 'call_full') or function != waiting):
            fail(f'the descriptor of {waiting} on thread {vtid} is followed by {name}')
        if kind in ('entry', 'call', 'call_full'):
            shapes_seen[function] = 'one event' if kind != 'entry' else 'entry and exit'
            if is_one_event(function) != (kind != 'entry'):
                fail(f'{function} recorded as {kind}, against its shape')
        if kind == 'entry':
            if not stack and vpid == parent:
                top_level.append(function)
            stack.append(function)
        elif kind == 'desc' and is_one_event(function):
            pending_desc[vtid] = function
        elif kind in ('exit', 'desc'):
            if not stack or stack[-1] != function:
                fail(f'{kind} of {function} on thread {vtid} does not close {stack[-1:]}')
            if kind == 'exit':
                stack.pop()
                exits.append((function, payload))
        elif kind in ('call', 'call_full'):
            if kind != call_kind:
                fail(f'{name} recorded in mode {zeprof_mode}')
            if start is None or start > ts or start < previous_ts.get(vtid, 0):
                fail(f'{name} on thread {vtid}: start {start} not between the previous event '
                     f'({previous_ts.get(vtid)}) and its own ({ts})')
            if not stack and vpid == parent:
                top_level.append(function)
            exits.append((function, payload))
            fields = {kv.split(' = ', 1)[0] for kv in payload.split(', ')}
            if kind == 'call' and fields != {'call_start', 'result'}:
                fail(f'{name} carries more than its start and result: {payload}')
            if kind == 'call_full' and function == 'zeKernelSetArgumentValue' and \
                    'argIndex' not in fields:
                fail(f'{name} lacks the arguments in full mode: {payload}')
        else:
            fail(f'unknown event {provider}:{name}')
        previous_ts[vtid] = ts
    open_calls = {t: s for t, s in stacks.items() if s}
    if open_calls:
        fail(f'calls without exit: {open_calls}')
    if any(pending_desc.values()):
        fail(f'descriptors without their call: {pending_desc}')
    wrong_shape = [(f, how) for f, how in shapes_seen.items()
                   if (f in MUST_BLOCK and how != 'entry and exit') or
                   (f in MUST_BE_ONE_EVENT and how != 'one event')]
    checked = MUST_BLOCK.union(MUST_BE_ONE_EVENT).intersection(shapes_seen)
    if wrong_shape or len(checked) < 10:
        fail(f'wrong shapes: {wrong_shape}; checked {sorted(checked)}')
    if top_level != calls:
        fail(f'traced calls differ from the calls made:\n{top_level}\nvs\n{calls}')
    bad = [p for f, p in exits if f == 'zeKernelSetArgumentValue' and 'result = 0x78000016' in p]
    if len(bad) != 1:
        fail('the failing zeKernelSetArgumentValue is not traced with its error code')
    descs = [e for e in api if e[1].endswith('_desc')]
    kernel_named = any(e[1] == 'zeKernelCreate_desc' and
                       'desc_pKernelName = "zesim_vadd_f32"' in e[3] for e in descs)
    groups = any(e[1] == 'zeCommandListAppendLaunchKernel_desc' and
                 'pLaunchFuncArgs_groupCountX = 16' in e[3] for e in descs)
    image = [e for e in descs if e[1] == 'zeImageGetProperties_desc']
    if zeprof_mode == 'full' and not any('desc_width = 64' in e[3] for e in image):
        fail('full mode did not decode the image descriptor')
    if zeprof_mode != 'full' and image:
        fail(f'{zeprof_mode} mode decoded a descriptor outside the curated set')
    if zeprof_mode == 'minimal' and descs:
        fail(f'minimal mode recorded descriptors: {descs[0]}')
    if zeprof_mode != 'minimal' and not kernel_named:
        fail('the kernel name is missing from the descriptors')
    # Launches are one-event calls: their descriptors (group counts) in full mode only.
    if (zeprof_mode == 'full') != groups:
        fail(f'group counts decoded: {groups}, in mode {zeprof_mode}')
    print(f'{len(calls)} calls, {len(api)} API events, {len(descs)} descriptor events, '
          f'{len(events) - len(api)} other events: one-event calls start in order, entries and '
          f'exits pair up in order; {len(checked)} shapes checked')


def test_threads(record, shim, program):
    threads, calls = 8, 200
    with tempfile.TemporaryDirectory() as tmp:
        trace_dir = os.path.join(tmp, 'trace')
        r = run([record, '--blocking', trace_dir, '--', 'env', f'LD_PRELOAD={preload(shim)}',
                 program, str(threads), str(calls)])
        if r.returncode == 77:
            sys.exit(77)
        if r.returncode != 0:
            fail(f'l0_threads failed ({r.returncode}): {r.stdout} {r.stderr}')
        events = read_trace(trace_dir)
    stacks, entries = {}, {}
    for provider, name, vtid, payload, vpid in events:
        if provider != 'zeprof_ze':
            continue
        function, kind = split_name(name)
        stack = stacks.setdefault(vtid, [])
        if kind in ('entry', 'call'):
            entries[function] = entries.get(function, 0) + 1
        if kind == 'entry':
            stack.append(function)
        elif kind == 'exit':
            if not stack or stack.pop() != function:
                fail(f'unpaired exit of {function} on thread {vtid}')
        if kind in ('exit', 'call') and 'result = 0x0' not in payload:
            fail(f'{function} failed on thread {vtid}: {payload}')
    if any(stacks.values()):
        fail('calls without exit')
    want = threads * calls
    if len(stacks) != threads or any(entries.get(f) != want
                                     for f in ('zeInit', 'zeDriverGet', 'zeDeviceGet')):
        fail(f'expected {want} calls of each function on {threads} threads: {entries} '
             f'on {len(stacks)} threads')
    print(f'{r.stdout.strip()}: {sum(entries.values())} calls traced on {len(stacks)} threads')


NEW_FUNCTION = '''
typedef struct _ze_zeprof_future_desc_t
{
    ze_structure_type_t stype;                      ///< [in] type of this structure
    const void* pNext;                              ///< [in][optional] extension
    uint32_t ordinal;                               ///< [in] an ordinal
    const char* pLabel;                             ///< [in] a label
} ze_zeprof_future_desc_t;

ZE_APIEXPORT ze_result_t ZE_APICALL
zeZeprofFutureCreate(
    ze_context_handle_t hContext,                   ///< [in] handle of the context
    const ze_zeprof_future_desc_t* desc,            ///< [in] pointer to a descriptor
    uint64_t* pValue                                ///< [out] value written
    );
'''


def generate(script, include_dir, compat, outdir):
    r = subprocess.run([sys.executable, script, '--include-dir', include_dir, '--compat', compat,
                        '--outdir', outdir], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f'the generator failed: {r.stderr}')
    with open(os.path.join(outdir, 'zeprof_api.h'), encoding='utf-8') as f:
        count = int(re.search(r'#define ZEPROF_API_FUNCTION_COUNT (\d+)', f.read()).group(1))
    return count


def test_generator(script, include_dir, compat):
    with tempfile.TemporaryDirectory() as tmp:
        newer = os.path.join(tmp, 'include')
        shutil.copytree(include_dir, newer)
        header = os.path.join(newer, 'ze_api.h')
        with open(header, encoding='utf-8') as f:
            text = f.read()
        cut = text.rindex('#if defined(__cplusplus)')
        with open(header, 'w', encoding='utf-8') as f:
            f.write(text[:cut] + NEW_FUNCTION + text[cut:])
        os.mkdir(os.path.join(tmp, 'old'))
        os.mkdir(os.path.join(tmp, 'new'))
        old_count = generate(script, include_dir, compat, os.path.join(tmp, 'old'))
        new_count = generate(script, newer, compat, os.path.join(tmp, 'new'))
        if new_count != old_count + 1:
            fail(f'expected one more function: {old_count} -> {new_count}')

        def read(name):
            with open(os.path.join(tmp, 'new', name), encoding='utf-8') as f:
                return f.read()
        wants = {
            'zeprof_api.h': ['struct zeprof_args_zeZeprofFutureCreate {',
                             '(ZE_APICALL *zeZeprofFutureCreate)('],
            'wrappers_ze.c': ['ze_result_t ZE_APICALL zeZeprofFutureCreate('],
            'zeprof_shim.map': ['zeZeprofFutureCreate;'],
            'zeprof_ze.h': ['zeZeprofFutureCreate_entry', 'zeZeprofFutureCreate_exit',
                            'pValue_val', 'zeZeprofFutureCreate_desc', 'desc_ordinal',
                            'lttng_ust_field_string(desc_pLabel'],
        }
        for name, needles in wants.items():
            text = read(name)
            for needle in needles:
                if needle not in text:
                    fail(f'{name} lacks {needle!r}')
    print(f'{old_count} functions from the installed headers, {new_count} from the newer copy')


def test_constructor(record, shim, program):
    with tempfile.TemporaryDirectory() as tmp:
        trace_dir = os.path.join(tmp, 'trace')
        r = run([record, '--blocking', trace_dir, '--', 'env', f'LD_PRELOAD={preload(shim)}',
                 program])
        if r.returncode == 77:
            sys.exit(77)
        if r.returncode != 0:
            fail(f'l0_constructor failed ({r.returncode}): {r.stdout} {r.stderr}')
        events = read_trace(trace_dir)
    api = [(e[1], e[3]) for e in events if e[0] == 'zeprof_ze']
    names = [name for name, _ in api]
    if names != ['zeInit_entry', 'zeInit_exit', 'zeDriverGet_call']:
        fail(f'unexpected events: {names}')
    if 'result = 0x0' not in api[1][1]:
        fail(f'zeInit traced with another result: {api[1][1]}')
    print(f'{r.stdout.strip()}: {names}')


def test_dl_callers(shim, program, local_lib):
    drop = ('LD_PRELOAD', 'ZEPROF_LOADER')
    plain = run([program, local_lib], drop=drop)
    traced = run([program, local_lib], {'LD_PRELOAD': preload(shim)}, drop=drop)
    print(f'untraced: {plain.stdout.strip()} traced: {traced.stdout.strip()}')
    if plain.returncode != 0 or plain.stdout.strip() != 'next=B default=7':
        fail(f'unexpected result without the shim: {plain.stdout} {plain.stderr}')
    if traced.returncode != 0 or traced.stdout != plain.stdout:
        fail(f'the shim changed what dlsym finds: {traced.stdout} {traced.stderr}')


def test_newer_loader(record, shim, program, standin, real, mode):
    with tempfile.TemporaryDirectory() as tmp:
        # The program is linked against the stand-in, whose SONAME is libze_loader.so.1.
        loader = os.path.join(tmp, 'libze_loader.so.1')
        os.symlink(os.path.abspath(standin), loader)
        arguments = {'abs-path-standin': ['abs-path', loader],
                     'abs-path-real': ['abs-path', real]}.get(mode, [mode])
        zeprof_loader = real if mode == 'abs-path-real' else loader
        plain = run([program] + arguments, {'LD_LIBRARY_PATH': tmp},
                    drop=('LD_PRELOAD', 'ZEPROF_LOADER'))
        if plain.returncode != 0:
            fail(f'{mode}: the program fails without the shim: {plain.stdout} {plain.stderr}')
        trace_dir = os.path.join(tmp, 'trace')
        traced = run([record, '--blocking', trace_dir, '--', 'env', f'LD_PRELOAD={preload(shim)}',
                      f'ZEPROF_LOADER={zeprof_loader}', program] + arguments,
                     drop=('LD_PRELOAD', 'ZEPROF_LOADER'))
        if traced.returncode == 77:
            print(traced.stderr)
            sys.exit(77)
        print(f'untraced: {plain.stdout.strip()}\ntraced:   {traced.stdout.strip()}')
        if traced.returncode != plain.returncode or traced.stdout != plain.stdout:
            fail(f'{mode}: traced run differs ({traced.returncode}): {traced.stdout} '
                 f'{traced.stderr.strip()}')
        events = read_trace(trace_dir)
    names = []
    for e in events:  # a one-event call (F_call, F_call_full) counts as its entry and exit
        if e[0] == 'zeprof_ze':
            function = re.sub(r'_call(_full)?$', '', e[1])
            names += [function + '_entry', function + '_exit'] if function != e[1] else [e[1]]
    # zeDriverGet is called once, after zeInit (in abs-path modes through the handle only).
    want = ['zeInit_entry', 'zeInit_exit', 'zeDriverGet_entry', 'zeDriverGet_exit']
    seen = [n for n in names if n in want]
    if seen[-4:] != want or seen.count('zeDriverGet_entry') != 1:
        fail(f'{mode}: the calls were not traced: {names}')
    print(f'{mode}: same results, {len(names)} API events')


def main():
    if len(sys.argv) < 2:
        fail(__doc__)
    command, args = sys.argv[1], sys.argv[2:]
    tests = {
        'exports': test_exports,
        'same-results': test_same_results,
        'missing-loader': test_missing_loader,
        'missing-lttng': test_missing_lttng,
        'traced': test_traced,
        'valgrind': test_valgrind,
        'threads': test_threads,
        'constructor': test_constructor,
        'generator': test_generator,
        'newer-loader': test_newer_loader,
        'dl-callers': test_dl_callers,
    }
    if command not in tests:
        fail(f'unknown test {command}')
    tests[command](*args)
    return 0


if __name__ == '__main__':
    sys.exit(main())
