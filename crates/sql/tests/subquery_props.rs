//! Subqueries and outer joins against a naive evaluation: random small tables with NULLs,
//! random queries of the shapes below, each run through a session and evaluated here by
//! nested loops with SQL's three-valued logic, must give the same multiset of rows.
//!
//! - `a [NOT] IN (SELECT c FROM t2 [WHERE d op k])` (uncorrelated, run once as constants);
//! - `[NOT] EXISTS (SELECT 1 FROM t2 WHERE c = t1.a [AND d op t1.b])` (correlated, per row);
//! - `a [NOT] IN (SELECT c FROM t2 WHERE d = t1.b)` (correlated, NULLs on both sides);
//! - `b op (SELECT MAX(d) FROM t2 WHERE c = t1.a)` (a correlated scalar, NULL when empty);
//! - `t1 LEFT JOIN t2 ON c = a [AND d op k] [WHERE d IS NULL | WHERE c op k]`;
//! - two subqueries in one WHERE, `a [NOT] IN (SELECT c ... d = t1.b) AND [NOT] EXISTS
//!   (SELECT 1 FROM t2 WHERE c = t1.b)`;
//! - a subquery over the outer query's own table, `a IN (SELECT b FROM t1 WHERE a >= k)`;
//! - a correlated scalar subquery in the select list, `SELECT a, (SELECT MAX(d) FROM t2
//!   WHERE c = t1.a) FROM t1`, or an EXISTS there, or in a grouped query's (`... GROUP BY a`);
//! - a derived table joined to a table (merged): `t1 JOIN (SELECT c, d FROM t2 WHERE d >= k)
//!   AS x ON x.c = t1.a`.
//!
//! Each query runs three ways, under `optimizer_switch`: as the planner chooses,
//! with `semijoin=off` (every subquery run once as constants or per outer row, the naive
//! evaluation), and with `materialization=off` (every IN and EXISTS of WHERE a semi-join or
//! anti-join, which EXPLAIN then shows as one block). All three must give the same rows.

mod common;

use common::{ok, rows, session};
use proptest::prelude::*;

type Cell = Option<i64>;

#[derive(Clone, Copy, Debug)]
enum Op {
    Lt,
    Eq,
    Ge,
}

impl Op {
    fn sql(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Eq => "=",
            Op::Ge => ">=",
        }
    }

    /// SQL's comparison: NULL (None) if either side is NULL.
    fn apply(self, x: Cell, y: Cell) -> Option<bool> {
        let (x, y) = (x?, y?);
        Some(match self {
            Op::Lt => x < y,
            Op::Eq => x == y,
            Op::Ge => x >= y,
        })
    }
}

#[derive(Clone, Debug)]
enum Shape {
    InUncorrelated {
        negated: bool,
        filter: Option<(Op, i64)>,
    },
    Exists {
        negated: bool,
        also: Option<Op>,
    },
    InCorrelated {
        negated: bool,
    },
    Scalar {
        op: Op,
    },
    LeftJoin {
        on: Option<(Op, i64)>,
        filter: u8,
        k: i64,
    },
    Two {
        in_negated: bool,
        exists_negated: bool,
    },
    SelfIn {
        k: i64,
    },
    /// `(a, b) IN (SELECT c, d ...)`: a materialization of two columns.
    RowIn {
        negated: bool,
    },
    InSelectList {
        exists: bool,
    },
    Grouped,
    JoinedDerived {
        k: i64,
    },
    /// `t1 LEFT JOIN (t2 JOIN t2 AS t3 ON ..) ON ..`: a nest of two inner tables.
    NestedLeft {
        k: i64,
    },
    /// `t1 LEFT JOIN (t2 LEFT JOIN t2 AS t3 ON ..) ON ..`: a nest inside a nest, the outer
    /// ON reading the inner nest's table.
    NestedLeftLeft {
        k: i64,
    },
    /// `t1 LEFT JOIN (SELECT ... WHERE d >= k) AS x ON ..`: merged, its WHERE in the ON.
    LeftDerived {
        k: i64,
    },
}

