//! The group-commit pipeline with real threads and a real log: every commit is written,
//! published once and in log order, durable before it is published, and the counters add up.

use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use tempfile::TempDir;
use waterline_commit::{
    CommitError, FlushPolicy, GroupCommit, GroupCommitConfig, Lsn, MAX_PAYLOAD_BYTES, TrxTag,
    Wakeup, Wal, WalConfig, scan,
};

fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("waterline-group-")
        .tempdir()
        .expect("a temporary directory")
}

/// A pipeline over a log in `dir` (or none) whose publish callback records the tags it
/// publishes, in order.
fn pipeline(
    dir: Option<&TempDir>,
    flush: FlushPolicy,
    config: GroupCommitConfig,
) -> (Arc<GroupCommit<u64>>, Arc<Mutex<Vec<u64>>>) {
    let wal = dir.map(|dir| {
        let config = WalConfig {
            segment_bytes: 4096,
            flush,
            ..WalConfig::default()
        };
        Wal::open(dir.path(), config).expect("a log").0
    });
    let published = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&published);
    let pipeline = GroupCommit::new(
        config,
        wal,
        Box::new(move |group: Vec<u64>| {
            sink.lock().unwrap().extend(group);
            Ok(())
        }),
    );
    (Arc::new(pipeline), published)
}

