//! Reading a port's state: counter snapshots, the queue-length histogram
//! over time, PFC events from the ring buffer, ingress and buffer
//! accounting.

use super::*;
use port_skel::types::{ingress_acct, port_state, rxecc_qlen_hist, switch_buf};

/// A consistent snapshot of a port's counters (each map read under its lock).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PortStats {
    pub dev: String,
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    pub drops: u64,
    pub qlen_pkts: u64,
    pub qlen_bytes: u64,
    pub max_qlen_bytes: u64,
    pub red_above: u64,
    pub red_above_marked: u64,
    pub red_below: u64,
    pub red_between: u64,
    pub red_between_marked: u64,
    pub tcd_ce: u64,
    pub tcd_ue: u64,
    pub tcd_none: u64,
    pub pfc_rx_xoff: u64,
    pub pfc_rx_xon: u64,
    /// PFC frames ignored as older than one already obeyed.
    pub pfc_rx_stale: u64,
    /// MAC control frames dropped as malformed, and PFC frames for classes
    /// the port does not carry.
    pub pfc_rx_bad: u64,
    pub pfc_rx_other: u64,
    pub pause_expired: u64,
    pub paused_ns: u64,
    pub paused: u64,
    pub tau_n: u64,
    pub tau_mean_ns: u64,
    pub tau_max_ns: u64,
    /// Now minus the peer's stamp, averaged over every sample, those
    /// whose stamp was ahead of this clock included: tau plus the peer's
    /// clock offset, when the peer is another machine (docs/vms.md).
    pub tau_raw_mean_ns: i64,
    /// Samples whose stamp was ahead of this clock (not in tau_n).
    pub tau_early_n: u64,
    pub ctl_pkts: u64,
    pub stalls: u64,
    pub stall_ns: u64,
    /// Link time lost to late dequeues beyond the pacer's catch-up credit,
    /// while a packet waited free to go: the port ran this much below its
    /// rate.
    pub late_ns: u64,
    /// Bytes of the queue that an ideal link of the port's rate would
    /// have sent by now (late_ns while they waited); TCD discounts them.
    pub lag_bytes: u64,
    /// Releases more than one packet ahead of an ideal link of the port's
    /// rate fed with the same releases (the physical invariant; 0 unless
    /// the pacing credit is larger than a packet), and the most time
    /// beyond that packet.
    pub rate_violations: u64,
    pub rate_violation_max_ns: u64,
    /// Fault injection at this port's ingress (`rxecc port inject`):
    /// packets dropped (never counted in `drops`), ECN-marked, and with
    /// their ICRC corrupted.
    pub injected_drops: u64,
    pub injected_marks: u64,
    pub injected_corrupts: u64,
    /// Packets a rule at this ingress duplicated, delayed and reordered.
    pub injected_dups: u64,
    pub injected_delays: u64,
    pub injected_reorders: u64,
    /// Packets this port's egress held for a delay or a reorder.
    pub held_pkts: u64,
    /// ACKs, NAKs and CNPs sent out of the priority class (`ack_priority`).
    pub prio_pkts: u64,
    pub prio_bytes: u64,
    /// Arrivals from the link peer faster than the link's rate allows (an
    /// upstream catch-up burst), and TCD decisions re-based on them.
    pub compressed_pkts: u64,
    pub tcd_compressed: u64,
    /// INT records this port's ingress wrote, hops that found the shim
    /// full, and flagged packets it left alone as not ours.
    pub int_stamped: u64,
    pub int_overflow: u64,
    pub int_bad: u64,
    /// ICC: ACKs left without feedback (queue draining at low utilisation).
    pub int_quiet: u64,
    /// PFC events (pfc.txt) the shared ring buffer had no room for.
    pub events_lost: u64,
    /// GFC obeyed: the stage now (rate C >> stage), frames received, the
    /// highest stage, and the time spent below the full rate.
    pub gfc_stage: u64,
    pub gfc_rx: u64,
    pub gfc_max_stage: u64,
    pub gfc_limited_ns: u64,
    /// Time-based GFC: dequeues that found no credit left.
    pub gfc_credit_waits: u64,
    /// Time-based GFC: packets sent below the full rate, the credit at
    /// the last advertisement being under the span that maps to it.
    pub gfc_credit_slowed: u64,
    /// Time-based GFC: the rate the last advertisement set, held until the
    /// next (b/s).
    pub gfc_rate_bps: u64,
    /// As an ingress port of a switch (absent on host NICs).
    pub ingress: Option<IngressStats>,
}

