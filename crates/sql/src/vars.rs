//! System variables (`@@name`, SET, SHOW VARIABLES) and SHOW STATUS, which reports the
//! engine's own counters next to the server's.
//!
//! SHOW STATUS's counters are here too. The values a session keeps are `settings.rs`'s.

use std::sync::atomic::Ordering;
use std::time::Duration;

use sqlparser::ast::{
    ContextModifier, Expr as Ast, Set, ShowStatementFilter, TransactionAccessMode,
    TransactionIsolationLevel, TransactionMode,
};
use waterline_planner::bind::Binder;
use waterline_planner::{Env, PlannerMode};
use waterline_txn::{Counter, Isolation, Value};

use crate::error::SqlError;
use crate::session::{Context, Response};
use crate::settings::{
    DEFAULT_SQL_MODE, Level, OptimizerSwitch, SqlMode, TimeZone, isolation_name, parse_isolation,
    read_uncommitted,
};
use crate::shared::Timeouts;

/// Names the server answers for, in SHOW VARIABLES order.
const NAMES: [&str; 38] = [
    "auto_increment_increment",
    "autocommit",
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "collation_connection",
    "connect_timeout",
    "foreign_key_checks",
    "innodb_flush_log_at_trx_commit",
    "innodb_lock_wait_timeout",
    "innodb_rollback_on_timeout",
    "interactive_timeout",
    "license",
    "lower_case_table_names",
    "max_allowed_packet",
    "max_connections",
    "max_execution_time",
    "net_read_timeout",
    "net_write_timeout",
    "optimizer_switch",
    "optimizer_trace",
    "socket",
    "sql_mode",
    "sql_notes",
    "sql_quote_show_create",
    "system_time_zone",
    "thread_handling",
    "time_zone",
    "transaction_isolation",
    "tx_isolation",
    "unique_checks",
    "version",
    "version_comment",
    "wait_timeout",
    "waterline_admission",
    "waterline_durability",
    "waterline_lock_release",
    "waterline_planner_mode",
];

