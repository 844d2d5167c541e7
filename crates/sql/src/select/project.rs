//! The select list: binding it (aggregates here, every other expression by the planner's
//! binder), and the step that turns the executor's joined rows into the result set, calling
//! the other steps in the order a query goes through them: [`super::aggregate`] (or one
//! output row per joined row), [`super::sort`], then [`super::limit`].

use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;

use sqlparser::ast::{
    self, Expr as Ast, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, SelectItem,
};
use waterline_planner::Expr;
use waterline_planner::bind::{Binder, BoundTable, bind_query};
use waterline_planner::value::{ArithOp, arith};
use waterline_txn::{Row, Value};

use super::aggregate::{Agg, AggFunc, aggregate, contains_aggregate, groups};
use super::sort::{Keyed, SortKey, sort, source_keys};
use super::{env, select_of, slots};
use crate::error::SqlError;
use crate::session::{Response, ResultColumn, Session};
use crate::types::{ColumnMeta, FieldType, value_field_type};

/// A select-list expression: scalar parts over the row, aggregates over the group.
#[derive(Clone, Debug)]
pub(super) enum PExpr {
    Scalar(Expr),
    Agg(usize),
    Arith(ArithOp, Box<PExpr>, Box<PExpr>),
}

#[derive(Clone, Debug)]
pub(super) struct OutCol {
    pub(super) name: Arc<str>,
    pub(super) table: Arc<str>,
    /// Its metadata, where the select list fixes it (a column, COUNT); else the first
    /// non-NULL value's type decides.
    pub(super) meta: Option<ColumnMeta>,
    pub(super) expr: PExpr,
    /// The expression's SQL text, to match ORDER BY items.
    pub(super) text: String,
}

/// Binds a select list: aggregates here, everything else (session values included, see
/// `functions.rs`) by the planner's binder.
struct ProjectionBinder<'b> {
    binder: Binder<'b>,
    aggs: Vec<Agg>,
}

impl<'b> ProjectionBinder<'b> {
    fn new(session: &'b Session, tables: &'b [BoundTable]) -> Self {
        ProjectionBinder {
            binder: Binder::new(tables).with_session(session),
            aggs: Vec::new(),
        }
    }

    fn bind(&mut self, e: &Ast) -> Result<PExpr, SqlError> {
        match e {
            Ast::Function(f) if aggregate(f).is_some() => {
                let (func, args) = aggregate(f).expect("checked");
                let FunctionArguments::List(list) = args else {
                    return Err(SqlError::parse(format!("{f}")));
                };
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let arg = match list.args.as_slice() {
                    [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if func == AggFunc::Count => {
                        None
                    }
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] => {
                        Some(self.binder.expr(x, "field list")?)
                    }
                    _ => return Err(SqlError::unsupported(f)),
                };
                self.aggs.push(Agg {
                    func,
                    arg,
                    distinct,
                });
                Ok(PExpr::Agg(self.aggs.len() - 1))
            }
            Ast::Nested(inner) => self.bind(inner),
            Ast::BinaryOp { left, op, right } if contains_aggregate(e) => {
                let op = match op {
                    ast::BinaryOperator::Plus => ArithOp::Add,
                    ast::BinaryOperator::Minus => ArithOp::Sub,
                    ast::BinaryOperator::Multiply => ArithOp::Mul,
                    ast::BinaryOperator::Divide => ArithOp::Div,
                    other => {
                        return Err(SqlError::unsupported(format!("{other} over an aggregate")));
                    }
                };
                Ok(PExpr::Arith(
                    op,
                    Box::new(self.bind(left)?),
                    Box::new(self.bind(right)?),
                ))
            }
            other => Ok(PExpr::Scalar(self.binder.expr(other, "field list")?)),
        }
    }
}

/// Evaluates a select-list expression for a group (`rows`, at least one unless the query has
/// only aggregates and no rows).
pub(super) fn eval(
    p: &PExpr,
    rows: &[&Vec<Row>],
    aggs: &[Value],
    params: &[Value],
) -> Result<Value, SqlError> {
    Ok(match p {
        PExpr::Agg(i) => aggs[*i].clone(),
        PExpr::Arith(op, a, b) => arith(
            *op,
            &eval(a, rows, aggs, params)?,
            &eval(b, rows, aggs, params)?,
        )?,
        PExpr::Scalar(e) => match rows.first() {
            Some(row) => e.eval(env(&slots(row), params))?,
            // No row (an aggregate over nothing): scalars over columns are NULL.
            None => e.eval(env(&[], params)).unwrap_or(Value::Null),
        },
    })
}

