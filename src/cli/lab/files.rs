//! What `waterline lab` writes beside each experiment's report: where the reports go
//! (`--report-dir`, `--results`' dated folder per machine), `RUN.md` (the command, the
//! build, when, the machine), and for `lab all` the index as `index.md` and `index.html`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::specs::Spec;
use super::{LabArgs, Outcome};
use crate::cli::tpcc::{CliResult, absolute};

fn default_report_dir() -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from("target/waterline-lab").join(format!("run-{secs}"))
}

/// Now, UTC, as `yyyy-mm-dd hh:mm:ss`.
pub(crate) fn utc_now() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64 * 1_000_000);
    waterline_types::value::DateTime(micros).to_string()
}

/// Where `args` asks the reports of `name` (an experiment's, or `lab-all`) to go: `--report-dir`
/// as given, `--results`' dated folder for this machine, or a new folder under target/.
pub(super) fn report_root(
    args: &LabArgs,
    name: &str,
    machine: &waterline::tpcc::Machine,
) -> PathBuf {
    if let Some(dir) = &args.report_dir {
        return dir.clone();
    }
    let Some(results) = &args.results else {
        return default_report_dir();
    };
    dated_dir(results, args.machine_name.as_deref(), machine, name)
}

/// `<results>/<yyyy-mm-dd>-<machine>/<name>/` for today and this machine (named
/// `machine_name`, or by its host name), `-2`, `-3`, ... after `name` if taken.
pub(crate) fn dated_dir(
    results: &Path,
    machine_name: Option<&str>,
    machine: &waterline::tpcc::Machine,
    name: &str,
) -> PathBuf {
    let label: String = machine_name
        .unwrap_or(&machine.host.name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let day = &utc_now()[..10];
    let base = results.join(format!("{day}-{label}"));
    let mut dir = base.join(name);
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = base.join(format!("{name}-{n}"));
    }
    dir
}

/// The command line as typed, each argument quoted for a POSIX shell where it needs it.
pub(crate) fn command_line() -> String {
    let quote = |a: String| {
        if !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=.,:/@+".contains(c))
        {
            a
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    let mut words: Vec<String> = std::env::args().map(quote).collect();
    if let Some(first) = words.first_mut() {
        // The program as a user would type it, not the path it was run from.
        *first = "waterline".into();
    }
    words.join(" ")
}

/// RUN.md: the exact command, the commit this binary was built from, when it ran (`started`
/// to now, UTC) and the machine.
pub(super) fn write_run(
    dir: &Path,
    title: &str,
    started: &str,
    machine: &waterline::tpcc::Machine,
) -> CliResult<()> {
    let profile = crate::profile().stated();
    let text = format!(
        "# {title}\n\n- command: `{}`\n- built from: {}\n- build profile: {profile}\n- ran: \
         {started} to {} UTC\n- machine: {}\n\nEach configuration in summary.md (and each \
         point's `effective` in results.json) is as the engine read it back.\n",
        command_line(),
        crate::BUILD,
        utc_now(),
        machine.describe()
    );
    fs::create_dir_all(dir)?;
    fs::write(dir.join("RUN.md"), text)?;
    Ok(())
}

/// `index.md` and `index.html` of a `lab all` run in `root`: every experiment's headline,
/// its book figures, its charts and its summary; the HTML opens from disk (charts by
/// relative path, the summaries rendered from their markdown).
pub(super) fn write_index(
    root: &Path,
    specs: &[Spec],
    outcomes: &[Outcome],
    machine: &waterline::tpcc::Machine,
) -> CliResult<()> {
    let profile = crate::profile().stated();
    let mut md = format!(
        "# waterline lab: every experiment\n\nMachine: {}\n\nBuilt from: {}\n\nBuild \
         profile: {profile}\n\n| experiment | book | result | summary |\n|---|---|---|---|\n",
        machine.describe(),
        crate::BUILD
    );
    let mut html = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>waterline lab</title>\n\
         <style>body{{font-family:sans-serif;max-width:1000px;margin:auto}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px}}\
         img{{max-width:100%}}</style></head><body>\n<h1>waterline lab: every experiment</h1>\n\
         <p>Machine: {}</p>\n<p>Built from: {}</p>\n<p>Build profile: {}</p>\n<ul>\n",
        escape(&machine.describe()),
        escape(crate::BUILD),
        escape(&profile)
    );
    for (spec, o) in specs.iter().zip(outcomes) {
        let failed = if o.ok { "" } else { " (FAILED checks)" };
        let _ = writeln!(
            md,
            "| {} | {} | {}{failed} | [{0}/summary.md]({0}/summary.md) |",
            o.name, spec.book, o.headline
        );
        let _ = writeln!(
            html,
            "<li><a href=\"#{0}\">{0}</a>: {1}, {2}{failed}</li>",
            o.name,
            escape(spec.book),
            escape(&o.headline)
        );
    }
    html.push_str("</ul>\n");
    for o in outcomes {
        let dir = root.join(o.name);
        let _ = writeln!(html, "<h2 id=\"{0}\">{0}</h2>", o.name);
        let mut charts: Vec<String> = fs::read_dir(&dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".svg"))
            .collect();
        charts.sort();
        for chart in charts {
            let _ = writeln!(
                html,
                "<p><img src=\"{0}/{chart}\" alt=\"{0}: {chart}\"></p>",
                o.name
            );
        }
        let summary = fs::read_to_string(dir.join("summary.md")).unwrap_or_default();
        let parser =
            pulldown_cmark::Parser::new_ext(&summary, pulldown_cmark::Options::ENABLE_TABLES);
        pulldown_cmark::html::push_html(&mut html, parser);
    }
    html.push_str("</body></html>\n");
    fs::create_dir_all(root)?;
    fs::write(root.join("index.md"), md)?;
    fs::write(root.join("index.html"), html)?;
    println!("index: {}", absolute(&root.join("index.html")).display());
    Ok(())
}

/// `text` safe inside HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
