//! Malformed input over a real connection: random command packets, random and mutated SQL,
//! unknown statement ids, oversize packets. Each gets an error (or, for the commands the
//! protocol answers with nothing, nothing), never a panic, and the connection stays usable.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use mysql::prelude::Queryable;
use proptest::prelude::*;
use waterline_server::{Server, SessionConfig, Shared};
use waterline_txn::{Engine, EngineConfig};

fn start(max_allowed_packet: usize) -> u16 {
    start_with(max_allowed_packet, false)
}

/// A server with one thread per connection, or (`pooled`) a thread pool of two groups.
fn start_with(max_allowed_packet: usize, pooled: bool) -> u16 {
    let engine = Arc::new(
        Engine::open(EngineConfig {
            lock_wait_timeout: Duration::from_millis(200),
            ..EngineConfig::default()
        })
        .unwrap(),
    );
    let shared = Shared::new(
        engine,
        SessionConfig {
            max_allowed_packet,
            ..SessionConfig::default()
        },
    );
    let mut server = Server::new(shared, 64);
    if pooled {
        server = server
            .thread_pool(waterline_server::PoolConfig {
                size: 2,
                ..waterline_server::PoolConfig::default()
            })
            .unwrap();
    }
    let port = server.spawn("127.0.0.1:0".parse().unwrap()).unwrap().port();
    let mut c = mysql::Conn::new(
        mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
    )
    .unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(6,2))")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'a', 1.50), (2, 'b', 2.50), (3, NULL, NULL)")
        .unwrap();
    port
}

/// A bare protocol client: handshake as root (no password), then raw command packets.
struct Raw {
    stream: TcpStream,
    /// CLIENT_DEPRECATE_EOF was asked for: no EOF after column definitions, and an OK
    /// (header 0xfe) ends a result set.
    deprecate_eof: bool,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        // CLIENT_LONG_PASSWORD | PROTOCOL_41 | TRANSACTIONS | SECURE_CONNECTION | PLUGIN_AUTH
        Raw::connect_with(port, 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000)
    }

    fn connect_with(port: u16, caps: u32) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut raw = Raw {
            stream,
            deprecate_eof: caps & 1 << 24 != 0,
        };
        let (_, greeting) = raw.read().unwrap();
        assert_eq!(greeting[0], 10, "protocol 10 greeting");
        let mut body = caps.to_le_bytes().to_vec();
        body.extend_from_slice(&(16u32 << 20).to_le_bytes());
        body.push(33);
        body.extend_from_slice(&[0; 23]);
        body.extend_from_slice(b"root\0");
        body.push(0); // empty auth response
        body.extend_from_slice(b"mysql_native_password\0");
        raw.write(1, &body);
        let (_, ok) = raw.read().unwrap();
        assert_eq!(ok[0], 0, "handshake OK");
        raw
    }

    fn write(&mut self, seq: u8, body: &[u8]) {
        let mut packet = (body.len() as u32).to_le_bytes()[..3].to_vec();
        packet.push(seq);
        packet.extend_from_slice(body);
        self.stream.write_all(&packet).unwrap();
    }

    fn read(&mut self) -> std::io::Result<(u8, Vec<u8>)> {
        let mut header = [0u8; 4];
        self.stream.read_exact(&mut header)?;
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        let mut body = vec![0u8; len];
        self.stream.read_exact(&mut body)?;
        Ok((header[3], body))
    }

    /// Sends a command and reads packets until its reply ends (OK, ERR, or a result set's
    /// final EOF/OK); returns the first packet.
    fn command(&mut self, body: &[u8]) -> Vec<u8> {
        self.write(0, body);
        let (_, first) = self.read().unwrap();
        if body[0] == 0x16 && first[0] == 0x00 && first.len() >= 9 {
            // A prepare reply: parameter definitions, then column definitions, each block
            // closed by an EOF (unless deprecated).
            let columns = u16::from_le_bytes([first[5], first[6]]);
            let params = u16::from_le_bytes([first[7], first[8]]);
            for block in [params, columns] {
                if block > 0 {
                    for _ in 0..block + u16::from(!self.deprecate_eof) {
                        self.read().unwrap();
                    }
                }
            }
            return first;
        }
        // COM_STATISTICS is answered with a bare string.
        if body[0] == 0x09
            || first[0] == 0x00
            || first[0] == 0xff
            || (first[0] == 0xfe && first.len() < 9)
        {
            return first;
        }
        // A result set: read to its last EOF (or closing OK).
        let mut ends = if self.deprecate_eof { 1 } else { 2 };
        loop {
            let (_, p) = self.read().unwrap();
            if p[0] == 0xff {
                return p;
            }
            if p[0] == 0xfe && p.len() < 9 {
                ends -= 1;
                if ends == 0 {
                    return first;
                }
            }
        }
    }

    /// Sends a COM_STMT_EXECUTE and returns its whole binary reply as sent (headers too):
    /// up to an error, an OK, or the packet that ends the result set (the second EOF, or
    /// the closing OK).
    fn execute(&mut self, body: &[u8]) -> Vec<u8> {
        self.write(0, body);
        let mut all = Vec::new();
        let mut ends = if self.deprecate_eof { 1 } else { 2 };
        loop {
            let (seq, p) = self.read().unwrap();
            all.extend_from_slice(&(p.len() as u32).to_le_bytes()[..3]);
            all.push(seq);
            all.extend_from_slice(&p);
            let first = all.len() == 4 + p.len();
            if p[0] == 0xff || (first && p[0] == 0x00) {
                return all;
            }
            if p[0] == 0xfe {
                ends -= 1;
                if ends == 0 {
                    return all;
                }
            }
        }
    }

    fn ping(&mut self) {
        let reply = self.command(&[0x0e]);
        assert_eq!(reply[0], 0, "ping answered OK");
    }
}

