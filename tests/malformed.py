#!/usr/bin/env python3
"""malformed.py: send malformed packets into a running testbed from raw
sockets and check that each is rejected, counted, and changes nothing.

  malformed.py pfc DEV:FROM_DEV[@NETNS]...
      Garbage PFC frames (and, last, one valid XOFF and XON to show that the
      counters would see a frame obeyed) into the TC ingress of each DEV,
      sent from its veth peer FROM_DEV. Run it with no traffic: a real
      pause would blur the counts.
  malformed.py roce REQ_HOST REQ_QPN RESP_HOST RESP_QPN
      While an RC flow runs from host REQ_HOST's QP REQ_QPN to RESP_HOST's
      QP RESP_QPN: bad CNPs and BTHs into the requester (and, last, one
      valid CNP), and CE-marked non-RoCE traffic into the responder.
  malformed.py ack REQ_HOST REQ_QPN RESP_HOST AHEAD
      One well-formed RC ACK from RESP_HOST into REQ_HOST's QP REQ_QPN for
      a PSN AHEAD packets past the next one the QP will send: an ACK of
      packets never sent (stale, or forged). Prints the PSNs; the caller
      checks that nothing was completed by it.
  malformed.py stock REQ_HOST REQ_QPN RESP_HOST
      With no CC module registered, while an RC flow runs from REQ_HOST's
      QP REQ_QPN: a valid CNP, and a valid CNP behind a valid INT shim, are
      what they are to stock rxe (an unknown opcode, a BTH it cannot
      parse): dropped and counted, and the flow's QP stays in RTS.

Frames leave with PACKET_QDISC_BYPASS, straight into the peer's ingress,
so the sending port's emulated queue never sees them. Every case is sent
COUNT times and passes only if each watched counter moved by exactly what
the case expects (0 for all it does not name). Prints one line per case
and a total; exits 1 if any case failed."""
import ctypes
import json
import os
import socket
import struct
import subprocess
import sys
import time
import zlib


NET = "10.77.0"  # testbed/netns.sh TB_NET
COUNT = 10
PFC_CLASS = 3  # the topology default (rxecc port attach --pfc-class)
SOL_PACKET, PACKET_QDISC_BYPASS, CLONE_NEWNET = 263, 20, 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def mac(h):
    return bytes([0x02, 0x77, 0, 0, (h + 1) >> 8, (h + 1) & 0xFF])


def ip(h):
    return socket.inet_aton(f"{NET}.{h + 1}")