/// A switch port's ingress accounting and the PFC frames it sent.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct IngressStats {
    pub switch_id: u32,
    pub bytes: u64,
    pub max_bytes: u64,
    pub pkts: u64,
    pub xoff_active: u64,
    pub pfc_tx_xoff: u64,
    pub pfc_tx_xon: u64,
    pub pfc_tx_refresh: u64,
    pub pfc_tx_failed: u64,
    /// Releases of more bytes than the account held (clamped at 0).
    pub underflows: u64,
    /// GFC sent: the stage last sent, frames, the highest stage sent.
    pub gfc_stage: u64,
    pub gfc_tx: u64,
    pub gfc_max_stage: u64,
}

/// A switch's shared buffer.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct BufferStats {
    pub switch_id: u32,
    pub used_bytes: u64,
    pub max_used_bytes: u64,
    pub drops: u64,
    /// Releases of more bytes than the buffer held (clamped at 0).
    pub underflows: u64,
}

/// Reads `dev`'s counters, consistently (BPF_F_LOCK).
pub fn port_stats(dev: &str) -> Result<PortStats> {
    let (map, key) = port_slot(dev, "port_state")?;
    let bytes = map
        .lookup(&key, MapFlags::LOCK)
        .context("reading the port's counters")?
        .context("the port's counters are missing")?;
    let s = from_bytes::<port_state>(&bytes, "port_state")?.stats;
    let ingress = match std::fs::read_to_string(format!("{IFINDEX_DIR}/{dev}")) {
        Ok(idx) => ingress_stats(idx.trim().parse().unwrap_or(0))?,
        Err(_) => None,
    };
    Ok(PortStats {
        dev: dev.to_string(),
        enq_pkts: s.enq_pkts,
        enq_bytes: s.enq_bytes,
        deq_pkts: s.deq_pkts,
        deq_bytes: s.deq_bytes,
        drops: s.drops,
        qlen_pkts: s.qlen_pkts,
        qlen_bytes: s.qlen_bytes,
        max_qlen_bytes: s.max_qlen_bytes,
        red_above: s.red_above,
        red_above_marked: s.red_above_marked,
        red_below: s.red_below,
        red_between: s.red_between,
        red_between_marked: s.red_between_marked,
        tcd_ce: s.tcd_ce,
        tcd_ue: s.tcd_ue,
        tcd_none: s.tcd_none,
        pfc_rx_xoff: s.pfc_rx_xoff,
        pfc_rx_xon: s.pfc_rx_xon,
        pfc_rx_stale: s.pfc_rx_stale,
        pfc_rx_bad: s.pfc_rx_bad,
        pfc_rx_other: s.pfc_rx_other,
        pause_expired: s.pause_expired,
        paused_ns: s.paused_ns,
        paused: s.paused,
        tau_n: s.tau_n,
        tau_mean_ns: s.tau_sum_ns.checked_div(s.tau_n).unwrap_or(0),
        tau_max_ns: s.tau_max_ns,
        tau_raw_mean_ns: {
            let n = i128::from(s.tau_n) + i128::from(s.tau_early_n);
            let sum = i128::from(s.tau_sum_ns) - i128::from(s.tau_early_sum_ns);
            i64::try_from(sum.checked_div(n).unwrap_or(0)).unwrap_or(0)
        },
        tau_early_n: s.tau_early_n,
        ctl_pkts: s.ctl_pkts,
        stalls: s.stalls,
        stall_ns: s.stall_ns,
        late_ns: s.late_ns,
        lag_bytes: s.lag_bytes,
        rate_violations: s.rate_viol,
        rate_violation_max_ns: s.rate_viol_max_ns,
        injected_drops: s.inj_drops,
        injected_marks: s.inj_marks,
        injected_corrupts: s.inj_corrupts,
        injected_dups: s.inj_dups,
        injected_delays: s.inj_delays,
        injected_reorders: s.inj_reorders,
        held_pkts: s.held_pkts,
        prio_pkts: s.prio_pkts,
        prio_bytes: s.prio_bytes,
        compressed_pkts: s.compressed_pkts,
        tcd_compressed: s.tcd_compressed,
        int_stamped: s.int_stamped,
        int_overflow: s.int_overflow,
        int_bad: s.int_bad,
        int_quiet: s.int_quiet,
        events_lost: s.events_lost,
        gfc_stage: s.gfc_stage,
        gfc_rx: s.gfc_rx,
        gfc_max_stage: s.gfc_max_stage,
        gfc_limited_ns: s.gfc_limited_ns,
        gfc_credit_waits: s.gfc_credit_waits,
        gfc_credit_slowed: s.gfc_credit_slowed,
        gfc_rate_bps: s.gfc_rate_bps,
        ingress,
    })
}

