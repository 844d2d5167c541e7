//! `waterline lab`: every experiment runs with `--quick` and writes its files, and the CSV has
//! the columns its summary says it used.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_waterline");

const EXPERIMENTS: [&str; 10] = [
    "trx-shards",
    "readview",
    "double-latch",
    "group-commit",
    "throttle",
    "planner",
    "isolation",
    "all-fixes",
    "thread-pool",
    "instances",
];

fn header(csv: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(csv).unwrap();
    let first = text.lines().next().unwrap_or_default();
    first.split(',').map(str::to_owned).collect()
}

fn used_columns(summary: &str) -> Vec<String> {
    let line = summary
        .lines()
        .find_map(|l| l.strip_prefix("CSV columns used: "))
        .expect("the summary names the columns it used");
    line.split(", ").map(str::to_owned).collect()
}

#[test]
fn every_experiment_runs_quick_and_writes_what_its_summary_claims() {
    let dir = tempfile::tempdir().unwrap();
    // With the numa feature every experiment runs pinned (hwloc places each thread), so the
    // pinned path of every experiment is checked too; without it, unpinned.
    let pin: &[&str] = if cfg!(feature = "numa") {
        &["--pin", "compact"]
    } else {
        &[]
    };
    let out = Command::new(BIN)
        .args(["lab", "all", "--quick"])
        .args(pin)
        .arg("--report-dir")
        .arg(dir.path())
        // Shorter still than --quick: this is a test of the files, not a measurement.
        .args(["--", "--duration", "0.4", "--warmup", "0.1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let index = std::fs::read_to_string(dir.path().join("index.md")).unwrap();
    assert!(index.contains("Machine: "), "{index}");
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    for name in EXPERIMENTS {
        for shown in [
            format!("<h2 id=\"{name}\">"),
            format!("<img src=\"{name}/throughput.svg\""),
            // The summary, rendered: its title and its tables.
            format!("<h1>{name}: "),
        ] {
            assert!(html.contains(&shown), "{shown} not in index.html");
        }
    }
    assert!(
        html.contains("<table>") && html.contains("Fig 8-25"),
        "{html}"
    );
    // Each experiment's two sides ran what they say, read back from the engine.
    let effective =
        |name: &str| std::fs::read_to_string(dir.path().join(name).join("results.csv")).unwrap();
    let shards = effective("trx-shards");
    assert!(
        shards.contains("trx_shards=1,") && shards.contains("trx_shards=256,"),
        "{shards}"
    );
    let fixes = effective("all-fixes");
    for wanted in [
        "snapshot=vector, view_close=latched, trx_shards=1,",
        "snapshot=hybrid, view_close=latch-free, trx_shards=256,",
        "wakeup=broadcast",
        "wakeup=parker",
        "admission=limit-",
        "admission=unlimited",
    ] {
        assert!(fixes.contains(wanted), "{wanted}: {fixes}");
    }
    // Three servers, read back: a thread per connection, the pool, an admission limit; and
    // the CPU and context switches are theirs.
    let served = effective("thread-pool");
    for wanted in [
        "thread_handling=one-thread-per-connection, admission=unlimited",
        "thread_handling=pool-of-threads (thread_pool_size=",
        "thread_handling=one-thread-per-connection, admission=limit-",
    ] {
        assert!(served.contains(wanted), "{wanted}: {served}");
    }
    let summary =
        std::fs::read_to_string(dir.path().join("thread-pool").join("summary.md")).unwrap();
    assert!(
        summary.contains("`waterline serve --database tpcc --max-connections ")
            && summary.contains("--thread-handling pool-of-threads`"),
        "{summary}"
    );
    // Two instances, each on its own CPUs, apart then together, and the total.
    let instances =
        std::fs::read_to_string(dir.path().join("instances").join("summary.md")).unwrap();
    for wanted in [
        "instance-1 apart",
        "instance-2 together",
        "Fig 8-32, the total",
        "`taskset -c ",
    ] {
        assert!(instances.contains(wanted), "{wanted}: {instances}");
    }
    for name in EXPERIMENTS {
        let exp = dir.path().join(name);
        for file in [
            "results.csv",
            "results.json",
            "throughput.svg",
            "summary.md",
        ] {
            assert!(exp.join(file).is_file(), "{name}: no {file}");
        }
        let summary = std::fs::read_to_string(exp.join("summary.md")).unwrap();
        assert!(summary.starts_with(&format!("# {name}: ")), "{summary}");
        assert!(summary.contains("- Machine: "), "{summary}");
        assert!(summary.contains("every point passed"), "{summary}");
        // The bound each configuration's latches imply, next to its throughput: computed
        // for an in-process engine, said to be missing for a server's.
        assert!(
            summary.contains("The lowest ceiling a latch sets")
                && (summary.contains(" txn/s (trx-sys, ")
                    || summary.contains(" txn/s (flush, ")
                    || summary.contains(" txn/s (sync, ")
                    || summary.contains(" txn/s (commit, ")
                    || summary.contains("not measured (no in-process engine)")),
            "{name}: no latch ceiling: {summary}"
        );
        let columns = header(&exp.join("results.csv"));
        for used in used_columns(&summary) {
            assert!(
                columns.contains(&used),
                "{name}: no column {used} in {columns:?}"
            );
        }
        assert!(
            index.contains(&format!("[{name}/summary.md]")),
            "{name} not in the index"
        );
    }
    // The experiments' own files.
    let wakes = dir.path().join("group-commit");
    assert!(wakes.join("wakes.svg").is_file());
    assert_eq!(
        header(&wakes.join("wakes.csv")),
        ["config", "clients", "wakeups_per_follower", "followers"]
    );
    let gc = std::fs::read_to_string(wakes.join("results.csv")).unwrap();
    let efficiency = header(&wakes.join("results.csv"))
        .iter()
        .position(|c| c == "gc_wake_efficiency")
        .unwrap();
    for line in gc.lines().skip(1) {
        // n/a where no follower slept (nothing was woken).
        let cell = line.split(',').nth(efficiency).unwrap();
        if cell != "n/a" {
            let value: f64 = cell.parse().unwrap();
            assert!((0.0..=1.0).contains(&value), "{line}");
        }
    }
    assert!(
        !wakes.join("data").exists(),
        "the scratch databases are removed"
    );
    let planner = dir.path().join("planner");
    assert!(planner.join("timeline.svg").is_file());
    let timeline = std::fs::read_to_string(planner.join("timeline.csv")).unwrap();
    assert_eq!(
        timeline.lines().count(),
        1 + 2 * 3,
        "3 segments of 2 configs"
    );
}

#[test]
fn a_bad_experiment_or_flag_is_refused_clearly() {
    let out = Command::new(BIN)
        .args(["lab", "readview", "--quick", "--", "--clients", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--clients needs one or more counts"),
        "{stderr}"
    );

    let out = Command::new(BIN).args(["lab", "nope"]).output().unwrap();
    assert!(!out.status.success());
}

/// `waterline lab isolation --quick` with `flags` then `dir`, shorter still than `--quick`;
/// fails the test unless it succeeds.
fn quick_isolation(flags: &[&str], dir: &Path) {
    let out = Command::new(BIN)
        .args(["lab", "isolation", "--quick"])
        .args(flags)
        .arg(dir)
        .args(["--", "--duration", "0.3", "--warmup", "0.1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn results_go_to_a_dated_folder_per_machine_with_the_command_commit_profile_and_machine() {
    let root = tempfile::tempdir().unwrap();
    let run = || quick_isolation(&["--machine-name", "test box", "--results"], root.path());
    run();
    run();
    let days: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(days.len(), 1, "{days:?}");
    // yyyy-mm-dd-<machine>, the name made safe for a path.
    assert!(
        days[0].ends_with("-test-box") && days[0].len() == 10 + 9,
        "{days:?}"
    );
    let day = root.path().join(&days[0]);
    for name in ["isolation", "isolation-2"] {
        let dir = day.join(name);
        let run = std::fs::read_to_string(dir.join("RUN.md")).unwrap();
        assert!(
            run.contains(
                "- command: `waterline lab isolation --quick --machine-name 'test box' --results "
            ),
            "{run}"
        );
        let built = run
            .lines()
            .find_map(|l| l.strip_prefix("- built from: "))
            .expect("RUN.md says what the binary was built from");
        let commit = built.split(' ').next().unwrap();
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{built}"
        );
        for fact in [
            "socket",
            "core",
            "NUMA node",
            "GiB; Linux ",
            "transparent huge pages",
        ] {
            assert!(run.contains(fact), "{fact}: {run}");
        }
        // The profile as the binary's build script recorded it: the tests' binary is a
        // debug build (`dev`), which is not the measurement profile, and the files say so.
        let profile = run
            .lines()
            .find_map(|l| l.strip_prefix("- build profile: "))
            .expect("RUN.md says which profile the binary was built with");
        assert!(
            profile.starts_with("dev (opt-level 0, lto false, codegen-units 256)")
                && profile.contains("not the measurement profile"),
            "{profile}"
        );
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(
            summary.contains(&format!("- Built from: {built}"))
                && summary.contains(&format!("- Build profile: {profile}")),
            "{summary}"
        );
        assert!(summary.contains("then 0.3 s per point"), "{summary}");
        let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
        assert!(
            json.contains("\"built_from\"") && json.contains("\"cpu_model\""),
            "{json}"
        );
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let recorded = &json["run"]["build_profile"];
        assert_eq!(recorded["name"], "dev", "{recorded}");
        assert_eq!(recorded["opt_level"], "0", "{recorded}");
        assert_eq!(recorded["measurement_profile"], false, "{recorded}");
    }

    let out = Command::new(BIN)
        .args(["lab", "isolation", "--results", "a", "--report-dir", "b"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "one place for the reports");
}

#[cfg(not(feature = "numa"))]
#[test]
fn pinning_without_the_numa_feature_says_how_to_get_it() {
    let out = Command::new(BIN)
        .args(["lab", "isolation", "--quick", "--pin", "spread"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("needs the numa feature"), "{stderr}");
}

#[cfg(feature = "numa")]
#[test]
fn a_pinned_run_states_the_topology_and_its_bindings() {
    let dir = tempfile::tempdir().unwrap();
    quick_isolation(&["--pin", "compact,node:0", "--report-dir"], dir.path());
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("NUMA node(s)"), "{summary}");
    assert!(summary.contains("pin=compact"), "{summary}");
    assert!(summary.contains("pin=node:0"), "{summary}");
    assert!(
        summary.contains("compact: ") && summary.contains(" | node:0: "),
        "both placements are described: {summary}"
    );
    let json = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
    assert!(json.contains("\"topology\": {"), "{json}");
}
