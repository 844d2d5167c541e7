//! Each transaction does what the spec says to the database, on every in-process backend:
//! run one kind many times and compare the tables before and after.

use std::sync::Arc;

use waterline_tpcc::check::Facts;
use waterline_tpcc::client::Outcome;
use waterline_tpcc::input::{InputGen, Kind};
use waterline_tpcc::native::StepOrder;
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
fn both_step_orders_leave_what_the_sql_text_leaves() {
    // The native NewOrder and Payment run in either order (`StepOrder`); the SQL text keeps
    // the spec's. The same inputs (dates included, so generated once) must leave the same
    // rows in all three, down to every column, the NewOrders that roll back included.
    let native = |order| {
        let settings = Settings {
            order,
            ..Settings::default()
        };
        Target::create(&BackendKind::Native, &settings, SCALE, 7, 2)
            .expect("loads")
            .0
    };
    let targets = [
        native(StepOrder::HotLast),
        native(StepOrder::Spec),
        target(&BackendKind::Sql),
    ];
    let loaded = checksum(&targets[0]);
    assert!(
        targets.iter().all(|t| checksum(t) == loaded),
        "loaded alike"
    );
    let mut clients: Vec<_> = targets.iter().map(|t| t.connect().unwrap()).collect();
    let mut inputs = InputGen::new(SCALE, 3, 0);
    for kind in [
        Kind::NewOrder,
        Kind::Payment,
        Kind::Delivery,
        Kind::NewOrder,
    ] {
        for _ in 0..120 {
            let input = inputs.input(kind);
            let outcomes: Vec<Outcome> = clients
                .iter_mut()
                .map(|c| c.run(&input).expect("runs"))
                .collect();
            assert!(outcomes.iter().all(|&o| o == outcomes[0]), "{input:?}");
        }
        let sums: Vec<u64> = targets.iter().map(checksum).collect();
        assert!(sums.iter().all(|&s| s == sums[0]), "{kind:?}: same rows");
    }
}
