//! A subquery's results as SQL: constants, IN lists, and the column types of a derived
//! table's rows.

use sqlparser::ast::{self, Expr as Ast, TableFactor};
use waterline_txn::{ColumnType, Value};

use crate::error::SqlError;
use crate::session::ResultColumn;
use crate::types::{FieldType, NOT_FIXED_DEC, UNSIGNED_FLAG};

/// A FROM item that names table `name`.
pub(super) fn table_named(name: &ast::Ident) -> TableFactor {
    TableFactor::Table {
        name: ast::ObjectName::from(vec![name.clone()]),
        alias: None,
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_hints: Vec::new(),
    }
}

/// A derived table's column type: what its result column says, a string as long as its
/// longest value.
pub(super) fn column_type<'v>(
    column: &ResultColumn,
    values: impl Iterator<Item = &'v Value>,
) -> ColumnType {
    let unsigned = column.flags & UNSIGNED_FLAG != 0;
    let int = |signed: ColumnType, bytes: u8| {
        if unsigned {
            ColumnType::Unsigned(bytes)
        } else {
            signed
        }
    };
    match column.ty {
        FieldType::Tiny => int(ColumnType::TinyInt, 1),
        FieldType::Short => int(ColumnType::SmallInt, 2),
        FieldType::Int24 => int(ColumnType::MediumInt, 3),
        FieldType::Long => int(ColumnType::Int, 4),
        FieldType::LongLong => int(ColumnType::BigInt, 8),
        FieldType::NewDecimal => {
            let scale = values
                .filter_map(Value::as_decimal)
                .map(|d| d.scale())
                .max()
                .unwrap_or(0)
                .max(if column.decimals == NOT_FIXED_DEC {
                    0
                } else {
                    column.decimals
                });
            ColumnType::Decimal {
                precision: 38,
                scale: scale.min(30),
            }
        }
        FieldType::Double => ColumnType::Double,
        FieldType::DateTime => ColumnType::DateTime(column.decimals.min(6)),
        FieldType::Date => ColumnType::Date,
        FieldType::String | FieldType::VarString => {
            let longest = values
                .filter_map(Value::as_str)
                .map(|t| t.chars().count())
                .max()
                .unwrap_or(0);
            ColumnType::Varchar(u32::try_from(longest.max(1)).unwrap_or(u32::MAX))
        }
    }
}

/// A value as a constant of SQL text.
pub(super) fn constant(v: &Value) -> Ast {
    let value = match v {
        Value::Null => ast::Value::Null,
        Value::Int(n) => ast::Value::Number(n.to_string(), false),
        Value::Decimal(d) => ast::Value::Number(d.to_string(), false),
        Value::Double(f) => ast::Value::Number(format!("{f:e}"), false),
        Value::Str(_) => ast::Value::SingleQuotedString(v.as_str().unwrap_or_default().to_owned()),
        Value::DateTime(t) => ast::Value::SingleQuotedString(t.to_string()),
        Value::Date(t) => ast::Value::SingleQuotedString(t.day()),
    };
    // A negative number is a minus before it, as the parser reads one.
    if let ast::Value::Number(n, _) = &value
        && let Some(digits) = n.strip_prefix('-')
    {
        return Ast::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr: Box::new(Ast::Value(
                ast::Value::Number(digits.to_owned(), false).into(),
            )),
        };
    }
    Ast::Value(value.into())
}

/// A row as a constant: one value, or a tuple.
pub(super) fn row_constant(row: &[Value]) -> Ast {
    match row {
        [one] => constant(one),
        many => Ast::Tuple(many.iter().map(constant).collect()),
    }
}

/// `expr [NOT] IN` the subquery's `rows`: the list of them, or for none, false (true for
/// NOT IN) whatever `expr` is.
pub(super) fn in_list(expr: &Ast, rows: Vec<Vec<Value>>, negated: bool) -> Ast {
    if rows.is_empty() {
        return Ast::Value(ast::Value::Boolean(negated).into());
    }
    Ast::InList {
        expr: Box::new(expr.clone()),
        list: rows.iter().map(|r| row_constant(r)).collect(),
        negated,
    }
}

/// A scalar (or row) subquery's value: NULL for no row, error 1242 for more than one.
pub(super) fn scalar(rows: Vec<Vec<Value>>) -> Result<Ast, SqlError> {
    match rows.as_slice() {
        [] => Ok(Ast::Value(ast::Value::Null.into())),
        [row] => Ok(row_constant(row)),
        _ => Err(SqlError::new(
            1242,
            "21000",
            "Subquery returns more than 1 row",
        )),
    }
}
