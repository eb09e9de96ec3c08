"""Simulated hosts on one machine, for the multi-host tests.

Each host runs in namespaces of its own: network (veth links to its neighbours, its own
address), UTS (its own hostname), mount (private /run and /dev/shm, so it runs its own LTTng
session daemon) and time (a CLOCK_MONOTONIC/BOOTTIME offset, as a host with another boot time).
A host may also use the skewed LTTng clock plugin, whose trace clock drifts from the wall clock.

Everything created is named after this process's pid and removed by Testbed.close(); addresses
are in 10.231.0.0/16 and exist only inside the namespaces this test creates. Needs root.
"""

import os
import shutil
import signal
import subprocess


def run(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def can_run():
    """Why the test bed cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root for network, UTS, mount and time namespaces"
    for tool in ("ip", "unshare", "nsenter"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    probe = subprocess.run(
        ["unshare", "--net", "--uts", "--mount", "--time", "--fork", "--monotonic", "1", "true"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        return "this kernel refuses network/UTS/mount/time namespaces"
    return None


class Host:
    def __init__(self, name, netns, monotonic_offset_s, env):
        self.name = name
        self.netns = netns
        self.monotonic_offset_s = monotonic_offset_s
        self.env = env          # extra environment for everything on this host
        self.addresses = []

    def command(self, argv):
        """argv run as this host: in its netns, with its hostname, private /run and /dev/shm,
        and its clock offset. The time namespace applies to the forked child, hence --fork."""
        setup = ('hostname "$0" && mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /dev/shm '
                 '&& exec "$@"')
        env = ["env"] + [f"{k}={v}" for k, v in self.env.items()]
        return (["ip", "netns", "exec", self.netns,
                 "unshare", "--uts", "--mount", "--propagation", "private",
                 "--time", "--fork",
                 "--monotonic", str(self.monotonic_offset_s),
                 "--boottime", str(self.monotonic_offset_s),
                 "sh", "-c", setup, self.name] + env + list(argv))

    def start(self, argv, log_path):
        """Runs in a process group of its own, so stop() reaches everything it started."""
        with open(log_path, "w", encoding="utf-8") as log:
            return subprocess.Popen(self.command(argv), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)


def stop(proc, timeout):
    """Waits for `proc`; past `timeout` s, ends its process group (TERM, then KILL)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            return proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


class Testbed:
    def __init__(self):
        self.tag = f"zp{os.getpid() % 100000}"
        self.hosts = []
        self.links = 0

    def add_host(self, name, monotonic_offset_s=0, env=None):
        netns = f"{self.tag}{name}"
        run("ip", "netns", "add", netns)
        host = Host(name, netns, monotonic_offset_s, env or {})
        self.hosts.append(host)
        run("ip", "-n", netns, "link", "set", "lo", "up")
        return host

    def link(self, a, b):
        """A point-to-point link; returns (address of a, address of b)."""
        self.links += 1
        subnet = f"10.231.{self.links}"
        ifa, ifb = f"{self.tag}l{self.links}a", f"{self.tag}l{self.links}b"
        run("ip", "link", "add", ifa, "type", "veth", "peer", "name", ifb)
        run("ip", "link", "set", ifa, "netns", a.netns)
        run("ip", "link", "set", ifb, "netns", b.netns)
        for host, ifname, addr in ((a, ifa, f"{subnet}.1"), (b, ifb, f"{subnet}.2")):
            run("ip", "-n", host.netns, "addr", "add", f"{addr}/24", "dev", ifname)
            run("ip", "-n", host.netns, "link", "set", ifname, "up")
            host.addresses.append(addr)
        return f"{subnet}.1", f"{subnet}.2"

    def close(self):
        for host in self.hosts:
            # Deleting the namespace removes its veth ends (and so their peers) too.
            subprocess.run(["ip", "netns", "del", host.netns], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        self.hosts = []
