//! SQL as a teacher reads it: each file in `tests/scripts/` is a goldenscript of statements,
//! each followed by what waterline answers, as the `mysql` client would show it (a result
//! set as a table, `ok` with the rows affected, or MySQL's error code, state and message).
//! `UPDATE_GOLDENFILES=1 cargo test -p waterline-sql --test scripts` rewrites the answers
//! from what the engine says now; review the diff with `git diff`.
//!
//! ```text
//! # A comment.
//! a: "SELECT 1 + 1 AS two"
//! ---
//! a: two
//! a: 2
//! ```
//!
//! A statement is one quoted string; its prefix names the session that runs it (sessions
//! are made on first use, as root in database `waterline`, all over one engine).
//! `prepare NAME "SQL"` prepares a statement (`?` for parameters) as a client's
//! COM_STMT_PREPARE does, and `execute NAME [VALUE...]` runs it with those parameters (an
//! integer, NULL, or a string). Sessions
//! take turns on one thread: a statement that would wait for a row lock another session
//! holds waits `innodb_lock_wait_timeout` (1 second in the scripts) and answers 1205, as it
//! would in MySQL.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use waterline_sql::types::text_in;
use waterline_sql::{Response, Session, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig, Value};

struct Runner {
    shared: Arc<Shared>,
    sessions: BTreeMap<String, Session>,
    /// Prepared statements by session and name.
    prepared: BTreeMap<(String, String), u32>,
}

impl Runner {
    fn new() -> Runner {
        let engine = Engine::open(EngineConfig {
            lock_wait_timeout: std::time::Duration::from_secs(1),
            ..EngineConfig::default()
        })
        .expect("an engine");
        Runner {
            shared: Shared::new(Arc::new(engine), SessionConfig::default()),
            sessions: BTreeMap::new(),
            prepared: BTreeMap::new(),
        }
    }
}

/// A result as the `mysql` client shows it, more or less: a table, `ok` and the rows
/// affected, or the error.
fn answer(result: Result<Response, waterline_sql::SqlError>) -> String {
    match result {
        Ok(Response::Rows { columns, rows }) => {
            let mut cells: Vec<Vec<String>> =
                vec![columns.iter().map(|c| c.name.to_string()).collect()];
            for row in &rows {
                cells.push(
                    row.iter()
                        .zip(&columns)
                        .map(|(v, c)| text_in(c.decimals, v).unwrap_or_else(|| "NULL".into()))
                        .collect(),
                );
            }
            let widths: Vec<usize> = (0..columns.len())
                .map(|i| {
                    cells
                        .iter()
                        .map(|r| r[i].chars().count())
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let mut out = String::new();
            for row in cells {
                let line: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, w)| format!("{cell:w$}"))
                    .collect();
                out.push_str(line.join(" | ").trim_end());
                out.push('\n');
            }
            if rows.is_empty() {
                out.push_str("(no rows)\n");
            }
            out
        }
        Ok(Response::Done {
            affected,
            last_insert_id,
            info,
        }) => {
            let mut out = format!("ok, {affected} affected");
            if last_insert_id != 0 {
                out.push_str(&format!(", last insert id {last_insert_id}"));
            }
            if !info.is_empty() {
                out.push_str(&format!(" ({info})"));
            }
            out.push('\n');
            out
        }
        Err(e) => format!("ERROR {} ({}): {}\n", e.code, e.state, e.message),
    }
}

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        context: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let who = context.prefix.clone().unwrap_or_default();
        let shared = &self.shared;
        let session = match self.sessions.entry(who.clone()) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let mut session = shared.session();
                session.execute("SET SESSION innodb_lock_wait_timeout = 1")?;
                e.insert(session)
            }
        };
        let mut args = Vec::new();
        for arg in &command.args {
            match arg {
                goldenscript::Argument::Positional(value) => args.push(value.as_str()),
                other => return Err(format!("unexpected argument {other}").into()),
            }
        }
        match (command.name.as_str(), args.as_slice()) {
            ("prepare", [name, sql]) => Ok(match session.prepare(sql) {
                Ok((id, params, _)) => {
                    self.prepared.insert((who, name.to_string()), id);
                    format!("prepared, {params} parameters\n")
                }
                Err(e) => answer(Err(e)),
            }),
            ("execute", [name, values @ ..]) => {
                let id = self
                    .prepared
                    .get(&(who, name.to_string()))
                    .ok_or("not prepared")?;
                let params: Vec<Value> = values
                    .iter()
                    .map(|v| match (v.parse::<i64>(), *v) {
                        (Ok(n), _) => Value::Int(n),
                        (_, "NULL") => Value::Null,
                        _ => Value::from(*v),
                    })
                    .collect();
                Ok(answer(session.execute_prepared(*id, &params)))
            }
            (sql, []) => Ok(answer(session.execute(sql))),
            _ => Err("a statement is one quoted string, or prepare/execute".into()),
        }
    }
}

#[test]
fn scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scripts in {}", dir.display());
    for file in files {
        if let Err(e) = goldenscript::run(&mut Runner::new(), &file) {
            panic!("{}: {e}", file.display());
        }
    }
}
