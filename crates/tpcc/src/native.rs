//! The native backend: the five transactions written against waterline's typed API
//! (`Transaction::get`, `get_with` and `scan_with` with their `ReadOptions`, `update`,
//! `insert`, `delete`), in process, with no SQL in the way. It is the upper bound of what the engine can do for
//! this workload, and the place to read how each transaction touches the tables.
//!
//! ## The order of the steps
//!
//! A row lock is held until commit, so a lock a transaction takes first is held for all of
//! it, and one it takes last only for what is left. [`StepOrder`] says where NewOrder and
//! Payment take their hottest row's lock:
//!
//! - [`StepOrder::HotLast`] (the default): NewOrder updates each line's stock, then takes
//!   the district's next order id (`D_NEXT_O_ID`), then inserts the order, its NEW_ORDER row
//!   and its lines; every NewOrder and Payment of a district locks the district's row.
//!   Payment charges the customer, then adds to the district's and the warehouse's
//!   year-to-date; every Payment of a warehouse locks the warehouse's row.
//! - [`StepOrder::Spec`]: the order the spec lists the steps in, which the SQL backend's
//!   text keeps (as BenchmarkSQL's does): the district first in NewOrder, the warehouse
//!   first in Payment. Its queues on those rows are the contention the book's figures show.
//!
//! Delivery takes each district's oldest undelivered order with `FOR UPDATE SKIP LOCKED`
//! ([`DeliveryClaim::SkipLocked`], the default): of two Deliveries at once, the second
//! takes the next order instead of sleeping until the first commits, which on two cores
//! left a core idle and put a Delivery's 99th percentile at 5 ms. [`DeliveryClaim::Wait`]
//! is the plain `FOR UPDATE` the SQL text keeps.
//!
//! The reads and writes are the same, and so are their results: a test runs the same
//! inputs through both orders and the SQL backend and compares every row. With one
//! warehouse and two clients, the hot rows last halve the row-lock waits (see the README).

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use smallvec::SmallVec;

use waterline_txn::{
    Engine, Isolation, Key, KeyRange, LockMode, LockWait, ReadOptions, Row, Table, Transaction,
    Value, copy_keyed_row, copy_row,
};

use crate::Error;
use crate::client::{AsyncClient, Client, Close, Failure, Outcome};
use crate::input::{
    CustomerRef, Delivery, Input, Line, NewOrder, OrderStatus, Payment, StockLevel,
};
use crate::load::{Sink, cents};
use crate::schema::{DISTRICTS, TABLES, TableDef, col};
use crate::values::{bad_credit_data, cents_of, int_of};

/// StockLevel's STOCK lookups prefetched at a time: enough misses to overlap, few enough
/// that the first chunk's lines are still cached when it is read.
const PREFETCH_CHUNK: usize = 16;

/// The engine and its nine TPC-C tables.
#[derive(Debug)]
pub struct NativeDb {
    /// The engine.
    pub engine: Arc<Engine>,
    /// The isolation level transactions run at.
    pub isolation: Isolation,
    /// The thread pool whole transactions run on (`Policy::ThreadPool`, the baseline of
    /// book 8.3.1), if any. It is not the engine's admission: a pool takes a transaction,
    /// not a permit at BEGIN, so the engine refuses it as `EngineConfig::admission`.
    pub pool: Option<waterline_txn::Admission>,
    /// Where NewOrder and Payment lock their hottest row (see the module page).
    pub order: StepOrder,
    /// How Delivery claims an order.
    pub claim: DeliveryClaim,
    warehouse: Table,
    district: Table,
    customer: Table,
    history: Table,
    new_order: Table,
    orders: Table,
    order_line: Table,
    item: Table,
    stock: Table,
}

/// Where NewOrder and Payment take the lock on their hottest row: the district's in
/// NewOrder, the warehouse's in Payment (see the module page).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepOrder {
    /// Last: every other row first.
    #[default]
    HotLast,
    /// As the spec lists the steps: first.
    Spec,
}

impl StepOrder {
    /// The order's name as the command line (`--step-order`) and the reports say it.
    pub fn name(self) -> &'static str {
        match self {
            StepOrder::HotLast => "hot-last",
            StepOrder::Spec => "spec",
        }
    }
}