/// A select list bound: the output columns, GROUP BY, the ORDER BY keys and the aggregates.
#[derive(Clone, Debug)]
pub(super) struct Projection {
    cols: Vec<OutCol>,
    group_by: Vec<Expr>,
    sort: Vec<(SortKey, bool)>,
    aggs: Vec<Agg>,
    /// Whether it holds a session value (NOW(), @@autocommit) read while binding.
    pub(super) volatile: bool,
}

/// Binds a query's select list, GROUP BY and ORDER BY over its bound `tables`.
pub(super) fn bind_projection(
    s: &Session,
    tables: &[BoundTable],
    q: &ast::Query,
    select: &ast::Select,
) -> Result<Projection, SqlError> {
    let mut pb = ProjectionBinder::new(s, tables);
    // The first parameter after the select list: the planner numbered WHERE's after it too.
    let mut cols = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                let only = match item {
                    SelectItem::QualifiedWildcard(kind, _) => Some(kind.to_string()),
                    _ => None,
                };
                for table in tables.iter().filter(|t| {
                    only.as_ref()
                        .is_none_or(|q| q.eq_ignore_ascii_case(&t.alias))
                }) {
                    for column in &table.schema.columns {
                        let e = pb
                            .binder
                            .column(Some(&table.alias), &column.name, "field list")?;
                        cols.push(OutCol {
                            name: column.name.as_str().into(),
                            table: table.alias.as_str().into(),
                            meta: Some(ColumnMeta::of(column.ty)),
                            expr: PExpr::Scalar(e),
                            text: column.name.clone(),
                        });
                    }
                }
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let expr = pb.bind(e)?;
                let (meta, table) = match &expr {
                    PExpr::Scalar(Expr::Column(c)) => {
                        let t = &tables[c.table];
                        (
                            Some(ColumnMeta::of(t.schema.columns[c.column].ty)),
                            t.alias.as_str().into(),
                        )
                    }
                    PExpr::Agg(i) if pb.aggs[*i].func == AggFunc::Count => {
                        (Some(ColumnMeta::computed(FieldType::LongLong)), "".into())
                    }
                    _ => (None, "".into()),
                };
                let text = e.to_string();
                let name = match item {
                    SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    _ => match e {
                        Ast::Identifier(id) => id.value.clone(),
                        // `@@global.x` is named as written, as MySQL names it.
                        Ast::CompoundIdentifier(ids) if !ids[0].value.starts_with("@@") => {
                            ids.last().map(|i| i.value.clone()).unwrap_or_default()
                        }
                        // A string constant is named by its text, without quotes.
                        Ast::Value(v) => match &v.value {
                            ast::Value::SingleQuotedString(s)
                            | ast::Value::DoubleQuotedString(s) => s.clone(),
                            _ => text.clone(),
                        },
                        _ => text.clone(),
                    },
                };
                cols.push(OutCol {
                    name: name.into(),
                    table,
                    meta,
                    expr,
                    text,
                });
            }
            other => return Err(SqlError::unsupported(other)),
        }
    }
    let group_by: Vec<Expr> = match &select.group_by {
        GroupByExpr::Expressions(exprs, _) => exprs
            .iter()
            .map(|e| pb.binder.expr(e, "group statement"))
            .collect::<Result<_, _>>()?,
        GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    if s.settings().sql_mode.only_full_group_by && (!group_by.is_empty() || !pb.aggs.is_empty()) {
        super::group_by::full_group_by(s, tables, &cols, &group_by)?;
    }
    if select.having.is_some() {
        return Err(SqlError::unsupported("HAVING"));
    }
    let mut sort = Vec::new();
    if let Some(ob) = &q.order_by
        && let ast::OrderByKind::Expressions(items) = &ob.kind
    {
        for item in items {
            let desc = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
            let key = match &item.expr {
                Ast::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let n: usize = v.value.to_string().parse().unwrap_or(0);
                    if n == 0 || n > cols.len() {
                        return Err(SqlError::unknown_column(&n.to_string(), "order clause"));
                    }
                    SortKey::Out(n - 1)
                }
                e => {
                    let text = e.to_string();
                    let by_name = cols.iter().position(|c| {
                        c.name.eq_ignore_ascii_case(&text) || c.text.eq_ignore_ascii_case(&text)
                    });
                    match by_name {
                        Some(i)
                            if !matches!(cols[i].expr, PExpr::Scalar(Expr::Column(_)))
                                || matches!(e, Ast::Identifier(_)) =>
                        {
                            SortKey::Out(i)
                        }
                        _ => SortKey::Src(pb.binder.expr(e, "order clause")?),
                    }
                }
            };
            sort.push((key, desc));
        }
    }
    Ok(Projection {
        cols,
        group_by,
        sort,
        aggs: pb.aggs,
        volatile: pb.binder.volatile,
    })
}