impl Shape {
    /// Whether every subquery of the shape can become a semi-join or anti-join.
    fn flattens(&self) -> bool {
        !matches!(
            self,
            Shape::Scalar { .. }
                | Shape::LeftJoin { .. }
                | Shape::InSelectList { .. }
                | Shape::Grouped
                | Shape::JoinedDerived { .. }
                | Shape::NestedLeft { .. }
                | Shape::NestedLeftLeft { .. }
                | Shape::LeftDerived { .. }
        )
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![Just(Op::Lt), Just(Op::Eq), Just(Op::Ge)]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (any::<bool>(), proptest::option::of((op(), 0..4i64)))
            .prop_map(|(negated, filter)| Shape::InUncorrelated { negated, filter }),
        (any::<bool>(), proptest::option::of(op()))
            .prop_map(|(negated, also)| Shape::Exists { negated, also }),
        any::<bool>().prop_map(|negated| Shape::InCorrelated { negated }),
        op().prop_map(|op| Shape::Scalar { op }),
        (proptest::option::of((op(), 0..4i64)), 0..3u8, 0..4i64)
            .prop_map(|(on, filter, k)| Shape::LeftJoin { on, filter, k }),
        (any::<bool>(), any::<bool>()).prop_map(|(in_negated, exists_negated)| Shape::Two {
            in_negated,
            exists_negated
        }),
        (0..4i64).prop_map(|k| Shape::SelfIn { k }),
        any::<bool>().prop_map(|negated| Shape::RowIn { negated }),
        any::<bool>().prop_map(|exists| Shape::InSelectList { exists }),
        Just(Shape::Grouped),
        (0..4i64).prop_map(|k| Shape::JoinedDerived { k }),
        (0..4i64).prop_map(|k| Shape::NestedLeft { k }),
        (0..4i64).prop_map(|k| Shape::NestedLeftLeft { k }),
        (0..4i64).prop_map(|k| Shape::LeftDerived { k }),
    ]
}

fn cell() -> impl Strategy<Value = Cell> {
    proptest::option::weighted(0.8, 0..4i64)
}

fn table() -> impl Strategy<Value = Vec<(Cell, Cell)>> {
    proptest::collection::vec((cell(), cell()), 0..7)
}

fn sql(shape: &Shape) -> String {
    let base = "SELECT a, b FROM t1 WHERE ";
    match shape {
        Shape::InUncorrelated { negated, filter } => format!(
            "{base}a {}IN (SELECT c FROM t2{})",
            if *negated { "NOT " } else { "" },
            filter.map_or(String::new(), |(op, k)| format!(
                " WHERE d {} {k}",
                op.sql()
            ))
        ),
        Shape::Exists { negated, also } => format!(
            "{base}{}EXISTS (SELECT 1 FROM t2 WHERE c = t1.a{})",
            if *negated { "NOT " } else { "" },
            also.map_or(String::new(), |op| format!(" AND d {} t1.b", op.sql()))
        ),
        Shape::InCorrelated { negated } => format!(
            "{base}a {}IN (SELECT c FROM t2 WHERE d = t1.b)",
            if *negated { "NOT " } else { "" }
        ),
        Shape::Scalar { op } => format!(
            "{base}b {} (SELECT MAX(d) FROM t2 WHERE c = t1.a)",
            op.sql()
        ),
        Shape::LeftJoin { on, filter, k } => format!(
            "SELECT a, d FROM t1 LEFT JOIN t2 ON c = a{}{}",
            on.map_or(String::new(), |(op, k)| format!(" AND d {} {k}", op.sql())),
            match filter {
                0 => String::new(),
                1 => " WHERE d IS NULL".into(),
                _ => format!(" WHERE c >= {k}"),
            }
        ),
        Shape::Two {
            in_negated,
            exists_negated,
        } => format!(
            "{base}a {}IN (SELECT c FROM t2 WHERE d = t1.b) AND {}EXISTS (SELECT 1 FROM t2 WHERE c = t1.b)",
            if *in_negated { "NOT " } else { "" },
            if *exists_negated { "NOT " } else { "" }
        ),
        Shape::SelfIn { k } => format!("{base}a IN (SELECT b FROM t1 WHERE a >= {k})"),
        Shape::NestedLeft { k } => format!(
            "SELECT t1.a, t3.d FROM t1 LEFT JOIN (t2 JOIN t2 AS t3 ON t3.c = t2.d) \
             ON t2.c = t1.a AND t3.d >= {k}"
        ),
        Shape::NestedLeftLeft { k } => format!(
            "SELECT t1.a, t3.d FROM t1 LEFT JOIN (t2 LEFT JOIN t2 AS t3 ON t3.c = t2.d) \
             ON t2.c = t1.a AND (t3.d >= {k} OR t3.d IS NULL)"
        ),
        Shape::LeftDerived { k } => format!(
            "SELECT a, x.d FROM t1 LEFT JOIN (SELECT c, d FROM t2 WHERE d >= {k}) AS x ON x.c = t1.a"
        ),
        Shape::RowIn { negated } => format!(
            "{base}(a, b) {}IN (SELECT c, d FROM t2)",
            if *negated { "NOT " } else { "" }
        ),
        Shape::InSelectList { exists: false } => {
            "SELECT a, (SELECT MAX(d) FROM t2 WHERE c = t1.a) FROM t1".into()
        }
        Shape::InSelectList { exists: true } => {
            "SELECT a, EXISTS (SELECT 1 FROM t2 WHERE c = t1.b) FROM t1".into()
        }
        Shape::Grouped => {
            "SELECT a, (SELECT MAX(d) FROM t2 WHERE c = t1.a) FROM t1 GROUP BY a".into()
        }
        Shape::JoinedDerived { k } => format!(
            "SELECT a, x.d FROM t1 JOIN (SELECT c, d FROM t2 WHERE d >= {k}) AS x ON x.c = t1.a"
        ),
    }
}

