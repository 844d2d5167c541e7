//! The `waterline` command: `serve` a MySQL-protocol server, open an embedded `sql` shell, or
//! run `tpcc` (TPC-C-lite, the default workload) or a `lab` experiment of the book's.

#![allow(clippy::print_stdout)] // a command-line program prints

mod cli;

/// See the `mimalloc` feature in Cargo.toml.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// waterline: a miniature MVCC row store for studying why transaction systems stop scaling.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
}

fn main() {
    let result = match Cli::parse().command {
        Command::Serve(args) => cli::serve::run(args),
        Command::Sql(args) => cli::sql::run(args),
        Command::Tpcc(args) => cli::tpcc::run(*args),
        Command::Lab(args) => cli::lab::run(*args),
    };
    if let Err(e) = result {
        eprintln!("waterline: {e}");
        std::process::exit(1);
    }
}