/// Projects, groups, sorts and limits (to `(limit, offset)`, from
/// [`super::limit::limit_offset`]) the joined rows of a query.
pub(super) fn project(
    s: &Session,
    p: &Projection,
    select: &ast::Select,
    rows: Vec<Vec<Row>>,
    params: &[Value],
    window: (Option<usize>, usize),
) -> Result<Response, SqlError> {
    let Projection {
        cols,
        group_by,
        sort: order,
        aggs,
        ..
    } = p;
    let keys = |row: Option<&&Vec<Row>>| source_keys(order, row, params);
    // Each output row, with the source values its ORDER BY keys read.
    let mut out: Vec<Keyed> = if !group_by.is_empty() || !aggs.is_empty() {
        groups((cols, group_by, aggs), &rows, params, keys)?
    } else {
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let one = [row];
            let values = cols
                .iter()
                .map(|c| eval(&c.expr, &one, &[], params))
                .collect::<Result<Vec<_>, _>>()?;
            out.push((values, keys(Some(&row))?));
        }
        out
    };
    sort(&mut out, order);
    let distinct = matches!(select.distinct, Some(ast::Distinct::Distinct));
    let result = super::limit::window(out.into_iter().map(|(r, _)| r).collect(), distinct, window);
    s.shared()
        .counters
        .rows_sent
        .fetch_add(result.len() as u64, AtomicOrdering::Relaxed);
    let columns = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let meta = c.meta.unwrap_or_else(|| {
                ColumnMeta::computed(
                    result
                        .iter()
                        .map(|r| &r[i])
                        .find(|v| !v.is_null())
                        .map_or(FieldType::VarString, value_field_type),
                )
            });
            ResultColumn::new(Arc::clone(&c.name), Arc::clone(&c.table), meta)
        })
        .collect();
    Ok(Response::Rows {
        columns,
        rows: result,
    })
}

/// The columns a query returns, without running it (COM_STMT_PREPARE).
pub(crate) fn describe(s: &mut Session, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    let select = select_of(q)?;
    let (_, tables) = s.tables();
    let catalog = crate::access::SchemaCatalog {
        database: s.database_name(),
        tables: &tables,
    };
    let bound = if select.from.is_empty() {
        Vec::new()
    } else {
        bind_query(&catalog, q, Some(&*s))?.tables
    };
    let mut pb = ProjectionBinder::new(s, &bound);
    let mut cols = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                for t in &bound {
                    for c in &t.schema.columns {
                        cols.push(ResultColumn::new(
                            c.name.as_str().into(),
                            t.alias.as_str().into(),
                            ColumnMeta::of(c.ty),
                        ));
                    }
                }
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let meta = match pb.bind(e)? {
                    PExpr::Scalar(Expr::Column(c)) => {
                        ColumnMeta::of(bound[c.table].schema.columns[c.column].ty)
                    }
                    PExpr::Agg(i) if pb.aggs[i].func == AggFunc::Count => {
                        ColumnMeta::computed(FieldType::LongLong)
                    }
                    _ => ColumnMeta::computed(FieldType::VarString),
                };
                let name = match item {
                    SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    _ => e.to_string(),
                };
                cols.push(ResultColumn::new(name.into(), "".into(), meta));
            }
            other => return Err(SqlError::unsupported(other)),
        }
    }
    Ok(cols)
}
