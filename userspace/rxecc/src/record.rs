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
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Read, Write};
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

fn csv(dir: &Path, name: &str, header: &str) -> Result<BufWriter<File>> {
    let p = dir.join(name);
    let mut w =
        BufWriter::new(File::create(&p).with_context(|| format!("creating {}", p.display()))?);
    writeln!(w, "{header}")?;
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
        let restore = std::fs::read_to_string(&record_cmd)
            .is_ok_and(|v| v.trim() == "1")
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
    rates: BufWriter<File>,
    halts: BufWriter<File>,
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
            } => writeln!(
                self.rates,
                "{t_ns},{qp},{alg},{state},{rate_bps},{tx_bytes},{acked_bytes}"
            )?,
            Event::HaltStart {
                t_ns,
                qp,
                planned_ns,
            } => writeln!(self.halts, "{t_ns},{qp},start,0,{planned_ns}")?,
            Event::HaltEnd {
                t_ns,
                qp,
                halted_ns,
                planned_ns,
            } => writeln!(self.halts, "{t_ns},{qp},end,{halted_ns},{planned_ns}")?,
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
            writeln!(
                ports_csv,
                "{t},{},{},{},{},{},{},{},{},{ib},{tx_xoff}",
                p.dev,
                p.qlen_bytes,
                p.max_qlen_bytes,
                p.enq_bytes,
                p.deq_bytes,
                p.drops,
                p.pfc_rx_xoff,
                p.paused_ns
            )?;
        }
        if let Ok(snap) = stats::snapshot(&opts.debugfs_root) {
            for (name, s) in &snap.qps {
                let g = |k: &str| s.get(k).unwrap_or(0);
                writeln!(
                    qps_csv,
                    "{t},{name},{},{},{},{},{},{},{}",
                    s.fields.get("cc").map_or("?", String::as_str),
                    g("rate_bps"),
                    g("tx_bytes"),
                    g("acked_bytes"),
                    g("halts"),
                    g("halt_actual_ns"),
                    g("window_bytes")
                )?;
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
