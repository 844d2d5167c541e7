//! What the engine writes into a log record's payload, and reads back at recovery.
//!
//! A committed transaction is one record: all its row images, so a crash can never leave
//! half of it in the log (the record is whole and checksummed, or it is not replayed). A
//! `CREATE TABLE` is a record of its own, written before the table can be used. A checkpoint
//! image uses the same entries (`recovery.rs`).
//!
//! ```text
//!  entry   := 1 commit  | 2 create-table | 3 image-end | 4 create-index | 5 drop-table
//!             | 6 u32 table, str attributes | 7 str engine attributes
//!             | 8 u32 table, str new name | 9 u32 dropped table, u32 table taking its name
//!  commit  := u32 n, n × (u32 table, key, u8 has_after, [row])
//!  key,row := u16 n, n × value
//!  value   := 0 NULL | 1 i64 | 2 i128 units u8 scale | 3 f64 bits | 4 str | 5 i64 datetime
//!  str     := u32 len, UTF-8 bytes                 (all integers little-endian)
//!  create  := str name, u16 n, n × (str name, type, u8 nullable),
//!             u8 has_pk, [u16 n, n × u16 column], u16 n, n × (str name, u16 n, n × u16, u8 unique)
//!  type    := 1 INT | 2 BIGINT | 3 u8 p u8 s DECIMAL | 4 u32 CHAR | 5 u32 VARCHAR
//!             | 6 DATETIME | 7 DOUBLE
//!  end     := u64 wal_lsn, u64 rows                (the last entry of a checkpoint image)
//! ```

use std::fmt;

use crate::error::TxnError;
use crate::key::Key;
use crate::schema::{Column, ColumnType, IndexDef, TableSchema};
use crate::table_id::TableId;
use crate::value::{DateTime, Decimal, Row, Value};

/// One logical change, as the log records it: the row image after the change, by key.
#[derive(Clone, Debug, PartialEq)]
pub struct RedoRecord {
    /// The table.
    pub table: TableId,
    /// The row's primary key (or hidden row id).
    pub key: Key,
    /// The row after the change; `None` for a delete.
    pub after: Option<Row>,
}

/// A transaction's changes as its commit's log record carries them, encoded change by change
/// as the transaction makes them (the `commit` entry above): a commit hands the log
/// the bytes it writes, with no copy of a row image on the way (InnoDB's mini-transactions
/// write redo into their log buffer as they go, likewise). Empty for a transaction whose
/// pipeline keeps nothing ([`crate::CommitPipeline::wants_redo`]).
#[derive(Clone, Default, PartialEq)]
pub struct Redo {
    /// The entry so far: its kind and a change count (written in [`Redo::into_payload`]),
    /// then the changes; nothing before the first change.
    bytes: Vec<u8>,
    changes: u32,
}

/// Where a savepoint found a transaction's [`Redo`]: changes after it are undone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RedoMark {
    bytes: usize,
    changes: u32,
}

impl Redo {
    /// Room for a small transaction's changes (a sysbench write_only transaction's four rows
    /// are some 800 bytes), so that most commits allocate their record once.
    const FIRST_CAPACITY: usize = 1024;

    /// How many changes it holds.
    pub fn len(&self) -> usize {
        self.changes as usize
    }

    /// Whether it holds no change.
    pub fn is_empty(&self) -> bool {
        self.changes == 0
    }

    /// The changes, decoded (for a pipeline or a test that looks at them).
    pub fn records(&self) -> Result<Vec<RedoRecord>, TxnError> {
        match Entry::decode(&self.clone().into_payload())? {
            Entry::Commit(records) => Ok(records),
            _ => Err(TxnError::Durability(
                "a redo buffer holds something other than a commit".to_owned(),
            )),
        }
    }

    /// Adds one change: the row under `key` of `table` becomes `after` (`None`: deleted).
    pub(crate) fn push(&mut self, table: TableId, key: &Key, after: Option<&[Value]>) {
        if self.bytes.is_empty() {
            self.bytes.reserve(Self::FIRST_CAPACITY);
            start_commit(&mut self.bytes);
        }
        put_change(&mut self.bytes, table, key, after);
        self.changes += 1;
    }

    pub(crate) fn mark(&self) -> RedoMark {
        RedoMark {
            bytes: self.bytes.len(),
            changes: self.changes,
        }
    }

