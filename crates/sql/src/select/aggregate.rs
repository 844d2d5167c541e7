//! Aggregates in the select list's SQL: which function calls are COUNT, SUM, MIN, MAX and
//! AVG. The executor runs them (`waterline_planner::exec`'s `aggregate.rs`).

use sqlparser::ast::{self, Expr as Ast, FunctionArguments};
use waterline_planner::exec::AggFunc;

/// The aggregate `f` calls, if it is one, and its arguments.
pub(super) fn aggregate(f: &ast::Function) -> Option<(AggFunc, &FunctionArguments)> {
    let func = match f.name.to_string().to_ascii_uppercase().as_str() {
        "COUNT" => AggFunc::Count,
        "SUM" => AggFunc::Sum,
        "MIN" => AggFunc::Min,
        "MAX" => AggFunc::Max,
        "AVG" => AggFunc::Avg,
        _ => return None,
    };
    Some((func, &f.args))
}

/// Whether `e` calls an aggregate anywhere.
pub(super) fn contains_aggregate(e: &Ast) -> bool {
    match e {
        Ast::Function(f) => aggregate(f).is_some(),
        Ast::Nested(x) => contains_aggregate(x),
        Ast::BinaryOp { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        _ => false,
    }
}
