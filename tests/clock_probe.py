#!/usr/bin/env python3
"""The offset between two guests' CLOCK_MONOTONIC, over the testbed network,
for merging their recordings onto one clock (tests/vms_incast.sh).

  clock_probe.py serve ADDR PORT SECONDS   answer probes for that long
  clock_probe.py probe ADDR PORT [COUNT]   print "offset_ns rtt_ns"

A probe notes its send and receive times; the server answers with its own
time. The probe with the shortest round trip bounds the error best: the
server's time lies within it, so offset = server - (send + receive) / 2
is off by at most half that round trip.
"""
import socket
import struct
import sys
import time


def serve(addr, port, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    s.settimeout(0.5)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data, peer = s.recvfrom(64)
        except socket.timeout:
            continue
        s.sendto(data[:8] + struct.pack("!Q", time.monotonic_ns()), peer)


def probe(addr, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    best = None
    for i in range(count):
        t1 = time.monotonic_ns()
        s.sendto(struct.pack("!Q", i), (addr, port))
        try:
            while True:
                data = s.recv(64)
                if len(data) == 16 and struct.unpack("!Q", data[:8])[0] == i:
                    break
        except socket.timeout:
            continue
        t2 = time.monotonic_ns()
        remote = struct.unpack("!Q", data[8:])[0]
        if best is None or t2 - t1 < best[1]:
            best = (remote - (t1 + t2) // 2, t2 - t1)
        time.sleep(0.02)
    if best is None:
        sys.exit(f"clock_probe: no answer from {addr}:{port}")
    print(best[0], best[1])


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "probe":
        probe(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 50)
    else:
        sys.exit(__doc__)
