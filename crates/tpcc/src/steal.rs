//! CPU time the hypervisor stole: on a virtual machine whose host is busy, the host runs
//! other guests (or its own device emulation) on the CPUs this one wanted, and a run loses
//! time that its own counters do not show. [`CpuTimes`] reads the machine's counters around
//! a point's measured time; a report warns of the points that lost more than
//! [`STEAL_WARN`] of it ([`Report::steal_warning`]).

use crate::report::Report;

/// The whole machine's CPU time so far, in clock ticks (the `cpu` line of `/proc/stat`):
/// all of it, and the part the hypervisor gave to other guests while this one wanted to run
/// (`steal`, vmstat's `st`). On a virtual machine whose host is busy, a run loses CPU time
/// it cannot see in its own counters; the share stolen over a run says how much.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user + nice + system + idle + iowait + irq + softirq + steal.
    pub total: u64,
    /// steal.
    pub steal: u64,
}

impl CpuTimes {
    /// The counters now; `None` where `/proc/stat` cannot tell.
    pub fn now() -> Option<CpuTimes> {
        cpu_times(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
    }

    /// The share of the machine's CPU time from `before` to this reading that was stolen,
    /// 0 to 1 (0 if no time passed).
    pub fn steal_share_since(&self, before: &CpuTimes) -> f64 {
        let total = self.total.saturating_sub(before.total);
        if total == 0 {
            return 0.0;
        }
        self.steal.saturating_sub(before.steal) as f64 / total as f64
    }
}

/// A point that lost more than this share of the machine's CPU time to other guests gets a
/// warning in the summary (the comparison scripts warn at the same 5%).
pub const STEAL_WARN: f64 = 0.05;

impl Report {
    /// A warning naming the points that lost more than 5% of the machine's CPU time to
    /// other guests (see [`crate::Point::steal`]); `None` if none did.
    pub fn steal_warning(&self) -> Option<String> {
        let rounds = self.rounds();
        let stolen: Vec<String> = self
            .points
            .iter()
            .filter_map(|p| p.steal.filter(|s| *s > STEAL_WARN).map(|s| (p, s)))
            .map(|(p, s)| {
                let round = if rounds > 1 {
                    format!(" r{}", p.round)
                } else {
                    String::new()
                };
                format!(
                    "{}{round} at {} clients {:.0}%",
                    p.config,
                    p.clients,
                    s * 100.0
                )
            })
            .collect();
        (!stolen.is_empty()).then(|| {
            format!(
                "warning: the hypervisor took more than {:.0}% of this machine's CPU time for \
                 other guests during {}: those points measure the host's load as much as the \
                 engine",
                STEAL_WARN * 100.0,
                stolen.join(", ")
            )
        })
    }
}

/// Parses the `cpu` line of `/proc/stat`; kernels older than 2.6.11 have no steal column.
fn cpu_times(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    Some(CpuTimes {
        total: ticks.iter().sum(),
        steal: *ticks.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stolen_share_is_read_from_the_cpu_line() {
        let before = cpu_times("cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
            .expect("a cpu line");
        assert_eq!(
            before,
            CpuTimes {
                total: 1000,
                steal: 35
            }
        );
        let after = CpuTimes {
            total: 1200,
            steal: 85,
        };
        assert_eq!(after.steal_share_since(&before), 0.25);
        assert_eq!(before.steal_share_since(&before), 0.0);
        assert_eq!(cpu_times("cpu  1 2 3 4\n"), None, "no steal column");
        assert!(CpuTimes::now().is_some(), "Linux has /proc/stat");
    }
}
