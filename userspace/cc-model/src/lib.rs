//! A small discrete-event model of N flows sharing one bottleneck port.
//!
//! It drives the real `cc_core` algorithms (the kernel module's own code),
//! and is a test harness and a teaching aid, not a large-scale simulator:
//!
//! ```text
//! flow i --(prop/2)--> [switch: FIFO queue, port rate C] --(prop/2)--> receiver
//!    ^                 marks CE (TCD or RED) at enqueue,                  |
//!    |                 stamps INT at dequeue                              |
//!    +------------------------- ACK per packet (prop) --------------------+
//! ```
//!
//! - Each sender NIC runs at `line_rate_bps` and honours the algorithm's
//!   pacing (`next_send_ns`) and window, and rxe's cap of 128 packets in flight.
//! - The switch's queue is unbounded (lossless). With `Emulation::pfc` each
//!   flow's ingress port pauses its sender, as on the testbed. The
//!   bottleneck port itself is paused only by `Config::port_pauses` (PFC
//!   from the hop after it); TCD marks UE as the testbed's marker does
//!   (`mark.bpf.c`): above the threshold while paused, within max(T_on) of
//!   a resume, or not grown by more than the threshold since it.
//! - `Emulation` also makes timers late, as the testbed's are under QEMU
//!   TCG, so that `rxecc model` can account for the gap between the two
//!   term by term.
//! - The receiver ACKs every packet, echoing CE; for DCQCN its NP sends a
//!   CNP (at most one per 50 us per flow) that takes the ACK's path.

use cc_core::acc::{Acc, AccKnobs};
use cc_core::cc::{AckEvent, CatchUp, CongestionControl, IntHop, IntInfo, IntWidths, LinkParams};
use cc_core::dcqcn::{Dcqcn, DcqcnKnobs, DcqcnNp};
use cc_core::fixed::{tx_time_ns, Q32};
use cc_core::hpcc::{Hpcc, HpccKnobs};
use cc_core::none::NoCc;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Which algorithm every flow runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// No congestion control.
    None,
    /// ACC with TCD marking.
    Acc,
    /// DCQCN with RED marking.
    Dcqcn,
    /// HPCC with INT stamping.
    Hpcc,
}

/// Switch marking of the bottleneck port.
#[derive(Clone, Copy, Debug)]
pub enum Marking {
    /// No marks.
    None,
    /// TCD: above the threshold, CE, or UE where the port's pauses
    /// (`Config::port_pauses`) may have built the queue.
    Tcd {
        threshold_bytes: u64,
        /// max(T_on): within this of a resume the port's queue is UE.
        max_ton_ns: u64,
    },
    /// RED: `p = pmax·(q − kmin)/(kmax − kmin)` between the thresholds, 1 above.
    Red {
        kmin: u64,
        kmax: u64,
        pmax_milli: u64,
    },
}

/// A scenario.
#[derive(Clone, Debug)]
pub struct Config {
    pub algo: Algo,
    pub flows: usize,
    /// Sender NIC rate and bottleneck port rate, b/s.
    pub line_rate_bps: u64,
    pub mtu: u32,
    /// Round-trip propagation delay, ns (half each way for data, all of it
    /// split evenly for the return of ACKs).
    pub prop_rtt_ns: u64,
    /// The algorithms' T.
    pub period_ns: u64,
    pub marking: Marking,
    /// Start time of each flow, ns (missing entries start at 0).
    pub starts_ns: Vec<u64>,
    pub duration_ns: u64,
    /// Sampling interval of the trace, ns.
    pub sample_ns: u64,
    /// Most packets a flow may have unacknowledged (rxe: 128).
    pub max_inflight_pkts: u64,
    /// Bottleneck port rate, b/s; 0: the line rate.
    pub port_rate_bps: u64,
    /// Each flow's size, bytes; missing or 0: it never ends.
    pub sizes_bytes: Vec<u64>,
    /// ACC's and DCQCN's knobs; None: `for_link` of the line.
    pub acc_knobs: Option<AccKnobs>,
    pub dcqcn_knobs: Option<DcqcnKnobs>,
    /// DCQCN's notification point: at most one CNP per flow this often.
    pub cnp_interval_ns: u64,
    /// rxe_cc's `pacing_catchup_us`, ns: a send that waited for its pacing
    /// time and went late counts as sent when it was due, so the flow
    /// catches up back to back, on at most this much (`pacing_time` in
    /// rxe_cc_main.rs). 0: off, the module's default for these algorithms.
    pub pacing_catchup_ns: u64,
    /// The testbed's emulation effects, all off by default.
    pub emulation: Emulation,
    /// Pauses of the bottleneck port by the hop after it, (start,
    /// duration) ns, in order: it sends nothing while one lasts (a packet
    /// on the wire finishes). Empty: always ON.
    pub port_pauses: Vec<(u64, u64)>,
}

