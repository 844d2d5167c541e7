//! What this process spent over a measured window: CPU time in user mode and in the kernel,
//! context switches, and the change in its resident memory, read from `/proc/self` (Linux;
//! elsewhere nothing is read and the report leaves these out). Also whether its memory may
//! be backed by transparent huge pages, which changes what the kernel's share is.
//!
//! Throughput alone hides where the time goes: the kernel's share includes zeroing the
//! fresh pages the tables grow into, which no profile of the engine's own code shows, and
//! the book explains most of chapter 8's effects by context switches (a thread that sleeps
//! on a latch or a condition variable switches voluntarily; one the scheduler preempts,
//! involuntarily). Per transaction, these are the figures to compare builds by when the
//! machine's speed drifts: a run's CPU time does not count the time it waited for a CPU.
//!
//! `waterline tpcc` reads it around its measured window: in-process the process is the
//! engine and the driver. A `waterline serve` reports its own in SHOW STATUS
//! (`Waterline_cpu_user_us`, `Waterline_voluntary_context_switches`, ...), which the
//! driver reads over `mysql://`.

use std::time::Duration;

/// The process's counters at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// CPU time in user mode, all threads so far.
    pub user: Duration,
    /// CPU time in the kernel on the process's behalf (system calls, page faults).
    pub system: Duration,
    /// Resident memory, bytes.
    pub resident: u64,
    /// Context switches so far, voluntary and involuntary, of all its threads (ended ones too).
    pub switches: Switches,
}

/// Context switches (`voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// The thread gave up the CPU: it slept, on a lock, a condition variable, I/O.
    pub voluntary: u64,
    /// The scheduler took the CPU away: its time slice ended, another thread had to run.
    pub involuntary: u64,
}

impl Usage {
    /// The counters now; `None` where `/proc/self` cannot tell.
    pub fn now() -> Option<Usage> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let usage = parse(&stat, &statm, ticks_per_second(), page_size())?;
        Some(Usage {
            switches: process_switches(),
            ..usage
        })
    }

    /// What was spent from `before` to this reading.
    pub fn since(&self, before: &Usage) -> Spent {
        Spent {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
            resident_growth: self.resident as i64 - before.resident as i64,
            switches: Switches {
                voluntary: self
                    .switches
                    .voluntary
                    .saturating_sub(before.switches.voluntary),
                involuntary: self
                    .switches
                    .involuntary
                    .saturating_sub(before.switches.involuntary),
            },
        }
    }
}

/// The context switches of every thread of this process so far, those that ended too
/// (`getrusage(RUSAGE_SELF)`; a thread's own `/proc` status counts that thread alone, and
/// a sum over the live ones loses the counts of a connection thread that ends within the
/// window). Zero where the system cannot tell.
fn process_switches() -> Switches {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(Switches::default(), |u| Switches {
        voluntary: u64::try_from(u.voluntary_context_switches()).unwrap_or(0),
        involuntary: u64::try_from(u.involuntary_context_switches()).unwrap_or(0),
    })
}

/// What the process spent over a window (see [`Usage::since`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spent {
    /// CPU time in user mode.
    pub user: Duration,
    /// CPU time in the kernel.
    pub system: Duration,
    /// Resident memory at the end less at the start, bytes (negative if it shrank).
    pub resident_growth: i64,
    /// Context switches of the threads that lived through the window.
    pub switches: Switches,
}

impl Spent {
    /// CPU time, user and kernel, per transaction, in microseconds.
    pub fn cpu_us_per_txn(&self, transactions: u64) -> f64 {
        (self.user + self.system).as_secs_f64() * 1e6 / transactions.max(1) as f64
    }

    /// The kernel's share of the CPU time, 0 to 1 (0 if none was spent).
    pub fn system_share(&self) -> f64 {
        let total = (self.user + self.system).as_secs_f64();
        if total == 0.0 {
            0.0
        } else {
            self.system.as_secs_f64() / total
        }
    }

    /// Voluntary and involuntary context switches per transaction.
    pub fn switches_per_txn(&self, transactions: u64) -> (f64, f64) {
        let n = transactions.max(1) as f64;
        (
            self.switches.voluntary as f64 / n,
            self.switches.involuntary as f64 / n,
        )
    }

    /// Resident memory growth per transaction, bytes.
    pub fn resident_growth_per_txn(&self, transactions: u64) -> f64 {
        self.resident_growth as f64 / transactions.max(1) as f64
    }
}

