//! Records what the `waterline` binary is built from and how, so that every report it writes
//! says so (`waterline tpcc`'s and `waterline lab`'s reports, and `waterline --version`):
//!
//! - `WATERLINE_BUILD`: the commit, marked `(with uncommitted changes)` when tracked files
//!   outside `results/` differ from it;
//! - `WATERLINE_PROFILE`, `WATERLINE_OPT_LEVEL`, `WATERLINE_LTO`, `WATERLINE_CODEGEN_UNITS`:
//!   the Cargo profile and the three settings of it that decide what a measurement means.
//!   Cargo tells a build script the opt-level but neither the profile's name nor its LTO, so
//!   the name is read from the output directory (`target/<profile>/build/...`) and the rest
//!   from the manifest's `[profile.*]` tables (following `inherits`, with Cargo's defaults and
//!   its `CARGO_PROFILE_<NAME>_*` variables on top). A profile set in a `.cargo/config.toml` or
//!   by `--config` is not seen.

use std::path::Path;
use std::process::Command;

use toml_edit::{DocumentMut, Item};

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
    let profile = Profile::of_this_build();
    println!("cargo:rustc-env=WATERLINE_PROFILE={}", profile.name);
    println!("cargo:rustc-env=WATERLINE_OPT_LEVEL={}", profile.opt_level);
    println!("cargo:rustc-env=WATERLINE_LTO={}", profile.lto);
    println!(
        "cargo:rustc-env=WATERLINE_CODEGEN_UNITS={}",
        profile.codegen_units
    );
    for key in ["LTO", "CODEGEN_UNITS"] {
        let var = format!("CARGO_PROFILE_{}_{key}", env_name(&profile.name));
        println!("cargo:rerun-if-env-changed={var}");
    }
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

/// The settings of the profile this build runs under.
struct Profile {
    name: String,
    opt_level: String,
    lto: String,
    codegen_units: String,
}

impl Profile {
    fn of_this_build() -> Profile {
        // OUT_DIR is <target>/[<triple>/]<profile dir>/build/<package>-<hash>/out.
        let out = std::env::var("OUT_DIR").unwrap_or_default();
        let dir = Path::new(&out)
            .ancestors()
            .nth(3)
            .and_then(Path::file_name)
            .and_then(|d| d.to_str())
            .unwrap_or("unknown");
        // `dev` and `test` build into `debug`, `release` and `bench` into `release`; the
        // binary is built by the first of each pair.
        let name = match dir {
            "debug" => "dev",
            other => other,
        }
        .to_owned();
        let manifest = std::fs::read_to_string("Cargo.toml").unwrap_or_default();
        let doc: DocumentMut = manifest.parse().unwrap_or_default();
        let lto = setting(&doc, &name, "LTO", "lto").unwrap_or_else(|| "false".to_owned());
        let codegen_units = setting(&doc, &name, "CODEGEN_UNITS", "codegen-units")
            .unwrap_or_else(|| if name == "dev" { "256" } else { "16" }.to_owned());
        Profile {
            name,
            opt_level: std::env::var("OPT_LEVEL").unwrap_or_else(|_| "unknown".to_owned()),
            lto,
            codegen_units,
        }
    }
}

/// `key` of profile `name`: Cargo's environment variable, else the manifest's table, else the
/// table it inherits from (a custom profile must inherit; `test` inherits `dev` and `bench`
/// `release`), else None for Cargo's default.
fn setting(doc: &DocumentMut, name: &str, env_key: &str, key: &str) -> Option<String> {
    let mut name = name.to_owned();
    for _ in 0..8 {
        if let Ok(v) = std::env::var(format!("CARGO_PROFILE_{}_{env_key}", env_name(&name))) {
            return Some(v);
        }
        let table = doc.get("profile").and_then(|p| p.get(&name));
        if let Some(value) = table.and_then(|t| t.get(key)) {
            return Some(show(value));
        }
        name = match table.and_then(|t| t.get("inherits")).and_then(Item::as_str) {
            Some(parent) => parent.to_owned(),
            None if name == "test" => "dev".to_owned(),
            None if name == "bench" => "release".to_owned(),
            None => return None,
        };
    }
    None
}

/// A setting as the manifest spells it, without quotes.
fn show(value: &Item) -> String {
    if let Some(s) = value.as_str() {
        s.to_owned()
    } else if let Some(b) = value.as_bool() {
        b.to_string()
    } else if let Some(n) = value.as_integer() {
        n.to_string()
    } else {
        "unknown".to_owned()
    }
}

/// A profile's name as Cargo spells it in `CARGO_PROFILE_<NAME>_*`.
fn env_name(profile: &str) -> String {
    profile.to_uppercase().replace('-', "_")
}
