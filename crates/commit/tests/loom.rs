//! loom models of the leader/follower hand-off (`group.rs`), for both wake-up strategies.
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p waterline-commit --test loom --release`.
//!
//! Three committers go through the whole pipeline (no log: the stages, queues and wake-ups
//! are what is modelled). In every interleaving loom explores: nobody sleeps forever (a lost
//! wake-up would be reported as a deadlock), every commit returns only after its item was
//! published, each item is published once, in one order, and with `Parker` no follower is
//! woken more than once or in vain.
//!
//! Checked against two mutants of `signal_done`, both reported as deadlocks (lost
//! wake-ups): `Broadcast` setting the outcomes without holding the shared mutex, and
//! `Parker` notifying before setting the outcome.
#![cfg(loom)]

use std::sync::Mutex as StdMutex;

use loom::sync::Arc;
use waterline_commit::{GroupCommit, GroupCommitConfig, TrxTag, Wakeup};

fn model(wakeup: Wakeup) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(move || {
        let published = Arc::new(StdMutex::new(Vec::new()));
        let sink = Arc::clone(&published);
        let config = GroupCommitConfig {
            wakeup,
            ..GroupCommitConfig::default()
        };
        let pipeline = Arc::new(GroupCommit::new(
            config,
            None,
            Box::new(move |group: Vec<u64>| {
                sink.lock().unwrap().extend(group);
                Ok(())
            }),
        ));
        let committers: Vec<_> = (1..=2u64)
            .map(|item| {
                let (pipeline, published) = (Arc::clone(&pipeline), Arc::clone(&published));
                loom::thread::spawn(move || {
                    pipeline.commit(TrxTag(item), Vec::new(), item).unwrap();
                    assert!(
                        published.lock().unwrap().contains(&item),
                        "returned unpublished"
                    );
                })
            })
            .collect();
        pipeline.commit(TrxTag(3), Vec::new(), 3).unwrap();
        assert!(
            published.lock().unwrap().contains(&3),
            "returned unpublished"
        );
        for committer in committers {
            committer.join().unwrap();
        }
        let mut all = published.lock().unwrap().clone();
        all.sort_unstable();
        assert_eq!(all, [1, 2, 3], "each item published exactly once");

        let stats = pipeline.stats();
        assert_eq!(stats.commits, 3);
        if wakeup == Wakeup::Parker {
            assert_eq!(stats.wasted_wakeups, 0, "a parker wake-up always releases");
            assert!(
                stats.wakes_per_follower[2..].iter().all(|&n| n == 0),
                "no follower is woken twice: {stats:?}"
            );
        }
    });
}

#[test]
fn parker_wakes_each_follower_at_most_once_and_never_in_vain() {
    model(Wakeup::Parker);
}

#[test]
fn broadcast_never_loses_a_wake_up() {
    model(Wakeup::Broadcast);
}

/// Early lock release's hand-off: the written hook "releases" item 1 (sets a flag) once its
/// record is written; a second committer waits for that flag, as a lock waiter would, and
/// only then commits item 2, which built on 1. In every interleaving: 2 is published after
/// 1 (a commit that built on a released one is never visible before it), each item is
/// released before it is published, and a commit returns only once published.
#[test]
fn a_commit_that_waited_for_a_release_is_published_after_the_released_one() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        use loom::sync::atomic::{AtomicBool, Ordering};
        let events = Arc::new(StdMutex::new(Vec::new()));
        let released = Arc::new(AtomicBool::new(false));
        let (sink, log, flag) = (
            Arc::clone(&events),
            Arc::clone(&events),
            Arc::clone(&released),
        );
        let pipeline = Arc::new(
            GroupCommit::new(
                GroupCommitConfig::default(),
                None,
                Box::new(move |group: Vec<u64>| {
                    sink.lock()
                        .unwrap()
                        .extend(group.into_iter().map(|i| ("published", i)));
                    Ok(())
                }),
            )
            .on_written(Box::new(move |item: &mut u64, _| {
                log.lock().unwrap().push(("released", *item));
                if *item == 1 {
                    flag.store(true, Ordering::Release);
                }
            })),
        );
        let waiter = {
            let (pipeline, released) = (Arc::clone(&pipeline), Arc::clone(&released));
            loom::thread::spawn(move || {
                while !released.load(Ordering::Acquire) {
                    loom::thread::yield_now();
                }
                pipeline.commit(TrxTag(2), Vec::new(), 2).unwrap();
            })
        };
        pipeline.commit(TrxTag(1), Vec::new(), 1).unwrap();
        assert!(events.lock().unwrap().contains(&("published", 1)));
        waiter.join().unwrap();
        let events = events.lock().unwrap().clone();
        let at = |e: (&str, u64)| events.iter().position(|x| *x == e).unwrap();
        assert!(at(("published", 1)) < at(("published", 2)), "{events:?}");
        for item in [1, 2] {
            assert!(
                at(("released", item)) < at(("published", item)),
                "{events:?}"
            );
        }
    });
}
