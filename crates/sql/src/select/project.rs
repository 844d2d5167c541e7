//! The select list: binding it (aggregates here, every other expression by the planner's
//! binder) into the executor's [`Output`], with GROUP BY and ORDER BY; and the result set's
//! columns (names, tables, types) around the rows the executor's steps make.

use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;

use sqlparser::ast::{self, Expr as Ast, GroupByExpr, SelectItem};
use waterline_planner::Expr;
use waterline_planner::bind::{Binder, BoundTable, HavingScope, bind_query};
use waterline_planner::exec::{Agg, AggFunc, Output, SortKey};
use waterline_txn::{Row, Value};

use super::select_of;
use crate::error::SqlError;
use crate::session::{Context, Response, ResultColumn};
use crate::types::{ColumnMeta, FieldType, value_field_type};

#[derive(Clone, Debug)]
pub(super) struct OutCol {
    pub(super) name: Arc<str>,
    pub(super) table: Arc<str>,
    /// Its metadata, where the select list fixes it (a column, COUNT); else the first
    /// non-NULL value's type decides.
    pub(super) meta: Option<ColumnMeta>,
    /// The expression's SQL text, to match ORDER BY items.
    pub(super) text: String,
}

/// A binder for a select list and the clauses after it: it binds aggregates, and session
/// values (see `functions.rs`) wherever they stand.
fn projection_binder<'b>(s: &'b Context<'b>, tables: &'b [BoundTable]) -> Binder<'b> {
    Binder::new(tables).with_session(s).with_aggregates()
}

/// The metadata and table name a select item's expression fixes: a column's own, COUNT's
/// BIGINT; `None` for one whose first value decides.
fn item_meta(e: &Expr, tables: &[BoundTable], aggs: &[Agg]) -> (Option<ColumnMeta>, Arc<str>) {
    match e {
        Expr::Column(c) => {
            let t = &tables[c.table];
            (
                Some(ColumnMeta::of(t.schema.columns[c.column].ty)),
                t.alias.as_str().into(),
            )
        }
        Expr::Agg(i) if aggs[*i].func == AggFunc::Count => {
            (Some(ColumnMeta::computed(FieldType::LongLong)), "".into())
        }
        _ => (None, "".into()),
    }
}

/// A select list bound: the output columns as the client sees them, and what the executor
/// does after the join.
#[derive(Clone, Debug)]
pub(super) struct Projection {
    cols: Vec<OutCol>,
    output: Output,
    /// Whether it holds a session value (NOW(), @@autocommit) read while binding.
    pub(super) volatile: bool,
}

impl Projection {
    /// The steps after the join: grouping, aggregates, HAVING, sort, DISTINCT.
    pub(super) fn output(&self) -> &Output {
        &self.output
    }

    /// How many columns the query returns.
    pub(super) fn width(&self) -> usize {
        self.cols.len()
    }

    /// The names of the columns it returns.
    pub(super) fn column_names(&self) -> Vec<Arc<str>> {
        self.cols.iter().map(|c| Arc::clone(&c.name)).collect()
    }
}

/// Binds a query's select list, GROUP BY and ORDER BY over its bound `tables`.
pub(super) fn bind_projection(
    s: &Context<'_>,
    tables: &[BoundTable],
    q: &ast::Query,
    select: &ast::Select,
) -> Result<Projection, SqlError> {
    let mut pb = projection_binder(s, tables);
    // The first parameter after the select list: the planner numbered WHERE's after it too.
    let (mut cols, mut exprs) = (Vec::new(), Vec::new());
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                for table in star_tables(s, item, tables)? {
                    for column in &table.schema.columns {
                        let e = pb.column(Some(&table.alias), &column.name, "field list")?;
                        cols.push(OutCol {
                            name: column.name.as_str().into(),
                            table: table.alias.as_str().into(),
                            meta: Some(ColumnMeta::of(column.ty)),
                            text: column.name.clone(),
                        });
                        exprs.push(e);
                    }
                }
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let expr = pb.expr(e, "field list")?;
                if matches!(expr, Expr::Row(_)) {
                    return Err(waterline_planner::PlanError::Operand(1).into());
                }
                let (meta, table) = item_meta(&expr, tables, pb.aggregates());
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
                    text,
                });
                exprs.push(expr);
            }
            other => return Err(SqlError::unsupported(other)),
        }
    }
    let group_by: Vec<Expr> = match &select.group_by {
        GroupByExpr::Expressions(items, _) => items
            .iter()
            .map(|e| group_key(&mut pb, e, &cols, &exprs))
            .collect::<Result<_, _>>()?,
        GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };
    let grouped = !group_by.is_empty() || !pb.aggregates().is_empty();
    if s.settings().sql_mode.only_full_group_by && grouped {
        super::group_by::full_group_by(s, tables, &exprs, &group_by)?;
    }
    let having = match &select.having {
        Some(h) => {
            let scope = HavingScope {
                items: cols
                    .iter()
                    .zip(&exprs)
                    .map(|(c, e)| (c.name.to_string(), e.clone()))
                    .collect(),
                group_by: group_by.clone(),
            };
            Some(pb.having(h, scope)?)
        }
        None => None,
    };
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
                            if !matches!(exprs[i], Expr::Column(_))
                                || matches!(e, Ast::Identifier(_)) =>
                        {
                            SortKey::Out(i)
                        }
                        _ => SortKey::Src(pb.expr(e, "order clause")?),
                    }
                }
            };
            sort.push((key, desc));
        }
    }
    Ok(Projection {
        cols,
        output: Output {
            exprs,
            group_by,
            aggs: pb.take_aggregates(),
            having,
            sort,
            distinct: matches!(select.distinct, Some(ast::Distinct::Distinct)),
        },
        volatile: pb.volatile,
    })
}

