//! A table schema in one line of SQL's column syntax, for embedding and tests:
//! `TableSchema::parse("t(id INT PRIMARY KEY, v BIGINT)")`.
//!
//! The text is what follows `CREATE TABLE`: the table's name, then in parentheses its
//! columns (`name TYPE [UNSIGNED] [NOT NULL | NULL] [PRIMARY KEY]`), a table-level
//! `PRIMARY KEY (a, b)`, and indexes (`[UNIQUE] INDEX | KEY name (a, b)`). A column is
//! nullable unless it says NOT NULL or is part of the primary key, as in SQL. Types:
//! TINYINT, SMALLINT, MEDIUMINT, INT (INTEGER), BIGINT, DECIMAL(p, s), CHAR(n),
//! VARCHAR(n), DATETIME[(fsp)], DOUBLE. The SQL layer parses real CREATE TABLE statements
//! with sqlparser; this is the short way in for code that has no SQL layer.

use crate::error::{Refusal, SchemaError};
use crate::schema::{Column, ColumnType, TableSchema};

/// One token: a word (backquotes removed), a number, or one of `( ) ,`.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Number(u32),
    Open,
    Close,
    Comma,
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' => {
                chars.next();
                out.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
            }
            '`' => {
                chars.next();
                let word: String = chars.by_ref().take_while(|&c| c != '`').collect();
                out.push(Token::Word(word));
            }
            c if c.is_ascii_digit() => {
                let mut digits = String::new();
                while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(d);
                    chars.next();
                }
                let n = digits
                    .parse()
                    .map_err(|_| format!("{digits} is too large"))?;
                out.push(Token::Number(n));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut word = String::new();
                while let Some(&w) = chars.peek().filter(|w| w.is_alphanumeric() || **w == '_') {
                    word.push(w);
                    chars.next();
                }
                out.push(Token::Word(word));
            }
            other => return Err(format!("unexpected {other:?}")),
        }
    }
    Ok(out)
}

/// A walk over the tokens.
struct Reader {
    tokens: Vec<Token>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expect(&mut self, want: Token) -> Result<(), String> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            other => Err(format!("expected {want:?}, found {other:?}")),
        }
    }

    fn word(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Token::Word(w)) => Ok(w),
            other => Err(format!("expected a name, found {other:?}")),
        }
    }

    /// Whether the next words are `words` (any case); if so, reads them.
    fn says(&mut self, words: &[&str]) -> bool {
        let matches = words.iter().enumerate().all(|(i, w)| {
            matches!(self.tokens.get(self.at + i), Some(Token::Word(t)) if t.eq_ignore_ascii_case(w))
        });
        if matches {
            self.at += words.len();
        }
        matches
    }

    fn number(&mut self) -> Result<u32, String> {
        match self.next() {
            Some(Token::Number(n)) => Ok(n),
            other => Err(format!("expected a number, found {other:?}")),
        }
    }

    /// `(n)` or `(n, m)` after a type, if there is one.
    fn arguments(&mut self) -> Result<Vec<u32>, String> {
        if self.peek() != Some(&Token::Open) {
            return Ok(Vec::new());
        }
        self.next();
        let mut out = vec![self.number()?];
        while self.peek() == Some(&Token::Comma) {
            self.next();
            out.push(self.number()?);
        }
        self.expect(Token::Close)?;
        Ok(out)
    }

    /// `(a, b, ...)`: column names.
    fn names(&mut self) -> Result<Vec<String>, String> {
        self.expect(Token::Open)?;
        let mut out = vec![self.word()?];
        while self.peek() == Some(&Token::Comma) {
            self.next();
            out.push(self.word()?);
        }
        self.expect(Token::Close)?;
        Ok(out)
    }

    fn column_type(&mut self) -> Result<ColumnType, String> {
        let name = self.word()?.to_ascii_uppercase();
        let args = self.arguments()?;
        let width = |bytes: u8, signed: ColumnType| (bytes, signed);
        let (bytes, signed) = match name.as_str() {
            "TINYINT" => width(1, ColumnType::TinyInt),
            "SMALLINT" => width(2, ColumnType::SmallInt),
            "MEDIUMINT" => width(3, ColumnType::MediumInt),
            "INT" | "INTEGER" => width(4, ColumnType::Int),
            "BIGINT" => width(8, ColumnType::BigInt),
            _ => {
                return match (name.as_str(), args.as_slice()) {
                    ("DOUBLE", []) => Ok(ColumnType::Double),
                    ("DATETIME", []) => Ok(ColumnType::DateTime(0)),
                    ("DATE", []) => Ok(ColumnType::Date),
                    ("DATETIME", [fsp]) if *fsp <= 6 => Ok(ColumnType::DateTime(*fsp as u8)),
                    ("CHAR", [n]) => Ok(ColumnType::Char(*n)),
                    ("VARCHAR", [n]) => Ok(ColumnType::Varchar(*n)),
                    ("DECIMAL", []) => Ok(ColumnType::Decimal {
                        precision: 10,
                        scale: 0,
                    }),
                    ("DECIMAL", [p, rest @ ..]) if rest.len() <= 1 => {
                        let scale = rest.first().copied().unwrap_or(0);
                        let digits = |n: u32| u8::try_from(n).map_err(|_| "too many digits");
                        Ok(ColumnType::Decimal {
                            precision: digits(*p)?,
                            scale: digits(scale)?,
                        })
                    }
                    _ => Err(format!("unknown type {name}{args:?}")),
                };
            }
        };
        Ok(if self.says(&["UNSIGNED"]) {
            ColumnType::Unsigned(bytes)
        } else {
            signed
        })
    }
}

