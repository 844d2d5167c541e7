//! Parsing: one statement per query (MySQL's default without CLIENT_MULTI_STATEMENTS), the
//! few statements sqlparser does not know, and the placeholder count of a prepared statement.

use std::sync::LazyLock;

use sqlparser::ast::{LockClause, LockType, Set, SetExpr, Statement, TableFactor};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::SqlError;
use waterline_planner::walk;

/// Statements answered without sqlparser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Special {
    /// `SHOW WARNINGS`.
    ShowWarnings,
    /// `FLUSH` of what waterline has no cache or file of (TABLES without a lock,
    /// PRIVILEGES, STATUS, LOGS, HOSTS, ...): done as soon as asked.
    FlushNothing,
    /// `FLUSH TABLES [t, ...] WITH READ LOCK`: the named tables (database, table), or every
    /// base table if none is named, locked READ as LOCK TABLES does.
    FlushWithReadLock(Vec<(Option<String>, String)>),
    /// `SHUTDOWN` (MySQL 8.0's statement).
    Shutdown,
    /// `START TRANSACTION WITH CONSISTENT SNAPSHOT` (`, READ ONLY` or `, READ WRITE` may
    /// follow; mysqldump writes it inside a `/*!40100 ... */` comment): a transaction whose
    /// read view opens now, not at its first read. READ ONLY (`Some(true)`) or READ WRITE
    /// if it says.
    ConsistentSnapshot(Option<bool>),
    /// `ALTER TABLE t DISABLE KEYS` or `ENABLE KEYS` (mysqldump writes them around a
    /// table's rows): InnoDB has no such option, and says so with note 1031.
    NoKeysOption(String),
    /// `SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db]`: table, database.
    ShowIndex(String, Option<String>),
    /// `SHOW ENGINE INNODB STATUS`.
    EngineStatus,
    /// `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] name`: the name, and whether IF NOT
    /// EXISTS was said.
    ShowCreateDatabase(String, bool),
    /// `SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'pattern']`: database, pattern.
    ShowTableStatus(Option<String>, Option<String>),
}

/// A parsed query.
#[derive(Debug)]
pub enum Parsed {
    /// A statement for the dispatcher.
    Statement(Box<Statement>),
    /// One of the [`Special`] statements.
    Special(Special),
}

/// The transaction-control statements a client sends as text around every transaction,
/// parsed by sqlparser once: BEGIN and COMMIT then cost a comparison of words, not a parse
/// of text sent around every transaction.
static TRANSACTION_CONTROL: LazyLock<Vec<(&str, Statement)>> = LazyLock::new(|| {
    [
        "BEGIN",
        "BEGIN WORK",
        "START TRANSACTION",
        "COMMIT",
        "COMMIT WORK",
        "ROLLBACK",
        "ROLLBACK WORK",
    ]
    .into_iter()
    .map(|text| {
        let mut parsed = Parser::parse_sql(&MySqlDialect {}, text)
            .unwrap_or_else(|e| panic!("sqlparser parses {text}: {e}"));
        (text, parsed.remove(0))
    })
    .collect()
});

/// The words of `sql`: what lies between white space and `;`.
fn words(sql: &str) -> impl Iterator<Item = &str> {
    sql.split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
}

/// Whether `sql` has exactly the words of `text` (single-spaced), in any case.
fn says(sql: &str, text: &str) -> bool {
    let mut ours = words(sql);
    let mut theirs = text.split(' ');
    loop {
        match (ours.next(), theirs.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => {}
            _ => return false,
        }
    }
}

