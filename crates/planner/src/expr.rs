//! Bound expressions: columns resolved to (table, column) positions, each expression knowing
//! the tables it uses (MySQL's `Item::used_tables()`).

use std::cmp::Ordering;
use std::fmt;

use smallvec::SmallVec;
use waterline_types::{Row, Value};

use crate::PlanError;
pub use crate::func::{FuncKind, TimeUnit, TrimSide};
use crate::table_map::TableMap;
use crate::value::{ArithOp, arith, boolean, sql_cmp, truth};

/// A column of a table in the query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnRef {
    /// The table's FROM position (its bit in a [`TableMap`]).
    pub table: usize,
    /// The column's position in the table's rows.
    pub column: usize,
    /// `table_or_alias.column`, for EXPLAIN and the trace.
    pub name: String,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>` / `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// `b op' a` that means `a op b` (`<` becomes `>`).
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            other => other,
        }
    }

    /// Whether `ordering` (of left against right) satisfies the operator.
    pub fn holds(self, ordering: Ordering) -> bool {
        match self {
            CmpOp::Eq => ordering.is_eq(),
            CmpOp::Ne => ordering.is_ne(),
            CmpOp::Lt => ordering.is_lt(),
            CmpOp::Le => ordering.is_le(),
            CmpOp::Gt => ordering.is_gt(),
            CmpOp::Ge => ordering.is_ge(),
        }
    }

    /// The operator as SQL writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "<>",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A bound expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A column of a table in the query.
    Column(ColumnRef),
    /// A constant.
    Literal(Value),
    /// The `n`th `?` placeholder (0-based), bound when the statement executes.
    Param(usize),
    /// Arithmetic.
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A comparison.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// `expr [NOT] BETWEEN low AND high`.
    Between {
        /// The tested expression.
        expr: Box<Expr>,
        /// Lower bound, inclusive.
        low: Box<Expr>,
        /// Upper bound, inclusive.
        high: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `expr [NOT] IN (list)`; `expr` may be a row.
    InList {
        /// The tested expression.
        expr: Box<Expr>,
        /// The candidates.
        list: Box<[Expr]>,
        /// `NOT IN`.
        negated: bool,
        /// The candidates sorted, when all are integer constants or all string constants
        /// ([`Expr::in_list`]): a value of the same kind is then found by binary search,
        /// not compared with each (a 100,000-item list against every row read). A thin
        /// pointer, and the list a boxed slice, so that an `Expr` stays 48 bytes (as a
        /// column reference is): every evaluation walks them.
        sorted: Option<std::sync::Arc<Vec<Value>>>,
    },
    /// A row value `(a, b)`.
    Row(Vec<Expr>),
    /// `expr IS [NOT] NULL`.
    IsNull(Box<Expr>, bool),
    /// Conjunction.
    And(Vec<Expr>),
    /// Disjunction.
    Or(Vec<Expr>),
    /// Negation.
    Not(Box<Expr>),
    /// `CASE`, and the functions that are one: IF, IFNULL, COALESCE, NULLIF (boxed, so that an
    /// `Expr` stays small).
    Case(Box<Case>),
    /// A string function (boxed, as `Case`).
    Func(Box<Func>),
    /// The group's value of aggregate number `n` (of the query's
    /// [`Output::aggs`](crate::exec::Output)): only in the select list, HAVING and ORDER
    /// BY of a grouped query, evaluated after grouping.
    Agg(usize),
}

/// A function and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Which.
    pub kind: FuncKind,
    /// Its arguments.
    pub args: Vec<Expr>,
}

impl Func {
    /// Out of line, as `in_list`.
    #[inline(never)]
    fn eval(&self, env: Env<'_>) -> Result<Value, PlanError> {
        let values = self
            .args
            .iter()
            .map(|a| a.eval(env))
            .collect::<Result<Vec<_>, _>>()?;
        crate::func::apply(self.kind, values)
    }
}

/// `CASE [operand] WHEN w THEN r ... [ELSE e] END`: the first `r` whose `w` is true (equals
/// `operand`, when there is one), else `e`, else NULL. IF(c, a, b) is a CASE with one WHEN;
/// COALESCE(a, b, ...) and IFNULL(a, b) one WHEN per argument but the last, each testing
/// `IS NOT NULL`; NULLIF(a, b) is `CASE WHEN a = b THEN NULL ELSE a END`.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The simple CASE's operand, compared with each WHEN.
    pub operand: Option<Expr>,
    /// Each WHEN and its THEN, in order.
    pub whens: Vec<(Expr, Expr)>,
    /// ELSE.
    pub otherwise: Option<Expr>,
}

