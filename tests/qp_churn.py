#!/usr/bin/python3
"""qp_churn.py DEV N: create and destroy N RC QPs on RDMA device DEV, one
after another, with rdma-core's Python bindings (pyverbs, Debian's
python3-pyverbs; run with /usr/bin/python3). A progress line every 1000
QPs and a summary go to stderr."""
import sys
import time

from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr
import pyverbs.enums as e


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit("usage: qp_churn.py DEV N")
    dev, n = sys.argv[1], int(sys.argv[2])
    start = time.monotonic()
    with Context(name=dev) as ctx:
        pd = PD(ctx)
        cq = CQ(ctx, 16)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
        attr = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)
        for i in range(1, n + 1):
            QP(pd, attr).close()
            if i % 1000 == 0:
                print(f"qp_churn: {i}/{n} QPs", file=sys.stderr, flush=True)
        cq.close()
        pd.close()
    took = time.monotonic() - start
    print(f"qp_churn: {n} QPs created and destroyed in {took:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