/// How Delivery claims a district's oldest undelivered order: the NEW_ORDER row it locks
/// and deletes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeliveryClaim {
    /// `FOR UPDATE SKIP LOCKED`: pass over the order a concurrent Delivery holds and take
    /// the next. The outcome is that of the two Deliveries run one after the other.
    #[default]
    SkipLocked,
    /// `FOR UPDATE`: wait for the concurrent Delivery to commit, then pass over the order
    /// it deleted (the baseline; the SQL backend's text does this, as BenchmarkSQL's).
    Wait,
}

impl DeliveryClaim {
    /// The claim's name as the command line (`--delivery-claim`) and the reports say it.
    pub fn name(self) -> &'static str {
        match self {
            DeliveryClaim::SkipLocked => "skip-locked",
            DeliveryClaim::Wait => "wait",
        }
    }
}

/// A NewOrder line's stock step, for its ORDER_LINE row: the amount in hundredths and
/// `S_DIST_xx`.
struct Stocked {
    amount: i64,
    dist_info: Value,
}

fn missing(what: &str) -> Failure {
    Failure::Fatal(format!("{what} not found"))
}

fn text(row: &[Value], i: usize) -> &str {
    row[i].as_str().unwrap_or_default()
}

impl NativeDb {
    /// Creates the nine tables in `engine`.
    pub fn create(engine: Arc<Engine>, isolation: Isolation) -> Result<NativeDb, Error> {
        for def in &TABLES {
            engine.create_table(def.schema().map_err(waterline_txn::TxnError::from)?)?;
        }
        NativeDb::open(engine, isolation)
    }

    /// The nine tables of `engine`, created before (by [`NativeDb::create`] or by SQL).
    pub fn open(engine: Arc<Engine>, isolation: Isolation) -> Result<NativeDb, Error> {
        let t = |name: &str| engine.table(name);
        Ok(NativeDb {
            warehouse: t("warehouse")?,
            district: t("district")?,
            customer: t("customer")?,
            history: t("history")?,
            new_order: t("new_order")?,
            orders: t("orders")?,
            order_line: t("order_line")?,
            item: t("item")?,
            stock: t("stock")?,
            isolation,
            engine,
            pool: None,
            order: StepOrder::default(),
            claim: DeliveryClaim::default(),
        })
    }

    /// The same database with NewOrder and Payment in `order`.
    pub fn with_order(self, order: StepOrder) -> NativeDb {
        NativeDb { order, ..self }
    }

    /// The same database with Delivery claiming orders as `claim` says.
    pub fn with_claim(self, claim: DeliveryClaim) -> NativeDb {
        NativeDb { claim, ..self }
    }

    /// The same database with its transactions run on `pool` (a `Policy::ThreadPool`).
    pub fn with_pool(self, pool: Option<waterline_txn::Admission>) -> NativeDb {
        NativeDb { pool, ..self }
    }

    /// The handle of table `def`.
    pub fn table(&self, def: &TableDef) -> &Table {
        match def.name {
            "warehouse" => &self.warehouse,
            "district" => &self.district,
            "customer" => &self.customer,
            "history" => &self.history,
            "new_order" => &self.new_order,
            "orders" => &self.orders,
            "order_line" => &self.order_line,
            "item" => &self.item,
            "stock" => &self.stock,
            other => unreachable!("{other} is not one of TABLES"),
        }
    }

    /// Runs `input` in `trx` and ends it: commit, or rollback on purpose or on failure.
    pub fn execute(&self, mut trx: Transaction, input: &Input) -> Result<Outcome, Failure> {
        let result = match input {
            Input::NewOrder(i) => self.new_order(&mut trx, i),
            Input::Payment(i) => self.payment(&mut trx, i),
            Input::OrderStatus(i) => self.order_status(&mut trx, i),
            Input::Delivery(i) => self.delivery(&mut trx, i),
            Input::StockLevel(i) => self.stock_level(&mut trx, i),
        };
        match result {
            Ok(Outcome::Committed) => {
                trx.commit()?;
                Ok(Outcome::Committed)
            }
            other => {
                if trx.is_active() {
                    trx.rollback();
                }
                other
            }
        }
    }