/// What the testbed adds to the algorithms' network (docs/experiments.md,
/// "The model beside the testbed").
#[derive(Clone, Debug, Default)]
pub struct Emulation {
    /// How late period timers fire, ns: every period's end draws one of
    /// these (at random, from a fixed seed). Empty: on time.
    pub period_late_ns: Vec<u64>,
    /// How late the pacer fires, ns: every send that waits for its pacing
    /// time draws one of these (its own generator). Empty: on time.
    pub pacer_late_ns: Vec<u64>,
    /// PFC at the switch; None: no pauses.
    pub pfc: Option<Pfc>,
}

/// PFC with one ingress port per flow, as in the testbed's incast.
#[derive(Clone, Copy, Debug)]
pub struct Pfc {
    /// A flow's bytes queued in the switch above which its ingress port
    /// sends XOFF, and at or below which it sends XON.
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    /// From a threshold crossing to the sender stopping or going on (τ).
    pub delay_ns: u64,
    /// While paused, XOFF is sent again this often; every XOFF counts as a
    /// pause, as the testbed's `pfc_tx_xoff` counts them.
    pub refresh_ns: u64,
}

impl Config {
    /// Defaults after the ACC paper's simulation: 100 Gb/s, 1 KB packets,
    /// 10 us base RTT, T = 20 us (HPCC: T = 12 us, just above the RTT);
    /// TCD threshold 2 MTU; RED as the ACC paper sets DCQCN (5 KB, 200 KB).
    pub fn new(algo: Algo, flows: usize) -> Self {
        let line = 100_000_000_000;
        let mtu = 1024;
        let marking = match algo {
            Algo::Acc => Marking::Tcd {
                threshold_bytes: 2 * u64::from(mtu),
                // The TCD paper's simulation (digest).
                max_ton_ns: 24_000,
            },
            Algo::Dcqcn => Marking::Red {
                kmin: 5_000,
                kmax: 200_000,
                pmax_milli: 10,
            },
            _ => Marking::None,
        };
        Self {
            algo,
            flows,
            line_rate_bps: line,
            mtu,
            prop_rtt_ns: 10_000,
            period_ns: if algo == Algo::Hpcc { 12_000 } else { 20_000 },
            marking,
            starts_ns: Vec::new(),
            duration_ns: 20_000_000,
            sample_ns: 20_000,
            max_inflight_pkts: 128,
            port_rate_bps: 0,
            sizes_bytes: Vec::new(),
            acc_knobs: None,
            dcqcn_knobs: None,
            cnp_interval_ns: 50_000,
            port_pauses: Vec::new(),
            pacing_catchup_ns: 0,
            emulation: Emulation::default(),
        }
    }
}

/// One flow's algorithm.
pub enum Cc {
    None(NoCc),
    Acc(Acc),
    Dcqcn(Dcqcn),
    Hpcc(Hpcc),
}

impl Cc {
    fn get(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::None(c) => c,
            Cc::Acc(c) => c,
            Cc::Dcqcn(c) => c,
            Cc::Hpcc(c) => c,
        }
    }
}

/// A halt of one ACC flow.
#[derive(Clone, Debug)]
pub struct Halt {
    pub flow: usize,
    pub at_ns: u64,
    /// The algorithm's halt length, with its extension once applied.
    pub planned_ns: u64,
    /// Queue at the port when the halt began, bytes.
    pub queue_bytes: u64,
    /// Time from the halt to the flow's next packet.
    pub actual_ns: Option<u64>,
}

