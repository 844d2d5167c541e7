//! Parsing: one statement per query (MySQL's default without CLIENT_MULTI_STATEMENTS), the
//! few statements sqlparser does not know, and the placeholder count of a prepared statement.

use sqlparser::ast::{Set, Statement};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::SqlError;

/// Statements answered without sqlparser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// `SHOW WARNINGS`.
    ShowWarnings,
    /// Accepted and ignored (`FLUSH ...`, `LOCK`-free no-ops that clients send).
    Ignored,
}

/// A parsed query.
#[derive(Debug)]
pub enum Parsed {
    /// A statement for the dispatcher.
    Statement(Box<Statement>),
    /// One of the [`Special`] statements.
    Special(Special),
}

/// Parses exactly one statement (a trailing `;` is fine).
pub fn one(sql: &str) -> Result<Parsed, SqlError> {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_uppercase)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["SHOW", "WARNINGS"] => return Ok(Parsed::Special(Special::ShowWarnings)),
        ["FLUSH", ..] => return Ok(Parsed::Special(Special::Ignored)),
        [] => return Err(SqlError::new(1065, "42000", "Query was empty")),
        _ => {}
    }
    let mut statements = Parser::parse_sql(&MySqlDialect {}, sql).map_err(SqlError::parse)?;
    match statements.len() {
        1 => {
            let mut statement = statements.remove(0);
            // sqlparser drops MySQL's scope word in `SET SESSION TRANSACTION ...`.
            if let Statement::Set(Set::SetTransaction { session, .. }) = &mut statement
                && matches!(words.get(1), Some(&"SESSION") | Some(&"GLOBAL"))
            {
                *session = true;
            }
            Ok(Parsed::Statement(Box::new(statement)))
        }
        0 => Err(SqlError::new(1065, "42000", "Query was empty")),
        _ => Err(SqlError::parse(
            "one statement per query (multi-statements are off)",
        )),
    }
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
