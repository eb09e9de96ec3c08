#!/usr/bin/env python3
"""frames_ctypes: marks frames from Python with ctypes, through the functions the shim exports
(no header, no library to link): 77:88:99, dispatch begin, serve begin, serve end -2, dispatch
end 5. Untraced the functions are absent and nothing is marked. stdout is the same either way;
stderr says whether the shim was there."""
import ctypes
import sys


class Frame(ctypes.Structure):
    _fields_ = [('session', ctypes.c_uint64), ('worker', ctypes.c_uint32),
                ('sequence', ctypes.c_uint64)]


def main():
    process = ctypes.CDLL(None)
    try:
        functions = {name: getattr(process, 'zeprof_' + name)
                     for name in ('dispatch_begin', 'dispatch_end', 'serve_begin', 'serve_end')}
    except AttributeError:
        functions = None
    if functions:
        for function in functions.values():
            function.restype = None
        for name in ('dispatch_begin', 'serve_begin'):
            functions[name].argtypes = [ctypes.POINTER(Frame)]
        for name in ('dispatch_end', 'serve_end'):
            functions[name].argtypes = [ctypes.POINTER(Frame), ctypes.c_int32]
        key = Frame(77, 88, 99)
        functions['dispatch_begin'](ctypes.byref(key))
        functions['serve_begin'](ctypes.byref(key))
        functions['serve_end'](ctypes.byref(key), -2)
        functions['dispatch_end'](ctypes.byref(key), 5)
    print(f'frames_ctypes: shim {"present" if functions else "absent"}', file=sys.stderr)
    print('frames_ctypes: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
