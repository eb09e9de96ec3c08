"""Which LTTng-UST provider records each function, and which providers load lazily.

Every event a program's providers define costs it a round trip to the session daemon when the
provider registers, so the `ze` family is split: `zeprof_ze` (loaded when the shim initializes)
holds the calls every program makes first (init, drivers, contexts, command queues and lists,
START_FUNCTIONS) and the most frequent calls of the other groups (FIRST_EVENTS: they keep the compact event header);
each other group has its own provider, loaded at the first call of one of its functions
(interposer/shim_init.c), so a program registers only the groups it uses. zet, zes and zel have
one provider each, loaded lazily too. tracepoints/meson.build and interposer/meson.build list the
same providers (PROVIDERS); the shim's enum zeprof_family (shim.h) names the lazy ones.
"""

import fields

# Events defined first in zeprof_ze, in this order. LTTng numbers a channel's event classes in
# registration order and gives the first 31 a 4-byte compact header instead of a 16-byte one.
# zeprof_ze's probes register right after zeprof_device's, so its first events get those ids: the
# one-event calls a chatty program makes most, and the entry and exit of the frequent blocking
# ones. Their functions belong to zeprof_ze whatever their group. Names absent from the headers
# are skipped.
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
FIRST_FUNCTIONS = {name.rsplit('_', 1)[0] for name in FIRST_EVENTS}

# Calls of the lazy groups that nearly every program makes at its start (finding its devices):
# loading their group for them alone would cost the program its registration.
START_FUNCTIONS = {'zeDeviceGet', 'zeDeviceGetProperties', 'zeDeviceGetSubDevices',
                   'zeDeviceGetCommandQueueGroupProperties'}

# The lazily loaded groups of the ze family: provider zeprof_ze_<group> by name prefix, longest
# prefix first. A function matching none stays in zeprof_ze.
ZE_GROUPS = [
    ('zeCommandListImmediateAppend', 'append'), ('zeCommandListAppend', 'append'),
    ('zeDevice', 'device'), ('zeFabric', 'device'),
    ('zeEvent', 'event'), ('zeFence', 'event'),
    ('zeModule', 'module'), ('zeKernel', 'module'),
    ('zeMem', 'mem'), ('zeVirtualMem', 'mem'), ('zePhysicalMem', 'mem'),
    ('zeImage', 'image'), ('zeSampler', 'image'),
    ('zeGet', 'tables'),  # the DDI table getters (ze*Get*ProcAddrTable): layers, static loaders
]

# Every provider's suffix (zeprof_<suffix>), the one loaded at initialization first.
PROVIDERS = (['ze'] + sorted({f'ze_{group}' for _, group in ZE_GROUPS}) +
             ['zet', 'zes', 'zel'])
LAZY_PROVIDERS = PROVIDERS[1:]


def provider(name):
    """The suffix of the provider recording function `name` (zeprof_<suffix>)."""
    fam = fields.family(name)
    if fam != 'ze' or name in FIRST_FUNCTIONS or name in START_FUNCTIONS:
        return fam
    for prefix, group in ZE_GROUPS:
        if name.startswith(prefix):
            return f'ze_{group}'
    return 'ze'
