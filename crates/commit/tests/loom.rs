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
