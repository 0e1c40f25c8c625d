//! `rxecc record`: time series of a run, for `rxecc report` and plots.
//!
//! Two sources, on one clock (CLOCK_MONOTONIC, which is the kernel's
//! `ktime_get_ns()` and so the clock of every rxe_cc hook):
//! - rxe_cc's tracepoints (`rxe_cc_rate`, `rxe_cc_halt_start`,
//!   `rxe_cc_halt_end`), in binary through a BPF ring buffer
//!   (`bpf/record.bpf.c` on their raw tracepoints), so that tracefs and its
//!   global buffer are left alone. They give each QP's rate at every
//!   control period and every halt.
//! - samples, every `interval`, of each switch port's counters (queue
//!   length, PFC) and each live QP's debugfs counters (bytes sent and
//!   acked, which give throughput for every algorithm, `none` included).
//!
//! - with a topology of several switches up, deadlocks: the samples of
//!   its switch-to-switch ports, `deadlock_hold` apart, judged as
//!   `rxecc deadlock` judges them.
//!
//! Output, in the directory given: `rates.csv`, `halts.csv`, `ports.csv`,
//! `qps.csv`, `deadlocks.csv` and `record.json` (what was recorded, and
//! what was lost).

use crate::clock::monotonic_ns;
use crate::{switch, testbed::deadlock, testbed::stats};
use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) mod record_skel {
    include!(concat!(env!("OUT_DIR"), "/record.skel.rs"));
}

pub const RATES_HEADER: &str = "t_ns,qp,alg,state,rate_bps,tx_bytes,acked_bytes";
pub const HALTS_HEADER: &str = "t_ns,qp,event,halted_ns,planned_ns";
pub const PORTS_HEADER: &str =
    "t_ns,dev,qlen_bytes,max_qlen_bytes,enq_bytes,deq_bytes,drops,pfc_rx_xoff,paused_ns,ingress_bytes,pfc_tx_xoff";
pub const QPS_HEADER: &str =
    "t_ns,qp,cc,rate_bps,tx_bytes,acked_bytes,halts,halt_actual_ns,window_bytes";
pub const DEADLOCKS_HEADER: &str = "t_ns,event,cycle,qlen_bytes";

// The rows of the four CSV files, written and read (by `rxecc report`)
// through the csv crate by column name; the field order is the header's.

/// rates.csv: a rate change of one QP (a trace event).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateRow {
    pub t_ns: u64,
    pub qp: String,
    pub alg: u64,
    pub state: u64,
    pub rate_bps: u64,
    pub tx_bytes: u64,
    pub acked_bytes: u64,
}

/// halts.csv: a halt's start (halted_ns 0) or end (trace events).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HaltRow {
    pub t_ns: u64,
    pub qp: String,
    /// "start" or "end".
    pub event: String,
    pub halted_ns: u64,
    pub planned_ns: u64,
}

/// ports.csv: one switch port, sampled.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PortRow {
    pub t_ns: u64,
    pub dev: String,
    pub qlen_bytes: u64,
    pub max_qlen_bytes: u64,
    pub enq_bytes: u64,
    pub deq_bytes: u64,
    pub drops: u64,
    pub pfc_rx_xoff: u64,
    pub paused_ns: u64,
    pub ingress_bytes: u64,
    pub pfc_tx_xoff: u64,
}

/// qps.csv: one QP's rxe_cc state, sampled.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QpRow {
    pub t_ns: u64,
    pub qp: String,
    pub cc: String,
    pub rate_bps: u64,
    pub tx_bytes: u64,
    pub acked_bytes: u64,
    pub halts: u64,
    pub halt_actual_ns: u64,
    /// Absent from recordings made before HPCC.
    #[serde(default)]
    pub window_bytes: u64,
}

