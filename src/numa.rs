//! Where threads run: the machine's topology, and the pinning policies of `waterline lab`.
//!
//! The book measured its ReadView change twice: spread over 4 NUMA nodes (Fig 8-20, a large
//! gain) and with mysqld bound to NUMA node 0 (Fig 8-24, "SMP", a small one), because the
//! cost it removed was cache lines crossing nodes. A policy says where client threads run:
//!
//! | policy | client threads (and tokio workers) | memory |
//! |---|---|---|
//! | `none` | where the OS puts them | first touch (the OS default) |
//! | `compact` | thread i on PU i, in hwloc's order: fill a core, then the next | on the PU's NUMA node |
//! | `spread` | round-robin over NUMA nodes, one PU per core before a core's second PU | on the PU's NUMA node |
//! | `node:N` | everything (load, clients, engine threads) on NUMA node N's PUs, as `numactl --cpunodebind=N --membind=N` | on node N |
//!
//! `node:N` binds the thread that opens the database, before it loads: threads inherit their
//! creator's binding on Linux, so the loader, the engine's threads and the clients all stay
//! on node N. The others bind each client thread as it starts.
//!
//! The topology and pinning come from hwloc, through the `numa` cargo feature (Debian's
//! `libhwloc-dev`). Without the feature, only `none` works, and the others say how to get it.

use std::fmt;
use std::str::FromStr;

use waterline_tpcc::{Machine, OnThreadStart};

/// A pinning policy (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// No pinning.
    None,
    /// Fill PUs in hwloc's order.
    Compact,
    /// Round-robin over NUMA nodes and cores.
    Spread,
    /// Everything on one NUMA node (by logical index).
    Node(usize),
}

impl FromStr for Pin {
    type Err = String;

    fn from_str(s: &str) -> Result<Pin, String> {
        match s {
            "none" => Ok(Pin::None),
            "compact" => Ok(Pin::Compact),
            "spread" => Ok(Pin::Spread),
            _ => match s.strip_prefix("node:").map(str::parse) {
                Some(Ok(n)) => Ok(Pin::Node(n)),
                _ => Err(format!(
                    "{s:?}: expected none, compact, spread or node:N (a NUMA node's number)"
                )),
            },
        }
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pin::None => f.write_str("none"),
            Pin::Compact => f.write_str("compact"),
            Pin::Spread => f.write_str("spread"),
            Pin::Node(n) => write!(f, "node:{n}"),
        }
    }
}

/// Why a placement cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// Pinning needs hwloc.
    #[error(
        "--pin {0} needs the numa feature: build with `--features numa` (Debian's libhwloc-dev \
         and pkg-config must be installed), or use --pin none"
    )]
    NoFeature(Pin),
    /// The machine has no such NUMA node.
    #[error("--pin node:{node}: this machine has NUMA nodes 0 to {}", .nodes.saturating_sub(1))]
    NoSuchNode {
        /// The node asked for.
        node: usize,
        /// How many there are.
        nodes: usize,
    },
    /// hwloc refused.
    #[error("hwloc: {0}")]
    Hwloc(String),
}

/// This machine, as far as this build can tell (hwloc's topology with the `numa` feature).
pub fn machine() -> Machine {
    imp::machine()
}

/// A policy, ready to apply: [`Placement::enter`] before a database is loaded,
/// [`Placement::on_start`] for the driver's threads, [`Placement::leave`] after.
#[derive(Clone)]
pub struct Placement {
    pin: Pin,
    inner: imp::Inner,
}

impl fmt::Debug for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Placement").field("pin", &self.pin).finish()
    }
}

impl Placement {
    /// Prepares `pin` on this machine; an error if this build or machine cannot do it.
    pub fn new(pin: Pin) -> Result<Placement, PinError> {
        Ok(Placement {
            pin,
            inner: imp::Inner::new(pin)?,
        })
    }

    /// The policy.
    pub fn pin(&self) -> Pin {
        self.pin
    }

    /// Binds the calling thread (and so every thread it starts from now on) for `node:N`;
    /// nothing for the other policies.
    pub fn enter(&self) -> Result<(), PinError> {
        self.inner.enter()
    }

