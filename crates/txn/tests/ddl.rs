//! CREATE INDEX on a populated table and DROP TABLE, in memory and across restarts (log
//! replay and checkpoint image).

mod common;

use waterline_txn::copy_keyed_row;
use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, KeyRange, ReadOptions, Table,
    TableSchema, TxnError, Value,
};

fn schema(name: &str) -> TableSchema {
    TableSchema::new(
        name,
        vec![
            Column::new("id", ColumnType::Int),
            Column::new("k", ColumnType::Int),
        ],
    )
    .primary_key(&["id"])
    .unwrap()
}

fn fill(engine: &Engine, table: &Table, n: i64) {
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..n {
        trx.insert(table, vec![Value::Int(id), Value::Int(id % 10)])
            .unwrap();
    }
    trx.commit().unwrap();
}

fn by_k(engine: &Engine, table: &str, k: i64) -> Vec<i64> {
    let table = engine.table(table).unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    let rows = trx
        .scan_with(
            &table,
            KeyRange::Prefix(Key::one(k)),
            ReadOptions::default().on_index("k_1"),
            copy_keyed_row,
        )
        .unwrap();
    let mut ids: Vec<i64> = rows.iter().map(|(_, r)| r[0].as_int().unwrap()).collect();
    ids.sort();
    ids
}

#[test]
fn create_index_on_rows_already_there_and_on_writes_after() {
    let engine = Engine::open(EngineConfig::default()).unwrap();
    let old = engine.create_table(schema("t")).unwrap();
    fill(&engine, &old, 100);
    // A transaction that began before the index, holding the old handle.
    let mut early = engine.begin_with(Isolation::ReadCommitted);
    early
        .update(&old, Key::one(5), vec![Value::Int(5), Value::Int(42)])
        .unwrap();

    let new = engine.create_index("t", "k_1", &["k"], false).unwrap();
    assert_eq!(new.schema().indexes.len(), 1);
    assert_eq!(
        by_k(&engine, "t", 3),
        (0..100).filter(|i| i % 10 == 3).collect::<Vec<_>>()
    );
    // A write through the old handle after the index exists is in the index.
    early
        .insert(&old, vec![Value::Int(500), Value::Int(3)])
        .unwrap();
    early.commit().unwrap();
    assert_eq!(by_k(&engine, "t", 42), [5]);
    assert!(by_k(&engine, "t", 3).contains(&500));
    assert!(
        !by_k(&engine, "t", 5).contains(&5),
        "the index rechecks the visible version"
    );

    // Unique: refused while two rows share a value; a duplicate name is refused too.
    assert!(matches!(
        engine.create_index("t", "k_u", &["k"], true),
        Err(TxnError::DuplicateKey { .. })
    ));
    assert!(engine.create_index("t", "k_1", &["id"], false).is_err());
    let u = engine.create_index("t", "id_u", &["id"], true).unwrap();
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    assert!(matches!(
        trx.insert(&u, vec![Value::Int(7), Value::Int(0)]),
        Err(TxnError::DuplicateKey { .. })
    ));
}

#[test]
fn drop_table_frees_the_name() {
    let engine = Engine::open(EngineConfig::default()).unwrap();
    let t = engine.create_table(schema("t")).unwrap();
    fill(&engine, &t, 10);
    engine.drop_table("t").unwrap();
    assert!(matches!(engine.table("t"), Err(TxnError::NoSuchTable(_))));
    assert!(engine.tables().is_empty());
    assert!(matches!(
        engine.drop_table("t"),
        Err(TxnError::NoSuchTable(_))
    ));
    let again = engine.create_table(schema("t")).unwrap();
    assert_ne!(again.id(), t.id());
    let mut trx = engine.begin_with(Isolation::ReadCommitted);
    assert!(trx.scan(&again, KeyRange::All).unwrap().is_empty());
}