/// What a run records.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Sample times, ns.
    pub t_ns: Vec<u64>,
    /// Per sample, each flow's pacing rate (the algorithm's R), b/s.
    pub rate_bps: Vec<Vec<u64>>,
    /// Per sample, each flow's bytes sent during the sample interval.
    pub sent_bytes: Vec<Vec<u64>>,
    /// Per sample, queue bytes at the sample time.
    pub queue_bytes: Vec<u64>,
    /// Per sample, bytes the port sent during the interval.
    pub port_bytes: Vec<u64>,
    pub max_queue_bytes: u64,
    pub halts: Vec<Halt>,
    /// Time of the first CE mark, the first CE echo that reached a sender.
    pub first_mark_ns: Option<u64>,
    /// Each flow's rate after every event that changed it: (t, b/s).
    pub rate_steps: Vec<Vec<(u64, u64)>>,
    /// Per sample, each flow's bytes acknowledged so far.
    pub acked_bytes: Vec<Vec<u64>>,
    /// Per sample, the largest queue since the previous sample, bytes.
    pub queue_max_bytes: Vec<u64>,
    /// Per sample, the XOFF frames sent so far (with `Emulation::pfc`).
    pub pauses: Vec<u64>,
    /// When each flow had all its bytes acknowledged (sized flows).
    pub end_ns: Vec<Option<u64>>,
    /// Packets the port marked CE and UE.
    pub ce_marks: u64,
    pub ue_marks: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Sample,
    TrySend(usize),
    /// A period's end, due at `nominal` (it may run late).
    Timer {
        flow: usize,
        nominal: u64,
    },
    /// XOFF (true) or XON reaches a sender.
    Pause {
        flow: usize,
        on: bool,
    },
    /// XOFF again, if the ingress is still over XON (its generation).
    Refresh {
        flow: usize,
        generation: u64,
    },
    Arrive {
        flow: usize,
        bytes: u32,
        ce: bool,
    },
    Depart,
    Ack {
        flow: usize,
        bytes: u32,
        ce: bool,
        ue: bool,
        hop: (u64, u64, u64),
    },
    /// The hop after the port pauses it (true) or resumes it.
    PortPause(bool),
    Cnp(usize),
}

struct Flow {
    cc: Cc,
    np: DcqcnNp,
    start_ns: u64,
    nic_free_ns: u64,
    try_at: Option<u64>,
    inflight_bytes: u64,
    inflight_pkts: u64,
    psn: u32,
    sent_in_sample: u64,
    prev_int: Option<(u64, u64, u64)>,
    open_halt: Option<usize>,
    size: u64,
    sent: u64,
    acked: u64,
    /// Paused by its ingress port's XOFF.
    paused: bool,
    /// rxe_cc's pacing catch-up (cc_core's, the module's own code).
    catchup: CatchUp,
    /// This flow's bytes queued at the switch, and whether its ingress has
    /// sent XOFF (with the XOFF's generation, for refreshes).
    sw_bytes: u64,
    xoff: bool,
    xoff_gen: u64,
}

