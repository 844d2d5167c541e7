//! A range never loses a row: for random predicates over random data, running the plan
//! returns exactly the rows that satisfy the predicate (so the rows its access path reads are
//! a superset of them, read once each), in both planner modes, and through a const table;
//! and a plan run to its first N rows returns the first N rows of the full run, also when
//! the planner reads an index for ORDER BY because it was told only N rows are wanted.

use proptest::prelude::*;
use waterline_planner::exec::{execute, execute_first};
use waterline_planner::{Env, Expr, MemCatalog, Planner, PlannerMode};
use waterline_types::{Column, ColumnType, Row, TableSchema, Value};

/// `t(a INT PRIMARY KEY, b INT, c INT NULL, KEY k_bc (b, c), KEY k_c (c))` and
/// `u(k INT PRIMARY KEY, v INT)`.
fn catalog(rows: &[(i64, i64, Option<i64>)], v: i64) -> MemCatalog {
    let mut catalog = MemCatalog::new("test");
    let t = TableSchema::new(
        "t",
        vec![
            Column::new("a", ColumnType::Int),
            Column::new("b", ColumnType::Int),
            Column::nullable("c", ColumnType::Int),
        ],
    )
    .primary_key(&["a"])
    .unwrap()
    .index("k_bc", &["b", "c"], false)
    .unwrap()
    .index("k_c", &["c"], false)
    .unwrap();
    let data = rows
        .iter()
        .map(|&(a, b, c)| {
            vec![
                Value::Int(a),
                Value::Int(b),
                c.map_or(Value::Null, Value::Int),
            ]
        })
        .collect();
    catalog.load(t, data).unwrap();
    let u = TableSchema::new(
        "u",
        vec![
            Column::new("k", ColumnType::Int),
            Column::new("v", ColumnType::Int),
        ],
    )
    .primary_key(&["k"])
    .unwrap();
    catalog
        .load(u, vec![vec![Value::Int(1), Value::Int(v)]])
        .unwrap();
    catalog
}

/// A value side: a constant, arithmetic on constants, or (in joins) the const table's `v`.
fn value(with_u: bool) -> BoxedStrategy<String> {
    let constant = (-2i64..14).prop_map(|n| n.to_string());
    let decimal = (-20i64..140).prop_map(|n| format!("{}.{}", n / 10, (n % 10).abs()));
    let arith = ((-2i64..14), (0i64..5)).prop_map(|(x, y)| format!("{x} + {y} - 2"));
    if with_u {
        prop_oneof![
            constant,
            decimal,
            arith,
            (0i64..4).prop_map(|d| format!("u.v - {d}"))
        ]
        .boxed()
    } else {
        prop_oneof![constant, decimal, arith].boxed()
    }
}

fn predicate(with_u: bool) -> impl Strategy<Value = String> {
    let col = prop_oneof![Just("t.a"), Just("t.b"), Just("t.c")];
    let op = prop_oneof![
        Just("="),
        Just("<"),
        Just("<="),
        Just(">"),
        Just(">="),
        Just("<>")
    ];
    let leaf = prop_oneof![
        (col.clone(), op, value(with_u)).prop_map(|(c, o, v)| format!("{c} {o} {v}")),
        (col.clone(), value(with_u), value(with_u))
            .prop_map(|(c, x, y)| format!("{c} BETWEEN {x} AND {y}")),
        (col.clone(), prop::collection::vec(value(with_u), 1..4))
            .prop_map(|(c, l)| format!("{c} IN ({})", l.join(", "))),
        col.clone().prop_map(|c| format!("{c} IS NULL")),
        col.prop_map(|c| format!("{c} IS NOT NULL")),
        prop::collection::vec((0i64..12, 0i64..12), 1..3).prop_map(|l| {
            let rows: Vec<String> = l.iter().map(|(x, y)| format!("({x}, {y})")).collect();
            format!("(t.b, t.c) IN ({})", rows.join(", "))
        }),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} AND {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} OR {y})")),
            inner.prop_map(|x| format!("NOT ({x})")),
        ]
    })
}

fn data() -> impl Strategy<Value = Vec<(i64, i64, Option<i64>)>> {
    prop::collection::vec((0i64..12, prop::option::weighted(0.8, 0i64..12)), 0..80).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(a, (b, c))| (a as i64, b, c))
            .collect()
    })
}

