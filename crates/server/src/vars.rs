//! System variables (`@@name`, SET, SHOW VARIABLES) and SHOW STATUS, which reports the
//! engine's own counters next to the server's.

use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use sqlparser::ast::{
    Expr as Ast, Set, ShowStatementFilter, TransactionIsolationLevel, TransactionMode,
};
use waterline_planner::bind::Binder;
use waterline_planner::{Env, PlannerMode};
use waterline_txn::{Counter, DateTime, Isolation, Value};

use crate::error::SqlError;
use crate::session::{Response, Session};

/// The current time, as a DATETIME (UTC).
pub fn now() -> DateTime {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    DateTime(i64::try_from(micros / 1_000_000 * 1_000_000).unwrap_or(0))
}

fn isolation_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadCommitted => "READ-COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE-READ",
    }
}

fn parse_isolation(text: &str) -> Result<Isolation, SqlError> {
    match text.to_ascii_uppercase().replace(['-', '_'], " ").as_str() {
        "READ COMMITTED" => Ok(Isolation::ReadCommitted),
        "REPEATABLE READ" => Ok(Isolation::RepeatableRead),
        // READ UNCOMMITTED and SERIALIZABLE are not built: the nearest level, as a warning.
        "READ UNCOMMITTED" => Ok(Isolation::ReadCommitted),
        "SERIALIZABLE" => Ok(Isolation::RepeatableRead),
        _ => Err(SqlError::new(
            1231,
            "42000",
            format!("Variable 'transaction_isolation' can't be set to the value of '{text}'"),
        )),
    }
}

/// Names the server answers for, in SHOW VARIABLES order.
const NAMES: [&str; 22] = [
    "auto_increment_increment",
    "autocommit",
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "collation_connection",
    "innodb_lock_wait_timeout",
    "interactive_timeout",
    "license",
    "lower_case_table_names",
    "max_allowed_packet",
    "max_connections",
    "net_write_timeout",
    "socket",
    "sql_mode",
    "system_time_zone",
    "time_zone",
    "transaction_isolation",
    "tx_isolation",
    "version",
    "version_comment",
    "waterline_planner_mode",
];

/// The value of system variable `name` (`@@session.` or `@@global.` stripped).
pub fn get(s: &Session, name: &str) -> Result<Value, SqlError> {
    let name = name.to_ascii_lowercase();
    let name = name
        .trim_start_matches("session.")
        .trim_start_matches("global.")
        .trim_start_matches("local.");
    let engine = s.shared.engine.config();
    Ok(match name {
        "auto_increment_increment" | "lower_case_table_names" => Value::Int(1),
        "autocommit" => Value::Int(i64::from(s.autocommit)),
        "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "character_set_server" => Value::Str("utf8mb4".into()),
        "collation_connection" | "collation_server" => Value::Str("utf8mb4_bin".into()),
        "innodb_lock_wait_timeout" => Value::Int(engine.lock_wait_timeout.as_secs() as i64),
        "interactive_timeout" | "wait_timeout" => Value::Int(28_800),
        "license" => Value::Str("MIT OR Apache-2.0".into()),
        "max_allowed_packet" => Value::Int(s.shared.config.max_allowed_packet as i64),
        "max_connections" => Value::Int(i64::from(s.shared.listening.lock().max_connections)),
        "net_write_timeout" => Value::Int(60),
        // The Rust client reads this at connect (NULL would fail it) and, connected to a
        // loopback address, moves to the socket named here unless told not to.
        "socket" => Value::from(s.shared.listening.lock().socket.clone()),
        "sql_mode" => Value::from(""),
        "system_time_zone" | "time_zone" => Value::from("UTC"),
        "transaction_isolation" | "tx_isolation" => Value::from(isolation_name(s.isolation)),
        "transaction_read_only" | "tx_read_only" | "performance_schema" => Value::Int(0),
        "version" => Value::from(crate::VERSION),
        "version_comment" => Value::from("waterline, a miniature MVCC row store"),
        "waterline_planner_mode" => Value::from(format!("{:?}", s.planner).to_ascii_lowercase()),
        "port" => Value::Int(i64::from(s.shared.listening.lock().port)),
        "hostname" => Value::Str("localhost".into()),
        _ => return Err(SqlError::unknown_variable(name)),
    })
}

fn text_of(v: &Value) -> String {
    crate::types::text(v).unwrap_or_default()
}

