// SPDX-License-Identifier: GPL-2.0
/*
 * flowgen: replay a flow file on real RDMA verbs, one process per host.
 *
 *   flowgen --host ID --hosts IP0,IP1,... --flows FILE
 *           (--epoch NS | --sync-dir DIR [--sync-n N] [--setup-timeout S])
 *           [--op write|send|read] [--port P] [--out FILE] [--timeout S]
 *           [--ack-timeout N] [--msg-size B]
 *   flowgen --now     (prints CLOCK_MONOTONIC, ns: to compute an epoch)
 *
 * The flow file is the HPCC simulator's (first line N, then
 * "src dst pg dport size start_s") or ConWeave's (no dport). Every host's
 * process reads the whole file: it initiates the flows it owns and accepts
 * the ones aimed at it. Flow time 0 is the file's earliest start, at
 * CLOCK_MONOTONIC --epoch ns (the hooks' clock, and the same in every
 * namespace of one kernel).
 *
 * --sync-dir DIR instead of --epoch: the processes (N of them, by default
 * one per --hosts address) agree on the epoch themselves. Each, once every
 * flow it initiates is connected, creates DIR/ready-<host>; the one that
 * sees N such files first writes DIR/epoch (CLOCK_MONOTONIC ns,
 * SYNC_LEAD_NS from then) and every process reads it there. Time 0 then follows the
 * slowest set-up instead of a guessed lead: no idle wait, and no flow
 * starts late on a slow machine. DIR must exist and be empty; the caller
 * reads the epoch from DIR/epoch. --setup-timeout (default 600 s) bounds
 * the wait.
 *
 * Each flow has its own RC QP, as each flow is a QP in the simulator and
 * rxe_cc keeps CC state per QP; a pool shared by a host pair would queue a
 * short flow behind a long one, which no CC would be to blame for. QPs are
 * connected (librdmacm, which finds the RoCEv2 GID from the IP) before the
 * epoch, so that FCT does not include connection set-up; a flow posts one
 * work request of its whole size at its start time:
 *   write: RDMA WRITE from src into dst's buffer;
 *   send:  SEND, into a receive that dst posted when it accepted;
 *   read:  dst READs src's buffer (dst initiates; the data still flows
 *          src -> dst, as the flow file says).
 * A flow completes at the initiator's completion (RC: every byte acked).
 *
 * --ack-timeout N sets every QP's local ACK timeout to 4.096 us x 2^N (the
 * verbs' exponent, 1 to 31; perftest's -u). Without it rdma_cm derives one
 * from RoCE's fixed packet lifetime, about 0.5 to 1 s: shorter than one
 * PAUSE of 65535 quanta on a slow emulated link, so a paused QP would
 * retransmit into the paused queue.
 *
 * --msg-size B posts each WRITE or READ flow as work requests of B bytes
 * at most, all at its start (the last one signalled: the flow completes
 * with it), so that one QP carries many messages, as perftest's -s does;
 * rxe's go-back-N works per message.
 *
 * Completions, connection events and the start timer are waited for with
 * epoll: nothing busy-polls (the guest has two vCPUs).
 *
 * Output (--out, CSV with a header, a line per flow as it completes, so
 * that a killed run keeps what finished):
 *   id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status
 * sched_ns is the planned start, start_ns the post and end_ns the
 * completion (CLOCK_MONOTONIC); status is "ok" or ibv_wc_status_str().
 * Exit status: 0 when every flow this host initiated completed (at the
 * --timeout too, with a warning, if only peers' connections were still
 * open), 1 if any failed or did not complete by the timeout, 2 on bad
 * arguments or input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum op { OP_WRITE, OP_SEND, OP_READ };
static const char *const op_names[] = { "write", "send", "read" };

enum flow_state { F_IDLE, F_CONNECTING, F_READY, F_POSTED, F_DONE };

struct flow {
	uint32_t id, src, dst, pg, dport;
	uint64_t size;
	uint64_t sched_ns;	/* absolute CLOCK_MONOTONIC */
	uint64_t start_ns, end_ns;
	enum flow_state state;
	struct rdma_cm_id *id_cm;	/* initiator side only */
	uint64_t raddr;
	uint32_t rkey;
	unsigned int retries;
	bool failed;
};

