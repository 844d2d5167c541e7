//! A deterministic TPC-C-shaped data set in a `MemCatalog`, at any scale: the tables and
//! indexes StockLevel, OrderStatus, Delivery and friends read, with the spec's cardinalities
//! per district (orders = customers, 5 to 15 order lines each, the last 30% undelivered).

#![allow(dead_code)]

use waterline_planner::MemCatalog;
use waterline_types::{Column, ColumnType, DateTime, Decimal, Rng, Row, TableSchema, Value};

/// How big the data set is.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Warehouses.
    pub warehouses: i64,
    /// Districts per warehouse (10 in the spec).
    pub districts: i64,
    /// Customers, and orders, per district (3,000 in the spec).
    pub customers: i64,
    /// Items (100,000 in the spec).
    pub items: i64,
}

impl Scale {
    /// The spec's per-district cardinalities, one warehouse, fewer items.
    pub const STANDARD_DISTRICT: Scale = Scale {
        warehouses: 1,
        districts: 10,
        customers: 3000,
        items: 1000,
    };
    /// Small enough for scenario files.
    pub const SMALL: Scale = Scale {
        warehouses: 2,
        districts: 10,
        customers: 300,
        items: 1000,
    };
}

fn int(name: &str) -> Column {
    Column::new(name, ColumnType::Int)
}
fn money(name: &str) -> Column {
    Column::new(
        name,
        ColumnType::Decimal {
            precision: 12,
            scale: 2,
        },
    )
}
fn text(name: &str, n: u32) -> Column {
    Column::new(name, ColumnType::Varchar(n))
}
fn cents(n: i64) -> Value {
    Value::Decimal(Decimal::new(n.into(), 2).unwrap())
}

/// TPC-C's last names: three syllables from the digits of `n` (0..=999).
pub fn last_name(n: i64) -> String {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    let n = n as usize;
    format!(
        "{}{}{}",
        SYLLABLES[n / 100],
        SYLLABLES[n / 10 % 10],
        SYLLABLES[n % 10]
    )
}

