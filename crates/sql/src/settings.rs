//! What a session keeps of its variables (`SET` changes them, `@@name` reads them back;
//! `vars.rs` does both): autocommit, the isolation levels, the planner's mode, the lock wait
//! timeout, `sql_mode`, `time_zone` and the connection timeouts; and the clock NOW() reads.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use waterline_planner::PlannerMode;
use waterline_txn::Isolation;

use crate::error::SqlError;
use crate::shared::Timeouts;

/// A session's variables: what `SET [SESSION]` changes and `@@name` reads back. The session
/// keeps one and hands it out through `settings()`.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) autocommit: bool,
    pub(crate) isolation: Level,
    /// SET TRANSACTION (without SESSION): the next transaction only.
    pub(crate) next_isolation: Option<Level>,
    /// `transaction_read_only`: a transaction may not change tables (1792), temporary
    /// tables aside (SET SESSION TRANSACTION READ ONLY).
    pub(crate) read_only: bool,
    /// SET TRANSACTION READ ONLY | READ WRITE (without SESSION): the next transaction only.
    pub(crate) next_read_only: Option<bool>,
    pub(crate) planner: PlannerMode,
    /// `innodb_lock_wait_timeout`: how long this session's row-lock waits last.
    pub(crate) lock_wait_timeout: Duration,
    pub(crate) sql_mode: SqlMode,
    pub(crate) time_zone: TimeZone,
    /// `foreign_key_checks` (off: no foreign key is checked or cascades, see `write.rs`) and
    /// `unique_checks`, read back as set (uniqueness is checked always, as InnoDB does for a
    /// unique index that is not bulk-loaded).
    pub(crate) foreign_key_checks: bool,
    pub(crate) unique_checks: bool,
    /// `sql_notes`: whether a Note is kept as a warning (mysqldump's output turns it off).
    pub(crate) sql_notes: bool,
    /// `wait_timeout`, `net_read_timeout`, `max_execution_time` and the others.
    pub(crate) timeouts: Timeouts,
    /// `optimizer_trace`'s `enabled` (`session/trace.rs`).
    pub(crate) optimizer_trace: bool,
    /// `optimizer_switch`: the subquery strategies the planner may choose.
    pub(crate) optimizer_switch: OptimizerSwitch,
}

/// The flags of `optimizer_switch` waterline has, with MySQL's names and defaults (all on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OptimizerSwitch {
    /// `semijoin`: an EXISTS or IN subquery of WHERE may become a semi-join (or, negated,
    /// an anti-join).
    pub(crate) semijoin: bool,
    /// `firstmatch`: a semi-join may read the subquery's tables in the join, an outer row
    /// going on at its first match (MySQL's FirstMatch).
    pub(crate) firstmatch: bool,
    /// `materialization`: a subquery that does not refer to the query around it may run
    /// once: an IN of WHERE into a table `<subqueryN>` the block joins (MySQL's semi-join
    /// materialization), any other into constants. Off, such a subquery is flattened
    /// wherever it can be.
    pub(crate) materialization: bool,
}

impl OptimizerSwitch {
    /// The value of `@@optimizer_switch`.
    pub(crate) fn text(self) -> String {
        let on = |b: bool| if b { "on" } else { "off" };
        format!(
            "materialization={},semijoin={},firstmatch={}",
            on(self.materialization),
            on(self.semijoin),
            on(self.firstmatch)
        )
    }

    /// The flag named `name`, to set.
    pub(crate) fn flag(&mut self, name: &str) -> Option<&mut bool> {
        match name {
            "materialization" => Some(&mut self.materialization),
            "semijoin" => Some(&mut self.semijoin),
            "firstmatch" => Some(&mut self.firstmatch),
            _ => None,
        }
    }

    /// Whether a subquery of WHERE may become a semi-join or an anti-join, by one strategy
    /// or the other.
    pub(crate) fn semijoins(self) -> bool {
        self.semijoin && (self.firstmatch || self.materialization)
    }
}

impl Default for OptimizerSwitch {
    fn default() -> OptimizerSwitch {
        OptimizerSwitch {
            semijoin: true,
            firstmatch: true,
            materialization: true,
        }
    }
}