/* What the initiator and the acceptor tell each other. */
struct conn_req {
	uint32_t flow;		/* index in the flow file */
	uint32_t op;
};
struct conn_rep {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

static struct {
	const char *prog;
	uint32_t me;
	char **hosts;
	uint32_t nhosts;
	uint16_t port;
	enum op op;
	uint64_t epoch;		/* 0 until agreed, with --sync-dir */
	unsigned int timeout_s;
	const char *sync_dir;
	uint32_t sync_n;
	unsigned int setup_timeout_s;
	uint8_t ack_timeout;	/* 0: rdma_cm's */
	uint64_t msg_size;	/* 0: a flow is one work request */
	uint32_t max_wrs;	/* the most work requests of one flow */
	uint64_t extra_wrs;	/* work requests beyond one per flow */
	uint64_t t_start;
	int sfd;		/* --sync-dir: polls DIR while the epoch is unknown */
	FILE *out;

	struct flow *flows;
	uint32_t nflows;
	uint32_t to_initiate, established, initiated_done, to_accept, accepted, closed;

	struct rdma_event_channel *ech;
	struct rdma_cm_id *listener;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	void *buf;
	size_t buf_len;
	int ep, tfd;
} g;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: host %u: ", g.prog, g.me);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The initiator of a flow: dst for READ (it pulls), src otherwise. */
static uint32_t initiator(const struct flow *f)
{
	return g.op == OP_READ ? f->dst : f->src;
}

static uint32_t acceptor(const struct flow *f)
{
	return g.op == OP_READ ? f->src : f->dst;
}

static void read_flows(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[512];
	unsigned long n, lineno = 1, i;
	double t0 = 0;

	if (!fp)
		die("%s: %s", path, strerror(errno));
	if (!fgets(line, sizeof(line), fp) || sscanf(line, "%lu", &n) != 1)
		die("%s:1: expected the flow count", path);
	if (n == 0 || n > 10000000)
		die("%s:1: flow count %lu out of range (1 to 10^7)", path, n);
	g.flows = calloc(n, sizeof(*g.flows));
	if (!g.flows)
		die("out of memory for %lu flows", n);
	double *start = calloc(n, sizeof(*start));
	if (!start)
		die("out of memory for %lu flows", n);
	for (i = 0; i < n; i++) {
		unsigned long src, dst, pg, dport, size;
		double s;
		int k;

		lineno++;
		if (!fgets(line, sizeof(line), fp))
			die("%s: the header says %lu flows, the file has %lu", path, n, i);
		k = sscanf(line, "%lu %lu %lu %lu %lu %lf", &src, &dst, &pg, &dport, &size, &s);
		if (k == 5) {
			/* ConWeave: src dst pg size start */
			s = (double)size;
			size = dport;
			dport = 100;
		} else if (k != 6) {
			die("%s:%lu: expected 'src dst pg dport size start_s' (or ConWeave's, without dport)",
			    path, lineno);
		}
		if (src >= g.nhosts || dst >= g.nhosts)
			die("%s:%lu: host %lu is not among the %u of --hosts", path, lineno,
			    src >= g.nhosts ? src : dst, g.nhosts);
		if (src == dst)
			die("%s:%lu: a flow from host %lu to itself", path, lineno, src);
		if (size == 0 || size > (1ul << 31))
			die("%s:%lu: size %lu out of range (1 B to 2 GiB, one work request)", path, lineno, size);
		if (!(s >= 0) || s > 1e6)
			die("%s:%lu: start %f s out of range", path, lineno, s);
		g.flows[i] = (struct flow){ .id = i, .src = src, .dst = dst, .pg = pg,
					    .dport = dport, .size = size };
		start[i] = s;
		if (i == 0 || s < t0)
			t0 = s;
	}
	if (fgets(line, sizeof(line), fp) && strspn(line, " \t\r\n") != strlen(line))
		die("%s:%lu: more flows than the header's %lu", path, lineno + 1, n);
	fclose(fp);
	g.nflows = n;
	for (i = 0; i < n; i++) {
		struct flow *f = &g.flows[i];

		/* Nanoseconds of the file's time, rounded: the simulator's
		 * start is a double of seconds too. */
		f->sched_ns = g.epoch + (uint64_t)((start[i] - t0) * 1e9 + 0.5);
		/* (With --sync-dir, the offset alone until set_epoch().) */
		if (initiator(f) == g.me)
			g.to_initiate++;
		if (acceptor(f) == g.me)
			g.to_accept++;
		if ((f->src == g.me || f->dst == g.me) && f->size > g.buf_len)
			g.buf_len = f->size;
	}
	free(start);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die("fcntl O_NONBLOCK: %s", strerror(errno));
}

/* The first QP's device fixes the process's PD, CQ and buffer. */
static void setup_verbs(struct ibv_context *verbs)
{
	struct ibv_device_attr attr;
	int cqe;

	if (g.verbs) {
		if (verbs != g.verbs)
			die("two RDMA devices in one host namespace (%s and %s)",
			    ibv_get_device_name(g.verbs->device), ibv_get_device_name(verbs->device));
		return;
	}
	g.verbs = verbs;
	if (ibv_query_device(verbs, &attr))
		die("ibv_query_device: %s", strerror(errno));
	g.pd = ibv_alloc_pd(verbs);
	g.cch = ibv_create_comp_channel(verbs);
	if (!g.pd || !g.cch)
		die("ibv_alloc_pd/ibv_create_comp_channel: %s", strerror(errno));
	if (g.max_wrs > (uint32_t)attr.max_qp_wr)
		die("--msg-size %" PRIu64 ": a flow of %u messages, more than the device's %d per QP",
		    g.msg_size, g.max_wrs, attr.max_qp_wr);
	/* Each flow has at most one CQE outstanding at each end, and one per
	 * message more if its QP fails and flushes them. */
	cqe = (int)(2 * (uint64_t)(g.to_initiate + g.to_accept) + g.extra_wrs + 16);
	if (cqe > attr.max_cqe)
		cqe = attr.max_cqe;
	g.cq = ibv_create_cq(verbs, cqe, NULL, g.cch, 0);
	if (!g.cq || ibv_req_notify_cq(g.cq, 0))
		die("ibv_create_cq(%d): %s", cqe, strerror(errno));
	if (g.buf_len == 0)
		g.buf_len = 4096;
	g.buf = mmap(NULL, g.buf_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.buf == MAP_FAILED)
		die("mmap %zu B: %s", g.buf_len, strerror(errno));
	/* Every flow shares it: the bytes' values do not matter here. */
	g.mr = ibv_reg_mr(g.pd, g.buf, g.buf_len,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!g.mr)
		die("ibv_reg_mr %zu B: %s", g.buf_len, strerror(errno));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 1 };
	set_nonblock(g.cch->fd);
	if (epoll_ctl(g.ep, EPOLL_CTL_ADD, g.cch->fd, &ev))
		die("epoll_ctl: %s", strerror(errno));
}

