//! `rxecc record`: time series of a run, for `rxecc report` and plots.
//!
//! Two sources, on one clock (CLOCK_MONOTONIC, which is the kernel's
//! `ktime_get_ns()` and so the clock of every rxe_cc hook):
//! - rxe_cc's tracepoints (`rxe_cc_rate`, `rxe_cc_halt_start`,
//!   `rxe_cc_halt_end`), read from a private tracefs instance so that other
//!   users of the global trace buffer are left alone. They give each QP's
//!   rate at every control period and every halt.
//! - samples, every `interval`, of each switch port's counters (queue
//!   length, PFC) and each live QP's debugfs counters (bytes sent and
//!   acked, which give throughput for every algorithm, `none` included).
//!
//! Output, in the directory given: `rates.csv`, `halts.csv`, `ports.csv`,
//! `qps.csv` and `record.json` (what was recorded, and what was lost).

use crate::{stats, switch};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";
const INSTANCE: &str = "rxecc-record";

pub const RATES_HEADER: &str = "t_ns,qp,alg,state,rate_bps,tx_bytes,acked_bytes";
pub const HALTS_HEADER: &str = "t_ns,qp,event,halted_ns,planned_ns";
pub const PORTS_HEADER: &str =
    "t_ns,dev,qlen_bytes,max_qlen_bytes,enq_bytes,deq_bytes,drops,pfc_rx_xoff,paused_ns,ingress_bytes,pfc_tx_xoff";
pub const QPS_HEADER: &str =
    "t_ns,qp,cc,rate_bps,tx_bytes,acked_bytes,halts,halt_actual_ns,window_bytes";

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

type CsvOut = csv::Writer<File>;

