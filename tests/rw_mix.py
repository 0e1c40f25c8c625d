#!/usr/bin/python3
"""rw_mix.py: one RC QP that mixes RDMA WRITE and RDMA READ, with
rdma-core's Python bindings (pyverbs, Debian's python3-pyverbs; run with
/usr/bin/python3), for rxe_cc's byte accounting and QP reset.

  rw_mix.py server DEV GID_INDEX PORT
  rw_mix.py client DEV GID_INDEX SERVER_IP PORT ROUNDS ITERS WRITE READ [--reset]
  rw_mix.py write-check DEV GID_INDEX SERVER_IP PORT SIZE SQ_PSN

The client connects one QP to the server's, then per round posts ITERS
pairs (a WRITE of WRITE bytes, a READ of READ bytes) with up to 4 of them
outstanding, and checks every completion. With --reset, between rounds
both QPs go to RESET and connect again from a send PSN half the PSN space
away. The client prints one JSON line: the bytes written and read, its
QPN, and rxe_cc's counters of the client QP (debugfs) at the end of each
round and just after each reset, so that a caller can tell a round's
counts from the next. Progress and errors go to stderr.

write-check connects from send PSN SQ_PSN, prints {"qpn": N} at once (for
a caller that sends packets at the QP), with no retransmit timer, posts one WRITE of SIZE bytes of a
pattern in which every 4-byte word names its 4 KB chunk, and waits for its
completion; then the server compares its buffer with the pattern. It
prints the result as JSON and exits 1 unless the WRITE succeeded and every
byte arrived in its place, within 60 s."""
import json
import os
import socket
import sys
import time

from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

DEPTH = 4
PSN_MASK = 0xFFFFFF
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ)


def log(msg):
    print(f"rw_mix: {msg}", file=sys.stderr, flush=True)


class Side:
    """A device, a QP on it and one buffer registered for both ops."""

    def __init__(self, dev, gid_index, buf_len):
        self.ctx = Context(name=dev)
        self.gid_index = gid_index
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 4 * DEPTH)
        self.mr = MR(self.pd, buf_len, ACCESS)
        self.mtu = self.ctx.query_port(1).active_mtu
        self.gid = str(self.ctx.query_gid(port_num=1, index=gid_index))
        cap = QPCap(max_send_wr=2 * DEPTH, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, cap=cap))

    def info(self, psn):
        return {"qpn": self.qp.qp_num, "psn": psn, "gid": self.gid, "mtu": self.mtu,
                "rkey": self.mr.rkey, "addr": self.mr.buf}

    def connect(self, my_psn, peer, timeout=18):
        """RESET or INIT to RTS towards `peer` (its info()), with a local
        ACK timeout of 4.096 us << `timeout` (0: none)."""
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = ACCESS
        attr.path_mtu = min(self.mtu, peer["mtu"])
        attr.dest_qp_num = peer["qpn"]
        attr.rq_psn = peer["psn"]
        attr.max_dest_rd_atomic = DEPTH
        attr.min_rnr_timer = 12
        gr = GlobalRoute(dgid=GID(peer["gid"]), sgid_index=self.gid_index)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        attr.sq_psn = my_psn
        attr.timeout = timeout
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.max_rd_atomic = DEPTH
        self.qp.to_rts(attr)

    def reset(self):
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RESET
        self.qp.modify(attr, e.IBV_QP_STATE)


def send_json(sock, obj):
    sock.sendall((json.dumps(obj) + "\n").encode())


def recv_json(f):
    line = f.readline()
    if not line:
        sys.exit("rw_mix: the peer closed the connection")
    return json.loads(line)


def server(dev, gid_index, port):
    side = None
    with socket.create_server(("", port)) as ls:
        log(f"{dev}: listening on {port}")
        conn, _ = ls.accept()
        with conn, conn.makefile("r") as f:
            while True:
                msg = recv_json(f)
                if msg["cmd"] == "connect":
                    if side is None:
                        side = Side(dev, gid_index, msg["buf_len"])
                    else:
                        side.reset()
                    psn = msg["peer_psn"]
                    side.connect(psn, msg["info"])
                    send_json(conn, side.info(psn))
                elif msg["cmd"] == "check":
                    send_json(conn, check(side.mr, msg["len"]))
                elif msg["cmd"] == "done":
                    send_json(conn, {"ok": True})
                    return


CHUNK = 4096
WRITE_CHECK_S = 60