    /// NewOrder (spec 2.4.2): take the district's next order id, enter the order, and for
    /// each line read the item, update its stock and insert the line; with
    /// [`StepOrder::HotLast`], every line's item and stock first.
    fn new_order(&self, trx: &mut Transaction, input: &NewOrder) -> Result<Outcome, Failure> {
        let &NewOrder {
            w_id,
            d_id,
            c_id,
            ref lines,
            ..
        } = input;
        // The order's ITEM and STOCK rows are cold (100,000 of each): start their cache
        // misses together rather than one lookup after another.
        trx.prefetch(&self.item, lines.iter().map(|l| [l.i_id]));
        trx.prefetch(&self.stock, lines.iter().map(|l| [l.supply_w_id, l.i_id]));
        // W_TAX, D_TAX and C_DISCOUNT are read for the order's total, which the spec shows on
        // the terminal; there is no terminal here, so the total is not computed.
        trx.get_with(&self.warehouse, [w_id], ReadOptions::default(), |w| {
            w[col::W_TAX].clone()
        })?
        .ok_or_else(|| missing("warehouse"))?;
        trx.get_with(
            &self.customer,
            [w_id, d_id, c_id],
            ReadOptions::default(),
            |c| c[col::C_DISCOUNT].clone(),
        )?
        .ok_or_else(|| missing("customer"))?;
        match self.order {
            StepOrder::Spec => {
                let o_id = self.enter_order(trx, input)?;
                for (number, line) in (1..).zip(lines) {
                    let Some(stocked) = self.take_stock(trx, input, line)? else {
                        return Ok(Outcome::RolledBack);
                    };
                    self.insert_line(trx, input, o_id, number, line, stocked)?;
                }
            }
            StepOrder::HotLast => {
                let mut stocked = SmallVec::<[Stocked; 15]>::new();
                for line in lines {
                    let Some(one) = self.take_stock(trx, input, line)? else {
                        return Ok(Outcome::RolledBack);
                    };
                    stocked.push(one);
                }
                let o_id = self.enter_order(trx, input)?;
                for ((number, line), one) in (1..).zip(lines).zip(stocked) {
                    self.insert_line(trx, input, o_id, number, line, one)?;
                }
            }
        }
        Ok(Outcome::Committed)
    }

    /// NewOrder's district step: takes the next order id (`D_NEXT_O_ID`), and enters the
    /// order in ORDERS and NEW_ORDER.
    fn enter_order(&self, trx: &mut Transaction, input: &NewOrder) -> Result<i64, Failure> {
        let &NewOrder {
            w_id,
            d_id,
            c_id,
            ref lines,
            entry_d,
        } = input;
        let o_id = trx
            .modify(&self.district, [w_id, d_id], |district| {
                let o_id = int_of(&district[col::D_NEXT_O_ID])?;
                district[col::D_NEXT_O_ID] = Value::Int(o_id + 1);
                Ok::<_, Failure>(o_id)
            })?
            .ok_or_else(|| missing("district"))?;
        // The lines' keys are new: what their inserts will probe is the hash slots.
        trx.prefetch(
            &self.order_line,
            (1..=lines.len() as i64).map(|number| [w_id, d_id, o_id, number]),
        );
        let all_local = lines.iter().all(|l| l.supply_w_id == w_id);
        trx.insert(
            &self.orders,
            vec![
                Value::Int(w_id),
                Value::Int(d_id),
                Value::Int(o_id),
                Value::Int(c_id),
                Value::DateTime(entry_d),
                Value::Null,
                Value::Int(lines.len() as i64),
                Value::Int(i64::from(all_local)),
            ],
        )?;
        trx.insert(
            &self.new_order,
            vec![Value::Int(w_id), Value::Int(d_id), Value::Int(o_id)],
        )?;
        Ok(o_id)
    }