static void create_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = g.cq, .recv_cq = g.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = g.max_wrs, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	setup_verbs(id->verbs);
	if (rdma_create_qp(id, g.pd, &qa))
		die("rdma_create_qp: %s", strerror(errno));
}

static void connect_flow(struct flow *f)
{
	struct addrinfo *ai;
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%u", g.port);
	rc = getaddrinfo(g.hosts[acceptor(f)], port, NULL, &ai);
	if (rc)
		die("host %u's address %s: %s", acceptor(f), g.hosts[acceptor(f)], gai_strerror(rc));
	if (rdma_create_id(g.ech, &f->id_cm, f, RDMA_PS_TCP))
		die("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(f->id_cm, NULL, ai->ai_addr, 2000))
		die("rdma_resolve_addr %s: %s", g.hosts[acceptor(f)], strerror(errno));
	freeaddrinfo(ai);
	f->state = F_CONNECTING;
}

static void record(struct flow *f, const char *status)
{
	fprintf(g.out, "%u,%u,%u,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n", f->id,
		f->src, f->dst, f->dport, op_names[g.op], f->size, f->sched_ns, f->start_ns, f->end_ns, status);
	fflush(g.out);
}

/* An initiated flow ends at `t`: counted once, and recorded. */
static void flow_end(struct flow *f, uint64_t t, bool failed, const char *status)
{
	f->end_ns = t;
	f->failed = failed;
	f->state = F_DONE;
	g.initiated_done++;
	record(f, status);
}

/* The number of work requests flow `f` is posted as. */
static uint32_t flow_wrs(const struct flow *f)
{
	return g.msg_size ? (uint32_t)((f->size + g.msg_size - 1) / g.msg_size) : 1;
}

static void post_flow(struct flow *f)
{
	uint64_t len = g.msg_size ? g.msg_size : f->size, off;
	struct ibv_sge sge = { .lkey = g.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = f->id, .sg_list = &sge, .num_sge = 1 }, *bad;

	switch (g.op) {
	case OP_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	}
	wr.wr.rdma.rkey = f->rkey;
	f->start_ns = now_ns();
	/* One message, or the flow's bytes in messages of --msg-size: only
	 * the last is signalled (an error completes any of them). */
	for (off = 0; off < f->size || off == 0; off += len) {
		if (len > f->size - off)
			len = f->size - off;
		sge.addr = (uintptr_t)g.buf + off;
		sge.length = (uint32_t)len;
		wr.wr.rdma.remote_addr = f->raddr + off;
		wr.send_flags = off + len >= f->size ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(f->id_cm->qp, &wr, &bad)) {
			flow_end(f, f->start_ns, true, "post_failed");
			rdma_disconnect(f->id_cm);
			return;
		}
		if (!len)
			break;
	}
	f->state = F_POSTED;
}

