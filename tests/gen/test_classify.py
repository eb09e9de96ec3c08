#!/usr/bin/env python3
"""Unit tests of the wrapper generator's decisions (interposer/gen), on the fixture headers of
tests/gen/fixtures: each classifier is asserted on prototypes written for it, and a header the
parser cannot read fails the generator with one line naming the file and line.

    test_classify.py GEN_DIR CASE     (GEN_DIR: interposer/gen; CASE: see CASES)

Exit 0 when every check of CASE holds; each check is printed (tests/harness/checks.py).
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, 'fixtures')
GEN_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ''
sys.path.insert(0, os.path.join(HERE, '..', 'harness'))
sys.path.insert(0, GEN_DIR)
from checks import check, exit_status  # noqa: E402
import classify  # noqa: E402
import fields  # noqa: E402
import l0_headers  # noqa: E402
import shapes  # noqa: E402


def fixture_model():
    path = os.path.join(FIXTURES, 'prototypes.h')
    return l0_headers.parse([('prototypes.h', path)])


def by_name(model):
    return {fn.name: fn for fn in model.functions}


def case_parse():
    """The parser: every prototype, in order, with its parameters' types, names and directions."""
    model = fixture_model()
    functions = by_name(model)
    check(len(model.functions) == 16, 'the 16 prototypes of the fixture are read',
          str([fn.name for fn in model.functions]))
    check(model.functions[0].name == 'zeCommandListAppendFixtureWork'
          and model.functions[-1].name == 'zelFixtureGetVersion', 'in header order')
    check(functions['zelFixtureGetVersion'].params == [], '(void) has no parameter')
    work = functions['zeCommandListAppendFixtureWork']
    check([(p.ctype, p.name) for p in work.params[:3]] ==
          [('ze_command_list_handle_t', 'hCommandList'), ('uint32_t', 'count'),
           ('ze_event_handle_t', 'hSignalEvent')], 'types and names as spelled',
          str(work.params[:3]))
    getter = {p.name: p for p in functions['zeFixtureGetProperties'].params}
    directions = {name: getter[name].direction for name in ('hDevice', 'pCount', 'pFlags')}
    check(directions == {'hDevice': 'in', 'pCount': 'inout', 'pFlags': 'out'},
          'directions from [in], [in,out] and [out]', str(directions))
    check(functions['zeFixtureDestroy'].params[0].direction == 'in', '[in][release] is in')
    check(getter['desc'].ctype == 'const ze_fixture_desc_t*', 'pointer types normalised',
          getter['desc'].ctype)


def case_kinds():
    """Type kinds: what decides how a parameter is recorded."""
    model = fixture_model()
    expected = {
        'ze_device_handle_t': 'handle',          # typedef struct _x *x
        'ze_fixture_flags_t': 'enum',
        'ze_bool_t': 'integer',                  # an alias of uint8_t
        'uint64_t': 'integer',
        'double': 'float',
        'ze_pfnFixtureCallback_t': 'fnptr',
        'ze_fixture_desc_t': 'struct',
        'const ze_fixture_desc_t*': 'pointer',
        'ze_unknown_t': 'unknown',
    }
    kinds = {ctype: l0_headers.kind(model, ctype) for ctype in expected}
    check(kinds == expected, 'handles, enums, integers (through aliases), floats, function '
          'pointers, structs, pointers and unknown types', str(kinds))
    members = [m.name for m in model.structs.get('ze_fixture_desc_t', [])]
    check(members == ['stype', 'pName', 'size'], 'struct members kept for descriptors',
          str(members))


def case_appends():
    """classify.py: which appends the device-timing engine profiles."""
    model = fixture_model()
    functions = by_name(model)
    appends = {name for name, fn in functions.items() if classify.is_append(fn)}
    check(appends == {'zeCommandListAppendFixtureWork',
                      'zeCommandListUpdateMutableCommandSignalEventExp'},
          'an append is hCommandList, an hSignalEvent handle and a ze_result_t; no signal '
          'event, a pointer as signal event, a void return or another list name is not',
          str(sorted(appends)))
    derived = [fn.name for fn in classify.derived_appends(model, {})]
    check(derived == ['zeCommandListAppendFixtureWork'],
          'derived appends: the appends but those listed in NOT_PROFILED', str(derived))
    hooked = [fn.name for fn in classify.derived_appends(
        model, {'zeCommandListAppendFixtureWork': 'pre post'})]
    check(hooked == [], 'an append hooks.list already hooks keeps its hand-written hooks',
          str(hooked))
    check(classify.newer_hooks(model) == {'zeCommandListImmediateAppendCommandListsExp':
                                          'pre post'},
          'a NEWER_HOOKS function is hooked when the headers declare it',
          str(classify.newer_hooks(model)))
    older = l0_headers.Model(functions=[fn for fn in model.functions
                                        if fn.name not in classify.NEWER_HOOKS])
    check(classify.newer_hooks(older) == {}, 'and not when they do not')
    code = classify.emit_derived_hooks(classify.derived_appends(model, {}))
    check('void zeprof_hook_pre_zeCommandListAppendFixtureWork(' in code
          and '"zeCommandListAppendFixtureWork"' in code
          and 'timing_append_post_generic(args->hCommandList, &args->hSignalEvent' in code,
          'generic hooks are emitted for a derived append, naming it')
    check('typedef int zeprof_no_derived_appends;' in classify.emit_derived_hooks([]),
          'no derived append still makes a valid C unit')