/// Every row of `t` (with `u`'s row) that satisfies the plan's own conditions, by brute force.
fn brute_force(catalog: &MemCatalog, conds: &[Expr], with_u: bool) -> Vec<Vec<Row>> {
    let u = catalog.rows("u").unwrap()[0].clone();
    let mut out = Vec::new();
    for row in catalog.rows("t").unwrap() {
        let slots: Vec<Option<&Row>> = if with_u {
            vec![Some(row), Some(&u)]
        } else {
            vec![Some(row)]
        };
        let env = Env::new(&slots, &[]);
        if conds.iter().all(|c| c.is_true(env).unwrap()) {
            out.push(slots.iter().map(|r| r.unwrap().clone()).collect());
        }
    }
    out
}

fn check(
    rows: &[(i64, i64, Option<i64>)],
    v: i64,
    pred: &str,
    with_u: bool,
) -> Result<(), TestCaseError> {
    let catalog = catalog(rows, v);
    let sql = if with_u {
        format!("SELECT * FROM t, u WHERE u.k = 1 AND ({pred})")
    } else {
        format!("SELECT * FROM t WHERE {pred}")
    };
    for mode in [PlannerMode::Fixed, PlannerMode::Legacy8027] {
        let plan = Planner::new(&catalog).mode(mode).plan(&sql, &[]).unwrap();
        let run = execute(&plan, &catalog, &[]).unwrap();
        let mut got = run.rows.clone();
        got.sort();
        let mut want = brute_force(&catalog, &plan.select.conds, with_u);
        want.sort();
        prop_assert_eq!(
            &got,
            &want,
            "{} in {:?}: {:?}",
            sql,
            mode,
            plan.tables.iter().map(|t| &t.access).collect::<Vec<_>>()
        );
        prop_assert!(run.examined[0] >= want.len() as u64);
        // LIMIT pushed into the plan: the same rows, cut at the limit, whatever the
        // conditions drop after the limited read.
        for wanted in [0, 1, 3] {
            let first = execute_first(&plan, &catalog, &[], Some(wanted)).unwrap();
            let cut: Vec<_> = run.rows.iter().take(wanted).cloned().collect();
            prop_assert_eq!(&first.rows, &cut, "{} LIMIT {} in {:?}", sql, wanted, mode);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_range_never_loses_a_row(rows in data(), pred in predicate(false)) {
        check(&rows, 0, &pred, false)?;
    }

    #[test]
    fn an_index_read_for_order_by_limit_keeps_the_answer(
        rows in data(),
        pred in predicate(false),
        limit in 0usize..6,
    ) {
        let catalog = catalog(&rows, 0);
        // k_c (c, then the primary key a) gives the order, and does not hold b.
        let sql = format!("SELECT * FROM t WHERE {pred} ORDER BY c, a");
        let by_c_a = |x: &Vec<Row>, y: &Vec<Row>| (&x[0][2], &x[0][0]).cmp(&(&y[0][2], &y[0][0]));
        let plan = Planner::new(&catalog).limit(Some(limit)).plan(&sql, &[]).unwrap();
        let wanted = Some(limit).filter(|_| plan.ordered_by_index && !plan.backward);
        let mut got = execute_first(&plan, &catalog, &[], wanted).unwrap().rows;
        if !plan.ordered_by_index {
            got.sort_by(by_c_a);
        }
        got.truncate(limit);
        let mut want = brute_force(&catalog, &plan.select.conds, false);
        want.sort_by(by_c_a);
        want.truncate(limit);
        prop_assert_eq!(&got, &want, "{} LIMIT {}: {:?}", sql, limit, plan.tables[0].access);
    }

    #[test]
    fn nor_does_one_bounded_by_a_const_table(rows in data(), v in 0i64..12, pred in predicate(true)) {
        check(&rows, v, &pred, true)?;
    }
}

#[test]
fn ranges_really_narrow_the_read() {
    let rows: Vec<(i64, i64, Option<i64>)> = (0..1000).map(|a| (a, a % 10, Some(a % 7))).collect();
    let catalog = catalog(&rows, 500);
    let plan = Planner::new(&catalog)
        .plan(
            "SELECT * FROM t, u WHERE u.k = 1 AND t.a >= u.v - 10 AND t.a < u.v",
            &[],
        )
        .unwrap();
    let run = execute(&plan, &catalog, &[]).unwrap();
    assert_eq!(run.rows.len(), 10);
    assert_eq!(run.examined[0], 10);
}