/* Arm the timer for the earliest ready flow not yet posted. */
static void arm_timer(void)
{
	uint64_t next = UINT64_MAX;
	uint32_t i;

	if (!g.epoch)
		return;	/* --sync-dir: set_epoch() arms it */
	for (i = 0; i < g.nflows; i++) {
		struct flow *f = &g.flows[i];

		if (initiator(f) == g.me && f->state == F_READY && f->sched_ns < next)
			next = f->sched_ns;
	}
	struct itimerspec its = { 0 };
	if (next != UINT64_MAX) {
		/* 0 would disarm it: a time already past fires at once. */
		if (next == 0)
			next = 1;
		its.it_value.tv_sec = next / 1000000000ull;
		its.it_value.tv_nsec = next % 1000000000ull;
	}
	if (timerfd_settime(g.tfd, TFD_TIMER_ABSTIME, &its, NULL))
		die("timerfd_settime: %s", strerror(errno));
}

static void start_due(void)
{
	uint64_t t = now_ns(), exp;
	uint32_t i;

	if (read(g.tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		die("timerfd read: %s", strerror(errno));
	for (i = 0; i < g.nflows; i++) {
		struct flow *f = &g.flows[i];

		if (initiator(f) == g.me && f->state == F_READY && f->sched_ns <= t)
			post_flow(f);
	}
	arm_timer();
}

/* --sync-dir: the lead from the last process's set-up to time 0, time
 * for every process to see DIR/epoch (polled every SYNC_POLL_NS) even with
 * TCG's timers several ms late. */
#define SYNC_LEAD_NS ((uint64_t)250000000)
#define SYNC_POLL_NS 10000000L

static void set_epoch(uint64_t epoch)
{
	struct itimerspec off = { 0 };
	uint32_t i;

	g.epoch = epoch;
	for (i = 0; i < g.nflows; i++)
		g.flows[i].sched_ns += epoch;
	if (timerfd_settime(g.sfd, 0, &off, NULL))
		die("timerfd_settime: %s", strerror(errno));
	fprintf(stderr, "%s: host %u: every process connected %.1f s after this one started; time 0 in %.0f ms\n",
		g.prog, g.me, (now_ns() - g.t_start) / 1e9,
		(double)(int64_t)(epoch - now_ns()) / 1e6);
	arm_timer();
}

/* Reads DIR/epoch once it exists, after writing it if every process is
 * ready and no one has. Plain files only (the guest's results directory is
 * 9p): the first O_EXCL create wins, and a reader that finds the line not
 * yet complete tries again at the next poll. */
static void sync_check(void)
{
	char path[4096], buf[32];
	uint32_t ready = 0;
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int fd;

	if (g.epoch)
		return;
	snprintf(path, sizeof(path), "%s/epoch", g.sync_dir);
	if (access(path, F_OK)) {
		d = opendir(g.sync_dir);
		if (!d)
			die("--sync-dir %s: %s", g.sync_dir, strerror(errno));
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, "ready-", 6))
				ready++;
		closedir(d);
		if (ready < g.sync_n)
			return;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", now_ns() + SYNC_LEAD_NS);
			if (write(fd, buf, (size_t)n) != n || close(fd))
				die("%s: %s", path, strerror(errno));
		} else if (errno != EEXIST) {
			die("%s: %s", path, strerror(errno));
		}
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[n - 1] != '\n')
		return;
	buf[n] = 0;
	set_epoch(strtoull(buf, NULL, 10));
}

