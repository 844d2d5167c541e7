//! `SHOW ENGINE INNODB STATUS`: the part of InnoDB's report a performance engineer reads to
//! see who waits on whom (its TRANSACTIONS section), in waterline's words: each session's
//! open transaction, how long it has been open, what it runs, the locks it holds, and the
//! lock it waits for with the transaction that holds it. The other sections of InnoDB's
//! report (semaphores, buffer pool, log) describe parts waterline does not have; its own
//! counters are in SHOW STATUS.

use std::fmt::Write;

use waterline_txn::Value;

use crate::session::{Context, Response};
use crate::system_views::{lock_data, lock_place};

/// The report: one row of `Type`, `Name`, `Status`, as InnoDB's.
pub(crate) fn show(s: &Context<'_>) -> Response {
    let engine = &s.shared().engine;
    let tables = engine.tables();
    let (locks, waits) = engine.data_locks();
    let mut out = String::new();
    let rule = "=====================================";
    let _ = writeln!(
        out,
        "\n{rule}\n{} WATERLINE ENGINE STATUS\n{rule}",
        s.now(0, true)
    );
    let _ = writeln!(out, "------------\nTRANSACTIONS\n------------");
    let _ = writeln!(out, "LIST OF TRANSACTIONS FOR EACH SESSION:");
    for p in s.shared().controls.processes() {
        let Some((open, id)) = p.trx else {
            continue;
        };
        let name = id.map_or_else(
            || "(no trx id yet: it has not written or locked)".to_owned(),
            |id| id.to_string(),
        );
        let _ = writeln!(
            out,
            "---TRANSACTION {name}, ACTIVE {} sec, {}{}",
            open.since.elapsed().as_secs(),
            open.isolation,
            if open.read_only { ", READ ONLY" } else { "" }
        );
        let mine: Vec<_> = (locks.iter()).filter(|l| Some(l.trx.get()) == id).collect();
        let held = mine.iter().filter(|l| !l.waiting).count();
        let _ = writeln!(out, "{held} lock(s) held");
        let doing = match &p.info {
            Some(_) => "executing",
            None => "waiting for its client",
        };
        let _ = writeln!(out, "MySQL thread id {}, user {}, {doing}", p.id, p.user);
        if let Some(info) = &p.info {
            let _ = writeln!(out, "{info}");
        }
        let Some(waiting) = mine.iter().find(|l| l.waiting) else {
            continue;
        };
        let (table, index) = lock_place(&tables, waiting);
        let (db, table) = crate::names::split(s.home(), &table);
        let _ = writeln!(
            out,
            "------- TRX HAS BEEN WAITING FOR THIS LOCK TO BE GRANTED:\n\
             lock mode {} on table `{db}`.`{table}` index {index}, key ({})",
            waiting.mode,
            lock_data(waiting.key.as_ref())
        );
        for wait in waits.iter().filter(|w| w.requesting.0 == waiting.id) {
            let _ = writeln!(
                out,
                "held by transaction {} (lock {})",
                wait.blocking.1.get(),
                wait.blocking.0
            );
        }
        let _ = writeln!(out, "------------------");
    }
    let _ = writeln!(
        out,
        "----------------------------\nEND OF WATERLINE ENGINE STATUS\n{rule}"
    );
    Response::text(
        &["Type", "Name", "Status"],
        vec![vec![
            Value::from("InnoDB"),
            Value::from(""),
            Value::from(out),
        ]],
    )
}
