//! `waterline sql`: an embedded SQL shell. Statements end with `;`; results print as the
//! mysql client prints them. `-e "SQL"` runs one and exits.

use std::io::{BufRead, IsTerminal, Write};

use clap::Args;
use waterline_sql::{Response, Session, SessionConfig, Shared};

use super::Knobs;

/// `waterline sql` flags.
#[derive(Clone, Debug, Args)]
pub struct SqlArgs {
    /// Run these statements (separated by `;`) and exit.
    #[arg(short = 'e', long)]
    pub execute: Option<String>,
    /// Isolation, planner and engine.
    #[command(flatten)]
    pub knobs: Knobs,
}

/// A result as a text table (`+---+` borders), or the OK line.
pub fn render(response: &Response) -> String {
    match response {
        Response::Done { affected, info, .. } => {
            let rows = if *affected == 1 { "row" } else { "rows" };
            if info.is_empty() {
                format!("Query OK, {affected} {rows} affected\n")
            } else {
                format!("Query OK, {affected} {rows} affected\n{info}\n")
            }
        }
        Response::Rows { columns, rows } => {
            let cells: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .zip(columns)
                        .map(|(v, c)| {
                            waterline_sql::types::text_in(c.decimals, v)
                                .unwrap_or_else(|| "NULL".into())
                        })
                        .collect()
                })
                .collect();
            let mut widths: Vec<usize> = columns.iter().map(|c| c.name.chars().count()).collect();
            for row in &cells {
                for (w, c) in widths.iter_mut().zip(row) {
                    *w = (*w).max(c.chars().count());
                }
            }
            let rule: String = widths
                .iter()
                .fold("+".to_owned(), |s, w| s + &"-".repeat(w + 2) + "+")
                + "\n";
            let line = |cells: Vec<&str>| {
                cells
                    .iter()
                    .zip(&widths)
                    .fold("|".to_owned(), |s, (c, w)| s + &format!(" {c:<w$} |"))
                    + "\n"
            };
            let mut out = rule.clone();
            out += &line(columns.iter().map(|c| &*c.name).collect());
            out += &rule;
            for row in &cells {
                out += &line(row.iter().map(String::as_str).collect());
            }
            out += &rule;
            out += &format!(
                "{} row{} in set\n",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            );
            out
        }
    }
}

/// Splits on `;` outside quotes.
fn statements(text: &str) -> (Vec<String>, String) {
    let (mut done, mut current, mut quote) = (Vec::new(), String::new(), None);
    for ch in text.chars() {
        match (quote, ch) {
            (None, '\'' | '"' | '`') => quote = Some(ch),
            (Some(q), c) if c == q => quote = None,
            (None, ';') => {
                if !current.trim().is_empty() {
                    done.push(current.trim().to_owned());
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    (done, current)
}

/// Runs the shell, on a thread with the stack a session's statements need.
pub fn run(args: SqlArgs) -> Result<(), Box<dyn std::error::Error>> {
    std::thread::Builder::new()
        .name("waterline-sql".into())
        .stack_size(waterline_sql::SESSION_STACK)
        .spawn(move || shell(args).map_err(|e| e.to_string()))?
        .join()
        .map_err(|_| "the shell's thread panicked")??;
    Ok(())
}

fn shell(args: SqlArgs) -> Result<(), Box<dyn std::error::Error>> {
    let (engine, recovery) = args.knobs.engine.open()?;
    if let Some(recovery) = recovery {
        eprintln!("recovered: {recovery}");
    }
    let config = SessionConfig {
        isolation: args.knobs.isolation.into(),
        planner: args.knobs.planner,
        ..SessionConfig::default()
    };
    let mut session = Session::connect(Shared::new(engine, config), "root", Some("waterline"))?;
    let mut out = std::io::stdout().lock();
    let mut run = |sql: &str, out: &mut dyn Write| -> std::io::Result<bool> {
        match session.execute(sql) {
            Ok(r) => write!(out, "{}", render(&r))?,
            Err(e) => writeln!(out, "{e}")?,
        }
        Ok(true)
    };
    if let Some(text) = args.execute {
        let (list, rest) = statements(&text);
        for sql in list
            .iter()
            .chain((!rest.trim().is_empty()).then_some(&rest))
        {
            run(sql, &mut out)?;
        }
        return Ok(());
    }
    let interactive = std::io::stdin().is_terminal();
    let mut pending = String::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if pending.is_empty()
            && matches!(
                line.trim().to_ascii_lowercase().as_str(),
                "quit" | "exit" | "\\q"
            )
        {
            break;
        }
        pending.push_str(&line);
        pending.push('\n');
        let (list, rest) = statements(&pending);
        for sql in &list {
            run(sql, &mut out)?;
        }
        pending = rest;
        if interactive {
            write!(
                out,
                "{}",
                if pending.trim().is_empty() {
                    "waterline> "
                } else {
                    "        -> "
                }
            )?;
            out.flush()?;
        }
    }
    Ok(())
}