/// Reads the egress queue histograms of a set of ports (port.h's
/// `rxecc_qlen_hist`): nanoseconds each queue spent at each length, in
/// 1000-byte bins, all up to one time.
pub struct QlenReader {
    map: MapHandle,
    keys: Vec<[u8; 4]>,
}

impl QlenReader {
    /// The ports must exist now; their slots are resolved once, so that a
    /// read is one lookup per port and nothing else.
    pub fn new(devs: &[String]) -> Result<Self> {
        let mut keys = Vec::new();
        for dev in devs {
            keys.push(port_slot(dev, "qlen_hist")?.1);
        }
        Ok(QlenReader {
            map: pinned(&obj_pin("qlen_hist"), "the ports' programs are not loaded")?,
            keys,
        })
    }

    /// Every port's histogram up to one CLOCK_MONOTONIC time, read before
    /// the ports, and returned with it; bins past a port's last non-zero
    /// one are cut. Each locked lookup is one snapshot of the bins, the
    /// length and time of the last change, and the log of the last
    /// intervals given (port.h). A port that changed after that time,
    /// while the ports were being read (a preempted read takes tens of
    /// ms under TCG), has the intervals after it taken back out; if more
    /// than the log holds came after it, every port is read again, up to
    /// 20 times, after which such a port counts to its last change.
    pub fn read(&self) -> Result<QlenSnapshot> {
        let mut tries = 0;
        loop {
            tries += 1;
            let now_ns = crate::clock::monotonic_ns();
            let mut raws = Vec::with_capacity(self.keys.len());
            for key in &self.keys {
                raws.push(
                    self.map
                        .lookup(key, MapFlags::LOCK)
                        .context("reading a queue-length histogram")?
                        .context("a queue-length histogram is missing")?,
                );
            }
            let window_ns = crate::clock::monotonic_ns().saturating_sub(now_ns);
            let mut ports = Vec::with_capacity(raws.len());
            let (mut undone, mut exact) = (0, true);
            for raw in &raws {
                let h: rxecc_qlen_hist = from_bytes(raw, "qlen_hist")?;
                let log: Vec<(u64, u32)> = h.log.iter().map(|iv| (iv.start_ns, iv.bin)).collect();
                let at = qlen_bins_at(&h.ns, h.qlen_bytes, h.since_ns, &log, h.logged, now_ns);
                undone = undone.max(at.undone);
                exact &= at.exact;
                ports.push(at.bins);
            }
            if !exact && tries < 20 {
                continue;
            }
            return Ok(QlenSnapshot {
                now_ns,
                window_ns,
                undone,
                exact,
                tries,
                ports,
            });
        }
    }
}

/// [`qlen_bins_at`]'s answer.
#[derive(Debug, PartialEq, Eq)]
struct BinsAt {
    bins: Vec<u64>,
    /// Intervals taken back out.
    undone: usize,
    /// false: the log did not reach back to the time.
    exact: bool,
}

/// A histogram snapshot's bins up to `t_ns`. The snapshot's bins hold the
/// time up to `since_ns`; `log` is the ring of the last intervals given
/// ((start, bin); the one at `(logged - 1) % len` the newest, ending at
/// `since_ns`, each older one ending where the next began). If `since_ns`
/// is not after `t_ns`, the time from it to `t_ns` is owed to the bin of
/// `qlen_bytes` (below 0 for an instant, port.h, counts as empty; the
/// last bin takes the rest). Otherwise the intervals after `t_ns` are
/// taken back out, newest first. Bins past the last non-zero one are cut.
fn qlen_bins_at(
    ns: &[u64],
    qlen_bytes: i64,
    since_ns: u64,
    log: &[(u64, u32)],
    logged: u64,
    t_ns: u64,
) -> BinsAt {
    let mut bins = ns.to_vec();
    let last = bins.len().saturating_sub(1);
    let (mut undone, mut exact) = (0, true);
    if since_ns <= t_ns {
        let cur = usize::try_from(qlen_bytes.max(0) / 1000).map_or(last, |b| b.min(last));
        if let Some(b) = bins.get_mut(cur) {
            *b = b.saturating_add(t_ns - since_ns);
        }
    } else {
        let mut end = since_ns;
        let logged = usize::try_from(logged).unwrap_or(usize::MAX);
        exact = false;
        // Newest first: entry logged - 1, logged - 2, ... of the ring.
        for k in 1..=logged.min(log.len()) {
            let Some(&(start, bin)) = log.get((logged - k) % log.len()) else {
                break;
            };
            let bin = usize::try_from(bin).map_or(last, |b| b.min(last));
            if let Some(b) = bins.get_mut(bin) {
                *b = b.saturating_sub(end.saturating_sub(start.max(t_ns)));
            }
            undone += 1;
            if start <= t_ns {
                exact = true;
                break;
            }
            end = start;
        }
    }
    while bins.len() > 1 && bins.last() == Some(&0) {
        bins.pop();
    }
    BinsAt {
        bins,
        undone,
        exact,
    }
}

