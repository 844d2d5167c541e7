//! The thread-pool baseline: `n` worker threads take queued requests in FIFO order and run
//! each to its end, as a thread pool (Percona's, in the book's 8.3.1) runs its connections'
//! statements. What a request is, the caller decides: a statement (then the pool limits the
//! threads working, not the transactions inside, as Percona's does) or a whole transaction
//! (then it is `Limit(n)` plus a hand-off to another thread and back).

use std::panic::{self, AssertUnwindSafe};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

/// A queued transaction.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// The workers and the queue they take jobs from.
#[derive(Debug)]
pub(crate) struct ThreadPool {
    queue: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl ThreadPool {
    pub(crate) fn new(threads: usize) -> ThreadPool {
        let (queue, jobs): (Sender<Job>, Receiver<Job>) = crossbeam_channel::unbounded();
        let workers = (0..threads)
            .map(|i| {
                let jobs = jobs.clone();
                std::thread::Builder::new()
                    .name(format!("waterline-pool-{i}"))
                    .spawn(move || {
                        for job in jobs {
                            // A job reports its own panic to its submitter (`Admission::run`);
                            // the worker lives on.
                            let _ = panic::catch_unwind(AssertUnwindSafe(job));
                        }
                    })
                    .expect("a pool worker can be spawned")
            })
            .collect();
        ThreadPool {
            queue: Some(queue),
            workers,
        }
    }

    pub(crate) fn submit(&self, job: Job) {
        if let Some(queue) = &self.queue {
            // The receivers live as long as the workers, which live as long as `self`.
            let _ = queue.send(job);
        }
    }

    pub(crate) fn threads(&self) -> usize {
        self.workers.len()
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        // Closing the queue ends every worker once it has run what was queued.
        self.queue.take();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}