def send(dev, netns, frames):
    """Sends raw frames out of dev (in netns, if given) from a child
    process, so that this one stays in the root namespace."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if netns:
                fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {netns}")
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
            s.bind((dev, 0))
            for f in frames:
                s.send(f)
            code = 0
        except BaseException as e:  # report, never return into the parent's code
            print(f"sending on {dev}: {e}", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"could not send on {dev}")


# --- packets --------------------------------------------------------------

def csum(b):
    s = sum(struct.unpack(f">{len(b) // 2}H", b))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, tos=0):
    h = struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 0, 0x4000, 64, proto, 0, src, dst)
    return h[:10] + struct.pack(">H", csum(h)) + h[12:] + payload


def udp(dport, payload, sport=49152):
    return struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload  # IPv4: no checksum


def bth(opcode, dqpn, pad=0, psn=0, becn=True):
    return struct.pack(">BBHII", opcode, (pad & 3) << 4, 0xFFFF, (0x40 if becn else 0) << 24 | dqpn, psn)


def icrc(pkt):
    """The ICRC of an IPv4 RoCEv2 packet with no INT shim (IP header to its
    end, the last 4 bytes the ICRC field), to be stored little-endian:
    CRC-32 of 8 bytes of 1s (the masked LRH) and the packet with TOS, TTL,
    the IP and UDP checksums and BTH byte 4 as 1s. Built here to forge
    packets; `rxecc check` verifies captures."""
    p = bytearray(pkt)
    p[1], p[8], p[10:12], p[26:28], p[32] = 0xFF, 0xFF, b"\xff\xff", b"\xff\xff", 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(p[:-4]))


def roce(src_h, dst_h, body, src_ip=None, bad_icrc=False, tos=0):
    """An Ethernet frame with a RoCEv2 packet: body is BTH onwards, less the
    ICRC, which is computed (and spoilt if bad_icrc)."""
    pkt = ipv4(src_ip or ip(src_h), ip(dst_h), 17, udp(4791, body + bytes(4)), tos)
    c = icrc(pkt) ^ (0x5A5A5A5A if bad_icrc else 0)
    return mac(dst_h) + mac(src_h) + b"\x08\x00" + pkt[:-4] + struct.pack("<I", c)


INT_TOS = 0x04


def roce_int(src_h, dst_h, shim, body):
    """A RoCEv2 frame flagged as carrying an INT shim (TOS 0x04) with `shim`
    between UDP and `body` (BTH onwards, less the ICRC). The ICRC is the one
    a receiver that steps over the shim computes, so a drop is the shim
    check's doing, not the ICRC's."""
    pkt = ipv4(ip(src_h), ip(dst_h), 17, udp(4791, shim + body + bytes(4)), INT_TOS)
    c = icrc(pkt[:28] + pkt[28 + len(shim):]) if len(body) >= 12 else 0  # no BTH: no ICRC to speak of
    return mac(dst_h) + mac(src_h) + b"\x08\x00" + pkt[:-4] + struct.pack("<I", c)


def int_shim(nhops=0, max_hops=5, magic=0xC5, version=2):
    return bytes([magic, version, 1, 0, nhops, max_hops, 0, 0, 0, 0, 0, 0]) + bytes(16 * max_hops)


def tcp_syn(src_h, dst_h, dport, tos):
    h = struct.pack(">HHIIBBHHH", 49152, dport, 1, 0, 5 << 4, 0x02, 8192, 0, 0)
    pseudo = ip(src_h) + ip(dst_h) + struct.pack(">BBH", 0, 6, len(h))
    h = h[:16] + struct.pack(">H", csum(pseudo + h)) + h[18:]
    return mac(dst_h) + mac(src_h) + b"\x08\x00" + ipv4(ip(src_h), ip(dst_h), 6, h, tos)


PFC_DST = bytes([0x01, 0x80, 0xC2, 0x00, 0x00, 0x01])


def pfc(vec=0xFF, quanta=0xFFFF, opcode=0x0101, dst=PFC_DST, length=60):
    """A PFC frame naming the classes in vec, each with quanta, padded (or
    cut) to length. Stamp 0: obeyed whatever came before."""
    f = dst + bytes([0x02, 0x77, 0xEE, 0, 0, 1]) + struct.pack(">HHH", 0x8808, opcode, vec)
    f += b"".join(struct.pack(">H", quanta if vec >> c & 1 else 0) for c in range(8)) + bytes(8)
    return f.ljust(length, b"\0")[:length]


# --- counters -------------------------------------------------------------

# One snapshot per reading of a case's counters, not one per counter, all
# from one `rxecc port stats --each-line`: under TCG each process start
# takes about a second, and six per poll made the PFC cases take minutes.
_ports = None
_stats = None


def fresh():
    """The next port_stats() reads the ports again."""
    global _ports
    _ports = None


def port_stats():
    global _ports, _stats
    if _ports is None:
        # One rxecc for the whole run, a snapshot per line written to it.
        if _stats is None:
            _stats = subprocess.Popen(["rxecc", "port", "stats", "--json", "--each-line"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        _stats.stdin.write("\n")
        _stats.stdin.flush()
        lines = []
        while (line := _stats.stdout.readline()).strip():
            lines.append(line)
        if not line:
            sys.exit(f"rxecc port stats --each-line ended (exit {_stats.wait()})")
        _ports = {p["dev"]: p for p in map(json.loads, lines)}
    return _ports


def rxe_counter(h, name):
    with open(f"/sys/class/infiniband/rxe{h}/ports/1/hw_counters/{name}") as f:
        return int(f.read())


def qp_stat(h, qpn, key):
    """A counter of rxe_cc's view of QP qpn on host h; None once it is gone."""
    try:
        with open(f"/sys/kernel/debug/rxe_cc/qps/rxe{h}-qp{qpn}/stats") as f:
            return next(int(v) for k, v in (line.split() for line in f) if k == key)
    except FileNotFoundError:
        return None


def netns_pid(netns):
    """A process in netns, whose /proc/PID/net shows that namespace."""
    pids = subprocess.run(["ip", "netns", "pids", netns], check=True, capture_output=True, text=True).stdout.split()
    if not pids:
        sys.exit(f"no process in {netns}")
    return pids[0]


def snmp(pid, table, key):
    """A counter of /proc/net/snmp or /proc/net/netstat in the netns of pid."""
    path = f"/proc/{pid}/net/" + ("netstat" if table.endswith("Ext") else "snmp")
    with open(path) as f:
        lines = f.read().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith(table + ":"):
            return int(dict(zip(names.split()[1:], values.split()[1:]))[key])
    raise KeyError(f"{table}.{key}")


