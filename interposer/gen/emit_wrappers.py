"""Emit the wrappers (one .c per family) and the DDI table patching (tables.c).

Each function F gets:
- `zeprof_call_F(real, params)`: the traced call of hooks.md (guard check, args struct, entry,
  desc, pre hook, real call, post hook, table patching for table getters, exit); a call recorded
  as one event (shapes.py) reads the trace clock instead of firing the entry and fires `F_call`
  (or `F_call_full` in full mode) with that start instead of the exit;
- the exported `F(params)`: lazy initialization, then zeprof_call_F(zeprof_real.F, ...);
- when F appears in a DDI table, `zeprof_table_F(params)`, which the patched tables point at:
  zeprof_call_F(<the entry the real loader put in the table>, ...);
- for the ze, zet and zes families, `zeprof_ext_F(params)`, which zeDriverGetExtensionFunctionAddress
  hands back in place of the driver's F (emit_extensions.py).
"""

import emit_extensions
import fields
import l0_headers as hdr
import shapes
from emit_api import HEADER_BANNER, params_decl


def _args(fn):
    return ', '.join(p.name for p in fn.params)


def _unavailable(fn):
    if fn.ret == 'ze_result_t':
        return 'ZE_RESULT_ERROR_UNINITIALIZED', 'ZE_RESULT_ERROR_UNSUPPORTED_FEATURE'
    return '0', '0'


def table_types(model):
    """{dditable struct name: [(member, function name)]} for the functions the model knows."""
    names = {fn.name for fn in model.functions}
    tables = {}
    for sname, members in model.structs.items():
        if not sname.endswith('_dditable_t'):
            continue
        entries = []
        for m in members:
            t = m.ctype
            prefix, _, rest = t.partition('_pfn')
            if not rest.endswith('_t') or not m.name.startswith('pfn'):
                continue
            fname = prefix + rest[:-2]
            if fname in names:
                entries.append((m.name, fname))
        if entries:
            tables[sname] = entries
    return tables


def _table_param(model, fn, tables):
    for p in fn.params:
        if p.ctype.endswith('*'):
            target, is_const = hdr.pointee(p.ctype)
            if not is_const and target in tables:
                return p, target
    return None, None


# Families whose provider the shim loads at their first call rather than at its initialization
# (shim_init.c): rare calls, and every event a program registers costs it a round trip to the
# session daemon at start-up.
LAZY_FAMILIES = ('zet', 'zes', 'zel')


