#!/usr/bin/env python3
"""`meson install` gives the layout docs/interface.md promises: bin/zeprof and bin/zeprof-merge, the shim
as <libdir>/zeprof/libze_loader.so.1 (with its SONAME), <includedir>/zeprof.h and zeprof.pc,
<libexecdir>/zeprof/zeprof-stop, and the installed wrapper points at the installed shim, merger and
stop tool, not at the build tree.

usage: test_install.py BUILD_DIR PREFIX LIBDIR INCLUDEDIR BINDIR DATADIR LIBEXECDIR
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'harness'))
from checks import check, exit_status  # noqa: E402

build, prefix, libdir, includedir, bindir, datadir, libexecdir = sys.argv[1:8]


def under(root, *parts):
    return os.path.join(root, *[p.lstrip("/") for p in parts])


with tempfile.TemporaryDirectory() as dest:
    run = subprocess.run(["meson", "install", "-C", build, "--no-rebuild", "--destdir", dest],
                         capture_output=True, text=True)
    check(run.returncode == 0, f"meson install failed: {run.stderr[-500:]}")
    lib = os.path.join(prefix, libdir)
    shim = under(dest, lib, "zeprof", "libze_loader.so.1")
    wrapper = under(dest, prefix, bindir, "zeprof")
    stop_tool = under(dest, prefix, libexecdir, "zeprof", "zeprof-stop")
    for path in (wrapper, stop_tool, under(dest, prefix, bindir, "zeprof-merge"), shim,
                 under(dest, prefix, includedir, "zeprof.h"),
                 under(dest, lib, "pkgconfig", "zeprof.pc"),
                 *(under(dest, prefix, datadir, "zeprof", part) for part in
                   ("zeprof-launchers.bash", "zeprof-daemon.bash", "zeprof-job.bash"))):
        check(os.path.isfile(path), f"not installed: {path[len(dest):]}")
    if os.path.isfile(shim):
        dynamic = subprocess.run(["readelf", "-d", shim], capture_output=True, text=True).stdout
        check("[libze_loader.so.1]" in dynamic, "the installed shim's SONAME is not libze_loader.so.1")
    if os.path.isfile(wrapper):
        check(os.access(wrapper, os.X_OK), "the installed zeprof is not executable")
        with open(wrapper, encoding="utf-8") as f:
            text = f.read()
        check(os.path.join(lib, "zeprof") in text, "the installed zeprof does not use <libdir>/zeprof")
        check(os.path.abspath(build) not in text, "the installed zeprof points into the build tree")
        check(os.path.join(prefix, libexecdir, "zeprof", "zeprof-stop") in text,
              "the installed zeprof does not use <libexecdir>/zeprof/zeprof-stop")
        check(os.path.join(prefix, datadir, "zeprof") in text,
              "the installed zeprof does not source its parts from <datadir>/zeprof")
sys.exit(exit_status())
print("ok")
