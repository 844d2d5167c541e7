//! Each transaction does what the spec says to the database, on every in-process backend:
//! run one kind many times and compare the tables before and after.

use std::sync::Arc;

use waterline_tpcc::check::Facts;
use waterline_tpcc::client::Outcome;
use waterline_tpcc::input::{InputGen, Kind};
use waterline_tpcc::{BackendKind, Scale, Settings, Target};

const SCALE: Scale = Scale {
    warehouses: 2,
    items: 200,
    customers: 60,
};

fn target(kind: &BackendKind) -> Target {
    Target::create(kind, &Settings::default(), SCALE, 7, 2)
        .expect("loads")
        .0
}

fn new_orders(facts: &Facts) -> i64 {
    facts.districts.values().map(|d| d.new_orders.0).sum()
}

fn next_ids(facts: &Facts) -> i64 {
    facts.districts.values().map(|d| d.next_o_id).sum()
}

fn run(target: &Target, kind: Kind, times: usize) -> (usize, usize) {
    let mut client = target.connect().expect("connects");
    let mut inputs = InputGen::new(SCALE, 3, 0);
    let (mut committed, mut rolled_back) = (0, 0);
    for _ in 0..times {
        match client.run(&inputs.input(kind)).expect("runs") {
            Outcome::Committed => committed += 1,
            Outcome::RolledBack => rolled_back += 1,
        }
    }
    (committed, rolled_back)
}

#[test]
fn delivery_delivers_one_order_per_district() {
    for kind in [BackendKind::Native, BackendKind::Sql] {
        let target = target(&kind);
        let before = target.facts().unwrap();
        assert_eq!(
            new_orders(&before),
            2 * 10 * 18,
            "{kind}: 30% of 60 per district"
        );
        run(&target, Kind::Delivery, 3);
        let after = target.facts().unwrap();
        // Warehouse 1 is client 0's home: 3 deliveries take 3 orders from each of its 10
        // districts.
        assert_eq!(new_orders(&before) - new_orders(&after), 30, "{kind}");
        assert_eq!(after.violations(), Vec::<String>::new(), "{kind}");
    }
}

#[test]
fn new_order_enters_orders_and_payment_moves_money() {
    for kind in [BackendKind::Native, BackendKind::Sql] {
        let target = target(&kind);
        let before = target.facts().unwrap();
        let (committed, rolled_back) = run(&target, Kind::NewOrder, 200);
        let after = target.facts().unwrap();
        assert_eq!(committed + rolled_back, 200);
        assert!(
            rolled_back >= 1,
            "{kind}: about 1% roll back, got {rolled_back}"
        );
        assert_eq!(
            next_ids(&after) - next_ids(&before),
            committed as i64,
            "{kind}"
        );
        assert_eq!(
            new_orders(&after) - new_orders(&before),
            committed as i64,
            "{kind}"
        );
        run(&target, Kind::Payment, 100);
        let paid = target.facts().unwrap();
        assert!(paid.warehouses[&1] > after.warehouses[&1], "{kind}");
        assert_eq!(paid.violations(), Vec::<String>::new(), "{kind}");
        run(&target, Kind::OrderStatus, 50);
        run(&target, Kind::StockLevel, 50);
        assert_eq!(
            target.facts().unwrap(),
            paid,
            "{kind}: read-only transactions change nothing"
        );
    }
}

#[test]
fn a_seed_fixes_the_loaded_database() {
    let checksum = |seed: u64, threads: usize| {
        let (target, _) = Target::create(
            &BackendKind::Native,
            &Settings::default(),
            SCALE,
            seed,
            threads,
        )
        .expect("loads");
        let Target::Native(db) = target else {
            unreachable!()
        };
        Arc::clone(&db).checksum().expect("reads")
    };
    let one = checksum(42, 1);
    assert_eq!(
        one,
        checksum(42, 3),
        "the number of loader threads does not matter"
    );
    assert_ne!(one, checksum(43, 2), "another seed, another database");
}

/// A checksum of every row of `target`'s tables (both in-process backends share the engine's
/// tables).
fn checksum(target: &Target) -> u64 {
    let db = match target {
        Target::Native(db) | Target::Sql { native: db, .. } => db,
        Target::Mysql { .. } => unreachable!("in-process targets only"),
    };
    db.checksum().expect("reads")
}

#[test]
fn the_native_order_of_steps_leaves_what_the_spec_order_leaves() {
    // The native NewOrder updates the stock before it takes the district's next order id,
    // and the native Payment charges the customer before it updates the district and the
    // warehouse; the SQL text keeps the spec's order. The same inputs (dates included, so
    // generated once) must leave the same rows, down to every column, the NewOrders that
    // roll back included.
    let (native, sql) = (target(&BackendKind::Native), target(&BackendKind::Sql));
    assert_eq!(checksum(&native), checksum(&sql), "loaded alike");
    let (mut on_native, mut on_sql) = (native.connect().unwrap(), sql.connect().unwrap());
    let mut inputs = InputGen::new(SCALE, 3, 0);
    for kind in [
        Kind::NewOrder,
        Kind::Payment,
        Kind::Delivery,
        Kind::NewOrder,
    ] {
        for _ in 0..120 {
            let input = inputs.input(kind);
            let outcome = on_native.run(&input).expect("runs");
            assert_eq!(outcome, on_sql.run(&input).expect("runs"), "{input:?}");
        }
        assert_eq!(checksum(&native), checksum(&sql), "{kind:?}: same rows");
    }
}
