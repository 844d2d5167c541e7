//! A session's BEGIN under an admission limit, from async code: it waits for the permit
//! without holding its thread. (What a session answers to SQL is in `tests/scripts/`.)

mod common;

use std::sync::Arc;

use common::{ok, one};
use waterline_sql::{Session, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig};

/// An async BEGIN waits for the admission permit without holding its thread: on a runtime
/// with one thread, the holder's task still runs to its COMMIT and lets the waiter in.
#[test]
fn an_async_begin_waits_for_the_permit_without_blocking_the_thread() {
    let config = EngineConfig {
        admission: waterline_txn::Policy::Limit(1),
        ..EngineConfig::default()
    };
    let engine = Arc::new(Engine::open(config).unwrap());
    let shared = Shared::new(Arc::clone(&engine), SessionConfig::default());
    let mut a = Session::connect(Arc::clone(&shared), "root", Some("waterline")).unwrap();
    let mut b = Session::connect(shared, "root", Some("waterline")).unwrap();
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY)");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let admission = engine.admission().unwrap();
    let seen = runtime.block_on(async {
        a.begin_async().await.unwrap();
        assert!(a.in_transaction());
        assert_eq!(admission.metrics().inside, 1, "BEGIN takes the permit");
        let waiter = async {
            b.begin_async().await.unwrap();
            ok(&mut b, "INSERT INTO t VALUES (2)");
            ok(&mut b, "COMMIT");
        };
        let holder = async {
            // The waiter has been polled and parked before this runs.
            tokio::task::yield_now().await;
            let waiting = admission.metrics().waiting;
            ok(&mut a, "INSERT INTO t VALUES (1)");
            ok(&mut a, "COMMIT");
            waiting
        };
        let (waiting, ()) = tokio::join!(holder, waiter);
        waiting
    });
    assert_eq!(seen, 1, "the second BEGIN waited for the permit");
    assert_eq!(admission.metrics().inside, 0);
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM t"), "2");
}
