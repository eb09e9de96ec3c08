"""Emit the wrappers of extension functions: what zeDriverGetExtensionFunctionAddress returns.

A runtime reaches experimental and driver-specific entry points (Intel's zex*, *Exp) by name
through zeDriverGetExtensionFunctionAddress, and then calls the driver's function directly, past
the loader and the shim. So that those calls are traced (and timed, when the function is
profiled) like any other, the lookup's wrapper hands back, in place of the driver's pointer, a
wrapper generated here for every function of the ze, zet and zes families whose prototype the
headers declare:

- `zeprof_ext_F(params)`: zeprof_call_F (emit_wrappers.py: the traced call) on the pointer the
  driver returned for F, kept in `zeprof_ext_real_F`;
- `zeprof_ext_wrap_<fam>(name, real)`: binary search of the family's sorted name table; the
  first lookup that finds F stores its pointer and gets zeprof_ext_F; a later lookup that gets the
  same pointer (the same driver, or another that shares it) gets zeprof_ext_F again; a different
  pointer (a second driver's own F) is handed back untouched, as is any name the headers do not
  declare: the shim never calls a function whose prototype it does not know, and never another
  driver's.
- `zeprof_ext_wrap(name, real)` (in wrappers_ze.c): dispatches on the family prefix.
"""

FAMILIES = ('ze', 'zet', 'zes')


def _family_of(name):
    for fam in ('zet', 'zes', 'ze'):
        if name.startswith(fam) and name[len(fam):len(fam) + 1].isupper():
            return fam
    return None


def declarations():
    """For zeprof_tables.h (included by every wrappers_<fam>.c)."""
    out = ['/* Extension functions (emit_extensions.py): the wrapper of `name` when the headers',
           ' * declare it and `real` is the pointer its first lookup returned, else `real`. */',
           'void *zeprof_ext_wrap(const char *name, void *real);']
    out += [f'void *zeprof_ext_wrap_{fam}(const char *name, void *real);' for fam in FAMILIES]
    return out


def emit(model, fam, params_decl):
    """The extension wrappers of one family, for the end of wrappers_<fam>.c."""
    if fam not in FAMILIES:
        return []
    fns = sorted((fn for fn in model.functions if _family_of(fn.name) == fam),
                 key=lambda fn: fn.name.encode())
    out = ['/* ---- extension functions (emit_extensions.py) ---- */', '',
           'struct zeprof_ext_entry {', '    const char *name;',
           '    void (*wrapper)(void);', '    void **real; /* the driver\'s F, once looked up */',
           '};', '']
    for fn in fns:
        name = fn.name
        args = ''.join(f', {p.name}' for p in fn.params)
        out += [f'static void *zeprof_ext_real_{name};', '',
                f'static {fn.ret} ZE_APICALL zeprof_ext_{name}({params_decl(fn)})', '{',
                f'    __typeof__(zeprof_real.{name}) zp_real;',
                f'    void *zp_pointer = __atomic_load_n(&zeprof_ext_real_{name}, '
                '__ATOMIC_ACQUIRE);', '',
                '    memcpy(&zp_real, &zp_pointer, sizeof(zp_real));',
                f'    return zeprof_call_{name}(zp_real{args});', '}', '']
    out.append(f'static const struct zeprof_ext_entry zeprof_ext_{fam}[] = {{')
    for fn in fns:
        out.append(f'    {{"{fn.name}", (void (*)(void))zeprof_ext_{fn.name}, '
                   f'&zeprof_ext_real_{fn.name}}},')
    out += ['};', '',
            f'void *zeprof_ext_wrap_{fam}(const char *name, void *real)', '{',
            '    size_t low = 0;',
            f'    size_t high = sizeof(zeprof_ext_{fam}) / sizeof(zeprof_ext_{fam}[0]);', '',
            '    while (low < high) {',
            '        size_t middle = low + (high - low) / 2;',
            f'        int order = strcmp(name, zeprof_ext_{fam}[middle].name);', '',
            '        if (order == 0) {',
            f'            const struct zeprof_ext_entry *entry = &zeprof_ext_{fam}[middle];',
            '            void *expected = NULL;',
            '            void *wrapper;', '',
            '            /* The first lookup stores its pointer; only that one is ever called. */',
            '            if (!__atomic_compare_exchange_n(entry->real, &expected, real, false,',
            '                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&',
            '                expected != real)',
            '                return real;',
            '            memcpy(&wrapper, &entry->wrapper, sizeof(wrapper));',
            '            return wrapper;', '        }',
            '        if (order < 0)', '            high = middle;', '        else',
            '            low = middle + 1;', '    }', '    return real;', '}', '']
    if fam == 'ze':
        out += ['void *zeprof_ext_wrap(const char *name, void *real)', '{',
                '    if (name == NULL || real == NULL)', '        return real;',
                '    if (strncmp(name, "zet", 3) == 0)',
                '        return zeprof_ext_wrap_zet(name, real);',
                '    if (strncmp(name, "zes", 3) == 0)',
                '        return zeprof_ext_wrap_zes(name, real);',
                '    return zeprof_ext_wrap_ze(name, real);', '}', '']
    return out


# The lookup whose result is replaced by a wrapper, and its parameters.
LOOKUP = 'zeDriverGetExtensionFunctionAddress'


def lookup_lines(fn):
    """After the lookup's exit event (which records the driver's pointer): the wrapper instead."""
    if fn.name != LOOKUP:
        return []
    names = [p.name for p in fn.params]
    if names != ['hDriver', 'name', 'ppFunctionAddress']:
        raise SystemExit(f'Failed to read headers: {LOOKUP} has parameters {names}')
    return ['    if (r == ZE_RESULT_SUCCESS && a.ppFunctionAddress != NULL)',
            '        *a.ppFunctionAddress = zeprof_ext_wrap(a.name, *a.ppFunctionAddress);']
