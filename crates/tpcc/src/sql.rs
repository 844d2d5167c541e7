//! The SQL backends: the five transactions as SQL text, the same text for waterline's embedded
//! session and for any MySQL-protocol server, sent as prepared statements.
//!
//! The statements are BenchmarkSQL's, with one change: StockLevel's `IN (subquery)` is the
//! equivalent three-way join (waterline's SQL has no subqueries). It still starts with
//! BenchmarkSQL's join of DISTRICT and ORDER_LINE on `ol_o_id >= d_next_o_id - 20`, so the
//! planner's `Legacy8027` switch shows its effect here.

use waterline_txn::{Row, Value};

use crate::Error;
use crate::client::{AsyncClient, Close, Failure, OnThread, Outcome};
use crate::input::{CustomerRef, Delivery, Input, NewOrder, OrderStatus, Payment};
use crate::load::{Sink, cents};
use crate::schema::{DISTRICTS, TABLES, TableDef};
use crate::values::{bad_credit_data, cents_of, int_of};

/// A connection that runs SQL. Its calls are async, so that the five transactions are
/// written once for tokio tasks (waiting for a server's replies, or for the engine's
/// admission at BEGIN, without holding a thread) and for OS threads (through
/// [`OnThread`]).
pub trait SqlConn: Close + Send {
    /// Begins a transaction (BEGIN).
    fn begin(&mut self) -> impl Future<Output = Result<(), Failure>> + Send;
    /// Runs prepared statement `sql` (prepared on first use) and returns its rows.
    fn query(
        &mut self,
        sql: &'static str,
        params: &[Value],
    ) -> impl Future<Output = Result<Vec<Row>, Failure>> + Send;
    /// Runs prepared statement `sql` and returns the rows it changed.
    fn exec(
        &mut self,
        sql: &'static str,
        params: &[Value],
    ) -> impl Future<Output = Result<u64, Failure>> + Send;
    /// Runs `sql` as text, without parameters (COMMIT, DDL, loading INSERTs).
    fn text(&mut self, sql: &str) -> impl Future<Output = Result<(), Failure>> + Send;
}

fn int(n: i64) -> Value {
    Value::Int(n)
}

fn first(rows: &[Row], what: &str) -> Result<Row, Failure> {
    rows.first()
        .cloned()
        .ok_or_else(|| Failure::Fatal(format!("{what} not found")))
}

const CUSTOMER_WAREHOUSE: &str = "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
     WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
const DISTRICT_FOR_UPDATE: &str =
    "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE";
const DISTRICT_NEXT: &str =
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?";
const INSERT_ORDER: &str = "INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
     VALUES (?, ?, ?, ?, ?, ?, ?)";
const INSERT_NEW_ORDER: &str = "INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES (?, ?, ?)";
const ITEM: &str = "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?";
const STOCK_FOR_UPDATE: &str = "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, \
     s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 \
     FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE";
const STOCK_UPDATE: &str = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, \
     s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? \
     WHERE s_w_id = ? AND s_i_id = ?";
const INSERT_ORDER_LINE: &str = "INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, \
     ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";

const WAREHOUSE_YTD: &str = "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?";
const WAREHOUSE: &str = "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip \
     FROM warehouse WHERE w_id = ?";
const DISTRICT_YTD: &str = "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?";
const DISTRICT: &str = "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip \
     FROM district WHERE d_w_id = ? AND d_id = ?";
const CUSTOMERS_BY_NAME: &str = "SELECT c_id FROM customer \
     WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first";
const CUSTOMER_FOR_UPDATE: &str = "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, \
     c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance \
     FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE";
const CUSTOMER_PAY: &str = "UPDATE customer SET c_balance = c_balance - ?, \
     c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 \
     WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const CUSTOMER_DATA: &str =
    "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const CUSTOMER_SET_DATA: &str =
    "UPDATE customer SET c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const INSERT_HISTORY: &str = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
     h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

const CUSTOMER: &str = "SELECT c_first, c_middle, c_last, c_balance FROM customer \
     WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