fn error_code(packet: &[u8]) -> Option<u16> {
    (packet[0] == 0xff).then(|| u16::from_le_bytes([packet[1], packet[2]]))
}

#[test]
fn unknown_statement_ids_and_bad_parameters_are_errors() {
    let port = start(1 << 20);
    let mut raw = Raw::connect(port);
    assert_eq!(error_code(&raw.command(b"\x02nowhere")), Some(1049));
    assert_eq!(raw.command(b"\x02waterline")[0], 0, "COM_INIT_DB");
    // COM_STMT_EXECUTE of an id never prepared.
    let reply = raw.command(&[0x17, 42, 0, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(error_code(&reply), Some(1243));
    raw.ping();
    // Prepare one with a parameter, then execute it with an unknown type and short values.
    let prepared = raw.command(b"\x16SELECT name FROM t WHERE id = ?");
    assert_eq!(prepared[0], 0);
    let id = &prepared[1..5];
    let mut bad = vec![0x17];
    bad.extend_from_slice(id);
    bad.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 0x42, 0]);
    assert_eq!(error_code(&raw.command(&bad)), Some(1210));
    let mut short = vec![0x17];
    short.extend_from_slice(id);
    short.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 0x03, 0, 7]);
    assert_eq!(error_code(&raw.command(&short)), Some(1210));
    // A re-execute without types before any were bound.
    let mut untyped = vec![0x17];
    untyped.extend_from_slice(id);
    untyped.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(error_code(&raw.command(&untyped)), Some(1210));
    // A good one: LONG 2 -> 'b'.
    let mut good = vec![0x17];
    good.extend_from_slice(id);
    good.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 0x03, 0, 2, 0, 0, 0]);
    let reply = raw.command(&good);
    assert_ne!(reply[0], 0xff, "{}", String::from_utf8_lossy(&reply));
    raw.ping();
}

