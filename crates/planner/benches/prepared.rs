//! Planning a statement bound once, as every execution of a prepared statement does
//! (COM_STMT_EXECUTE over the protocol: names are resolved at PREPARE, the plan is made at
//! each EXECUTE for its values, as in MySQL). Three of TPC-C's shapes, over an in-memory
//! catalog at the spec's scale per district, with the fixed planner:
//!
//! * `prepared/point`: a CUSTOMER row by its primary key (Payment, OrderStatus);
//! * `prepared/by_name`: CUSTOMER rows by last name through the secondary index, ordered
//!   (the 60% of Payments and OrderStatuses that name the customer);
//! * `prepared/stock_level_join`: StockLevel's join of DISTRICT and ORDER_LINE.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use sqlparser::ast::Statement;
use waterline_planner::Planner;
use waterline_planner::bind::bind_query;
use waterline_types::Value;

const STATEMENTS: [(&str, &str); 3] = [
    (
        "point",
        "SELECT c_first, c_last, c_balance FROM customer \
         WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    ),
    (
        "by_name",
        "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? \
         ORDER BY c_first",
    ),
    (
        "stock_level_join",
        "SELECT ol_i_id FROM district JOIN order_line \
         ON ol_w_id = d_w_id AND ol_d_id = d_id \
         AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id \
         WHERE d_w_id = ? AND d_id = ?",
    ),
];

fn prepared(c: &mut Criterion) {
    let catalog = common::tpcc(common::STANDARD_DISTRICT);
    let planner = Planner::new(&catalog);
    let mut group = c.benchmark_group("prepared");
    for (name, sql) in STATEMENTS {
        let Statement::Query(query) = waterline_planner::parse(sql).unwrap().remove(0) else {
            panic!("{name} is not a query");
        };
        let bound = Arc::new(bind_query(&catalog, &query, None).unwrap());
        let params: Vec<Value> = match name {
            "by_name" => vec![1.into(), 4.into(), "BARBARBAR".into()],
            "point" => vec![1.into(), 4.into(), 17.into()],
            _ => vec![1.into(), 4.into()],
        };
        // Every plan is a real one: the point select reads its const row.
        planner.optimize(Arc::clone(&bound), &params).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| planner.optimize(Arc::clone(&bound), &params).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, prepared);
criterion_main!(benches);