    /// NewOrder's step for one line: reads the item's price and updates its stock. `None`
    /// for an unused item id: the 1% of NewOrders that roll back (spec 2.4.2.3).
    fn take_stock(
        &self,
        trx: &mut Transaction,
        input: &NewOrder,
        line: &Line,
    ) -> Result<Option<Stocked>, Failure> {
        let (w_id, d_id) = (input.w_id, input.d_id);
        let price = trx.get_with(&self.item, [line.i_id], ReadOptions::default(), |i| {
            cents_of(&i[col::I_PRICE])
        })?;
        let Some(price) = price else {
            return Ok(None);
        };
        let price = price?;
        let remote = i64::from(line.supply_w_id != w_id);
        let dist_info = trx
            .modify(&self.stock, [line.supply_w_id, line.i_id], |stock| {
                let quantity = int_of(&stock[col::S_QUANTITY])?;
                let left = if quantity >= line.quantity + 10 {
                    quantity - line.quantity
                } else {
                    quantity - line.quantity + 91
                };
                stock[col::S_QUANTITY] = Value::Int(left);
                stock[col::S_YTD] = Value::Int(int_of(&stock[col::S_YTD])? + line.quantity);
                stock[col::S_ORDER_CNT] = Value::Int(int_of(&stock[col::S_ORDER_CNT])? + 1);
                stock[col::S_REMOTE_CNT] = Value::Int(int_of(&stock[col::S_REMOTE_CNT])? + remote);
                Ok::<_, Failure>(stock[col::S_DIST_01 + d_id as usize - 1].clone())
            })?
            .ok_or_else(|| missing("stock"))?;
        Ok(Some(Stocked {
            amount: line.quantity * price,
            dist_info,
        }))
    }

    /// Inserts order `o_id`'s line `number`.
    fn insert_line(
        &self,
        trx: &mut Transaction,
        input: &NewOrder,
        o_id: i64,
        number: i64,
        line: &Line,
        stocked: Stocked,
    ) -> Result<(), Failure> {
        trx.insert(
            &self.order_line,
            vec![
                Value::Int(input.w_id),
                Value::Int(input.d_id),
                Value::Int(o_id),
                Value::Int(number),
                Value::Int(line.i_id),
                Value::Int(line.supply_w_id),
                Value::Null,
                Value::Int(line.quantity),
                cents(stocked.amount),
                stocked.dist_info,
            ],
        )?;
        Ok(())
    }

    /// The primary key of the customer a [`CustomerRef`] names: by id, or the middle one
    /// (rounded up) of those with that last name, ordered by first name (spec 2.5.2.2).
    fn find_customer(
        &self,
        trx: &mut Transaction,
        w_id: i64,
        d_id: i64,
        customer: &CustomerRef,
    ) -> Result<Key, Failure> {
        match customer {
            CustomerRef::Id(c_id) => Ok(Key::from([w_id, d_id, *c_id])),
            CustomerRef::Last(last) => {
                let prefix = Key::from(vec![
                    Value::Int(w_id),
                    Value::Int(d_id),
                    Value::from(last.as_str()),
                ]);
                let mut keys = trx.scan_with(
                    &self.customer,
                    KeyRange::Prefix(prefix),
                    ReadOptions::default().on_index("idx_customer"),
                    |key, _| key.clone(),
                )?;
                if keys.is_empty() {
                    return Err(missing("customer by last name"));
                }
                let middle = keys.len().div_ceil(2) - 1;
                Ok(keys.swap_remove(middle))
            }
        }
    }

    /// Payment (spec 2.5.2): add the amount to the warehouse's and district's year-to-date,
    /// charge the customer, and record it in HISTORY; with [`StepOrder::HotLast`], the
    /// customer first and the warehouse last.
    fn payment(&self, trx: &mut Transaction, input: &Payment) -> Result<Outcome, Failure> {
        let (w_name, d_name, c_id) = match self.order {
            StepOrder::Spec => {
                let w_name = self.pay_warehouse(trx, input)?;
                let d_name = self.pay_district(trx, input)?;
                (w_name, d_name, self.charge_customer(trx, input)?)
            }
            StepOrder::HotLast => {
                let c_id = self.charge_customer(trx, input)?;
                let d_name = self.pay_district(trx, input)?;
                (self.pay_warehouse(trx, input)?, d_name, c_id)
            }
        };
        trx.insert(
            &self.history,
            vec![
                Value::Int(c_id),
                Value::Int(input.c_d_id),
                Value::Int(input.c_w_id),
                Value::Int(input.d_id),
                Value::Int(input.w_id),
                Value::DateTime(input.date),
                cents(input.amount_cents),
                Value::from(format!("{w_name}    {d_name}")),
            ],
        )?;
        Ok(Outcome::Committed)
    }