def pattern(length):
    """Every 4-byte word holds the number of its 4 KB chunk plus one (a
    chunk that never arrived stays zero)."""
    whole = b"".join((k + 1).to_bytes(4, "big") * (CHUNK // 4) for k in range(length // CHUNK + 1))
    return whole[:length]


def check(mr, length):
    """The first chunk of the server's buffer that differs from the
    pattern, if any."""
    got = mr.read(length, 0)
    want = pattern(length)
    if got == want:
        return {"ok": True}
    bad = next(i for i in range(0, length, CHUNK) if got[i:i + CHUNK] != want[i:i + CHUNK])
    return {"ok": False, "first_bad_chunk": bad // CHUNK, "chunks": (length + CHUNK - 1) // CHUNK}


def qp_stats(dev, qpn):
    """rxe_cc's counters of one QP, None if it has none (no module). Under
    `ip netns exec`, which mounts a sysfs of its own, debugfs is reached
    through init's root (RXECC_DEBUGFS)."""
    top = os.environ.get("RXECC_DEBUGFS", "/sys/kernel/debug")
    try:
        with open(f"{top}/rxe_cc/qps/{dev}-qp{qpn}/stats") as f:
            pairs = [line.split() for line in f]
        return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}
    except OSError as err:
        log(f"no rxe_cc counters for {dev} QP {qpn}: {err}")
        return None


def run_round(side, peer, iters, write_len, read_len):
    """ITERS WRITE/READ pairs, DEPTH work requests outstanding at most."""
    posted = done = 0
    total = 2 * iters
    while done < total:
        while posted < total and posted - done < DEPTH:
            read = posted % 2 == 1
            length = read_len if read else write_len
            # The READ lands behind the WRITE's source in the local buffer.
            local = side.mr.buf + (write_len if read else 0)
            sge = SGE(local, length, side.mr.lkey)
            wr = SendWR(wr_id=posted, opcode=e.IBV_WR_RDMA_READ if read else e.IBV_WR_RDMA_WRITE,
                        num_sge=1, sg=[sge], send_flags=e.IBV_SEND_SIGNALED)
            wr.set_wr_rdma(peer["rkey"], peer["addr"])
            side.qp.post_send(wr)
            posted += 1
        n, wcs = side.cq.poll(num_entries=DEPTH)
        for wc in wcs[:n]:
            if wc.status != e.IBV_WC_SUCCESS:
                sys.exit(f"rw_mix: work request {wc.wr_id} failed: status {wc.status}")
        done += n


def client(dev, gid_index, host, port, rounds, iters, write_len, read_len, reset):
    buf_len = write_len + read_len
    side = Side(dev, gid_index, buf_len)
    psn = 100
    out = {"qpn": side.qp.qp_num, "written": 0, "read": 0, "rounds": []}
    with socket.create_connection((host, port)) as conn, conn.makefile("r") as f:
        for r in range(rounds):
            counts = {}
            if r > 0 and reset:
                side.reset()
                # Half the PSN space on: before the old PSNs, in serial order.
                psn = (psn + (1 << 23) + 1000) & PSN_MASK
                counts["after_reset"] = qp_stats(dev, side.qp.qp_num)
            if r == 0 or reset:
                send_json(conn, {"cmd": "connect", "buf_len": buf_len, "peer_psn": psn,
                                 "info": side.info(psn)})
                peer = recv_json(f)
                side.connect(psn, peer)
            run_round(side, peer, iters, write_len, read_len)
            out["written"] += iters * write_len
            out["read"] += iters * read_len
            counts["end"] = qp_stats(dev, side.qp.qp_num)
            out["rounds"].append(counts)
            log(f"round {r + 1}/{rounds}: {iters} writes of {write_len} B and reads of {read_len} B done")
        send_json(conn, {"cmd": "done"})
        recv_json(f)
    print(json.dumps(out), flush=True)


def write_check(dev, gid_index, host, port, size, psn):
    """One WRITE of the pattern, from send PSN `psn`; the server checks it."""
    side = Side(dev, gid_index, size)
    side.mr.write(pattern(size), size, 0)
    # No retransmit timer (as perftest's -u 0): a caller may hold the
    # packets longer than any timeout, and a retry would go back to the
    # completer's PSN, which a forged ACK moved. A QP that skipped packets
    # the responder lacks then never completes: the deadline says so.
    with socket.create_connection((host, port)) as conn, conn.makefile("r") as f:
        send_json(conn, {"cmd": "connect", "buf_len": size, "peer_psn": psn, "info": side.info(psn)})
        peer = recv_json(f)
        side.connect(psn, peer, timeout=0)
        print(json.dumps({"qpn": side.qp.qp_num}), flush=True)
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(side.mr.buf, size, side.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(peer["rkey"], peer["addr"])
        side.qp.post_send(wr)
        n, deadline = 0, time.monotonic() + WRITE_CHECK_S
        while n == 0:
            if time.monotonic() > deadline:
                sys.exit(f"rw_mix: the WRITE of {size} B did not complete within {WRITE_CHECK_S} s")
            n, wcs = side.cq.poll(num_entries=1)
            time.sleep(0.001)
        status = wcs[0].status
        send_json(conn, {"cmd": "check", "len": size})
        res = recv_json(f)
        send_json(conn, {"cmd": "done"})
        recv_json(f)
    res["status"] = status
    print(json.dumps(res), flush=True)
    if status != e.IBV_WC_SUCCESS:
        sys.exit(f"rw_mix: the WRITE completed with status {status}")
    if not res["ok"]:
        sys.exit(f"rw_mix: the server's chunk {res['first_bad_chunk']} of {res['chunks']} is not what was written")


def main():
    a = sys.argv[1:]
    try:
        if len(a) == 7 and a[0] == "write-check":
            write_check(a[1], int(a[2]), a[3], int(a[4]), int(a[5]), int(a[6], 0))
            return
        if len(a) == 4 and a[0] == "server":
            server(a[1], int(a[2]), int(a[3]))
            return
        if len(a) in (9, 10) and a[0] == "client" and (len(a) == 9 or a[9] == "--reset"):
            client(a[1], int(a[2]), a[3], int(a[4]), int(a[5]), int(a[6]), int(a[7]), int(a[8]),
                   len(a) == 10)
            return
    except ValueError as err:
        sys.exit(f"rw_mix: {err}")
    sys.exit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main()
