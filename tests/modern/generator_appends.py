#!/usr/bin/env python3
"""generator_appends.py: every append found in the headers gets the profiling hooks.

Usage: generator_appends.py GENERATOR INCLUDE_DIR COMPAT HOOKS CC [CFLAGS...]

Copies the installed Level Zero headers, adds to the copy's ze_api.h an append-like prototype
(a command list and a signal event), a function with a signal event but no command list, and a
second declaration-only function named like one listed as not profiled, runs the generator on
the copy with the engine's hooks list, and checks that:
- the new append's wrapper calls zeprof_hook_pre_/zeprof_hook_post_ around the real call, its hook
  prototypes are in zeprof_api.h, and timing_derived.c defines them through the engine's generic
  hooks with the function's name;
- the function without a command list gets no hooks;
- timing_derived.c compiles (CC CFLAGS -fsyntax-only) against the generated zeprof_api.h.
Exit 0 on success, 1 with a FAIL line otherwise.
"""
import os
import shutil
import subprocess
import sys
import tempfile

APPEND = 'zeCommandListAppendZeprofFutureOp'
NOT_APPEND = 'zeEventZeprofFutureMark'

NEW_FUNCTIONS = f'''
ZE_APIEXPORT ze_result_t ZE_APICALL
{APPEND}(
    ze_command_list_handle_t hCommandList,          ///< [in] handle of the command list
    uint64_t value,                                 ///< [in] what the operation writes
    ze_event_handle_t hSignalEvent,                 ///< [in][optional] handle of the event to signal on completion
    uint32_t numWaitEvents,                         ///< [in][optional] number of events to wait on
    ze_event_handle_t* phWaitEvents                 ///< [in][optional][range(0, numWaitEvents)] events to wait on
    );

ZE_APIEXPORT ze_result_t ZE_APICALL
{NOT_APPEND}(
    ze_context_handle_t hContext,                   ///< [in] handle of the context
    ze_event_handle_t hSignalEvent                  ///< [in] an event
    );
'''


def fail(message):
    print(f'FAIL {message}')
    sys.exit(1)


def function_body(text, name):
    """The generated zeprof_call_<name> function's text."""
    start = text.find(f'zeprof_call_{name}(')
    if start < 0:
        fail(f'no zeprof_call_{name} in the wrappers')
    return text[start:text.index('\n}\n', start)]


def main():
    script, include_dir, compat, hooks, cc = sys.argv[1:6]
    cflags = sys.argv[6:]
    with tempfile.TemporaryDirectory() as tmp:
        newer = os.path.join(tmp, 'include', 'level_zero')
        shutil.copytree(include_dir, newer)
        header = os.path.join(newer, 'ze_api.h')
        with open(header, encoding='utf-8') as f:
            text = f.read()
        cut = text.rindex('#if defined(__cplusplus)')
        with open(header, 'w', encoding='utf-8') as f:
            f.write(text[:cut] + NEW_FUNCTIONS + text[cut:])
        out = os.path.join(tmp, 'out')
        os.mkdir(out)
        r = subprocess.run([sys.executable, script, '--include-dir', newer, '--compat', compat,
                            '--hooks', hooks, '--outdir', out],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f'the generator failed: {r.stderr}')

        def read(name):
            with open(os.path.join(out, name), encoding='utf-8') as f:
                return f.read()
        api, wrappers, derived = read('zeprof_api.h'), read('wrappers_ze.c'), read('timing_derived.c')

        body = function_body(wrappers, APPEND)
        pre, call, post = (body.find(f'zeprof_hook_pre_{APPEND}(&a, &ctx)'), body.find('zp_real(a.'),
                           body.find(f'zeprof_hook_post_{APPEND}(&a, &ctx, r)'))
        if not 0 <= pre < call < post:
            fail(f'{APPEND}: the wrapper does not call its hooks around the real call')
        for needle in (f'void zeprof_hook_pre_{APPEND}(struct zeprof_args_{APPEND} *args',
                       f'void zeprof_hook_post_{APPEND}(struct zeprof_args_{APPEND} *args'):
            if needle not in api:
                fail(f'zeprof_api.h lacks {needle!r}')
            if needle not in derived:
                fail(f'timing_derived.c lacks {needle!r}')
        if f'"{APPEND}"' not in derived or 'timing_append_pre_generic' not in derived:
            fail('timing_derived.c does not time the append through the generic hooks')

        if 'zeprof_hook_' in function_body(wrappers, NOT_APPEND) or NOT_APPEND in derived:
            fail(f'{NOT_APPEND} has no command list but got profiling hooks')

        source_dir = os.path.dirname(os.path.abspath(hooks))
        r = subprocess.run([cc, '-fsyntax-only', '-std=c11', '-D_GNU_SOURCE', '-Wall', '-Wextra', '-Werror',
                            f'-I{out}', f'-I{os.path.dirname(source_dir)}',
                            f'-I{os.path.dirname(newer)}', f'-I{newer}'] + cflags +
                           [os.path.join(out, 'timing_derived.c')],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f'timing_derived.c does not compile: {r.stderr[-2000:]}')
    print(f'ok {APPEND} is profiled; {NOT_APPEND} is not')
    return 0


if __name__ == '__main__':
    sys.exit(main())