    /// Payment's warehouse step: adds to W_YTD; returns W_NAME.
    fn pay_warehouse(&self, trx: &mut Transaction, input: &Payment) -> Result<String, Failure> {
        let amount = input.amount_cents;
        trx.modify(&self.warehouse, [input.w_id], |warehouse| {
            warehouse[col::W_YTD] = cents(cents_of(&warehouse[col::W_YTD])? + amount);
            Ok::<_, Failure>(text(warehouse, col::W_NAME).to_owned())
        })?
        .ok_or_else(|| missing("warehouse"))
    }

    /// Payment's district step: adds to D_YTD; returns D_NAME.
    fn pay_district(&self, trx: &mut Transaction, input: &Payment) -> Result<String, Failure> {
        let amount = input.amount_cents;
        trx.modify(&self.district, [input.w_id, input.d_id], |district| {
            district[col::D_YTD] = cents(cents_of(&district[col::D_YTD])? + amount);
            Ok::<_, Failure>(text(district, 2).to_owned())
        })?
        .ok_or_else(|| missing("district"))
    }

    /// Payment's customer step: charges the customer (and, for bad credit, records the
    /// payment in C_DATA); returns C_ID.
    fn charge_customer(&self, trx: &mut Transaction, input: &Payment) -> Result<i64, Failure> {
        let &Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            ref customer,
            amount_cents: amount,
            ..
        } = input;
        let key = self.find_customer(trx, c_w_id, c_d_id, customer)?;
        trx.modify(&self.customer, key, |row| {
            let c_id = int_of(&row[col::C_ID])?;
            row[col::C_BALANCE] = cents(cents_of(&row[col::C_BALANCE])? - amount);
            row[col::C_YTD_PAYMENT] = cents(cents_of(&row[col::C_YTD_PAYMENT])? + amount);
            row[col::C_PAYMENT_CNT] = Value::Int(int_of(&row[col::C_PAYMENT_CNT])? + 1);
            if text(row, col::C_CREDIT) == "BC" {
                row[col::C_DATA] = Value::from(bad_credit_data(
                    [c_id, c_d_id, c_w_id, d_id, w_id],
                    amount,
                    text(row, col::C_DATA),
                ));
            }
            Ok::<_, Failure>(c_id)
        })?
        .ok_or_else(|| missing("customer"))
    }

    /// OrderStatus (spec 2.6.2): the customer, their last order, and its lines. Read-only.
    fn order_status(&self, trx: &mut Transaction, input: &OrderStatus) -> Result<Outcome, Failure> {
        let &OrderStatus {
            w_id,
            d_id,
            ref customer,
        } = input;
        let key = self.find_customer(trx, w_id, d_id, customer)?;
        let c_id = trx
            .get_with(&self.customer, key, ReadOptions::default(), |row| {
                int_of(&row[col::C_ID])
            })?
            .ok_or_else(|| missing("customer"))??;
        let last = trx.scan_with(
            &self.orders,
            KeyRange::Prefix(Key::from([w_id, d_id, c_id])),
            (ReadOptions {
                limit: Some(1),
                reverse: true,
                ..ReadOptions::default()
            })
            .on_index("idx_orders"),
            |_, order| int_of(&order[col::O_ID]),
        )?;
        if let Some(o_id) = last.into_iter().next() {
            let o_id = o_id?;
            // The spec shows each line's item, supplier, quantity, amount and delivery date.
            let lines = trx.scan_with(
                &self.order_line,
                KeyRange::Prefix(Key::from([w_id, d_id, o_id])),
                ReadOptions::default(),
                |_, line| copy_row(&line[col::OL_I_ID..=col::OL_AMOUNT]),
            )?;
            debug_assert!(!lines.is_empty());
        }
        Ok(Outcome::Committed)
    }

    /// Delivery (spec 2.7.4): for each district, the oldest undelivered order: remove it from
    /// NEW_ORDER, set its carrier, date its lines, and credit the customer with their total.
    fn delivery(&self, trx: &mut Transaction, input: &Delivery) -> Result<Outcome, Failure> {
        let date = Value::DateTime(input.date);
        let (w_id, carrier_id) = (input.w_id, input.carrier_id);
        for d_id in 1..=DISTRICTS {
            let oldest = trx.scan_with(
                &self.new_order,
                KeyRange::Prefix(Key::from([w_id, d_id])),
                // A locking read: it sees the newest rows, so an order a concurrent
                // Delivery already took is passed over, not found again; and one it is
                // taking is skipped or waited for (see `DeliveryClaim`).
                ReadOptions {
                    limit: Some(1),
                    lock: Some(LockMode::Exclusive),
                    wait: match self.claim {
                        DeliveryClaim::SkipLocked => LockWait::SkipLocked,
                        DeliveryClaim::Wait => LockWait::Wait,
                    },
                    ..ReadOptions::default()
                },
                copy_keyed_row,
            )?;
            let Some((key, row)) = oldest.into_iter().next() else {
                continue; // nothing to deliver in this district
            };
            let o_id = int_of(&row[col::NO_O_ID])?;
            trx.delete(&self.new_order, key)?;
            let (c_id, line_count) = trx
                .modify(&self.orders, [w_id, d_id, o_id], |order| {
                    order[col::O_CARRIER_ID] = Value::Int(carrier_id);
                    Ok::<_, Failure>((int_of(&order[col::O_C_ID])?, int_of(&order[col::O_OL_CNT])?))
                })?
                .ok_or_else(|| missing("order"))?;
            // The order's lines are numbered 1 to O_OL_CNT (spec 3.3.2.4 checks that).
            trx.prefetch(
                &self.order_line,
                (1..=line_count).map(|number| [w_id, d_id, o_id, number]),
            );
            let mut total = 0;
            for number in 1..=line_count {
                total += trx
                    .modify(&self.order_line, [w_id, d_id, o_id, number], |line| {
                        line[col::OL_DELIVERY_D] = date.clone();
                        cents_of(&line[col::OL_AMOUNT])
                    })?
                    .ok_or_else(|| missing("order line"))?;
            }
            trx.modify(&self.customer, [w_id, d_id, c_id], |customer| {
                customer[col::C_BALANCE] = cents(cents_of(&customer[col::C_BALANCE])? + total);
                customer[col::C_DELIVERY_CNT] =
                    Value::Int(int_of(&customer[col::C_DELIVERY_CNT])? + 1);
                Ok::<_, Failure>(())
            })?
            .ok_or_else(|| missing("customer"))?;
        }
        Ok(Outcome::Committed)
    }

    /// StockLevel (spec 2.8.2): of the items in the district's last 20 orders, how many have
    /// stock below the threshold. Read-only.
    fn stock_level(&self, trx: &mut Transaction, input: &StockLevel) -> Result<Outcome, Failure> {
        let &StockLevel {
            w_id,
            d_id,
            threshold,
        } = input;
        let next = trx
            .get_with(&self.district, [w_id, d_id], ReadOptions::default(), |d| {
                int_of(&d[col::D_NEXT_O_ID])
            })?
            .ok_or_else(|| missing("district"))??;
        let range = KeyRange::Between(
            Bound::Included(Key::from([w_id, d_id, next - 20])),
            Bound::Excluded(Key::from([w_id, d_id, next])),
        );
        // The closure keeps each item itself and returns nothing, so the scan's own result
        // is a vector of `()`, which never allocates. Collecting two hundred results and
        // then the set cost a growing vector of several kilobytes per StockLevel.
        let mut items = BTreeSet::new();
        let mut bad = None;
        trx.scan_with(
            &self.order_line,
            range,
            ReadOptions::default(),
            |_, line| match int_of(&line[col::OL_I_ID]) {
                Ok(i_id) => {
                    items.insert(i_id);
                }
                Err(failure) => bad = Some(failure),
            },
        )?;
        if let Some(failure) = bad {
            return Err(failure);
        }
        let items: Vec<i64> = items.into_iter().collect();
        let mut low = 0;
        // About two hundred cold STOCK rows: each chunk's misses are started together.
        for chunk in items.chunks(PREFETCH_CHUNK) {
            trx.prefetch(&self.stock, chunk.iter().map(|&i_id| [w_id, i_id]));
            for &i_id in chunk {
                let quantity =
                    trx.get_with(&self.stock, [w_id, i_id], ReadOptions::default(), |s| {
                        int_of(&s[col::S_QUANTITY])
                    })?;
                if let Some(quantity) = quantity {
                    low += i64::from(quantity? < threshold);
                }
            }
        }
        // `low` is what the terminal would show; the transaction's work is finding it.
        let _low_stock = low;
        Ok(Outcome::Committed)
    }

    /// An order-independent checksum of every row of every table: equal for two databases
    /// with the same rows, however they were loaded.
    pub fn checksum(&self) -> Result<u64, Error> {
        let mut trx = self.engine.begin_with(Isolation::RepeatableRead);
        let mut sum = 0u64;
        for def in &TABLES {
            for (_, row) in trx.scan(self.table(def), KeyRange::All)? {
                let mut hash = fnv(0xcbf2_9ce4_8422_2325, def.name.as_bytes());
                for value in &row {
                    hash = fnv(hash, value.to_string().as_bytes());
                    hash = fnv(hash, b"\x1f");
                }
                sum = sum.wrapping_add(hash);
            }
        }
        trx.commit()?;
        Ok(sum)
    }
}

