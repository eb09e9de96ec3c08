#!/usr/bin/env python3
"""Remove one symbol version need from an ELF64 little-endian shared library, in place.

Usage: drop-version-need.py LIBRARY NEEDED_FILE VERSION

Debian 13's Level Zero loader needs GLIBCXX_3.4.32 of libstdc++.so.6 for a single symbol,
std::ios_base_library_init(), which Debian 12's libstdc++ (GCC 12) lacks. The dynamic linker
refuses a library whose version needs are unmet, so this unlinks the need entry (the
.gnu.version_r auxiliary record) and makes the symbols that used it unversioned; another library
(ios_base_library_init.cc, added as a needed library) then defines them. The version need is
gone, not weakened, so the dynamic linker has nothing to warn about.

Exit status 0 when the need was removed or was already absent; 2 with a one-line reason when
the file is not what this expects (nothing is written then)."""
import os
import struct
import sys

SHT_DYNSYM = 11
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_GNU_VERSYM = 0x6FFFFFFF
VER_NDX_GLOBAL = 1


def fail(path, reason):
    print(f"Failed to patch library: path={path}, reason={reason}", file=sys.stderr)
    sys.exit(2)


def c_string(data, offset):
    return data[offset:data.index(b"\0", offset)].decode()


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    result = []
    for i in range(shnum):
        name, stype, _flags, _addr, offset, size, link, _info, _align, entsize = \
            struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        result.append({"type": stype, "offset": offset, "size": size, "link": link,
                       "entsize": entsize})
    return result


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: drop-version-need.py LIBRARY NEEDED_FILE VERSION")
    path, needed_file, version = sys.argv[1:]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail(path, "not an ELF64 little-endian file")
    secs = sections(data)
    by_type = {}
    for s in secs:
        by_type.setdefault(s["type"], s)
    if SHT_GNU_VERNEED not in by_type or SHT_GNU_VERSYM not in by_type or SHT_DYNSYM not in by_type:
        fail(path, "no .gnu.version_r, .gnu.version or .dynsym section")
    verneed = by_type[SHT_GNU_VERNEED]
    strtab = secs[verneed["link"]]["offset"]

    # Find the auxiliary record of VERSION under NEEDED_FILE, and the one before it.
    offset = verneed["offset"]
    while True:
        _vn_version, vn_cnt, vn_file, vn_aux, vn_next = struct.unpack_from("<HHIII", data, offset)
        if c_string(data, strtab + vn_file) == needed_file:
            break
        if vn_next == 0:
            return 0  # that file is not needed at all: nothing to do
        offset += vn_next
    need_offset = offset
    previous = None
    aux = need_offset + vn_aux
    while True:
        _hash, _flags, vna_other, vna_name, vna_next = struct.unpack_from("<IHHII", data, aux)
        if c_string(data, strtab + vna_name) == version:
            break
        if vna_next == 0:
            return 0  # already removed
        previous = aux
        aux += vna_next
    if vn_cnt < 2:
        fail(path, f"{version} is the only version needed from {needed_file}")

    # Unlink the record: the previous record (or the need itself) skips over it.
    if previous is None:
        new_aux = vn_aux + vna_next if vna_next else 0
        struct.pack_into("<I", data, need_offset + 8, new_aux)
    else:
        prev_next, = struct.unpack_from("<I", data, previous + 12)
        struct.pack_into("<I", data, previous + 12, prev_next + vna_next if vna_next else 0)
    struct.pack_into("<H", data, need_offset + 2, vn_cnt - 1)

    # Symbols that used the version become unversioned (bound by name alone).
    versym = by_type[SHT_GNU_VERSYM]
    dynsym = by_type[SHT_DYNSYM]
    dynstr = secs[dynsym["link"]]["offset"]
    count = versym["size"] // 2
    cleared = []
    for i in range(count):
        ndx, = struct.unpack_from("<H", data, versym["offset"] + 2 * i)
        if ndx & 0x7FFF == vna_other:
            st_name, = struct.unpack_from("<I", data, dynsym["offset"] + i * dynsym["entsize"])
            cleared.append(c_string(data, dynstr + st_name))
            struct.pack_into("<H", data, versym["offset"] + 2 * i, VER_NDX_GLOBAL)

    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    print(" ".join(cleared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