/// [`QlenReader::read`]: per port, ns at each length up to `now_ns`. The
/// reads took `window_ns`, the last of `tries`; at most `undone` intervals
/// of one port were taken back out; `exact` is false if a port's log did
/// not reach back to `now_ns` even at the last try.
pub struct QlenSnapshot {
    pub now_ns: u64,
    pub window_ns: u64,
    pub undone: usize,
    pub exact: bool,
    pub tries: u32,
    pub ports: Vec<Vec<u64>>,
}

/// Bins of [`QlenReader`] (`RXECC_QLEN_BINS`).
pub const QLEN_BINS: u32 = 2048;

/// A PFC frame a port received (port.h's `struct rxecc_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEvent {
    pub t_ns: u64,
    pub port_id: u32,
    /// true: a pause time; false: 0, a resume.
    pub pause: bool,
    pub quanta: u16,
}

impl PfcEvent {
    fn parse(b: &[u8]) -> Option<Self> {
        Some(PfcEvent {
            t_ns: u64::from_ne_bytes(b.get(0..8)?.try_into().ok()?),
            port_id: u32::from_ne_bytes(b.get(8..12)?.try_into().ok()?),
            pause: u16::from_ne_bytes(b.get(12..14)?.try_into().ok()?) == 1,
            quanta: u16::from_ne_bytes(b.get(14..16)?.try_into().ok()?),
        })
    }
}

/// Collects the PFC frames every port receives from the shared ring
/// buffer, on a thread of its own, until [`PfcEvents::stop`].
pub struct PfcEvents {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Result<Vec<PfcEvent>>>,
}

impl PfcEvents {
    /// Starts reading; events already in the buffer (from before) are
    /// dropped.
    pub fn start() -> Result<Self> {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        let map = MapHandle::from_pinned_path(format!("{PIN_ROOT}/events"))
            .context("no PFC event buffer (is a topology up?)")?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || -> Result<Vec<PfcEvent>> {
            let got = Arc::new(Mutex::new(Vec::new()));
            let sink = got.clone();
            let mut b = libbpf_rs::RingBufferBuilder::new();
            b.add(&map, move |data: &[u8]| {
                if let (Some(e), Ok(mut v)) = (PfcEvent::parse(data), sink.lock()) {
                    v.push(e);
                }
                0
            })
            .context("reading the PFC event buffer")?;
            let rb = b.build().context("reading the PFC event buffer")?;
            rb.consume().context("draining the PFC event buffer")?;
            if let Ok(mut v) = got.lock() {
                v.clear();
            }
            while !flag.load(Ordering::Relaxed) {
                // A signal to the process (a child's end) interrupts the
                // wait: nothing is lost, the next poll reads on.
                match rb.poll(std::time::Duration::from_millis(100)) {
                    Err(e) if e.kind() == libbpf_rs::ErrorKind::Interrupted => {}
                    r => r.context("polling the PFC event buffer")?,
                }
            }
            rb.consume().context("draining the PFC event buffer")?;
            let v = got
                .lock()
                .map(|mut v| std::mem::take(&mut *v))
                .unwrap_or_default();
            Ok(v)
        });
        Ok(PfcEvents { stop, thread })
    }

    /// Stops reading and returns what was read, in time order.
    pub fn stop(self) -> Result<Vec<PfcEvent>> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut v = self
            .thread
            .join()
            .map_err(|_| anyhow::anyhow!("the PFC event reader panicked"))??;
        v.sort_by_key(|e| e.t_ns);
        Ok(v)
    }
}