/// The result set of a query whose joined rows are `rows`: the executor groups, aggregates,
/// projects, sorts and cuts them to `window` (`(limit, offset)`, from
/// [`super::limit::limit_offset`]); this names their columns.
pub(super) fn project(
    s: &Context<'_>,
    p: &Projection,
    rows: Vec<Vec<Row>>,
    params: &[Value],
    window: (Option<usize>, usize),
) -> Result<Response, SqlError> {
    let result = p.output.finish(rows, params, window)?;
    s.shared()
        .counters
        .rows_sent
        .fetch_add(result.len() as u64, AtomicOrdering::Relaxed);
    let columns = p
        .cols
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

/// A GROUP BY item, bound as MySQL resolves it: a number is that select item (`GROUP BY 1`);
/// a name is a column of the query's tables first, then a select item's alias or name; else
/// an expression over the tables. Grouping on an aggregate is error 1056.
fn group_key(
    pb: &mut Binder<'_>,
    e: &Ast,
    cols: &[OutCol],
    exprs: &[Expr],
) -> Result<Expr, SqlError> {
    let aggregated = |x: &Expr| {
        let mut found = false;
        x.visit(&mut |y| found |= matches!(y, Expr::Agg(_)));
        found
    };
    let item = |i: usize| match &exprs[i] {
        x if !aggregated(x) => Ok(x.clone()),
        _ => Err(SqlError::new(
            1056,
            "42000",
            format!("Can't group on '{}'", cols[i].name),
        )),
    };
    if let Ast::Value(v) = e
        && let ast::Value::Number(n, _) = &v.value
    {
        return match n.parse::<usize>() {
            Ok(i) if (1..=cols.len()).contains(&i) => item(i - 1),
            _ => Err(SqlError::unknown_column(n, "group statement")),
        };
    }
    match pb.expr(e, "group statement") {
        Err(waterline_planner::PlanError::UnknownColumn(..))
            if let Ast::Identifier(id) = e
                && let Some(i) = cols
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(&id.value)) =>
        {
            item(i)
        }
        other => Ok(other?),
    }
}

/// The tables a `*` or `t.*` select item stands for: every table, or the one it names
/// (`t.*`, or `db.t.*` in the database in use). A name no table of the query has is error
/// 1051, and `*` with no table error 1096, as in MySQL.
fn star_tables<'t>(
    s: &Context<'_>,
    item: &SelectItem,
    tables: &'t [BoundTable],
) -> Result<Vec<&'t BoundTable>, SqlError> {
    let SelectItem::QualifiedWildcard(kind, _) = item else {
        if tables.is_empty() {
            return Err(SqlError::new(1096, "HY000", "No tables used"));
        }
        // Not the tables a FROM does not name: hidden semi-join tables (no alias), the
        // values of correlated select-list subqueries (`<subquery>`)
        // and semi-join materializations (`<subqueryN>`).
        let named = |t: &&BoundTable| !t.alias.is_empty() && !t.is_internal();
        return Ok(tables.iter().filter(named).collect());
    };
    let ast::SelectItemQualifiedWildcardKind::ObjectName(name) = kind else {
        return Err(SqlError::unsupported(item));
    };
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| {
            p.as_ident()
                .map_or_else(|| p.to_string(), |i| i.value.clone())
        })
        .collect();
    let unknown = || {
        SqlError::new(
            1051,
            "42S02",
            format!("Unknown table '{}'", parts.join(".")),
        )
    };
    let (database, table) = match parts.as_slice() {
        [table] => (None, table),
        [database, table] => (Some(database), table),
        _ => return Err(unknown()),
    };
    if database.is_some_and(|d| !d.eq_ignore_ascii_case(s.database_name())) {
        return Err(unknown());
    }
    let found: Vec<_> = tables
        .iter()
        .filter(|t| t.alias.eq_ignore_ascii_case(table))
        .collect();
    if found.is_empty() {
        return Err(unknown());
    }
    Ok(found)
}

/// The columns a query returns, without running it (COM_STMT_PREPARE).
pub(crate) fn describe(s: &mut Context<'_>, q: &ast::Query) -> Result<Vec<ResultColumn>, SqlError> {
    describe_in(s, q, None)
}

/// [`describe`], with the schemas of the query's `derived` tables.
pub(crate) fn describe_in(
    s: &mut Context<'_>,
    q: &ast::Query,
    derived: Option<&crate::access::Derived>,
) -> Result<Vec<ResultColumn>, SqlError> {
    let select = select_of(q)?;
    let (_, tables) = s.tables();
    let catalog = crate::access::SchemaCatalog {
        database: s.database_name(),
        tables: &tables,
        derived,
    };
    let bound = if select.from.is_empty() {
        Vec::new()
    } else {
        bind_query(&catalog, q, Some(&*s))?.tables
    };
    let mut pb = projection_binder(s, &bound);
    let mut cols = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                for t in star_tables(s, item, &bound)? {
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
                let expr = pb.expr(e, "field list")?;
                let meta = item_meta(&expr, &bound, pb.aggregates())
                    .0
                    .unwrap_or(ColumnMeta::computed(FieldType::VarString));
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
