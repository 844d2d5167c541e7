//! The embedded way in, `Session::new(&engine)`: sessions over one engine agree on its
//! databases and each table's DEFAULTs and AUTO_INCREMENT, however they were made and
//! whether or not another session is still open.

use std::sync::Arc;

use waterline_sql::{Session, SessionConfig, Shared};
use waterline_txn::{Engine, Value};

#[test]
fn sessions_over_one_engine_share_its_catalog() {
    let engine = Arc::new(Engine::in_memory());
    {
        let mut s = Session::new(&engine);
        s.execute("CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v INT DEFAULT 7)")
            .unwrap();
        s.execute("CREATE DATABASE other").unwrap();
        s.execute("INSERT INTO t (v) VALUES (1), (2)").unwrap();
    }
    // Every embedded session is gone: a new one starts a new Shared, with the same catalog.
    let mut again = Session::new(&engine);
    again.execute("INSERT INTO t () VALUES ()").unwrap();
    let rows = again
        .execute("SELECT id, v FROM t ORDER BY id")
        .unwrap()
        .into_rows();
    assert_eq!(rows.last().unwrap(), &[Value::Int(3), Value::Int(7)]);
    // A server's Shared over the same engine sees it too.
    let server = Shared::new(Arc::clone(&engine), SessionConfig::default());
    let mut client = server.session();
    client.execute("USE other").unwrap();
    client.execute("USE waterline").unwrap();
    client.execute("INSERT INTO t (v) VALUES (4)").unwrap();
    let id = client.execute("SELECT MAX(id) FROM t").unwrap().into_rows();
    assert_eq!(id, [[Value::Int(4)]]);
}