impl Case {
    fn parts(&self) -> impl Iterator<Item = &Expr> {
        self.operand
            .iter()
            .chain(self.whens.iter().flat_map(|(w, t)| [w, t]))
            .chain(self.otherwise.iter())
    }
}

/// The values an expression may read: the current row of each table in the query (by FROM
/// position; `None` for a table not read yet), the statement's parameters and, after
/// grouping, the group's aggregates.
#[derive(Clone, Copy, Debug)]
pub struct Env<'a> {
    /// One slot per table.
    pub rows: &'a [Option<&'a Row>],
    /// The `?` values.
    pub params: &'a [Value],
    /// The group's aggregates ([`Expr::Agg`]); empty before grouping.
    pub aggs: &'a [Value],
}

impl<'a> Env<'a> {
    /// The values of `rows` and `params`, before grouping.
    pub fn new(rows: &'a [Option<&'a Row>], params: &'a [Value]) -> Env<'a> {
        Env {
            rows,
            params,
            aggs: &[],
        }
    }
}

/// [`Env::rows`] for the current rows `rows` (one per table, `None` if not read yet), on
/// the stack up to four tables: the executor builds one for every row it checks, the
/// planner for every value it evaluates.
pub fn row_refs(rows: &[Option<Row>]) -> SmallVec<[Option<&Row>; 4]> {
    rows.iter().map(Option::as_ref).collect()
}

impl Expr {
    /// The tables the expression reads (MySQL's `used_tables()`): a constant or a parameter
    /// uses none.
    pub fn used_tables(&self) -> TableMap {
        match self {
            Expr::Column(c) => TableMap::table(c.table),
            Expr::Literal(_) | Expr::Param(_) | Expr::Agg(_) => TableMap::EMPTY,
            Expr::Arith(_, a, b) | Expr::Cmp(_, a, b) => a.used_tables() | b.used_tables(),
            Expr::Neg(e) | Expr::Not(e) | Expr::IsNull(e, _) => e.used_tables(),
            Expr::Between {
                expr, low, high, ..
            } => expr.used_tables() | low.used_tables() | high.used_tables(),
            Expr::InList { expr, list, .. } => list
                .iter()
                .fold(expr.used_tables(), |m, e| m | e.used_tables()),
            Expr::Row(list) | Expr::And(list) | Expr::Or(list) => list
                .iter()
                .fold(TableMap::EMPTY, |m, e| m | e.used_tables()),
            Expr::Case(case) => case
                .parts()
                .fold(TableMap::EMPTY, |m, e| m | e.used_tables()),
            Expr::Func(func) => {
                let rand = match func.kind {
                    FuncKind::Sleep | FuncKind::Uuid => TableMap::RAND_TABLE_BIT,
                    _ => TableMap::EMPTY,
                };
                (func.args.iter()).fold(rand, |m, e| m | e.used_tables())
            }
        }
    }

    /// `expr [NOT] IN (list)`, with the list sorted for binary search when every candidate
    /// is an integer constant, or every one a string constant (see [`Expr::InList`]).
    pub fn in_list(expr: Expr, list: Vec<Expr>, negated: bool) -> Expr {
        let constants: Option<Vec<Value>> = list
            .iter()
            .map(|e| match e {
                Expr::Literal(v @ (Value::Int(_) | Value::Str(_))) => Some(v.clone()),
                _ => None,
            })
            .collect();
        let sorted = constants
            .filter(|c| {
                c.iter().all(|v| matches!(v, Value::Int(_)))
                    || c.iter().all(|v| matches!(v, Value::Str(_)))
            })
            .filter(|c| c.len() > 8)
            .map(|mut c| {
                c.sort();
                c.dedup();
                std::sync::Arc::new(c)
            });
        Expr::InList {
            expr: Box::new(expr),
            list: list.into_boxed_slice(),
            negated,
            sorted,
        }
    }

