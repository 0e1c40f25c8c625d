#!/usr/bin/env python3
"""roce_check.py CAPTURE.pcap: check every RoCEv2 packet's ICRC.

tshark decodes RoCEv2 but (4.0) does not verify the ICRC, so this does,
as IBTA specifies for RoCEv2 over IPv4: CRC-32 over 8 bytes of 0xff (the
masked LRH), the IP header with TOS, TTL and checksum set to 1s, the UDP
header with its checksum set to 1s, the BTH with its byte 4 (FECN, BECN,
resv6) set to 1s, and everything after up to the ICRC. Marks in the IP ECN
bits and echoes in FECN/BECN therefore keep it valid.

An INT shim (docs/wire-format.md: TOS bit 0x04, magic 0xc5 after the UDP
header) lies outside the ICRC: it is skipped, and the UDP and IP lengths,
which count it, stay in.

Prints one line: packets, ICRC good/bad, counts by BTH opcode (hex), INT
shims seen, the hop records they held, and malformed shims (counted bad).
Exits 1 if any ICRC is bad or there is no RoCEv2 packet at all."""
import struct
import sys
import zlib
from collections import Counter


def packets(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            sys.exit(f"{path}: not a little-endian classic pcap (write it with -F pcap)")
        if struct.unpack("<I", hdr[20:24])[0] != 1:
            sys.exit(f"{path}: link type is not Ethernet")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack("<IIII", rec)[2]
            yield f.read(incl)


INT_TOS, INT_MAGIC, INT_VERSION, INT_HDR, INT_HOP, INT_MAX_HOPS = 0x04, 0xC5, 2, 12, 16, 5


def int_shim(ip):
    """(length, hops written) of the INT shim after the UDP header; (0, 0)
    if none is flagged; None if one is flagged but malformed."""
    ihl = (ip[0] & 0xF) * 4
    if not ip[1] & INT_TOS:
        return 0, 0
    sh = ip[ihl + 8:ihl + 8 + INT_HDR]
    if len(sh) < INT_HDR or sh[0] != INT_MAGIC or sh[1] != INT_VERSION or sh[5] > INT_MAX_HOPS or sh[4] > sh[5]:
        return None
    return INT_HDR + INT_HOP * sh[5], sh[4]


def icrc(ip):
    """The ICRC of an IPv4 RoCEv2 packet (IP header to end, the last 4
    bytes being the ICRC field, whatever they hold), as an integer to be
    stored little-endian."""
    ihl = (ip[0] & 0xF) * 4
    shim = int_shim(ip)
    if shim and shim[0]:
        ip = ip[:ihl + 8] + ip[ihl + 8 + shim[0]:]
    pkt = bytearray(ip)
    pkt[1] = 0xFF  # TOS
    pkt[8] = 0xFF  # TTL
    pkt[10:12] = b"\xff\xff"  # IP checksum
    pkt[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    pkt[ihl + 8 + 4] = 0xFF  # BTH: FECN, BECN, resv6
    return zlib.crc32(b"\xff" * 8 + bytes(pkt[:-4]))


def check(frame):
    """None if not RoCEv2 over IPv4, else (opcode, icrc ok, shim), shim as
    int_shim() gives it."""
    if len(frame) < 14 + 20 + 8 + 12 + 4 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0xF) * 4
    if ip[9] != 17 or struct.unpack(">H", ip[ihl + 2:ihl + 4])[0] != 4791:
        return None
    tot = struct.unpack(">H", ip[2:4])[0]
    pkt = ip[:tot]
    shim = int_shim(pkt)
    if shim is None:
        return ip[ihl + 8], False, None
    return (pkt[ihl + 8 + shim[0]], icrc(pkt) == struct.unpack("<I", bytes(pkt[-4:]))[0], shim)


def main():
    ops, good, bad = Counter(), 0, 0
    shims, hops, bad_shims = 0, 0, 0
    for frame in packets(sys.argv[1]):
        r = check(frame)
        if r is None:
            continue
        ops[r[0]] += 1
        good, bad = good + r[1], bad + (not r[1])
        if r[2] is None:
            bad_shims += 1
        elif r[2][0]:
            shims, hops = shims + 1, hops + r[2][1]
    total = good + bad
    print(f"roce_packets {total} icrc_good {good} icrc_bad {bad} opcodes "
          + ",".join(f"{o:#04x}:{n}" for o, n in sorted(ops.items()))
          + f" int_shims {shims} int_hops {hops} int_bad {bad_shims}")
    sys.exit(1 if bad or not total else 0)


if __name__ == "__main__":
    main()
