//! Records which commit the `waterline` binary is built from, as `WATERLINE_BUILD`, so that
//! every report it writes says so (`built from` in `waterline tpcc`'s and `waterline lab`'s
//! reports, and `waterline --version`): the commit, marked `(with uncommitted changes)` when
//! tracked files outside `results/` differ from it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    let build = match git(&["rev-parse", "HEAD"]) {
        Some(commit) => {
            let changed = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":!results",
            ])
            .is_some_and(|s| !s.is_empty());
            if changed {
                format!("{commit} (with uncommitted changes)")
            } else {
                commit
            }
        }
        None => "unknown (not built in a git checkout)".to_owned(),
    };
    println!("cargo:rustc-env=WATERLINE_BUILD={build}");
    // Again when the commit moves (HEAD, the branch it names, the index) or a source
    // changes; a path that does not exist would make it run on every build.
    let mut watched = vec![
        "build.rs".to_owned(),
        "Cargo.toml".to_owned(),
        "src".to_owned(),
        "crates".to_owned(),
    ];
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watched.push(format!("{dir}/HEAD"));
        watched.push(format!("{dir}/index"));
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(format!("{dir}/{branch}"));
        }
    }
    for path in watched {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
