//! The test that would have caught MySQL 8.0.27's regression (book 8.1.1): TPC-C StockLevel's
//! join of district and order_line, in BenchmarkSQL's form, at the spec's scale per district
//! (3,000 orders of 5 to 15 lines).
//!
//! - `Fixed` estimates the rows of order_line within 2x of the rows the plan really reads
//!   (about 200: the lines of the district's last 20 orders).
//! - `Legacy8027` estimates every order line of the district: at least 100x more.
//! - The trace shows why: `param_comp` is 16140901064495857660 in one and
//!   16140901064495857661 in the other, the two numbers of the book's Figures 8-8 and 8-9.

#![allow(clippy::print_stdout)] // the EXPLAIN of both plans, shown with --nocapture

mod common;

use waterline_planner::exec::execute;
use waterline_planner::explain::{explain, table};
use waterline_planner::{MemCatalog, Plan, Planner, PlannerMode, TableMap};
use waterline_types::Value;

use common::{STANDARD_DISTRICT, Scale, tpcc};

/// BenchmarkSQL's StockLevel join (the inner part of its `stmtStockLevelSelectLow`).
const STOCK_LEVEL_JOIN: &str = "SELECT ol_i_id FROM district JOIN order_line \
     ON ol_w_id = d_w_id AND ol_d_id = d_id \
     AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id \
     WHERE d_w_id = ? AND d_id = ?";

/// The same query as a comma join, as older BenchmarkSQL versions write it.
const STOCK_LEVEL_COMMA: &str = "SELECT ol_i_id FROM district, order_line \
     WHERE ol_w_id = d_w_id AND ol_d_id = d_id \
     AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id \
     AND d_w_id = ? AND d_id = ?";

const ORDER_LINE: usize = 1;

fn plan(catalog: &MemCatalog, mode: PlannerMode, sql: &str, district: i64) -> Plan {
    Planner::new(catalog)
        .mode(mode)
        .trace(true)
        .plan(sql, &[Value::Int(1), Value::Int(district)])
        .unwrap()
}

fn lines_of_district(catalog: &MemCatalog, district: i64) -> u64 {
    let rows = catalog.rows("order_line").unwrap();
    rows.iter()
        .filter(|r| r[0] == Value::Int(1) && r[1] == Value::Int(district))
        .count() as u64
}

#[test]
fn stock_level_join_keeps_its_range_only_when_fixed() {
    let catalog = tpcc(STANDARD_DISTRICT);
    for sql in [STOCK_LEVEL_JOIN, STOCK_LEVEL_COMMA] {
        for district in [1, 7] {
            let params = [Value::Int(1), Value::Int(district)];
            let fixed = plan(&catalog, PlannerMode::Fixed, sql, district);
            let legacy = plan(&catalog, PlannerMode::Legacy8027, sql, district);
            let run_fixed = execute(&fixed, &catalog, &params).unwrap();
            let run_legacy = execute(&legacy, &catalog, &params).unwrap();
            let read = run_fixed.examined[ORDER_LINE];
            let estimate_fixed = fixed.table(ORDER_LINE).unwrap().rows;
            let estimate_legacy = legacy.table(ORDER_LINE).unwrap().rows;
            let all = lines_of_district(&catalog, district);
            println!(
                "district {district}: read {read}, fixed estimates {estimate_fixed}, legacy {estimate_legacy} (district has {all})\n{}{}",
                table(&explain(&fixed, &catalog)),
                table(&explain(&legacy, &catalog))
            );

            // About 200 rows are really read: 20 orders of 5 to 15 lines.
            assert!((100..=300).contains(&read), "fixed plan read {read}");
            assert!(
                estimate_fixed * 2 >= read && estimate_fixed <= read * 2,
                "{estimate_fixed} vs {read}"
            );
            // Legacy estimates the whole district, at least 100x the rows needed.
            assert_eq!(estimate_legacy, all);
            assert!(estimate_legacy >= 100 * read, "{estimate_legacy} vs {read}");
            // And reads it all, for the same answer.
            assert_eq!(run_legacy.examined[ORDER_LINE], all);
            assert_eq!(run_fixed.rows, run_legacy.rows);
            assert_eq!(run_fixed.rows.len() as u64, read);

            let fixed_rows = explain(&fixed, &catalog);
            assert_eq!(fixed_rows[0].get("type"), Some("const"));
            assert_eq!(fixed_rows[1].get("type"), Some("range"));
            assert_eq!(fixed_rows[1].get("key_len"), Some("12"));
            let legacy_rows = explain(&legacy, &catalog);
            assert_eq!(legacy_rows[1].get("type"), Some("ref"));
            assert_eq!(legacy_rows[1].get("key_len"), Some("8"));
            assert_eq!(legacy_rows[1].get("ref"), Some("const,const"));
        }
    }
}

#[test]
fn trace_shows_the_books_param_comp_values() {
    let catalog = tpcc(Scale {
        customers: 100,
        ..STANDARD_DISTRICT
    });
    let fixed = plan(&catalog, PlannerMode::Fixed, STOCK_LEVEL_JOIN, 1);
    let legacy = plan(&catalog, PlannerMode::Legacy8027, STOCK_LEVEL_JOIN, 1);
    let on_next_o_id = |p: &Plan| {
        p.trace
            .param_comps
            .iter()
            .find(|c| c.table == "order_line" && c.predicate.starts_with("order_line.ol_o_id >= "))
            .cloned()
            .unwrap()
    };
    let (f, l) = (on_next_o_id(&fixed), on_next_o_id(&legacy));
    assert_eq!(f.param_comp, TableMap(16140901064495857660));
    assert_eq!(l.param_comp, TableMap(16140901064495857661));
    assert!(f.usable && !l.usable);
    // The two differ in bit 0: the district, a const table.
    assert_eq!(f.param_comp.0 ^ l.param_comp.0, TableMap::table(0).0);
    let text = legacy.trace.to_string();
    assert!(text.contains("param_comp        = 0b11011111_11111111_11111111_11111111_11111111_11111111_11111111_11111101 (16140901064495857661)"), "{text}");
    assert!(text.contains("value uses a table in param_comp"), "{text}");
    let text = fixed.trace.to_string();
    assert!(
        text.contains("(16140901064495857660)") && text.contains("value = 81"),
        "{text}"
    );
}
