//! A row whose indexed value never changes never leaves the secondary index, however often
//! other columns of it are updated: a scan on that value always finds it, under every
//! isolation level, while purge runs.
//!
//! Found by `waterline lab readview`: TPC-C's Payment by last name, under READ COMMITTED,
//! once every few seconds found no customer. Each update re-added the row's (unchanged)
//! index entry with the skip set's `insert`, which removes an existing entry before it puts
//! the new one in; a scan passing in between missed the row.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use waterline_txn::copy_keyed_row;

use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, KeyRange, ReadOptions, TableSchema,
};

const ROWS: i64 = 8;
const RUN_FOR: Duration = Duration::from_millis(600);

#[test]
fn updates_of_other_columns_never_hide_a_row_from_an_index_scan() {
    let engine = Engine::open(EngineConfig {
        purge_interval: Some(Duration::from_millis(1)),
        ..EngineConfig::default()
    })
    .unwrap();
    let schema = TableSchema::new(
        "t",
        vec![
            Column::new("id", ColumnType::Int),
            Column::new("name", ColumnType::Varchar(8)),
            Column::new("n", ColumnType::Int),
        ],
    )
    .primary_key(&["id"])
    .unwrap()
    .index("by_name", &["name"], false)
    .unwrap();
    let table = engine.create_table(schema).unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..ROWS {
        trx.insert(&table, vec![id.into(), "same".into(), 0.into()])
            .unwrap();
    }
    trx.commit().unwrap();

    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + RUN_FOR;
    /// Stops the writer when the reader ends, by a failed assertion too.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0i64;
            while !stop.load(Ordering::Relaxed) {
                let mut trx = engine.begin_with(Isolation::ReadCommitted);
                let bump =
                    |row: &[waterline_txn::Value]| vec![row[0].clone(), row[1].clone(), (i).into()];
                assert!(trx.update_with(&table, Key::one(i % ROWS), bump).unwrap());
                trx.commit().unwrap();
                i += 1;
            }
        });
        let _stop = StopOnDrop(&stop);
        for isolation in [Isolation::ReadCommitted, Isolation::RepeatableRead]
            .into_iter()
            .cycle()
        {
            if Instant::now() >= deadline {
                break;
            }
            let mut trx = engine.begin_with(isolation);
            let prefix = KeyRange::Prefix(Key::one("same"));
            let rows = trx
                .scan_with(
                    &table,
                    prefix,
                    ReadOptions::default().on_index("by_name"),
                    copy_keyed_row,
                )
                .unwrap();
            assert_eq!(
                rows.len() as i64,
                ROWS,
                "{isolation:?}: a row left the index"
            );
            trx.commit().unwrap();
        }
    });
}
