"""What each tracepoint records for each function: the field rules of docs/tracepoints.md.

Guarantees: for a Function of the model, `entry_fields`, `exit_fields` and `desc_fields` give the
LTTng-UST field macros (as C text) in a stable order; the expressions read the wrapper's argument
struct through `zp_args`, the result through `zp_result`, and decoded descriptors through
`zp_d<N>` (see `desc_params`). The curated set of functions whose descriptors are decoded in
`default` mode lives here too, next to the reason each one matters.
"""

import l0_headers as hdr

# Families: provider suffix by name prefix. Longest prefix first.
FAMILIES = [('zet', 'zet'), ('zes', 'zes'), ('zel', 'zel'), ('ze', 'ze')]


def family(name):
    for prefix, fam in FAMILIES:
        if name.startswith(prefix):
            return fam
    raise SystemExit(f'Failed to classify function: name={name}')


# Functions whose descriptors `default` mode decodes: what a profile needs to name and size work.
CURATED_DESC = {
    'zeKernelCreate',                       # kernel name
    'zeCommandListAppendLaunchKernel',      # group counts
    'zeCommandListAppendLaunchCooperativeKernel',
    'zeCommandListCreate',                  # list ordinal and flags
    'zeCommandListCreateImmediate',         # queue ordinal, index, mode, priority, flags
    'zeCommandQueueCreate',
    'zeEventPoolCreate',                    # pool flags (timestamps?) and count
    'zeEventCreate',                        # event index and scopes
    'zeFenceCreate',
    'zeContextCreate',
    'zeContextCreateEx',
    'zeMemAllocDevice',                     # allocation flags and ordinal
    'zeMemAllocHost',
    'zeMemAllocShared',
    'zeModuleCreate',                       # module format, size, build flags
    'zeImageCreate',
    'zeCommandListAppendMemoryCopyRegion',  # copy region sizes
    'zeCommandListAppendImageCopyRegion',
    'zeCommandListAppendImageCopyToMemory',
    'zeCommandListAppendImageCopyFromMemory',
    'zePhysicalMemCreate',
    'zeDriverGetExtensionFunctionAddress',  # extension function name
    'zeModuleGetFunctionPointer',
    'zeModuleGetGlobalPointer',
}

# Pointer parameters that point into device memory: never dereferenced on the host.
DEVICE_BUFFER_PARAMS = {'pLaunchArgumentsBuffer', 'pNumLaunchArguments'}

MAX_DESC_DEPTH = 3


def _int_field(model, ctype, name, expr, hexa=False):
    k = hdr.kind(model, ctype)
    macro = 'lttng_ust_field_integer_hex' if hexa else 'lttng_ust_field_integer'
    if k in ('pointer', 'handle', 'fnptr'):
        return f'lttng_ust_field_integer_hex(uint64_t, {name}, (uint64_t)(uintptr_t)({expr}))'
    if k == 'enum':
        return f'{macro}(uint32_t, {name}, (uint32_t)({expr}))'
    if k == 'integer':
        base = hdr.resolve(model, ctype)
        if base == 'char':
            base = 'int8_t'
        return f'{macro}({base}, {name}, {expr})'
    if k == 'float':
        return f'lttng_ust_field_float(double, {name}, (double)({expr}))'
    return None


def entry_fields(model, fn):
    fields = []
    for p in fn.params:
        expr = f'zp_args->{p.name}'
        f = _int_field(model, p.ctype, p.name, expr)
        if f is None and hdr.kind(model, p.ctype) in ('struct', 'union'):
            # A handle passed by value (IPC handles, thread ids): its bytes, in hex.
            f = (f'lttng_ust_field_array_hex(uint8_t, {p.name}, (const uint8_t *)&{expr}, '
                 f'sizeof({p.ctype}))')
        if f is None:
            raise SystemExit(f'Failed to map parameter: function={fn.name}, type={p.ctype}')
        fields.append(f)
    return fields


def returns_result(fn):
    return fn.ret == 'ze_result_t'