    /// Forgets the changes made after `mark`.
    pub(crate) fn truncate(&mut self, mark: RedoMark) {
        if mark.changes < self.changes {
            self.bytes.truncate(mark.bytes);
            self.changes = mark.changes;
        }
    }

    /// The log record's payload: the whole `commit` entry.
    pub fn into_payload(mut self) -> Vec<u8> {
        if self.bytes.is_empty() {
            start_commit(&mut self.bytes);
        }
        finish_commit(&mut self.bytes, self.changes);
        self.bytes
    }
}

impl fmt::Debug for Redo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redo")
            .field("changes", &self.changes)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// One log or image entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Entry {
    /// A committed transaction's changes (or, in an image, a chunk of a table's rows).
    Commit(Vec<RedoRecord>),
    /// A new table; its id is the number of tables created before it.
    CreateTable(TableSchema),
    /// CREATE INDEX on table `table` (its id): the index is the schema's new last one.
    CreateIndex {
        /// The table's id.
        table: TableId,
        /// The index.
        index: IndexDef,
    },
    /// The attributes a layer above keeps with table `table` (`Engine::set_table_attributes`).
    Attributes {
        /// The table's id.
        table: TableId,
        /// The text, as set.
        text: String,
    },
    /// DROP TABLE of table `0` (its id stays taken).
    DropTable(TableId),
    /// The attributes a layer above keeps with the engine (`Engine::set_attributes`).
    EngineAttributes(String),
    /// ALTER TABLE's swap: table `old` is dropped and table `new` takes its name, at once.
    ReplaceTable {
        /// The table dropped.
        old: TableId,
        /// The table that takes its name.
        new: TableId,
    },
    /// RENAME TABLE: table `table` (its id) is named `name` from now on.
    RenameTable {
        /// The table's id.
        table: TableId,
        /// Its new name.
        name: String,
    },
    /// The end of a checkpoint image: the LSN replay starts at, and the rows it holds.
    ImageEnd {
        /// Replay starts here.
        wal_lsn: u64,
        /// Rows in the image (a check on the reader).
        rows: u64,
    },
}

impl Entry {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Entry::Commit(records) => {
                start_commit(&mut out);
                for record in records {
                    put_change(&mut out, record.table, &record.key, record.after.as_deref());
                }
                finish_commit(&mut out, records.len() as u32);
            }
            Entry::CreateTable(schema) => {
                out.push(2);
                put_schema(&mut out, schema);
            }
            Entry::CreateIndex { table, index } => {
                out.push(4);
                out.extend_from_slice(&table.0.to_le_bytes());
                put_str(&mut out, &index.name);
                put_u16(&mut out, index.columns.len());
                for &c in &index.columns {
                    put_u16(&mut out, c);
                }
                out.push(u8::from(index.unique));
            }
            Entry::Attributes { table, text } => {
                out.push(6);
                out.extend_from_slice(&table.0.to_le_bytes());
                put_str(&mut out, text);
            }
            Entry::DropTable(table) => {
                out.push(5);
                out.extend_from_slice(&table.0.to_le_bytes());
            }
            Entry::EngineAttributes(text) => {
                out.push(7);
                put_str(&mut out, text);
            }
            Entry::RenameTable { table, name } => {
                out.push(8);
                out.extend_from_slice(&table.0.to_le_bytes());
                put_str(&mut out, name);
            }
            Entry::ReplaceTable { old, new } => {
                out.push(9);
                out.extend_from_slice(&old.0.to_le_bytes());
                out.extend_from_slice(&new.0.to_le_bytes());
            }
            Entry::ImageEnd { wal_lsn, rows } => {
                out.push(3);
                out.extend_from_slice(&wal_lsn.to_le_bytes());
                out.extend_from_slice(&rows.to_le_bytes());
            }
        }
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Entry, TxnError> {
        let mut r = Reader { bytes, at: 0 };
        let entry = match r.u8()? {
            1 => {
                let n = r.u32()?;
                let mut records = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    let table = TableId(r.u32()? as u32);
                    let key = Key::from(r.values()?);
                    let after = match r.u8()? {
                        0 => None,
                        1 => Some(r.values()?),
                        other => return Err(r.bad(&format!("row flag {other}"))),
                    };
                    records.push(RedoRecord { table, key, after });
                }
                Entry::Commit(records)
            }
            2 => Entry::CreateTable(r.schema()?),
            3 => Entry::ImageEnd {
                wal_lsn: r.u64()?,
                rows: r.u64()?,
            },
            4 => Entry::CreateIndex {
                table: TableId(r.u32()? as u32),
                index: IndexDef {
                    name: r.str()?,
                    columns: r.positions()?,
                    unique: r.u8()? != 0,
                },
            },
            5 => Entry::DropTable(TableId(r.u32()? as u32)),
            6 => Entry::Attributes {
                table: TableId(r.u32()? as u32),
                text: r.str()?,
            },
            7 => Entry::EngineAttributes(r.str()?),
            8 => Entry::RenameTable {
                table: TableId(r.u32()? as u32),
                name: r.str()?,
            },
            9 => Entry::ReplaceTable {
                old: TableId(r.u32()? as u32),
                new: TableId(r.u32()? as u32),
            },
            other => return Err(r.bad(&format!("entry kind {other}"))),
        };
        if r.at != bytes.len() {
            return Err(r.bad("trailing bytes"));
        }
        Ok(entry)
    }
}