/// The table of `ALTER TABLE t DISABLE KEYS` or `ENABLE KEYS` (perhaps in a versioned
/// comment, `/*!40000 ... */`, as mysqldump writes it), if `sql` is one.
fn keys_switch(sql: &str) -> Option<String> {
    let mut words: Vec<&str> = words(sql).collect();
    if words.first().is_some_and(|w| w.starts_with("/*!")) && words.last() == Some(&"*/") {
        words = words[1..words.len() - 1].to_vec();
    }
    let [alter, table, name, switch, keys] = words[..] else {
        return None;
    };
    let is = |w: &str, like: &str| w.eq_ignore_ascii_case(like);
    let switch = is(switch, "DISABLE") || is(switch, "ENABLE");
    (is(alter, "ALTER") && is(table, "TABLE") && switch && is(keys, "KEYS"))
        .then(|| name.trim_matches('`').to_owned())
}

/// What a FLUSH statement asks (MySQL 8.0's grammar; 1064 for what it does not have).
fn flush(sql: &str) -> Result<Special, SqlError> {
    let text = sql.trim().trim_end_matches(';');
    // The words, with commas as words of their own, and what a versioned comment holds
    // (`/*!40101 LOCAL */`, as mysqldump writes it) as words of the statement.
    let mut spaced = text.replace(',', " , ").replace("*/", " ");
    while let Some(at) = spaced.find("/*!") {
        let digits = spaced[at + 3..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        spaced.replace_range(at..at + 3 + digits, " ");
    }
    let mut words: Vec<&str> = spaced.split_whitespace().skip(1).collect();
    if words.first().is_some_and(|w| {
        w.eq_ignore_ascii_case("NO_WRITE_TO_BINLOG") || w.eq_ignore_ascii_case("LOCAL")
    }) {
        words.remove(0);
    }
    let is = |w: &str, like: &str| w.eq_ignore_ascii_case(like);
    let syntax = || SqlError::parse(format!("the FLUSH statement {text}"));
    // The comma-separated items of a list, each its words.
    let items = |list: &[&str]| -> Result<Vec<Vec<String>>, SqlError> {
        let items: Vec<Vec<String>> = (list.split(|w| *w == ","))
            .map(|item| item.iter().map(|w| (*w).to_owned()).collect())
            .collect();
        match items.iter().any(Vec::is_empty) {
            true => Err(syntax()),
            false => Ok(items),
        }
    };
    if words
        .first()
        .is_some_and(|w| is(w, "TABLES") || is(w, "TABLE"))
    {
        let mut rest = &words[1..];
        let mut lock = false;
        if let [list @ .., a, b, c] = rest
            && is(a, "WITH")
            && is(b, "READ")
            && is(c, "LOCK")
        {
            lock = true;
            rest = list;
        } else if let [_, .., a, b] = rest
            && is(a, "FOR")
            && is(b, "EXPORT")
        {
            return Err(SqlError::unsupported("FLUSH TABLES ... FOR EXPORT"));
        }
        let mut tables = Vec::new();
        for item in (!rest.is_empty())
            .then(|| items(rest))
            .transpose()?
            .unwrap_or_default()
        {
            let [word] = item.as_slice() else {
                return Err(syntax());
            };
            let parts: Vec<String> = word.split('.').map(unquoted).collect();
            tables.push(match parts.as_slice() {
                [t] => (None, t.clone()),
                [db, t] => (Some(db.clone()), t.clone()),
                _ => return Err(syntax()),
            });
        }
        return Ok(match lock {
            true => Special::FlushWithReadLock(tables),
            false => Special::FlushNothing,
        });
    }
    const OPTIONS: [&str; 13] = [
        "PRIVILEGES",
        "STATUS",
        "HOSTS",
        "LOGS",
        "USER_RESOURCES",
        "OPTIMIZER_COSTS",
        "BINARY LOGS",
        "ENGINE LOGS",
        "ERROR LOGS",
        "GENERAL LOGS",
        "SLOW LOGS",
        "RELAY LOGS",
        "QUERY CACHE",
    ];
    for item in items(&words)? {
        if !OPTIONS.iter().any(|o| is(o, &item.join(" "))) {
            return Err(syntax());
        }
    }
    Ok(Special::FlushNothing)
}

/// An identifier as written: backquotes taken off.
fn unquoted(word: &str) -> String {
    word.strip_prefix('`')
        .and_then(|w| w.strip_suffix('`'))
        .unwrap_or(word)
        .replace("``", "`")
}

/// SHOW INDEX and SHOW TABLE STATUS (which sqlparser does not parse), if `sql` is one.
fn show_catalog(sql: &str) -> Option<Special> {
    let words: Vec<&str> = words(sql).collect();
    let is = |w: &str, like: &[&str]| like.iter().any(|l| w.eq_ignore_ascii_case(l));
    let from = |w: &str| is(w, &["FROM", "IN"]);
    match words[..] {
        [show, index, f, table]
            if is(show, &["SHOW"]) && is(index, &["INDEX", "INDEXES", "KEYS"]) && from(f) =>
        {
            Some(Special::ShowIndex(unquoted(table), None))
        }
        [show, index, f, table, g, db]
            if is(show, &["SHOW"])
                && is(index, &["INDEX", "INDEXES", "KEYS"])
                && from(f)
                && from(g) =>
        {
            Some(Special::ShowIndex(unquoted(table), Some(unquoted(db))))
        }
        [show, table, status, ref rest @ ..]
            if is(show, &["SHOW"]) && is(table, &["TABLE"]) && is(status, &["STATUS"]) =>
        {
            let (db, rest) = match rest {
                [f, db, rest @ ..] if from(f) => (Some(unquoted(db)), rest),
                _ => (None, rest),
            };
            let pattern = match rest {
                [] => None,
                [like, pattern] if is(like, &["LIKE"]) => {
                    let quoted = pattern.len() >= 2
                        && (pattern.starts_with('\'') && pattern.ends_with('\''));
                    if !quoted {
                        return None;
                    }
                    Some(pattern[1..pattern.len() - 1].to_owned())
                }
                _ => return None,
            };
            Some(Special::ShowTableStatus(db, pattern))
        }
        _ => None,
    }
}

/// Whether `sql` is `START TRANSACTION WITH CONSISTENT SNAPSHOT`, its WITH clause perhaps
/// in a versioned comment (`/*!40100 ... */`, which MySQL runs), perhaps followed by
/// `, READ ONLY` or `, READ WRITE`: then `Some` of its access mode (`Some(true)`: READ ONLY).
fn consistent_snapshot(sql: &str) -> Option<Option<bool>> {
    let mut text = sql.replace(',', " , ");
    if let Some(at) = text.find("/*!") {
        let digits = text[at + 3..]
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        text.replace_range(at..at + 3 + digits, " ");
        text = text.replacen("*/", " ", 1);
    }
    [
        ("", None),
        (" , READ ONLY", Some(true)),
        (" , READ WRITE", Some(false)),
    ]
    .into_iter()
    .find(|(rest, _)| {
        says(
            &text,
            &format!("START TRANSACTION WITH CONSISTENT SNAPSHOT{rest}"),
        )
    })
    .map(|(_, mode)| mode)
}

/// The deepest expression a statement may have, in levels of its parsed tree. sqlparser
/// builds `a + b + c ...` and `x OR y OR ...` as a tree that deepens by one level per
/// operator, without the recursion limit that caps every other kind of nesting (50), and
/// every walk of that tree (binding, evaluation, dropping it) recurses once per level.
/// MySQL's own limit is its thread stack (1436); a chain of a few thousand fails there too.
pub const MAX_EXPRESSION_DEPTH: usize = 1000;

/// The stack a thread that runs a session's statements needs: enough for an expression
/// [`MAX_EXPRESSION_DEPTH`] levels deep, walked recursively, in an unoptimized build too
/// (which spends about 10 KiB a level), with room to spare. It is reserved address space:
/// only the pages a statement touches become memory.
pub const SESSION_STACK: usize = 32 << 20;

/// One parenthesized group while [`check_expression_depth`] reads a statement.
#[derive(Default)]
struct Group {
    /// The deepest element of the group already read (elements are separated by commas
    /// and clause keywords, and are siblings in the tree).
    deepest: usize,
    /// Operators in the element being read: in any tree over them, every operand lies at
    /// most this deep below the element's root.
    operators: usize,
    /// The deepest group nested in the element being read.
    nested: usize,
}

impl Group {
    fn end_element(&mut self) {
        self.deepest = self.deepest.max(self.operators + self.nested);
        self.operators = 0;
        self.nested = 0;
    }

    /// The group's depth, one level for its parentheses.
    fn depth(mut self) -> usize {
        self.end_element();
        self.deepest + 1
    }
}

/// Error 1436 if `sql`'s expressions may be more than [`MAX_EXPRESSION_DEPTH`] levels deep,
/// found by one pass over its bytes (quoted text skipped). Each parenthesized group's depth
/// is bounded by the operators of its deepest element plus the depth of the groups that
/// element holds, so a chain split by parentheses (`(a + ... + b) + ... + c`) adds up. It
/// counts every operator symbol and AND, OR, XOR, NOT, DIV, MOD, IS, LIKE, BETWEEN and IN as
/// one level, so it over-counts (`<=` is two) and never under-counts.
fn check_expression_depth(sql: &str) -> Result<(), SqlError> {
    let bytes = sql.as_bytes();
    let mut groups = vec![Group::default()];
    let mut i = 0usize;
    while i < bytes.len() {
        fn group(groups: &mut [Group]) -> &mut Group {
            groups.last_mut().expect("the statement's own group stays")
        }
        match bytes[i] {
            b @ (b'\'' | b'"' | b'`') => {
                // Quoted text: skip to the closing quote (a doubled or escaped one stays
                // inside).
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if bytes[i] == b {
                        if bytes.get(i + 1) == Some(&b) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
            }
            b'(' => groups.push(Group::default()),
            b')' if groups.len() > 1 => {
                let inner = groups.pop().expect("more than one").depth();
                let outer = groups.last_mut().expect("more than one");
                outer.nested = outer.nested.max(inner);
            }
            b',' | b';' => group(&mut groups).end_element(),
            b'+' | b'-' | b'*' | b'/' | b'%' | b'=' | b'<' | b'>' | b'!' | b'&' | b'|' | b'^'
            | b'~' => group(&mut groups).operators += 1,
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &sql[start..i];
                if [
                    "AND", "OR", "XOR", "NOT", "DIV", "MOD", "IS", "LIKE", "BETWEEN", "IN",
                ]
                .iter()
                .any(|k| word.eq_ignore_ascii_case(k))
                {
                    group(&mut groups).operators += 1;
                } else if [
                    "SELECT", "FROM", "WHERE", "SET", "VALUES", "ON", "HAVING", "BY",
                ]
                .iter()
                .any(|k| word.eq_ignore_ascii_case(k))
                {
                    group(&mut groups).end_element();
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Unclosed groups close at the end (the parser refuses the statement anyway).
    let mut depth = 0;
    while let Some(mut group) = groups.pop() {
        group.nested = group.nested.max(depth);
        depth = group.depth();
    }
    if depth - 1 > MAX_EXPRESSION_DEPTH {
        return Err(SqlError::new(
            1436,
            "HY000",
            format!(
                "Thread stack overrun: an expression is more than {MAX_EXPRESSION_DEPTH} \
                 levels deep (each operator of a chain is one); split it, or use IN (...)"
            ),
        ));
    }
    Ok(())
}

/// `sql` without its last words if they are `LOCK IN SHARE MODE` (as tokens, not in a
/// comment or a string), else `None`.
fn without_lock_in_share_mode(sql: &str) -> Option<&str> {
    const CLAUSE: [&str; 4] = ["LOCK", "IN", "SHARE", "MODE"];
    let mut rest = sql.trim_end_matches(|c: char| c.is_whitespace() || c == ';');
    for word in CLAUSE.iter().rev() {
        let cut = rest.len().checked_sub(word.len())?;
        if !rest.is_char_boundary(cut) || !rest[cut..].eq_ignore_ascii_case(word) {
            return None;
        }
        rest = &rest[..cut];
        if !rest.ends_with(char::is_whitespace) {
            return None;
        }
        rest = rest.trim_end();
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    let mut tail = tokens
        .iter()
        .rev()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon));
    let tokens_too = CLAUSE.iter().rev().all(|word| {
        matches!(tail.next(), Some(Token::Word(w))
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
    });
    tokens_too.then_some(rest)
}

/// Parses exactly one statement (a trailing `;` is fine).
pub fn one(sql: &str) -> Result<Parsed, SqlError> {
    // A client that sends the C string's NUL with it (mariadb-slap does): MySQL's lexer ends
    // the query there.
    let sql = sql.trim_end_matches('\0');
    let word = |n: usize, like: &[&str]| {
        words(sql)
            .nth(n)
            .is_some_and(|w| like.iter().any(|l| w.eq_ignore_ascii_case(l)))
    };
    if words(sql).next().is_none() {
        return Err(SqlError::new(1065, "42000", "Query was empty"));
    }
    if says(sql, "SHOW WARNINGS") {
        return Ok(Parsed::Special(Special::ShowWarnings));
    }
    if says(sql, "SHUTDOWN") {
        return Ok(Parsed::Special(Special::Shutdown));
    }
    if let Some(read_only) = consistent_snapshot(sql) {
        return Ok(Parsed::Special(Special::ConsistentSnapshot(read_only)));
    }
    if says(sql, "SHOW ENGINE INNODB STATUS") {
        return Ok(Parsed::Special(Special::EngineStatus));
    }
    if word(0, &["SHOW"]) && word(1, &["CREATE"]) && word(2, &["DATABASE", "SCHEMA"]) {
        let rest: Vec<&str> = words(sql).skip(3).collect();
        let is = |w: &str, like: &str| w.eq_ignore_ascii_case(like);
        return match rest.as_slice() {
            [name] => Ok(Parsed::Special(Special::ShowCreateDatabase(
                unquoted(name),
                false,
            ))),
            [i, n, e, name] if is(i, "IF") && is(n, "NOT") && is(e, "EXISTS") => Ok(
                Parsed::Special(Special::ShowCreateDatabase(unquoted(name), true)),
            ),
            _ => Err(SqlError::parse(format!("the statement {sql}"))),
        };
    }
    if let Some(show) = show_catalog(sql) {
        return Ok(Parsed::Special(show));
    }
    if let Some(table) = keys_switch(sql) {
        return Ok(Parsed::Special(Special::NoKeysOption(table)));
    }
    if word(0, &["FLUSH"]) {
        return flush(sql).map(Parsed::Special);
    }
    if let Some((_, statement)) = TRANSACTION_CONTROL.iter().find(|(text, _)| says(sql, text)) {
        return Ok(Parsed::Statement(Box::new(statement.clone())));
    }
    check_expression_depth(sql)?;
    let shared_lock = without_lock_in_share_mode(sql);
    let text = shared_lock.unwrap_or(sql);
    let mut statements = Parser::parse_sql(&MySqlDialect {}, text).map_err(SqlError::parse)?;
    match statements.len() {
        1 => {
            let mut statement = statements.remove(0);
            if shared_lock.is_some() {
                // MySQL's older spelling of FOR SHARE, which sqlparser does not know.
                match &mut statement {
                    Statement::Query(q) if q.locks.is_empty() => q.locks.push(LockClause {
                        lock_type: LockType::Share,
                        of: None,
                        nonblock: None,
                    }),
                    _ => {
                        return Err(SqlError::parse(
                            "LOCK IN SHARE MODE ends a SELECT without another locking clause",
                        ));
                    }
                }
            }
            // sqlparser drops MySQL's scope word in `SET SESSION TRANSACTION ...`.
            if let Statement::Set(Set::SetTransaction { session, .. }) = &mut statement
                && word(1, &["SESSION", "GLOBAL"])
            {
                *session = true;
            }
            without_dual(&mut statement);
            Ok(Parsed::Statement(Box::new(statement)))
        }
        0 => Err(SqlError::new(1065, "42000", "Query was empty")),
        _ => Err(SqlError::parse(
            "one statement per query (multi-statements are off)",
        )),
    }
}

/// `FROM DUAL` is no FROM at all (MySQL's dummy table, for those who need a FROM): taken
/// out of every SELECT of a statement (subqueries and UNIONs too), so `SELECT 1 FROM DUAL`
/// is `SELECT 1`.
fn without_dual(statement: &mut Statement) {
    struct Strip;
    impl sqlparser::ast::VisitorMut for Strip {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut sqlparser::ast::Query) -> std::ops::ControlFlow<()> {
            strip(q.body.as_mut());
            std::ops::ControlFlow::Continue(())
        }
    }
    fn strip(body: &mut SetExpr) {
        match body {
            SetExpr::Select(select) => {
                if let [from] = select.from.as_slice()
                    && from.joins.is_empty()
                    && let TableFactor::Table {
                        name, alias: None, ..
                    } = &from.relation
                    && let [part] = name.0.as_slice()
                    && part.as_ident().is_some_and(|i| {
                        i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DUAL")
                    })
                {
                    select.from.clear();
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                strip(left);
                strip(right);
            }
            _ => {}
        }
    }
    let _ = walk::visit_mut(statement, &mut Strip);
}

/// The number of `?` placeholders in `node` (a query, or a part of a statement).
pub(crate) fn placeholders(node: &impl sqlparser::ast::Visit) -> usize {
    let mut n = 0;
    let _ = walk::exprs(node, |e| {
        n += usize::from(matches!(
            e,
            sqlparser::ast::Expr::Value(v)
                if matches!(v.value, sqlparser::ast::Value::Placeholder(_))
        ));
        std::ops::ControlFlow::<()>::Continue(())
    });
    n
}

/// How many `?` placeholders `statement` has.
pub fn count_params(statement: &Statement) -> usize {
    let text = statement.to_string();
    Tokenizer::new(&MySqlDialect {}, &text)
        .tokenize()
        .map(|tokens| {
            tokens
                .iter()
                .filter(|t| matches!(t, Token::Placeholder(p) if p == "?"))
                .count()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlparser(sql: &str) -> Vec<Statement> {
        Parser::parse_sql(&MySqlDialect {}, sql).unwrap()
    }

    #[test]
    fn transaction_control_parses_as_sqlparser_would_in_any_spelling() {
        for sql in [
            "BEGIN",
            "begin;",
            "  Begin  Work ",
            "START TRANSACTION",
            "start\ttransaction;",
            "COMMIT",
            "commit work;",
            "ROLLBACK",
            "Rollback\nWork",
        ] {
            let Parsed::Statement(ours) = one(sql).unwrap() else {
                panic!("{sql}: not a statement");
            };
            assert_eq!(vec![*ours], sqlparser(sql), "{sql}");
        }
    }

    #[test]
    fn lock_in_share_mode_is_for_share() {
        for sql in [
            "SELECT a FROM t WHERE a = 1 LOCK IN SHARE MODE",
            "select a from t where a = 1\nlock  in share\tmode ;",
        ] {
            let Parsed::Statement(ours) = one(sql).unwrap() else {
                panic!("{sql}: not a statement");
            };
            assert_eq!(
                vec![*ours],
                sqlparser("SELECT a FROM t WHERE a = 1 FOR SHARE"),
                "{sql}"
            );
        }
        for sql in [
            "SELECT a FROM t -- LOCK IN SHARE MODE",
            "SELECT 'LOCK IN SHARE MODE'",
            "SELECT a FROM t FOR UPDATE LOCK IN SHARE MODE",
            "UPDATE t SET a = 1 LOCK IN SHARE MODE",
            "SELECT a FROM t `LOCK` IN SHARE MODE",
        ] {
            let parsed = one(sql);
            assert!(
                match &parsed {
                    Ok(Parsed::Statement(s)) =>
                        matches!(&**s, Statement::Query(q) if q.locks.is_empty()),
                    _ => true,
                },
                "{sql}: {parsed:?}"
            );
        }
    }

    #[test]
    fn other_transaction_statements_still_go_to_sqlparser() {
        for sql in [
            "START TRANSACTION READ ONLY",
            "COMMIT AND CHAIN",
            "ROLLBACK TO SAVEPOINT s",
        ] {
            let Parsed::Statement(ours) = one(sql).unwrap() else {
                panic!("{sql}: not a statement");
            };
            assert_eq!(vec![(*ours).clone()], sqlparser(sql), "{sql}");
            assert!(
                TRANSACTION_CONTROL.iter().all(|(_, s)| *s != *ours),
                "{sql}"
            );
        }
        let two = one("BEGIN; COMMIT").expect_err("two statements are refused");
        assert_eq!(two.code, 1064);
        assert!(matches!(one(" ;"), Err(e) if e.code == 1065));
    }
}

/// The N of a `MAX_EXECUTION_TIME(N)` optimizer hint (`SELECT /*+ MAX_EXECUTION_TIME(1000)
/// */ ...`): MySQL takes it only in the hint comment right after a statement's first
/// SELECT, and so does this. Other hints in the comment are ignored, as MySQL ignores a hint
/// it does not know.
pub(crate) fn max_execution_time_hint(sql: &str) -> Option<u64> {
    let rest = sql.trim_start();
    let keyword = rest.get(..6)?;
    if !keyword.eq_ignore_ascii_case("select") {
        return None;
    }
    let rest = rest[6..].trim_start().strip_prefix("/*+")?;
    let hints = &rest[..rest.find("*/")?];
    let upper = hints.to_ascii_uppercase();
    let at = upper.find("MAX_EXECUTION_TIME")?;
    let args = upper[at + "MAX_EXECUTION_TIME".len()..]
        .trim_start()
        .strip_prefix('(')?;
    let number = &args[..args.find(')')?];
    number.trim().parse().ok()
}

#[cfg(test)]
mod hint_tests {
    use super::max_execution_time_hint as hint;

    #[test]
    fn the_hint_is_read_where_mysql_reads_it() {
        assert_eq!(
            hint("SELECT /*+ MAX_EXECUTION_TIME(1000) */ * FROM t"),
            Some(1000)
        );
        assert_eq!(
            hint("  select/*+ BKA(t) max_execution_time ( 5 ) */ 1"),
            Some(5)
        );
        assert_eq!(
            hint("SELECT /* MAX_EXECUTION_TIME(1000) */ 1"),
            None,
            "a comment"
        );
        assert_eq!(
            hint("SELECT 1 /*+ MAX_EXECUTION_TIME(1000) */"),
            None,
            "not first"
        );
        assert_eq!(
            hint("UPDATE /*+ MAX_EXECUTION_TIME(1000) */ t SET a = 1"),
            None
        );
        assert_eq!(hint("SELECT /*+ MAX_EXECUTION_TIME(x) */ 1"), None);
        assert_eq!(hint("SELECT /*+ MAX_EXECUTION_TIME(1"), None);
        assert_eq!(hint("SELEC"), None);
        assert_eq!(hint("é"), None);
    }
}
