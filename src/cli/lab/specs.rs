//! The experiments of `waterline lab`: for each, its `waterline tpcc` flags, its book
//! figures, the metric its summary shows beside throughput, and what a small machine cannot
//! show. One function of specs in the chapter's order: reading them side by side is the
//! point.

use waterline::tpcc::input::Kind;
use waterline::tpcc::{Point, report::wake_efficiency};
use waterline::txn::Counter;

use super::Experiment;
use crate::cli::tpcc::admission_limit;

/// A value computed from one point for the summary's table.
pub(super) type Metric = fn(&Point) -> Option<f64>;

/// One experiment: what it compares, with which flags, and what its summary reports.
pub(super) struct Spec {
    pub(super) experiment: Experiment,
    pub(super) name: &'static str,
    pub(super) title: &'static str,
    pub(super) book: &'static str,
    /// `waterline tpcc` flags of a full run.
    pub(super) full: Vec<String>,
    /// Replacing `full`'s sweep with `--quick`.
    pub(super) quick: Vec<String>,
    /// A per-point metric beside throughput: its name, the CSV columns it comes from.
    pub(super) metric: Option<(&'static str, &'static [&'static str], Metric)>,
    /// What this experiment needs that a small machine does not have, and why that matters.
    pub(super) limits: fn(&waterline::tpcc::Machine) -> Option<String>,
    /// Over the protocol: one `waterline serve` per configuration (label, its flags), which
    /// the driver loads and measures over `mysql://`; for `instances`, the `taskset` that
    /// places each instance. Empty: in process.
    pub(super) servers: Vec<(String, Vec<String>)>,
}

pub(super) fn flags(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

fn stat(p: &Point, c: Counter) -> u64 {
    p.stats.map_or(0, |s| s.get(c))
}

fn few_cores(m: &waterline::tpcc::Machine) -> String {
    let nodes = m.topology.as_ref().map(|t| t.numa_nodes);
    format!(
        "This machine has {} CPUs and {}. ",
        m.cpus,
        match nodes {
            Some(n) => format!("{n} NUMA node(s)"),
            None => "an unknown number of NUMA nodes (built without the numa feature)".into(),
        }
    )
}

pub(super) const QUICK: &str = "--items 2000 --customers 100 --duration 1 --warmup 0.2";

pub(super) fn specs(cpus: usize) -> Vec<Spec> {
    vec![
        Spec {
            experiment: Experiment::TrxShards,
            name: "trx-shards",
            title: "The registry of read-write transactions behind one latch (baseline) or 256",
            book: "Fig 8-1, 8-2 (the trx-sys mutex's contention, then sharded)",
            full: flags(
                "--compare trx-shards=1,256 --isolation read-committed \
                 --clients 1,64,256,1024 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 1,8"),
            metric: Some((
                "registry latch waits per 1,000 commits",
                &["registry_latch_waits", "commits"],
                |p| {
                    ratio(
                        1000 * stat(p, Counter::RegistryLatchWaits),
                        stat(p, Counter::Commits),
                    )
                },
            )),
            limits: |m| {
                (m.cpus < 32).then(|| {
                    few_cores(m)
                        + "The book found the trx-sys mutex among the hottest latches of a \
                           large server, where every transaction's begin and end crossed it \
                           from dozens of cores at once. With few cores, few threads contend \
                           for one registry latch, so expect close throughput; the waits per \
                           commit show whether the one latch is contended at all."
                })
            },
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::Readview,
            name: "readview",
            title: "ReadView kinds: MySQL's sorted vector, the hybrid bitmap + vector, CSN",
            book: "Fig 8-20 and 8-22 (NUMA), 8-24 (SMP: bound to node 0)",
            full: flags(
                "--compare snapshot=vector,hybrid,csn --isolation read-committed \
                 --clients 1,8,64,256,1024 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 1,4"),
            metric: Some((
                "bytes copied per view",
                &["view_bytes_copied", "views_opened"],
                |p| {
                    ratio(
                        stat(p, Counter::ViewBytesCopied),
                        stat(p, Counter::ViewsOpened),
                    )
                },
            )),
            limits: |m| {
                let numa = m.topology.as_ref().is_some_and(|t| t.numa_nodes >= 2);
                (!numa || m.cpus < 32).then(|| {
                    few_cores(m)
                        + "The book's gain came from the active-transaction list's cache lines \
                           crossing NUMA nodes while hundreds of threads copied it under the \
                           trx-sys latch (4 nodes, hundreds of cores); bound to one node (Fig \
                           8-24) the gain was small. With few cores and one node, the copy is \
                           a small part of a transaction and the vector's size stays small, so \
                           expect the kinds to be close; the bytes copied per view still show \
                           the mechanism."
                })
            },
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::DoubleLatch,
            name: "double-latch",
            title: "View close under the trx-sys latch (baseline) or without it",
            book: "Fig 8-26, 8-27",
            full: flags(
                "--compare view-close=latched,latch-free --isolation read-committed \
                 --clients 1,64,256,1024,2048 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 1,8"),
            metric: Some((
                "trx-sys latch acquisitions per commit",
                &["trx_sys_latch", "commits"],
                |p| ratio(stat(p, Counter::TrxSysLatch), stat(p, Counter::Commits)),
            )),
            limits: |m| {
                (m.cpus < 32).then(|| {
                    few_cores(m)
                        + "The book saw throughput fall past 500 clients on a large server, \
                           where threads on many cores queue for the trx-sys latch. With few \
                           cores, few threads run at once, so the latch is rarely contended \
                           and the two are expected to be close; the latch acquisitions per \
                           commit show what the change removes."
                })
            },
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::GroupCommit,
            name: "group-commit",
            title: "Group commit: followers woken by broadcast (baseline) or point to point",
            book: "Fig 8-15, 8-16, 8-17",
            full: flags(
                "--compare wakeup=broadcast,parker --flush every-commit \
                 --clients 1,8,64,256 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 1,8"),
            metric: Some((
                "wake-up efficiency (useful / all)",
                &["gc_wakeups", "gc_wasted_wakeups", "gc_wake_efficiency"],
                |p| p.commit.and_then(|c| wake_efficiency(&c)),
            )),
            limits: |m| {
                (m.cpus < 32).then(|| {
                    few_cores(m)
                        + "A broadcast wakes every waiting follower; on the book's server \
                           hundreds were waiting, so most wake-ups were wasted (52.7% useful) \
                           and cost CPU. With few cores, groups are small and the wasted \
                           wake-ups cost little throughput; the wake-ups per follower still \
                           show the difference. Every commit waits for fdatasync on this \
                           machine's disk, which bounds both."
                })
            },
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::Throttle,
            name: "throttle",
            title: "Admission: unlimited, a limit of 4 per CPU, a thread pool, adaptive",
            book: "Fig 8-33, 8-35, 8-36",
            // Clients are OS threads, as MySQL's connections are. As tokio tasks they show
            // nothing here: an in-process task runs its transaction to the end without
            // yielding, so no more transactions are inside the engine than there are
            // workers, whatever the admission policy.
            full: flags(&format!(
                "--compare admission=unlimited,limit:{},pool:{cpus},adaptive --runtime threads \
                 --clients 1,64,512,2048 --duration 20 --warmup 3",
                admission_limit(cpus)
            )),
            quick: flags("--clients 1,16"),
            metric: Some(("NewOrder p99 (ms)", &["new_order_p99_ms"], |p| {
                Some(p.measurement.kinds[Kind::NewOrder.index()].quantile_ms(0.99))
            })),
            limits: |m| {
                (m.cpus < 32).then(|| {
                    few_cores(m)
                        + &format!(
                            "The book let 512 user threads into the transaction system of a \
                             large server; the limit here is four per CPU ({}). Clients are OS \
                             threads, one per connection as in MySQL, and the collapse the \
                             limit prevents starts when many more of them run than there are \
                             CPUs (on the 2-CPU machine this was written on, between 64 and 512 \
                             threads). The thread pool runs one transaction per pool thread \
                             (one per CPU).",
                            admission_limit(m.cpus)
                        )
                })
            },
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::Planner,
            name: "planner",
            title: "Range analysis: fixed vs MySQL 8.0.27's regression, over a long run",
            book: "Fig 8-11, 8-12, 8-13",
            full: flags(
                "--compare planner=fixed,legacy8027 --backend sql --clients 8 \
                 --duration 30 --warmup 3",
            ),
            quick: flags("--clients 2"),
            metric: Some(("ORDER_LINE rows after the point", &["order_lines"], |p| {
                Some(p.order_lines as f64)
            })),
            limits: |_| None,
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::Isolation,
            name: "isolation",
            title: "READ COMMITTED vs REPEATABLE READ at low conflict",
            book: "8.2 (RC opens a view per statement, RR one per transaction)",
            full: flags(
                "--compare isolation=read-committed,repeatable-read --warehouses 8 \
                 --clients 1,2,4,8 --duration 20 --warmup 3",
            ),
            quick: flags("--warehouses 2 --clients 1,2"),
            metric: Some((
                "views opened per transaction",
                &["views_opened", "commits", "rollbacks"],
                |p| {
                    ratio(
                        stat(p, Counter::ViewsOpened),
                        stat(p, Counter::Commits) + stat(p, Counter::Rollbacks),
                    )
                },
            )),
            limits: |_| None,
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::AllFixes,
            name: "all-fixes",
            title: "Every baseline against every fix, with and without an admission limit",
            book: "Fig 8-25 (the improved MySQL against the original, TPC-C)",
            full: flags(
                "--compare preset=baseline,baseline+limit,fixed,fixed+limit \
                 --isolation read-committed --flush every-commit \
                 --clients 1,64,256,1024 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 1,8"),
            metric: Some((
                "trx-sys latch waits per 1,000 commits",
                &["trx_sys_latch_waits", "commits"],
                |p| {
                    ratio(
                        1000 * stat(p, Counter::TrxSysLatchWaits),
                        stat(p, Counter::Commits),
                    )
                },
            )),
            limits: |m| {
                (m.cpus < 32).then(|| {
                    few_cores(m)
                        + "The book's fixes together gained most where hundreds of threads on \
                           many cores met on the trx-sys latch, the view copies and the \
                           group-commit wake-ups. With few cores each fix alone is close to \
                           noise here (see its own experiment), and the limit matters once \
                           clients far outnumber the CPUs. Every commit waits for fdatasync on \
                           this machine's disk, which bounds all four."
                })
            },
            servers: Vec::new(),
        },
        Spec {
            experiment: Experiment::ThreadPool,
            name: "thread-pool",
            title: "Over the MySQL protocol: a thread per connection, the thread pool, or an \
                    admission limit",
            book: "Fig 8-33, 8-35 (Percona Server's thread pool against one thread per \
                   connection, and against the transaction throttle)",
            // The driver's clients are tokio tasks, so that the threads that differ are the
            // server's.
            full: flags(
                "--runtime tasks --isolation read-committed --clients 16,256,1024 \
                 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 2,16"),
            metric: Some((
                "server context switches per transaction",
                &["voluntary_switches_per_txn", "involuntary_switches_per_txn"],
                |p| {
                    let t = p.per_txn()?;
                    Some(t.switches.0 + t.switches.1)
                },
            )),
            limits: |m| {
                (m.cpus < 32).then(|| {
                    few_cores(m)
                        + "On the book's server Percona's pool lost throughput against a \
                           thread per connection (Fig 8-33) and the transaction throttle won \
                           (Fig 8-35): the pool runs about one statement per group (one group \
                           per CPU), so a transaction's statements queue behind other \
                           connections', while the throttle lets a bounded number of whole \
                           transactions run. Here the driver runs on the same CPUs as the \
                           server and every statement crosses the loopback; the collapse the \
                           limit prevents starts only when connections far outnumber CPUs."
                })
            },
            servers: vec![
                ("one-thread-per-connection".into(), Vec::new()),
                (
                    "pool-of-threads".into(),
                    flags("--thread-handling pool-of-threads"),
                ),
                (
                    format!("limit:{}", admission_limit(cpus)),
                    flags(&format!("--admission limit:{}", admission_limit(cpus))),
                ),
            ],
        },
        Spec {
            experiment: Experiment::Instances,
            name: "instances",
            title: "Two server instances on half the CPUs each, run apart, then together",
            book: "Fig 8-30, 8-31, 8-32 (two MySQL instances apart and together: the total, \
                   after the MVCC fixes)",
            full: flags(
                "--runtime tasks --isolation read-committed --clients 16,64,256 \
                 --duration 20 --warmup 3",
            ),
            quick: flags("--clients 2,8"),
            metric: Some(("server CPU µs per transaction", &["cpu_us_per_txn"], |p| {
                p.per_txn().map(|t| t.cpu_us)
            })),
            limits: |m| {
                Some(
                    few_cores(m)
                        + "The book ran two instances on one NUMA server, one per node, and \
                           found that together they reached about what each reached alone \
                           (the total halved) once the MVCC fixes had removed the super-linear \
                           effect of its section 2.1. Here each instance gets half the CPUs \
                           (taskset), the driver runs unpinned on all of them, and both \
                           share the same memory node and caches; on a machine of one NUMA \
                           node nothing NUMA can show.",
                )
            },
            servers: vec![
                (
                    "instance-1".into(),
                    flags(&format!("taskset -c {}", super::served::half(0, cpus))),
                ),
                (
                    "instance-2".into(),
                    flags(&format!("taskset -c {}", super::served::half(1, cpus))),
                ),
            ],
        },
    ]
}

/// How many measured segments the planner experiment runs per configuration.
pub(super) fn planner_segments(quick: bool) -> usize {
    if quick { 3 } else { 10 }
}
