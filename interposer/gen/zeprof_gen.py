#!/usr/bin/env python3
"""Generate the shim's sources from the installed Level Zero headers (run by meson at build time).

Usage: zeprof_gen.py --include-dir DIR --compat FILE [--hooks FILE] --outdir DIR

Writes, in --outdir: zeprof_api.h, zeprof_real.c, zeprof_tables.h, tables.c,
wrappers_{ze,zet,zes,zel}.c, zeprof_{ze,zet,zes,zel}.h (LTTng-UST providers),
probes_{ze,zet,zes,zel}.c, zeprof_shim.map (the version script) and, with --hooks,
timing_derived.c (the profiling hooks of appends found in the headers: classify.py).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import classify  # noqa: E402
import emit_api  # noqa: E402
import emit_providers  # noqa: E402
import emit_wrappers  # noqa: E402
import l0_headers  # noqa: E402

# The headers whose prototypes the shim wraps, relative to the Level Zero include directory.
# The *_ddi.h headers declare the ze*Get*ProcAddrTable getters the loader exports.
HEADERS = [
    'ze_api.h', 'ze_ddi.h', 'zet_api.h', 'zet_ddi.h', 'zes_api.h', 'zes_ddi.h',
    'loader/ze_loader.h',
    'layers/zel_tracing_api.h', 'layers/zel_tracing_ddi.h', 'layers/zel_tracing_register_cb.h',
]
FAMILIES = ['ze', 'zet', 'zes', 'zel']


def read_hooks(path):
    """hooks.list: `<function> pre|post|pre post` per line, `#` comments."""
    hooks = {}
    if not path:
        return hooks
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            if len(words) < 2 or any(w not in ('pre', 'post') for w in words[1:]):
                raise SystemExit(f'Failed to read hooks list: path={path}, line={number}')
            hooks[words[0]] = ' '.join(words[1:])
    return hooks


def write_file(path, text):
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--include-dir', required=True)
    ap.add_argument('--compat', required=True)
    ap.add_argument('--hooks', default='')
    ap.add_argument('--outdir', required=True)
    opts = ap.parse_args()

    present = [h for h in HEADERS if os.path.exists(os.path.join(opts.include_dir, h))]
    model = l0_headers.parse([(h, os.path.join(opts.include_dir, h)) for h in present] +
                             [('compat', opts.compat)])
    compat_names = {fn.name for fn in model.functions if fn.header == 'compat'}
    hooks = read_hooks(opts.hooks)
    if opts.hooks:
        for name, when in classify.newer_hooks(model).items():
            hooks.setdefault(name, when)
    derived = classify.derived_appends(model, hooks) if opts.hooks else []
    for fn in derived:
        hooks[fn.name] = 'pre post'
    out = opts.outdir

    write_file(os.path.join(out, 'zeprof_api.h'),
                     emit_api.emit_api_header(model, present, compat_names, hooks))
    write_file(os.path.join(out, 'zeprof_real.c'), emit_api.emit_real_c(model))
    write_file(os.path.join(out, 'zeprof_shim.map'), emit_api.emit_version_script(model))
    write_file(os.path.join(out, 'zeprof_tables.h'), emit_wrappers.emit_tables_h(model))
    write_file(os.path.join(out, 'tables.c'), emit_wrappers.emit_tables_c(model))
    for fam in FAMILIES:
        write_file(os.path.join(out, f'wrappers_{fam}.c'),
                         emit_wrappers.emit_wrappers_c(model, fam, hooks))
        write_file(os.path.join(out, f'zeprof_{fam}.h'),
                         emit_providers.emit_provider_header(model, fam))
        write_file(os.path.join(out, f'probes_{fam}.c'), emit_providers.emit_probe_c(fam))
    if opts.hooks:
        write_file(os.path.join(out, 'timing_derived.c'), classify.emit_derived_hooks(derived))
    return 0


if __name__ == '__main__':
    sys.exit(main())
