"""Which calls are recorded as one event and which as an entry and an exit (docs/tracepoints.md).

A call that cannot block is recorded as one event, `<function>_call`, fired at its exit and
carrying its start time: one event is half the cost of two. A call that can block or take long
keeps `<function>_entry` and `<function>_exit`, so that a hang or a crash inside it still shows the
call in flight. The choice is made here, by name, at build time: a newer header's functions are
classified by the same rules with no hand edit.

Blocking (entry and exit), and why:
- every `zet*`, `zes*` and `zel*` function: tools, sysman and loader calls, rare and off the hot
  path, several of which wait (zetDebugReadEvent, zetMetricStreamerReadData, zesDeviceReset,
  zesFirmwareFlash, zesDiagnosticsRunTests, ...);
- in `ze*`, a name matching one of BLOCKING_PATTERNS below.
Everything else in `ze*` is one event: queries and getters, argument and group-size setters,
appends, event and fence status, signal and reset.

Known limit: an append to a *synchronous* immediate list (ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) waits
for the device inside the call, but the name cannot tell: appends are one event, so a hang inside
such an append is not shown in flight (the last event of the thread is then the one before it).
"""

import re

# ze* functions that can wait on the device or the driver for long, by name (regular expressions,
# searched in the function name).
BLOCKING_PATTERNS = [
    (r'Synchronize', 'waits for the device: zeEventHostSynchronize, zeFenceHostSynchronize, '
                     'zeCommandQueueSynchronize, zeCommandListHostSynchronize'),
    (r'Execute', 'submits, and zeprof\'s prologue may wait for the previous execution'),
    (r'AppendCommandLists', 'submits lists to an immediate list (an execute)'),
    (r'Create', 'allocates driver and device objects; zeModuleCreate compiles'),
    (r'Destroy', 'may wait for the work still using the object'),
    (r'Init', 'zeInit, zeInitDrivers, zeLoaderInit: load and initialize drivers'),
    (r'^zeCommandListReset$', 'drains the list\'s timings, may wait for its work'),
    (r'^zeMem(Alloc|Free)', 'device allocations; zeMemFreeExt may wait for the device'),
    (r'^zeVirtualMem(Reserve|Free|Map|Unmap|SetAccessAttribute)',
     'reserves, maps and unmaps address space'),
    (r'^zePhysicalMem', 'allocates and frees device memory'),
    (r'SystemBarrier', 'waits for the device'),
    (r'(MakeMemoryResident|MakeImageResident|EvictMemory|EvictImage)', 'migrates memory'),
    (r'(OpenIpc|CloseIpc)', 'maps or unmaps memory shared between processes'),
    (r'^zeModuleDynamicLink', 'links device code'),
]

_BLOCKING = [re.compile(pattern) for pattern, _ in BLOCKING_PATTERNS]


def is_one_event(name):
    """True when `name` is recorded as one `_call` event, False for entry and exit."""
    if not name.startswith('ze') or name.startswith(('zet', 'zes', 'zel')):
        return False
    return not any(pattern.search(name) for pattern in _BLOCKING)
