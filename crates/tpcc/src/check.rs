//! Consistency conditions checked after every run (TPC-C 3.3.2.1 to 3.3.2.4):
//!
//! | # | condition, per warehouse or district |
//! |---|---|
//! | 1 | W_YTD = sum(D_YTD) of its districts |
//! | 2 | D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) |
//! | 3 | count(NEW_ORDER) = max(NO_O_ID) - min(NO_O_ID) + 1 |
//! | 4 | sum(O_OL_CNT) = count(ORDER_LINE) |
//!
//! The facts are gathered once per backend (scans for the native one, aggregate queries for
//! SQL ones) into [`Facts`]; [`Facts::violations`] checks them the same way for all.

use std::collections::BTreeMap;

use waterline_txn::{Isolation, KeyRange};

use crate::Error;
use crate::client::Failure;
use crate::native::NativeDb;
use crate::schema::table;
use crate::sql::SqlConn;
use crate::values::{cents_of, int_of};

/// What the conditions compare, for one district.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct District {
    /// D_YTD in hundredths.
    pub ytd_cents: i64,
    /// D_NEXT_O_ID.
    pub next_o_id: i64,
    /// max(O_ID).
    pub max_o_id: i64,
    /// sum(O_OL_CNT).
    pub ol_cnt_sum: i64,
    /// count, min and max of NO_O_ID.
    pub new_orders: (i64, i64, i64),
    /// count(ORDER_LINE).
    pub order_lines: i64,
}

/// The facts the conditions need.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// W_YTD in hundredths, by warehouse.
    pub warehouses: BTreeMap<i64, i64>,
    /// By (warehouse, district).
    pub districts: BTreeMap<(i64, i64), District>,
}

const WAREHOUSES: &str = "SELECT w_id, w_ytd FROM warehouse";
const DISTRICTS: &str = "SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district";
const ORDERS: &str =
    "SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id";
const NEW_ORDERS: &str = "SELECT no_w_id, no_d_id, COUNT(*), MIN(no_o_id), MAX(no_o_id) \
     FROM new_order GROUP BY no_w_id, no_d_id";
const ORDER_LINES: &str =
    "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id";

impl Facts {
    /// The facts, read with aggregate queries in one transaction.
    pub async fn from_sql(conn: &mut impl SqlConn) -> Result<Facts, Failure> {
        conn.begin().await?;
        let mut facts = Facts::default();
        for row in conn.query(WAREHOUSES, &[]).await? {
            facts
                .warehouses
                .insert(int_of(&row[0])?, cents_of(&row[1])?);
        }
        for row in conn.query(DISTRICTS, &[]).await? {
            let d = facts.district(&row[0], &row[1])?;
            d.ytd_cents = cents_of(&row[2])?;
            d.next_o_id = int_of(&row[3])?;
        }
        for row in conn.query(ORDERS, &[]).await? {
            let d = facts.district(&row[0], &row[1])?;
            d.max_o_id = int_of(&row[2])?;
            d.ol_cnt_sum = int_of(&row[3])?;
        }
        for row in conn.query(NEW_ORDERS, &[]).await? {
            let (count, min, max) = (int_of(&row[2])?, int_of(&row[3])?, int_of(&row[4])?);
            facts.district(&row[0], &row[1])?.new_orders = (count, min, max);
        }
        for row in conn.query(ORDER_LINES, &[]).await? {
            facts.district(&row[0], &row[1])?.order_lines = int_of(&row[2])?;
        }
        conn.text("COMMIT").await?;
        Ok(facts)
    }

    fn district(
        &mut self,
        w: &waterline_txn::Value,
        d: &waterline_txn::Value,
    ) -> Result<&mut District, Failure> {
        Ok(self.districts.entry((int_of(w)?, int_of(d)?)).or_default())
    }