/// FNV-1a, continued from `hash` over `bytes`.
fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Loads rows through the engine's API: one transaction per batch.
#[derive(Clone, Debug)]
pub struct NativeSink(pub Arc<NativeDb>);

impl Sink for NativeSink {
    fn insert(&mut self, def: &'static TableDef, rows: Vec<Row>) -> Result<(), Error> {
        let table = self.0.table(def);
        let mut trx = self.0.engine.begin_with(Isolation::ReadCommitted);
        for row in rows {
            trx.insert(table, row)?;
        }
        trx.commit()?;
        Ok(())
    }
}

/// The thread pool, if transactions run on one: then a whole transaction is handed to a
/// pool worker, which is how a thread pool limits work.
fn pooled(db: &NativeDb) -> Option<&waterline_txn::Admission> {
    db.pool.as_ref()
}

impl NativeDb {
    /// Runs `input` from an OS thread: begins (waiting for admission), executes, ends.
    pub fn run_blocking(self: &Arc<Self>, input: &Input) -> Result<Outcome, Failure> {
        match pooled(self) {
            Some(pool) => {
                let (db, input) = (Arc::clone(self), input.clone());
                pool.run_blocking(move || db.execute(db.engine.begin_with(db.isolation), &input))
            }
            None => self.execute(self.engine.begin_with(self.isolation), input),
        }
    }

    /// Runs `input` from a task: waits for admission without holding a thread, then runs
    /// the transaction to its end without yielding (so no task is parked holding locks).
    pub async fn run_async(self: &Arc<Self>, input: &Input) -> Result<Outcome, Failure> {
        match pooled(self) {
            Some(pool) => {
                let (db, input) = (Arc::clone(self), input.clone());
                pool.run(move || db.execute(db.engine.begin_with(db.isolation), &input))
                    .await
            }
            None => {
                let trx = self.engine.begin_async(self.isolation).await;
                self.execute(trx, input)
            }
        }
    }
}

/// A native client: transactions on the calling thread.
#[derive(Clone, Debug)]
pub struct NativeClient(pub Arc<NativeDb>);

impl Client for NativeClient {
    fn run(&mut self, input: &Input) -> Result<Outcome, Failure> {
        self.0.run_blocking(input)
    }
}

impl AsyncClient for NativeClient {
    async fn run(&mut self, input: &Input) -> Result<Outcome, Failure> {
        self.0.run_async(input).await
    }
}

impl Close for NativeClient {}