#[test]
fn an_oversize_packet_is_refused() {
    let port = start(4096);
    let mut raw = Raw::connect(port);
    let mut big = vec![0x03];
    big.extend_from_slice(format!("SELECT '{}'", "x".repeat(10_000)).as_bytes());
    raw.write(0, &big);
    let (_, reply) = raw.read().unwrap();
    assert_eq!(error_code(&reply), Some(1153));
    assert!(raw.read().is_err(), "the connection is closed after it");
    // The server is fine.
    Raw::connect(port).ping();
}

fn sql_fragment() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("SELECT"),
        Just("FROM"),
        Just("WHERE"),
        Just("t"),
        Just("id"),
        Just("name"),
        Just("price"),
        Just("*"),
        Just(","),
        Just("("),
        Just(")"),
        Just("="),
        Just("<"),
        Just("AND"),
        Just("OR"),
        Just("NOT"),
        Just("1"),
        Just("2.5"),
        Just("'x'"),
        Just("NULL"),
        Just("IN"),
        Just("BETWEEN"),
        Just("ORDER BY"),
        Just("LIMIT"),
        Just("INSERT INTO"),
        Just("VALUES"),
        Just("UPDATE"),
        Just("SET"),
        Just("DELETE"),
        Just("COUNT(*)"),
        Just("SUM(price)"),
        Just("GROUP BY"),
        Just("JOIN"),
        Just("ON"),
        Just("?"),
        Just("-"),
        Just("+"),
        Just("/"),
        Just("9223372036854775807"),
        Just("DISTINCT"),
        Just("FOR UPDATE"),
        Just("BEGIN"),
        Just("COMMIT"),
        Just("ROLLBACK"),
        Just(";"),
        Just("@@version"),
        Just("EXPLAIN"),
    ];
    prop::collection::vec(token, 1..14).prop_map(|t| t.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random command packets (commands that get no reply left out): an answer, then a ping
    /// still works; with one thread per connection and in the thread pool.
    #[test]
    fn random_packets_get_an_answer(command in prop_oneof![Just(0x03u8), Just(0x16), Just(0x17), Just(0x0e), Just(0x04), Just(0x1a), Just(0x22), any::<u8>()],
                                    body in prop::collection::vec(any::<u8>(), 0..64),
                                    pooled in any::<bool>()) {
        prop_assume!(![0x01, 0x18, 0x19].contains(&command)); // QUIT, SEND_LONG_DATA, STMT_CLOSE
        static PORTS: [std::sync::OnceLock<u16>; 2] = [const { std::sync::OnceLock::new() }; 2];
        let port = *PORTS[usize::from(pooled)].get_or_init(|| start_with(1 << 20, pooled));
        let mut raw = Raw::connect(port);
        let mut packet = vec![command];
        packet.extend_from_slice(&body);
        let _ = raw.command(&packet);
        raw.ping();
    }

    /// Random and mutated SQL through a real client: an OK, a result, or a MySQL error, and
    /// the connection keeps working.
    #[test]
    fn random_sql_gets_an_error_not_a_hang(sql in sql_fragment(), mutate in any::<Option<(usize, u8)>>()) {
        static PORT: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
        let port = *PORT.get_or_init(|| start(1 << 20));
        let mut sql = sql.into_bytes();
        if let Some((at, byte)) = mutate && !sql.is_empty() {
            let at = at % sql.len();
            sql[at] = byte;
        }
        let sql = String::from_utf8_lossy(&sql).into_owned();
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap()).unwrap();
        match c.query_drop(&sql) {
            Ok(()) | Err(mysql::Error::MySqlError(_)) => {}
            Err(other) => prop_assert!(false, "{sql:?}: {other}"),
        }
        let _ = c.query_drop("ROLLBACK");
        let one: Option<i64> = c.query_first("SELECT 1").unwrap();
        prop_assert_eq!(one, Some(1));
    }
}

