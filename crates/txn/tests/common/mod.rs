//! Helpers the integration tests share.
#![allow(dead_code)] // each test binary uses its own part

/// The project's one deterministic generator, for test workloads and kill times.
#[allow(unused_imports)]
pub use waterline_txn::Rng;

/// A fresh directory named `waterline-<what>-...`, removed when dropped.
pub fn temp_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("waterline-{what}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// `account(id INT PRIMARY KEY, balance BIGINT)`, the tests' bank accounts.
pub fn account_schema() -> waterline_txn::TableSchema {
    use waterline_txn::{Column, ColumnType, TableSchema};
    TableSchema::new(
        "account",
        vec![
            Column::new("id", ColumnType::Int),
            Column::new("balance", ColumnType::BigInt),
        ],
    )
    .primary_key(&["id"])
    .expect("the key column exists")
}