/// `/proc/self/stat` and `/proc/self/statm` read as [`Usage`]: the times are fields 14 and
/// 15 of `stat` in clock ticks, counted after the command name, which is in parentheses and
/// may itself hold spaces; the resident pages are field 2 of `statm`.
fn parse(stat: &str, statm: &str, ticks_per_second: u64, page_size: u64) -> Option<Usage> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // After the name: field 3 (state) is the first, so fields 14 and 15 are the 12th and 13th.
    let mut fields = after_name.split_whitespace().skip(11);
    let mut ticks = || -> Option<Duration> {
        let n: u64 = fields.next()?.parse().ok()?;
        Some(Duration::from_secs_f64(
            n as f64 / ticks_per_second.max(1) as f64,
        ))
    };
    let user = ticks()?;
    let system = ticks()?;
    let resident_pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(Usage {
        user,
        system,
        resident: resident_pages * page_size,
        switches: Switches::default(),
    })
}

/// Whether this process's anonymous memory may be backed by transparent huge pages: `off for
/// this process` (`prctl(PR_SET_THP_DISABLE)`, as `waterline --transparent-huge-pages off`
/// sets), else the system's mode, e.g. `madvise` (huge pages where the allocator asks for
/// them, as mimalloc does); `unknown` where the kernel does not say.
pub fn transparent_huge_pages() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))
        .map(str::trim);
    if allowed == Some("0") {
        return "off for this process".into();
    }
    // The selected mode is the bracketed one: `always [madvise] never`.
    selected_mode(
        &std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default(),
    )
}

/// The bracketed mode of a `/sys` choice file such as `always [madvise] never`.
pub fn selected_mode(modes: &str) -> String {
    modes
        .split_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .map_or_else(|| "unknown".into(), |(mode, _)| mode.to_owned())
}

#[cfg(target_os = "linux")]
fn ticks_per_second() -> u64 {
    rustix::param::clock_ticks_per_second()
}

#[cfg(not(target_os = "linux"))]
fn ticks_per_second() -> u64 {
    100
}

#[cfg(target_os = "linux")]
fn page_size() -> u64 {
    rustix::param::page_size() as u64
}

#[cfg(not(target_os = "linux"))]
fn page_size() -> u64 {
    4096
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_times_are_found_after_a_command_name_with_spaces_and_parentheses() {
        // Fields 1-15 of a real line, with a name that would fool a split on spaces.
        let stat = "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 2040 0 0 0 250 75 0 0 20 0";
        let usage = parse(stat, "5000 1200 300 1 0 900 0", 100, 4096).unwrap();
        assert_eq!(usage.user, Duration::from_millis(2500));
        assert_eq!(usage.system, Duration::from_millis(750));
        assert_eq!(usage.resident, 1200 * 4096);
        assert_eq!(
            parse("4242 (cut) S 1 2", "1 2", 100, 4096),
            None,
            "too few fields"
        );
    }

    #[test]
    fn spent_is_per_transaction_and_split_between_user_and_kernel() {
        let before = Usage {
            user: Duration::from_secs(1),
            system: Duration::from_secs(1),
            resident: 1 << 20,
            switches: Switches {
                voluntary: 10,
                involuntary: 1,
            },
        };
        let after = Usage {
            user: Duration::from_secs(4),
            system: Duration::from_secs(2),
            resident: 5 << 20,
            switches: Switches {
                voluntary: 310,
                involuntary: 51,
            },
        };
        let spent = after.since(&before);
        assert_eq!(spent.cpu_us_per_txn(100_000), 40.0);
        assert_eq!(spent.switches_per_txn(100), (3.0, 0.5));
        assert_eq!(spent.system_share(), 0.25);
        assert_eq!(spent.resident_growth_per_txn(1024), 4096.0);
        assert_eq!(
            before.since(&after).resident_growth,
            -(4 << 20),
            "memory can shrink"
        );
    }

    #[test]
    fn the_selected_mode_is_the_bracketed_one() {
        assert_eq!(selected_mode("always [madvise] never\n"), "madvise");
        assert_eq!(selected_mode(""), "unknown");
    }

    #[test]
    fn a_threads_switches_are_counted_after_it_ends() {
        if cfg!(target_os = "linux") {
            // A thread that sleeps switches voluntarily, and its switches stay counted once
            // it has ended.
            let before = process_switches();
            std::thread::spawn(|| {
                for _ in 0..5 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .join()
            .unwrap();
            let after = process_switches();
            assert!(
                after.voluntary >= before.voluntary + 5,
                "{before:?} {after:?}"
            );
        }
    }

    #[test]
    fn this_process_reads_its_own_counters() {
        if cfg!(target_os = "linux") {
            let first = Usage::now().expect("/proc/self on Linux");
            assert!(first.resident > 0);
            // Spend CPU time until the clock advances a tick (10 ms), however busy the
            // machine running the tests is.
            let start = std::time::Instant::now();
            let mut x = 0u64;
            loop {
                for _ in 0..100_000 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
                let now = Usage::now().unwrap();
                if now.user + now.system > first.user + first.system {
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "no CPU time counted"
                );
            }
        }
    }
}