/// COM_STMT_EXECUTE runs in the packet filter (`binary.rs`), except after long data, which
/// opensrv keeps: the same statement through both gives the same bytes, with and without
/// CLIENT_DEPRECATE_EOF.
#[test]
fn an_execution_replies_the_same_in_the_filter_and_in_opensrv() {
    let port = start(1 << 20);
    let mut c = mysql::Conn::new(
        mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
    )
    .unwrap();
    c.query_drop(
        "CREATE TABLE v (id INT PRIMARY KEY, big BIGINT, name VARCHAR(20), \
         price DECIMAL(6,2), ratio DOUBLE, at DATETIME, t TINYINT, tu TINYINT UNSIGNED, \
         su SMALLINT UNSIGNED, m MEDIUMINT, iu INT UNSIGNED)",
    )
    .unwrap();
    c.query_drop(
        "INSERT INTO v VALUES (1, 9000000000, 'one', 1.50, 0.25, '2026-11-21 10:11:12', \
         -128, 255, 65535, -8388608, 4294967295), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), \
         (3, -1, '', -2.00, -1e300, '1999-12-31 23:59:59', 127, 0, 0, 8388607, 0)",
    )
    .unwrap();
    let base = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000;
    for deprecate_eof in [false, true] {
        let caps = if deprecate_eof { base | 1 << 24 } else { base };
        let mut raw = Raw::connect_with(port, caps);
        assert_eq!(raw.command(b"\x02waterline")[0], 0, "COM_INIT_DB");
        for sql in [
            "SELECT id, big, name, price, ratio, at FROM v WHERE id >= ? ORDER BY id",
            "SELECT t, tu, su, m, iu FROM v WHERE id >= ? ORDER BY id",
            "SELECT COUNT(*), SUM(price) FROM v WHERE id >= ?",
            "UPDATE v SET ratio = ratio WHERE id >= ?",
            "INSERT INTO v (id) VALUES (?)",
            "SELECT nope FROM v WHERE id >= ?",
        ] {
            let mut prepare = vec![0x16];
            prepare.extend_from_slice(sql.as_bytes());
            let prepared = raw.command(&prepare);
            if prepared[0] == 0xff {
                // An unknown column fails at PREPARE already: nothing to execute.
                assert_eq!(error_code(&prepared), Some(1054), "{sql}");
                continue;
            }
            let id = &prepared[1..5];
            // One VAR_STRING parameter, '1'.
            let mut execute = vec![0x17];
            execute.extend_from_slice(id);
            execute.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 0xfd, 0, 1, b'1']);
            let here = raw.execute(&execute);
            // The same value as long data: the execution goes to opensrv.
            let mut long = vec![0x18];
            long.extend_from_slice(id);
            long.extend_from_slice(&[0, 0, b'1']);
            raw.write(0, &long);
            let there = raw.execute(&execute);
            assert_eq!(here, there, "{sql} (deprecate_eof {deprecate_eof})");
            let duplicate = sql.starts_with("INSERT");
            assert_eq!(
                error_code(&here[4..]),
                duplicate.then_some(1062),
                "{sql}: {}",
                String::from_utf8_lossy(&here)
            );
        }
        raw.ping();
    }
}

