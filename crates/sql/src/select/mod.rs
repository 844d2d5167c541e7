//! SELECT: plan with the planner over the session's transaction, read with the planner's
//! executor, then project, aggregate (COUNT, SUM, MIN, MAX, AVG, COUNT(DISTINCT)), group,
//! sort, de-duplicate and limit. Also EXPLAIN, and SELECT without FROM.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;

use crate::types::FieldType;
use smallvec::SmallVec;
use sqlparser::ast::{
    self, Expr as Ast, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, SelectItem,
    SetExpr,
};
use waterline_planner::bind::{Binder, BoundSelect, BoundTable, bind_query};
use waterline_planner::exec::execute_first;
use waterline_planner::explain::{COLUMNS, explain as explain_rows};
use waterline_planner::value::{ArithOp, arith, sql_cmp};
use waterline_planner::{Env, Expr, PlanError, Planner};
use waterline_txn::{LockMode, LockWait, Row, Table, Value};

mod group_by;

use crate::access::{TxnAccess, unlock_unselected};
use crate::error::SqlError;
use crate::session::{Response, ResultColumn, Session};
use crate::types::{ColumnMeta, value_field_type};

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

#[derive(Clone, Debug)]
struct Agg {
    func: AggFunc,
    /// `None` for COUNT(*).
    arg: Option<Expr>,
    distinct: bool,
}

/// A select-list expression: scalar parts over the row, aggregates over the group.
#[derive(Clone, Debug)]
enum PExpr {
    Scalar(Expr),
    Agg(usize),
    Arith(ArithOp, Box<PExpr>, Box<PExpr>),
}

#[derive(Clone, Debug)]
struct OutCol {
    name: Arc<str>,
    table: Arc<str>,
    /// Its metadata, where the select list fixes it (a column, COUNT); else the first
    /// non-NULL value's type decides.
    meta: Option<ColumnMeta>,
    expr: PExpr,
    /// The expression's SQL text, to match ORDER BY items.
    text: String,
}

#[derive(Clone, Debug)]
enum SortKey {
    Out(usize),
    Src(Expr),
}