/// deadlocks.csv: a deadlock seen (event "start", at the end of the
/// first look that found it) or gone ("end", at the first look that did
/// not); `cycle` is its ports in wait order, space-separated, and
/// `qlen_bytes` what they held.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeadlockRow {
    pub t_ns: u64,
    pub event: String,
    pub cycle: String,
    pub qlen_bytes: u64,
}

type CsvOut = csv::Writer<File>;

pub struct Options {
    pub out: PathBuf,
    pub interval: Duration,
    /// Stop after this long; otherwise when told to.
    pub duration: Option<Duration>,
    pub debugfs_root: PathBuf,
    /// How long a cycle of ports must send nothing to count as deadlocked.
    pub deadlock_hold: Duration,
    /// Where its progress lines go (standard error if none).
    pub log: Option<PathBuf>,
}

/// What a recording saw, once it stopped (record.json has it too).
#[derive(Debug, Clone, Copy, Default)]
pub struct Recorded {
    pub samples: u64,
    pub trace_events: u64,
    pub trace_events_lost: u64,
    /// Deadlocks that started.
    pub deadlocks: u64,
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

/// `rxecc record`: records until SIGINT or SIGTERM (or the duration).
pub fn record_until_signal(opts: &Options) -> Result<Recorded> {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    record(opts, &SIGNALLED, None)
}

/// A recording in a thread of this process, for `rxecc run`: each
/// deadlocks.csv row also comes through [`Recorder::deadlocks`] as it is
/// written.
pub struct Recorder {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<Recorded>>>,
    pub deadlocks: Receiver<DeadlockRow>,
}

impl Recorder {
    pub fn start(opts: Options) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, deadlocks) = channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || record(&opts, &flag, Some(&tx)));
        Recorder {
            stop,
            thread: Some(thread),
            deadlocks,
        }
    }

    /// Stops the recording, once the events fired so far are written.
    pub fn stop(mut self) -> Result<Recorded> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err(anyhow::anyhow!("the recording's thread panicked")),
        }
    }
}