def qp_state(h, qpn):
    out = subprocess.run(["rdma", "-j", "resource", "show", "qp", "link", f"rxe{h}/1", "lqpn", str(qpn)],
                         capture_output=True, text=True).stdout
    try:
        return json.loads(out)[0]["state"]
    except (ValueError, IndexError, KeyError):
        return "gone"


# --- cases ----------------------------------------------------------------

failures = 0
tried = 0
MOVED = "moved"  # an expectation: the counter grew, by any amount


def case(name, dev, via, frames, watched, expect):
    """Sends frames into dev from via (its peer: (device, netns or None)),
    waits for the counters it expects to move, and checks every watched
    counter (a name -> reader dict) against expect (name -> delta, or
    MOVED; a name not in it must not move)."""
    global failures, tried

    def read():
        fresh()
        return {k: r() for k, r in watched.items()}

    before = read()
    if None in before.values():
        sys.exit(f"{name}: cannot read {[k for k, v in before.items() if v is None]} (is the flow's QP gone?)")
    send(*via, frames)
    want = {k: before[k] + (1 if expect.get(k) == MOVED else expect.get(k, 0)) for k in watched}

    def met(now, k):
        if now[k] is None:
            return False
        return now[k] >= want[k] if expect.get(k) == MOVED else now[k] == want[k]

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        now = read()
        if all(met(now, k) for k in expect):
            break
        time.sleep(0.1)
    time.sleep(0.3)  # for a counter that should not move, but might late
    now = read()
    bad = [k for k in watched if not met(now, k)]
    moved = ", ".join(f"{k} +{now[k] - before[k]}" if now[k] is not None else f"{k} gone"
                      for k in watched if now[k] != before[k]) or "nothing moved"
    print(f"{'FAIL' if bad else 'ok  '} {name:<42} into {dev:<6} x{len(frames):<3} {moved}")
    if bad:
        failures += 1
        print(f"     expected {', '.join(f'{k} +{expect.get(k, 0)}' for k in bad)}", file=sys.stderr)
    tried += len(frames)


def run_pfc(targets):
    for t in targets:
        dev, _, src = t.partition(":")
        src, _, netns = src.partition("@")
        via = (src, netns or None)
        st = lambda k, d=dev: port_stats()[d][k]  # noqa: E731
        watched = {k: (lambda k=k: st(k))
                   for k in ("pfc_rx_bad", "pfc_rx_other", "pfc_rx_xoff", "pfc_rx_xon", "paused", "paused_ns")}
        bad = {"pfc_rx_bad": COUNT}
        mk = lambda **kw: [pfc(**kw)] * COUNT  # noqa: E731
        fresh()
        if st("paused"):
            sys.exit(f"{dev} is paused before any frame was sent")
        case("pfc: truncated (30 B)", dev, via, mk(length=30), watched, bad)
        case("pfc: oversized (200 B)", dev, via, mk(length=200), watched, bad)
        case("pfc: 802.3x PAUSE opcode", dev, via, mk(opcode=0x0001), watched, bad)
        case("pfc: unknown opcode 0x0102", dev, via, mk(opcode=0x0102), watched, bad)
        case("pfc: not to 01:80:c2:00:00:01", dev, via, mk(dst=bytes([0x02, 0x77, 0, 0, 0, 0x99])), watched, bad)
        case("pfc: reserved class-vector bits", dev, via, mk(vec=0x1FF), watched, bad)
        case("pfc: valid, for a class not carried", dev, via, mk(vec=0xFF & ~(1 << PFC_CLASS)), watched,
             {"pfc_rx_other": COUNT})
        # The control: a well-formed XOFF and XON for our class, back to
        # back, are obeyed: the port was paused for a while (paused_ns) and
        # is not now. (Read after the fact: a lone XOFF's 65535 quanta last
        # under 1 s at 50 Mb/s, which a poll under TCG can miss.)
        case("pfc: valid XOFF then XON (control)", dev, via,
             [pfc(vec=1 << PFC_CLASS), pfc(vec=1 << PFC_CLASS, quanta=0)], watched,
             {"pfc_rx_xoff": 1, "pfc_rx_xon": 1, "paused_ns": MOVED})