fn aggregate(f: &ast::Function) -> Option<(AggFunc, &FunctionArguments)> {
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

fn contains_aggregate(e: &Ast) -> bool {
    match e {
        Ast::Function(f) => aggregate(f).is_some(),
        Ast::Nested(x) => contains_aggregate(x),
        Ast::BinaryOp { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        _ => false,
    }
}

fn env<'r>(slots: &'r [Option<&'r Row>], params: &'r [Value]) -> Env<'r> {
    Env {
        rows: slots,
        params,
    }
}

/// A joined row as the planner's expressions read it, one slot per table: on the stack up
/// to four tables (every column of every row sent evaluates against one).
fn slots(row: &[Row]) -> SmallVec<[Option<&Row>; 4]> {
    row.iter().map(Some).collect()
}

/// Evaluates a select-list expression for a group (`rows`, at least one unless the query has
/// only aggregates and no rows).
fn eval(
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

fn run_aggregates(
    aggs: &[Agg],
    rows: &[&Vec<Row>],
    params: &[Value],
) -> Result<Vec<Value>, SqlError> {
    let mut out = Vec::with_capacity(aggs.len());
    for agg in aggs {
        let mut values = Vec::new();
        for row in rows {
            match &agg.arg {
                None => values.push(Value::Int(1)),
                Some(e) => {
                    let v = e.eval(env(&slots(row), params))?;
                    if !v.is_null() {
                        values.push(v);
                    }
                }
            }
        }
        if agg.distinct {
            let mut seen = HashSet::new();
            values.retain(|v| seen.insert(v.clone()));
        }
        let sum = |values: &[Value]| -> Result<Value, SqlError> {
            let mut total = Value::Null;
            for v in values {
                total = if total.is_null() {
                    arith(ArithOp::Add, &Value::Int(0), v)?
                } else {
                    arith(ArithOp::Add, &total, v)?
                };
            }
            Ok(total)
        };
        let pick = |want: Ordering| {
            values
                .iter()
                .cloned()
                .reduce(|a, b| if sql_cmp(&b, &a) == Some(want) { b } else { a })
                .unwrap_or(Value::Null)
        };
        out.push(match agg.func {
            AggFunc::Count => Value::Int(values.len() as i64),
            AggFunc::Sum => sum(&values)?,
            AggFunc::Min => pick(Ordering::Less),
            AggFunc::Max => pick(Ordering::Greater),
            AggFunc::Avg if values.is_empty() => Value::Null,
            AggFunc::Avg => arith(
                ArithOp::Div,
                &sum(&values)?,
                &Value::Int(values.len() as i64),
            )?,
        });
    }
    Ok(out)
}

/// A LIMIT or OFFSET value. Its placeholders are the statement's last ones.
fn limit_value(e: &Ast, base: usize, params: &[Value]) -> Result<usize, SqlError> {
    let mut binder = Binder::new(&[]);
    binder.set_param_base(base);
    let v = binder.expr(e, "limit clause")?.eval(env(&[], params))?;
    match v {
        Value::Int(n) if n >= 0 => Ok(n as usize),
        // MySQL's grammar takes only an unsigned integer (or a `?`) in LIMIT.
        other if !is_placeholder(e) => Err(SqlError::parse(format!(
            "LIMIT takes an unsigned integer, not {other}"
        ))),
        other => Err(SqlError::new(
            1210,
            "HY000",
            format!("Incorrect arguments to LIMIT: {other}"),
        )),
    }
}

fn is_placeholder(e: &Ast) -> bool {
    matches!(e, Ast::Value(v) if matches!(v.value, ast::Value::Placeholder(_)))
}

/// A query's LIMIT and OFFSET (OFFSET 0 if absent).
fn limit_offset(q: &ast::Query, params: &[Value]) -> Result<(Option<usize>, usize), SqlError> {
    Ok(match &q.limit_clause {
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let l_params = usize::from(limit.as_ref().is_some_and(is_placeholder));
            let o_params = usize::from(offset.as_ref().is_some_and(|o| is_placeholder(&o.value)));
            let base = params.len().saturating_sub(l_params + o_params);
            (
                limit
                    .as_ref()
                    .map(|l| limit_value(l, base, params))
                    .transpose()?,
                offset
                    .as_ref()
                    .map(|o| limit_value(&o.value, base + l_params, params))
                    .transpose()?
                    .unwrap_or(0),
            )
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let o_params = usize::from(is_placeholder(offset));
            let base = params
                .len()
                .saturating_sub(o_params + usize::from(is_placeholder(limit)));
            (
                Some(limit_value(limit, base + o_params, params)?),
                limit_value(offset, base, params)?,
            )
        }
        None => (None, 0),
    })
}

/// How many rows of its plan's output the query can use if the plan gives them in the
/// query's order: LIMIT + OFFSET, when nothing between the plan and the LIMIT (grouping,
/// aggregates, DISTINCT) needs more rows and the planner sees the whole ORDER BY (it skips
/// items naming select-list aliases, and then cannot vouch for the order). The planner
/// takes it to prefer an index that gives the order ([`Planner::limit`]); [`rows_wanted`]
/// then says whether the plan does.
fn usable_rows(
    q: &ast::Query,
    select: &ast::Select,
    bound: &BoundSelect,
    (limit, offset): (Option<usize>, usize),
) -> Option<usize> {
    let order_items = match &q.order_by {
        Some(ob) => match &ob.kind {
            ast::OrderByKind::Expressions(items) => items.len(),
            ast::OrderByKind::All(_) => return None,
        },
        None => 0,
    };
    let aggregates = select.projection.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            contains_aggregate(e)
        }
        _ => false,
    });
    let grouped = match &select.group_by {
        GroupByExpr::Expressions(exprs, _) => !exprs.is_empty(),
        GroupByExpr::All(_) => true,
    };
    if bound.order_by.len() != order_items || aggregates || grouped || select.distinct.is_some() {
        return None;
    }
    limit.map(|l| l.saturating_add(offset))
}

