//! A short run on each backend, each followed by the consistency checks: native, embedded SQL,
//! and the MySQL protocol against a waterline server, each with clients as OS threads and as
//! tokio tasks.

use std::sync::Arc;
use std::time::Duration;

use waterline_server::{Server, Session, SessionConfig, Shared};
use waterline_tpcc::client::Failure;
use waterline_tpcc::conn::{MysqlAsyncConn, MysqlConn};
use waterline_tpcc::sql::SqlConn;
use waterline_tpcc::{
    BackendKind, DriverOptions, Limit, Report, RunInfo, Runtime, Scale, Settings, Target, run_point,
};
use waterline_txn::{Engine, EngineConfig, Value};

const SCALE: Scale = Scale {
    warehouses: 2,
    items: 500,
    customers: 60,
};

fn options(clients: usize, runtime: Runtime) -> DriverOptions {
    DriverOptions {
        clients,
        runtime,
        warmup: Duration::from_millis(50),
        limit: Limit::Count(400),
        seed: 11,
        scale: SCALE,
    }
}

/// Runs the mix and checks: every transaction type ran, nothing failed, the conditions hold.
fn short_run(kind: &BackendKind, runtime: Runtime) -> waterline_tpcc::Point {
    short_run_with(kind, runtime, &Settings::default())
}

fn short_run_with(
    kind: &BackendKind,
    runtime: Runtime,
    settings: &Settings,
) -> waterline_tpcc::Point {
    let (target, load) = Target::create(kind, settings, SCALE, 5, 2).expect("loads");
    assert!(load.rows > 10_000, "{kind}: {load:?}");
    let point = run_point(&target, "default", &options(4, runtime)).expect("runs");
    let m = &point.measurement;
    assert_eq!(m.errors, Vec::<String>::new(), "{kind}");
    assert_eq!(m.completed(), 400, "{kind}: the count is exact");
    assert!(
        m.kinds.iter().all(|k| k.completed() > 0),
        "{kind}: every type ran: {m:?}"
    );
    assert_eq!(point.violations, Vec::<String>::new(), "{kind}");
    assert!(point.ok());
    point
}

#[test]
fn native_threads() {
    let point = short_run(&BackendKind::Native, Runtime::Threads);
    let stats = point
        .stats
        .as_ref()
        .expect("in process, the engine's counters are read");
    assert!(stats.get(waterline_txn::Counter::Commits) >= 400);
    // In process, the CPU and memory columns are this process's: no note on a server.
    let summary = report("native", vec![point], (0, 0.0)).summary();
    assert!(!summary.contains(SERVERS), "{summary}");
}

/// What the summary says under a run whose process columns are the server's.
const SERVERS: &str = "are the server's, from its SHOW STATUS";

#[test]
fn native_tasks() {
    short_run(&BackendKind::Native, Runtime::Tasks { workers: 2 });
}

/// The thread-pool baseline (book 8.3.1): whole transactions run on the pool's threads,
/// from client threads and from tasks alike; the engine itself takes no permits.
#[test]
fn native_on_a_thread_pool() {
    let mut settings = Settings::default();
    settings.engine.admission = waterline_txn::Policy::ThreadPool(2);
    for runtime in [Runtime::Threads, Runtime::Tasks { workers: 2 }] {
        let point = short_run_with(&BackendKind::Native, runtime, &settings);
        assert!(point.stats.is_some());
    }
}

#[test]
fn embedded_sql() {
    short_run(&BackendKind::Sql, Runtime::Threads);
}

/// Embedded sessions as tasks, more of them than the engine admits, on one worker thread:
/// each waits for its permit at BEGIN (an async wait, `Session::begin_async`), and every
/// permit comes back.
#[test]
fn embedded_sql_tasks_under_admission() {
    let mut settings = Settings::default();
    settings.engine.admission = waterline_txn::Policy::Limit(2);
    let (target, _) = Target::create(&BackendKind::Sql, &settings, SCALE, 5, 2).expect("loads");
    let options = options(16, Runtime::Tasks { workers: 1 });
    let point = run_point(&target, "limit-2", &options).expect("runs");
    assert_eq!(point.measurement.errors, Vec::<String>::new());
    assert_eq!(point.measurement.completed(), 400);
    assert!(point.ok(), "{:?}", point.violations);
    let admission = target.engine().unwrap().admission().unwrap().metrics();
    assert_eq!(admission.inside, 0, "every permit came back");
}