def run_roce(req, req_qpn, resp, resp_qpn):
    # Into each host's NIC, from its switch port.
    into_req, into_resp = (f"v{req}", (f"p{req}", None)), (f"v{resp}", (f"p{resp}", None))
    start = time.monotonic()
    # (perftest leaves a write_bw server's QP in RTR: it never sends.)
    states = qp_state(req, req_qpn), qp_state(resp, resp_qpn)
    if states[0] != "RTS" or states[1] not in ("RTR", "RTS"):
        sys.exit(f"the flow's QPs are not ready before the cases: {states}")
    cnp_body = bth(0x81, req_qpn) + bytes(16)
    watched = {
        "rcvd_dropped": lambda: rxe_counter(req, "rcvd_dropped"),
        "cnps": lambda: qp_stat(req, req_qpn, "cnps"),
        "naks": lambda: qp_stat(req, req_qpn, "naks"),
    }
    drop = {"rcvd_dropped": COUNT}
    mk = lambda **kw: [roce(resp, req, **kw)] * COUNT  # noqa: E731
    case("roce: CNP cut short (8 reserved bytes)", *into_req, mk(body=bth(0x81, req_qpn) + bytes(8)), watched, drop)
    case("roce: CNP with 64 bytes too many", *into_req, mk(body=cnp_body + bytes(64)), watched, drop)
    case("roce: CNP claiming BTH padding", *into_req, mk(body=bth(0x81, req_qpn, pad=3) + bytes(16)), watched, drop)
    case("roce: CNP for a QP that does not exist", *into_req, mk(body=bth(0x81, 0xABCDE) + bytes(16)), watched, drop)
    case("roce: CNP with a bad ICRC", *into_req, mk(body=cnp_body, bad_icrc=True), watched, drop)
    case("roce: CNP from a host not the QP's peer", *into_req,
         mk(body=cnp_body, src_ip=socket.inet_aton(f"{NET}.250")), watched, drop)
    case("roce: unknown opcode 0xff", *into_req, mk(body=bth(0xFF, req_qpn) + bytes(16)), watched, drop)
    case("roce: UDP 4791 shorter than a BTH", *into_req,
         [mac(req) + mac(resp) + b"\x08\x00" + ipv4(ip(resp), ip(req), 17, udp(4791, bytes(6)))] * COUNT,
         watched, drop)
    # INT shims (docs/wire-format.md) that rxe must refuse before it looks
    # for a BTH behind them.
    mi = lambda shim, body=cnp_body: [roce_int(resp, req, shim, body)] * COUNT  # noqa: E731
    # A DSCP with the INT bit from a sender that is not ours: no shim,
    # stock RoCEv2, and obeyed as such.
    case("int: flagged, but a BTH follows UDP (a stock CNP)", *into_req, mi(b""), watched, {"cnps": COUNT})
    case("int: flagged without the magic (read as a BTH of opcode 0xc4)", *into_req, mi(int_shim(magic=0xC4)), watched, drop)
    case("int: unknown version", *into_req, mi(int_shim(version=1)), watched, drop)
    case("int: more hops written than room", *into_req, mi(int_shim(nhops=3, max_hops=2)), watched, drop)
    case("int: room for 6 hops (at most 5)", *into_req, mi(int_shim(max_hops=6)), watched, drop)
    case("int: shim longer than the packet", *into_req, mi(int_shim(max_hops=5), body=b""), watched, drop)

    # ECN on traffic that is not RoCE (and on RoCE-port garbage), into the
    # responder: the IP stack sees the CE (InCEPkts), rxe_cc never does.
    pid = netns_pid(f"h{resp}")
    watched = {
        "InCEPkts": lambda: snmp(pid, "IpExt", "InCEPkts"),
        "Udp.NoPorts": lambda: snmp(pid, "Udp", "NoPorts"),
        "Tcp.OutRsts": lambda: snmp(pid, "Tcp", "OutRsts"),
        "rcvd_dropped": lambda: rxe_counter(resp, "rcvd_dropped"),
        "rx_ecn_ce": lambda: qp_stat(resp, resp_qpn, "rx_ecn_ce"),
    }
    ce = 0x03
    case("ecn: CE on UDP to a closed port", *into_resp,
         [mac(resp) + mac(req) + b"\x08\x00" + ipv4(ip(req), ip(resp), 17, udp(9, bytes(64)), ce)] * COUNT,
         watched, {"InCEPkts": COUNT, "Udp.NoPorts": COUNT})
    case("ecn: CE on a TCP SYN to a closed port", *into_resp, [tcp_syn(req, resp, 9, ce)] * COUNT,
         watched, {"InCEPkts": COUNT, "Tcp.OutRsts": COUNT})
    case("ecn: CE on UDP 4791 that is not RoCE", *into_resp,
         [mac(resp) + mac(req) + b"\x08\x00" + ipv4(ip(req), ip(resp), 17, udp(4791, bytes(6)), ce)] * COUNT,
         watched, {"InCEPkts": COUNT, "rcvd_dropped": COUNT})
    case("ecn: CE on a RoCE packet with a bad ICRC", *into_resp,
         [roce(req, resp, bth(0x0A, resp_qpn) + bytes(64), bad_icrc=True, tos=ce)] * COUNT,
         watched, {"InCEPkts": COUNT, "rcvd_dropped": COUNT})

    after = qp_state(req, req_qpn), qp_state(resp, resp_qpn)
    if after != states:
        print(f"FAIL the flow's QP states went from {states} to {after} (did the flow end too soon?)")
        sys.exit(1)
    print(f"ok   QP states before and after: {after}; the cases took {time.monotonic() - start:.1f} s")
    # The control: one valid CNP reaches rxe_cc's QP.
    watched = {"rcvd_dropped": lambda: rxe_counter(req, "rcvd_dropped"),
               "cnps": lambda: qp_stat(req, req_qpn, "cnps")}
    case("roce: a valid CNP (control)", *into_req, [roce(resp, req, body=cnp_body)], watched, {"cnps": 1})
    # and one behind a well-formed INT shim: the receiver steps over it.
    case("int: a valid CNP behind a valid shim (control)", *into_req,
         [roce_int(resp, req, int_shim(nhops=1, max_hops=2), cnp_body)], watched, {"cnps": 1})