const LAST_ORDER: &str = "SELECT o_id, o_entry_d, o_carrier_id FROM orders \
     WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1";
const ORDER_LINES: &str = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
     FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";

const OLDEST_NEW_ORDER: &str = "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? \
     ORDER BY no_o_id LIMIT 1 FOR UPDATE";
const DELETE_NEW_ORDER: &str =
    "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?";
// Delivery reads the order and its lines it is about to update with locking reads: under
// REPEATABLE READ, a consistent read would use the view its first district opened, which
// does not see an order committed after it that the locking NEW_ORDER read found (MySQL
// behaves the same way with the same statements).
const ORDER_CUSTOMER: &str =
    "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE";
const ORDER_CARRIER: &str =
    "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?";
const LINES_DELIVERED: &str = "UPDATE order_line SET ol_delivery_d = ? \
     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
const ORDER_TOTAL: &str = "SELECT SUM(ol_amount) FROM order_line \
     WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? FOR UPDATE";
const CUSTOMER_DELIVERED: &str = "UPDATE customer SET c_balance = c_balance + ?, \
     c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";

/// StockLevel as BenchmarkSQL's MySQL driver prepares it (`jTPCCConnection.java`, with
/// this schema's table names): a derived table around an IN subquery, whose join of
/// DISTRICT and ORDER_LINE is where the book found the 8.0.27 regression (Figs 8-3 to 8-5).
pub const STOCK_LEVEL: &str = "SELECT count(*) AS low_stock FROM ( \
     SELECT s_w_id, s_i_id, s_quantity FROM stock \
     WHERE s_w_id = ? AND s_quantity < ? AND s_i_id IN ( \
     SELECT ol_i_id FROM district \
     JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id \
     AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id \
     WHERE d_w_id = ? AND d_id = ?)) AS L";

/// A client that runs the transactions as SQL over `C`.
pub struct SqlClient<C: SqlConn> {
    conn: C,
}

impl<C: SqlConn> SqlClient<C> {
    /// A client over `conn`.
    pub fn new(conn: C) -> SqlClient<C> {
        SqlClient { conn }
    }

    async fn body(&mut self, input: &Input) -> Result<Outcome, Failure> {
        match input {
            Input::NewOrder(i) => self.new_order(i).await,
            Input::Payment(i) => self.payment(i).await,
            Input::OrderStatus(i) => self.order_status(i).await,
            Input::Delivery(i) => self.delivery(i).await,
            Input::StockLevel(i) => {
                let params = [int(i.w_id), int(i.threshold), int(i.w_id), int(i.d_id)];
                let rows = self.conn.query(STOCK_LEVEL, &params).await?;
                int_of(&first(&rows, "stock level")?[0])?;
                Ok(Outcome::Committed)
            }
        }
    }

    async fn new_order(&mut self, input: &NewOrder) -> Result<Outcome, Failure> {
        let &NewOrder {
            w_id,
            d_id,
            c_id,
            ref lines,
            entry_d,
        } = input;
        let c = &mut self.conn;
        first(
            &c.query(CUSTOMER_WAREHOUSE, &[int(w_id), int(d_id), int(c_id)])
                .await?,
            "customer",
        )?;
        let district = first(
            &c.query(DISTRICT_FOR_UPDATE, &[int(w_id), int(d_id)])
                .await?,
            "district",
        )?;
        let o_id = int_of(&district[1])?;
        c.exec(DISTRICT_NEXT, &[int(w_id), int(d_id)]).await?;
        let all_local = lines.iter().all(|l| l.supply_w_id == w_id);
        c.exec(
            INSERT_ORDER,
            &[
                int(w_id),
                int(d_id),
                int(o_id),
                int(c_id),
                Value::DateTime(entry_d),
                int(lines.len() as i64),
                int(i64::from(all_local)),
            ],
        )
        .await?;
        c.exec(INSERT_NEW_ORDER, &[int(w_id), int(d_id), int(o_id)])
            .await?;
        for (number, line) in (1..).zip(lines) {
            let items = c.query(ITEM, &[int(line.i_id)]).await?;
            let Some(item) = items.first() else {
                return Ok(Outcome::RolledBack); // an unused item id (spec 2.4.2.3)
            };
            let price = cents_of(&item[0])?;
            let stock = first(
                &c.query(STOCK_FOR_UPDATE, &[int(line.supply_w_id), int(line.i_id)])
                    .await?,
                "stock",
            )?;
            let quantity = int_of(&stock[0])?;
            let left = if quantity >= line.quantity + 10 {
                quantity - line.quantity
            } else {
                quantity - line.quantity + 91
            };
            let dist_info = stock[1 + d_id as usize].clone();
            let remote = i64::from(line.supply_w_id != w_id);
            c.exec(
                STOCK_UPDATE,
                &[
                    int(left),
                    int(line.quantity),
                    int(remote),
                    int(line.supply_w_id),
                    int(line.i_id),
                ],
            )
            .await?;
            c.exec(
                INSERT_ORDER_LINE,
                &[
                    int(w_id),
                    int(d_id),
                    int(o_id),
                    int(number),
                    int(line.i_id),
                    int(line.supply_w_id),
                    int(line.quantity),
                    cents(line.quantity * price),
                    dist_info,
                ],
            )
            .await?;
        }
        Ok(Outcome::Committed)
    }