/// What the engine's commits are: `in-memory` (no log), `fdatasync-per-group` (the log
/// synced before a group's commits are acknowledged) or `os-write` (written, synced by the
/// OS).
fn durability(s: &Context<'_>) -> &'static str {
    let engine = &s.shared().engine;
    if engine.log_since_checkpoint().is_none() {
        return "in-memory";
    }
    match engine.config().commit.flush {
        waterline_txn::FlushPolicy::Os => "os-write",
        waterline_txn::FlushPolicy::None => "in-memory",
        waterline_txn::FlushPolicy::EveryCommit => "fdatasync-per-group",
    }
}

/// The value of system variable `name` (after `@@`; `session.`, `local.` or `global.` may
/// lead it: the session's value, or the one new sessions start with).
pub fn get(s: &Context<'_>, name: &str) -> Result<Value, SqlError> {
    let name = name.to_ascii_lowercase();
    let global = name.starts_with("global.");
    let name = name
        .trim_start_matches("session.")
        .trim_start_matches("global.")
        .trim_start_matches("local.");
    let engine = s.shared().engine.config();
    if global {
        match name {
            "autocommit" | "foreign_key_checks" | "unique_checks" => return Ok(Value::Int(1)),
            "innodb_lock_wait_timeout" => {
                return Ok(Value::Int(engine.lock_wait_timeout.as_secs() as i64));
            }
            "sql_mode" => return Ok(Value::from(DEFAULT_SQL_MODE)),
            "innodb_rollback_on_timeout" => {
                return Ok(Value::Int(i64::from(s.shared().config.rollback_on_timeout)));
            }
            "wait_timeout"
            | "interactive_timeout"
            | "net_read_timeout"
            | "net_write_timeout"
            | "max_execution_time" => {
                return Ok(timeout(&s.shared().config.timeouts, name).unwrap_or(Value::Null));
            }
            "time_zone" => return Ok(Value::from("SYSTEM")),
            "transaction_isolation" | "tx_isolation" => {
                let level = Level::Engine(s.shared().config.isolation);
                return Ok(Value::from(isolation_name(level)));
            }
            _ => {}
        }
    }
    Ok(match name {
        "auto_increment_increment" | "lower_case_table_names" => Value::Int(1),
        "autocommit" => Value::Int(i64::from(s.settings().autocommit)),
        "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "character_set_server"
        | "character_set_database" => Value::Str("utf8mb4".into()),
        "collation_connection" | "collation_server" | "collation_database" => {
            Value::Str("utf8mb4_bin".into())
        }
        "innodb_lock_wait_timeout" => Value::Int(s.settings().lock_wait_timeout.as_secs() as i64),
        "innodb_rollback_on_timeout" => {
            Value::Int(i64::from(s.shared().config.rollback_on_timeout))
        }
        "foreign_key_checks" => Value::Int(i64::from(s.settings().foreign_key_checks)),
        // What a commit's acknowledgement means, read back from the engine: 1 when the log
        // is synced per group (fdatasync), 2 when it is written to the OS only, 0 without a
        // log (in memory: MySQL's nearest, whose 0 flushes once a second; waterline's keeps
        // nothing across a restart, as `waterline_durability` says).
        "innodb_flush_log_at_trx_commit" => Value::Int(match durability(s) {
            "fdatasync-per-group" => 1,
            "os-write" => 2,
            _ => 0,
        }),
        "waterline_durability" => Value::from(durability(s)),
        // When a durable commit's row locks go: `after-sync` or `early`; `n/a` in memory,
        // where a commit publishes (and lets go) at once.
        "waterline_lock_release" => Value::from(match durability(s) {
            "in-memory" => "n/a",
            _ => engine.commit.lock_release.name(),
        }),
        // Transactions admitted at once: `unlimited`, `limit:N`, `adaptive`.
        "waterline_admission" => Value::from(engine.admission.name()),
        "sql_quote_show_create" => Value::Int(1),
        "sql_notes" => Value::Int(i64::from(s.settings().sql_notes)),
        "unique_checks" => Value::Int(i64::from(s.settings().unique_checks)),
        "interactive_timeout"
        | "wait_timeout"
        | "net_read_timeout"
        | "net_write_timeout"
        | "max_execution_time" => timeout(&s.settings().timeouts, name).unwrap_or(Value::Null),
        "connect_timeout" => Value::Int(s.shared().config.connect_timeout.as_secs() as i64),
        // SQL a server runs for each new connection: none.
        "init_connect" => Value::from(""),
        "license" => Value::Str("MIT OR Apache-2.0".into()),
        "max_allowed_packet" => Value::Int(s.shared().config.max_allowed_packet as i64),
        "max_connections" => Value::Int(i64::from(s.shared().listening.lock().max_connections)),
        // The Rust client reads this at connect (NULL would fail it) and, connected to a
        // loopback address, moves to the socket named here unless told not to.
        "socket" => Value::from(s.shared().listening.lock().socket.clone()),
        "sql_mode" => Value::from(s.settings().sql_mode.text.as_str()),
        "system_time_zone" => Value::from("UTC"),
        "time_zone" => Value::from(s.settings().time_zone.text.as_str()),
        "transaction_isolation" | "tx_isolation" => {
            Value::from(isolation_name(s.settings().isolation))
        }
        "transaction_read_only" | "tx_read_only" => Value::Int(i64::from(s.settings().read_only)),
        "performance_schema" => Value::Int(0),
        "version" => Value::from(crate::VERSION),
        "version_comment" => Value::from("waterline, a miniature MVCC row store"),
        "optimizer_switch" => Value::from(s.settings().optimizer_switch.text()),
        "optimizer_trace" => Value::from(if s.settings().optimizer_trace {
            "enabled=on,one_line=off"
        } else {
            "enabled=off,one_line=off"
        }),
        "waterline_planner_mode" => {
            Value::from(format!("{:?}", s.settings().planner).to_ascii_lowercase())
        }
        "port" => Value::Int(i64::from(s.shared().listening.lock().port)),
        "hostname" => Value::Str("localhost".into()),
        "thread_handling" => Value::from(s.shared().listening.lock().thread_handling),
        _ => {
            let listening = s.shared().listening.lock();
            let pool = name.strip_prefix("thread_pool_").and_then(|setting| {
                let mut settings = listening.thread_pool.iter();
                settings.find(|(n, _)| *n == setting)
            });
            match pool {
                Some((_, value)) => value.clone(),
                None => return Err(SqlError::unknown_variable(name)),
            }
        }
    })
}

/// A timeout variable's value: seconds, or for `max_execution_time` milliseconds.
fn timeout(t: &Timeouts, name: &str) -> Option<Value> {
    let secs = |d: Duration| Value::Int(d.as_secs() as i64);
    Some(match name {
        "wait_timeout" => secs(t.wait),
        "interactive_timeout" => secs(t.interactive),
        "net_read_timeout" => secs(t.net_read),
        "net_write_timeout" => secs(t.net_write),
        "max_execution_time" => Value::Int(t.max_execution.as_millis() as i64),
        _ => return None,
    })
}

/// An integer variable's new value, clamped into `range` with MySQL's warning 1292 (and
/// error 1232 for a value that is not an integer).
fn integer(
    s: &mut Context<'_>,
    name: &str,
    value: &Value,
    range: std::ops::RangeInclusive<i64>,
) -> Result<u64, SqlError> {
    let Value::Int(n) = *value else {
        return Err(SqlError::new(
            1232,
            "42000",
            format!("Incorrect argument type to variable '{name}'"),
        ));
    };
    let kept = n.clamp(*range.start(), *range.end());
    if kept != n {
        s.warn(
            "Warning",
            1292,
            format!("Truncated incorrect {name} value: '{n}'"),
        );
    }
    Ok(kept as u64)
}

fn text_of(v: &Value) -> String {
    crate::types::text(v).unwrap_or_default()
}

/// A boolean system variable's new value: 1, 0, ON, OFF, TRUE, FALSE.
fn switch(name: &str, value: &Value) -> Result<bool, SqlError> {
    let wrong = || {
        SqlError::new(
            1231,
            "42000",
            format!(
                "Variable '{name}' can't be set to the value of '{}'",
                text_of(value)
            ),
        )
    };
    match value {
        Value::Int(0) => Ok(false),
        Value::Int(1) => Ok(true),
        Value::Str(t) => match t.to_ascii_uppercase().as_str() {
            "ON" | "TRUE" | "1" => Ok(true),
            "OFF" | "FALSE" | "0" => Ok(false),
            _ => Err(wrong()),
        },
        Value::Null => Err(SqlError::new(
            1231,
            "42000",
            format!("Variable '{name}' can't be set to the value of 'NULL'"),
        )),
        _ => Err(wrong()),
    }
}

fn assign(
    s: &mut Context<'_>,
    global: bool,
    name: &str,
    e: &Ast,
    params: &[Value],
) -> Result<(), SqlError> {
    let lower = name.to_ascii_lowercase();
    let unprefixed = lower.trim_start_matches("@@");
    if global || unprefixed.starts_with("global.") {
        // One server-wide value for every session is not built: the command line sets it.
        return Err(SqlError::unsupported("SET GLOBAL"));
    }
    let name = unprefixed
        .trim_start_matches("session.")
        .trim_start_matches("local.");
    // `SET x = ON` names a keyword, not a column.
    let value = match e {
        Ast::Identifier(id) if !id.value.starts_with('@') => Value::from(id.value.as_str()),
        other => Binder::new(&[])
            .with_session(s)
            .expr(other, "set")?
            .eval(Env::new(&[], params))?,
    };
    match name {
        "autocommit" => {
            let on = switch(name, &value)?;
            if on && !s.settings().autocommit {
                s.commit()?; // turning autocommit on commits the open transaction
            }
            s.settings_mut().autocommit = on;
        }
        "transaction_isolation" | "tx_isolation" => {
            s.settings_mut().isolation = parse_isolation(&text_of(&value))?
        }
        // MySQL's ranges; a value outside one is clamped, with a warning.
        "innodb_lock_wait_timeout" => {
            let secs = integer(s, name, &value, 1..=1_073_741_824)?;
            s.set_lock_wait_timeout(Duration::from_secs(secs));
        }
        "wait_timeout" | "interactive_timeout" | "net_read_timeout" | "net_write_timeout" => {
            let secs = Duration::from_secs(integer(s, name, &value, 1..=31_536_000)?);
            let t = &mut s.settings_mut().timeouts;
            *match name {
                "wait_timeout" => &mut t.wait,
                "interactive_timeout" => &mut t.interactive,
                "net_read_timeout" => &mut t.net_read,
                _ => &mut t.net_write,
            } = secs;
        }
        "max_execution_time" => {
            let ms = integer(s, name, &value, 0..=4_294_967_295)?;
            s.settings_mut().timeouts.max_execution = Duration::from_millis(ms);
        }
        "sql_mode" => s.settings_mut().sql_mode = SqlMode::parse(&text_of(&value))?,
        "time_zone" => s.settings_mut().time_zone = TimeZone::parse(&text_of(&value))?,
        "foreign_key_checks" => s.settings_mut().foreign_key_checks = switch(name, &value)?,
        "unique_checks" => s.settings_mut().unique_checks = switch(name, &value)?,
        "sql_notes" => s.settings_mut().sql_notes = switch(name, &value)?,
        "transaction_read_only" | "tx_read_only" => {
            s.settings_mut().read_only = switch(name, &value)?;
        }
        // Identifiers in SHOW CREATE TABLE are always quoted here.
        "sql_quote_show_create" => {
            if !switch(name, &value)? {
                return Err(SqlError::unsupported("sql_quote_show_create = 0"));
            }
        }
        "optimizer_trace" => {
            for (key, on) in flag_settings(name, &text_of(&value))? {
                match key.as_str() {
                    "enabled" | "default" => s.settings_mut().optimizer_trace = on == Some(true),
                    // The trace is lines of text either way.
                    "one_line" => {}
                    _ => return Err(wrong_value(name, &text_of(&value))),
                }
            }
        }
        "optimizer_switch" => {
            let mut switch = s.settings().optimizer_switch;
            for (key, on) in flag_settings(name, &text_of(&value))? {
                // Every flag's default is on.
                match (key.as_str(), switch.flag(&key)) {
                    ("default", _) => switch = OptimizerSwitch::default(),
                    (_, Some(flag)) => *flag = on.unwrap_or(true),
                    (_, None) => return Err(wrong_value(name, &text_of(&value))),
                }
            }
            s.settings_mut().optimizer_switch = switch;
        }
        "waterline_planner_mode" => {
            s.settings_mut().planner = text_of(&value)
                .parse::<PlannerMode>()
                .map_err(|m| SqlError::new(1231, "42000", m))?;
        }
        // Accepted and kept as they are: what connectors set at connect.
        "names"
        | "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "collation_connection"
        | "sql_safe_updates"
        | "sql_select_limit"
        | "session_track_schema"
        | "session_track_state_change"
        | "sql_log_bin" => {}
        _ if name.starts_with('@') => s.set_user_variable(&name[1..], value),
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
pub(crate) fn set(s: &mut Context<'_>, set: &Set, params: &[Value]) -> Result<Response, SqlError> {
    match set {
        Set::SingleAssignment {
            variable,
            values,
            scope,
            ..
        } => {
            let [value] = values.as_slice() else {
                return Err(SqlError::parse("SET takes one value"));
            };
            let global = matches!(scope, Some(ContextModifier::Global));
            assign(s, global, &variable.to_string(), value, params)?;
        }
        Set::MultipleAssignments { assignments } => {
            for a in assignments {
                let global = matches!(a.scope, Some(ContextModifier::Global));
                assign(s, global, &a.name.to_string(), &a.value, params)?;
            }
        }
        Set::SetTimeZone { value, .. } => assign(s, false, "time_zone", value, params)?,
        Set::SetNames { .. } | Set::SetNamesDefault {} => {}
        Set::SetTransaction { modes, session, .. } => {
            for mode in modes {
                if let TransactionMode::AccessMode(access) = mode {
                    let read_only = matches!(access, TransactionAccessMode::ReadOnly);
                    if *session {
                        s.settings_mut().read_only = read_only;
                    } else {
                        s.settings_mut().next_read_only = Some(read_only);
                    }
                }
                if let TransactionMode::IsolationLevel(level) = mode {
                    let isolation = match level {
                        TransactionIsolationLevel::ReadCommitted => {
                            Level::Engine(Isolation::ReadCommitted)
                        }
                        TransactionIsolationLevel::RepeatableRead => {
                            Level::Engine(Isolation::RepeatableRead)
                        }
                        TransactionIsolationLevel::Serializable => Level::Serializable,
                        TransactionIsolationLevel::ReadUncommitted => {
                            return Err(read_uncommitted());
                        }
                        other => return Err(SqlError::unsupported(other)),
                    };
                    if *session {
                        s.settings_mut().isolation = isolation;
                    } else {
                        s.settings_mut().next_isolation = Some(isolation);
                    }
                }
            }
        }
        other => return Err(SqlError::unsupported(other)),
    }
    Ok(Response::done(0))
}

/// SQL's LIKE, `%` and `_`, without case (the names SHOW lists).
pub(crate) fn like(pattern: &str, text: &str) -> bool {
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
    s: &Context<'_>,
    filter: Option<&ShowStatementFilter>,
) -> Result<Response, SqlError> {
    // SHOW VARIABLES says ON and OFF where SELECT @@name says 1 and 0.
    let shown = |name: &str, v: Value| match (name, v) {
        ("autocommit" | "foreign_key_checks" | "unique_checks", Value::Int(n)) => {
            Value::from(if n != 0 { "ON" } else { "OFF" })
        }
        (_, v) => v,
    };
    let mut rows = NAMES
        .iter()
        .map(|n| Ok(((*n).to_owned(), shown(n, get(s, n)?))))
        .collect::<Result<Vec<_>, SqlError>>()?;
    // A server's thread pool settings (none for embedded sessions), in name order.
    let pool = s.shared().listening.lock().thread_pool.clone();
    rows.extend(
        pool.into_iter()
            .map(|(name, value)| (format!("thread_pool_{name}"), value)),
    );
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Response::text(
        &["Variable_name", "Value"],
        filtered(rows, filter)?,
    ))
}

/// SHOW STATUS [LIKE 'pattern']: the server's counters and the engine's (views, bytes
/// copied, latch acquisitions, lock waits, group commit, admission).
pub(crate) fn show_status(
    s: &Context<'_>,
    filter: Option<&ShowStatementFilter>,
) -> Result<Response, SqlError> {
    let c = &s.shared().counters;
    let load = |a: &std::sync::atomic::AtomicU64| Value::Int(a.load(Ordering::Relaxed) as i64);
    let engine = s.shared().engine.stats();
    let counter = |k: Counter| Value::Int(engine.get(k) as i64);
    let mut rows = vec![
        (
            "Uptime".to_owned(),
            Value::Int(s.shared().started.elapsed().as_secs() as i64),
        ),
        ("Connections".to_owned(), load(&c.connections)),
        ("Questions".into(), load(&c.questions)),
        ("Threads_connected".into(), load(&c.threads_connected)),
        (
            "Threadpool_idle_threads".into(),
            load(&c.threadpool_idle_threads),
        ),
        ("Threadpool_threads".into(), load(&c.threadpool_threads)),
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
            "Waterline_trx_sys_latch_waits".into(),
            counter(Counter::TrxSysLatchWaits),
        ),
        (
            "Waterline_registry_latch".into(),
            counter(Counter::RegistryLatch),
        ),
        (
            "Waterline_registry_latch_waits".into(),
            counter(Counter::RegistryLatchWaits),
        ),
        (
            "Waterline_trx_sys_latch_held_ns".into(),
            counter(Counter::TrxSysLatchHeldNs),
        ),
        (
            "Waterline_registry_latch_held_ns".into(),
            counter(Counter::RegistryLatchHeldNs),
        ),
        (
            "Waterline_lock_table_latch".into(),
            counter(Counter::LockTableLatch),
        ),
        (
            "Waterline_lock_table_latch_held_ns".into(),
            counter(Counter::LockTableLatchHeldNs),
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
        (
            "Waterline_early_lock_releases".into(),
            counter(Counter::EarlyLockReleases),
        ),
        (
            "Waterline_lock_hold_after_log_write_us".into(),
            counter(Counter::LockHoldAfterLogWriteMicros),
        ),
    ];
    let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    // What this process spent so far (from /proc/self): `waterline tpcc` over mysql://
    // reads it around its measured window, as it reads its own in process.
    if let Some(usage) = crate::process::Usage::now() {
        rows.extend([
            (
                "Waterline_cpu_user_us".to_owned(),
                int(usage.user.as_micros() as u64),
            ),
            (
                "Waterline_cpu_system_us".to_owned(),
                int(usage.system.as_micros() as u64),
            ),
            ("Waterline_resident_bytes".to_owned(), int(usage.resident)),
            (
                "Waterline_voluntary_context_switches".to_owned(),
                int(usage.switches.voluntary),
            ),
            (
                "Waterline_involuntary_context_switches".to_owned(),
                int(usage.switches.involuntary),
            ),
        ]);
    }
    if let Some(g) = s.shared().engine.commit_stats() {
        rows.push((
            "Waterline_group_commits".into(),
            Value::Int(g.groups as i64),
        ));
        rows.push(("Waterline_fsyncs".into(), Value::Int(g.fsyncs as i64)));
        rows.push((
            "Waterline_fsync_us".into(),
            Value::Int(i64::try_from(g.sync_micros).unwrap_or(i64::MAX)),
        ));
        rows.push(("Waterline_wakeups".into(), Value::Int(g.wakeups as i64)));
        rows.push((
            "Waterline_wasted_wakeups".into(),
            Value::Int(g.wasted_wakeups as i64),
        ));
        for (stage, ns) in waterline_txn::COMMIT_STAGES.iter().zip(g.stage_held_ns) {
            rows.push((format!("Waterline_gc_{stage}_held_ns"), int(ns)));
        }
    }
    if let Some((taken, micros)) = s.shared().engine.checkpoint_stats() {
        rows.push(("Waterline_checkpoints".into(), int(taken)));
        rows.push(("Waterline_checkpoint_us".into(), int(micros)));
    }
    if let Some(a) = s.shared().engine.admission() {
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

/// MySQL's 1231 for a value variable `name` cannot take.
fn wrong_value(name: &str, text: &str) -> SqlError {
    SqlError::new(
        1231,
        "42000",
        format!("Variable '{name}' can't be set to the value of '{text}'"),
    )
}

/// The `flag=on|off|default` settings of a flags variable's value (`optimizer_switch`,
/// `optimizer_trace`), lower case, each `Some(on)` or `None` for `default`; `default` alone
/// is the flag `default`.
fn flag_settings(name: &str, text: &str) -> Result<Vec<(String, Option<bool>)>, SqlError> {
    let mut settings = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        if part.trim().eq_ignore_ascii_case("default") {
            settings.push(("default".to_owned(), None));
            continue;
        }
        let (key, setting) = part
            .split_once('=')
            .ok_or_else(|| wrong_value(name, text))?;
        let on = match setting.trim().to_ascii_lowercase().as_str() {
            "on" => Some(true),
            "off" => Some(false),
            "default" => None,
            _ => return Err(wrong_value(name, text)),
        };
        settings.push((key.trim().to_ascii_lowercase(), on));
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    #[test]
    fn show_variables_lists_names_in_order_as_mysql_does() {
        let mut sorted = super::NAMES;
        sorted.sort_unstable();
        assert_eq!(super::NAMES, sorted);
    }
}