/* Every flow this process initiates is connected (or it initiates none). */
static void sync_ready(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/ready-%u", g.sync_dir, g.me);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || close(fd))
		die("%s: %s", path, strerror(errno));
	sync_check();
}

/* Takes every completion queued: a flow's ends there. */
static void poll_completions(void)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(g.cq, 16, wc)) > 0) {
		uint64_t t = now_ns();

		for (i = 0; i < n; i++) {
			struct flow *f;

			if (wc[i].wr_id == UINT64_MAX) {
				/* A receive of a SEND flow: the sender times it. */
				if (wc[i].status != IBV_WC_SUCCESS)
					fprintf(stderr, "%s: host %u: a receive failed: %s\n", g.prog,
						g.me, ibv_wc_status_str(wc[i].status));
				continue;
			}
			if (wc[i].wr_id >= g.nflows)
				continue;
			f = &g.flows[wc[i].wr_id];
			if (f->state == F_DONE)
				continue;	/* already ended by its peer's disconnect */
			flow_end(f, t, wc[i].status != IBV_WC_SUCCESS,
				 wc[i].status != IBV_WC_SUCCESS ? ibv_wc_status_str(wc[i].status) : "ok");
			if (f->id_cm)
				rdma_disconnect(f->id_cm);
		}
	}
}

/* --ack-timeout, on an id whose QP has not reached RTS yet. */
static void set_ack_timeout(struct rdma_cm_id *id)
{
	uint8_t t = g.ack_timeout;

	if (t && rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)))
		die("rdma_set_option(ACK_TIMEOUT %u): %s", t, strerror(errno));
}