impl Settings {
    /// A new session's: the server's defaults.
    pub(crate) fn new(shared: &crate::shared::Shared) -> Settings {
        Settings {
            autocommit: true,
            isolation: Level::Engine(shared.config.isolation),
            next_isolation: None,
            read_only: false,
            next_read_only: None,
            planner: shared.config.planner,
            lock_wait_timeout: shared.engine.config().lock_wait_timeout,
            sql_mode: SqlMode::default(),
            time_zone: TimeZone::default(),
            foreign_key_checks: true,
            unique_checks: true,
            sql_notes: true,
            timeouts: shared.config.timeouts,
            optimizer_trace: false,
            optimizer_switch: OptimizerSwitch::default(),
        }
    }
}

/// The current time in UTC, in microseconds since 1970.
pub fn utc_micros() -> i64 {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    i64::try_from(micros).unwrap_or(0)
}

/// `micros` with `fsp` fractional digits kept (the rest cut off, as NOW(fsp) does).
pub fn truncate_fsp(micros: i64, fsp: u8) -> i64 {
    let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
    micros.div_euclid(unit) * unit
}

/// MySQL 8.0's default `sql_mode`.
pub const DEFAULT_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// The modes of `sql_mode` waterline accepts: those it follows (strictness,
/// NO_AUTO_VALUE_ON_ZERO) and those that change nothing it supports. The modes that change
/// how SQL parses or compares (ANSI_QUOTES, PIPES_AS_CONCAT, NO_BACKSLASH_ESCAPES,
/// PAD_CHAR_TO_FULL_LENGTH, ...) are refused, not ignored.
/// The order is MySQL's (it lists modes so); TRADITIONAL stands for the six from
/// STRICT_TRANS_TABLES to NO_ENGINE_SUBSTITUTION.
const SQL_MODES: [&str; 10] = [
    "ONLY_FULL_GROUP_BY",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "NO_ENGINE_SUBSTITUTION",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_DIR_IN_CREATE",
    "NO_AUTO_CREATE_USER",
];

/// A session's `sql_mode`: its text as `@@sql_mode` reads it back, and what waterline acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlMode {
    /// The modes, comma-separated, in MySQL's order.
    pub text: String,
    /// STRICT_TRANS_TABLES or STRICT_ALL_TABLES: a value that does not fit its column is an
    /// error (1264, 1366, 1406), not a warning and a clamped value.
    pub strict: bool,
    /// NO_AUTO_VALUE_ON_ZERO: 0 into an AUTO_INCREMENT column is stored as 0.
    pub no_auto_value_on_zero: bool,
    /// ONLY_FULL_GROUP_BY: a grouped query's select list may name only grouped columns
    /// (or columns of a table whose whole primary key is grouped), else 1055 / 1140.
    pub only_full_group_by: bool,
}

impl Default for SqlMode {
    fn default() -> SqlMode {
        SqlMode::parse(DEFAULT_SQL_MODE).expect("the default modes are known")
    }
}

impl SqlMode {
    /// `text` as MySQL reads `SET sql_mode = '...'`: names in any case, in any order, with
    /// `TRADITIONAL` standing for its modes. An unknown or refused mode is error 1231.
    pub fn parse(text: &str) -> Result<SqlMode, SqlError> {
        let refused = |what: &str| {
            SqlError::new(
                1231,
                "42000",
                format!("Variable 'sql_mode' can't be set to the value of '{what}'"),
            )
        };
        let mut on = [false; SQL_MODES.len()];
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let word = word.to_ascii_uppercase();
            // TRADITIONAL stands for SQL_MODES[1..7], STRICT_TRANS_TABLES to NO_ENGINE_SUBSTITUTION.
            let modes = if word == "TRADITIONAL" {
                1..7
            } else {
                match SQL_MODES.iter().position(|m| *m == word) {
                    Some(i) => i..i + 1,
                    None => return Err(refused(&word)),
                }
            };
            on[modes].fill(true);
        }
        let has = |m: &str| SQL_MODES.iter().zip(on).any(|(k, o)| o && *k == m);
        Ok(SqlMode {
            text: SQL_MODES
                .iter()
                .zip(on)
                .filter(|(_, o)| *o)
                .map(|(m, _)| *m)
                .collect::<Vec<_>>()
                .join(","),
            strict: has("STRICT_TRANS_TABLES") || has("STRICT_ALL_TABLES"),
            no_auto_value_on_zero: has("NO_AUTO_VALUE_ON_ZERO"),
            only_full_group_by: has("ONLY_FULL_GROUP_BY"),
        })
    }
}

