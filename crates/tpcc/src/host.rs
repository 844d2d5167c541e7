//! The machine a run ran on, so that every report says where its numbers came from: as
//! Linux describes it (`/proc` and `/sys`: the CPU model, sockets, physical cores, NUMA
//! nodes, memory, kernel and the system's transparent huge page mode; [`Host`]), as hwloc
//! does with the `numa` feature ([`Topology`]), and how the run placed its threads
//! ([`Machine`]).

use serde_json::{Value as Json, json};

use crate::process::{selected_mode, transparent_huge_pages};

/// What Linux says about this machine. Fields it does not say are `unknown` (or 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// `model name` of `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Distinct `physical id`s of `/proc/cpuinfo` (1 where the kernel shows none).
    pub sockets: usize,
    /// Distinct (`physical id`, `core id`) pairs: physical cores, not hyper-threads.
    pub cores: usize,
    /// Online NUMA nodes (`/sys/devices/system/node/node*`; 1 on a kernel without NUMA).
    pub numa_nodes: usize,
    /// Memory, MiB (`MemTotal` of `/proc/meminfo`).
    pub memory_mib: u64,
    /// The kernel's release (`/proc/sys/kernel/osrelease`).
    pub kernel: String,
    /// The system's transparent huge page mode, e.g. `madvise`
    /// (`/sys/kernel/mm/transparent_hugepage/enabled`).
    pub thp: String,
    /// The host name (`/proc/sys/kernel/hostname`).
    pub name: String,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl Host {
    /// This machine.
    pub fn this() -> Host {
        let (cpu_model, sockets, cores) = cpuinfo(&read("/proc/cpuinfo"));
        let numa_nodes = std::fs::read_dir("/sys/devices/system/node")
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .filter(|e| {
                        let name = e.file_name();
                        let name = name.to_string_lossy();
                        name.strip_prefix("node")
                            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    })
                    .count()
            })
            .unwrap_or(0)
            .max(1);
        let trimmed = |path| {
            let text = read(path);
            match text.trim() {
                "" => "unknown".to_owned(),
                t => t.to_owned(),
            }
        };
        Host {
            cpu_model,
            sockets,
            cores,
            numa_nodes,
            memory_mib: memory_mib(&read("/proc/meminfo")),
            kernel: trimmed("/proc/sys/kernel/osrelease"),
            thp: selected_mode(&read("/sys/kernel/mm/transparent_hugepage/enabled")),
            name: trimmed("/proc/sys/kernel/hostname"),
        }
    }

    /// One line: `AMD EPYC 7B13, 1 socket, 2 cores, 1 NUMA node, 23.5 GiB; Linux 6.1.0;
    /// transparent huge pages: madvise`.
    pub fn describe(&self) -> String {
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        format!(
            "{}, {}, {}, {}, {:.1} GiB; Linux {}; transparent huge pages (system): {}",
            self.cpu_model,
            plural(self.sockets, "socket"),
            plural(self.cores, "core"),
            plural(self.numa_nodes, "NUMA node"),
            self.memory_mib as f64 / 1024.0,
            self.kernel,
            self.thp
        )
    }

    pub(crate) fn json(&self) -> Json {
        json!({
            "cpu_model": self.cpu_model,
            "sockets": self.sockets,
            "cores": self.cores,
            "numa_nodes": self.numa_nodes,
            "memory_mib": self.memory_mib,
            "kernel": self.kernel,
            "transparent_huge_pages_system": self.thp,
            "hostname": self.name,
        })
    }
}

/// The CPU model, sockets and physical cores `/proc/cpuinfo`'s `text` shows.
fn cpuinfo(text: &str) -> (String, usize, usize) {
    let mut model = None;
    let mut sockets = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    let mut processors = 0;
    // One block per logical CPU, separated by a blank line.
    for block in text.split("\n\n") {
        let field = |name: &str| {
            block.lines().find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_owned())
            })
        };
        if field("processor").is_none() {
            continue;
        }
        processors += 1;
        if model.is_none() {
            model = field("model name").or_else(|| field("Model"));
        }
        let socket = field("physical id");
        if let Some(s) = &socket {
            sockets.insert(s.clone());
        }
        if let Some(core) = field("core id") {
            cores.insert((socket, core));
        }
    }
    (
        model.unwrap_or_else(|| "unknown CPU".into()),
        sockets.len().max(1),
        if cores.is_empty() {
            processors
        } else {
            cores.len()
        },
    )
}