#[test]
fn mysql_protocol_against_waterline_serve() {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let config = SessionConfig {
        databases: vec!["tpcc".into()],
        ..SessionConfig::default()
    };
    let server = Server::new(Shared::new(engine, config), 64);
    let addr = server
        .clone()
        .spawn("127.0.0.1:0".parse().unwrap())
        .unwrap();
    let url = format!("mysql://root@{addr}/tpcc");
    let tasks = short_run(&url.parse().unwrap(), Runtime::Tasks { workers: 2 });
    assert!(tasks.stats.is_none());
    let point = short_run(&url.parse().unwrap(), Runtime::Threads);
    assert!(
        point.stats.is_none(),
        "a remote server's counters are not read"
    );
    // The process columns are the server's, from its status, and the summary says so.
    assert!(
        point.process.is_some(),
        "a waterline server reports its CPU"
    );
    assert!(
        point.effective.ends_with(
            "innodb_flush_log_at_trx_commit=0, thread_handling=one-thread-per-connection, \
                 admission=unlimited, durability=in-memory, lock_release=n/a"
        ),
        "{}",
        point.effective
    );
    let summary = report(&url, vec![point], (0, 0.0)).summary();
    assert!(summary.contains(SERVERS), "{summary}");

    // Through the thread pool, which the point's configuration says.
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let config = SessionConfig {
        databases: vec!["tpcc".into()],
        ..SessionConfig::default()
    };
    let pool = waterline_server::PoolConfig {
        size: 2,
        ..waterline_server::PoolConfig::default()
    };
    let pooled = Server::new(Shared::new(engine, config), 64)
        .thread_pool(pool)
        .unwrap();
    let addr = pooled.spawn("127.0.0.1:0".parse().unwrap()).unwrap();
    let url = format!("mysql://root@{addr}/tpcc");
    let point = short_run(&url.parse().unwrap(), Runtime::Threads);
    assert!(
        point.effective.contains(
            "thread_handling=pool-of-threads (thread_pool_size=2, thread_pool_oversubscribe=3)"
        ),
        "{}",
        point.effective
    );

    // The same server on a Unix-domain socket too (the database is loaded again).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("waterline.sock");
    server.spawn_unix(&path).unwrap();
    let url = format!("mysql://root@localhost/tpcc?socket={}", path.display());
    short_run(&url.parse().unwrap(), Runtime::Threads);
    short_run(&url.parse().unwrap(), Runtime::Tasks { workers: 2 });
}

/// A server with one row in table `which`, saying `name`.
fn server_named(name: &str) -> Server {
    let engine = Arc::new(Engine::open(EngineConfig::default()).unwrap());
    let config = SessionConfig {
        databases: vec!["tpcc".into()],
        ..SessionConfig::default()
    };
    let shared = Shared::new(engine, config);
    let mut session = Session::connect(Arc::clone(&shared), "root", Some("tpcc")).unwrap();
    session
        .execute("CREATE TABLE which (v VARCHAR(10) PRIMARY KEY)")
        .unwrap();
    session
        .execute(&format!("INSERT INTO which VALUES ('{name}')"))
        .unwrap();
    Server::new(shared, 16)
}

/// Which server answers a driver connection to `url`, blocking and async.
fn answered_by(url: &str) -> (String, String) {
    async fn ask(conn: &mut impl SqlConn) -> String {
        let rows = conn.query("SELECT v FROM which", &[]).await.unwrap();
        match &rows[0][0] {
            Value::Str(s) => s.to_string(),
            other => panic!("{other:?}"),
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut blocking = MysqlConn::connect(url).unwrap();
        let mut tasks = MysqlAsyncConn::connect(url).await.unwrap();
        (ask(&mut blocking).await, ask(&mut tasks).await)
    })
}

/// The driver connects the way its URL says. Both MySQL crates, connected over loopback
/// TCP, read `@@socket` and move to that socket by default, so the driver ran against
/// MariaDB over its socket and against a server without one over TCP. Here the TCP server
/// names as its socket one where another server answers: the driver stays on TCP unless the
/// URL asks for the socket.
#[test]
fn the_driver_uses_the_transport_its_url_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.sock");
    let tcp = server_named("tcp");
    {
        // `tcp` says `path` is its socket, then stops listening there: the file is stale.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let _reactor = runtime.enter();
        drop(tcp.bind_unix(&path).unwrap());
    }
    let addr = tcp.spawn("127.0.0.1:0".parse().unwrap()).unwrap();
    // The stale file is replaced.
    server_named("socket").spawn_unix(&path).unwrap();
    let url = format!("mysql://root@{addr}/tpcc");
    let both = |s: &str| (s.to_owned(), s.to_owned());
    assert_eq!(answered_by(&url), both("tcp"));
    assert_eq!(
        answered_by(&format!("{url}?prefer_socket=true")),
        both("socket")
    );
    assert_eq!(
        answered_by(&format!("{url}?socket={}", path.display())),
        both("socket")
    );
}

