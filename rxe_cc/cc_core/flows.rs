// SPDX-License-Identifier: GPL-2.0

//! A receiver's count of its active flows: FNCC's N, which the receiver
//! writes into every ACK so that a sender facing last-hop congestion can
//! jump to its fair share at once.
//!
//! A flow is active if it delivered data in the current window or the one
//! before (windows of T, FNCC's "concurrent flows within an RTT"). Each
//! flow keeps a mark, the window it was last counted in; counting is O(1)
//! per packet and needs no timer: a window that passes with no data rolls
//! over at the next packet.

/// Active flows of one receiver (one rxe device).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActiveFlows {
    /// The current window's number; marks hold it. Never 0 once started,
    /// so a fresh mark (0) is never current.
    epoch: u32,
    start_ns: u64,
    cur: u16,
    prev: u16,
}

impl ActiveFlows {
    /// No flows yet.
    pub const fn new() -> Self {
        Self {
            epoch: 0,
            start_ns: 0,
            cur: 0,
            prev: 0,
        }
    }

    /// A flow whose mark is `mark` delivered data at `now_ns`; returns N,
    /// the active flows, at least 1 (this one).
    pub fn on_data(&mut self, now_ns: u64, window_ns: u64, mark: &mut u32) -> u16 {
        let window = window_ns.max(1);
        let age = now_ns.saturating_sub(self.start_ns);
        if self.epoch == 0 || age >= window {
            // The window before this one counts only if it just ended.
            self.prev = if self.epoch != 0 && age < window.saturating_mul(2) {
                self.cur
            } else {
                0
            };
            self.cur = 0;
            self.epoch = match self.epoch.wrapping_add(1) {
                0 => 1,
                e => e,
            };
            self.start_ns = now_ns;
        }
        if *mark != self.epoch {
            *mark = self.epoch;
            self.cur = self.cur.saturating_add(1);
        }
        self.count()
    }

    /// N as of the last packet: flows seen in this window or the last.
    pub fn count(&self) -> u16 {
        self.cur.max(self.prev).max(1)
    }
}