    /// Undoes [`Placement::enter`]: the calling thread may run anywhere again.
    pub fn leave(&self) -> Result<(), PinError> {
        self.inner.leave()
    }

    /// What each client thread runs as it starts (`compact` and `spread`).
    pub fn on_start(&self) -> Option<OnThreadStart> {
        self.inner.on_start()
    }

    /// The machine, with what this placement did (threads pinned, memory bound or why not).
    pub fn machine(&self) -> Machine {
        Machine {
            pinning: self.inner.describe(self.pin),
            ..machine()
        }
    }
}

#[cfg(not(feature = "numa"))]
mod imp {
    use super::{Machine, OnThreadStart, Pin, PinError};

    pub(super) fn machine() -> Machine {
        Machine::cpus_only()
    }

    #[derive(Clone)]
    pub(super) struct Inner;

    impl Inner {
        pub(super) fn new(pin: Pin) -> Result<Inner, PinError> {
            match pin {
                Pin::None => Ok(Inner),
                other => Err(PinError::NoFeature(other)),
            }
        }

        pub(super) fn enter(&self) -> Result<(), PinError> {
            Ok(())
        }

        pub(super) fn leave(&self) -> Result<(), PinError> {
            Ok(())
        }

        pub(super) fn on_start(&self) -> Option<OnThreadStart> {
            None
        }

        pub(super) fn describe(&self, _: Pin) -> String {
            "none".into()
        }
    }
}

#[cfg(feature = "numa")]
mod imp {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use hwlocality::Topology;
    use hwlocality::cpu::binding::CpuBindingFlags;
    use hwlocality::cpu::cpuset::CpuSet;
    use hwlocality::memory::binding::{MemoryBindingFlags, MemoryBindingPolicy};
    use hwlocality::memory::nodeset::NodeSet;
    use hwlocality::object::types::ObjectType;
    use parking_lot::Mutex;

    use super::{Machine, OnThreadStart, Pin, PinError};

    fn hwloc(e: impl std::fmt::Display) -> PinError {
        PinError::Hwloc(e.to_string())
    }

    fn topology() -> Result<Topology, PinError> {
        Topology::new().map_err(hwloc)
    }

