//! Admission at begin: with `EngineConfig::admission = Limit(n)`, at most `n` transactions
//! are ever inside the engine, from threads or from async tasks; a transaction's permit comes
//! back when it commits, rolls back, is dropped, or is chosen as a deadlock victim.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use waterline_txn::{
    Column, ColumnType, Engine, EngineConfig, Isolation, Key, Policy, Table, TableSchema, TxnError,
};

fn engine(policy: Policy) -> Result<(Engine, Table), TxnError> {
    let engine = Engine::open(EngineConfig {
        admission: policy,
        lock_wait_timeout: Duration::from_secs(5),
        ..EngineConfig::default()
    })?;
    let table = engine.create_table(
        TableSchema::new(
            "t",
            vec![
                Column::new("id", ColumnType::Int),
                Column::new("v", ColumnType::BigInt),
            ],
        )
        .primary_key(&["id"])?,
    )?;
    let mut load = engine.begin_with(Isolation::ReadCommitted);
    for id in 0..8 {
        load.insert(&table, vec![id.into(), 0.into()])?;
    }
    load.commit()?;
    Ok((engine, table))
}

fn bump(trx: &mut waterline_txn::Transaction, table: &Table, id: i32) -> Result<bool, TxnError> {
    trx.update_with(table, Key::one(id), |row| {
        vec![row[0].clone(), (row[1].as_int().unwrap() + 1).into()]
    })
}

#[test]
fn at_most_n_transactions_are_inside_and_every_end_returns_the_permit() {
    let (engine, table) = engine(Policy::Limit(2)).unwrap();
    let (inside, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|s| {
        for t in 0..8 {
            let (engine, table, inside, most) = (&engine, &table, &inside, &most);
            s.spawn(move || {
                for i in 0..200 {
                    let mut trx = engine.begin_with(Isolation::ReadCommitted);
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    bump(&mut trx, table, t).unwrap();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    match i % 3 {
                        0 => trx.commit().unwrap(),
                        1 => trx.rollback(),
                        _ => drop(trx),
                    }
                }
            });
        }
    });
    assert!(most.load(Ordering::SeqCst) <= 2);
    let metrics = engine.admission().unwrap().metrics();
    assert_eq!((metrics.inside, metrics.admitted), (0, 1 + 8 * 200));
}

#[test]
fn a_deadlock_victim_gives_its_permit_back_before_it_is_dropped() {
    let (engine, table) = engine(Policy::Limit(2)).unwrap();
    let mut a = engine.begin_with(Isolation::ReadCommitted);
    let mut b = engine.begin_with(Isolation::ReadCommitted);
    bump(&mut a, &table, 0).unwrap();
    bump(&mut b, &table, 1).unwrap();
    let victim = std::thread::scope(|s| {
        let waiter = s.spawn(|| bump(&mut a, &table, 1).map(|_| a));
        std::thread::sleep(Duration::from_millis(50));
        let second = bump(&mut b, &table, 0);
        let first = waiter.join().unwrap();
        match (first, second) {
            (Ok(a), Err(e)) => {
                assert!(matches!(e, TxnError::Deadlock { .. }));
                a.commit().unwrap();
                b
            }
            (Err(e), Ok(_)) => {
                assert!(matches!(e, TxnError::Deadlock { .. }));
                b.commit().unwrap();
                engine.begin_with(Isolation::ReadCommitted) // a is gone with its thread
            }
            other => panic!("expected one deadlock victim: {other:?}"),
        }
    });
    // The victim still exists, yet two new transactions get in (a limit of 2): had it kept
    // its permit, the second would wait for ever.
    std::thread::scope(|s| {
        let (done, finished) = std::sync::mpsc::channel();
        let engine = &engine;
        s.spawn(move || {
            let both = (
                engine.begin_with(Isolation::ReadCommitted),
                engine.begin_with(Isolation::ReadCommitted),
            );
            done.send(()).unwrap();
            drop(both);
        });
        let got_in = finished.recv_timeout(Duration::from_secs(10));
        drop(victim);
        got_in.expect("the victim's permit came back when it was rolled back");
    });
}

#[test]
fn async_begin_waits_without_blocking_the_runtime() {
    let (engine, table) = engine(Policy::Limit(3)).unwrap();
    let engine = std::sync::Arc::new(engine);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let most = std::sync::Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..100)
            .map(|i| {
                let (engine, table, most) = (engine.clone(), table.clone(), most.clone());
                tokio::spawn(async move {
                    let mut trx = engine.begin_async(Isolation::ReadCommitted).await;
                    let inside = engine.admission().unwrap().inside();
                    most.fetch_max(inside, Ordering::SeqCst);
                    tokio::task::yield_now().await; // a client round trip, permit held
                    bump(&mut trx, &table, i % 8).unwrap();
                    trx.commit().unwrap();
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(most.load(Ordering::SeqCst), 3);
}

#[test]
fn a_thread_pool_or_a_zero_limit_is_refused_at_open() {
    for policy in [Policy::ThreadPool(4), Policy::Limit(0)] {
        assert!(
            matches!(
                engine(policy),
                Err(TxnError::Config(_) | TxnError::Admission(_))
            ),
            "{policy:?}"
        );
    }
    let (unlimited, _) = engine(Policy::Unlimited).unwrap();
    assert!(unlimited.admission().is_none());
}
