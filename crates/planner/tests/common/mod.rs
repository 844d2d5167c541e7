//! TPC-C's initial database (`waterline-tpcc-data`, the rows `waterline tpcc` loads) in a
//! `MemCatalog`, at any scale: the nine tables with their keys and indexes, the spec's
//! cardinalities per district (orders = customers, 5 to 15 order lines each, the last 30%
//! undelivered, in NEW_ORDER).

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;

use waterline_planner::MemCatalog;
use waterline_tpcc_data::{Generator, TABLES};
use waterline_types::Row;

pub use waterline_tpcc_data::Scale;

/// The spec's per-district cardinalities, one warehouse, fewer items.
pub const STANDARD_DISTRICT: Scale = Scale {
    warehouses: 1,
    customers: 3000,
    items: 1000,
};

/// Small enough for scenario files.
pub const SMALL: Scale = Scale {
    warehouses: 2,
    customers: 300,
    items: 1000,
};

/// The data set, from a fixed seed.
pub fn tpcc(scale: Scale) -> MemCatalog {
    let mut rows: HashMap<&'static str, Vec<Row>> = HashMap::new();
    let generator = Generator {
        scale,
        seed: 20261121,
    };
    generator
        .all(&mut |table, row| {
            rows.entry(table).or_default().push(row);
            Ok::<(), Infallible>(())
        })
        .unwrap_or_else(|never| match never {});
    let mut catalog = MemCatalog::new("tpcc");
    for def in TABLES {
        let schema = def.schema().expect("TPC-C's tables are valid");
        let loaded = rows.remove(def.name).unwrap_or_default();
        catalog
            .load(schema, loaded)
            .expect("the rows fit their table");
    }
    catalog
}
