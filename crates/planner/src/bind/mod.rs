//! Binding: sqlparser's AST to [`Expr`]s whose columns are resolved against the query's
//! tables, and the parts of a SELECT the planner needs (tables, conditions, columns used,
//! ORDER BY / GROUP BY). Function calls (aggregates included) are bound in `functions.rs`.

use sqlparser::ast::{
    self, BinaryOperator, GroupByExpr, OrderByKind, SelectItem, SetExpr, TableFactor, UnaryOperator,
};
use std::sync::Arc;

use waterline_types::{Decimal, TableSchema, Value};

use crate::PlanError;
use crate::catalog::Catalog;
use crate::exec::Agg;
use crate::expr::{Case, CmpOp, ColumnRef, Expr, Func, FuncKind, TimeUnit, TrimSide};
use crate::table_map::TableMap;
use crate::value::ArithOp;

mod from;
mod functions;

use from::bind_table;
pub use from::object_name;

pub use functions::{aggregate_func, contains_aggregate};

/// A table of the query, at its FROM position.
#[derive(Clone, Debug)]
pub struct BoundTable {
    /// The table's name in the catalog.
    pub name: String,
    /// The name the query refers to it by (its alias, or its name).
    pub alias: String,
    /// Its schema, as the catalog had it when the query was planned.
    pub schema: Arc<TableSchema>,
}

impl BoundTable {
    /// Whether the SQL layer made it for the query (an alias in angle brackets: a semi-join
    /// materialization's `<subqueryN>`, the values of correlated subqueries): a name reaches
    /// it only qualified, and `*` leaves it out.
    pub fn is_internal(&self) -> bool {
        self.alias.starts_with('<')
    }
}

use crate::outer::{JoinKind, OuterJoin};
use crate::walk;

/// A subquery the caller flattened into the query around it (`EXISTS`, `IN`, or their
/// negations, in WHERE): its tables and the condition that decides whether an outer row
/// matches (the subquery's WHERE, with `x = y` for an IN). Its tables are bound after the
/// query's own, and only its condition sees them.
#[derive(Clone, Debug)]
pub struct SemiJoin {
    /// [`JoinKind::Semi`] or [`JoinKind::Anti`].
    pub kind: JoinKind,
    /// The subquery's tables (each a named table).
    pub tables: Vec<TableFactor>,
    /// The match condition, its names resolved as the subquery resolves them (a name of
    /// the subquery's tables qualified by an alias no outer table has).
    pub cond: ast::Expr,
}

/// A SELECT's parts, bound.
#[derive(Clone, Debug, Default)]
pub struct BoundSelect {
    /// The tables, in FROM order.
    pub tables: Vec<BoundTable>,
    /// The conjuncts of WHERE and of every ON.
    pub conds: Vec<Expr>,
    /// Per condition of `conds`: the outer join (of `outer_joins`) whose ON it is part of,
    /// if any. Such a condition decides which inner rows match an outer row; the others
    /// (WHERE, and the ONs of inner joins, which are one condition with it) filter the
    /// joined rows, NULL-filled ones included.
    pub on_of: Vec<Option<usize>>,
    /// The LEFT JOINs (a RIGHT JOIN is bound as the LEFT JOIN it is) that stay outer joins.
    pub outer_joins: Vec<OuterJoin>,
    /// For each table, which columns the query reads anywhere (to know a covering index).
    pub used_columns: Vec<Vec<bool>>,
    /// ORDER BY: expression and whether it is DESC.
    pub order_by: Vec<(Expr, bool)>,
    /// GROUP BY expressions.
    pub group_by: Vec<Expr>,
    /// How many `?` placeholders the statement has.
    pub param_count: usize,
    /// Whether a session value of this moment (`NOW()`) was bound in: the binding is good
    /// for one execution only.
    pub volatile: bool,
    /// How many of `tables`, at the end, are the tables of semi-joins and anti-joins: the
    /// query's select list, WHERE and ORDER BY do not see them.
    pub hidden: usize,
}

impl BoundSelect {
    /// The outer join whose ON condition `i` of [`conds`](Self::conds) is part of, if any.
    pub fn on_of(&self, i: usize) -> Option<usize> {
        self.on_of.get(i).copied().flatten()
    }

