"""Which functions the device-timing engine profiles, derived from the headers.

An append is profiled when the engine can time it: its parameters include a command list
(`ze_command_list_handle_t hCommandList`) and the event it signals on completion
(`ze_event_handle_t hSignalEvent`), and it returns ze_result_t. Each such function gets the
profiling hooks, so that an append variant of newer headers is timed on rebuild with no hand edit.
Functions that match but must not be profiled are listed in NOT_PROFILED, with the reason.

Appends that interposer/timing/hooks.list already hooks keep their hand-written hooks (which
describe the append: kernel name, bytes, group counts). The others get generic hooks, generated
here into timing_derived.c: they call the engine's timing_append_pre_generic and
timing_append_post_generic with the function's name as what was appended.
"""

from emit_api import HEADER_BANNER

NOT_PROFILED = {
    # Changes the signal event of a command already recorded in a mutable list: appends nothing.
    'zeCommandListUpdateMutableCommandSignalEventExp': 'appends nothing',
    # Executes regular lists on an immediate list: timed per execution, like
    # zeCommandQueueExecuteCommandLists, never as one append.
    'zeCommandListImmediateAppendCommandListsExp': 'executes lists',
}


# Hooks of functions newer than the oldest headers zeprof builds against (spec 1.4): hooked when
# the headers declare them; the engine compiles these hooks under the same header version.
NEWER_HOOKS = {
    'zeCommandListImmediateAppendCommandListsExp': 'pre post',  # spec 1.9
}


def newer_hooks(model):
    """{name: 'pre post'} of NEWER_HOOKS that the headers declare."""
    names = {fn.name for fn in model.functions}
    return {name: when for name, when in NEWER_HOOKS.items() if name in names}


def is_append(fn):
    """True when fn has a command list and a signal event, and returns ze_result_t."""
    types = {p.name: p.ctype for p in fn.params}
    return (fn.ret == 'ze_result_t' and types.get('hCommandList') == 'ze_command_list_handle_t'
            and types.get('hSignalEvent') == 'ze_event_handle_t')


def derived_appends(model, hooks):
    """The appends to profile that hooks.list does not hook: they get generic hooks."""
    return [fn for fn in model.functions
            if is_append(fn) and fn.name not in NOT_PROFILED and fn.name not in hooks]


def emit_derived_hooks(functions):
    """timing_derived.c: the generic profiling hooks of the derived appends."""
    out = [HEADER_BANNER,
           '/* Profiling hooks of the appends found in the headers that interposer/timing/hooks.list',
           ' * does not hook (interposer/gen/classify.py). */',
           '#include "timing/timing_internal.h"', '#include "zeprof_api.h"', '']
    if not functions:
        out.append('typedef int zeprof_no_derived_appends; /* ISO C: a unit is never empty */')
    for fn in functions:
        name = fn.name
        out += [f'void zeprof_hook_pre_{name}(struct zeprof_args_{name} *args, '
                'struct zeprof_hook_ctx *ctx)', '{',
                '    timing_append_pre_generic(args->hCommandList, &args->hSignalEvent, ctx);',
                '}', '',
                f'void zeprof_hook_post_{name}(struct zeprof_args_{name} *args, '
                'struct zeprof_hook_ctx *ctx, ze_result_t result)', '{',
                f'    timing_append_post_generic(args->hCommandList, &args->hSignalEvent, "{name}",',
                '                               ctx, result);', '}', '']
    return '\n'.join(out) + '\n'