    async fn customer_id(
        &mut self,
        w_id: i64,
        d_id: i64,
        customer: &CustomerRef,
    ) -> Result<i64, Failure> {
        match customer {
            CustomerRef::Id(c_id) => Ok(*c_id),
            CustomerRef::Last(last) => {
                let ids = self
                    .conn
                    .query(
                        CUSTOMERS_BY_NAME,
                        &[int(w_id), int(d_id), Value::from(last.as_str())],
                    )
                    .await?;
                if ids.is_empty() {
                    return Err(Failure::Fatal("customer by last name not found".into()));
                }
                int_of(&ids[ids.len().div_ceil(2) - 1][0])
            }
        }
    }

    async fn payment(&mut self, input: &Payment) -> Result<Outcome, Failure> {
        let &Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            ref customer,
            amount_cents: amount,
            date,
        } = input;
        let c = &mut self.conn;
        c.exec(WAREHOUSE_YTD, &[cents(amount), int(w_id)]).await?;
        let warehouse = first(&c.query(WAREHOUSE, &[int(w_id)]).await?, "warehouse")?;
        c.exec(DISTRICT_YTD, &[cents(amount), int(w_id), int(d_id)])
            .await?;
        let district = first(
            &c.query(DISTRICT, &[int(w_id), int(d_id)]).await?,
            "district",
        )?;
        let c_id = self.customer_id(c_w_id, c_d_id, customer).await?;
        let c = &mut self.conn;
        let key = [int(c_w_id), int(c_d_id), int(c_id)];
        let row = first(&c.query(CUSTOMER_FOR_UPDATE, &key).await?, "customer")?;
        c.exec(
            CUSTOMER_PAY,
            &[
                cents(amount),
                cents(amount),
                key[0].clone(),
                key[1].clone(),
                key[2].clone(),
            ],
        )
        .await?;
        if row[10].as_str() == Some("BC") {
            let old = first(&c.query(CUSTOMER_DATA, &key).await?, "customer")?;
            let data = bad_credit_data(
                [c_id, c_d_id, c_w_id, d_id, w_id],
                amount,
                old[0].as_str().unwrap_or_default(),
            );
            let [k0, k1, k2] = key;
            c.exec(CUSTOMER_SET_DATA, &[Value::from(data), k0, k1, k2])
                .await?;
        }
        let name = |row: &Row| row[0].as_str().unwrap_or_default().to_owned();
        c.exec(
            INSERT_HISTORY,
            &[
                int(c_id),
                int(c_d_id),
                int(c_w_id),
                int(d_id),
                int(w_id),
                Value::DateTime(date),
                cents(amount),
                Value::from(format!("{}    {}", name(&warehouse), name(&district))),
            ],
        )
        .await?;
        Ok(Outcome::Committed)
    }

    async fn order_status(&mut self, input: &OrderStatus) -> Result<Outcome, Failure> {
        let &OrderStatus {
            w_id,
            d_id,
            ref customer,
        } = input;
        let c_id = self.customer_id(w_id, d_id, customer).await?;
        let c = &mut self.conn;
        first(
            &c.query(CUSTOMER, &[int(w_id), int(d_id), int(c_id)])
                .await?,
            "customer",
        )?;
        let order = c
            .query(LAST_ORDER, &[int(w_id), int(d_id), int(c_id)])
            .await?;
        if let Some(order) = order.first() {
            c.query(ORDER_LINES, &[int(w_id), int(d_id), order[0].clone()])
                .await?;
        }
        Ok(Outcome::Committed)
    }

    async fn delivery(&mut self, input: &Delivery) -> Result<Outcome, Failure> {
        let date = Value::DateTime(input.date);
        let (w_id, carrier_id) = (input.w_id, input.carrier_id);
        let c = &mut self.conn;
        for d_id in 1..=DISTRICTS {
            let oldest = c.query(OLDEST_NEW_ORDER, &[int(w_id), int(d_id)]).await?;
            let Some(row) = oldest.first() else {
                continue; // nothing to deliver in this district
            };
            let order = [int(w_id), int(d_id), int(int_of(&row[0])?)];
            if c.exec(DELETE_NEW_ORDER, &order).await? == 0 {
                continue;
            }
            let c_id = int_of(&first(&c.query(ORDER_CUSTOMER, &order).await?, "order")?[0])?;
            let [w, d, o] = order;
            c.exec(
                ORDER_CARRIER,
                &[int(carrier_id), w.clone(), d.clone(), o.clone()],
            )
            .await?;
            c.exec(
                LINES_DELIVERED,
                &[date.clone(), w.clone(), d.clone(), o.clone()],
            )
            .await?;
            let total = first(&c.query(ORDER_TOTAL, &[w, d, o]).await?, "order lines")?;
            c.exec(
                CUSTOMER_DELIVERED,
                &[cents(cents_of(&total[0])?), int(w_id), int(d_id), int(c_id)],
            )
            .await?;
        }
        Ok(Outcome::Committed)
    }
}