pub(super) fn ingress_stats(idx: u32) -> Result<Option<IngressStats>> {
    let (Ok(acct), Ok(cfg)) = (
        MapHandle::from_pinned_path(format!("{PIN_ROOT}/ingress_acct")),
        MapHandle::from_pinned_path(format!("{PIN_ROOT}/ingress_cfg")),
    ) else {
        return Ok(None);
    };
    let key = idx.to_ne_bytes();
    let (Some(a), Some(c)) = (
        acct.lookup(&key, MapFlags::LOCK)?,
        cfg.lookup(&key, MapFlags::ANY)?,
    ) else {
        return Ok(None);
    };
    let a: ingress_acct = from_bytes(&a, "ingress_acct")?;
    let c: ingress_cfg = from_bytes(&c, "ingress_cfg")?;
    Ok(Some(IngressStats {
        switch_id: c.switch_id,
        bytes: a.bytes,
        max_bytes: a.max_bytes,
        pkts: a.pkts,
        xoff_active: a.xoff_active,
        pfc_tx_xoff: a.pfc_tx_xoff,
        pfc_tx_xon: a.pfc_tx_xon,
        pfc_tx_refresh: a.pfc_tx_refresh,
        pfc_tx_failed: a.pfc_tx_failed,
        underflows: a.underflows,
        gfc_stage: a.gfc_stage,
        gfc_tx: a.gfc_tx,
        gfc_max_stage: a.gfc_max_stage,
    }))
}

/// Reads switch `id`'s shared-buffer counters.
pub fn buffer_stats(id: u32) -> Result<BufferStats> {
    let map = pinned(
        &format!("{PIN_ROOT}/switch_buf"),
        "no switch port is attached",
    )?;
    let b = map
        .lookup(&id.to_ne_bytes(), MapFlags::LOCK)?
        .context("switch id out of range")?;
    let b: switch_buf = from_bytes(&b, "switch_buf")?;
    Ok(BufferStats {
        switch_id: id,
        used_bytes: b.used_bytes,
        max_used_bytes: b.max_used_bytes,
        drops: b.drops,
        underflows: b.underflows,
    })
}

#[cfg(test)]
mod tests {
    use super::qlen_bins_at;

    #[test]
    fn qlen_bins_owe_the_time_since_the_last_change_to_its_length() {
        let at = |ns: &[u64], q, since, t| qlen_bins_at(ns, q, since, &[(0, 0); 4], 0, t).bins;
        // 2500 B queued since t=100: bin 2 gets t - since.
        assert_eq!(at(&[5, 0, 7, 0, 0], 2500, 100, 160), vec![5, 0, 67]);
        // A dequeue's delta before its enqueue's: below 0 is empty.
        assert_eq!(at(&[5, 0, 0], -1500, 100, 130), vec![35]);
        // Longer than the bins: the last bin.
        assert_eq!(at(&[1, 1, 1], 9_000_000, 0, 10), vec![1, 1, 11]);
        // An idle, empty port keeps one bin.
        assert_eq!(at(&[0, 0], 0, 0, 0), vec![0]);
    }

    #[test]
    fn qlen_bins_take_back_the_intervals_after_the_time() {
        // Intervals [0, 100) at bin 0, [100, 150) at bin 1, [150, 190) at
        // bin 2; the last change at 190. A log of 4, 3 given, in slots 0-2.
        let ns = [100, 50, 40];
        let log = [(0, 0), (100, 1), (150, 2), (0, 0)];
        let got = qlen_bins_at(&ns, 0, 190, &log, 3, 120);
        assert_eq!(got.bins, vec![100, 20]);
        assert_eq!((got.undone, got.exact), (2, true));
        // The same, the ring wrapped: 5 given, the newest in slot 0.
        let ring = [(150, 2), (7, 7), (0, 0), (100, 1)];
        let got = qlen_bins_at(&ns, 0, 190, &ring, 5, 120);
        assert_eq!(got.bins, vec![100, 20]);
        // At an interval's start: all of it goes.
        assert_eq!(qlen_bins_at(&ns, 0, 190, &ring, 5, 150).bins, vec![100, 50]);
        // Further back than the log reaches (2 given): not exact.
        let got = qlen_bins_at(&ns, 0, 190, &[(100, 1), (150, 2), (0, 0), (0, 0)], 2, 50);
        assert_eq!((got.undone, got.exact), (2, false));
    }
}
