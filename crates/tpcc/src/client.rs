//! What a driver client is: something that runs one transaction's input to its end, and how
//! that can end.

use crate::input::Input;

/// How a transaction ended, when it ran to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Committed.
    Committed,
    /// Rolled back on purpose: a NewOrder with an unused item id (spec 2.4.2.3).
    RolledBack,
}

/// Why a retryable failure happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryReason {
    /// Chosen as a deadlock victim (MySQL error 1213).
    Deadlock,
    /// Waited too long for a row lock (1205).
    LockWaitTimeout,
}

impl std::fmt::Display for RetryReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RetryReason::Deadlock => "deadlock victim (1213)",
            RetryReason::LockWaitTimeout => "lock wait timeout (1205)",
        })
    }
}

/// A transaction that did not run to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Rolled back by the system; running it again can succeed.
    Retry(RetryReason),
    /// Anything else: an error the run reports and stops on.
    Fatal(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Retry(reason) => write!(f, "{reason}, retryable"),
            Failure::Fatal(message) => f.write_str(message),
        }
    }
}

impl From<waterline_txn::TxnError> for Failure {
    fn from(e: waterline_txn::TxnError) -> Failure {
        match e {
            waterline_txn::TxnError::Deadlock { .. } => Failure::Retry(RetryReason::Deadlock),
            waterline_txn::TxnError::LockWaitTimeout { .. } => {
                Failure::Retry(RetryReason::LockWaitTimeout)
            }
            other => Failure::Fatal(other.to_string()),
        }
    }
}

impl Failure {
    /// The failure for a MySQL error code and message.
    pub fn from_code(code: u16, message: &str) -> Failure {
        match code {
            1213 => Failure::Retry(RetryReason::Deadlock),
            1205 => Failure::Retry(RetryReason::LockWaitTimeout),
            _ => Failure::Fatal(format!("error {code}: {message}")),
        }
    }
}

/// One connection's worth of client: runs inputs, one transaction at a time.
pub trait Client: Send {
    /// Runs `input` as one transaction. On any failure the transaction is rolled back.
    fn run(&mut self, input: &Input) -> Result<Outcome, Failure>;
}

/// A client that runs as a tokio task: a transaction may wait (for admission, for a
/// server's replies) without holding a thread. The SQL clients are written once, this way,
/// and run on OS threads through [`OnThread`].
pub trait AsyncClient: Close + Send + 'static {
    /// Runs `input` as one transaction. On any failure the transaction is rolled back.
    fn run(&mut self, input: &Input) -> impl Future<Output = Result<Outcome, Failure>> + Send;
}

/// Something to end cleanly: a MySQL connection says goodbye (COM_QUIT) rather than drop its
/// socket, which a server logs as an aborted connection.
pub trait Close: Sized + Send {
    /// Ends it. By default dropping it does: a session rolls back what is open, the blocking
    /// `mysql` crate's connection says goodbye as it drops.
    fn close(self) -> impl Future<Output = ()> + Send {
        drop(self);
        std::future::ready(())
    }
}

/// An async connection or client driven from one OS thread: a single-threaded tokio runtime
/// of its own runs each call to its end, parking the thread where a task would yield (an
/// embedded session waiting for the engine's admission at BEGIN).
pub struct OnThread<T: Close> {
    inner: Option<T>,
    runtime: tokio::runtime::Runtime,
}

impl<T: Close> OnThread<T> {
    /// Opens with `open`, on a new runtime.
    pub fn open(open: impl AsyncFnOnce() -> Result<T, Failure>) -> Result<OnThread<T>, Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Fatal(format!("a tokio runtime: {e}")))?;
        let inner = runtime.block_on(open())?;
        Ok(OnThread {
            inner: Some(inner),
            runtime,
        })
    }

    /// Runs `f` on it to its end.
    pub fn run<R>(&mut self, f: impl AsyncFnOnce(&mut T) -> R) -> R {
        let inner = self.inner.as_mut().expect("open until dropped");
        self.runtime.block_on(f(inner))
    }
}

impl<T: Close> Drop for OnThread<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            self.runtime.block_on(inner.close());
        }
    }
}

impl<C: AsyncClient> Client for OnThread<C> {
    fn run(&mut self, input: &Input) -> Result<Outcome, Failure> {
        OnThread::run(self, async |client| client.run(input).await)
    }
}
