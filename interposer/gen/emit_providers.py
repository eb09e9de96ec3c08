"""Emit the LTTng-UST providers zeprof_ze, zeprof_zet, zeprof_zes and zeprof_zel.

For every function F of a family, by its shape (shapes.py): `F_entry(args)` and
`F_exit(args, result)` for a call that can block, `F_call(result, start)` and
`F_call_full(args, result, start)` for a call recorded as one event; and, when F has something to
decode, `F_desc(args, d0, d1, ...)`. Every tracepoint takes a pointer to the
wrapper's `struct zeprof_args_F` instead of the parameters themselves: LTTng-UST allows at most ten
tracepoint arguments, and fields are then only computed when the event is enabled.
The probe source of each provider is a two-line .c that instantiates the header.
"""

import fields
import shapes
from emit_api import HEADER_BANNER


def _event(provider, name, args, flds):
    body = '\n'.join(f'        {f}' for f in flds)
    return (f'LTTNG_UST_TRACEPOINT_EVENT({provider}, {name},\n'
            f'    LTTNG_UST_TP_ARGS({args}),\n'
            f'    LTTNG_UST_TP_FIELDS(\n{body}\n    )\n)\n')


# Events defined first, in this order. LTTng numbers a channel's event classes in registration
# order and gives the first 31 a 4-byte compact header instead of a 16-byte one. zeprof_ze's
# probes register first (meson links the generated sources before the hand-written ones), so its
# first events get those ids: the one-event calls a chatty program makes most, and the entry and
# exit of the frequent blocking ones. Names absent from the headers are skipped.
FIRST_EVENTS = [
    'zeKernelSetArgumentValue_call', 'zeCommandListAppendLaunchKernel_call',
    'zeCommandListAppendMemoryCopy_call', 'zeCommandListAppendBarrier_call',
    'zeCommandListAppendSignalEvent_call', 'zeCommandListAppendWaitOnEvents_call',
    'zeCommandListAppendEventReset_call', 'zeCommandListAppendMemoryFill_call',
    'zeEventQueryStatus_call', 'zeEventHostReset_call', 'zeEventHostSignal_call',
    'zeKernelSetGroupSize_call', 'zeKernelSuggestGroupSize_call', 'zeFenceQueryStatus_call',
    'zeCommandListClose_call', 'zeMemGetAllocProperties_call',
    'zeEventHostSynchronize_entry', 'zeEventHostSynchronize_exit',
    'zeCommandQueueExecuteCommandLists_entry', 'zeCommandQueueExecuteCommandLists_exit',
    'zeCommandListReset_entry', 'zeCommandListReset_exit',
]


def _function_events(model, fn, provider):
    """{event name: its definition} of one function, in definition order."""
    events = {}
    args = f'const struct zeprof_args_{fn.name} *, zp_args'
    if shapes.is_one_event(fn.name):
        events[f'{fn.name}_call'] = _event(provider, f'{fn.name}_call',
                                           'uint32_t, zp_result, uint64_t, zp_start',
                                           fields.call_fields(model, fn))
        events[f'{fn.name}_call_full'] = _event(provider, f'{fn.name}_call_full',
                                                args + ', uint32_t, zp_result, uint64_t, zp_start',
                                                fields.call_full_fields(model, fn))
    else:
        events[f'{fn.name}_entry'] = _event(provider, f'{fn.name}_entry', args,
                                            fields.entry_fields(model, fn))
        events[f'{fn.name}_exit'] = _event(provider, f'{fn.name}_exit',
                                           args + ', uint32_t, zp_result',
                                           fields.exit_fields(model, fn))
    desc = fields.desc_fields(model, fn)
    if desc:
        structs = fields.desc_structs(model, fn)
        if len(structs) > 9:
            raise SystemExit(f'Failed to emit descriptor event: function={fn.name}, '
                             'reason=more than 9 descriptors')
        desc_args = args + ''.join(
            f', const {fields.hdr.pointee(p.ctype)[0]} *, zp_d{i}'
            for i, p in enumerate(structs))
        events[f'{fn.name}_desc'] = _event(provider, f'{fn.name}_desc', desc_args, desc)
    return events


def emit_provider_header(model, fam):
    provider = f'zeprof_{fam}'
    guard = f'ZEPROF_{fam.upper()}_PROVIDER_H'
    out = [HEADER_BANNER,
           f'/* LTTng-UST provider {provider}: call, entry, exit and descriptor events (docs/tracepoints.md). */',
           '#undef LTTNG_UST_TRACEPOINT_PROVIDER',
           f'#define LTTNG_UST_TRACEPOINT_PROVIDER {provider}',
           '#undef LTTNG_UST_TRACEPOINT_INCLUDE',
           f'#define LTTNG_UST_TRACEPOINT_INCLUDE "{provider}.h"', '',
           f'#if !defined({guard}) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)',
           f'#define {guard}', '',
           '#include <stdint.h>', '#include <lttng/tracepoint.h>', '#include "zeprof_api.h"', '']
    events = {}
    for fn in model.functions:
        if fields.family(fn.name) == fam:
            events.update(_function_events(model, fn, provider))
    first = [name for name in FIRST_EVENTS if name in events]
    out += [events[name] for name in first]
    out += [text for name, text in events.items() if name not in first]
    out.append(f'#endif /* {guard} */')
    out.append('')
    out.append('#include <lttng/tracepoint-event.h>')
    return '\n'.join(out) + '\n'


def emit_probe_c(fam):
    return (HEADER_BANNER +
            f'/* Instantiates the probes of provider zeprof_{fam} (loaded by the shim at run time). */\n'
            '#define LTTNG_UST_TRACEPOINT_CREATE_PROBES\n'
            f'#include "zeprof_{fam}.h"\n')