    /// Whether condition `i` may choose table `t`'s rows (its access path, its estimates):
    /// for an outer join's inner table, only that join's ON (the innermost join's, if one
    /// holds another), since the others are checked
    /// after the match (`t.x IS NULL` must see the NULL row the match makes, not limit the
    /// rows matched); for any other table, any condition but an outer join's ON.
    pub fn applies(&self, i: usize, t: usize) -> bool {
        let me = TableMap::table(t);
        // The innermost of the nests that hold it (an outer join's may hold another's).
        let inner_of = (self.outer_joins.iter().enumerate())
            .filter(|(_, j)| j.matches_only() && j.inner.overlaps(me))
            .min_by_key(|(_, j)| j.inner.positions().count())
            .map(|(k, _)| k);
        self.on_of(i) == inner_of
    }

    /// The tables the query's own clauses see (those of its FROM).
    pub fn visible(&self) -> &[BoundTable] {
        &self.tables[..self.tables.len() - self.hidden]
    }
}

/// The values a statement takes from the session it runs in, wherever they stand in it:
/// `NOW()`, `DATABASE()`, `@@autocommit` and the like. A binder with one binds each as a
/// literal (and notes that the binding holds for this execution only).
pub trait SessionValues {
    /// The value of `e` if it is a session value; an error for one the session does not
    /// have (an unknown `@@variable`).
    fn value(&self, e: &ast::Expr) -> Result<Option<Value>, PlanError>;

    /// The session's time zone: seconds east of UTC (UNIX_TIMESTAMP(dt) reads `dt` in it).
    fn utc_offset_secs(&self) -> i64 {
        0
    }
}

/// Resolves names against a list of tables; numbers `?` placeholders in the order it meets them.
pub struct Binder<'a> {
    tables: &'a [BoundTable],
    params: usize,
    /// Every column bound so far, as (table, column).
    pub seen: Vec<(usize, usize)>,
    session: Option<&'a dyn SessionValues>,
    /// Whether a session value was bound: the binding is good for this execution only.
    pub volatile: bool,
    /// The aggregates bound so far, when this binder binds clauses that may call them (a
    /// select list, HAVING, ORDER BY); elsewhere an aggregate is error 1111.
    aggregates: Option<Vec<Agg>>,
    /// Whether an aggregate's argument is being bound (an aggregate in it is 1111).
    in_aggregate: bool,
    /// The names HAVING resolves, when it is being bound.
    having: Option<HavingScope>,
    /// The first table an unqualified name does not reach (see [`Binder::qualified_only`]).
    qualified_from: usize,
}

/// What a name in HAVING may stand for, besides a column of the query's tables: MySQL
/// resolves it against the select list (its aliases) and GROUP BY.
#[derive(Clone, Debug, Default)]
pub struct HavingScope {
    /// Each select item's name (its alias, or the column's name, or its text) and its
    /// expression, bound.
    pub items: Vec<(String, Expr)>,
    /// GROUP BY's expressions, bound.
    pub group_by: Vec<Expr>,
}

impl std::fmt::Debug for Binder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binder")
            .field("tables", &self.tables.len())
            .field("params", &self.params)
            .field("volatile", &self.volatile)
            .finish()
    }
}

impl<'a> Binder<'a> {
    /// A binder over `tables`.
    pub fn new(tables: &'a [BoundTable]) -> Binder<'a> {
        Binder {
            tables,
            params: 0,
            seen: Vec::new(),
            session: None,
            volatile: false,
            aggregates: None,
            in_aggregate: false,
            having: None,
            qualified_from: usize::MAX,
        }
    }

    /// This binder, where the tables from position `from` on are reached only by a
    /// qualified name (`new.a`): an unqualified one is a column of the tables before. What
    /// INSERT ... ON DUPLICATE KEY UPDATE needs, where `a` is the existing row's column and
    /// `new.a` (or `VALUES(a)`) the one the INSERT would have written.
    pub fn qualified_only(mut self, from: usize) -> Binder<'a> {
        self.qualified_from = from;
        self
    }