def run_stock(req, req_qpn, resp):
    into_req = (f"v{req}", (f"p{req}", None))
    if qp_state(req, req_qpn) != "RTS":
        sys.exit(f"rxe{req} QP {req_qpn} is not in RTS before the cases")
    if os.path.exists("/sys/module/rxe_cc"):
        sys.exit("rxe_cc is loaded: these cases are for rdma_rxe alone")
    cnp_body = bth(0x81, req_qpn) + bytes(16)
    watched = {"rcvd_dropped": lambda: rxe_counter(req, "rcvd_dropped")}
    drop = {"rcvd_dropped": COUNT}
    case("stock: a valid CNP", *into_req, [roce(resp, req, body=cnp_body)] * COUNT, watched, drop)
    case("stock: a valid CNP behind a valid INT shim", *into_req,
         [roce_int(resp, req, int_shim(nhops=1, max_hops=2), cnp_body)] * COUNT, watched, drop)
    state = qp_state(req, req_qpn)
    if state != "RTS":
        print(f"FAIL the flow's QP went to {state}")
        sys.exit(1)


def sq_psn(h, qpn):
    """The next PSN QP qpn on host h will send (rxe reports req.psn)."""
    out = subprocess.run(["rdma", "-j", "resource", "show", "qp", "link", f"rxe{h}/1", "lqpn", str(qpn)],
                         capture_output=True, text=True).stdout
    try:
        return int(json.loads(out)[0]["sq-psn"])
    except (ValueError, IndexError, KeyError):
        sys.exit(f"rxe{h} QP {qpn}: no sq-psn in {out!r}")


def run_ack(req, req_qpn, resp, ahead):
    next_psn = sq_psn(req, req_qpn)
    psn = (next_psn + ahead) & 0xFFFFFF
    # BTH (RC ACKNOWLEDGE, no marks) and an AETH: syndrome ACK, MSN 0.
    body = bth(0x11, req_qpn, psn=psn, becn=False) + struct.pack(">I", 0x1F << 24)
    # To the NIC's own MAC, as the testbed set it (rxecc testbed up).
    out = subprocess.run(["ip", "netns", "exec", f"h{req}", "cat", f"/sys/class/net/v{req}/address"],
                         check=True, capture_output=True, text=True).stdout
    frame = roce(resp, req, body=body)
    send(f"p{req}", None, [bytes.fromhex(out.strip().replace(":", "")) + frame[6:]])
    print(f"ACK for PSN {psn:#x} sent to rxe{req} QP {req_qpn}, whose next PSN was {next_psn:#x}")


def main():
    sys.stdout.reconfigure(line_buffering=True)  # in order with stderr in a log
    if len(sys.argv) < 3 or sys.argv[1] not in ("pfc", "roce", "ack", "stock"):
        sys.exit(__doc__)
    if sys.argv[1] == "pfc":
        run_pfc(sys.argv[2:])
    elif sys.argv[1] == "stock":
        if len(sys.argv) != 5:
            sys.exit(__doc__)
        run_stock(*map(int, sys.argv[2:]))
    elif sys.argv[1] == "ack":
        if len(sys.argv) != 6:
            sys.exit(__doc__)
        run_ack(*map(int, sys.argv[2:]))
        return
    else:
        if len(sys.argv) != 6:
            sys.exit(__doc__)
        run_roce(*map(int, sys.argv[2:]))
    print(f"{tried} frames sent; {failures} case(s) failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