#[test]
fn ddl_survives_restart_by_log_and_by_checkpoint() {
    for checkpoint in [false, true] {
        let dir = common::temp_dir("ddl");
        {
            let (engine, _) = Engine::open_dir(dir.path(), EngineConfig::default()).unwrap();
            let gone = engine.create_table(schema("gone")).unwrap();
            fill(&engine, &gone, 5);
            let t = engine.create_table(schema("t")).unwrap();
            fill(&engine, &t, 50);
            engine.create_index("t", "k_1", &["k"], false).unwrap();
            engine
                .set_table_attributes("gone", "dropped with it")
                .unwrap();
            engine.set_table_attributes("t", "first").unwrap();
            engine.set_table_attributes("t", "second").unwrap();
            engine.drop_table("gone").unwrap();
            let after = engine.create_table(schema("after")).unwrap();
            fill(&engine, &after, 3);
            if checkpoint {
                engine.checkpoint().unwrap();
            }
            let t = engine.table("t").unwrap();
            let mut trx = engine.begin_with(Isolation::ReadCommitted);
            trx.insert(&t, vec![Value::Int(1000), Value::Int(7)])
                .unwrap();
            trx.commit().unwrap();
        }
        let (engine, recovery) = Engine::open_dir(dir.path(), EngineConfig::default()).unwrap();
        let names: Vec<String> = engine
            .tables()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["t", "after"], "checkpoint {checkpoint}: {recovery}");
        assert_eq!(engine.table("t").unwrap().schema().indexes.len(), 1);
        let attributes = engine.table_attributes(&engine.table("t").unwrap());
        assert_eq!(attributes.as_deref(), Some("second"));
        assert_eq!(
            engine.table_attributes(&engine.table("after").unwrap()),
            None
        );
        let sevens = by_k(&engine, "t", 7);
        assert_eq!(sevens, [7, 17, 27, 37, 47, 1000]);
        let mut trx = engine.begin_with(Isolation::ReadCommitted);
        assert_eq!(
            trx.scan(&engine.table("after").unwrap(), KeyRange::All)
                .unwrap()
                .len(),
            3
        );
    }
}

/// For a restart from the log and one from a checkpoint: runs `before` on a new durable
/// engine, restarts it (after a checkpoint, the second time), and runs `after` on the
/// recovered engine with the names of its tables.
fn across_restarts(before: impl Fn(&Engine), after: impl Fn(&Engine, Vec<String>)) {
    for checkpoint in [false, true] {
        let dir = common::temp_dir("restart");
        {
            let (engine, _) = Engine::open_dir(dir.path(), EngineConfig::default()).unwrap();
            before(&engine);
            if checkpoint {
                engine.checkpoint().unwrap();
            }
        }
        let (engine, _) = Engine::open_dir(dir.path(), EngineConfig::default()).unwrap();
        let names = (engine.tables().iter())
            .map(|t| t.name().to_owned())
            .collect();
        after(&engine, names);
    }
}

/// RENAME TABLE and the engine's own attributes come back after a restart, from the log or
/// from a checkpoint; a renamed table keeps its rows, index and attributes, and a write
/// through the handle taken before the rename lands in the same table.
#[test]
fn renames_and_engine_attributes_are_recovered() {
    across_restarts(
        |engine| {
            let t = engine.create_table(schema("t")).unwrap();
            fill(engine, &t, 20);
            engine.create_index("t", "k_1", &["k"], false).unwrap();
            engine.set_table_attributes("t", "kept").unwrap();
            engine.create_table(schema("other")).unwrap();
            assert!(matches!(
                engine.rename_table("t", "OTHER"),
                Err(waterline_txn::TxnError::TableExists(_))
            ));
            let old = engine.table("t").unwrap();
            engine.rename_table("t", "db.t2").unwrap();
            assert!(engine.table("t").is_err());
            let mut trx = engine.begin_with(Isolation::ReadCommitted);
            trx.insert(&old, vec![Value::Int(500), Value::Int(7)])
                .unwrap();
            trx.commit().unwrap();
            engine.set_attributes("first").unwrap();
            engine.set_attributes("[\"db\"]").unwrap();
        },
        |engine, names| {
            assert_eq!(names, ["db.t2", "other"]);
            let t2 = engine.table("db.t2").unwrap();
            assert_eq!(engine.table_attributes(&t2).as_deref(), Some("kept"));
            assert_eq!(engine.attributes().as_deref(), Some("[\"db\"]"));
            assert_eq!(by_k(engine, "db.t2", 7), [7, 17, 500]);
        },
    );
}

/// ALTER TABLE's swap: the copy takes the old table's name, in one log entry, and after a
/// restart the name has the copy's rows and definition.
#[test]
fn a_replaced_table_is_recovered_as_its_copy() {
    across_restarts(
        |engine| {
            let t = engine.create_table(schema("t")).unwrap();
            fill(engine, &t, 10);
            let copy = engine.create_table(schema("#sql-copy")).unwrap();
            fill(engine, &copy, 3);
            engine
                .set_table_attributes("#sql-copy", "the copy's")
                .unwrap();
            let swapped = engine.replace_table("t", "#sql-copy").unwrap();
            assert_eq!(swapped.id(), copy.id());
            assert!(engine.table("#sql-copy").is_err());
            assert_eq!(engine.table("t").unwrap().id(), copy.id());
        },
        |engine, names| {
            assert_eq!(names, ["t"]);
            let t = engine.table("t").unwrap();
            assert_eq!(engine.table_attributes(&t).as_deref(), Some("the copy's"));
            let mut trx = engine.begin_with(Isolation::ReadCommitted);
            assert_eq!(trx.scan(&t, KeyRange::All).unwrap().len(), 3);
        },
    );
}
