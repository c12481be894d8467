#!/usr/bin/env python3
"""Writes a copy of a CUDA library (ONNX Runtime's CUDA provider) that keeps
the GPU code of one architecture only, for a bundle to copy to a machine
whose GPU is known: the other architectures' cubins are zeroed in place
(their headers kept, so the fat binary stays well formed) and the copy
compresses to about a fifth of the library (229 MB -> 38 MB with xz for
sm_90). The CUDA runtime loads the cubin made for the device and never reads
the others; a GPU of another architecture finds no code and fails to load.

    slim-provider.py LIBRARY OUT SM      (SM: 90 for H100/H200, 80 for A100)
"""
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50


def fatbin_section(path):
    """Offset and size of the .nv_fatbin section (readelf)."""
    out = subprocess.run(["readelf", "-S", "-W", path], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.replace("[ ", "[").split()
        if ".nv_fatbin" in f:
            i = f.index(".nv_fatbin")
            return int(f[i + 3], 16), int(f[i + 4], 16)
    sys.exit(f"{path}: no .nv_fatbin section")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
    off, size = fatbin_section(src)
    data = bytearray(open(src, "rb").read())
    pos, end = off, off + size
    kept = zeroed = 0
    while pos + 16 <= end:
        magic, _version, header, body = struct.unpack_from("<IHHQ", data, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # containers are 8-byte aligned
            continue
        entry, stop = pos + header, pos + header + body
        while entry < stop:
            _kind, _flags, eheader, payload = struct.unpack_from("<HHIQ", data, entry)
            arch = struct.unpack_from("<I", data, entry + 28)[0]
            if arch == keep:
                kept += payload
            else:
                data[entry + eheader:entry + eheader + payload] = bytes(payload)
                zeroed += payload
            entry += eheader + payload
        pos = stop
    if kept == 0:
        sys.exit(f"{src}: no code for sm_{keep}; nothing written")
    open(dst, "wb").write(data)
    print(f"{dst}: kept {kept >> 20} MiB of sm_{keep} code, zeroed {zeroed >> 20} MiB of other architectures")


if __name__ == "__main__":
    main()