    /// This binder, binding aggregate calls (to [`Expr::Agg`], numbered in the order it
    /// meets them; [`Binder::take_aggregates`] hands them over).
    pub fn with_aggregates(mut self) -> Binder<'a> {
        self.aggregates = Some(Vec::new());
        self
    }

    /// The aggregates bound so far.
    pub fn aggregates(&self) -> &[Agg] {
        self.aggregates.as_deref().unwrap_or_default()
    }

    /// The aggregates bound, taken out (the binder binds none after this).
    pub fn take_aggregates(&mut self) -> Vec<Agg> {
        self.aggregates.take().unwrap_or_default()
    }

    /// Binds HAVING's condition: a name in it (outside an aggregate) is a GROUP BY column,
    /// else a select item's name, else a column of the tables that the select list or GROUP
    /// BY reads (any other is error 1054, as in MySQL).
    pub fn having(&mut self, e: &ast::Expr, scope: HavingScope) -> Result<Expr, PlanError> {
        self.having = Some(scope);
        let bound = self.expr(e, "having clause");
        self.having = None;
        bound
    }

    /// This binder, with `session`'s values bound wherever they stand.
    pub fn with_session(mut self, session: &'a dyn SessionValues) -> Binder<'a> {
        self.session = Some(session);
        self
    }

    /// Numbers the next placeholder `n` (0-based): for a clause bound apart from the rest of
    /// its statement, such as LIMIT.
    pub fn set_param_base(&mut self, n: usize) {
        self.params = n;
    }

    /// How many placeholders were bound.
    pub fn param_count(&self) -> usize {
        self.params
    }

    /// Resolves `column`, optionally qualified by a table name or alias. A table the SQL
    /// layer made for a query (an alias in angle brackets: a semi-join materialization's
    /// `<subqueryN>`, the values of correlated subqueries) is reached only by a qualified
    /// name: its columns must not make a user's names ambiguous.
    pub fn column(
        &mut self,
        qualifier: Option<&str>,
        column: &str,
        clause: &'static str,
    ) -> Result<Expr, PlanError> {
        let mut found = None;
        for (t, table) in self.tables.iter().enumerate() {
            if qualifier.is_some_and(|q| !q.eq_ignore_ascii_case(&table.alias))
                || (qualifier.is_none() && (t >= self.qualified_from || table.is_internal()))
            {
                continue;
            }
            if let Some(c) = table
                .schema
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(column))
            {
                if found.is_some() {
                    return Err(PlanError::Ambiguous(column.to_owned(), clause));
                }
                found = Some((t, c));
            }
        }
        let (table, c) = found.ok_or_else(|| {
            let full = match qualifier {
                Some(q) => format!("{q}.{column}"),
                None => column.to_owned(),
            };
            PlanError::UnknownColumn(full, clause)
        })?;
        self.seen.push((table, c));
        let name = format!(
            "{}.{}",
            self.tables[table].alias, self.tables[table].schema.columns[c].name
        );
        Ok(Expr::Column(ColumnRef {
            table,
            column: c,
            name,
        }))
    }

    /// Binds a scalar or boolean expression.
    pub fn expr(&mut self, e: &ast::Expr, clause: &'static str) -> Result<Expr, PlanError> {
        use ast::Expr as A;
        let boxed = |b: &mut Self, e: &ast::Expr| b.expr(e, clause).map(Box::new);
        if let Some(session) = self.session
            && let Some(v) = session.value(e)?
        {
            self.volatile = true;
            return Ok(Expr::Literal(v));
        }
        Ok(match e {
            A::Identifier(id) if self.having.is_some() && !self.in_aggregate => {
                self.having_name(None, &id.value)?
            }
            A::CompoundIdentifier(ids) if self.having.is_some() && !self.in_aggregate => {
                match ids.as_slice() {
                    [t, c] | [_, t, c] => self.having_name(Some(&t.value), &c.value)?,
                    _ => return Err(PlanError::Unsupported(e.to_string())),
                }
            }
            A::Identifier(id) => self.column(None, &id.value, clause)?,
            A::CompoundIdentifier(ids) => match ids.as_slice() {
                [t, c] => self.column(Some(&t.value), &c.value, clause)?,
                [_db, t, c] => self.column(Some(&t.value), &c.value, clause)?,
                _ => return Err(PlanError::Unsupported(e.to_string())),
            },
            A::Value(v) => match &v.value {
                ast::Value::Placeholder(_) => {
                    self.params += 1;
                    Expr::Param(self.params - 1)
                }
                other => Expr::Literal(literal(other)?),
            },
            A::Nested(inner) => self.expr(inner, clause)?,
            A::Tuple(items) => Expr::Row(
                items
                    .iter()
                    .map(|i| self.expr(i, clause))
                    .collect::<Result<_, _>>()?,
            ),
            A::UnaryOp {
                op: UnaryOperator::Minus,
                expr,
            } => match self.expr(expr, clause)? {
                Expr::Literal(Value::Int(n)) => Expr::Literal(Value::Int(-n)),
                Expr::Literal(Value::Decimal(d)) => Expr::Literal(Value::Decimal(
                    Decimal::new(-d.units(), d.scale()).unwrap_or(d),
                )),
                other => Expr::Neg(Box::new(other)),
            },
            A::UnaryOp {
                op: UnaryOperator::Plus,
                expr,
            } => self.expr(expr, clause)?,
            A::UnaryOp {
                op: UnaryOperator::Not,
                expr,
            } => Expr::Not(boxed(self, expr)?),
            A::IsNull(inner) => Expr::IsNull(boxed(self, inner)?, false),
            A::IsNotNull(inner) => Expr::IsNull(boxed(self, inner)?, true),
            A::Between {
                expr,
                negated,
                low,
                high,
            } => Expr::Between {
                expr: boxed(self, expr)?,
                low: boxed(self, low)?,
                high: boxed(self, high)?,
                negated: *negated,
            },
            A::InList {
                expr,
                list,
                negated,
            } => Expr::in_list(
                self.expr(expr, clause)?,
                list.iter()
                    .map(|i| self.expr(i, clause))
                    .collect::<Result<_, _>>()?,
                *negated,
            ),
            A::BinaryOp {
                left,
                op: op @ (BinaryOperator::Plus | BinaryOperator::Minus),
                right,
            } if matches!(**right, A::Interval(_))
                || (matches!(**left, A::Interval(_)) && *op == BinaryOperator::Plus) =>
            {
                let (at, interval) = match left.as_ref() {
                    A::Interval(i) => (right.as_ref(), i),
                    _ => match right.as_ref() {
                        A::Interval(i) => (left.as_ref(), i),
                        _ => return Err(PlanError::Internal("an INTERVAL went missing".into())),
                    },
                };
                self.date_add(at, interval, *op == BinaryOperator::Minus, clause)?
            }
            A::BinaryOp { left, op, right } => {
                let (l, r) = (boxed(self, left)?, boxed(self, right)?);
                let cmp = |op| Expr::Cmp(op, l.clone(), r.clone());
                let ar = |op| Expr::Arith(op, l.clone(), r.clone());
                match op {
                    BinaryOperator::Eq => cmp(CmpOp::Eq),
                    BinaryOperator::NotEq => cmp(CmpOp::Ne),
                    BinaryOperator::Lt => cmp(CmpOp::Lt),
                    BinaryOperator::LtEq => cmp(CmpOp::Le),
                    BinaryOperator::Gt => cmp(CmpOp::Gt),
                    BinaryOperator::GtEq => cmp(CmpOp::Ge),
                    BinaryOperator::Plus => ar(ArithOp::Add),
                    BinaryOperator::Minus => ar(ArithOp::Sub),
                    BinaryOperator::Multiply => ar(ArithOp::Mul),
                    BinaryOperator::Divide => ar(ArithOp::Div),
                    BinaryOperator::MyIntegerDivide => ar(ArithOp::IntDiv),
                    BinaryOperator::Modulo => ar(ArithOp::Mod),
                    BinaryOperator::And => Expr::And(vec![*l, *r]),
                    BinaryOperator::Or => Expr::Or(vec![*l, *r]),
                    other => return Err(PlanError::Unsupported(format!("operator {other}"))),
                }
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_deref()
                    .map(|o| self.expr(o, clause))
                    .transpose()?;
                let whens = conditions
                    .iter()
                    .map(|w| {
                        Ok((
                            self.expr(&w.condition, clause)?,
                            self.expr(&w.result, clause)?,
                        ))
                    })
                    .collect::<Result<_, PlanError>>()?;
                let otherwise = else_result
                    .as_deref()
                    .map(|e| self.expr(e, clause))
                    .transpose()?;
                Expr::Case(Box::new(Case {
                    operand,
                    whens,
                    otherwise,
                }))
            }
            A::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => {
                let escape = match escape_char.as_deref() {
                    None => '\\',
                    Some(e) => match self.expr(e, clause)? {
                        Expr::Literal(v @ Value::Str(_)) => {
                            let mut chars = v.as_str().unwrap_or_default().chars();
                            match (chars.next(), chars.next()) {
                                (None, _) => '\\',
                                (Some(c), None) => c,
                                _ => return Err(PlanError::WrongArguments("ESCAPE")),
                            }
                        }
                        _ => return Err(PlanError::WrongArguments("ESCAPE")),
                    },
                };
                let like = Expr::Func(Box::new(Func {
                    kind: FuncKind::Like(escape),
                    args: vec![self.expr(expr, clause)?, self.expr(pattern, clause)?],
                }));
                if *negated {
                    Expr::Not(Box::new(like))
                } else {
                    like
                }
            }
            A::Function(f) if let Some(func) = aggregate_func(f) => {
                self.aggregate(f, func, clause)?
            }
            A::Function(f) if let Some(e) = self.time_function(f, clause)? => e,
            A::Function(f) => match self.conditional(f, clause)? {
                Some(e) => e,
                None => match self.function(f, clause)? {
                    Some(e) => e,
                    None => return Err(PlanError::Unsupported(e.to_string())),
                },
            },
            A::Substring {
                expr,
                substring_from: Some(from),
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(expr, clause)?, self.expr(from, clause)?];
                if let Some(len) = substring_for {
                    args.push(self.expr(len, clause)?);
                }
                Expr::Func(Box::new(Func {
                    kind: FuncKind::Substring,
                    args,
                }))
            }
            A::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters: None,
            } => {
                let side = match trim_where {
                    None | Some(ast::TrimWhereField::Both) => TrimSide::Both,
                    Some(ast::TrimWhereField::Leading) => TrimSide::Leading,
                    Some(ast::TrimWhereField::Trailing) => TrimSide::Trailing,
                };
                let what = match trim_what {
                    Some(w) => self.expr(w, clause)?,
                    None => Expr::Literal(Value::from(" ")),
                };
                Expr::Func(Box::new(Func {
                    kind: FuncKind::Trim(side),
                    args: vec![self.expr(expr, clause)?, what],
                }))
            }
            other => return Err(PlanError::Unsupported(other.to_string())),
        })
    }

    /// A name in HAVING, outside an aggregate (see [`Binder::having`]).
    fn having_name(&mut self, qualifier: Option<&str>, name: &str) -> Result<Expr, PlanError> {
        const CLAUSE: &str = "having clause";
        let scope = self.having.clone().expect("binding HAVING");
        let column = self.column(qualifier, name, CLAUSE);
        if let Ok(c) = &column
            && scope.group_by.contains(c)
        {
            return column;
        }
        if qualifier.is_none()
            && let Some((_, e)) = scope
                .items
                .iter()
                .find(|(item, _)| item.eq_ignore_ascii_case(name))
        {
            return Ok(e.clone());
        }
        match column {
            Ok(c) if scope.items.iter().any(|(_, e)| *e == c) => Ok(c),
            Ok(_) => {
                let full = qualifier.map_or_else(|| name.to_owned(), |q| format!("{q}.{name}"));
                Err(PlanError::UnknownColumn(full, CLAUSE))
            }
            Err(e) => Err(e),
        }
    }

    /// Marks the columns an expression of the select list, HAVING or ORDER BY reads: every
    /// name in it that is a column (a name that is none is an error in the select list; in
    /// HAVING and ORDER BY it may be a select item's alias, which the SQL layer resolves).
    /// A `*` argument (`COUNT(*)`) marks every column.
    fn mark_columns(&mut self, e: &ast::Expr, clause: &'static str) -> Result<(), PlanError> {
        use ast::Expr as A;
        use std::ops::ControlFlow;
        let mut failed = None;
        let _ = walk::exprs(e, |x| {
            match self.session.map(|session| session.value(x)) {
                Some(Ok(Some(_))) => return ControlFlow::Continue(()),
                Some(Err(e)) => {
                    failed = Some(e);
                    return ControlFlow::Break(());
                }
                None | Some(Ok(None)) => {}
            }
            let found = match x {
                A::Identifier(id) => self.column(None, &id.value, clause),
                A::CompoundIdentifier(ids) => match ids.as_slice() {
                    [t, c] | [_, t, c] => self.column(Some(&t.value), &c.value, clause),
                    _ => return ControlFlow::Continue(()),
                },
                A::Function(f) => {
                    if let ast::FunctionArguments::List(list) = &f.args {
                        for arg in &list.args {
                            match arg {
                                ast::FunctionArg::Unnamed(a)
                                | ast::FunctionArg::Named { arg: a, .. }
                                | ast::FunctionArg::ExprNamed { arg: a, .. } => match a {
                                    ast::FunctionArgExpr::Expr(_) => {}
                                    ast::FunctionArgExpr::Wildcard
                                    | ast::FunctionArgExpr::WildcardWithOptions(_) => {
                                        self.mark_all(None)
                                    }
                                    ast::FunctionArgExpr::QualifiedWildcard(q) => {
                                        self.mark_all(Some(&q.to_string()))
                                    }
                                },
                            }
                        }
                    }
                    return ControlFlow::Continue(());
                }
                _ => return ControlFlow::Continue(()),
            };
            match found {
                Ok(_) => ControlFlow::Continue(()),
                Err(PlanError::UnknownColumn(..)) if clause != "field list" => {
                    ControlFlow::Continue(())
                }
                // TIMESTAMPDIFF's unit is a keyword, not a column.
                Err(PlanError::UnknownColumn(..)) if matches!(x, A::Identifier(id) if TimeUnit::named(&id.value).is_some()) => {
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        });
        failed.map_or(Ok(()), Err)
    }

    fn mark_all(&mut self, qualifier: Option<&str>) {
        for (t, table) in self.tables.iter().enumerate() {
            if qualifier.is_none_or(|q| q.eq_ignore_ascii_case(&table.alias)) {
                self.seen
                    .extend((0..table.schema.columns.len()).map(|c| (t, c)));
            }
        }
    }
}

/// A literal's value.
pub fn literal(v: &ast::Value) -> Result<Value, PlanError> {
    Ok(match v {
        ast::Value::Number(n, _) => match n.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => match n.parse::<Decimal>() {
                Ok(d) => Value::Decimal(d),
                Err(_) => Value::Double(
                    n.parse()
                        .map_err(|_| PlanError::Parse(format!("bad number {n}")))?,
                ),
            },
        },
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
            Value::Str(s.as_str().into())
        }
        ast::Value::Boolean(b) => Value::Int(i64::from(*b)),
        ast::Value::Null => Value::Null,
        other => return Err(PlanError::Unsupported(format!("literal {other}"))),
    })
}