/// `MemTotal` of `/proc/meminfo`'s `text`, in MiB.
fn memory_mib(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

/// The machine's topology, as hwloc reports it (the `numa` feature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Processor packages (sockets).
    pub packages: usize,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// Cores.
    pub cores: usize,
    /// Processing units (hardware threads).
    pub pus: usize,
    /// The hwloc library's version.
    pub hwloc: String,
}

/// The machine a run ran on, as far as this build can tell, and how its threads were placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Logical CPUs this process may use.
    pub cpus: usize,
    /// The topology; `None` when built without the `numa` feature.
    pub topology: Option<Topology>,
    /// How client threads were pinned and memory bound (`none` when not).
    pub pinning: String,
    /// Whether this process's memory may be backed by transparent huge pages, as the
    /// kernel says (see [`crate::process::transparent_huge_pages`]).
    pub huge_pages: String,
    /// What Linux says about the machine.
    pub host: Host,
}

impl Machine {
    /// This machine without a topology: only its CPU count is known.
    pub fn cpus_only() -> Machine {
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            topology: None,
            pinning: "none".into(),
            huge_pages: transparent_huge_pages(),
            host: Host::this(),
        }
    }

    /// One line: the host (see [`Host::describe`]), then `2 CPUs for this process; hwloc: 1
    /// package, 1 NUMA node, 2 cores, 2 PUs (API 2.9.0); pinning: none; transparent huge
    /// pages: off for this process`.
    pub fn describe(&self) -> String {
        let topology = match &self.topology {
            Some(t) => format!(
                "hwloc: {} package(s), {} NUMA node(s), {} core(s), {} PU(s) ({})",
                t.packages, t.numa_nodes, t.cores, t.pus, t.hwloc
            ),
            None => "no hwloc topology (built without the numa feature)".into(),
        };
        format!(
            "{}; {} CPUs for this process; {topology}; pinning: {}; transparent huge pages: {}",
            self.host.describe(),
            self.cpus,
            self.pinning,
            self.huge_pages
        )
    }

    pub(crate) fn json(&self) -> Json {
        let topology = self.topology.as_ref().map(|t| {
            json!({
                "packages": t.packages,
                "numa_nodes": t.numa_nodes,
                "cores": t.cores,
                "pus": t.pus,
                "hwloc": t.hwloc,
            })
        });
        json!({
            "cpus": self.cpus,
            "topology": topology,
            "pinning": self.pinning,
            "transparent_huge_pages": self.huge_pages,
            "host": self.host.json(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sockets_of_two_cores_with_hyper_threads() {
        let cpu = |p: u32, socket: u32, core: u32| {
            format!(
                "processor\t: {p}\nmodel name\t: Intel(R) Xeon(R) Gold 6248\nphysical id\t: \
                 {socket}\ncore id\t\t: {core}\n"
            )
        };
        let text = [
            cpu(0, 0, 0),
            cpu(1, 0, 1),
            cpu(2, 1, 0),
            cpu(3, 1, 1),
            cpu(4, 0, 0),
            cpu(5, 0, 1),
            cpu(6, 1, 0),
            cpu(7, 1, 1),
        ]
        .join("\n");
        assert_eq!(cpuinfo(&text), ("Intel(R) Xeon(R) Gold 6248".into(), 2, 4));
    }

    #[test]
    fn a_vm_that_shows_no_topology_counts_processors() {
        let text =
            "processor\t: 0\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\n";
        assert_eq!(cpuinfo(text), ("AMD EPYC".into(), 1, 2));
        assert_eq!(cpuinfo(""), ("unknown CPU".into(), 1, 0));
    }

    #[test]
    fn memory_is_read_in_mib() {
        assert_eq!(
            memory_mib("MemTotal:       24641536 kB\nMemFree: 1 kB\n"),
            24064
        );
    }

    #[test]
    fn this_machine_is_described() {
        let host = Host::this();
        assert!(host.numa_nodes >= 1);
        assert!(host.describe().contains("NUMA node"), "{}", host.describe());
    }
}
