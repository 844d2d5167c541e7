//! What the tests that run `waterline serve` as a process with outside tools share.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_waterline");

/// `waterline serve` on `port` with database `tpcc`, its standard error in `log`.
pub fn serve(port: u16, data_dir: Option<&Path>, log: &Path) -> Child {
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database", "tpcc", "--lock-wait-timeout", "20"]);
    if let Some(dir) = data_dir {
        command.arg("--data-dir").arg(dir);
    }
    let child = command
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    drop(connect(port));
    child
}

/// A connection to the server on `port`, database `tpcc`, once it answers (within 60 s).
pub fn connect(port: u16) -> mysql::Conn {
    connect_to(port, Some("tpcc"))
}

/// A connection of root to the server on `port`, in database `db`, once it answers (within
/// 60 s).
pub fn connect_to(port: u16, db: Option<&str>) -> mysql::Conn {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let opts = mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("root"))
            .db_name(db)
            .prefer_socket(false);
        match mysql::Conn::new(opts) {
            Ok(c) => return c,
            Err(e) if Instant::now() > deadline => panic!("the server never answered: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// A TCP port no one listens on now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A server in a temporary directory (`--data-dir` there if `durable`), killed when dropped.
pub struct Served {
    pub child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Served {
    pub fn start(durable: bool) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let data = dir.path().join("data");
        let child = serve(
            port,
            durable.then_some(data.as_path()),
            &dir.path().join("serve.log"),
        );
        Served { child, port, dir }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
