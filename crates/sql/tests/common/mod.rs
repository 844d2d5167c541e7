//! What the SQL tests share: a session over a fresh in-memory engine, and statements run
//! on it with their results as text.

#![allow(dead_code)] // each test file uses some of them

use std::sync::Arc;

use waterline_sql::{Response, Session, SessionConfig, Shared, SqlError};
use waterline_txn::{Engine, EngineConfig, Value};

/// What sessions of one fresh in-memory engine share.
pub fn shared() -> Arc<Shared> {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    Shared::new(engine, SessionConfig::default())
}

/// What sessions of the durable engine in `dir` share: opened there, or reopened after a
/// restart.
pub fn durable(dir: &std::path::Path) -> Arc<Shared> {
    let (engine, _) = Engine::open_dir(dir, EngineConfig::default()).unwrap();
    Shared::new(Arc::new(engine), SessionConfig::default())
}

/// For a restart from the log and one from a checkpoint: runs `before` in a session of a new
/// durable engine, restarts it (after a checkpoint, the second time), and runs `after` in a
/// session of the recovered one.
pub fn across_restarts<T>(before: impl Fn(&mut Session) -> T, after: impl Fn(&mut Session, T)) {
    for checkpoint in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let shared = durable(dir.path());
        let kept = before(&mut session_of(&shared));
        if checkpoint {
            shared.engine.checkpoint().unwrap();
        }
        drop(shared);
        after(&mut session_of(&durable(dir.path())), kept);
    }
}

/// A session of root in `waterline`, over `shared`.
pub fn session_of(shared: &Arc<Shared>) -> Session {
    Session::connect(Arc::clone(shared), "root", Some("waterline")).unwrap()
}

/// A session over a fresh engine.
pub fn session() -> Session {
    session_of(&shared())
}

/// A result set's rows as text (NULL as "NULL").
pub fn texts(response: Response, what: &str) -> Vec<Vec<String>> {
    match response {
        Response::Rows { rows, columns } => rows
            .iter()
            .map(|r| {
                r.iter()
                    .zip(&columns)
                    .map(|(v, c)| {
                        waterline_sql::types::text_in(c.decimals, v)
                            .unwrap_or_else(|| "NULL".into())
                    })
                    .collect()
            })
            .collect(),
        other => panic!("{what}: no rows: {other:?}"),
    }
}

pub fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    texts(s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")), sql)
}

pub fn ok(s: &mut Session, sql: &str) -> u64 {
    match s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")) {
        Response::Done { affected, .. } => affected,
        other => panic!("{sql}: rows: {other:?}"),
    }
}

pub fn err(s: &mut Session, sql: &str) -> SqlError {
    s.execute(sql).expect_err(sql)
}

pub fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql).remove(0).remove(0)
}

pub fn prepared_rows(s: &mut Session, id: u32, params: &[Value]) -> Vec<Vec<String>> {
    texts(
        s.execute_prepared(id, params).unwrap(),
        "prepared statement",
    )
}
