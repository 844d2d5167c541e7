//! Scenario files: one query shape per file in `tests/scenarios/`, the query and its expected
//! EXPLAIN (or trace, or what the plan reads) side by side, in goldenscript form:
//!
//! ```text
//! # comment
//! explain "SELECT * FROM warehouse WHERE w_id = 1"
//! ---
//! +----+-------------+-----------+-------+ ...
//! ```
//!
//! Commands (`mode=legacy` switches to `PlannerMode::Legacy8027`, `params=1,2` binds `?`,
//! `limit=N` says the caller wants only the first N rows, as the server does for a LIMIT):
//! - `explain [mode=..] [params=..] "SQL"`: the EXPLAIN table;
//! - `trace [mode=..] [params=..] "SQL"`: the optimizer trace;
//! - `tree [mode=..] [params=..] "SQL"`: the join's iterator tree (EXPLAIN FORMAT=TREE);
//! - `run [mode=..] [params=..] [limit=..] "SQL"`: rows returned and rows read per table, by
//!   the reference executor, with the estimate beside each; with `limit`, it stops there if
//!   the plan gives the rows in order.
//!
//! To regenerate after a deliberate change, then review the diff:
//! `UPDATE_GOLDENFILES=1 cargo test -p waterline-planner --test scenarios && git diff crates/planner/tests/scenarios`
//!
//! The data: TPC-C's initial database from `waterline-tpcc-data` at `SMALL` (2 warehouses,
//! 300 orders per district), and `t1` (`a` primary key, index `k_bc (b, c)`, `d` nullable and
//! unindexed), 1,000 rows.

mod common;

use std::error::Error;
use std::fmt::Write as _;
use std::sync::OnceLock;

use waterline_planner::exec::execute_first;
use waterline_planner::explain::{explain, table};
use waterline_planner::{MemCatalog, Planner, PlannerMode};
use waterline_types::{Column, ColumnType, TableSchema, Value};

use common::{SMALL, tpcc};

fn catalog() -> &'static MemCatalog {
    static CATALOG: OnceLock<MemCatalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut catalog = tpcc(SMALL);
        let t1 = TableSchema::new(
            "t1",
            vec![
                Column::new("a", ColumnType::Int),
                Column::new("b", ColumnType::Int),
                Column::new("c", ColumnType::Int),
                Column::nullable("d", ColumnType::Varchar(10)),
            ],
        )
        .primary_key(&["a"])
        .unwrap()
        .index("k_bc", &["b", "c"], false)
        .unwrap();
        let rows = (0..1000)
            .map(|a: i64| {
                let d = if a % 10 == 0 {
                    Value::Null
                } else {
                    Value::from(format!("v{}", a % 50))
                };
                vec![Value::Int(a), Value::Int(a % 20), Value::Int(a % 7), d]
            })
            .collect();
        catalog.load(t1, rows).unwrap();
        catalog
    })
}

struct Runner;

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        _: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let mut args = command.consume_args();
        let mode: PlannerMode = args.take_key("mode").unwrap_or("fixed").parse()?;
        let params: Vec<Value> = match args.take_key("params") {
            Some(list) => list
                .split(',')
                .map(|p| p.trim().parse::<i64>().map(Value::Int))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let limit: Option<usize> = args.take_key("limit").map(str::parse).transpose()?;
        let sql = args.next_pos().ok_or("missing the SQL")?;
        args.reject_next()?;
        let catalog = catalog();
        let planner = Planner::new(catalog)
            .mode(mode)
            .trace(command.name == "trace")
            .limit(limit);
        let plan = planner
            .plan(sql, &params)
            .map_err(|e| format!("ERROR {} ({}): {e}", e.code(), e.sqlstate()))?;
        let mut out = String::new();
        match command.name.as_str() {
            "explain" => out.push_str(&table(&explain(&plan, catalog))),
            "trace" => out.push_str(&plan.trace.to_string()),
            "tree" => out.push_str(&waterline_planner::explain::tree(&plan).render()),
            "run" => {
                let wanted = limit.filter(|_| plan.ordered_by_index && !plan.backward);
                let run = execute_first(&plan, catalog, &params, wanted)?;
                writeln!(out, "returned {} rows", run.rows.len())?;
                for tp in &plan.tables {
                    let name = &plan.select.tables[tp.table].alias;
                    writeln!(
                        out,
                        "{name}: read {}, estimated {} ({})",
                        run.examined[tp.table],
                        tp.rows,
                        tp.access.kind()
                    )?;
                }
            }
            other => return Err(format!("unknown command {other}").into()),
        }
        Ok(out)
    }
}

#[test]
fn scenarios() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 12, "a dozen query shapes at least");
    let mut failed = Vec::new();
    for file in &files {
        if let Err(e) = goldenscript::run(&mut Runner, file) {
            failed.push(format!("{}: {e}", file.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
