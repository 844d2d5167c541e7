//! Range reads: scans of the clustered index and of secondary indexes, consistent or
//! locking, ascending or descending, with a limit.

use super::*;

impl Transaction {
    /// The rows whose primary key lies in `range`, ascending, as this transaction's view
    /// sees them. [`Transaction::scan_with`] does the rest: an index, a limit, descending,
    /// locking, and no copy.
    pub fn scan(&mut self, table: &Table, range: KeyRange) -> Result<Vec<(Key, Row)>, TxnError> {
        self.scan_with(table, range, ReadOptions::default(), copy_keyed_row)
    }

    /// `f` of each row whose key lies in `range`, as `options` say: the primary key, or the
    /// key in secondary index `options.index` (every hit rechecked against the row version
    /// this transaction reads); ascending or descending; up to `options.limit` rows;
    /// consistent, or locked and newest. `f` gets the primary key and the row in place: a
    /// scan that needs a few columns need not copy its rows (StockLevel reads one column of
    /// two hundred ORDER_LINE rows; the customer by last name copies no C_DATA). Pass
    /// [`copy_keyed_row`] to keep them whole.
    pub fn scan_with<T>(
        &mut self,
        table: &Table,
        range: KeyRange,
        options: ReadOptions<'_>,
        mut f: impl FnMut(&Key, &[Value]) -> T,
    ) -> Result<Vec<T>, TxnError> {
        let Some(index) = options.index else {
            return self.scan_primary(table, range, options, &mut f);
        };
        let schema = table.schema();
        let position = schema
            .indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(index))
            .ok_or_else(|| TxnError::NoSuchIndex {
                table: table.name().to_owned(),
                index: index.to_owned(),
            })?;
        let columns = &schema.indexes[position].columns;
        let range = range.try_map(|k| schema.check_key(columns, k))?;
        self.statement(|trx| {
            if let Some(mode) = options.lock
                && trx.locks_gaps()
            {
                let walk = Walk {
                    table,
                    index: Some(position),
                    range: &range,
                };
                return trx.lock_walk_rows(&walk, Some(columns), options, mode, &mut f);
            }
            let candidate = |(index_key, pk)| (Some(index_key), pk, None);
            if options.reverse {
                let candidates = table.index_entries_rev(position, &range).map(candidate);
                trx.read_candidates(table, candidates, Some(columns), options, &mut f)
            } else {
                let candidates = table.index_entries(position, &range).map(candidate);
                trx.read_candidates(table, candidates, Some(columns), options, &mut f)
            }
        })
    }

    fn scan_primary<T>(
        &mut self,
        table: &Table,
        range: KeyRange,
        options: ReadOptions<'_>,
        f: &mut dyn FnMut(&Key, &[Value]) -> T,
    ) -> Result<Vec<T>, TxnError> {
        let range = range.try_map(|k| table.check_primary_key(k))?;
        self.statement(|trx| {
            if let Some(mode) = options.lock
                && trx.locks_gaps()
            {
                let walk = Walk {
                    table,
                    index: None,
                    range: &range,
                };
                return trx.lock_walk_rows(&walk, None, options, mode, f);
            }
            let candidate = |(pk, record)| (None, pk, Some(record));
            if options.reverse {
                let candidates = table.keys_in_rev(&range).map(candidate);
                trx.read_candidates(table, candidates, None, options, f)
            } else {
                let candidates = table.keys_in(&range).map(candidate);
                trx.read_candidates(table, candidates, None, options, f)
            }
        })
    }

    /// Reads `(index key of a secondary index walk, primary key, record if the walk has it)`
    /// candidates: with the view, or locked and newest (looked up again after the lock), and
    /// returns `f` of each row read. With `columns`, a row counts only if its values there
    /// still equal the index key.
    fn read_candidates<T>(
        &mut self,
        table: &Table,
        candidates: impl Iterator<Item = (Option<Key>, Key, Option<RecordRef>)>,
        columns: Option<&Vec<usize>>,
        options: ReadOptions<'_>,
        f: &mut dyn FnMut(&Key, &[Value]) -> T,
    ) -> Result<Vec<T>, TxnError> {
        let still_matches = |index_key: &Option<Key>, row: &[Value]| match (columns, index_key) {
            (Some(columns), Some(index_key)) => project(row, columns) == *index_key,
            _ => true,
        };
        if options.limit == Some(0) {
            return Ok(Vec::new());
        }
        let mut rows = Vec::new();
        // Takes the row `version` holds, if it still matches; says whether the walk is done.
        let mut take = |pk: &Key, index_key: &Option<Key>, version: Option<Version>| {
            let row = version.as_ref().and_then(Version::row);
            if let Some(row) = row.filter(|r| still_matches(index_key, r)) {
                rows.push(f(pk, row));
            }
            options.limit.is_some_and(|n| rows.len() >= n)
        };
        match options.lock {
            None => {
                let me = self.id;
                let view = self.read_view();
                for (index_key, pk, record) in candidates {
                    let record = record.or_else(|| table.record(&pk));
                    let version = record.and_then(|r| r.visible_version(view, me));
                    if take(&pk, &index_key, version) {
                        break;
                    }
                }
            }
            Some(mode) => {
                // Lazily: a walk may wait for a lock between two steps, which is safe because
                // the skip list pins its epoch inside each `next()` and holds only a
                // ref-counted entry in between; and a limited walk (Delivery's oldest
                // NEW_ORDER) stops after its first rows instead of copying every key.
                for (index_key, pk, _) in candidates {
                    let version = match self.lock_scanned(table, &pk, mode, options.wait) {
                        Err(TxnError::LockNowait { .. })
                            if options.wait == LockWait::SkipLocked =>
                        {
                            continue;
                        }
                        version => version?,
                    };
                    if take(&pk, &index_key, version) {
                        break;
                    }
                }
            }
        }
        Ok(rows)
    }
}