static void on_cm_event(void)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };

	if (rdma_get_cm_event(g.ech, &ev)) {
		if (errno == EAGAIN)
			return;
		die("rdma_get_cm_event: %s", strerror(errno));
	}
	struct rdma_cm_id *id = ev->id;
	struct flow *f = id->context;	/* NULL for accepted connections */

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(id, 2000))
			die("rdma_resolve_route: %s", strerror(errno));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		struct conn_req req = { .flow = f->id, .op = g.op };

		create_qp(id);
		set_ack_timeout(id);
		cp.private_data = &req;
		cp.private_data_len = sizeof(req);
		if (rdma_connect(id, &cp))
			die("rdma_connect: %s", strerror(errno));
		break;
	}
	case RDMA_CM_EVENT_CONNECT_REQUEST: {
		const struct conn_req *req = ev->param.conn.private_data;
		struct conn_rep rep;

		if (ev->param.conn.private_data_len < sizeof(*req) || req->flow >= g.nflows ||
		    acceptor(&g.flows[req->flow]) != g.me || req->op != (uint32_t)g.op) {
			fprintf(stderr, "%s: host %u: refusing a connection for no flow of mine\n",
				g.prog, g.me);
			rdma_reject(id, NULL, 0);
			break;
		}
		create_qp(id);
		if (g.op == OP_SEND) {
			struct ibv_sge sge = { .addr = (uintptr_t)g.buf,
					       .length = (uint32_t)g.flows[req->flow].size,
					       .lkey = g.mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = UINT64_MAX, .sg_list = &sge, .num_sge = 1 },
					   *bad;

			if (ibv_post_recv(id->qp, &wr, &bad))
				die("ibv_post_recv: %s", strerror(errno));
		}
		set_ack_timeout(id);
		rep = (struct conn_rep){ .addr = (uintptr_t)g.buf, .rkey = g.mr->rkey };
		cp.private_data = &rep;
		cp.private_data_len = sizeof(rep);
		if (rdma_accept(id, &cp))
			die("rdma_accept: %s", strerror(errno));
		g.accepted++;
		break;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		if (f) {
			const struct conn_rep *rep = ev->param.conn.private_data;

			if (ev->param.conn.private_data_len < sizeof(*rep))
				die("flow %u: the acceptor sent no buffer", f->id);
			f->raddr = rep->addr;
			f->rkey = rep->rkey;
			f->state = F_READY;
			arm_timer();
			/* How much of --epoch's lead the set-up used: a caller
			 * that gave too little sees it here, not in late flows. */
			if (++g.established == g.to_initiate) {
				if (g.sync_dir) {
					fprintf(stderr, "%s: host %u: %u flows connected in %.1f s\n",
						g.prog, g.me, g.to_initiate, (now_ns() - g.t_start) / 1e9);
					sync_ready();
				} else {
					int64_t lead = (int64_t)(g.epoch - now_ns());

					fprintf(stderr, "%s: host %u: %u flows connected %.1f s %s the epoch\n",
						g.prog, g.me, g.to_initiate, (lead < 0 ? -lead : lead) / 1e9,
						lead < 0 ? "after" : "before");
				}
			}
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		if (!f)
			break;
		/* The acceptor's process may not listen yet: try again. */
		if (++f->retries > 200)
			die("flow %u: cannot connect to host %u (%s)", f->id, acceptor(f),
			    rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		if (f->id_cm->qp)
			rdma_destroy_qp(f->id_cm);
		rdma_destroy_id(f->id_cm);
		f->id_cm = NULL;
		usleep(50000);
		connect_flow(f);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_ack_cm_event(ev);
		/* The acceptor closed a flow this host started before it ended
		 * (its process exited or timed out). Its QP goes now, and with
		 * it any completion: the flow failed, and waiting out the
		 * timeout would only hide why. Its completion may be queued
		 * behind this event, so take those first. */
		if (f && f->state != F_DONE)
			poll_completions();
		if (f && f->state != F_DONE) {
			flow_end(f, now_ns(), true, "disconnected");
			fprintf(stderr, "%s: host %u: flow %u: host %u closed its connection before the flow completed\n",
				g.prog, g.me, f->id, acceptor(f));
		}
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		if (f)
			f->id_cm = NULL;
		g.closed++;
		return;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

static void on_completions(void)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(g.cch, &cq, &ctx))
		return;
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		die("ibv_req_notify_cq: %s", strerror(errno));
	poll_completions();
}

/* A positive integer option's value; dies with "<opt> <arg>: <what>". */
static unsigned long positive_arg(const char *opt, const char *arg, const char *what)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || !v)
		die("%s %s: %s", opt, arg, what);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s --host ID --hosts IP0,IP1,... --flows FILE\n"
		"          (--epoch NS | --sync-dir DIR [--sync-n N] [--setup-timeout S])\n"
		"          [--op write|send|read] [--port P] [--out FILE] [--timeout S]\n"
		"          [--ack-timeout N] [--msg-size B]\n"
		"       %s --now\n",
		g.prog, g.prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'h' },  { "hosts", required_argument, NULL, 'H' },
		{ "flows", required_argument, NULL, 'f' }, { "epoch", required_argument, NULL, 'e' },
		{ "op", required_argument, NULL, 'o' },	   { "port", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'w' },   { "timeout", required_argument, NULL, 't' },
		{ "now", no_argument, NULL, 'n' },	   { "sync-dir", required_argument, NULL, 'S' },
		{ "sync-n", required_argument, NULL, 'N' },
		{ "setup-timeout", required_argument, NULL, 'T' },
		{ "ack-timeout", required_argument, NULL, 'a' },
		{ "msg-size", required_argument, NULL, 'm' }, {}
	};
	const char *flows = NULL, *out = NULL;
	char *hosts = NULL, *end;
	bool have_host = false;
	uint32_t i;
	int c;

	g.prog = "flowgen";
	g.port = 18600;
	g.timeout_s = 600;
	g.setup_timeout_s = 600;
	g.t_start = now_ns();
	g.sfd = -1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			printf("%" PRIu64 "\n", now_ns());
			return 0;
		case 'h':
			g.me = strtoul(optarg, &end, 10);
			if (*end)
				die("--host %s: not a number", optarg);
			have_host = true;
			break;
		case 'H':
			hosts = strdup(optarg);
			break;
		case 'f':
			flows = optarg;
			break;
		case 'e':
			g.epoch = strtoull(optarg, &end, 10);
			if (*end || !g.epoch)
				die("--epoch %s: not a CLOCK_MONOTONIC time in ns", optarg);
			break;
		case 'o':
			for (i = 0; i < 3 && strcmp(optarg, op_names[i]); i++)
				;
			if (i == 3)
				die("--op %s: write, send or read", optarg);
			g.op = i;
			break;
		case 'p':
			g.port = positive_arg("--port", optarg, "not a port");
			break;
		case 'w':
			out = optarg;
			break;
		case 'S':
			g.sync_dir = optarg;
			break;
		case 'N':
			g.sync_n = positive_arg("--sync-n", optarg, "not a number of processes");
			break;
		case 'T':
			g.setup_timeout_s = positive_arg("--setup-timeout", optarg,
							 "not a number of seconds");
			break;
		case 't':
			g.timeout_s = positive_arg("--timeout", optarg, "not a number of seconds");
			break;
		case 'a': {
			unsigned long v = positive_arg("--ack-timeout", optarg,
						       "an exponent from 1 to 31");

			if (v > 31)
				die("--ack-timeout %s: an exponent from 1 to 31", optarg);
			g.ack_timeout = v;
			break;
		}
		case 'm':
			g.msg_size = positive_arg("--msg-size", optarg, "not a number of bytes");
			break;
		default:
			usage();
		}
	}
	if (!have_host || !hosts || !flows || !g.epoch == !g.sync_dir || optind != argc)
		usage();
	for (char *tok = strtok(hosts, ","); tok; tok = strtok(NULL, ",")) {
		g.hosts = realloc(g.hosts, (g.nhosts + 1) * sizeof(*g.hosts));
		if (!g.hosts)
			die("out of memory");
		g.hosts[g.nhosts++] = tok;
	}
	if (g.me >= g.nhosts)
		die("--host %u, but --hosts names %u", g.me, g.nhosts);
	if (g.sync_dir && !g.sync_n)
		g.sync_n = g.nhosts;
	read_flows(flows);
	if (g.msg_size && g.op == OP_SEND)
		die("--msg-size: WRITE and READ only (a SEND needs a receive per message)");
	g.max_wrs = 1;
	for (i = 0; i < g.nflows; i++) {
		uint32_t n = flow_wrs(&g.flows[i]);

		if (initiator(&g.flows[i]) != g.me)
			continue;
		g.extra_wrs += n - 1;
		if (n > g.max_wrs)
			g.max_wrs = n;
	}
	g.out = out ? fopen(out, "w") : stdout;
	if (!g.out)
		die("%s: %s", out, strerror(errno));
	fprintf(g.out, "id,src,dst,dport,op,size,sched_ns,start_ns,end_ns,status\n");
	fflush(g.out);

	g.ep = epoll_create1(EPOLL_CLOEXEC);
	g.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	g.ech = rdma_create_event_channel();
	if (g.ep < 0 || g.tfd < 0 || !g.ech)
		die("epoll/timerfd/rdma event channel: %s", strerror(errno));
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
	set_nonblock(g.ech->fd);
	if (epoll_ctl(g.ep, EPOLL_CTL_ADD, g.ech->fd, &ev))
		die("epoll_ctl: %s", strerror(errno));
	ev.data.u32 = 2;
	if (epoll_ctl(g.ep, EPOLL_CTL_ADD, g.tfd, &ev))
		die("epoll_ctl: %s", strerror(errno));
	if (g.sync_dir) {
		struct itimerspec poll = { .it_interval = { 0, SYNC_POLL_NS },
					   .it_value = { 0, SYNC_POLL_NS } };

		g.sfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		ev.data.u32 = 3;
		if (g.sfd < 0 || timerfd_settime(g.sfd, 0, &poll, NULL) ||
		    epoll_ctl(g.ep, EPOLL_CTL_ADD, g.sfd, &ev))
			die("the --sync-dir poll timer: %s", strerror(errno));
	}

	/* Every process listens, even with no flow to accept: a process that
	 * only connected out never got the completion of its first WRITE,
	 * though the ACK reached its host (seen in a capture; stock rxe as
	 * well as patched, kernel 7.2). With a listener bound to the host's
	 * address first, the same flows complete. The cause is not known. */
	{
		struct addrinfo *ai, hints = { .ai_flags = AI_PASSIVE, .ai_family = AF_INET };
		char port[8];

		snprintf(port, sizeof(port), "%u", g.port);
		if (getaddrinfo(g.hosts[g.me], port, &hints, &ai))
			die("my address %s is not an IPv4 address", g.hosts[g.me]);
		if (rdma_create_id(g.ech, &g.listener, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(g.listener, ai->ai_addr) || rdma_listen(g.listener, 1024))
			die("listening on %s:%u: %s", g.hosts[g.me], g.port, strerror(errno));
		freeaddrinfo(ai);
		if (g.listener->verbs)
			setup_verbs(g.listener->verbs);
	}
	/* The other processes may start a little later: connect_flow()
	 * retries a refused connection. */
	for (i = 0; i < g.nflows; i++)
		if (initiator(&g.flows[i]) == g.me)
			connect_flow(&g.flows[i]);
	if (g.sync_dir && g.to_initiate == 0)
		sync_ready();

	/* Done when every flow started here completed and every connection,
	 * both ways, was closed. */
	while (g.initiated_done < g.to_initiate || g.closed < g.to_initiate + g.to_accept) {
		struct epoll_event evs[4];
		uint64_t t = now_ns(), deadline;
		int n, k;

		if (!g.epoch) {
			deadline = g.t_start + (uint64_t)g.setup_timeout_s * 1000000000ull;
			if (t >= deadline) {
				fprintf(stderr, "%s: host %u: not every process connected within %u s"
					" (--setup-timeout): %u of %u flows here connected\n",
					g.prog, g.me, g.setup_timeout_s, g.established, g.to_initiate);
				return 1;
			}
		} else {
			deadline = g.epoch + (uint64_t)g.timeout_s * 1000000000ull;
		}
		if (g.epoch && t >= deadline) {
			/* Every flow it initiated completed: this host only waited
			 * for peers to close, and a peer's unfinished flow is that
			 * peer's failure, not this one's. */
			if (g.initiated_done == g.to_initiate) {
				fprintf(stderr, "%s: host %u: warning: at the %u s timeout, every flow it"
					" initiated had completed (%u), but %u of %u connections were"
					" not yet closed (%u of %u accepted)\n",
					g.prog, g.me, g.timeout_s, g.to_initiate,
					g.to_initiate + g.to_accept - g.closed,
					g.to_initiate + g.to_accept, g.accepted, g.to_accept);
				break;
			}
			fprintf(stderr, "%s: host %u: timed out after %u s: %u of %u flows done, %u of %u accepted\n",
				g.prog, g.me, g.timeout_s, g.initiated_done, g.to_initiate, g.accepted,
				g.to_accept);
			for (i = 0; i < g.nflows; i++) {
				struct flow *f = &g.flows[i];

				if (initiator(f) == g.me && f->state != F_DONE)
					record(f, "timeout");
			}
			return 1;
		}
		n = epoll_wait(g.ep, evs, 4, (int)((deadline - t) / 1000000 + 1));
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (k = 0; k < n; k++) {
			switch (evs[k].data.u32) {
			case 0:
				on_cm_event();
				break;
			case 1:
				on_completions();
				break;
			case 2:
				start_due();
				break;
			case 3: {
				uint64_t exp;

				if (read(g.sfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
					die("timerfd read: %s", strerror(errno));
				sync_check();
				break;
			}
			}
		}
	}
	for (i = 0; i < g.nflows; i++)
		if (initiator(&g.flows[i]) == g.me && g.flows[i].failed)
			return 1;
	return 0;
}