/// Starts a `commit` entry in the empty `out`: its kind, and room for the count of its
/// changes, which [`finish_commit`] writes. [`crate::Redo`] encodes a transaction's changes
/// this way as it makes them.
pub(crate) fn start_commit(out: &mut Vec<u8>) {
    debug_assert!(out.is_empty());
    out.push(1);
    put_u32(out, 0);
}

/// Appends one change of a `commit` entry: the row under `key` of `table` becomes `after`.
pub(crate) fn put_change(out: &mut Vec<u8>, table: TableId, key: &Key, after: Option<&[Value]>) {
    out.extend_from_slice(&table.0.to_le_bytes());
    put_u16(out, key.len());
    for value in key.iter() {
        put_value(out, &value);
    }
    match after {
        Some(row) => {
            out.push(1);
            put_values(out, row);
        }
        None => out.push(0),
    }
}

/// Ends a `commit` entry begun by [`start_commit`]: writes its count of changes.
pub(crate) fn finish_commit(out: &mut [u8], changes: u32) {
    out[1..5].copy_from_slice(&changes.to_le_bytes());
}

fn put_u16(out: &mut Vec<u8>, n: usize) {
    // Rows, keys and schemas are far below 65,536 columns (MySQL allows 4,096).
    out.extend_from_slice(&(n as u16).to_le_bytes());
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn put_values(out: &mut Vec<u8>, values: &[Value]) {
    put_u16(out, values.len());
    for value in values {
        put_value(out, value);
    }
}

fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0),
        Value::Int(n) => {
            out.push(1);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Decimal(d) => {
            out.push(2);
            out.extend_from_slice(&d.units().to_le_bytes());
            out.push(d.scale());
        }
        Value::Double(x) => {
            out.push(3);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        Value::Str(s) => {
            out.push(4);
            put_str(out, s);
        }
        Value::DateTime(t) => {
            out.push(5);
            out.extend_from_slice(&t.0.to_le_bytes());
        }
        Value::Date(t) => {
            out.push(6);
            out.extend_from_slice(&t.0.to_le_bytes());
        }
    }
}

fn put_schema(out: &mut Vec<u8>, schema: &TableSchema) {
    put_str(out, &schema.name);
    put_u16(out, schema.columns.len());
    for column in &schema.columns {
        put_str(out, &column.name);
        match column.ty {
            ColumnType::Int => out.push(1),
            ColumnType::BigInt => out.push(2),
            ColumnType::Decimal { precision, scale } => {
                out.extend_from_slice(&[3, precision, scale])
            }
            ColumnType::Char(n) => {
                out.push(4);
                out.extend_from_slice(&n.to_le_bytes());
            }
            ColumnType::Varchar(n) => {
                out.push(5);
                out.extend_from_slice(&n.to_le_bytes());
            }
            ColumnType::DateTime(0) => out.push(6),
            ColumnType::Double => out.push(7),
            ColumnType::Date => out.push(13),
            ColumnType::TinyInt => out.push(8),
            ColumnType::SmallInt => out.push(9),
            ColumnType::MediumInt => out.push(10),
            ColumnType::Unsigned(bytes) => out.extend_from_slice(&[11, bytes]),
            ColumnType::DateTime(fsp) => out.extend_from_slice(&[12, fsp]),
        }
        out.push(u8::from(column.nullable));
    }
    let put_positions = |out: &mut Vec<u8>, positions: &[usize]| {
        put_u16(out, positions.len());
        positions.iter().for_each(|&p| put_u16(out, p));
    };
    match &schema.primary_key {
        Some(pk) => {
            out.push(1);
            put_positions(out, pk);
        }
        None => out.push(0),
    }
    put_u16(out, schema.indexes.len());
    for index in &schema.indexes {
        put_str(out, &index.name);
        put_positions(out, &index.columns);
        out.push(u8::from(index.unique));
    }
}

