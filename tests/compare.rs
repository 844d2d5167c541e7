//! `waterline compare`: one pair of one-second runs writes a results folder whose files say
//! what ran and what it measured; two servers are refused unless they report the same
//! durability and isolation.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_waterline");

fn compare(results: &Path, args: &[&str]) -> Output {
    let output = Command::new(BIN)
        .arg("compare")
        .arg("--results")
        .arg(results)
        .args(["--machine-name", "test", "--pairs", "1"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The one folder under `results`' dated folder.
fn folder(results: &Path) -> std::path::PathBuf {
    let day = std::fs::read_dir(results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        day.to_string_lossy().ends_with("-test"),
        "{}",
        day.display()
    );
    std::fs::read_dir(day)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn two_builds_on_tpcc_write_their_pairs_summary_and_run_record() {
    let results = tempfile::tempdir().unwrap();
    compare(
        results.path(),
        &[
            "builds",
            "tpcc",
            "--base",
            BIN,
            "--new",
            BIN,
            "--",
            "--duration",
            "1",
            "--warmup",
            "0",
            "--clients",
            "1",
        ],
    );
    let dir = folder(results.path());
    let pairs = read(&dir, "pairs.csv");
    let lines: Vec<&str> = pairs.lines().collect();
    assert_eq!(
        lines[0],
        "pair,side,benchmark,value,transactions,p95_ms,deadlocks_per_1000,checkpoints,steal_pct,reported"
    );
    assert_eq!(lines.len(), 3, "{pairs}");
    assert!(lines[1].starts_with("1,base,tpcc,"), "{pairs}");
    assert!(lines[2].starts_with("1,new,tpcc,"), "{pairs}");
    // The engine's own account of its configuration, not the command line's.
    assert!(lines[1].contains("snapshot="), "{pairs}");
    let summary = read(&dir, "summary.md");
    assert!(summary.starts_with("# builds:"), "{summary}");
    assert!(
        summary.contains("Median ratio (candidate / baseline): "),
        "{summary}"
    );
    let run = read(&dir, "RUN.md");
    for line in [
        "- command: `waterline compare ",
        " builds tpcc ",
        "- baseline: ",
        "- candidate: ",
    ] {
        assert!(run.contains(line), "{run}");
    }
    assert!(run.contains("profile "), "each side's build profile: {run}");
    assert!(run.contains("- machine: "), "{run}");
}

fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("WATERLINE_REQUIRE_CLIENTS").is_none(),
            "{tool} is required here"
        );
        eprintln!("skipped: {tool} is not installed");
    }
    found
}

#[test]
fn waterline_against_mariadb_on_sysbench_at_equal_durability_and_isolation() {
    if !have("sysbench") || !have("/usr/sbin/mariadbd") {
        return;
    }
    let results = tempfile::tempdir().unwrap();
    compare(
        results.path(),
        &[
            "servers",
            "sysbench",
            "--base",
            "mariadb",
            "--new",
            BIN,
            "--isolation",
            "read-committed",
            "--",
            "oltp_point_select",
            "--threads=1",
            "--time=1",
            "--table-size=100",
        ],
    );
    let dir = folder(results.path());
    let run = read(&dir, "RUN.md");
    assert!(run.contains("at equal durability and isolation"), "{run}");
    assert!(run.contains("MariaDB"), "{run}");
    let pairs = read(&dir, "pairs.csv");
    assert_eq!(pairs.lines().count(), 3, "{pairs}");
    for line in pairs.lines().skip(1) {
        assert!(
            line.contains("innodb_flush_log_at_trx_commit=0, isolation READ-COMMITTED"),
            "what each server reported: {pairs}"
        );
    }
}

#[test]
fn servers_that_report_different_durability_are_refused() {
    if !have("/usr/sbin/mariadbd") {
        return;
    }
    let results = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // waterline's server is asked to be durable through its own flags, MariaDB is not.
    let output = Command::new(BIN)
        .args([
            "compare", "unequal", "tpcc", "--base", "mariadb", "--new", BIN,
        ])
        .arg("--serve-flag=--flush")
        .arg("--serve-flag=every-commit")
        .arg("--serve-flag=--data-dir")
        .arg(format!("--serve-flag={}", data.path().join("wl").display()))
        .arg("--results")
        .arg(results.path())
        .args(["--", "--duration", "1"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not equal durability and isolation"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(results.path()).unwrap().count(),
        0,
        "nothing measured, nothing written"
    );
}
