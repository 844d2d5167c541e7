//! Typed errors. None of them is retryable: each says that the caller broke the contract of the
//! active set (ids out of order, ending a transaction twice) or configured it wrongly.

use crate::{Csn, TrxId};

/// A call on an active set (vector, hybrid, or the CSN log) that breaks its contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActiveSetError {
    /// Ids enter the active set in increasing order (the transaction system hands them out
    /// under its latch); this one is not above the high-water mark.
    #[error("{id} cannot begin: ids must increase, and the next free id is {low_limit_id}")]
    NotIncreasing {
        /// The id that was offered.
        id: TrxId,
        /// The active set's high-water mark (`low_limit_id`): the smallest id it accepts.
        low_limit_id: TrxId,
    },
    /// `0` and [`TrxId::MAX`] are never transaction ids.
    #[error("{id} is reserved and is never a transaction id")]
    Reserved {
        /// The id that was offered.
        id: TrxId,
    },
    /// Ending (commit or rollback) a transaction that is not active.
    #[error("{id} is not active: it never began, or it already ended")]
    NotActive {
        /// The id that was offered.
        id: TrxId,
    },
    /// The CSN counter reached its end.
    #[error("commit sequence numbers exhausted after {last}")]
    CsnExhausted {
        /// The last CSN handed out.
        last: Csn,
    },
}

/// A structure was configured with a size it cannot have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Bitmap windows are made of 64-bit words.
    #[error("a bitmap window of {bytes} bytes: it must be a positive multiple of 8 bytes")]
    Window {
        /// The size asked for.
        bytes: usize,
    },
    /// The hybrid global window is a ring indexed with a mask.
    #[error("a global bitmap window of {bytes} bytes: it must be a power of two, at least 8 bytes")]
    GlobalWindow {
        /// The size asked for.
        bytes: usize,
    },
    /// The CSN ring is indexed by `id % capacity`.
    #[error("a CSN ring of {slots} slots: it must be a power of two, at least 2")]
    CsnRing {
        /// The size asked for.
        slots: usize,
    },
}

/// Checks that `id` may begin in a set whose next free id is `low_limit_id`: shared by every
/// active set's `insert` and the CSN log's `begin`.
pub(crate) fn check_begin(id: TrxId, low_limit_id: TrxId) -> Result<(), ActiveSetError> {
    if id.0 == 0 || id == TrxId::MAX {
        Err(ActiveSetError::Reserved { id })
    } else if id < low_limit_id {
        Err(ActiveSetError::NotIncreasing { id, low_limit_id })
    } else {
        Ok(())
    }
}