def case_shapes():
    """shapes.py: one event for a call that cannot block, entry and exit for one that can."""
    model = fixture_model()
    one_event = {fn.name for fn in model.functions if shapes.is_one_event(fn.name)}
    check(one_event == {'zeCommandListAppendFixtureWork', 'zeCommandListAppendFixtureNoSignal',
                        'zeCommandListAppendFixtureEventPointer', 'zeCommandListAppendFixtureVoid',
                        'zeCommandListUpdateMutableCommandSignalEventExp',
                        'zeFixtureGetProperties', 'zeCommandListResetFixtureCounters'},
          'appends, getters and setters are one event; Synchronize, Create, Destroy, '
          'zeCommandListReset itself, zeMemAlloc*, AppendCommandLists and every zet/zes/zel '
          'call are entry and exit', str(sorted(one_event)))
    check(not shapes.is_one_event('zeInit') and not shapes.is_one_event('zeCommandQueueExecute'
                                                                         'CommandLists'),
          'zeInit and executes are entry and exit')


def case_fields():
    """fields.py: the out-parameters whose written value `_exit` records, decoded descriptors."""
    model = fixture_model()
    functions = by_name(model)
    outs = [p.name for p, _ in fields.out_params(model, functions['zeFixtureGetProperties'])]
    check(outs == ['pCount', 'phDevices', 'pFlags', 'pEnabled'],
          'out-values: non-const pointers to integers, handles, enums; not strings, bytes or '
          '[in] pointers', str(outs))
    check(fields.out_params(model, functions['zeCommandListAppendFixtureWork']) == [],
          'an append\'s out-parameters are never read (written by the device later)')
    check([p.name for p, _ in fields.out_params(model, functions['zeMemAllocFixture'])] ==
          ['pptr'], 'a void** out-parameter records the pointer written')
    decoded = [(p.name, how) for p, how in fields.desc_params(model,
                                                               functions['zeFixtureGetProperties'])]
    check(decoded == [('desc', 'struct'), ('pLabel', 'string')],
          'descriptors decoded: const pointers to known structs and const char* strings',
          str(decoded))
    entry = fields.entry_fields(model, functions['zeFixtureGetProperties'])
    check(any(f.startswith('lttng_ust_field_float(double, scale,') for f in entry)
          and any(f.startswith('lttng_ust_field_integer_hex(uint64_t, pfnCallback,')
                  for f in entry), 'a double as a float field, a function pointer in hex')
    families = [fields.family(name) for name in ('zeX', 'zetX', 'zesX', 'zelX')]
    check(families == ['ze', 'zet', 'zes', 'zel'], 'families by prefix', str(families))


def run_generator(header, outdir):
    with tempfile.TemporaryDirectory() as empty_include_dir:
        return subprocess.run([sys.executable, os.path.join(GEN_DIR, 'zeprof_gen.py'),
                               '--include-dir', empty_include_dir, '--compat', header,
                               '--outdir', outdir], capture_output=True, text=True, timeout=60)


def case_generator():
    """The generator end to end: a good header generates; a malformed one fails the build."""
    with tempfile.TemporaryDirectory() as out:
        good = run_generator(os.path.join(FIXTURES, 'prototypes.h'), out)
        check(good.returncode == 0, 'the generator accepts the fixture header',
              good.stderr.strip())
        with open(os.path.join(out, 'wrappers_ze.c'), encoding='utf-8') as f:
            wrappers = f.read() if good.returncode == 0 else ''
        check('zeFixtureGetProperties' in wrappers, 'and wraps its functions')
    for name, line, reason in (
            ('unnamed_parameter.h', 9, "parameter 'ze_device_handle_t' of zeFixtureBroken"),
            ('unclosed_prototype.h', 6, 'prototype of zeFixtureUnclosed is not closed')):
        header = os.path.join(FIXTURES, name)
        with tempfile.TemporaryDirectory() as out:
            bad = run_generator(header, out)
            written = os.listdir(out)
        lines = bad.stderr.strip().splitlines()
        check(bad.returncode != 0, f'{name}: the generator fails', f'exit {bad.returncode}')
        check(len(lines) == 1 and re.fullmatch(
            rf'Failed to parse header: path={re.escape(header)}, line={line}, reason=.+',
            lines[0]) is not None and reason in lines[0],
              f'{name}: one line naming the file and line {line}', bad.stderr.strip())
        check(written == [], f'{name}: nothing written', str(written))


CASES = {'parse': case_parse, 'kinds': case_kinds, 'appends': case_appends,
         'shapes': case_shapes, 'fields': case_fields, 'generator': case_generator}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    CASES[sys.argv[2]]()
    return exit_status()


if __name__ == '__main__':
    sys.exit(main())