pub struct Options {
    pub out: PathBuf,
    pub interval: Duration,
    /// Stop after this long; otherwise at SIGINT or SIGTERM.
    pub duration: Option<Duration>,
    pub debugfs_root: PathBuf,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// CLOCK_MONOTONIC in ns: the clock of the kernel's `ktime_get_ns()`.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
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

/// Parses a `trace_pipe` line such as
/// `kworker/u8:2-51 [001] b..1. 12.5: rxe_cc_rate: qp=rxe1-qp17 ns=... rate_bps=...`.
/// Lines of other events give `None`.
pub fn parse_event(line: &str) -> Option<Event> {
    // `... <timestamp>: <event>: <fields>`
    let (_, ev) = line.split_once(" rxe_cc_")?;
    let (name, rest) = ev.split_once(": ")?;
    let mut qp = None;
    let mut num = std::collections::HashMap::new();
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        if k == "qp" {
            qp = Some(v.to_string());
        } else {
            num.insert(k, v.parse::<u64>().ok()?);
        }
    }
    let qp = qp?;
    let g = |k: &str| num.get(k).copied();
    Some(match name {
        "rate" => Event::Rate {
            t_ns: g("ns")?,
            qp,
            alg: g("alg")?,
            state: g("state")?,
            rate_bps: g("rate_bps")?,
            tx_bytes: g("tx_bytes")?,
            acked_bytes: g("acked_bytes")?,
        },
        "halt_start" => Event::HaltStart {
            t_ns: g("ns")?,
            qp,
            planned_ns: g("planned_ns")?,
        },
        "halt_end" => Event::HaltEnd {
            t_ns: g("ns")?,
            qp,
            halted_ns: g("halted_ns")?,
            planned_ns: g("planned_ns")?,
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

/// A private tracefs instance with rxe_cc's events enabled; removed on drop.
struct TraceInstance {
    dir: PathBuf,
    pipe: File,
}

impl TraceInstance {
    fn open() -> Result<Option<Self>> {
        let root = Path::new(TRACEFS);
        if !root.join("instances").is_dir() {
            let src = c"tracefs";
            let target = c"/sys/kernel/tracing";
            // SAFETY: NUL-terminated strings; a null data pointer is allowed.
            let rc = unsafe {
                libc::mount(
                    src.as_ptr(),
                    target.as_ptr(),
                    src.as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
            if rc != 0 {
                bail!(
                    "cannot mount tracefs on {TRACEFS}: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
        if !root.join("events/rxe_cc").is_dir() {
            eprintln!(
                "rxecc record: no rxe_cc tracepoints (is rxe_cc loaded?); recording samples only"
            );
            return Ok(None);
        }
        let dir = root.join("instances").join(INSTANCE);
        if dir.exists() {
            // A recorder that was killed left it behind.
            std::fs::remove_dir(&dir)
                .with_context(|| format!("removing stale {}", dir.display()))?;
        }
        // An instance inherits the top level's record-cmd, and with it set,
        // enabling an event hooks sched_switch to save task names: that
        // live-patches __schedule's tracepoint key under running CPUs, and
        // again when the events are turned off. We never read task names,
        // and under QEMU's TCG that patching can race a running vCPU into
        // "Oops: int3" in __schedule (seen in CI). So the instance is created
        // with record-cmd clear, and the top level's setting is put back.
        let record_cmd = root.join("options/record-cmd");
        let restore = std::fs::read_to_string(&record_cmd).is_ok_and(|v| v.trim() == "1")
            && std::fs::write(&record_cmd, "0").is_ok();
        let made = std::fs::create_dir(&dir);
        if restore {
            if let Err(e) = std::fs::write(&record_cmd, "1") {
                eprintln!(
                    "rxecc record: warning: could not set {} back to 1: {e}",
                    record_cmd.display()
                );
            }
        }
        made.with_context(|| format!("creating {}", dir.display()))?;
        let w = |f: &str, v: &str| {
            std::fs::write(dir.join(f), v)
                .with_context(|| format!("writing {v} to {}/{f}", dir.display()))
        };
        w("buffer_size_kb", "16384")?;
        w("events/rxe_cc/enable", "1")?;
        w("tracing_on", "1")?;
        let pipe = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(dir.join("trace_pipe"))
            .context("opening trace_pipe")?;
        Ok(Some(Self { dir, pipe }))
    }

    /// Events the ring buffer had to drop (it was full).
    fn overruns(&self) -> u64 {
        let Ok(rd) = std::fs::read_dir(self.dir.join("per_cpu")) else {
            return 0;
        };
        rd.filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_to_string(e.path().join("stats")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| {
                        l.strip_prefix("overrun: ")
                            .and_then(|v| v.trim().parse::<u64>().ok())
                    })
                    .collect::<Vec<_>>()
            })
            .sum()
    }
}

impl Drop for TraceInstance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("events/rxe_cc/enable"), "0");
        let _ = std::fs::remove_dir(&self.dir);
    }
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

/// Reads what the pipe has now; keeps an incomplete last line in `pending`.
fn drain(trace: &mut Option<TraceInstance>, pending: &mut String, w: &mut Writers) -> Result<()> {
    let Some(t) = trace.as_mut() else {
        return Ok(());
    };
    let mut buf = [0u8; 65536];
    loop {
        match t.pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => pending.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("reading trace_pipe"),
        }
    }
    while let Some(i) = pending.find('\n') {
        if let Some(e) = parse_event(&pending[..i]) {
            w.event(e)?;
        }
        pending.drain(..=i);
    }
    Ok(())
}

pub fn record(opts: &Options) -> Result<()> {
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating {}", opts.out.display()))?;
    let mut w = Writers {
        rates: csv(&opts.out, "rates.csv", RATES_HEADER)?,
        halts: csv(&opts.out, "halts.csv", HALTS_HEADER)?,
        events: 0,
    };
    let mut ports_csv = csv(&opts.out, "ports.csv", PORTS_HEADER)?;
    let mut qps_csv = csv(&opts.out, "qps.csv", QPS_HEADER)?;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let mut trace = TraceInstance::open()?;
    let start = Instant::now();
    let start_ns = monotonic_ns();
    let (mut samples, mut pending, mut last_progress) = (0u64, String::new(), Instant::now());
    eprintln!(
        "rxecc record: into {} every {} ms{}; stop with SIGINT/SIGTERM",
        opts.out.display(),
        opts.interval.as_millis(),
        opts.duration
            .map_or(String::new(), |d| format!(" for {:.1} s", d.as_secs_f64()))
    );
    while !STOP.load(Ordering::Relaxed) && opts.duration.is_none_or(|d| start.elapsed() < d) {
        let tick = Instant::now();
        drain(&mut trace, &mut pending, &mut w)?;
        let t = monotonic_ns();
        for dev in switch::ports() {
            // A port detached under us is simply gone.
            let Ok(p) = switch::port_stats(&dev) else {
                continue;
            };
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
        samples += 1;
        if last_progress.elapsed() >= Duration::from_secs(5) {
            last_progress = Instant::now();
            eprintln!(
                "rxecc record: {:.0} s, {samples} samples, {} trace events",
                start.elapsed().as_secs_f64(),
                w.events
            );
        }
        if let Some(rest) = opts.interval.checked_sub(tick.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    // Events fired up to now are in the buffer: read them all.
    std::thread::sleep(Duration::from_millis(50));
    drain(&mut trace, &mut pending, &mut w)?;
    let lost = trace.as_ref().map_or(0, TraceInstance::overruns);
    drop(trace);
    for f in [&mut w.rates, &mut w.halts, &mut ports_csv, &mut qps_csv] {
        f.flush()?;
    }
    let summary = serde_json::json!({
        "start_ns": start_ns,
        "end_ns": monotonic_ns(),
        "interval_ns": opts.interval.as_nanos() as u64,
        "samples": samples,
        "trace_events": w.events,
        "trace_events_lost": lost,
    });
    std::fs::write(
        opts.out.join("record.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    if lost > 0 {
        eprintln!("rxecc record: warning: the trace buffer overran; {lost} events were lost");
    }
    eprintln!(
        "rxecc record: done: {samples} samples, {} trace events",
        w.events
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_trace_pipe_lines() {
        let l = "     kworker/u8:2-51      [001] b..1.    12.345678: rxe_cc_rate: qp=rxe1-qp17 ns=12345678000 alg=2 state=2 rate_bps=25000000 tx_bytes=65536 acked_bytes=4096";
        assert_eq!(
            parse_event(l),
            Some(Event::Rate {
                t_ns: 12345678000,
                qp: "rxe1-qp17".into(),
                alg: 2,
                state: 2,
                rate_bps: 25_000_000,
                tx_bytes: 65536,
                acked_bytes: 4096
            })
        );
        let l = " x-1 [000] ..... 1.0: rxe_cc_halt_end: qp=rxe2-qp18 ns=5 halted_ns=3 planned_ns=2";
        assert_eq!(
            parse_event(l),
            Some(Event::HaltEnd {
                t_ns: 5,
                qp: "rxe2-qp18".into(),
                halted_ns: 3,
                planned_ns: 2
            })
        );
        let l = " x-1 [000] ..... 1.0: rxe_cc_halt_start: qp=rxe2-qp18 ns=5 planned_ns=2";
        assert_eq!(
            parse_event(l),
            Some(Event::HaltStart {
                t_ns: 5,
                qp: "rxe2-qp18".into(),
                planned_ns: 2
            })
        );
        assert_eq!(
            parse_event(" x-1 [000] ..... 1.0: sched_switch: prev=a"),
            None
        );
        assert_eq!(
            parse_event(" x-1 [000] ..... 1.0: rxe_cc_rate: qp=a ns=zz"),
            None
        );
        assert_eq!(parse_event("CPU:1 [LOST 12 EVENTS]"), None);
        assert_eq!(
            parse_event(" x-1 [000] ..... 1.0: rxe_cc_other: qp=a ns=1"),
            None
        );
    }
}