def _emit_call(model, fn, hooks, tables):
    name, fam = fn.name, fields.family(fn.name)
    provider = f'zeprof_{fam}'
    when = hooks.get(name, '')
    is_result = fields.returns_result(fn)
    lines = [f'static {fn.ret} zeprof_call_{name}(__typeof__(zeprof_real.{name}) zp_real'
             + ''.join(f', {p.ctype} {p.name}' for p in fn.params) + ')', '{']
    lines.append('    if (zeprof_unlikely(zeprof_guard_raised()))')
    lines.append(f'        return zp_real({_args(fn)});')
    if fam in LAZY_FAMILIES:
        # Its provider registers at the family's first call (shim_init.c), before any event.
        lines.append(f'    zeprof_load_family(ZEPROF_FAMILY_{fam.upper()});')
    init = ', '.join(f'.{p.name} = {p.name}' for p in fn.params) or '0'
    lines.append(f'    struct zeprof_args_{name} a = {{ {init} }};')
    if when:
        lines.append('    struct zeprof_hook_ctx ctx = { 0 };')
    one_event = shapes.is_one_event(name)
    if one_event:
        # One event at the exit (docs/tracepoints.md): the start is read now, on LTTng's own
        # clock, only when the event is enabled. A call that began before tracing was enabled
        # is not recorded (it was not seen from its start).
        lines.append('    const bool zp_full = zeprof_mode >= ZEPROF_MODE_FULL;')
        lines.append(f'    const bool zp_traced = zp_full ? lttng_ust_tracepoint_enabled('
                     f'{provider}, {name}_call_full) :')
        lines.append(f'        lttng_ust_tracepoint_enabled({provider}, {name}_call);')
    else:
        lines.append(f'    lttng_ust_tracepoint({provider}, {name}_entry, &a);')
    if fields.desc_fields(model, fn):
        # One-event calls decode descriptors in full mode only: payload is cost on the hot path.
        # An extension lookup is rare and its name says what the program will call: always.
        curated = name in fields.CURATED_DESC and (not one_event or name == emit_extensions.LOOKUP)
        mode = 'ZEPROF_MODE_DEFAULT' if curated else 'ZEPROF_MODE_FULL'
        structs = fields.desc_structs(model, fn)
        lines.append(f'    if (zeprof_mode >= {mode} && '
                     f'lttng_ust_tracepoint_enabled({provider}, {name}_desc)) {{')
        dargs = ''
        for i, p in enumerate(structs):
            target, _ = hdr.pointee(p.ctype)
            # A NULL descriptor is the application's error to report; decode zeroes instead.
            lines.append(f'        static const {target} zp_zero{i};')
            dargs += f', a.{p.name} ? a.{p.name} : &zp_zero{i}'
        lines.append(f'        lttng_ust_do_tracepoint({provider}, {name}_desc, &a{dargs});')
        lines.append('    }')
    if one_event:
        # After the descriptor: the call's time is its own, and starts after every earlier event.
        lines.append('    const uint64_t zp_start = zp_traced ? zeprof_trace_clock() : 0;')
    if 'pre' in when:
        lines.append('    zeprof_guard_enter();')
        lines.append(f'    zeprof_hook_pre_{name}(&a, &ctx);')
        lines.append('    zeprof_guard_leave();')
    call = ', '.join(f'a.{p.name}' for p in fn.params)
    # The guard stays raised across the real call: should the loader reach an exported API symbol
    # (its own, without RTLD_DEEPBIND, or a patched table entry), that call goes straight through.
    lines.append('    zeprof_guard_enter();')
    lines.append(f'    {fn.ret} r = zp_real({call});')
    lines.append('    zeprof_guard_leave();')
    if 'post' in when:
        lines.append('    zeprof_guard_enter();')
        lines.append(f'    zeprof_hook_post_{name}(&a, &ctx, r);')
        lines.append('    zeprof_guard_leave();')
    tparam, ttype = _table_param(model, fn, tables)
    if tparam is not None and is_result:
        lines.append(f'    if (r == ZE_RESULT_SUCCESS && a.{tparam.name} != NULL)')
        lines.append(f'        zeprof_patch_{ttype}(zp_real, {_args_from_a(fn)}, a.{tparam.name});')
    result = '(uint32_t) r' if is_result else '0'
    if one_event:
        lines.append('    if (zp_traced && zp_full)')
        lines.append(f'        lttng_ust_tracepoint({provider}, {name}_call_full, &a, {result}, '
                     'zp_start);')
        lines.append('    else if (zp_traced)')
        lines.append(f'        lttng_ust_tracepoint({provider}, {name}_call, {result}, zp_start);')
    else:
        lines.append(f'    lttng_ust_tracepoint({provider}, {name}_exit, &a, {result});')
    lines += emit_extensions.lookup_lines(fn)
    lines.append('    return r;')
    lines.append('}')
    return lines


def _args_from_a(fn):
    return 'a.' + fn.params[0].name


# The exported functions that initialize the real loader's exported API (compat/api_ready.h).
API_INIT_FUNCTIONS = ('zeInit', 'zeInitDrivers')


def _emit_exported(fn):
    name = fn.name
    uninit, missing = _unavailable(fn)
    call = f'zeprof_call_{name}(zeprof_real.{name}' + ''.join(f', {p.name}' for p in fn.params) + ')'
    lines = [f'{fn.ret} ZE_APICALL {name}({params_decl(fn)})', '{',
             '    if (zeprof_unlikely(!zeprof_ready()))',
             f'        return {uninit};',
             f'    if (zeprof_unlikely(zeprof_real.{name} == NULL))',
             f'        return {missing};']
    if name in API_INIT_FUNCTIONS:
        lines += [f'    {fn.ret} r = {call};', '    zeprof_api_init_returned((int) r);',
                  '    return r;', '}']
    else:
        lines += [f'    return {call};', '}']
    return lines


def _emit_table_entry(fn):
    name = fn.name
    return [f'{fn.ret} ZE_APICALL zeprof_table_{name}({params_decl(fn)})', '{',
            f'    __typeof__(zeprof_real.{name}) zp_real = '
            f'__atomic_load_n(&zeprof_table_real.{name}, __ATOMIC_ACQUIRE);',
            '',
            '    if (zeprof_unlikely(zp_real == NULL))',
            f'        zp_real = zeprof_real.{name};',
            f'    return zeprof_call_{name}(zp_real' +
            ''.join(f', {p.name}' for p in fn.params) + ');', '}']


