//! qlen.txt, the HPCC simulator's queue-length histograms, written by a
//! thread while a run's traffic flows.

use super::one::read_epoch;
use crate::clock::monotonic_ns;
use crate::config::topology;
use crate::switch;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Writes qlen.txt as the simulator does: every interval, `time: <ns>`,
/// then a line `node ifindex c0 c1 ...` per switch port, ci counting the
/// 100 ns samples (here: time, exactly, from every change of the queue)
/// with the port's queue in [i, i+1) KB (1000 B), cumulative from the
/// start. Times are on the flow file's clock.
pub(super) struct QlenDumper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Result<()>>,
}

/// The worst of a qlen.txt's reads, for the line `rxecc run` prints.
#[derive(Default)]
struct QlenReads {
    window_ns: u64,
    tries: u32,
    undone: usize,
    inexact: usize,
}

impl QlenReads {
    fn note(&mut self, snap: &switch::QlenSnapshot) {
        self.window_ns = self.window_ns.max(snap.window_ns);
        self.tries = self.tries.max(snap.tries);
        self.undone = self.undone.max(snap.undone);
        self.inexact += usize::from(!snap.exact);
    }
}

impl std::fmt::Display for QlenReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "reads took at most {} us, {} tries at most, {} intervals taken back at most; ",
            self.window_ns / 1000,
            self.tries,
            self.undone
        )?;
        if self.inexact > 0 {
            write!(
                f,
                "{} reads NOT EXACT (more changes during the read than the log holds)",
                self.inexact
            )
        } else {
            write!(f, "every read exact")
        }
    }
}

impl QlenDumper {
    /// Histograms count from the epoch (the flow file's first start), as
    /// the simulator's from QLEN_MON_START; flowgen writes it to
    /// `epoch_file` once every QP is connected.
    pub(super) fn start(
        sim: &[topology::SimPort],
        path: PathBuf,
        interval_ms: u64,
        epoch_file: PathBuf,
        t0_ns: u64,
    ) -> Result<Self> {
        use std::io::Write as _;
        use std::sync::atomic::{AtomicBool, Ordering};
        let ports: Vec<topology::SimPort> =
            sim.iter().filter(|p| p.node_type == 1).cloned().collect();
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?,
        );
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let name = path.display().to_string();
        let thread = std::thread::spawn(move || -> Result<()> {
            let step = interval_ms * 1_000_000;
            let mut epoch = None;
            while !flag.load(Ordering::Relaxed) {
                epoch = epoch.or_else(|| read_epoch(&epoch_file));
                if epoch.is_some_and(|e| monotonic_ns() >= e) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let reader =
                switch::QlenReader::new(&ports.iter().map(|p| p.dev.clone()).collect::<Vec<_>>())?;
            let mut worst = QlenReads::default();
            let base = reader.read()?;
            worst.note(&base);
            let t_base = base.now_ns;
            let mut next = t_base + step;
            let mut dumps = 0;
            loop {
                let last = flag.load(Ordering::Relaxed);
                let t = monotonic_ns();
                if t >= next || last {
                    let snap = reader.read()?;
                    worst.note(&snap);
                    dumps += 1;
                    let t_now = snap.now_ns;
                    writeln!(w, "time: {}", t0_ns + t_now.saturating_sub(t_base))?;
                    for ((p, b0), h) in ports.iter().zip(&base.ports).zip(&snap.ports) {
                        write!(w, "{} {}", p.node, p.ifindex)?;
                        for (i, v) in h.iter().enumerate() {
                            let d = v.saturating_sub(b0.get(i).copied().unwrap_or(0));
                            write!(w, " {}", d / 100)?;
                        }
                        writeln!(w)?;
                    }
                    // A late dump (a busy guest) skips the times it missed
                    // rather than writing them all at once.
                    while next <= t_now {
                        next += step;
                    }
                }
                if last {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(interval_ms.min(20)));
            }
            w.flush()?;
            eprintln!(
                "rxecc run: {name}: {dumps} dumps of {} ports; {worst}",
                ports.len()
            );
            Ok(())
        });
        Ok(QlenDumper { stop, thread })
    }

    pub(super) fn stop(self) -> Result<()> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the qlen.txt writer panicked"))?
    }
}