/// The data set.
pub fn tpcc(scale: Scale) -> MemCatalog {
    let mut rng = Rng::new(20261121, 0);
    let mut catalog = MemCatalog::new("tpcc");
    let schema = |name: &str, cols: Vec<Column>, pk: &[&str]| {
        TableSchema::new(name, cols).primary_key(pk).unwrap()
    };
    let entry: Value = DateTime::from_ymd_hms(2026, 11, 21, 8, 0, 0)
        .unwrap()
        .into();

    let mut warehouses: Vec<Row> = Vec::new();
    let mut districts: Vec<Row> = Vec::new();
    let mut customers: Vec<Row> = Vec::new();
    let mut orders: Vec<Row> = Vec::new();
    let mut new_orders: Vec<Row> = Vec::new();
    let mut lines: Vec<Row> = Vec::new();
    let mut stock: Vec<Row> = Vec::new();
    let c = scale.customers;
    let undelivered = c - c * 3 / 10;
    for w in 1..=scale.warehouses {
        warehouses.push(vec![w.into(), format!("W{w}").into(), cents(30_000_000)]);
        for i in 1..=scale.items {
            stock.push(vec![w.into(), i.into(), rng.uniform(10, 100).into()]);
        }
        for d in 1..=scale.districts {
            districts.push(vec![
                w.into(),
                d.into(),
                format!("D{d}").into(),
                cents(3_000_000),
                (c + 1).into(),
            ]);
            for id in 1..=c {
                let last = last_name(if id <= 1000 {
                    id - 1
                } else {
                    rng.uniform(0, 999)
                });
                customers.push(vec![
                    w.into(),
                    d.into(),
                    id.into(),
                    last.into(),
                    format!("F{id}").into(),
                    cents(-1000),
                ]);
            }
            for o in 1..=c {
                let count = rng.uniform(5, 15);
                let delivered = o < undelivered;
                let carrier = if delivered {
                    Value::Int(rng.uniform(1, 10))
                } else {
                    Value::Null
                };
                orders.push(vec![
                    w.into(),
                    d.into(),
                    o.into(),
                    rng.uniform(1, c).into(),
                    entry.clone(),
                    carrier,
                    count.into(),
                ]);
                if !delivered {
                    new_orders.push(vec![w.into(), d.into(), o.into()]);
                }
                for n in 1..=count {
                    let amount = if delivered {
                        0
                    } else {
                        rng.uniform(1, 999_999)
                    };
                    let delivery = if delivered {
                        entry.clone()
                    } else {
                        Value::Null
                    };
                    lines.push(vec![
                        w.into(),
                        d.into(),
                        o.into(),
                        n.into(),
                        rng.uniform(1, scale.items).into(),
                        5.into(),
                        cents(amount),
                        delivery,
                    ]);
                }
            }
        }
    }
    let items: Vec<Row> = (1..=scale.items)
        .map(|i| {
            vec![
                i.into(),
                format!("item-{i}").into(),
                cents(rng.uniform(100, 10_000)),
            ]
        })
        .collect();

    let load =
        |catalog: &mut MemCatalog, s: TableSchema, rows: Vec<Row>| catalog.load(s, rows).unwrap();
    load(
        &mut catalog,
        schema(
            "warehouse",
            vec![int("w_id"), text("w_name", 10), money("w_ytd")],
            &["w_id"],
        ),
        warehouses,
    );
    load(
        &mut catalog,
        schema(
            "district",
            vec![
                int("d_w_id"),
                int("d_id"),
                text("d_name", 10),
                money("d_ytd"),
                int("d_next_o_id"),
            ],
            &["d_w_id", "d_id"],
        ),
        districts,
    );
    let customer = schema(
        "customer",
        vec![
            int("c_w_id"),
            int("c_d_id"),
            int("c_id"),
            text("c_last", 16),
            text("c_first", 16),
            money("c_balance"),
        ],
        &["c_w_id", "c_d_id", "c_id"],
    )
    .index(
        "idx_customer_name",
        &["c_w_id", "c_d_id", "c_last", "c_first"],
        false,
    )
    .unwrap();
    load(&mut catalog, customer, customers);
    let oorder = schema(
        "orders",
        vec![
            int("o_w_id"),
            int("o_d_id"),
            int("o_id"),
            int("o_c_id"),
            Column::new("o_entry_d", ColumnType::DateTime(0)),
            Column::nullable("o_carrier_id", ColumnType::Int),
            int("o_ol_cnt"),
        ],
        &["o_w_id", "o_d_id", "o_id"],
    )
    .index(
        "idx_orders_customer",
        &["o_w_id", "o_d_id", "o_c_id", "o_id"],
        true,
    )
    .unwrap();
    load(&mut catalog, oorder, orders);
    load(
        &mut catalog,
        schema(
            "new_order",
            vec![int("no_w_id"), int("no_d_id"), int("no_o_id")],
            &["no_w_id", "no_d_id", "no_o_id"],
        ),
        new_orders,
    );
    load(
        &mut catalog,
        schema(
            "order_line",
            vec![
                int("ol_w_id"),
                int("ol_d_id"),
                int("ol_o_id"),
                int("ol_number"),
                int("ol_i_id"),
                int("ol_quantity"),
                Column::new(
                    "ol_amount",
                    ColumnType::Decimal {
                        precision: 6,
                        scale: 2,
                    },
                ),
                Column::nullable("ol_delivery_d", ColumnType::DateTime(0)),
            ],
            &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
        ),
        lines,
    );
    load(
        &mut catalog,
        schema(
            "item",
            vec![
                int("i_id"),
                text("i_name", 24),
                Column::new(
                    "i_price",
                    ColumnType::Decimal {
                        precision: 5,
                        scale: 2,
                    },
                ),
            ],
            &["i_id"],
        ),
        items,
    );
    load(
        &mut catalog,
        schema(
            "stock",
            vec![int("s_w_id"), int("s_i_id"), int("s_quantity")],
            &["s_w_id", "s_i_id"],
        ),
        stock,
    );
    catalog
}