fn assign(s: &mut Session, name: &str, e: &Ast, params: &[Value]) -> Result<(), SqlError> {
    let lower = name.to_ascii_lowercase();
    let name = lower
        .trim_start_matches("@@")
        .trim_start_matches("session.")
        .trim_start_matches("local.");
    // `SET x = ON` names a keyword, not a column.
    let value = match e {
        Ast::Identifier(id) => Value::from(id.value.as_str()),
        other => Binder::new(&[])
            .expr(other, "set")?
            .eval(Env { rows: &[], params })?,
    };
    match name {
        "autocommit" => {
            let on = match &value {
                Value::Int(n) => *n != 0,
                Value::Str(t) => matches!(t.to_ascii_uppercase().as_str(), "ON" | "1" | "TRUE"),
                _ => {
                    return Err(SqlError::new(
                        1231,
                        "42000",
                        "Variable 'autocommit' can't be set to the value of NULL",
                    ));
                }
            };
            if on && !s.autocommit {
                s.commit()?; // turning autocommit on commits the open transaction
            }
            s.autocommit = on;
        }
        "transaction_isolation" | "tx_isolation" => {
            s.isolation = parse_isolation(&text_of(&value))?
        }
        "waterline_planner_mode" => {
            s.planner = text_of(&value)
                .parse::<PlannerMode>()
                .map_err(|m| SqlError::new(1231, "42000", m))?;
        }
        // Accepted and kept as they are: what connectors set at connect.
        "sql_mode"
        | "names"
        | "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "collation_connection"
        | "time_zone"
        | "sql_safe_updates"
        | "net_write_timeout"
        | "wait_timeout"
        | "interactive_timeout"
        | "sql_select_limit"
        | "session_track_schema"
        | "session_track_state_change"
        | "foreign_key_checks"
        | "unique_checks"
        | "sql_log_bin" => {}
        _ if name.starts_with('@') => {} // a user variable: accepted, not kept
        other => {
            get(s, other)?; // unknown: 1193
            return Err(SqlError::new(
                1238,
                "HY000",
                format!("Variable '{other}' is a read only variable"),
            ));
        }
    }
    Ok(())
}

/// SET statements.
pub(crate) fn set(s: &mut Session, set: &Set, params: &[Value]) -> Result<Response, SqlError> {
    match set {
        Set::SingleAssignment {
            variable, values, ..
        } => {
            let [value] = values.as_slice() else {
                return Err(SqlError::parse("SET takes one value"));
            };
            assign(s, &variable.to_string(), value, params)?;
        }
        Set::MultipleAssignments { assignments } => {
            for a in assignments {
                assign(s, &a.name.to_string(), &a.value, params)?;
            }
        }
        Set::SetNames { .. } | Set::SetNamesDefault {} | Set::SetTimeZone { .. } => {}
        Set::SetTransaction { modes, session, .. } => {
            for mode in modes {
                if let TransactionMode::IsolationLevel(level) = mode {
                    let isolation = match level {
                        TransactionIsolationLevel::ReadCommitted
                        | TransactionIsolationLevel::ReadUncommitted => Isolation::ReadCommitted,
                        _ => Isolation::RepeatableRead,
                    };
                    if *session {
                        s.isolation = isolation;
                    } else {
                        s.next_isolation = Some(isolation);
                    }
                }
            }
        }
        other => return Err(SqlError::unsupported(other)),
    }
    Ok(Response::done(0))
}