/// A cursor over a payload; every read is bounds-checked (a payload passed its checksum, but
/// a reader must still never panic on one it does not understand).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn bad(&self, what: &str) -> TxnError {
        TxnError::Durability(format!(
            "a log entry cannot be decoded: {what} at byte {}",
            self.at
        ))
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], TxnError> {
        let bytes = self
            .bytes
            .get(self.at..self.at + N)
            .ok_or_else(|| self.bad("truncated entry"))?;
        self.at += N;
        Ok(bytes.try_into().expect("N bytes"))
    }

    fn u8(&mut self) -> Result<u8, TxnError> {
        Ok(self.take::<1>()?[0])
    }

    fn u16(&mut self) -> Result<usize, TxnError> {
        Ok(u16::from_le_bytes(self.take()?) as usize)
    }

    fn u32(&mut self) -> Result<usize, TxnError> {
        Ok(u32::from_le_bytes(self.take()?) as usize)
    }

    fn u64(&mut self) -> Result<u64, TxnError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    fn i64(&mut self) -> Result<i64, TxnError> {
        Ok(i64::from_le_bytes(self.take()?))
    }

    fn str(&mut self) -> Result<String, TxnError> {
        let len = self.u32()?;
        let bytes = self
            .bytes
            .get(self.at..self.at.saturating_add(len))
            .ok_or_else(|| self.bad("truncated string"))?;
        self.at += len;
        String::from_utf8(bytes.to_vec()).map_err(|_| self.bad("a string that is not UTF-8"))
    }

    fn values(&mut self) -> Result<Row, TxnError> {
        let n = self.u16()?;
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            let value = match self.u8()? {
                0 => Value::Null,
                1 => Value::Int(self.i64()?),
                2 => {
                    let units = i128::from_le_bytes(self.take()?);
                    let scale = self.u8()?;
                    let decimal = Decimal::new(units, scale)
                        .ok_or_else(|| self.bad(&format!("decimal scale {scale}")))?;
                    Value::Decimal(decimal)
                }
                3 => Value::Double(f64::from_bits(self.u64()?)),
                4 => Value::Str(self.str()?.into()),
                5 => Value::DateTime(DateTime(self.i64()?)),
                6 => Value::Date(DateTime(self.i64()?)),
                other => return Err(self.bad(&format!("value kind {other}"))),
            };
            values.push(value);
        }
        Ok(values)
    }

    fn positions(&mut self) -> Result<Vec<usize>, TxnError> {
        let n = self.u16()?;
        (0..n).map(|_| self.u16()).collect()
    }

    fn schema(&mut self) -> Result<TableSchema, TxnError> {
        let name = self.str()?;
        let n = self.u16()?;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            let name = self.str()?;
            let ty = match self.u8()? {
                1 => ColumnType::Int,
                2 => ColumnType::BigInt,
                3 => ColumnType::Decimal {
                    precision: self.u8()?,
                    scale: self.u8()?,
                },
                4 => ColumnType::Char(self.u32()? as u32),
                5 => ColumnType::Varchar(self.u32()? as u32),
                6 => ColumnType::DateTime(0),
                7 => ColumnType::Double,
                13 => ColumnType::Date,
                8 => ColumnType::TinyInt,
                9 => ColumnType::SmallInt,
                10 => ColumnType::MediumInt,
                11 => ColumnType::Unsigned(self.u8()?),
                12 => ColumnType::DateTime(self.u8()?),
                other => return Err(self.bad(&format!("column type {other}"))),
            };
            let nullable = self.u8()? != 0;
            columns.push(Column { name, ty, nullable });
        }
        let primary_key = match self.u8()? {
            0 => None,
            _ => Some(self.positions()?),
        };
        let n = self.u16()?;
        let mut indexes = Vec::with_capacity(n);
        for _ in 0..n {
            indexes.push(IndexDef {
                name: self.str()?,
                columns: self.positions()?,
                unique: self.u8()? != 0,
            });
        }
        let schema = TableSchema {
            name,
            columns,
            primary_key,
            indexes,
        };
        schema.validate()?;
        Ok(schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::Int),
            (any::<i64>(), 0u8..=30)
                .prop_map(|(u, s)| Value::Decimal(Decimal::new(u as i128 * 1_000_003, s).unwrap())),
            any::<f64>()
                .prop_filter("NaN is not equal to itself", |x| !x.is_nan())
                .prop_map(Value::Double),
            ".{0,20}".prop_map(Value::from),
            any::<i64>().prop_map(|t| Value::DateTime(DateTime(t))),
            any::<i64>().prop_map(|t| Value::Date(DateTime(t).date())),
        ]
    }

    fn schema() -> TableSchema {
        TableSchema::new(
            "order_line",
            vec![
                Column::new("id", ColumnType::Int),
                Column::new(
                    "amount",
                    ColumnType::Decimal {
                        precision: 6,
                        scale: 2,
                    },
                ),
                Column::nullable("note", ColumnType::Varchar(24)),
                Column::new("at", ColumnType::DateTime(0)),
                Column::new("code", ColumnType::Char(4)),
                Column::new("w", ColumnType::BigInt),
                Column::new("x", ColumnType::Double),
            ],
        )
        .primary_key(&["w", "id"])
        .unwrap()
        .index("by_code", &["code", "w"], true)
        .unwrap()
    }

    #[test]
    fn a_schema_attributes_and_an_image_end_round_trip() {
        for entry in [
            Entry::Attributes {
                table: TableId(3),
                text: "{\"defaults\": []} é".into(),
            },
            Entry::EngineAttributes("[\"db\"]".into()),
            Entry::RenameTable {
                table: TableId(7),
                name: "db.t2".into(),
            },
            Entry::ReplaceTable {
                old: TableId(2),
                new: TableId(9),
            },
            Entry::CreateTable(schema()),
            Entry::CreateTable(TableSchema::new(
                "heap",
                vec![Column::new("v", ColumnType::Int)],
            )),
            Entry::ImageEnd {
                wal_lsn: 77,
                rows: 3,
            },
        ] {
            assert_eq!(Entry::decode(&entry.encode()).unwrap(), entry);
        }
    }

    proptest! {
        #[test]
        fn a_commit_round_trips(records in prop::collection::vec(
            (any::<u32>(), prop::collection::vec(value(), 1..3),
             prop::option::of(prop::collection::vec(value(), 0..6))),
            0..5,
        )) {
            let entry = Entry::Commit(records.into_iter().map(|(table, key, after)| RedoRecord {
                table: TableId(table), key: Key::from(key), after,
            }).collect());
            prop_assert_eq!(Entry::decode(&entry.encode()).unwrap(), entry);
        }

        /// A transaction's redo, encoded change by change with savepoints rolled back on the
        /// way, is the entry of the changes that survived.
        #[test]
        fn redo_encoded_as_changes_are_made_is_the_entry_of_the_changes_kept(
            changes in prop::collection::vec(
                (any::<u32>(), prop::collection::vec(value(), 1..3),
                 prop::option::of(prop::collection::vec(value(), 0..6)), any::<bool>()),
                0..8,
            ),
        ) {
            let mut redo = crate::Redo::default();
            let mut kept = Vec::new();
            for (table, key, after, undone) in changes {
                let mark = redo.mark();
                let record = RedoRecord { table: TableId(table), key: Key::from(key), after };
                redo.push(record.table, &record.key, record.after.as_deref());
                if undone {
                    redo.truncate(mark);
                } else {
                    kept.push(record);
                }
            }
            prop_assert_eq!(redo.len(), kept.len());
            prop_assert_eq!(redo.records().unwrap(), kept.clone());
            prop_assert_eq!(redo.into_payload(), Entry::Commit(kept).encode());
        }

        #[test]
        fn garbage_is_an_error_never_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = Entry::decode(&bytes);
        }

        #[test]
        fn a_cut_entry_is_an_error(cut in 0usize..40) {
            let entry = Entry::CreateTable(schema()).encode();
            let cut = cut.min(entry.len() - 1);
            prop_assert!(Entry::decode(&entry[..cut]).is_err());
        }
    }
}