def emit_wrappers_c(model, fam, hooks):
    tables = table_types(model)
    in_tables = {f for entries in tables.values() for _, f in entries}
    out = [HEADER_BANNER,
           f'/* The wrappers of the {fam}* functions (what each step does: interposer/gen/emit_wrappers.py). */',
           '#include <stdbool.h>', '#include <stddef.h>', '#include <stdint.h>',
           '#include <string.h>', '',
           '#include "zeprof_api.h"', '#include "guard.h"', '#include "shim.h"',
           '#include "compat/api_ready.h"', '#include "trace_clock.h"',
           '#include "zeprof_tables.h"', f'#include "zeprof_{fam}.h"', '']
    for fn in model.functions:
        if fields.family(fn.name) != fam:
            continue
        out += _emit_call(model, fn, hooks, tables)
        out.append('')
        out += _emit_exported(fn)
        out.append('')
        if fn.name in in_tables:
            out += _emit_table_entry(fn)
            out.append('')
    out += emit_extensions.emit(model, fam, params_decl)
    return '\n'.join(out) + '\n'


def emit_tables_h(model):
    tables = table_types(model)
    in_tables = {f for entries in tables.values() for _, f in entries}
    out = [HEADER_BANNER,
           '/* DDI table patching: the table entries the shim substitutes (see tables.c). */',
           '#ifndef ZEPROF_TABLES_H', '#define ZEPROF_TABLES_H', '', '#include "zeprof_api.h"', '',
           '/* The real loader\'s table entries, stored when a table is patched. */',
           'extern struct zeprof_real_table zeprof_table_real;', '']
    for fn in model.functions:
        if fn.name in in_tables:
            out.append(f'{fn.ret} ZE_APICALL zeprof_table_{fn.name}({params_decl(fn)});')
    out.append('')
    for fn in model.functions:
        tparam, ttype = _table_param(model, fn, tables)
        if tparam is not None:
            out.append(f'void zeprof_patch_{ttype}(__typeof__(zeprof_real.{fn.name}) getter, '
                       f'{fn.params[0].ctype} version, {ttype} *table);')
    out.append('')
    out += emit_extensions.declarations()
    out.append('')
    out.append('#endif')
    return '\n'.join(out) + '\n'


def emit_tables_c(model):
    tables = table_types(model)
    out = [HEADER_BANNER,
           '/*',
           ' * Patch the DDI tables the real loader returns so that callers which dispatch through',
           ' * tables (static loaders, layers) reach the wrappers. The caller\'s table may be an',
           ' * older, shorter version of the struct, so the shim never writes a member the real',
           ' * loader did not write: it asks the real getter again, with the same version, for a',
           ' * zeroed private table of the full size, and patches exactly the members that came',
           ' * back non-NULL. The real entries are kept in zeprof_table_real, so a wrapper reached',
           ' * through a table calls the real entry and never itself.',
           ' */',
           '#include <string.h>', '',
           '#include "zeprof_api.h"', '#include "guard.h"', '#include "zeprof_tables.h"', '']
    done = set()
    for fn in model.functions:
        tparam, ttype = _table_param(model, fn, tables)
        if tparam is None or ttype in done:
            continue
        done.add(ttype)
        out.append(f'void zeprof_patch_{ttype}(__typeof__(zeprof_real.{fn.name}) getter, '
                   f'{fn.params[0].ctype} version, {ttype} *table)')
        out.append('{')
        out.append(f'    {ttype} written;')
        out.append('')
        out.append('    memset(&written, 0, sizeof(written));')
        out.append('    zeprof_guard_enter();')
        out.append('    ze_result_t result = getter(version, &written);')
        out.append('    zeprof_guard_leave();')
        out.append('    if (result != ZE_RESULT_SUCCESS)')
        out.append('        return;')
        for member, fname in tables[ttype]:
            out.append(f'    if (written.{member} != NULL && written.{member} != '
                       f'zeprof_table_{fname}) {{')
            out.append(f'        __atomic_store_n(&zeprof_table_real.{fname}, '
                       f'written.{member}, __ATOMIC_RELEASE);')
            out.append(f'        table->{member} = zeprof_table_{fname};')
            out.append('    }')
        out.append('}')
        out.append('')
    return '\n'.join(out) + '\n'