    /// Whether the expression contains a placeholder.
    pub fn has_params(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Param(_)));
        found
    }

    /// Calls `f` on this expression and every sub-expression.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        self.children(&mut |child| child.visit(f));
    }

    /// Calls `f` on each direct sub-expression.
    pub fn children(&self, f: &mut impl FnMut(&Expr)) {
        match self {
            Expr::Column(_) | Expr::Literal(_) | Expr::Param(_) | Expr::Agg(_) => {}
            Expr::Arith(_, a, b) | Expr::Cmp(_, a, b) => {
                f(a);
                f(b);
            }
            Expr::Neg(e) | Expr::Not(e) | Expr::IsNull(e, _) => f(e),
            Expr::Between {
                expr, low, high, ..
            } => {
                for e in [expr, low, high] {
                    f(e);
                }
            }
            Expr::InList { expr, list, .. } => {
                f(expr);
                list.iter().for_each(f);
            }
            Expr::Row(list) | Expr::And(list) | Expr::Or(list) => list.iter().for_each(f),
            Expr::Case(case) => case.parts().for_each(f),
            Expr::Func(func) => func.args.iter().for_each(f),
        }
    }

    /// The expression's value. A predicate gives 1, 0 or NULL.
    pub fn eval(&self, env: Env<'_>) -> Result<Value, PlanError> {
        Ok(match self {
            Expr::Column(c) => match env.rows.get(c.table).copied().flatten() {
                Some(row) => row.get(c.column).cloned().unwrap_or(Value::Null),
                None => {
                    return Err(PlanError::Internal(format!(
                        "{} read before its table",
                        c.name
                    )));
                }
            },
            Expr::Literal(v) => v.clone(),
            Expr::Param(n) => env
                .params
                .get(*n)
                .cloned()
                .ok_or(PlanError::MissingParam(*n))?,
            Expr::Arith(op, a, b) => arith(*op, &a.eval(env)?, &b.eval(env)?)?,
            Expr::Neg(e) => arith(ArithOp::Sub, &Value::Int(0), &e.eval(env)?)?,
            Expr::Cmp(op, a, b) => boolean(compare(*op, a, b, env)?),
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let v = expr.eval(env)?;
                let lo = sql_cmp(&v, &low.eval(env)?).map(Ordering::is_ge);
                let hi = sql_cmp(&v, &high.eval(env)?).map(Ordering::is_le);
                boolean(and3(lo, hi).map(|b| b != *negated))
            }
            Expr::InList {
                expr,
                list,
                negated,
                sorted,
            } => in_list(expr, list, *negated, sorted.as_deref(), env)?,
            Expr::Row(_) => {
                return Err(PlanError::Unsupported(
                    "a row value outside a comparison".into(),
                ));
            }
            Expr::IsNull(e, negated) => boolean(Some(e.eval(env)?.is_null() != *negated)),
            Expr::And(list) => boolean(connective(list, env, Some(true), and3)?),
            Expr::Or(list) => boolean(connective(list, env, Some(false), or3)?),
            Expr::Not(e) => boolean(truth(&e.eval(env)?).map(|b| !b)),
            Expr::Case(case) => case.eval(env)?,
            Expr::Func(func) => func.eval(env)?,
            Expr::Agg(n) => env.aggs.get(*n).cloned().ok_or_else(|| {
                PlanError::Internal(format!("aggregate {n} read before grouping"))
            })?,
        })
    }

    /// Whether the predicate is true (not false, not NULL) for `env`.
    pub fn is_true(&self, env: Env<'_>) -> Result<bool, PlanError> {
        Ok(truth(&self.eval(env)?) == Some(true))
    }

    /// The conjuncts of an AND tree (the expression itself if it is no AND).
    pub fn conjuncts(self) -> Vec<Expr> {
        match self {
            Expr::And(list) => list.into_iter().flat_map(Expr::conjuncts).collect(),
            other => vec![other],
        }
    }
}

/// `a op b`, where either side may be a row: rows compare element-wise (only `=` and `<>`).
/// `expr [NOT] IN (list)`: x = a OR x = b ..., NULL when nothing matched and a candidate
/// (or x) was NULL; with `sorted` (every candidate a constant of one kind, none NULL) a value
/// of that kind is looked up. Out of line: `eval` is on every statement's path, and this
/// is on few.
#[inline(never)]
fn in_list(
    expr: &Expr,
    list: &[Expr],
    negated: bool,
    sorted: Option<&Vec<Value>>,
    env: Env<'_>,
) -> Result<Value, PlanError> {
    if let Some(sorted) = sorted {
        let v = expr.eval(env)?;
        let found = match (&v, sorted.first()) {
            (Value::Null, _) => return Ok(Value::Null),
            (Value::Int(_), Some(Value::Int(_))) | (Value::Str(_), Some(Value::Str(_))) => {
                Some(sorted.binary_search(&v).is_ok())
            }
            _ => None,
        };
        if let Some(found) = found {
            return Ok(boolean(Some(found != negated)));
        }
    }
    let mut result = Some(false);
    for candidate in list {
        result = or3(result, compare(CmpOp::Eq, expr, candidate, env)?);
    }
    Ok(boolean(result.map(|b| b != negated)))
}