/// Runs `cfg` and returns its trace.
pub fn run(cfg: &Config) -> Trace {
    let link = LinkParams {
        line_rate_bps: cfg.line_rate_bps,
        mtu: cfg.mtu,
    };
    let mut flows: Vec<Flow> = (0..cfg.flows)
        .map(|i| {
            let start = cfg.starts_ns.get(i).copied().unwrap_or(0);
            let cc = match cfg.algo {
                Algo::None => Cc::None(NoCc::new(&link)),
                Algo::Acc => Cc::Acc(Acc::new(
                    &link,
                    cfg.acc_knobs
                        .unwrap_or_else(|| AccKnobs::for_link(&link, cfg.period_ns)),
                    start,
                )),
                Algo::Dcqcn => Cc::Dcqcn(Dcqcn::new(
                    &link,
                    cfg.dcqcn_knobs
                        .unwrap_or_else(|| DcqcnKnobs::for_link(&link)),
                    start,
                )),
                Algo::Hpcc => Cc::Hpcc(Hpcc::new(
                    &link,
                    HpccKnobs::for_link(&link, cfg.period_ns),
                    start,
                )),
            };
            Flow {
                cc,
                np: DcqcnNp::new(cfg.cnp_interval_ns),
                start_ns: start,
                nic_free_ns: start,
                try_at: None,
                inflight_bytes: 0,
                inflight_pkts: 0,
                psn: 0,
                sent_in_sample: 0,
                prev_int: None,
                open_halt: None,
                size: cfg.sizes_bytes.get(i).copied().unwrap_or(0),
                sent: 0,
                acked: 0,
                paused: false,
                catchup: CatchUp::default(),
                sw_bytes: 0,
                xoff: false,
                xoff_gen: 0,
            }
        })
        .collect();

    let mut q: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, t: u64, e: Ev| {
        seq += 1;
        q.push(Reverse((t, seq, e)));
    };
    for (i, f) in flows.iter_mut().enumerate() {
        push(&mut q, f.start_ns, Ev::TrySend(i));
        f.try_at = Some(f.start_ns);
        if let Some(p) = f.cc.get().timer_period_ns() {
            let nominal = f.start_ns + p;
            push(&mut q, nominal, Ev::Timer { flow: i, nominal });
        }
    }
    push(&mut q, cfg.sample_ns, Ev::Sample);
    for &(start, dur) in &cfg.port_pauses {
        push(&mut q, start, Ev::PortPause(true));
        push(&mut q, start.saturating_add(dur), Ev::PortPause(false));
    }
    // TCD's view of the port: paused now, and the last resume with the
    // queue then (forgotten once the queue falls to the threshold).
    let mut port_paused = false;
    let mut resumed: Option<(u64, u64)> = None;
    let port_rate = if cfg.port_rate_bps == 0 {
        cfg.line_rate_bps
    } else {
        cfg.port_rate_bps
    };
    let pkt_port = |b: u32| tx_time_ns(u64::from(b), port_rate);
    // Timer lateness, drawn from the samples by generators of its own, so
    // that turning it on leaves RED's marks the same sequence.
    let lateness = |samples: &[u64], seed: u64| {
        let samples = samples.to_vec();
        let mut rng = seed;
        move || -> u64 {
            if samples.is_empty() {
                return 0;
            }
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            samples[(rng % samples.len() as u64) as usize]
        }
    };
    let mut period_late = lateness(&cfg.emulation.period_late_ns, 0x9e37_79b9_7f4a_7c15);
    let mut pacer_late = lateness(&cfg.emulation.pacer_late_ns, 0xd1b5_4a32_d192_ed03);
    let mut pauses = 0u64;
    let mut trace = Trace {
        rate_steps: vec![Vec::new(); cfg.flows],
        end_ns: vec![None; cfg.flows],
        ..Trace::default()
    };
    // A flow's rate, into its steps when it changed.
    let note_rate = |trace: &mut Trace, i: usize, now: u64, r: u64| {
        let steps = &mut trace.rate_steps[i];
        if steps.last().is_none_or(|&(_, last)| last != r) {
            steps.push((now, r));
        }
    };

    let mut queue: VecDeque<(usize, u32, bool, bool)> = VecDeque::new();
    let mut queue_bytes = 0u64;
    let mut port_busy = false;
    let mut port_tx_total = 0u64;
    let mut port_in_sample = 0u64;
    let mut sample_max = 0u64;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let half = cfg.prop_rtt_ns / 2;
    let pkt_line = |b: u32| tx_time_ns(u64::from(b), cfg.line_rate_bps);

    while let Some(Reverse((now, _, ev))) = q.pop() {
        if now > cfg.duration_ns {
            break;
        }
        match ev {
            Ev::Sample => {
                trace.t_ns.push(now);
                trace.rate_bps.push(
                    flows
                        .iter_mut()
                        .map(|f| f.cc.get().pacing(now).rate_bps)
                        .collect(),
                );
                trace.sent_bytes.push(
                    flows
                        .iter_mut()
                        .map(|f| std::mem::take(&mut f.sent_in_sample))
                        .collect(),
                );
                trace
                    .acked_bytes
                    .push(flows.iter().map(|f| f.acked).collect());
                trace.pauses.push(pauses);
                trace.queue_bytes.push(queue_bytes);
                trace
                    .queue_max_bytes
                    .push(std::mem::replace(&mut sample_max, queue_bytes));
                trace.port_bytes.push(std::mem::take(&mut port_in_sample));
                let all_done = !flows.is_empty() && trace.end_ns.iter().all(Option::is_some);
                if all_done {
                    break;
                }
                push(&mut q, now + cfg.sample_ns, Ev::Sample);
            }
            Ev::TrySend(i) => {
                let f = &mut flows[i];
                if f.try_at != Some(now) {
                    continue; // superseded
                }
                f.try_at = None;
                if f.paused || (f.size > 0 && f.sent >= f.size) {
                    continue; // XON or nothing: a resume retries
                }
                let p = f.cc.get().pacing(now);
                let window_ok = p.window_bytes.is_none_or(|w| f.inflight_bytes < w)
                    && f.inflight_pkts < cfg.max_inflight_pkts;
                if !window_ok {
                    continue; // an ACK will retry
                }
                let at = now.max(p.next_send_ns).max(f.nic_free_ns);
                if at > now {
                    // Waiting for its pacing time takes a timer, which
                    // may fire late; the NIC's serialisation does not.
                    let at = if p.next_send_ns > now.max(f.nic_free_ns) {
                        f.catchup.hold();
                        at + pacer_late()
                    } else {
                        at
                    };
                    f.try_at = Some(at);
                    push(&mut q, at, Ev::TrySend(i));
                    continue;
                }
                let bytes = if f.size > 0 {
                    let left = f.size - f.sent;
                    cfg.mtu.min(u32::try_from(left).unwrap_or(u32::MAX))
                } else {
                    cfg.mtu
                };
                f.sent += u64::from(bytes);
                if f.sent == u64::from(bytes) {
                    // The flow's start, for a rate time series.
                    note_rate(&mut trace, i, now, p.rate_bps);
                }
                // As rxe_cc's pacing_time: a held send, and those right
                // behind it, count from when they were due.
                let (sent_at, _) = f
                    .catchup
                    .send_time(now, p.next_send_ns, cfg.pacing_catchup_ns);
                f.cc.get().on_send(sent_at, f.psn, bytes);
                let next = f.cc.get().pacing(now).next_send_ns;
                f.catchup.sent(now, next);
                f.psn = f.psn.wrapping_add(1);
                f.inflight_bytes += u64::from(bytes);
                f.inflight_pkts += 1;
                f.sent_in_sample += u64::from(bytes);
                f.nic_free_ns = now + pkt_line(bytes);
                if let Some(h) = f.open_halt.take() {
                    trace.halts[h].actual_ns = Some(now - trace.halts[h].at_ns);
                }
                push(
                    &mut q,
                    now + half,
                    Ev::Arrive {
                        flow: i,
                        bytes,
                        ce: false,
                    },
                );
                f.try_at = Some(f.nic_free_ns);
                push(&mut q, f.nic_free_ns, Ev::TrySend(i));
            }
            Ev::Timer { flow: i, nominal } => {
                let f = &mut flows[i];
                let halts_before = if let Cc::Acc(a) = &f.cc { a.halts() } else { 0 };
                f.cc.get().on_timer(now);
                if let Cc::Acc(a) = &f.cc {
                    if a.halts() > halts_before {
                        trace.halts.push(Halt {
                            flow: i,
                            at_ns: now,
                            planned_ns: a.last_halt_ns(),
                            queue_bytes,
                            actual_ns: None,
                        });
                        f.open_halt = Some(trace.halts.len() - 1);
                    } else if let Some(h) = f.open_halt {
                        trace.halts[h].planned_ns = a.last_halt_ns();
                    }
                }
                let r = f.cc.get().pacing(now).rate_bps;
                if let Some(p) = f.cc.get().timer_period_ns() {
                    // The kernel's period timer keeps its grid: a fire
                    // later than a period covers the periods it missed.
                    let mut next = nominal + p.max(1);
                    while next <= now {
                        next += p.max(1);
                    }
                    let done = f.size > 0 && f.acked >= f.size;
                    if !done {
                        push(
                            &mut q,
                            next + period_late(),
                            Ev::Timer {
                                flow: i,
                                nominal: next,
                            },
                        );
                    }
                }
                note_rate(&mut trace, i, now, r);
                let f = &mut flows[i];
                if f.try_at.is_none() {
                    f.try_at = Some(now);
                    push(&mut q, now, Ev::TrySend(i));
                }
            }
            Ev::Arrive { flow, bytes, .. } => {
                let mut ue = false;
                let ce = match cfg.marking {
                    Marking::None => false,
                    Marking::Tcd {
                        threshold_bytes,
                        max_ton_ns,
                    } => {
                        if queue_bytes <= threshold_bytes {
                            resumed = None;
                            false
                        } else {
                            // mark.bpf.c's tcd_mark(), without the
                            // emulation's excess and lag.
                            ue = port_paused
                                || resumed.is_some_and(|(at, q0)| {
                                    now.saturating_sub(at) < max_ton_ns
                                        || queue_bytes.saturating_sub(q0) <= threshold_bytes
                                });
                            !ue
                        }
                    }
                    Marking::Red {
                        kmin,
                        kmax,
                        pmax_milli,
                    } => {
                        if queue_bytes <= kmin {
                            false
                        } else if queue_bytes > kmax {
                            true
                        } else {
                            // xorshift: a fixed, reproducible sequence
                            rng ^= rng << 13;
                            rng ^= rng >> 7;
                            rng ^= rng << 17;
                            let p_milli = pmax_milli * (queue_bytes - kmin) / (kmax - kmin);
                            rng % 1000 < p_milli
                        }
                    }
                };
                trace.ce_marks += u64::from(ce);
                trace.ue_marks += u64::from(ue);
                queue.push_back((flow, bytes, ce, ue));
                queue_bytes += u64::from(bytes);
                trace.max_queue_bytes = trace.max_queue_bytes.max(queue_bytes);
                sample_max = sample_max.max(queue_bytes);
                if let Some(pfc) = cfg.emulation.pfc {
                    let f = &mut flows[flow];
                    f.sw_bytes += u64::from(bytes);
                    if !f.xoff && f.sw_bytes > pfc.xoff_bytes {
                        f.xoff = true;
                        f.xoff_gen += 1;
                        pauses += 1;
                        push(&mut q, now + pfc.delay_ns, Ev::Pause { flow, on: true });
                        let generation = f.xoff_gen;
                        push(
                            &mut q,
                            now + pfc.refresh_ns.max(1),
                            Ev::Refresh { flow, generation },
                        );
                    }
                }
                if !port_busy && !port_paused {
                    port_busy = true;
                    push(&mut q, now + pkt_port(bytes), Ev::Depart);
                }
            }
            Ev::PortPause(on) => {
                port_paused = on;
                if !on {
                    resumed = Some((now, queue_bytes));
                    if !port_busy {
                        if let Some(&(_, b, _, _)) = queue.front() {
                            port_busy = true;
                            push(&mut q, now + pkt_port(b), Ev::Depart);
                        }
                    }
                }
            }
            Ev::Depart => {
                let (flow, bytes, ce, ue) =
                    queue.pop_front().expect("departure from an empty queue");
                queue_bytes -= u64::from(bytes);
                if let Some(pfc) = cfg.emulation.pfc {
                    let f = &mut flows[flow];
                    f.sw_bytes -= u64::from(bytes);
                    if f.xoff && f.sw_bytes <= pfc.xon_bytes {
                        f.xoff = false;
                        push(&mut q, now + pfc.delay_ns, Ev::Pause { flow, on: false });
                    }
                }
                port_tx_total += u64::from(bytes);
                port_in_sample += u64::from(bytes);
                if ce && trace.first_mark_ns.is_none() {
                    trace.first_mark_ns = Some(now);
                }
                // INT at dequeue: time, bytes sent, queue after this packet.
                let hop = (now, port_tx_total, queue_bytes);
                // Receiver gets it after half the RTT and ACKs right away.
                let ack_at = now + half + half;
                push(
                    &mut q,
                    ack_at,
                    Ev::Ack {
                        flow,
                        bytes,
                        ce,
                        ue,
                        hop,
                    },
                );
                if ce && cfg.algo == Algo::Dcqcn && flows[flow].np.on_ce(now + half) {
                    push(&mut q, ack_at, Ev::Cnp(flow));
                }
                match queue.front() {
                    Some(&(_, b, _, _)) if !port_paused => {
                        push(&mut q, now + pkt_port(b), Ev::Depart)
                    }
                    _ => port_busy = false,
                }
            }
            Ev::Ack {
                flow,
                bytes,
                ce,
                ue,
                hop,
            } => {
                let f = &mut flows[flow];
                f.inflight_bytes = f.inflight_bytes.saturating_sub(u64::from(bytes));
                f.inflight_pkts = f.inflight_pkts.saturating_sub(1);
                f.acked += u64::from(bytes);
                if f.size > 0 && f.acked >= f.size && trace.end_ns[flow].is_none() {
                    trace.end_ns[flow] = Some(now);
                }
                let hops = [IntHop {
                    b_bps: port_rate,
                    ts_ns: hop.0,
                    tx_bytes: hop.1,
                    qlen: hop.2,
                }];
                let int = (cfg.algo == Algo::Hpcc).then_some(IntInfo {
                    hops: &hops,
                    path_id: 1,
                    widths: IntWidths::FULL,
                    n_flows: 0,
                    port_flows: 0,
                    qlen_rate: 0,
                    lu: Q32::ZERO,
                });
                f.prev_int = Some(hop);
                f.cc.get().on_ack(&AckEvent {
                    now_ns: now,
                    psn: f.psn,
                    acked_bytes: bytes,
                    acked_psns: 1,
                    ce,
                    ce_pkts: u32::from(ce),
                    ue,
                    nak: false,
                    int,
                });
                let r = f.cc.get().pacing(now).rate_bps;
                if f.try_at.is_none() {
                    f.try_at = Some(now);
                    push(&mut q, now, Ev::TrySend(flow));
                }
                note_rate(&mut trace, flow, now, r);
            }
            Ev::Cnp(i) => {
                flows[i].cc.get().on_cnp(now);
                let r = flows[i].cc.get().pacing(now).rate_bps;
                note_rate(&mut trace, i, now, r);
            }
            Ev::Pause { flow, on } => {
                let f = &mut flows[flow];
                f.paused = on;
                if !on && f.try_at.is_none() {
                    f.try_at = Some(now);
                    push(&mut q, now, Ev::TrySend(flow));
                }
            }
            Ev::Refresh { flow, generation } => {
                let f = &flows[flow];
                if let Some(pfc) = cfg.emulation.pfc {
                    if f.xoff && f.xoff_gen == generation {
                        pauses += 1;
                        push(
                            &mut q,
                            now + pfc.refresh_ns.max(1),
                            Ev::Refresh { flow, generation },
                        );
                    }
                }
            }
        }
    }
    trace
}