/// The commands opensrv answers with an OK whatever they ask are answered here for what they
/// ask, or refused.
#[test]
fn commands_opensrv_does_not_know_do_what_they_ask_or_are_refused() {
    let port = start(1 << 20);
    let mut raw = Raw::connect(port);
    let status = |ok: &[u8]| u16::from_le_bytes([ok[3], ok[4]]);
    assert_eq!(raw.command(b"\x02waterline")[0], 0);
    assert_eq!(raw.command(b"\x03SET autocommit = 0")[0], 0);
    let ok = raw.command(b"\x03INSERT INTO t VALUES (10, 'r', 1.00)");
    assert_eq!(
        status(&ok),
        0x1,
        "in a transaction, autocommit off: {}",
        String::from_utf8_lossy(&ok)
    );
    // COM_RESET_CONNECTION: the transaction rolled back, the variables as new.
    let ok = raw.command(&[0x1f]);
    assert_eq!(
        (ok[0], status(&ok)),
        (0, 0x2),
        "reset: autocommit on, nothing open"
    );
    assert_eq!(
        raw.command(b"\x03SELECT COUNT(*) FROM t")[0],
        1,
        "the database is kept"
    );
    let mut c = mysql::Conn::new(
        mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
    )
    .unwrap();
    let n: Option<i64> = c
        .query_first("SELECT COUNT(*) FROM t WHERE id = 10")
        .unwrap();
    assert_eq!(n, Some(0), "the reset rolled the insert back");
    // COM_STATISTICS: mysqladmin status's line.
    let line = raw.command(&[0x09]);
    let line = String::from_utf8_lossy(&line);
    assert!(
        line.starts_with("Uptime: ") && line.contains("Questions: "),
        "{line}"
    );
    // COM_SET_OPTION: an EOF.
    assert_eq!(raw.command(&[0x1b, 0, 0])[0], 0xfe);
    // COM_STMT_RESET of a statement that exists, and of one that does not.
    let prepared = raw.command(b"\x16SELECT name FROM t WHERE id = ?");
    let id = prepared[1..5].to_vec();
    let mut reset = vec![0x1a];
    reset.extend_from_slice(&id);
    assert_eq!(raw.command(&reset)[0], 0);
    assert_eq!(error_code(&raw.command(&[0x1a, 9, 9, 0, 0])), Some(1243));
    // COM_PROCESS_KILL of an id no connection has (tests/clients.rs kills one).
    assert_eq!(error_code(&raw.command(&[0x0c, 0, 0, 0, 0])), Some(1094));
    // COM_CHANGE_USER is not built; the rest are not commands waterline has. (COM_SHUTDOWN
    // is: tests/cli.rs runs it.)
    assert_eq!(error_code(&raw.command(&[0x11, b'x', 0])), Some(1235));
    for command in [0x05, 0x07, 0x0a, 0x0d, 0x1c, 0x20] {
        assert_eq!(
            error_code(&raw.command(&[command, 0, 0, 0, 0])),
            Some(1047),
            "{command:#x}"
        );
    }
    raw.ping();
}

/// The status flags a query's closing EOF carries: IN_TRANS, AUTOCOMMIT, and
/// NO_INDEX_USED when a table was read whole.
#[test]
fn a_result_set_ends_with_the_sessions_status() {
    let port = start(1 << 20);
    let mut raw = Raw::connect(port);
    assert_eq!(raw.command(b"\x02waterline")[0], 0);
    let last_status = |raw: &mut Raw, sql: &str| {
        let mut query = vec![0x03];
        query.extend_from_slice(sql.as_bytes());
        raw.write(0, &query);
        let mut eofs = 0;
        loop {
            let (_, p) = raw.read().unwrap();
            assert_ne!(p[0], 0xff, "{sql}: {}", String::from_utf8_lossy(&p));
            if p[0] == 0xfe && p.len() < 9 {
                eofs += 1;
                if eofs == 2 {
                    return u16::from_le_bytes([p[3], p[4]]);
                }
            }
        }
    };
    assert_eq!(
        last_status(&mut raw, "SELECT name FROM t WHERE id = 1"),
        0x2
    );
    assert_eq!(last_status(&mut raw, "SELECT name FROM t"), 0x2 | 0x20);
    assert_eq!(raw.command(b"\x03BEGIN")[0], 0);
    assert_eq!(
        last_status(&mut raw, "SELECT name FROM t WHERE id > 1"),
        0x2 | 0x1
    );
    assert_eq!(raw.command(b"\x03COMMIT")[0], 0);
}