impl TableSchema {
    /// The schema `text` declares, in SQL's column syntax (see the module page):
    ///
    /// ```
    /// use waterline_types::{ColumnType, TableSchema};
    ///
    /// let t = TableSchema::parse(
    ///     "stock(w_id INT, i_id INT, qty SMALLINT NOT NULL, PRIMARY KEY (w_id, i_id), \
    ///      KEY by_qty (qty))",
    /// )?;
    /// assert_eq!(t.primary_key, Some(vec![0, 1]));
    /// assert_eq!(t.columns[2].ty, ColumnType::SmallInt);
    /// assert_eq!(t.indexes[0].name, "by_qty");
    /// # Ok::<(), waterline_types::SchemaError>(())
    /// ```
    pub fn parse(text: &str) -> Result<TableSchema, SchemaError> {
        let refused = |reason: String| SchemaError {
            table: text.split('(').next().unwrap_or("").trim().to_owned(),
            column: "*".to_owned(),
            kind: Refusal::Definition,
            reason,
        };
        let mut r = Reader {
            tokens: tokens(text).map_err(refused)?,
            at: 0,
        };
        let name = r.word().map_err(refused)?;
        let mut columns = Vec::new();
        let mut primary: Vec<String> = Vec::new();
        let mut indexes: Vec<(String, Vec<String>, bool)> = Vec::new();
        r.expect(Token::Open).map_err(refused)?;
        loop {
            if r.says(&["PRIMARY", "KEY"]) {
                primary = r.names().map_err(refused)?;
            } else if r.says(&["UNIQUE"]) {
                let _ = r.says(&["INDEX"]) || r.says(&["KEY"]);
                let index = r.word().map_err(refused)?;
                indexes.push((index, r.names().map_err(refused)?, true));
            } else if r.says(&["INDEX"]) || r.says(&["KEY"]) {
                let index = r.word().map_err(refused)?;
                indexes.push((index, r.names().map_err(refused)?, false));
            } else {
                let column = r.word().map_err(refused)?;
                let ty = r.column_type().map_err(refused)?;
                let mut nullable = true;
                loop {
                    if r.says(&["NOT", "NULL"]) {
                        nullable = false;
                    } else if r.says(&["NULL"]) {
                        nullable = true;
                    } else if r.says(&["PRIMARY", "KEY"]) {
                        primary = vec![column.clone()];
                    } else {
                        break;
                    }
                }
                columns.push(Column {
                    name: column,
                    ty,
                    nullable,
                });
            }
            match r.next() {
                Some(Token::Comma) => continue,
                Some(Token::Close) if r.peek().is_none() => break,
                other => return Err(refused(format!("expected , or ), found {other:?}"))),
            }
        }
        for c in &mut columns {
            if primary.iter().any(|p| p.eq_ignore_ascii_case(&c.name)) {
                c.nullable = false;
            }
        }
        let mut schema = TableSchema::new(name, columns);
        if !primary.is_empty() {
            let names: Vec<&str> = primary.iter().map(String::as_str).collect();
            schema = schema.primary_key(&names)?;
        }
        for (index, names, unique) in &indexes {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            schema = schema.index(index, &names, *unique)?;
        }
        schema.validate()?;
        Ok(schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_reads_as_create_table_would() {
        let t = TableSchema::parse(
            "`orders`(id BIGINT UNSIGNED PRIMARY KEY, who VARCHAR(16) NOT NULL, \
             total DECIMAL(12, 2), at DATETIME(6) NULL, UNIQUE KEY by_who (who, at))",
        )
        .unwrap();
        assert_eq!(t.name, "orders");
        assert_eq!(t.primary_key, Some(vec![0]));
        let types: Vec<ColumnType> = t.columns.iter().map(|c| c.ty).collect();
        assert_eq!(
            types,
            [
                ColumnType::Unsigned(8),
                ColumnType::Varchar(16),
                ColumnType::Decimal {
                    precision: 12,
                    scale: 2
                },
                ColumnType::DateTime(6),
            ]
        );
        let nullable: Vec<bool> = t.columns.iter().map(|c| c.nullable).collect();
        assert_eq!(nullable, [false, false, true, true]);
        assert!(t.indexes[0].unique);
        assert_eq!(t.indexes[0].columns, [1, 3]);
    }

    #[test]
    fn what_it_cannot_read_it_refuses() {
        for text in [
            "t",
            "t(",
            "t(id)",
            "t(id BLOB)",
            "t(id INT,)",
            "t(id INT) extra",
            "t(id INT, PRIMARY KEY (nope))",
            "t(id DATETIME(7))",
            "t(id INT @)",
        ] {
            assert!(TableSchema::parse(text).is_err(), "{text}");
        }
    }
}