/// Jain's fairness index: 1 when all equal, 1/n when one has everything.
pub fn jain(x: &[u64]) -> f64 {
    let s: f64 = x.iter().map(|&v| v as f64).sum();
    let sq: f64 = x.iter().map(|&v| (v as f64) * (v as f64)).sum();
    if sq == 0.0 {
        return 0.0;
    }
    s * s / (x.len() as f64 * sq)
}

impl Trace {
    /// Sum of each flow's bytes sent over samples `[from, to)`.
    pub fn sent_between(&self, from: usize, to: usize) -> Vec<u64> {
        let n = self.sent_bytes.first().map_or(0, Vec::len);
        let mut s = vec![0u64; n];
        for row in &self.sent_bytes[from.min(self.sent_bytes.len())..to.min(self.sent_bytes.len())]
        {
            for (a, b) in s.iter_mut().zip(row) {
                *a += b;
            }
        }
        s
    }

    /// Jain's index of throughput over each window of `w` samples.
    pub fn windowed_jain(&self, w: usize) -> Vec<f64> {
        (0..self.sent_bytes.len().saturating_sub(w - 1))
            .map(|i| jain(&self.sent_between(i, i + w)))
            .collect()
    }

    /// First sample index from which every later `w`-sample window has a
    /// throughput Jain index of at least `target`: the convergence point.
    pub fn converged_at(&self, w: usize, target: f64) -> Option<usize> {
        let j = self.windowed_jain(w);
        let last_bad = j.iter().rposition(|&x| x < target);
        match last_bad {
            None => Some(0),
            Some(i) if i + 1 < j.len() => Some(i + 1),
            _ => None,
        }
    }
}

/// First sample starting a window of `w` samples in which every flow's
/// throughput is within `tol` (relative) of `target_bps`.
pub fn first_fair_window(
    t: &Trace,
    w: usize,
    sample_ns: u64,
    target_bps: u64,
    tol: f64,
) -> Option<usize> {
    let want = target_bps as f64 * (w as u64 * sample_ns) as f64 / 8e9;
    (0..t.sent_bytes.len().saturating_sub(w)).find(|&i| {
        t.sent_between(i, i + w)
            .iter()
            .all(|&b| (b as f64 - want).abs() <= tol * want)
    })
}