/// The rows the executor may stop after: [`usable_rows`], if the plan's order is the
/// query's (its first table's index gives the ORDER BY, read forwards, or there is none).
/// Delivery's `ORDER BY no_o_id LIMIT 1 FOR UPDATE` then reads and locks one row per
/// district instead of all of the district's NEW_ORDER rows.
fn rows_wanted(plan: &waterline_planner::Plan, usable: Option<usize>) -> Option<usize> {
    usable.filter(|_| plan.ordered_by_index && !plan.backward)
}

/// A select list bound: the output columns, GROUP BY, the ORDER BY keys and the aggregates.
#[derive(Clone, Debug)]
struct Projection {
    cols: Vec<OutCol>,
    group_by: Vec<Expr>,
    sort: Vec<(SortKey, bool)>,
    aggs: Vec<Agg>,
    /// Whether it holds a session value (NOW(), @@autocommit) read while binding.
    volatile: bool,
}

/// Binds a query's select list, GROUP BY and ORDER BY over its bound `tables`.
fn bind_projection(
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
    if s.sql_mode.only_full_group_by && (!group_by.is_empty() || !pb.aggs.is_empty()) {
        group_by::full_group_by(s, tables, &cols, &group_by)?;
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

/// Projects, groups, sorts and limits (to `(limit, offset)`, from [`limit_offset`]) the
/// joined rows of a query.
fn project(
    s: &Session,
    p: &Projection,
    select: &ast::Select,
    rows: Vec<Vec<Row>>,
    params: &[Value],
    (limit, offset): (Option<usize>, usize),
) -> Result<Response, SqlError> {
    let Projection {
        cols,
        group_by,
        sort,
        aggs,
        ..
    } = p;
    let grouped = !group_by.is_empty() || !aggs.is_empty();

    // Groups (in first-seen order), or one "group" per row.
    let mut out: Vec<(Vec<Value>, Vec<Value>)> = Vec::new(); // (row, source sort keys)
    let src_keys = |row: Option<&&Vec<Row>>| -> Result<Vec<Value>, SqlError> {
        sort.iter()
            .filter_map(|(k, _)| match k {
                SortKey::Src(e) => Some(e),
                SortKey::Out(_) => None,
            })
            .map(|e| match row {
                Some(r) => e.eval(env(&slots(r), params)).map_err(SqlError::from),
                None => Ok(Value::Null),
            })
            .collect()
    };
    if grouped {
        let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
        let mut groups: Vec<Vec<&Vec<Row>>> = Vec::new();
        for row in &rows {
            let key = group_by
                .iter()
                .map(|e| e.eval(env(&slots(row), params)))
                .collect::<Result<Vec<_>, PlanError>>()?;
            let at = *index.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[at].push(row);
        }
        if groups.is_empty() && group_by.is_empty() {
            groups.push(Vec::new()); // aggregates over no rows: one row
        }
        for group in &groups {
            let values = run_aggregates(aggs, group, params)?;
            let row = cols
                .iter()
                .map(|c| eval(&c.expr, group, &values, params))
                .collect::<Result<Vec<_>, _>>()?;
            out.push((row, src_keys(group.first())?));
        }
    } else {
        for row in &rows {
            let one = [row];
            let values = cols
                .iter()
                .map(|c| eval(&c.expr, &one, &[], params))
                .collect::<Result<Vec<_>, _>>()?;
            out.push((values, src_keys(Some(&row))?));
        }
    }
    if !sort.is_empty() {
        out.sort_by(|(a, sa), (b, sb)| {
            let mut src = 0;
            for (key, desc) in sort {
                let (x, y) = match key {
                    SortKey::Out(i) => (&a[*i], &b[*i]),
                    SortKey::Src(_) => {
                        src += 1;
                        (&sa[src - 1], &sb[src - 1])
                    }
                };
                let o = match (x.is_null(), y.is_null()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    _ => sql_cmp(x, y).unwrap_or(Ordering::Equal),
                };
                let o = if *desc { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let mut result: Vec<Vec<Value>> = out.into_iter().map(|(r, _)| r).collect();
    if matches!(select.distinct, Some(ast::Distinct::Distinct)) {
        let mut seen = HashSet::new();
        result.retain(|r| seen.insert(r.clone()));
    }
    let result: Vec<Vec<Value>> = result
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    s.shared
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

fn select_of(q: &ast::Query) -> Result<&ast::Select, SqlError> {
    match q.body.as_ref() {
        SetExpr::Select(s) => Ok(s),
        other => Err(SqlError::unsupported(other)),
    }
}

/// The planner error as the client should see it: the engine's error if one caused it.
pub(crate) fn plan_failure(access: &TxnAccess<'_>, e: PlanError) -> SqlError {
    match access.take_failure() {
        Some(txn) => SqlError::from(txn),
        None => SqlError::from(e),
    }
}

/// A SELECT bound against the catalog: the handles of its tables, the planner's bound form,
/// and its select list. A prepared statement keeps one between executions.
#[derive(Debug)]
pub(crate) struct BoundQuery {
    tables: Vec<Table>,
    select: Arc<BoundSelect>,
    projection: Projection,
    lock: Option<LockMode>,
    /// `NOWAIT` or `SKIP LOCKED` after the lock clause.
    wait: LockWait,
}

impl BoundQuery {
    /// Whether it holds a value of this moment (NOW(), @@autocommit): then it is not kept.
    pub(crate) fn volatile(&self) -> bool {
        self.projection.volatile || self.select.volatile
    }
}

/// The handles of `bound`'s tables, from the catalog's `tables`.
fn handles(tables: &[Table], bound: &[BoundTable]) -> Vec<Table> {
    bound
        .iter()
        .filter_map(|b| {
            tables
                .iter()
                .find(|t| t.name().eq_ignore_ascii_case(&b.name))
                .cloned()
        })
        .collect()
}

/// Binds a query against the catalog's `tables`.
pub(crate) fn bind(s: &Session, tables: &[Table], q: &ast::Query) -> Result<BoundQuery, SqlError> {
    let database = s.database.as_deref();
    bind_in(s, tables, q, database)
}

/// [`bind`] with `database` (`None`: no database chosen) as the current one.
pub(crate) fn bind_in(
    s: &Session,
    tables: &[Table],
    q: &ast::Query,
    database: Option<&str>,
) -> Result<BoundQuery, SqlError> {
    let select = select_of(q)?;
    let lock = q.locks.first().map(|l| match l.lock_type {
        ast::LockType::Update => LockMode::Exclusive,
        ast::LockType::Share => LockMode::Shared,
    });
    let wait = match q.locks.first().and_then(|l| l.nonblock.as_ref()) {
        None => LockWait::Wait,
        Some(ast::NonBlock::Nowait) => LockWait::NoWait,
        Some(ast::NonBlock::SkipLocked) => LockWait::SkipLocked,
    };
    let bound = if select.from.is_empty() {
        BoundSelect::default()
    } else {
        let database = database.ok_or_else(SqlError::no_database)?;
        bind_query(&crate::ddl::SchemaCatalog { database, tables }, q, Some(s))?
    };
    let projection = bind_projection(s, &bound.tables, q, select)?;
    Ok(BoundQuery {
        tables: handles(tables, &bound.tables),
        select: Arc::new(bound),
        projection,
        lock,
        wait,
    })
}

/// Runs a bound query: plans it for `params`, reads, and projects.
pub(crate) fn run(
    s: &mut Session,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
) -> Result<Response, SqlError> {
    let select = select_of(q)?;
    let window = limit_offset(q, params)?;
    if select.from.is_empty() {
        return project(
            s,
            &bound.projection,
            select,
            vec![Vec::new()],
            params,
            window,
        );
    }
    let db = s.database.clone().ok_or_else(SqlError::no_database)?;
    // SERIALIZABLE: a plain SELECT in a transaction reads FOR SHARE, as InnoDB's does.
    let lock = bound
        .lock
        .or_else(|| s.serializable_read().then_some(LockMode::Shared));
    s.with_trx(|s, trx| read(s, q, bound, params, (&db, lock), trx))
}

/// Plans a bound query for `params` in database `db`, reads with `trx` (locking in `lock`'s
/// mode, if any), and projects: [`run`]'s work, in a transaction of the caller's choice.
pub(crate) fn read(
    s: &mut Session,
    q: &ast::Query,
    bound: &BoundQuery,
    params: &[Value],
    (db, lock): (&str, Option<LockMode>),
    trx: &mut waterline_txn::Transaction,
) -> Result<Response, SqlError> {
    let select = select_of(q)?;
    let window = limit_offset(q, params)?;
    let mark = trx.lock_mark();
    let access = TxnAccess::new(db, &bound.tables, trx, lock, s.watch.clone()).waiting(bound.wait);
    let usable = usable_rows(q, select, &bound.select, window);
    let plan = Planner::new(&access)
        .mode(s.planner)
        .limit(usable)
        .optimize(Arc::clone(&bound.select), params)
        .map_err(|e| plan_failure(&access, e))?;
    let wanted = rows_wanted(&plan, usable);
    s.no_index_used |= scans_without_index(&plan);
    let run =
        execute_first(&plan, &access, params, wanted).map_err(|e| plan_failure(&access, e))?;
    s.shared
        .counters
        .rows_examined
        .fetch_add(run.examined.iter().sum(), AtomicOrdering::Relaxed);
    drop(access);
    if lock.is_some() {
        unlock_unselected(trx, mark, &bound.tables, &bound.select.tables, &run.rows);
    }
    project(s, &bound.projection, select, run.rows, params, window)
}

/// Whether `plan` reads a table whole, by its rows or a whole index (EXPLAIN's ALL and
/// index): MySQL's SERVER_QUERY_NO_INDEX_USED.
pub(crate) fn scans_without_index(plan: &waterline_planner::Plan) -> bool {
    plan.impossible.is_none()
        && plan.tables.iter().any(|t| {
            matches!(
                t.access,
                waterline_planner::Access::All | waterline_planner::Access::Index { .. }
            )
        })
}

/// EXPLAIN of a query (planned in the session's transaction, not run).
pub(crate) fn explain(
    s: &mut Session,
    q: &ast::Query,
    params: &[Value],
) -> Result<Response, SqlError> {
    let db = s.database.clone().ok_or_else(SqlError::no_database)?;
    let (_, tables) = s.tables();
    s.with_trx(|s, trx| {
        let access = TxnAccess::new(&db, &tables, trx, None, s.watch.clone());
        let bound = bind_query(&access, q, Some(&*s)).map_err(|e| plan_failure(&access, e))?;
        let usable = usable_rows(q, select_of(q)?, &bound, limit_offset(q, params)?);
        let plan = Planner::new(&access)
            .mode(s.planner)
            .limit(usable)
            .optimize(Arc::new(bound), params)
            .map_err(|e| plan_failure(&access, e))?;
        let rows = explain_rows(&plan, &access)
            .into_iter()
            .map(|r| {
                r.values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match (i, v) {
                        (_, None) => Value::Null,
                        (0 | 8, Some(n)) => n
                            .parse()
                            .map_or_else(|_| Value::from(n.as_str()), Value::Int),
                        (_, Some(t)) => Value::from(t.as_str()),
                    })
                    .collect()
            })
            .collect();
        Ok(Response::text(&COLUMNS, rows))
    })
}

/// The columns a query returns, without running it (COM_STMT_PREPARE).
pub(crate) fn describe(s: &mut Session, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    let select = select_of(q)?;
    let (_, tables) = s.tables();
    let catalog = crate::ddl::SchemaCatalog {
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
