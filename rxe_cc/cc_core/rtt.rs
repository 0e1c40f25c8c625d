// SPDX-License-Identifier: GPL-2.0

//! What delay- and window-based algorithms learn from the requester's own
//! sends and ACKs: RTT samples, timed one packet per round trip as TCP
//! does (RFC 6298 §3's timer, with Karn's rule), and the bytes in flight.
//! RoCE's ACKs carry no timestamp to echo, so the sender keeps the send
//! time of the one packet it times.

use super::psn::{psn_add, psn_diff, PSN_MASK};

/// One packet timed at a time: its PSN and send time. An ACK at or past
/// that PSN gives an RTT sample, and the next new packet is timed; any
/// resend while a packet is timed voids the timing, as the ACK could answer
/// either copy (Karn; go-back-N resends the timed packet too).
#[derive(Clone, Copy, Debug, Default)]
pub struct RttProbe {
    timed: Option<(u32, u64)>,
    next_psn: Option<u32>,
}

impl RttProbe {
    /// A packet left at `now_ns`: `psn` is its last PSN and `bytes` what it
    /// moves, so that a READ request (one packet whose responses take
    /// `bytes / mtu` PSNs) is timed to its first response: the round trip,
    /// not the transfer.
    pub fn on_send(&mut self, now_ns: u64, psn: u32, bytes: u32, mtu: u32) {
        if self.next_psn.is_none_or(|next| psn_diff(psn, next) >= 0) {
            self.next_psn = Some(psn_add(psn, 1));
            if self.timed.is_none() {
                let later = bytes.saturating_sub(1).checked_div(mtu).unwrap_or(0);
                self.timed = Some((psn.wrapping_sub(later) & PSN_MASK, now_ns));
            }
        } else {
            self.timed = None;
        }
    }

    /// An ACK of every PSN up to `psn` arrived at `now_ns`: the RTT, ns, if
    /// it answers the timed packet. NAKs acknowledge nothing new here.
    pub fn on_ack(&mut self, now_ns: u64, psn: u32, nak: bool) -> Option<u64> {
        let (p, sent) = self.timed?;
        if nak || psn_diff(psn, p) < 0 {
            return None;
        }
        self.timed = None;
        Some(now_ns.saturating_sub(sent))
    }
}

/// Bytes sent and acknowledged, and which PSNs are new: what a window
/// limits. A resent PSN's bytes are already in flight.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flight {
    /// Bytes of new data sent.
    pub snd_nxt: u64,
    /// Bytes acknowledged.
    pub snd_una: u64,
    next_psn: Option<u32>,
}

impl Flight {
    /// True unless `psn` was sent before.
    pub fn is_new_psn(&self, psn: u32) -> bool {
        self.next_psn.is_none_or(|next| psn_diff(psn, next) >= 0)
    }

    /// A packet of `bytes` with last PSN `psn` left; true if it was new.
    pub fn on_send(&mut self, psn: u32, bytes: u32) -> bool {
        let new = self.is_new_psn(psn);
        if new {
            self.snd_nxt = self.snd_nxt.saturating_add(u64::from(bytes));
            self.next_psn = Some(psn_add(psn, 1));
        }
        new
    }

    /// An ACK advanced the cumulative ack by `bytes`.
    pub fn on_ack(&mut self, bytes: u32) {
        self.snd_una = self.snd_una.saturating_add(u64::from(bytes));
    }

    /// Bytes in flight.
    pub fn inflight(&self) -> u64 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }
}