/// `threads` threads commit `each` items each (tag = item = thread * 1000 + i), starting
/// together; returns each commit's LSN.
fn commit_from_threads(pipeline: &GroupCommit<u64>, threads: u64, each: u64) -> Vec<(u64, Lsn)> {
    let start = Barrier::new(threads as usize);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    (0..each)
                        .map(|i| {
                            let item = t * 1000 + i;
                            let payload = item.to_le_bytes().repeat(8);
                            (item, pipeline.commit(TrxTag(item), payload, item).unwrap())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

fn publishes_every_commit_once_in_log_order(wakeup: Wakeup) {
    let dir = temp_dir();
    let config = GroupCommitConfig {
        wakeup,
        ..GroupCommitConfig::default()
    };
    let (pipeline, published) = pipeline(Some(&dir), FlushPolicy::EveryCommit, config);
    let lsns = commit_from_threads(&pipeline, 16, 40);

    let log = scan(dir.path()).unwrap();
    let logged: Vec<u64> = log.records.iter().map(|r| r.trx.0).collect();
    assert_eq!(*published.lock().unwrap(), logged, "published in log order");
    assert_eq!(logged.len(), 16 * 40);
    for (item, lsn) in lsns {
        let record = log.records.iter().find(|r| r.lsn == lsn).unwrap();
        assert_eq!(record.trx, TrxTag(item), "commit returns its record's LSN");
    }
    assert_eq!(
        pipeline.with_publishing_paused(|end| end),
        log.end,
        "everything published"
    );

    let stats = pipeline.stats();
    assert_eq!((stats.commits, stats.failed), (640, 0));
    assert_eq!(stats.group_sizes.iter().sum::<u64>(), stats.groups);
    assert!(stats.fsyncs <= stats.groups && stats.fsyncs > 0);
    assert!(stats.followers < stats.commits, "every group has a leader");
    assert_eq!(
        stats.wakes_per_follower.iter().sum::<u64>(),
        stats.followers
    );
    if wakeup == Wakeup::Parker {
        assert_eq!(stats.wasted_wakeups, 0);
        assert!(stats.wakeup_efficiency().is_none_or(|e| e == 1.0));
    }
}

#[test]
fn parker_publishes_every_commit_once_in_log_order() {
    publishes_every_commit_once_in_log_order(Wakeup::Parker);
}

#[test]
fn broadcast_publishes_every_commit_once_in_log_order() {
    publishes_every_commit_once_in_log_order(Wakeup::Broadcast);
}

#[test]
fn a_commit_is_in_the_log_before_it_is_published() {
    let dir = temp_dir();
    let wal = Wal::open(dir.path(), WalConfig::default()).unwrap().0;
    let path = dir.path().to_owned();
    let pipeline = GroupCommit::new(
        GroupCommitConfig::default(),
        Some(wal),
        Box::new(move |group: Vec<u64>| {
            let logged: Vec<u64> = scan(&path)
                .unwrap()
                .records
                .iter()
                .map(|r| r.trx.0)
                .collect();
            match group.iter().all(|item| logged.contains(item)) {
                true => Ok(()),
                false => Err(format!("{group:?} published before it was logged")),
            }
        }),
    );
    commit_from_threads(&pipeline, 4, 10);
    assert_eq!(pipeline.stats().commits, 40);
}

#[test]
fn without_a_log_the_stages_still_group_and_publish() {
    let (pipeline, published) = pipeline(None, FlushPolicy::None, GroupCommitConfig::default());
    let lsns = commit_from_threads(&pipeline, 8, 50);
    assert!(lsns.iter().all(|(_, lsn)| *lsn == Lsn::START));
    assert_eq!(published.lock().unwrap().len(), 400);
    let stats = pipeline.stats();
    assert_eq!((stats.commits, stats.fsyncs, stats.bytes), (400, 0, 0));
    assert_eq!(pipeline.log_end(), Lsn::START);
}

#[test]
fn the_sync_delay_ends_once_enough_commits_are_queued() {
    let dir = temp_dir();
    let config = GroupCommitConfig {
        // Long enough that the test would visibly hang if the count did not end the wait.
        sync_delay: Duration::from_secs(600),
        sync_no_delay_count: 4,
        ..GroupCommitConfig::default()
    };
    let (pipeline, _) = pipeline(Some(&dir), FlushPolicy::EveryCommit, config);
    commit_from_threads(&pipeline, 4, 1);
    let stats = pipeline.stats();
    assert_eq!(
        (stats.commits, stats.fsyncs),
        (4, 1),
        "one fsync for all four"
    );
}

/// A group logged but not published: the log has records the engine's state lacks, and a
/// later commit might have built on the group (early lock release). Going on would commit
/// what a restart, replaying the log, would not reproduce; so the pipeline stops.
#[test]
fn a_failed_publish_fails_its_group_and_stops_the_pipeline() {
    let pipeline = GroupCommit::new(
        GroupCommitConfig::default(),
        None,
        Box::new(|group: Vec<u64>| match group.contains(&13) {
            true => Err("13 is unlucky".to_owned()),
            false => Ok(()),
        }),
    );
    let (error, later) = fails_then_stops(&pipeline, 13);
    assert!(matches!(error, CommitError::Publish(ref m) if m == "13 is unlucky"));
    assert!(later.to_string().contains("13 is unlucky"), "{later}");
    let stats = pipeline.stats();
    assert_eq!((stats.commits, stats.failed), (0, 2));
}

#[test]
fn a_panicking_publish_fails_the_group_instead_of_stranding_it() {
    let pipeline = GroupCommit::new(
        GroupCommitConfig::default(),
        None,
        Box::new(|group: Vec<u64>| match group.contains(&7) {
            true => panic!("publish callback bug"),
            false => Ok(()),
        }),
    );
    let (error, _) = fails_then_stops(&pipeline, 7);
    assert!(matches!(error, CommitError::Publish(_)), "{error}");
}

/// Commits `bad`, which fails, then `bad + 1`, which must fail as stopped: both errors.
fn fails_then_stops(pipeline: &GroupCommit<u64>, bad: u64) -> (CommitError, CommitError) {
    let error = pipeline.commit(TrxTag(bad), Vec::new(), bad).unwrap_err();
    let later = pipeline
        .commit(TrxTag(bad + 1), Vec::new(), bad + 1)
        .unwrap_err();
    assert!(matches!(later, CommitError::Stopped(_)), "{later}");
    (error, later)
}

/// The written hook (early lock release) sees every item once its record is written,
/// before the sync and before the item is published, in log order; a panicking hook fails
/// its group and stops the pipeline.
#[test]
fn the_written_hook_runs_for_each_item_in_log_order_before_its_publish() {
    let dir = temp_dir();
    let events = Arc::new(Mutex::new(Vec::new()));
    let (written, published) = (Arc::clone(&events), Arc::clone(&events));
    let wal = Wal::open(
        dir.path(),
        WalConfig {
            segment_bytes: 1 << 20,
            flush: FlushPolicy::EveryCommit,
            ..WalConfig::default()
        },
    )
    .unwrap()
    .0;
    let pipeline = GroupCommit::new(
        GroupCommitConfig::default(),
        Some(wal),
        Box::new(move |group: Vec<u64>| {
            let mut events = published.lock().unwrap();
            events.extend(group.into_iter().map(|item| ("published", item)));
            Ok(())
        }),
    )
    .on_written(Box::new(move |item: &mut u64, _| {
        written.lock().unwrap().push(("written", *item));
    }));
    let lsns = commit_from_threads(&pipeline, 4, 50);
    let events = events.lock().unwrap().clone();
    let mut by_lsn = lsns.clone();
    by_lsn.sort_by_key(|&(_, lsn)| lsn);
    let in_log_order: Vec<u64> = by_lsn.iter().map(|&(item, _)| item).collect();
    let of =
        |kind: &str| -> Vec<u64> { events.iter().filter(|e| e.0 == kind).map(|e| e.1).collect() };
    assert_eq!(of("written"), in_log_order, "written in log order");
    assert_eq!(of("published"), in_log_order, "published in log order");
    for (item, _) in &lsns {
        let at = |kind: &str| events.iter().position(|e| *e == (kind, *item)).unwrap();
        assert!(
            at("written") < at("published"),
            "{item} published before written"
        );
    }

    let failing: GroupCommit<u64> = GroupCommit::new(
        GroupCommitConfig::default(),
        None,
        Box::new(|_: Vec<u64>| Ok(())),
    )
    .on_written(Box::new(|item: &mut u64, _| {
        assert_ne!(*item, 5, "hook bug")
    }));
    let (error, _) = fails_then_stops(&failing, 5);
    assert!(matches!(error, CommitError::Log(_)), "{error}");
}

#[test]
fn an_oversized_record_is_refused_before_it_reaches_the_log() {
    let dir = temp_dir();
    let (pipeline, published) = pipeline(Some(&dir), FlushPolicy::Os, GroupCommitConfig::default());
    let huge = vec![0; MAX_PAYLOAD_BYTES + 1];
    assert!(matches!(
        pipeline.commit(TrxTag(1), huge, 1),
        Err(CommitError::TooLarge { .. })
    ));
    pipeline.commit(TrxTag(2), vec![1, 2, 3], 2).unwrap();
    assert_eq!(*published.lock().unwrap(), [2]);
    assert_eq!(scan(dir.path()).unwrap().records.len(), 1);
}