/// A session's `time_zone`: `SYSTEM` (UTC: waterline's system time zone) or an offset from
/// UTC, `+HH:MM`. Named zones need time zone tables, which waterline does not have (MySQL
/// without them answers 1298, as here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeZone {
    /// As `@@time_zone` reads it back.
    pub text: String,
    /// Seconds east of UTC.
    pub offset_secs: i64,
}

impl Default for TimeZone {
    fn default() -> TimeZone {
        TimeZone {
            text: "SYSTEM".into(),
            offset_secs: 0,
        }
    }
}

impl TimeZone {
    /// `SYSTEM`, `UTC` or `[+-]HH:MM` (within MySQL's -13:59 to +14:00).
    pub fn parse(text: &str) -> Result<TimeZone, SqlError> {
        let unknown = || {
            SqlError::new(
                1298,
                "HY000",
                format!("Unknown or incorrect time zone: '{text}'"),
            )
        };
        let t = text.trim();
        if t.eq_ignore_ascii_case("SYSTEM") {
            return Ok(TimeZone::default());
        }
        if t.eq_ignore_ascii_case("UTC") {
            return Ok(TimeZone {
                text: t.to_owned(),
                offset_secs: 0,
            });
        }
        let (sign, rest) = match t.as_bytes().first() {
            Some(b'+') => (1, &t[1..]),
            Some(b'-') => (-1, &t[1..]),
            _ => return Err(unknown()),
        };
        let (h, m) = rest.split_once(':').ok_or_else(unknown)?;
        let (h, m): (i64, i64) = (
            h.parse().map_err(|_| unknown())?,
            m.parse().map_err(|_| unknown())?,
        );
        let offset = sign * (h * 3600 + m * 60);
        if m >= 60 || !(-(13 * 3600 + 59 * 60)..=14 * 3600).contains(&offset) {
            return Err(unknown());
        }
        Ok(TimeZone {
            text: format!("{}{h:02}:{m:02}", if sign < 0 { '-' } else { '+' }),
            offset_secs: offset,
        })
    }
}

/// A session's isolation level: one of the engine's, or SERIALIZABLE, which is InnoDB's:
/// REPEATABLE READ whose plain SELECTs read `FOR SHARE` inside a transaction (autocommit
/// SELECTs stay consistent reads). READ UNCOMMITTED is not built: dirty reads would need
/// reads of uncommitted versions, which the engine never gives; setting it is 1235.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// READ COMMITTED or REPEATABLE READ, as the engine runs them.
    Engine(Isolation),
    /// SERIALIZABLE.
    Serializable,
}

impl Level {
    /// The level the engine runs a transaction of this level at.
    pub(crate) fn engine(self) -> Isolation {
        match self {
            Level::Engine(i) => i,
            Level::Serializable => Isolation::RepeatableRead,
        }
    }
}

pub(crate) fn isolation_name(level: Level) -> &'static str {
    match level {
        Level::Engine(Isolation::ReadCommitted) => "READ-COMMITTED",
        Level::Engine(Isolation::RepeatableRead) => "REPEATABLE-READ",
        Level::Serializable => "SERIALIZABLE",
    }
}

pub(crate) fn read_uncommitted() -> SqlError {
    SqlError::unsupported("READ UNCOMMITTED (no dirty reads: use READ COMMITTED)")
}

pub(crate) fn parse_isolation(text: &str) -> Result<Level, SqlError> {
    match text.to_ascii_uppercase().replace(['-', '_'], " ").as_str() {
        "READ COMMITTED" => Ok(Level::Engine(Isolation::ReadCommitted)),
        "REPEATABLE READ" => Ok(Level::Engine(Isolation::RepeatableRead)),
        "SERIALIZABLE" => Ok(Level::Serializable),
        "READ UNCOMMITTED" => Err(read_uncommitted()),
        _ => Err(SqlError::new(
            1231,
            "42000",
            format!("Variable 'transaction_isolation' can't be set to the value of '{text}'"),
        )),
    }
}