def out_params(model, fn):
    """Parameters whose written value `_exit` records: non-const pointer to a handle or integer."""
    if 'CommandListAppend' in fn.name:
        return []  # written by the device later, possibly device memory: never read on the host
    outs = []
    for p in fn.params:
        if not p.ctype.endswith('*') or p.ctype.count('*') > 2 or p.direction == 'in':
            continue
        target, is_const = hdr.pointee(p.ctype)
        if is_const or p.name in DEVICE_BUFFER_PARAMS:
            continue
        if target in ('char', 'uint8_t', 'int8_t', 'void'):
            continue  # byte buffers and strings are not values
        if target.endswith('*') and target.rstrip('*') != 'void':
            continue
        k = 'pointer' if target.endswith('*') else hdr.kind(model, target)
        if k in ('pointer', 'handle', 'integer', 'enum'):
            outs.append((p, target))
    return outs


def exit_fields(model, fn):
    fields = ['lttng_ust_field_integer_hex(uint32_t, result, (uint32_t)zp_result)']
    ok = 'zp_result == 0' if returns_result(fn) else '1'
    for p, target in out_params(model, fn):
        expr = f'(({ok}) && zp_args->{p.name}) ? *zp_args->{p.name} : 0'
        k = 'pointer' if target.endswith('*') else hdr.kind(model, target)
        if k == 'pointer':
            expr = (f'(({ok}) && zp_args->{p.name}) ? (uint64_t)(uintptr_t)*zp_args->{p.name} '
                    f': 0')
        fields.append(_int_field(model, target, f'{p.name}_val', expr))
    return fields


def call_fields(model, fn):
    """`F_call` in modes minimal and default: what the tally, the timeline and -t need."""
    return ['lttng_ust_field_integer(uint64_t, call_start, zp_start)',
            'lttng_ust_field_integer_hex(uint32_t, result, (uint32_t)zp_result)']


def call_full_fields(model, fn):
    """`F_call_full` in mode full: the start, every argument, the result and out-values."""
    names = {p.name for p in fn.params}
    if 'call_start' in names or 'result' in names:
        raise SystemExit(f'Failed to emit call event: function={fn.name}, '
                         'reason=a parameter is named call_start or result')
    return ([call_fields(model, fn)[0]] + entry_fields(model, fn) + exit_fields(model, fn))


def desc_params(model, fn):
    """Parameters `_desc` decodes: const pointers to known structs, and `const char *` strings."""
    out = []
    for p in fn.params:
        if p.ctype.count('*') != 1 or p.name in DEVICE_BUFFER_PARAMS:
            continue
        if 'device buffer' in p.note:
            continue
        target, is_const = hdr.pointee(p.ctype)
        if not is_const:
            continue
        if target == 'char':
            out.append((p, 'string'))
        elif hdr.kind(model, target) == 'struct' and _flatten(model, hdr.resolve(model, target),
                                                             'x', 'x', 0):
            out.append((p, 'struct'))
    return out


def _flatten(model, struct_name, prefix, expr, depth):
    fields = []
    for m in model.structs.get(struct_name, []):
        name, mexpr = f'{prefix}_{m.name}', f'{expr}{m.name}'
        if m.array:
            continue
        if m.ctype == 'const char*' or m.ctype == 'char*':
            fields.append(f'lttng_ust_field_string({name}, {mexpr} ? {mexpr} : "")')
            continue
        k = hdr.kind(model, m.ctype)
        if k == 'struct':
            if depth < MAX_DESC_DEPTH:
                fields += _flatten(model, hdr.resolve(model, m.ctype), name, f'{mexpr}.',
                                   depth + 1)
            continue
        f = _int_field(model, m.ctype, name, mexpr)
        if f is not None:
            fields.append(f)
    return fields


def desc_structs(model, fn):
    """The struct parameters of `_desc`, in order: the tracepoint's arguments zp_d0, zp_d1, ..."""
    return [p for p, how in desc_params(model, fn) if how == 'struct']


def desc_fields(model, fn):
    fields = []
    index = 0
    for p, how in desc_params(model, fn):
        if how == 'string':
            fields.append(f'lttng_ust_field_string({p.name}, zp_args->{p.name} ? '
                          f'zp_args->{p.name} : "")')
        else:
            target, _ = hdr.pointee(p.ctype)
            fields += _flatten(model, hdr.resolve(model, target), p.name, f'zp_d{index}->', 0)
            index += 1
    return fields
