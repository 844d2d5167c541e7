//! Id newtypes: [`TrxId`] (InnoDB's `trx_id_t`) and [`Csn`] (a commit sequence number).
//!
//! Both are plain `u64`s inside, but they are different things and must not be mixed up: a
//! transaction id is handed out when a transaction first writes, a CSN when it commits. The
//! type system keeps them apart; `next()` is checked so that an exhausted counter is an error,
//! never a silent wrap-around to an id that means "visible to everyone".

use std::fmt;

/// `n + 1`, unless that is `u64::MAX`, which both id kinds reserve.
const fn checked_next(n: u64) -> Option<u64> {
    match n.checked_add(1) {
        Some(next) if next < u64::MAX => Some(next),
        _ => None,
    }
}

/// A read-write transaction's id: InnoDB's `trx_id_t`.
///
/// Ids are handed out in increasing order by the transaction system, on a transaction's first
/// write (read-only transactions never get one). `0` is never a valid id (InnoDB asserts
/// `id > 0` in `changes_visible`); [`TrxId::MAX`] is reserved to mean "no creator", as InnoDB's
/// `TRX_ID_MAX` does for views that belong to no read-write transaction.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TrxId(pub u64);

impl TrxId {
    /// The first id a transaction system hands out.
    pub const FIRST: TrxId = TrxId(1);
    /// InnoDB's `TRX_ID_MAX`: never handed out; a view whose creator is this sees no
    /// transaction of its own.
    pub const MAX: TrxId = TrxId(u64::MAX);

    /// The id after this one, or `None` if the id space is exhausted (the next id would be
    /// [`TrxId::MAX`], which is reserved).
    #[must_use]
    pub const fn next(self) -> Option<TrxId> {
        match checked_next(self.0) {
            Some(n) => Some(TrxId(n)),
            None => None,
        }
    }

    /// The raw value, for logging and for on-disk formats.
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Debug for TrxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == TrxId::MAX {
            f.write_str("trx#MAX")
        } else {
            write!(f, "trx#{}", self.0)
        }
    }
}

impl fmt::Display for TrxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A commit sequence number: the position of a commit in the total order of commits.
///
/// CSN `0` ([`Csn::ZERO`]) is "before every commit": a snapshot taken on an empty system
/// carries it. The first commit gets CSN `1`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Csn(pub u64);

impl Csn {
    /// Before every commit.
    pub const ZERO: Csn = Csn(0);

    /// The CSN after this one, or `None` if the space is exhausted. `u64::MAX` is reserved
    /// (the CSN log uses it to mark "still active").
    #[must_use]
    pub const fn next(self) -> Option<Csn> {
        match checked_next(self.0) {
            Some(n) => Some(Csn(n)),
            None => None,
        }
    }

    /// The raw value.
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Debug for Csn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "csn#{}", self.0)
    }
}

impl fmt::Display for Csn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_checked() {
        assert_eq!(TrxId(1).next(), Some(TrxId(2)));
        assert_eq!(TrxId(u64::MAX - 2).next(), Some(TrxId(u64::MAX - 1)));
        assert_eq!(TrxId(u64::MAX - 1).next(), None, "MAX is reserved");
        assert_eq!(TrxId::MAX.next(), None);
        assert_eq!(Csn::ZERO.next(), Some(Csn(1)));
        assert_eq!(Csn(u64::MAX - 1).next(), None);
    }

    #[test]
    fn debug_names_the_kind() {
        assert_eq!(format!("{:?}", TrxId(7)), "trx#7");
        assert_eq!(format!("{}", TrxId::MAX), "trx#MAX");
        assert_eq!(format!("{:?}", Csn(3)), "csn#3");
    }
}