fn compare(op: CmpOp, a: &Expr, b: &Expr, env: Env<'_>) -> Result<Option<bool>, PlanError> {
    match (a, b) {
        (Expr::Row(xs), Expr::Row(ys)) => {
            if xs.len() != ys.len() {
                return Err(PlanError::Operand(xs.len()));
            }
            let mut all = Some(true);
            for (x, y) in xs.iter().zip(ys) {
                all = and3(all, compare(CmpOp::Eq, x, y, env)?);
            }
            match op {
                CmpOp::Eq => Ok(all),
                CmpOp::Ne => Ok(all.map(|b| !b)),
                _ => Err(PlanError::Unsupported(
                    "ordering comparison of row values".into(),
                )),
            }
        }
        (Expr::Row(xs), _) | (_, Expr::Row(xs)) => Err(PlanError::Operand(xs.len())),
        _ => Ok(sql_cmp(&a.eval(env)?, &b.eval(env)?).map(|o| op.holds(o))),
    }
}

impl Case {
    /// The value of the first THEN whose WHEN holds. Out of line, as `in_list`.
    #[inline(never)]
    fn eval(&self, env: Env<'_>) -> Result<Value, PlanError> {
        let operand = self.operand.as_ref().map(|o| o.eval(env)).transpose()?;
        for (when, then) in &self.whens {
            let w = when.eval(env)?;
            let holds = match &operand {
                Some(o) => sql_cmp(o, &w) == Some(Ordering::Equal),
                None => truth(&w) == Some(true),
            };
            if holds {
                return then.eval(env);
            }
        }
        match &self.otherwise {
            Some(e) => e.eval(env),
            None => Ok(Value::Null),
        }
    }
}

/// AND or OR over `list` in three-valued logic, from `unit` (true for AND, false for OR),
/// stopping at the value that decides it.
fn connective(
    list: &[Expr],
    env: Env<'_>,
    unit: Option<bool>,
    op: fn(Option<bool>, Option<bool>) -> Option<bool>,
) -> Result<Option<bool>, PlanError> {
    let decided = unit.map(|u| !u);
    let mut result = unit;
    for e in list {
        result = op(result, truth(&e.eval(env)?));
        if result == decided {
            break;
        }
    }
    Ok(result)
}

fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn list(f: &mut fmt::Formatter<'_>, items: &[Expr], sep: &str) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(c) => f.write_str(&c.name),
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Param(n) => write!(f, "?{}", n + 1),
            Expr::Arith(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Expr::Neg(e) => write!(f, "-({e})"),
            Expr::Cmp(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let not = if *negated { " not" } else { "" };
                write!(f, "({expr}{not} between {low} and {high})")
            }
            Expr::InList {
                expr,
                list: items,
                negated,
                ..
            } => {
                let not = if *negated { " not" } else { "" };
                write!(f, "({expr}{not} in (")?;
                list(f, items, ",")?;
                f.write_str("))")
            }
            Expr::Row(items) => {
                f.write_str("(")?;
                list(f, items, ",")?;
                f.write_str(")")
            }
            Expr::IsNull(e, negated) => {
                write!(f, "({e} is {}null)", if *negated { "not " } else { "" })
            }
            Expr::And(items) => {
                f.write_str("(")?;
                list(f, items, " and ")?;
                f.write_str(")")
            }
            Expr::Or(items) => {
                f.write_str("(")?;
                list(f, items, " or ")?;
                f.write_str(")")
            }
            Expr::Not(e) => write!(f, "(not {e})"),
            Expr::Case(case) => {
                f.write_str("(case")?;
                if let Some(operand) = &case.operand {
                    write!(f, " {operand}")?;
                }
                for (when, then) in &case.whens {
                    write!(f, " when {when} then {then}")?;
                }
                if let Some(otherwise) = &case.otherwise {
                    write!(f, " else {otherwise}")?;
                }
                f.write_str(" end)")
            }
            Expr::Func(func) => {
                write!(f, "{}(", func.kind.name())?;
                list(f, &func.args, ",")?;
                f.write_str(")")
            }
            Expr::Agg(n) => write!(f, "<aggregate {n}>"),
        }
    }
}
#[cfg(test)]
mod size {
    /// Expressions are walked at every evaluation: a variant that grows them all costs
    /// every statement. Box what is large.
    #[test]
    fn an_expression_stays_48_bytes() {
        let size = std::mem::size_of::<super::Expr>();
        assert!(size <= 48, "{size}");
    }
}