/// A second server on a socket a live server answers on is an error, not a takeover.
#[test]
fn a_socket_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.sock");
    server_named("first").spawn_unix(&path).unwrap();
    let e = server_named("second").spawn_unix(&path).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
    assert!(e.to_string().contains("busy.sock"), "{e}");
    let url = format!("mysql://root@localhost/tpcc?socket={}", path.display());
    assert_eq!(answered_by(&url).0, "first");
}

/// A report of `points` on `backend`, run with [`options`].
fn report(backend: &str, points: Vec<waterline_tpcc::Point>, load: (u64, f64)) -> Report {
    Report {
        info: RunInfo {
            backend: backend.into(),
            scale: SCALE,
            seed: 5,
            warmup_secs: 0.05,
            limit: Limit::Count(400),
            runtime: Runtime::Threads,
            machine: waterline_tpcc::Machine::cpus_only(),
            load,
            build: "test".into(),
            profile: waterline_tpcc::BuildProfile::unknown(),
        },
        points,
    }
}

#[test]
fn the_summary_warns_of_a_point_that_lost_cpu_time_to_other_guests() {
    let mut point = short_run(&BackendKind::Native, Runtime::Threads);
    point.steal = Some(0.01);
    let quiet = report("native", vec![point.clone()], (0, 0.0)).summary();
    assert!(!quiet.contains("hypervisor"), "{quiet}");
    point.steal = Some(0.2);
    let busy = report("native", vec![point], (0, 0.0)).summary();
    assert!(
        busy.contains("warning: the hypervisor took more than 5% of this machine's CPU time")
            && busy.contains("default at 4 clients 20%"),
        "{busy}"
    );
}

#[test]
fn a_sweep_writes_csv_json_and_svg() {
    let (target, load) =
        Target::create(&BackendKind::Native, &Settings::default(), SCALE, 5, 2).unwrap();
    let points = [1, 3]
        .into_iter()
        .map(|clients| run_point(&target, "default", &options(clients, Runtime::Threads)).unwrap())
        .collect();
    let report = report("native", points, (load.rows, load.elapsed.as_secs_f64()));
    let dir = tempfile::tempdir().unwrap();
    report.write(dir.path()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two points");
    assert!(lines[0].starts_with("config,clients,tpmc,txn_per_sec,new_order_count"));
    assert!(lines[1].starts_with("default,1,") && lines[2].starts_with("default,3,"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    for field in ["tpmc", "txn_per_sec", "clients", "config", "consistency"] {
        assert!(json["points"][0].get(field).is_some(), "{field}");
    }
    assert_eq!(json["points"][1]["consistency"], "ok");
    if cfg!(target_os = "linux") {
        // The process's CPU time and memory over the window (their values depend on the
        // machine; that they are read and consistent does not).
        let process = &json["points"][1]["process"];
        let (user, system) = (
            process["user_secs"].as_f64(),
            process["system_secs"].as_f64(),
        );
        let share = process["system_share"].as_f64().unwrap();
        assert!(user.is_some() && system.is_some(), "{process}");
        assert!((0.0..=1.0).contains(&share), "{process}");
        assert!(
            process["cpu_us_per_txn"].as_f64().unwrap() >= 0.0,
            "{process}"
        );
        assert!(
            process["resident_growth_bytes_per_txn"].is_number(),
            "{process}"
        );
        let steal = json["points"][1]["cpu_steal_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&steal), "{}", json["points"][1]);
        assert!(json["definitions"].get("cpu_steal_share").is_some());
        let header: Vec<&str> = lines[0].split(',').collect();
        let row: Vec<&str> = lines[2].split(',').collect();
        let cpu = header.iter().position(|&h| h == "cpu_us_per_txn").unwrap();
        assert!(row[cpu].parse::<f64>().is_ok(), "{}", lines[2]);
    }
    assert_eq!(
        json["run"]["scale"]["standard"], false,
        "a lite run says so"
    );
    let svg = std::fs::read_to_string(dir.path().join("throughput.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("clients"),
        "{}",
        &svg[..200.min(svg.len())]
    );
}

/// A server that takes the connection and never sends its greeting (here a listener that
/// never accepts: the kernel completes the connection into its queue). A thread client's
/// connect gives up after its limit, with an error that stops the run, instead of waiting
/// forever.
#[test]
fn a_blocking_client_gives_up_on_a_server_that_never_greets() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("mysql://root@{}/tpcc", silent.local_addr().unwrap());
    let failure = MysqlConn::connect_within(&url, Duration::from_millis(300))
        .err()
        .expect("no greeting, no connection");
    assert!(
        matches!(&failure, Failure::Fatal(m) if m == "no connection within 300ms"),
        "{failure:?}"
    );
}