    /// The facts, read by scanning the tables in one transaction.
    pub fn from_native(db: &NativeDb) -> Result<Facts, Error> {
        use crate::schema::col;
        let mut trx = db.engine.begin_with(Isolation::RepeatableRead);
        let mut facts = Facts::default();
        let rows = |trx: &mut waterline_txn::Transaction, name: &str| {
            trx.scan(db.table(table(name)), KeyRange::All)
        };
        let money = |v: &waterline_txn::Value| cents_of(v).map_err(Error::from);
        let num = |v: &waterline_txn::Value| int_of(v).map_err(Error::from);
        for (_, row) in rows(&mut trx, "warehouse")? {
            facts
                .warehouses
                .insert(num(&row[0])?, money(&row[col::W_YTD])?);
        }
        for (_, row) in rows(&mut trx, "district")? {
            let d = facts.district(&row[0], &row[1])?;
            d.ytd_cents = money(&row[col::D_YTD])?;
            d.next_o_id = num(&row[col::D_NEXT_O_ID])?;
        }
        for (_, row) in rows(&mut trx, "orders")? {
            let d = facts.district(&row[0], &row[1])?;
            d.max_o_id = d.max_o_id.max(num(&row[col::O_ID])?);
            d.ol_cnt_sum += num(&row[col::O_OL_CNT])?;
        }
        for (_, row) in rows(&mut trx, "new_order")? {
            let o = num(&row[col::NO_O_ID])?;
            let d = facts.district(&row[0], &row[1])?;
            let (count, min, max) = d.new_orders;
            d.new_orders = match count {
                0 => (1, o, o),
                _ => (count + 1, min.min(o), max.max(o)),
            };
        }
        for (_, row) in rows(&mut trx, "order_line")? {
            facts.district(&row[0], &row[1])?.order_lines += 1;
        }
        trx.commit()?;
        Ok(facts)
    }

    /// Every condition that does not hold, described; empty when all hold.
    pub fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (&w, &w_ytd) in &self.warehouses {
            let sum: i64 = self
                .districts
                .range((w, i64::MIN)..=(w, i64::MAX))
                .map(|(_, d)| d.ytd_cents)
                .sum();
            if w_ytd != sum {
                out.push(format!(
                    "3.3.2.1 warehouse {w}: W_YTD {w_ytd} != sum(D_YTD) {sum} (hundredths)"
                ));
            }
        }
        for (&(w, d_id), d) in &self.districts {
            let (count, min, max) = d.new_orders;
            let at = format!("warehouse {w} district {d_id}");
            if d.next_o_id - 1 != d.max_o_id || (count > 0 && max != d.max_o_id) {
                out.push(format!(
                    "3.3.2.2 {at}: D_NEXT_O_ID - 1 = {}, max(O_ID) = {}, max(NO_O_ID) = {max}",
                    d.next_o_id - 1,
                    d.max_o_id
                ));
            }
            if count > 0 && count != max - min + 1 {
                out.push(format!(
                    "3.3.2.3 {at}: {count} new orders, but max - min + 1 = {}",
                    max - min + 1
                ));
            }
            if d.ol_cnt_sum != d.order_lines {
                out.push(format!(
                    "3.3.2.4 {at}: sum(O_OL_CNT) = {} != {} order lines",
                    d.ol_cnt_sum, d.order_lines
                ));
            }
        }
        if self.warehouses.is_empty() {
            out.push("no warehouses: nothing was loaded".into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consistent() -> Facts {
        let mut facts = Facts::default();
        facts.warehouses.insert(1, 200);
        for d in 1..=2 {
            facts.districts.insert(
                (1, d),
                District {
                    ytd_cents: 100,
                    next_o_id: 11,
                    max_o_id: 10,
                    ol_cnt_sum: 50,
                    new_orders: (3, 8, 10),
                    order_lines: 50,
                },
            );
        }
        facts
    }

    #[test]
    fn each_condition_is_caught() {
        assert_eq!(consistent().violations(), Vec::<String>::new());
        let breaks: [fn(&mut Facts); 4] = [
            |f| *f.warehouses.get_mut(&1).unwrap() += 1,
            |f| f.districts.get_mut(&(1, 2)).unwrap().next_o_id += 1,
            |f| f.districts.get_mut(&(1, 1)).unwrap().new_orders.0 = 2,
            |f| f.districts.get_mut(&(1, 1)).unwrap().order_lines -= 1,
        ];
        for (i, damage) in breaks.iter().enumerate() {
            let mut facts = consistent();
            damage(&mut facts);
            let found = facts.violations();
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].starts_with(&format!("3.3.2.{}", i + 1)),
                "{found:?}"
            );
        }
    }
}