/// `x IN (list)`: true if one equals, else NULL if x or any is NULL, else false.
fn in_list(x: Cell, list: &[Cell]) -> Option<bool> {
    let mut unknown = x.is_none();
    for &v in list {
        match Op::Eq.apply(x, v) {
            Some(true) => return Some(true),
            None => unknown = true,
            Some(false) => {}
        }
    }
    if list.is_empty() {
        return Some(false);
    }
    if unknown { None } else { Some(false) }
}

fn not(v: Option<bool>, negated: bool) -> Option<bool> {
    if negated { v.map(|b| !b) } else { v }
}

/// The rows the query returns, by nested loops.
fn naive(shape: &Shape, t1: &[(Cell, Cell)], t2: &[(Cell, Cell)]) -> Vec<(Cell, Cell)> {
    let keep = |a: Cell, b: Cell| -> Option<bool> {
        match shape {
            Shape::InUncorrelated { negated, filter } => {
                let list: Vec<Cell> = t2
                    .iter()
                    .filter(|(_, d)| {
                        filter.is_none_or(|(op, k)| op.apply(*d, Some(k)) == Some(true))
                    })
                    .map(|(c, _)| *c)
                    .collect();
                not(in_list(a, &list), *negated)
            }
            Shape::Exists { negated, also } => {
                let found = t2.iter().any(|(c, d)| {
                    Op::Eq.apply(*c, a) == Some(true)
                        && also.is_none_or(|op| op.apply(*d, b) == Some(true))
                });
                Some(found != *negated)
            }
            Shape::InCorrelated { negated } => {
                let list: Vec<Cell> = t2
                    .iter()
                    .filter(|(_, d)| Op::Eq.apply(*d, b) == Some(true))
                    .map(|(c, _)| *c)
                    .collect();
                not(in_list(a, &list), *negated)
            }
            Shape::Scalar { op } => {
                let max = t2
                    .iter()
                    .filter(|(c, _)| Op::Eq.apply(*c, a) == Some(true))
                    .filter_map(|(_, d)| *d)
                    .max();
                op.apply(b, max)
            }
            Shape::Two {
                in_negated,
                exists_negated,
            } => {
                let list: Vec<Cell> = t2
                    .iter()
                    .filter(|(_, d)| Op::Eq.apply(*d, b) == Some(true))
                    .map(|(c, _)| *c)
                    .collect();
                let found = t2.iter().any(|(c, _)| Op::Eq.apply(*c, b) == Some(true));
                let first = not(in_list(a, &list), *in_negated);
                match (first, found != *exists_negated) {
                    (Some(false), _) | (_, false) => Some(false),
                    (None, true) => None,
                    (Some(true), true) => Some(true),
                }
            }
            Shape::SelfIn { k } => {
                let list: Vec<Cell> = t1
                    .iter()
                    .filter(|(a, _)| Op::Ge.apply(*a, Some(*k)) == Some(true))
                    .map(|(_, b)| *b)
                    .collect();
                in_list(a, &list)
            }
            Shape::RowIn { negated } => {
                // A row is in the list if some row equals it in both; NULL if none is
                // unequal in a known column and some comparison is unknown.
                let mut result = Some(false);
                for &(c, d) in t2 {
                    match (Op::Eq.apply(a, c), Op::Eq.apply(b, d)) {
                        (Some(true), Some(true)) => {
                            result = Some(true);
                            break;
                        }
                        (Some(false), _) | (_, Some(false)) => {}
                        _ => result = None,
                    }
                }
                not(result, *negated)
            }
            Shape::LeftJoin { .. }
            | Shape::InSelectList { .. }
            | Shape::Grouped
            | Shape::JoinedDerived { .. }
            | Shape::NestedLeft { .. }
            | Shape::NestedLeftLeft { .. }
            | Shape::LeftDerived { .. } => unreachable!(),
        }
    };
    if let Shape::JoinedDerived { k } = shape {
        let mut out = Vec::new();
        for &(a, _) in t1 {
            for &(c, d) in t2 {
                if Op::Ge.apply(d, Some(*k)) == Some(true) && Op::Eq.apply(c, a) == Some(true) {
                    out.push((a, d));
                }
            }
        }
        return out;
    }
    if let Shape::Grouped = shape {
        let mut groups: Vec<Cell> = t1.iter().map(|&(a, _)| a).collect();
        groups.sort();
        groups.dedup();
        return groups
            .into_iter()
            .map(|a| {
                let max = (t2.iter())
                    .filter(|(c, _)| Op::Eq.apply(*c, a) == Some(true))
                    .filter_map(|(_, d)| *d)
                    .max();
                (a, max)
            })
            .collect();
    }
    if let Shape::InSelectList { exists } = shape {
        return t1
            .iter()
            .map(|&(a, b)| {
                let value = match exists {
                    false => (t2.iter())
                        .filter(|(c, _)| Op::Eq.apply(*c, a) == Some(true))
                        .filter_map(|(_, d)| *d)
                        .max(),
                    true => Some(i64::from(
                        t2.iter().any(|(c, _)| Op::Eq.apply(*c, b) == Some(true)),
                    )),
                };
                (a, value)
            })
            .collect();
    }
    // A LEFT JOIN: each t1 row with the `matches` its `a` finds, or once with NULL.
    let left = |matches: &dyn Fn(Cell) -> Vec<Cell>| -> Vec<(Cell, Cell)> {
        let mut out = Vec::new();
        for &(a, _) in t1 {
            let found = matches(a);
            if found.is_empty() {
                out.push((a, None));
            }
            out.extend(found.into_iter().map(|d| (a, d)));
        }
        out
    };
    if let Shape::NestedLeft { k } = shape {
        return left(&|a| {
            let mut found = Vec::new();
            for &(c2, d2) in t2 {
                for &(c3, d3) in t2 {
                    if Op::Eq.apply(c3, d2) == Some(true)
                        && Op::Eq.apply(c2, a) == Some(true)
                        && Op::Ge.apply(d3, Some(*k)) == Some(true)
                    {
                        found.push(d3);
                    }
                }
            }
            found
        });
    }
    if let Shape::NestedLeftLeft { k } = shape {
        return left(&|a| {
            let mut found = Vec::new();
            for &(c2, d2) in t2
                .iter()
                .filter(|(c2, _)| Op::Eq.apply(*c2, a) == Some(true))
            {
                let _ = c2;
                let inner: Vec<Cell> = (t2.iter())
                    .filter(|(c3, _)| Op::Eq.apply(*c3, d2) == Some(true))
                    .map(|&(_, d3)| d3)
                    .collect();
                let rows: Vec<Option<Cell>> = match inner.is_empty() {
                    true => vec![None],
                    false => inner.into_iter().map(Some).collect(),
                };
                for row in rows {
                    // `t3.d >= k OR t3.d IS NULL`, on t3's row or its NULLs.
                    let d3 = row.flatten();
                    if d3.is_none() || Op::Ge.apply(d3, Some(*k)) == Some(true) {
                        found.push(d3);
                    }
                }
            }
            found
        });
    }
    if let Shape::LeftDerived { k } = shape {
        return left(&|a| {
            (t2.iter())
                .filter(|(c, d)| {
                    Op::Ge.apply(*d, Some(*k)) == Some(true) && Op::Eq.apply(*c, a) == Some(true)
                })
                .map(|&(_, d)| d)
                .collect()
        });
    }
    if let Shape::LeftJoin { on, filter, k } = shape {
        let mut out = Vec::new();
        for &(a, _) in t1 {
            let matches: Vec<(Cell, Cell)> = t2
                .iter()
                .copied()
                .filter(|(c, d)| {
                    Op::Eq.apply(*c, a) == Some(true)
                        && on.is_none_or(|(op, k)| op.apply(*d, Some(k)) == Some(true))
                })
                .collect();
            let joined: Vec<(Cell, Cell)> = if matches.is_empty() {
                vec![(None, None)]
            } else {
                matches
            };
            for (c, d) in joined {
                let pass = match filter {
                    0 => true,
                    1 => d.is_none(),
                    _ => Op::Ge.apply(c, Some(*k)) == Some(true),
                };
                if pass {
                    out.push((a, d));
                }
            }
        }
        return out;
    }
    t1.iter()
        .copied()
        .filter(|&(a, b)| keep(a, b) == Some(true))
        .collect()
}

