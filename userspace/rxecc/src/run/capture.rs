//! RoCEv2 captures with dumpcap, Wireshark's capture tool: started once
//! they capture, drained before they stop. `rxecc run` holds its own
//! (an experiment's `capture` ports); `rxecc capture start|stop` gives the
//! same to scripts, across two processes, through a pid file beside the
//! pcap.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long dumpcap may take to start capturing, and a capture to stop
/// growing before it is stopped anyway.
const LIMIT: Duration = Duration::from_secs(60);

/// dumpcap on `dev` (in namespace `ns`, if any) into the classic pcap
/// `pcap`, its messages into `log`; returns once it captures. dumpcap, not
/// tshark: tshark loads every dissector first, which takes 30 s under TCG;
/// dumpcap starts in well under a second. A 64 MiB kernel buffer (-B; 2 by
/// default): the pcap goes to the results directory, 9p under TCG, and
/// with the default a loaded host's capture lost 1399 of 3397 packets of a
/// 6.5 MB flow.
pub fn start(dev: &str, ns: Option<&str>, pcap: &Path, log: &Path) -> Result<Child> {
    let mut cmd = match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, "dumpcap"]);
            c
        }
        None => Command::new("dumpcap"),
    };
    let mut child = cmd
        .args(["-i", dev, "-B", "64", "-P", "-f", "udp port 4791", "-w"])
        .arg(pcap)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?)
        .spawn()
        .context("starting dumpcap (Wireshark's capture tool)")?;
    let t0 = Instant::now();
    loop {
        if std::fs::read_to_string(log).is_ok_and(|l| l.contains("Capturing on")) {
            return Ok(child);
        }
        if let Some(st) = child.try_wait()? {
            bail!(
                "dumpcap on {dev} exited ({st}): {}",
                std::fs::read_to_string(log).unwrap_or_default().trim()
            );
        }
        if t0.elapsed() >= LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "dumpcap on {dev} did not start capturing in {} s (see {})",
                LIMIT.as_secs(),
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until a capture has caught up: its pcap and its log (a
/// "Packets: N" line as it writes) unchanged for a second, at most a
/// minute. Stopped, dumpcap drops what its kernel ring still holds, and
/// counts none of it as dropped (docs/testing.md, measurements).
pub fn drain(pcap: &Path, log: &Path) {
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let (t0, mut since) = (Instant::now(), Instant::now());
    let mut last = (size(pcap), size(log));
    while since.elapsed() < Duration::from_secs(1) {
        if t0.elapsed() >= LIMIT {
            eprintln!(
                "rxecc: the capture {} still grew after {} s; stopping it",
                pcap.display(),
                LIMIT.as_secs()
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
        let now = (size(pcap), size(log));
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

/// (received, dropped) from a stopped dumpcap's log: its last "Packets
/// received/dropped on interface" line. A count judged on a capture that
/// lost packets in its kernel buffer is no count.
pub fn counts(log: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("Packets received/dropped on interface"))?;
    let (rx, rest) = line.rsplit_once(": ")?.1.split_once('/')?;
    let dropped = rest.split_whitespace().next()?;
    Some((rx.trim().parse().ok()?, dropped.parse().ok()?))
}

/// The pid file `rxecc capture start` leaves beside a pcap.
pub fn pid_file(pcap: &Path) -> PathBuf {
    let mut p = pcap.as_os_str().to_owned();
    p.push(".pid");
    PathBuf::from(p)
}

/// The log a capture writes beside its pcap unless told otherwise.
pub fn default_log(pcap: &Path) -> PathBuf {
    pcap.with_extension("log")
}

/// Sends SIGTERM (dumpcap then closes its file) to `pid` and waits up to
/// ten seconds for it to go. For a dumpcap this process did not start.
pub fn stop_pid(pid: i32) -> Result<()> {
    // SAFETY: kill(2) with a pid read from our own pid file and a valid
    // signal number; no memory is passed.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        bail!(
            "dumpcap (pid {pid}) is not running: {}",
            std::io::Error::last_os_error()
        );
    }
    let t0 = Instant::now();
    // SAFETY: signal 0 only checks that the process exists.
    while unsafe { libc::kill(pid, 0) } == 0 {
        if t0.elapsed() >= Duration::from_secs(10) {
            bail!("dumpcap (pid {pid}) did not exit within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_come_from_the_last_report_line() {
        let dir = std::env::temp_dir().join(format!("rxecc-capture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("p0.log");
        std::fs::write(
            &log,
            "Capturing on 'p0'\nFile: x.pcap\nPackets: 10 \nPackets received/dropped on interface 'p0': 3397/1399 (pcap:0/dumpcap:0/flushed:0/ps_ifdrop:0) (58.8%)\n",
        )
        .unwrap();
        assert_eq!(counts(&log), Some((3397, 1399)));
        std::fs::write(&log, "Capturing on 'p0'\n").unwrap();
        assert_eq!(counts(&log), None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            pid_file(Path::new("/tmp/a.pcap")),
            Path::new("/tmp/a.pcap.pid")
        );
        assert_eq!(
            default_log(Path::new("/tmp/a.pcap")),
            Path::new("/tmp/a.log")
        );
    }
}