    fn version() -> String {
        let v = hwlocality::hwloc_api_version();
        format!("API {}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff)
    }

    pub(super) fn machine() -> Machine {
        let Ok(topology) = topology() else {
            return Machine::cpus_only();
        };
        let count = |ty| topology.objects_with_type(ty).len();
        Machine {
            topology: Some(waterline_tpcc::Topology {
                packages: count(ObjectType::Package),
                numa_nodes: count(ObjectType::NUMANode),
                cores: count(ObjectType::Core),
                pus: count(ObjectType::PU),
                hwloc: version(),
            }),
            ..Machine::cpus_only()
        }
    }

    /// Where one thread goes: its CPUs and its memory's node(s).
    #[derive(Clone, Debug)]
    struct Slot {
        cpus: CpuSet,
        nodes: NodeSet,
    }

    /// What the placement did, for the report.
    #[derive(Debug, Default)]
    struct Outcome {
        pinned: AtomicU64,
        memory_bound: AtomicU64,
        errors: Mutex<Vec<String>>,
    }

    impl Outcome {
        fn error(&self, what: String) {
            let mut errors = self.errors.lock();
            if errors.len() < 4 && !errors.contains(&what) {
                errors.push(what);
            }
        }
    }

    #[derive(Clone)]
    pub(super) struct Inner {
        pin: Pin,
        topology: Arc<Topology>,
        /// Thread i takes `slots[i % len]` (compact, spread); `node:N` has one slot.
        slots: Arc<[Slot]>,
        /// Whether this platform binds a thread's memory.
        binds_memory: bool,
        outcome: Arc<Outcome>,
    }

    /// The PUs in `pin`'s order, each with its NUMA node(s).
    fn slots(topology: &Topology, pin: Pin) -> Result<Vec<Slot>, PinError> {
        let nodes: Vec<_> = topology.objects_with_type(ObjectType::NUMANode).collect();
        if let Pin::Node(n) = pin {
            let node = nodes.get(n).ok_or(PinError::NoSuchNode {
                node: n,
                nodes: nodes.len(),
            })?;
            let (Some(cpus), Some(set)) = (node.cpuset(), node.nodeset()) else {
                return Err(hwloc(format!("NUMA node {n} has no CPU or node set")));
            };
            return Ok(vec![Slot {
                cpus: cpus.clone_target(),
                nodes: set.clone_target(),
            }]);
        }
        // Each PU with its node's position and its rank inside its core (0 for a core's
        // first hardware thread).
        let mut seen_in_core = std::collections::HashMap::new();
        let mut pus = Vec::new();
        for pu in topology.objects_with_type(ObjectType::PU) {
            let (Some(cpus), Some(set)) = (pu.cpuset(), pu.nodeset()) else {
                continue;
            };
            let core = pu
                .first_ancestor_with_type(ObjectType::Core)
                .map_or(pu.logical_index(), |c| c.logical_index());
            let rank = seen_in_core.entry(core).or_insert(0usize);
            let node = nodes
                .iter()
                .position(|n| n.nodeset().is_some_and(|s| s.intersects(&*set)))
                .unwrap_or(0);
            pus.push((
                node,
                *rank,
                Slot {
                    cpus: cpus.clone_target(),
                    nodes: set.clone_target(),
                },
            ));
            *rank += 1;
        }
        if pin == Pin::Spread {
            // Round-robin over nodes; inside a node, every core's first PU before any
            // second one.
            let last = nodes.len().max(1) - 1;
            let mut by_node: Vec<Vec<(usize, Slot)>> = vec![Vec::new(); last + 1];
            for (node, rank, slot) in pus.drain(..) {
                by_node[node.min(last)].push((rank, slot));
            }
            for list in &mut by_node {
                list.sort_by_key(|(rank, _)| *rank);
            }
            let longest = by_node.iter().map(Vec::len).max().unwrap_or(0);
            let mut order = Vec::new();
            for i in 0..longest {
                for list in &by_node {
                    if let Some((_, slot)) = list.get(i) {
                        order.push(slot.clone());
                    }
                }
            }
            return Ok(order);
        }
        Ok(pus.into_iter().map(|(_, _, slot)| slot).collect())
    }

    impl Inner {
        pub(super) fn new(pin: Pin) -> Result<Inner, PinError> {
            let topology = topology()?;
            let slots = match pin {
                Pin::None => Vec::new(),
                _ => slots(&topology, pin)?,
            };
            if pin != Pin::None && slots.is_empty() {
                return Err(hwloc("no PU to pin to"));
            }
            let binds_memory = topology
                .feature_support()
                .memory_binding()
                .is_some_and(|m| m.set_current_thread() && m.bind_policy());
            Ok(Inner {
                pin,
                topology: Arc::new(topology),
                slots: slots.into(),
                binds_memory,
                outcome: Arc::default(),
            })
        }

        /// Binds the calling thread to `slot`: its CPUs, and its memory where supported.
        fn bind(&self, slot: &Slot) -> Result<(), PinError> {
            self.topology
                .bind_cpu(&slot.cpus, CpuBindingFlags::THREAD)
                .map_err(hwloc)?;
            // Relaxed: counts for the report.
            self.outcome.pinned.fetch_add(1, Ordering::Relaxed);
            if self.binds_memory {
                self.topology
                    .bind_memory(
                        &slot.nodes,
                        MemoryBindingPolicy::Bind,
                        MemoryBindingFlags::THREAD,
                    )
                    .map_err(hwloc)?;
                self.outcome.memory_bound.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }

        pub(super) fn enter(&self) -> Result<(), PinError> {
            match self.slots.first() {
                Some(slot) if self.is_node() => self.bind(slot),
                _ => Ok(()),
            }
        }

        pub(super) fn leave(&self) -> Result<(), PinError> {
            if !self.is_node() {
                return Ok(());
            }
            let everywhere = Slot {
                cpus: self.topology.cpuset().clone_target(),
                nodes: self.topology.nodeset().clone_target(),
            };
            self.bind(&everywhere)
        }

        fn is_node(&self) -> bool {
            matches!(self.pin, Pin::Node(_))
        }

        pub(super) fn on_start(&self) -> Option<OnThreadStart> {
            if self.slots.is_empty() || self.is_node() {
                return None;
            }
            let inner = self.clone();
            Some(Arc::new(move |thread: usize| {
                let slot = &inner.slots[thread % inner.slots.len()];
                if let Err(e) = inner.bind(slot) {
                    inner.outcome.error(e.to_string());
                }
            }))
        }

        pub(super) fn describe(&self, pin: Pin) -> String {
            if pin == Pin::None {
                return "none".into();
            }
            let o = &self.outcome;
            let (pinned, bound) = (
                o.pinned.load(Ordering::Relaxed),
                o.memory_bound.load(Ordering::Relaxed),
            );
            let memory = if self.binds_memory {
                format!("{bound} memory binding(s)")
            } else {
                "memory not bound (this platform cannot bind a thread's memory)".into()
            };
            let errors = o.errors.lock();
            let errors = if errors.is_empty() {
                String::new()
            } else {
                format!("; errors: {}", errors.join("; "))
            };
            format!("{pin}: {pinned} thread binding(s), {memory}{errors}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_print() {
        for text in ["none", "compact", "spread", "node:0", "node:3"] {
            let pin: Pin = text.parse().unwrap();
            assert_eq!(pin.to_string(), text);
        }
        let bad = "node:x".parse::<Pin>().unwrap_err();
        assert!(bad.contains("none, compact, spread or node:N"), "{bad}");
    }

    #[test]
    fn no_pinning_works_in_every_build() {
        let placement = Placement::new(Pin::None).unwrap();
        assert!(placement.on_start().is_none());
        placement.enter().unwrap();
        placement.leave().unwrap();
        assert_eq!(placement.machine().pinning, "none");
        assert!(placement.machine().cpus >= 1);
    }

    #[cfg(not(feature = "numa"))]
    #[test]
    fn without_the_feature_pinning_says_how_to_get_it() {
        let error = Placement::new(Pin::Spread).unwrap_err().to_string();
        assert!(error.contains("--features numa"), "{error}");
        assert!(error.contains("libhwloc-dev"), "{error}");
        assert!(machine().topology.is_none());
    }

    #[cfg(feature = "numa")]
    #[test]
    fn the_topology_is_counted() {
        let m = machine();
        let t = m.topology.clone().expect("hwloc reads the topology");
        assert!(t.packages >= 1 && t.numa_nodes >= 1, "{t:?}");
        assert!(t.cores >= 1 && t.cores <= t.pus, "{t:?}");
        assert!(m.describe().contains("NUMA node"), "{}", m.describe());
    }

    #[cfg(feature = "numa")]
    #[test]
    fn compact_and_spread_pin_each_thread_to_one_pu() {
        for pin in [Pin::Compact, Pin::Spread] {
            let placement = Placement::new(pin).unwrap();
            let on_start = placement.on_start().expect("threads are pinned one by one");
            let cpus = std::thread::spawn(move || {
                on_start(1);
                // Linux's available_parallelism is the thread's affinity mask.
                std::thread::available_parallelism().unwrap().get()
            })
            .join()
            .unwrap();
            assert_eq!(cpus, 1, "{pin}");
            let described = placement.machine().pinning;
            assert!(
                described.starts_with(&format!("{pin}: 1 thread binding")),
                "{described}"
            );
        }
    }

    #[cfg(feature = "numa")]
    #[test]
    fn node_binds_the_entering_thread_and_what_it_starts() {
        let t = machine().topology.unwrap();
        let error = Placement::new(Pin::Node(t.numa_nodes)).unwrap_err();
        assert!(matches!(error, PinError::NoSuchNode { .. }), "{error}");
        let placement = Placement::new(Pin::Node(0)).unwrap();
        assert!(placement.on_start().is_none());
        std::thread::spawn(move || {
            placement.enter().unwrap();
            let inherited = std::thread::spawn(std::thread::available_parallelism)
                .join()
                .unwrap()
                .unwrap()
                .get();
            // A thread started now inherits the node's PUs: all of them on one node.
            assert!(inherited >= 1 && inherited <= t.pus, "{inherited}");
            if t.numa_nodes == 1 {
                assert_eq!(inherited, t.pus);
            }
            placement.leave().unwrap();
            assert!(
                placement
                    .machine()
                    .pinning
                    .starts_with("node:0: 2 thread binding")
            );
        })
        .join()
        .unwrap();
    }
}
