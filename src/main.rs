//! The `waterline` command: `serve` a MySQL-protocol server, open an embedded `sql` shell, or
//! run `tpcc` (TPC-C-lite, the default workload) or a `lab` experiment of the book's.

#![allow(clippy::print_stdout)] // a command-line program prints

mod cli;

/// See the `mimalloc` feature in Cargo.toml.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// The commit this binary was built from (see `build.rs`), for the reports.
const BUILD: &str = env!("WATERLINE_BUILD");

/// The Cargo profile this binary was built with (see `build.rs`), for the reports.
fn profile() -> waterline::tpcc::BuildProfile {
    waterline::tpcc::BuildProfile {
        name: env!("WATERLINE_PROFILE").into(),
        opt_level: env!("WATERLINE_OPT_LEVEL").into(),
        lto: env!("WATERLINE_LTO").into(),
        codegen_units: env!("WATERLINE_CODEGEN_UNITS").into(),
    }
}

/// waterline: a miniature MVCC row store for studying why transaction systems stop scaling.
#[derive(Debug, Parser)]
#[command(
    version = concat!(
        env!("CARGO_PKG_VERSION"),
        " (built from ", env!("WATERLINE_BUILD"),
        "; profile ", env!("WATERLINE_PROFILE"),
        ": opt-level ", env!("WATERLINE_OPT_LEVEL"),
        ", lto ", env!("WATERLINE_LTO"),
        ", codegen-units ", env!("WATERLINE_CODEGEN_UNITS"), ")"
    ),
    about
)]
struct Cli {
    /// Whether the process's memory may be backed by transparent huge pages. `off`, the
    /// default, gives this process 4 KB pages whatever the system's setting. `on` leaves the
    /// system's setting in force, and with `madvise` (the usual one) the allocator asks for
    /// huge pages: then every thread's first allocations fault in a 2 MB page of their own,
    /// about 1.8 MB of memory per idle connection of `serve` (0.2 MB with `off`). On a
    /// 2-core VM `off` ran TPC-C-lite as fast or faster (the kernel zeroes fewer fresh pages,
    /// the TLB misses more); on bare metal `on` may win: measure with both.
    #[arg(long, global = true, value_enum, default_value_t = HugePages::Off)]
    transparent_huge_pages: HugePages,
    #[command(subcommand)]
    command: Command,
}

/// See [`Cli::transparent_huge_pages`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum HugePages {
    /// `prctl(PR_SET_THP_DISABLE)`: 4 KB pages for this process (and its children).
    Off,
    /// The system's setting (`/sys/kernel/mm/transparent_hugepage/enabled`).
    On,
}

/// Applies `setting` to this process, before the tables allocate. A kernel that refuses
/// (before Linux 3.15) leaves the system's setting, with a warning; every report says
/// which was in force.
fn apply(setting: HugePages) {
    #[cfg(target_os = "linux")]
    if setting == HugePages::Off
        && let Err(e) = rustix::thread::disable_transparent_huge_pages(true)
    {
        eprintln!("waterline: transparent huge pages stay as the system sets them: {e}");
    }
    #[cfg(not(target_os = "linux"))]
    let _ = setting;
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the MySQL protocol (connect with `mysql -h 127.0.0.1 -P 3307 -u root`).
    Serve(cli::serve::ServeArgs),
    /// An embedded SQL shell.
    Sql(cli::sql::SqlArgs),
    /// TPC-C-lite: load, run a sweep of clients, check consistency, write a report.
    Tpcc(Box<cli::tpcc::TpccArgs>),
    /// One of the book's chapter-8 experiments: a sweep comparing baseline and fix, written
    /// as CSV, SVG and a markdown summary.
    Lab(Box<cli::lab::LabArgs>),
    /// Two builds, or waterline and MariaDB, in alternating pairs over one workload (tpcc,
    /// sysbench, BenchmarkSQL, a criterion bench), written as a results folder.
    Compare(Box<cli::compare::CompareArgs>),
}

fn main() {
    let cli = Cli::parse();
    apply(cli.transparent_huge_pages);
    let result = match cli.command {
        Command::Serve(args) => cli::serve::run(args),
        Command::Sql(args) => cli::sql::run(args),
        Command::Tpcc(args) => cli::tpcc::run(*args),
        Command::Lab(args) => cli::lab::run(*args),
        Command::Compare(args) => cli::compare::run(*args),
    };
    if let Err(e) = result {
        eprintln!("waterline: {e}");
        std::process::exit(1);
    }
}