impl Drop for Recorder {
    /// A run that ends early does not leave its recording running.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One rxe_cc trace event, parsed from a `trace_pipe` line.
#[derive(Debug, PartialEq)]
pub enum Event {
    Rate {
        t_ns: u64,
        qp: String,
        alg: u64,
        state: u64,
        rate_bps: u64,
        tx_bytes: u64,
        acked_bytes: u64,
    },
    HaltStart {
        t_ns: u64,
        qp: String,
        planned_ns: u64,
    },
    HaltEnd {
        t_ns: u64,
        qp: String,
        halted_ns: u64,
        planned_ns: u64,
    },
}

/// bpf/record.h's event kinds.
const KIND_RATE: u32 = 1;
const KIND_HALT_START: u32 = 2;
const KIND_HALT_END: u32 = 3;
/// bpf/record.h's `struct rxecc_trace_event`: kind, alg, state, pad (u32
/// each), now_ns, a, b, c (u64 each), qp (32 bytes, NUL-terminated).
const EVENT_LEN: usize = 16 + 32 + 32;

/// Decodes one ring-buffer record (`struct rxecc_trace_event`); `None` for
/// a short record or an unknown kind.
pub fn decode_event(d: &[u8]) -> Option<Event> {
    if d.len() < EVENT_LEN {
        return None;
    }
    let u32_at = |o: usize| Some(u32::from_ne_bytes(d.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_ne_bytes(d.get(o..o + 8)?.try_into().ok()?));
    let name = d.get(48..EVENT_LEN)?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    let qp = String::from_utf8_lossy(&name[..end]).into_owned();
    let (t_ns, a, b, c) = (u64_at(16)?, u64_at(24)?, u64_at(32)?, u64_at(40)?);
    Some(match u32_at(0)? {
        KIND_RATE => Event::Rate {
            t_ns,
            qp,
            alg: u64::from(u32_at(4)?),
            state: u64::from(u32_at(8)?),
            rate_bps: a,
            tx_bytes: b,
            acked_bytes: c,
        },
        KIND_HALT_START => Event::HaltStart {
            t_ns,
            qp,
            planned_ns: a,
        },
        KIND_HALT_END => Event::HaltEnd {
            t_ns,
            qp,
            halted_ns: a,
            planned_ns: b,
        },
        _ => return None,
    })
}

/// A CSV file with its header written now, so that a run with no rows of
/// a kind still leaves a readable file.
fn csv(dir: &Path, name: &str, header: &str) -> Result<CsvOut> {
    let p = dir.join(name);
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_path(&p)
        .with_context(|| format!("creating {}", p.display()))?;
    w.write_record(header.split(','))?;
    Ok(w)
}

struct Writers {
    rates: CsvOut,
    halts: CsvOut,
    events: u64,
}

impl Writers {
    fn event(&mut self, e: Event) -> Result<()> {
        self.events += 1;
        match e {
            Event::Rate {
                t_ns,
                qp,
                alg,
                state,
                rate_bps,
                tx_bytes,
                acked_bytes,
            } => self.rates.serialize(RateRow {
                t_ns,
                qp,
                alg,
                state,
                rate_bps,
                tx_bytes,
                acked_bytes,
            })?,
            Event::HaltStart {
                t_ns,
                qp,
                planned_ns,
            } => self.halts.serialize(HaltRow {
                t_ns,
                qp,
                event: "start".into(),
                halted_ns: 0,
                planned_ns,
            })?,
            Event::HaltEnd {
                t_ns,
                qp,
                halted_ns,
                planned_ns,
            } => self.halts.serialize(HaltRow {
                t_ns,
                qp,
                event: "end".into(),
                halted_ns,
                planned_ns,
            })?,
        }
        Ok(())
    }
}

/// The deadlocks.csv row a look adds, if it starts or ends one; `state`
/// is the deadlock in force (its cycle), updated. A different cycle
/// right after another is the old one's end; its start comes next look.
fn deadlock_change(
    state: &mut Option<Vec<String>>,
    rep: &deadlock::Report,
    t_ns: u64,
) -> Option<DeadlockRow> {
    let qlen = |cycle: &[String]| -> u64 {
        rep.stuck
            .iter()
            .filter(|p| cycle.contains(&p.dev))
            .map(|p| p.qlen_bytes)
            .sum()
    };
    match state.take() {
        None if !rep.cycle.is_empty() => {
            *state = Some(rep.cycle.clone());
            Some(DeadlockRow {
                t_ns,
                event: "start".into(),
                cycle: rep.cycle.join(" "),
                qlen_bytes: qlen(&rep.cycle),
            })
        }
        None => None,
        Some(c) if !rep.cycle.is_empty() && same_cycle(&c, &rep.cycle) => {
            *state = Some(c);
            None
        }
        Some(c) => Some(DeadlockRow {
            t_ns,
            event: "end".into(),
            cycle: c.join(" "),
            qlen_bytes: 0,
        }),
    }
}

/// The same ports in the same wait order, from any starting port.
fn same_cycle(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && (0..a.len()).any(|k| a.iter().cycle().skip(k).take(a.len()).eq(b.iter()))
}

/// Writes out what the ring buffer's callback has queued.
fn drain(
    rb: Option<&libbpf_rs::RingBuffer<'_>>,
    got: &RefCell<Vec<Event>>,
    w: &mut Writers,
) -> Result<()> {
    if let Some(rb) = rb {
        rb.consume().context("reading the trace ring buffer")?;
    }
    for e in got.borrow_mut().drain(..) {
        w.event(e)?;
    }
    Ok(())
}

/// Records into `opts.out` until `stop` is set or `opts.duration` has
/// passed; each deadlocks.csv row also goes to `deadlocks`.
pub fn record(
    opts: &Options,
    stop: &AtomicBool,
    deadlocks_tx: Option<&Sender<DeadlockRow>>,
) -> Result<Recorded> {
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating {}", opts.out.display()))?;
    let mut log: Box<dyn Write> = match &opts.log {
        Some(p) => Box::new(File::create(p).with_context(|| format!("creating {}", p.display()))?),
        None => Box::new(std::io::stderr()),
    };
    let mut w = Writers {
        rates: csv(&opts.out, "rates.csv", RATES_HEADER)?,
        halts: csv(&opts.out, "halts.csv", HALTS_HEADER)?,
        events: 0,
    };
    let mut ports_csv = csv(&opts.out, "ports.csv", PORTS_HEADER)?;
    let mut qps_csv = csv(&opts.out, "qps.csv", QPS_HEADER)?;
    let mut deadlocks_csv = csv(&opts.out, "deadlocks.csv", DEADLOCKS_HEADER)?;
    let watch = deadlock::Watch::of_current();
    let trunk_devs: Vec<String> = watch
        .as_ref()
        .map_or(Vec::new(), |w| w.devs().map(str::to_string).collect());
    // The last look's end (its readings), and the deadlock in force.
    let mut look: Option<(Instant, Vec<deadlock::Reading>)> = None;
    let mut in_deadlock: Option<Vec<String>> = None;
    let mut deadlocks = 0u64;
    // rxe_cc's tracepoints: record.bpf.c on each, into its ring buffer.
    let mut storage = MaybeUninit::uninit();
    let mut skel = record_skel::RecordSkelBuilder::default()
        .open(&mut storage)
        .context("opening record.bpf.o")?
        .load()
        .context("loading record.bpf.o")?;
    let got = RefCell::new(Vec::new());
    let attached = if Path::new("/sys/module/rxe_cc").exists() {
        skel.attach().context("attaching to rxe_cc's tracepoints")?;
        true
    } else {
        writeln!(
            log,
            "rxecc record: rxe_cc is not loaded; recording samples only"
        )?;
        false
    };
    let rb = if attached {
        let mut b = libbpf_rs::RingBufferBuilder::new();
        b.add(&skel.maps.events, |d: &[u8]| {
            if let Some(e) = decode_event(d) {
                got.borrow_mut().push(e);
            }
            0
        })
        .context("reading the trace ring buffer")?;
        Some(b.build().context("reading the trace ring buffer")?)
    } else {
        None
    };
    let start = Instant::now();
    let start_ns = monotonic_ns();
    let (mut samples, mut last_progress) = (0u64, Instant::now());
    writeln!(
        log,
        "rxecc record: into {} every {} ms{}",
        opts.out.display(),
        opts.interval.as_millis(),
        opts.duration
            .map_or(String::new(), |d| format!(" for {:.1} s", d.as_secs_f64()))
    )?;
    while !stop.load(Ordering::Relaxed) && opts.duration.is_none_or(|d| start.elapsed() < d) {
        let tick = Instant::now();
        drain(rb.as_ref(), &got, &mut w)?;
        let t = monotonic_ns();
        let mut trunk_now = vec![deadlock::Reading::default(); trunk_devs.len()];
        for dev in switch::ports() {
            // A port detached under us is simply gone.
            let Ok(p) = switch::port_stats(&dev) else {
                continue;
            };
            if let Some(i) = trunk_devs.iter().position(|d| *d == p.dev) {
                trunk_now[i] = deadlock::Reading::from(&p);
            }
            let (ib, tx_xoff) = p.ingress.map_or((0, 0), |i| (i.bytes, i.pfc_tx_xoff));
            ports_csv.serialize(PortRow {
                t_ns: t,
                dev: p.dev,
                qlen_bytes: p.qlen_bytes,
                max_qlen_bytes: p.max_qlen_bytes,
                enq_bytes: p.enq_bytes,
                deq_bytes: p.deq_bytes,
                drops: p.drops,
                pfc_rx_xoff: p.pfc_rx_xoff,
                paused_ns: p.paused_ns,
                ingress_bytes: ib,
                pfc_tx_xoff: tx_xoff,
            })?;
        }
        if let Ok(snap) = stats::snapshot(&opts.debugfs_root) {
            for (name, s) in &snap.qps {
                let g = |k: &str| s.get(k).unwrap_or(0);
                qps_csv.serialize(QpRow {
                    t_ns: t,
                    qp: name.clone(),
                    cc: s.fields.get("cc").map_or("?", String::as_str).to_string(),
                    rate_bps: g("rate_bps"),
                    tx_bytes: g("tx_bytes"),
                    acked_bytes: g("acked_bytes"),
                    halts: g("halts"),
                    halt_actual_ns: g("halt_actual_ns"),
                    window_bytes: g("window_bytes"),
                })?;
            }
        }
        if let Some(w) = &watch {
            match &look {
                Some((at, before)) if at.elapsed() >= opts.deadlock_hold => {
                    let rep = w.judge(before, &trunk_now, opts.deadlock_hold);
                    if let Some(row) = deadlock_change(&mut in_deadlock, &rep, t) {
                        if row.event == "start" {
                            deadlocks += 1;
                            writeln!(
                                log,
                                "rxecc record: {:.1} s: {}",
                                start.elapsed().as_secs_f64(),
                                rep.to_string().lines().next().unwrap_or_default()
                            )?;
                        } else {
                            writeln!(
                                log,
                                "rxecc record: {:.1} s: the deadlock of {} is over",
                                start.elapsed().as_secs_f64(),
                                row.cycle
                            )?;
                        }
                        if let Some(tx) = deadlocks_tx {
                            // A receiver gone is a run that no longer
                            // watches: the file still has the row.
                            let _ = tx.send(row.clone());
                        }
                        deadlocks_csv.serialize(row)?;
                        // Read while the run goes on (a test waits on it).
                        deadlocks_csv.flush()?;
                    }
                    look = Some((tick, trunk_now));
                }
                Some(_) => {}
                None => look = Some((tick, trunk_now)),
            }
        }
        samples += 1;
        if last_progress.elapsed() >= Duration::from_secs(5) {
            last_progress = Instant::now();
            writeln!(
                log,
                "rxecc record: {:.0} s, {samples} samples, {} trace events",
                start.elapsed().as_secs_f64(),
                w.events
            )?;
        }
        if let Some(rest) = opts.interval.checked_sub(tick.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    // Events fired up to now are in the buffer: read them all.
    std::thread::sleep(Duration::from_millis(50));
    drain(rb.as_ref(), &got, &mut w)?;
    drop(rb);
    let lost = skel.maps.bss_data.as_deref().map_or(0, |b| b.lost);
    drop(skel);
    for f in [
        &mut w.rates,
        &mut w.halts,
        &mut ports_csv,
        &mut qps_csv,
        &mut deadlocks_csv,
    ] {
        f.flush()?;
    }
    let summary = serde_json::json!({
        "start_ns": start_ns,
        "end_ns": monotonic_ns(),
        "interval_ns": opts.interval.as_nanos() as u64,
        "samples": samples,
        "trace_events": w.events,
        "trace_events_lost": lost,
        "deadlock_hold_ns": watch.as_ref().map(|_| opts.deadlock_hold.as_nanos() as u64),
        "deadlocks": deadlocks,
        "deadlocked_at_end": in_deadlock.is_some(),
    });
    std::fs::write(
        opts.out.join("record.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    if lost > 0 {
        writeln!(
            log,
            "rxecc record: warning: the trace ring buffer was full; {lost} events were lost"
        )?;
    }
    writeln!(
        log,
        "rxecc record: done: {samples} samples, {} trace events",
        w.events
    )?;
    Ok(Recorded {
        samples,
        trace_events: w.events,
        trace_events_lost: lost,
        deadlocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record laid out as bpf/record.h's `struct rxecc_trace_event`.
    fn raw(kind: u32, alg: u32, state: u32, t: u64, abc: [u64; 3], qp: &str) -> Vec<u8> {
        let mut v = Vec::new();
        for x in [kind, alg, state, 0] {
            v.extend_from_slice(&x.to_ne_bytes());
        }
        for x in [t, abc[0], abc[1], abc[2]] {
            v.extend_from_slice(&x.to_ne_bytes());
        }
        let mut name = [0u8; 32];
        name[..qp.len()].copy_from_slice(qp.as_bytes());
        v.extend_from_slice(&name);
        v
    }

    #[test]
    fn deadlocks_start_and_end_once() {
        let stuck = |d: &str| deadlock::StuckPort {
            dev: d.into(),
            from: String::new(),
            to: String::new(),
            qlen_bytes: 1000,
            paused: true,
            gfc_stage: 0,
        };
        let look = |cycle: &[&str]| deadlock::Report {
            hold_ms: 500,
            ports: 6,
            stuck: cycle.iter().map(|d| stuck(d)).collect(),
            cycle: cycle.iter().map(|d| d.to_string()).collect(),
        };
        let mut st = None;
        assert!(deadlock_change(&mut st, &look(&[]), 1).is_none());
        let row = deadlock_change(&mut st, &look(&["a", "b", "c"]), 2).unwrap();
        assert_eq!(
            (row.event.as_str(), row.cycle.as_str(), row.qlen_bytes),
            ("start", "a b c", 3000)
        );
        // The same cycle, found from another port: still the one deadlock.
        assert!(deadlock_change(&mut st, &look(&["b", "c", "a"]), 3).is_none());
        let row = deadlock_change(&mut st, &look(&[]), 4).unwrap();
        assert_eq!((row.event.as_str(), row.t_ns), ("end", 4));
        assert!(st.is_none());
        assert!(deadlock_change(&mut st, &look(&[]), 5).is_none());
        // Another cycle in place of the first: the first ends.
        deadlock_change(&mut st, &look(&["a", "b", "c"]), 6).unwrap();
        let row = deadlock_change(&mut st, &look(&["a", "c", "b"]), 7).unwrap();
        assert_eq!((row.event.as_str(), row.cycle.as_str()), ("end", "a b c"));
        assert_eq!(
            deadlock_change(&mut st, &look(&["a", "c", "b"]), 8)
                .unwrap()
                .event,
            "start"
        );
    }

    #[test]
    fn decodes_ring_buffer_records() {
        assert_eq!(
            decode_event(&raw(
                1,
                2,
                3,
                12345678000,
                [25_000_000, 65536, 4096],
                "rxe1-qp17"
            )),
            Some(Event::Rate {
                t_ns: 12345678000,
                qp: "rxe1-qp17".into(),
                alg: 2,
                state: 3,
                rate_bps: 25_000_000,
                tx_bytes: 65536,
                acked_bytes: 4096
            })
        );
        assert_eq!(
            decode_event(&raw(3, 0, 0, 5, [3, 2, 0], "rxe2-qp18")),
            Some(Event::HaltEnd {
                t_ns: 5,
                qp: "rxe2-qp18".into(),
                halted_ns: 3,
                planned_ns: 2
            })
        );
        assert_eq!(
            decode_event(&raw(2, 0, 0, 5, [2, 0, 0], "rxe2-qp18")),
            Some(Event::HaltStart {
                t_ns: 5,
                qp: "rxe2-qp18".into(),
                planned_ns: 2
            })
        );
        // A name that fills its 32 bytes, with no NUL, is taken whole.
        let long = "q".repeat(32);
        assert!(matches!(decode_event(&raw(2, 0, 0, 1, [0; 3], &long)),
            Some(Event::HaltStart { qp, .. }) if qp == long));
        assert_eq!(decode_event(&raw(9, 0, 0, 1, [0; 3], "x")), None);
        assert_eq!(decode_event(&raw(1, 0, 0, 1, [0; 3], "x")[..70]), None);
    }
}
