#!/usr/bin/env python3
"""Print the absolute path of the system's libze_loader.so.1, as the dynamic linker finds it."""
import subprocess
import sys

NAME = "libze_loader.so.1"

out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    parts = line.strip().split(" => ")
    if len(parts) == 2 and parts[0].split(" ")[0] == NAME and "x86-64" in parts[0]:
        print(parts[1])
        sys.exit(0)
for line in out.splitlines():
    parts = line.strip().split(" => ")
    if len(parts) == 2 and parts[0].split(" ")[0] == NAME:
        print(parts[1])
        sys.exit(0)
sys.exit("Cannot find " + NAME + " in the dynamic linker cache; install libze1 or pass -Dreal_loader=PATH")