impl<C: SqlConn + 'static> AsyncClient for SqlClient<C> {
    async fn run(&mut self, input: &Input) -> Result<Outcome, Failure> {
        self.conn.begin().await?;
        let result = self.body(input).await;
        match result {
            Ok(Outcome::Committed) => match self.conn.text("COMMIT").await {
                Ok(()) => Ok(Outcome::Committed),
                Err(e) => {
                    let _ = self.conn.text("ROLLBACK").await;
                    Err(e)
                }
            },
            other => {
                // After a deadlock the server has rolled back already; ROLLBACK is harmless.
                let _ = self.conn.text("ROLLBACK").await;
                other
            }
        }
    }
}

impl<C: SqlConn> Close for SqlClient<C> {
    async fn close(self) {
        self.conn.close().await;
    }
}

/// Creates the nine tables over `conn`, dropping any of the same names first.
pub async fn create_tables(conn: &mut impl SqlConn) -> Result<(), Error> {
    for def in TABLES.iter().rev() {
        conn.text(&format!("DROP TABLE IF EXISTS {}", def.name))
            .await?;
    }
    for def in &TABLES {
        conn.text(&def.create_sql()).await?;
    }
    Ok(())
}

/// Loads rows with multi-row INSERT statements, from the loader's thread.
pub struct SqlSink<C: SqlConn>(pub OnThread<C>);

impl<C: SqlConn> Sink for SqlSink<C> {
    fn insert(&mut self, def: &'static TableDef, rows: Vec<Row>) -> Result<(), Error> {
        let mut sql = format!("INSERT INTO {} VALUES ", def.name);
        for (i, row) in rows.iter().enumerate() {
            sql.push_str(if i == 0 { "(" } else { ", (" });
            for (j, value) in row.iter().enumerate() {
                if j > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&value.to_string());
            }
            sql.push(')');
        }
        self.0.run(async |conn| conn.text(&sql).await)?;
        Ok(())
    }
}
