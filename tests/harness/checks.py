"""The one assertion helper of the Python tests (every tests/*/ script imports it): TAP-style
checks that keep going after a failure, the exit status that sums them up, and the search for LTTng
daemons a test may have left behind.

A script puts this folder on its path and imports what it uses:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
    from checks import check, exit_status  # noqa: E402
"""

import os
import sys

failures = []
_count = [0]


def check(condition, description, detail=''):
    """Records one check and keeps the test going after a failure, so that one run shows every
    problem. A failure prints `not ok - DESCRIPTION: DETAIL`; a pass prints nothing (exit_status
    counts them). DESCRIPTION may say what must hold or what went wrong: both read right after
    "not ok". Returns the condition, so a check can guard what depends on it."""
    condition = bool(condition)
    _count[0] += 1
    if not condition:
        print(f'not ok - {description}' + (f': {detail}' if detail else ''), flush=True)
        failures.append(description)
    return condition


def exit_status():
    """The script's exit status once every check ran: 0, or 1. Prints the count either way."""
    if failures:
        print(f'# {len(failures)} of {_count[0]} checks failed', file=sys.stderr)
        return 1
    print(f'# {_count[0]} checks passed')
    return 0


def lttng_processes_left(namespace=None, home_prefix=''):
    """Live LTTng daemons a test may have left, as (pid, name): as root, those in with-lttng's
    private pid namespace, ours (zeprof's daemons run in mount namespaces of their own, so every
    process of the pid namespace counts, whatever mount namespace `namespace` names); as a user, those whose LTTNG_HOME starts with
    $TMPDIR/<home_prefix> (each test has its own TMPDIR, so parallel tests do not count).
    Zombies are dead (an exited daemon that init has not reaped yet). None when that cannot be
    told (root outside a private pid namespace)."""
    as_root = os.geteuid() == 0
    own = os.readlink('/proc/self/ns/pid')
    if as_root and os.environ.get('WITH_LTTNG_NAMESPACE') != own:
        return None
    ours = f'LTTNG_HOME={os.environ.get("TMPDIR", "/tmp")}/{home_prefix}'.encode()
    left = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/comm', encoding='utf-8') as comm:
                name = comm.read().strip()
            if not name.startswith('lttng'):
                continue
            with open(f'/proc/{entry}/stat', encoding='utf-8') as stat:
                if stat.read().rsplit(')', 1)[1].split()[0] == 'Z':
                    continue
            if as_root:
                if os.readlink(f'/proc/{entry}/ns/pid') != own:
                    continue
            else:
                with open(f'/proc/{entry}/environ', 'rb') as environ:
                    if not any(v.startswith(ours) for v in environ.read().split(b'\0')):
                        continue
        except OSError:
            continue
        left.append((int(entry), name))
    return left
