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

/// A transaction that did not run to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Rolled back by the system; running it again can succeed.
    Retry(RetryReason),
    /// Anything else: an error the run reports and stops on.
    Fatal(String),
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