fn text(c: Cell) -> String {
    c.map_or_else(|| "NULL".into(), |v| v.to_string())
}

fn values(rows: &[(Cell, Cell)], id: &mut i64) -> String {
    rows.iter()
        .map(|(x, y)| {
            *id += 1;
            format!("({id}, {}, {})", text(*x), text(*y))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn subqueries_and_outer_joins_give_the_naive_rows(t1 in table(), t2 in table(), shape in shape()) {
        let mut s = session();
        ok(&mut s, "CREATE TABLE t1 (id INT PRIMARY KEY, a INT, b INT)");
        ok(&mut s, "CREATE TABLE t2 (id INT PRIMARY KEY, c INT, d INT, KEY k_c (c))");
        let mut id = 0;
        if !t1.is_empty() {
            ok(&mut s, &format!("INSERT INTO t1 VALUES {}", values(&t1, &mut id)));
        }
        if !t2.is_empty() {
            ok(&mut s, &format!("INSERT INTO t2 VALUES {}", values(&t2, &mut id)));
        }
        let query = sql(&shape);
        let mut want: Vec<Vec<String>> = naive(&shape, &t1, &t2)
            .into_iter()
            .map(|(x, y)| vec![text(x), text(y)])
            .collect();
        want.sort();
        for switch in ["default", "semijoin=off", "materialization=off", "firstmatch=off"] {
            ok(&mut s, "SET optimizer_switch = 'default'");
            ok(&mut s, &format!("SET optimizer_switch = '{switch}'"));
            let mut got = rows(&mut s, &query);
            got.sort();
            prop_assert_eq!(&got, &want, "{} ({})", query, switch);
            if switch == "materialization=off" && shape.flattens() {
                // One block: the subqueries' tables are the outer query's.
                let explained = rows(&mut s, &format!("EXPLAIN {query}"));
                prop_assert!(explained.iter().all(|r| r[1] == "SIMPLE"), "{} {:?}", query, explained);
            }
            if switch == "firstmatch=off"
                && matches!(shape, Shape::InUncorrelated { negated: false, .. } | Shape::RowIn { negated: false })
            {
                // Semi-join materialization: the outer block joins `<subquery2>`.
                let explained = rows(&mut s, &format!("EXPLAIN {query}"));
                prop_assert!(explained.iter().any(|r| r[2] == "<subquery2>" && r[1] == "SIMPLE"), "{} {:?}", query, explained);
                prop_assert!(explained.iter().any(|r| r[1] == "MATERIALIZED"), "{} {:?}", query, explained);
            }
        }
    }
}