fn like(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match (p.first(), t.first()) {
            (None, None) => true,
            (Some(b'%'), _) => go(&p[1..], t) || (!t.is_empty() && go(p, &t[1..])),
            (Some(b'_'), Some(_)) => go(&p[1..], &t[1..]),
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => go(&p[1..], &t[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

fn filtered(
    rows: Vec<(String, Value)>,
    filter: Option<&ShowStatementFilter>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let keep = |name: &str| match filter {
        None => Ok(true),
        Some(ShowStatementFilter::Like(p) | ShowStatementFilter::NoKeyword(p)) => Ok(like(p, name)),
        Some(other) => Err(SqlError::unsupported(format!("SHOW ... {other}"))),
    };
    let mut out = Vec::new();
    for (name, value) in rows {
        if keep(&name)? {
            out.push(vec![Value::from(name), Value::from(text_of(&value))]);
        }
    }
    Ok(out)
}

/// SHOW [SESSION | GLOBAL] VARIABLES [LIKE 'pattern'].
pub(crate) fn show_variables(
    s: &Session,
    filter: Option<&ShowStatementFilter>,
) -> Result<Response, SqlError> {
    let rows = NAMES
        .iter()
        .map(|n| Ok(((*n).to_owned(), get(s, n)?)))
        .collect::<Result<Vec<_>, SqlError>>()?;
    Ok(Response::text(
        &["Variable_name", "Value"],
        filtered(rows, filter)?,
    ))
}

/// SHOW STATUS [LIKE 'pattern']: the server's counters and the engine's (views, bytes
/// copied, latch acquisitions, lock waits, group commit, admission).
pub(crate) fn show_status(
    s: &Session,
    filter: Option<&ShowStatementFilter>,
) -> Result<Response, SqlError> {
    let c = &s.shared.counters;
    let load = |a: &std::sync::atomic::AtomicU64| Value::Int(a.load(Ordering::Relaxed) as i64);
    let engine = s.shared.engine.stats();
    let counter = |k: Counter| Value::Int(engine.get(k) as i64);
    let mut rows = vec![
        ("Connections".to_owned(), load(&c.connections)),
        ("Questions".into(), load(&c.questions)),
        ("Threads_connected".into(), load(&c.threads_connected)),
        ("Rows_examined".into(), load(&c.rows_examined)),
        ("Rows_sent".into(), load(&c.rows_sent)),
        (
            "Waterline_implicit_rollbacks".into(),
            load(&c.implicit_rollbacks),
        ),
        (
            "Waterline_views_opened".into(),
            counter(Counter::ViewsOpened),
        ),
        (
            "Waterline_views_closed".into(),
            counter(Counter::ViewsClosed),
        ),
        (
            "Waterline_view_bytes_copied".into(),
            counter(Counter::ViewBytesCopied),
        ),
        (
            "Waterline_trx_sys_latch".into(),
            counter(Counter::TrxSysLatch),
        ),
        (
            "Waterline_registry_latch".into(),
            counter(Counter::RegistryLatch),
        ),
        (
            "Waterline_rw_trx_begun".into(),
            counter(Counter::RwTrxBegun),
        ),
        ("Waterline_commits".into(), counter(Counter::Commits)),
        ("Waterline_rollbacks".into(), counter(Counter::Rollbacks)),
        ("Innodb_row_lock_waits".into(), counter(Counter::LockWaits)),
        (
            "Waterline_lock_wait_timeouts".into(),
            counter(Counter::LockWaitTimeouts),
        ),
        (
            "Waterline_lock_nowaits".into(),
            counter(Counter::LockNowaits),
        ),
        ("Innodb_deadlocks".into(), counter(Counter::Deadlocks)),
        ("Waterline_lock_boosts".into(), counter(Counter::LockBoosts)),
        (
            "Waterline_lock_boosts_denied".into(),
            counter(Counter::LockBoostsDenied),
        ),
        (
            "Waterline_versions_purged".into(),
            counter(Counter::VersionsPurged),
        ),
    ];
    if let Some(g) = s.shared.engine.commit_stats() {
        rows.push((
            "Waterline_group_commits".into(),
            Value::Int(g.groups as i64),
        ));
        rows.push(("Waterline_fsyncs".into(), Value::Int(g.fsyncs as i64)));
        rows.push(("Waterline_wakeups".into(), Value::Int(g.wakeups as i64)));
        rows.push((
            "Waterline_wasted_wakeups".into(),
            Value::Int(g.wasted_wakeups as i64),
        ));
    }
    if let Some(a) = s.shared.engine.admission() {
        let m = a.metrics();
        rows.push((
            "Waterline_admission_inside".into(),
            Value::Int(m.inside as i64),
        ));
        rows.push((
            "Waterline_admission_waiting".into(),
            Value::Int(m.waiting as i64),
        ));
        rows.push((
            "Waterline_admission_limit".into(),
            m.limit.map_or(Value::Null, |l| Value::Int(l as i64)),
        ));
        rows.push((
            "Waterline_admission_admitted".into(),
            Value::Int(m.admitted as i64),
        ));
        rows.push((
            "Waterline_admission_wait_max_us".into(),
            Value::Int(m.wait_max_us as i64),
        ));
    }
    Ok(Response::text(
        &["Variable_name", "Value"],
        filtered(rows, filter)?,
    ))
}