/// A chain of operators deepens the parsed tree by one level per operator, and every walk
/// of the tree recurses once per level: up to the limit a statement runs (on every path that
/// walks it), past it (here 10x, or split by parentheses) it is 1436 and the connection goes
/// on. The server process survives both.
#[test]
fn long_operator_chains_run_up_to_the_limit_and_are_1436_past_it() {
    let port = start(1 << 20);
    let mut c = mysql::Conn::new(
        mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
    )
    .unwrap();
    let chain = |n: usize, op: &str, term: &str| vec![term; n].join(op);
    let limit = waterline_server::MAX_EXPRESSION_DEPTH;
    for n in [limit / 3, limit * 10] {
        let statements = [
            format!(
                "SELECT {} AS s FROM t WHERE id = 1",
                chain(n * 3, " + ", "id")
            ),
            format!("SELECT id FROM t WHERE {}", chain(n, " OR ", "id = 1")),
            format!("SELECT id FROM t WHERE {}", chain(n, " AND ", "id > 0")),
            format!(
                "UPDATE t SET price = {} WHERE id = 1",
                chain(n * 3, " * ", "1")
            ),
            format!(
                "DELETE FROM t WHERE id = 9 AND ({})",
                chain(n, " OR ", "id = 1")
            ),
        ];
        for sql in &statements {
            let text = c.query_drop(sql);
            let prepared = c.prep(sql).map(drop);
            if n < limit {
                text.unwrap_or_else(|e| panic!("{}...: {e}", &sql[..60]));
                prepared.unwrap();
            } else {
                for result in [text, prepared] {
                    match result {
                        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1436, "{e}"),
                        other => panic!("{}...: {other:?}", &sql[..60]),
                    }
                }
            }
        }
    }
    // Parentheses split a chain without making it shallower: `((a + ... ) + ...) + ...`
    // is as deep as all its operators together, each segment under the limit.
    let segment = chain(limit * 2 / 3, " + ", "1");
    for groups in [2, 3, 40] {
        let sql = format!(
            "SELECT {}{segment}{} FROM t",
            "(".repeat(groups - 1),
            format!(") + {segment}").repeat(groups - 1)
        );
        match c.query_drop(&sql) {
            Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1436, "{e}"),
            other => panic!("{groups} groups: {other:?}"),
        }
    }
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
}

/// Nesting is the other way a statement deepens its tree: parentheses, NOT, unary minus,
/// function calls, CASE, row values, a SET's value. sqlparser stops descending at 50 levels
/// (1064), before anything else walks the tree; at 10x and 100x that, each form is refused,
/// text and prepared, and the connection goes on.
#[test]
fn deep_nesting_of_every_kind_is_refused_and_the_connection_goes_on() {
    let port = start(1 << 20);
    let mut c = mysql::Conn::new(
        mysql::Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/waterline")).unwrap(),
    )
    .unwrap();
    type Form = fn(usize) -> String;
    let forms: [(&str, Form); 7] = [
        ("parentheses", |d| {
            format!("SELECT {}1{}", "(".repeat(d), ")".repeat(d))
        }),
        ("NOT", |d| format!("SELECT {}1", "NOT ".repeat(d))),
        ("minus", |d| format!("SELECT {}1", "- ".repeat(d))),
        ("calls", |d| {
            format!("SELECT {}1{}", "ABS(".repeat(d), ")".repeat(d))
        }),
        ("CASE", |d| {
            format!(
                "SELECT {}1{}",
                "CASE WHEN 1 THEN ".repeat(d),
                " END".repeat(d)
            )
        }),
        ("row", |d| {
            format!("SELECT 1 IN {}1{}", "(".repeat(d), ")".repeat(d))
        }),
        ("SET", |d| {
            format!("SET @a = {}1{}", "(".repeat(d), ")".repeat(d))
        }),
    ];
    for (name, form) in forms {
        for depth in [500, 5_000] {
            let sql = form(depth);
            for result in [c.query_drop(&sql), c.prep(&sql).map(drop)] {
                match result {
                    Err(mysql::Error::MySqlError(e)) => {
                        assert!(matches!(e.code, 1064 | 1436), "{name} {depth}: {e}");
                    }
                    other => panic!("{name} {depth}: {other:?}"),
                }
            }
        }
    }
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
}