/// A GROUP BY item as the planner sees it. A number (`GROUP BY 1`) or a name no table has
/// (a select item's alias) names a select item, which the SQL layer resolves, reporting
/// MySQL's errors; here either stands as a constant no index gives the order of.
fn group_item(binder: &mut Binder<'_>, e: &ast::Expr) -> Result<Expr, PlanError> {
    match binder.expr(e, "group statement") {
        Err(PlanError::UnknownColumn(..)) if matches!(e, ast::Expr::Identifier(_)) => {
            Ok(Expr::Literal(Value::Null))
        }
        other => other,
    }
}

/// Binds a query: one SELECT over base tables joined by commas or inner JOIN ... ON.
///
/// With `session`, its values (`NOW()`, `@@autocommit`) are bound as literals wherever
/// they stand, and the result says it is [`BoundSelect::volatile`].
pub fn bind_query(
    catalog: &dyn Catalog,
    query: &ast::Query,
    session: Option<&dyn SessionValues>,
) -> Result<BoundSelect, PlanError> {
    bind_query_with(catalog, query, session, &[])
}

/// [`bind_query`], with the subqueries of `semi` flattened into the query as semi-joins and
/// anti-joins.
pub fn bind_query_with(
    catalog: &dyn Catalog,
    query: &ast::Query,
    session: Option<&dyn SessionValues>,
    semi: &[SemiJoin],
) -> Result<BoundSelect, PlanError> {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(PlanError::Unsupported(format!("{}", query.body)));
    };
    // Common table expressions are the SQL layer's (its caller's) to expand.
    if let Some(with) = &query.with {
        return Err(PlanError::Unsupported(format!("{with}")));
    }
    let from::BoundFrom {
        mut tables,
        ons,
        mut outer_joins,
    } = from::bind_from(catalog, select)?;
    let visible = tables.len();
    let mut nested = Vec::new();
    for sj in semi {
        let first = tables.len();
        for factor in &sj.tables {
            bind_table(catalog, factor, &mut tables)?;
        }
        let inner = TableMap::first(tables.len()) & !TableMap::first(first);
        nested.push((sj, inner));
    }
    let mut binder = Binder::new(&tables[..visible]);
    binder.session = session;
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(e)
            | SelectItem::ExprWithAlias { expr: e, .. }
            | SelectItem::ExprWithAliases { expr: e, .. } => {
                binder.mark_columns(e, "field list")?;
            }
            SelectItem::Wildcard(_) => binder.mark_all(None),
            SelectItem::QualifiedWildcard(kind, _) => binder.mark_all(Some(&kind.to_string())),
        }
    }
    let mut conds = Vec::new();
    let mut on_of = Vec::new();
    for (on, known, join) in ons {
        let e = binder.expr(on, "on clause")?;
        let mut later = None;
        e.visit(&mut |x| {
            if let Expr::Column(c) = x
                && c.table >= known
                && later.is_none()
            {
                later = Some(c.name.clone());
            }
        });
        if let Some(name) = later {
            return Err(PlanError::UnknownColumn(name, "on clause"));
        }
        for c in e.conjuncts() {
            conds.push(c);
            on_of.push(join);
        }
    }
    if let Some(w) = &select.selection {
        for c in binder.expr(w, "where clause")?.conjuncts() {
            conds.push(c);
            on_of.push(None);
        }
    }
    crate::outer::simplify(&mut outer_joins, &mut on_of, &conds);
    let mut volatile = binder.volatile;
    for (sj, inner) in nested {
        let mut all = Binder::new(&tables);
        all.session = session;
        all.params = binder.params;
        let e = all.expr(&sj.cond, "where clause")?;
        binder.params = all.params;
        binder.seen.append(&mut all.seen);
        volatile |= all.volatile;
        let k = outer_joins.len();
        outer_joins.push(OuterJoin {
            kind: sj.kind,
            inner,
            after: e.used_tables() & TableMap::first(visible),
        });
        for c in e.conjuncts() {
            conds.push(c);
            on_of.push((sj.kind == JoinKind::Anti).then_some(k));
        }
    }
    let mut group_by = Vec::new();
    if let GroupByExpr::Expressions(exprs, _) = &select.group_by {
        for e in exprs {
            group_by.push(group_item(&mut binder, e)?);
        }
    }
    if let Some(h) = &select.having {
        binder.mark_columns(h, "having clause")?;
    }
    let mut order_by = Vec::new();
    if let Some(ob) = &query.order_by
        && let OrderByKind::Expressions(exprs) = &ob.kind
    {
        for o in exprs {
            // ORDER BY may name a select-list alias or call an aggregate; the SQL layer
            // resolves those, we skip them.
            if contains_aggregate(&o.expr) {
                binder.mark_columns(&o.expr, "order clause")?;
                continue;
            }
            match binder.expr(&o.expr, "order clause") {
                Ok(e) => order_by.push((e, matches!(o.options.sort, Some(ast::OrderBySort::Desc)))),
                Err(PlanError::UnknownColumn(..)) if matches!(o.expr, ast::Expr::Identifier(_)) => {
                }
                Err(e) => return Err(e),
            }
        }
    }
    let mut used_columns: Vec<Vec<bool>> = tables
        .iter()
        .map(|t| vec![false; t.schema.columns.len()])
        .collect();
    for &(t, c) in &binder.seen {
        used_columns[t][c] = true;
    }
    let param_count = binder.param_count();
    Ok(BoundSelect {
        hidden: tables.len() - visible,
        volatile,
        tables,
        conds,
        on_of,
        outer_joins,
        used_columns,
        order_by,
        group_by,
        param_count,
    })
}
