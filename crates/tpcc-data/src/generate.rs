//! The initial database (spec 4.3.3.1): ITEM once, then per warehouse its districts,
//! customers (with one HISTORY row each), orders (the last 30% undelivered, in NEW_ORDER),
//! order lines and stock.
//!
//! Every row comes from a [`Rng`] seeded by the run's seed and the warehouse (ITEM has its
//! own stream), and every date is one fixed load date, so a seed fixes the loaded database
//! whatever the number of loader threads and whichever loads which warehouse.

use waterline_types::{DateTime, Decimal, Row, Value};

use crate::random::{Constants, Rng, TpccRng, last_name, nurand_a};
use crate::schema::{DISTRICTS, Scale};

/// The date every loaded row carries (c_since, o_entry_d, h_date, ol_delivery_d).
pub fn load_date() -> DateTime {
    DateTime::from_ymd_hms(2026, 1, 1, 0, 0, 0).expect("a valid date")
}

/// `n` hundredths as DECIMAL(_, 2).
pub fn cents(n: i64) -> Value {
    Value::Decimal(Decimal::new(n.into(), 2).expect("fits a decimal"))
}

/// `n` ten-thousandths as DECIMAL(4, 4) (tax and discount rates).
fn rate(n: i64) -> Value {
    Value::Decimal(Decimal::new(n.into(), 4).expect("fits a decimal"))
}

fn s(text: impl Into<String>) -> Value {
    Value::from(text.into())
}

/// Generates the initial database: ITEM, and each warehouse with everything in it, each
/// from its own random stream, so the rows do not depend on who generates what, or in
/// which order.
#[derive(Clone, Copy, Debug)]
pub struct Generator {
    /// How many rows.
    pub scale: Scale,
    /// The seed every stream starts from.
    pub seed: u64,
}

impl Generator {
    /// Every row of the database, table by table as `out` receives them (`out` may stop
    /// the generation with an error).
    pub fn all<E>(
        &self,
        out: &mut impl FnMut(&'static str, Row) -> Result<(), E>,
    ) -> Result<(), E> {
        self.items(out)?;
        (1..=self.scale.warehouses).try_for_each(|w| self.warehouse(w, out))
    }

    /// ITEM's rows, to `out`.
    pub fn items<E>(
        &self,
        out: &mut impl FnMut(&'static str, Row) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rng = Rng::new(self.seed, 0);
        for i in 1..=self.scale.items {
            out(
                "item",
                vec![
                    Value::Int(i),
                    Value::Int(rng.uniform(1, 10_000)),
                    s(rng.astring(14, 24)),
                    cents(rng.uniform(100, 10_000)),
                    s(rng.data(26, 50)),
                ],
            )?;
        }
        Ok(())
    }

    /// Warehouse `w` and its stock, districts, customers, history, orders, order lines and
    /// new orders, to `out`.
    pub fn warehouse<E>(
        &self,
        w: i64,
        out: &mut impl FnMut(&'static str, Row) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rng = Rng::new(self.seed, w as u64);
        let date = Value::DateTime(load_date());
        let mut row = vec![Value::Int(w), s(rng.astring(6, 10))];
        row.extend(address(&mut rng));
        row.extend([rate(rng.uniform(0, 2000)), cents(30_000_000)]);
        out("warehouse", row)?;
        for i in 1..=self.scale.items {
            let mut row = vec![
                Value::Int(w),
                Value::Int(i),
                Value::Int(rng.uniform(10, 100)),
            ];
            row.extend((0..10).map(|_| s(rng.astring(24, 24))));
            row.extend([
                Value::Int(0),
                Value::Int(0),
                Value::Int(0),
                s(rng.data(26, 50)),
            ]);
            out("stock", row)?;
        }
        let customers = self.scale.customers;
        let name_a = nurand_a(1000, 4);
        for d in 1..=DISTRICTS {
            let mut row = vec![Value::Int(w), Value::Int(d), s(rng.astring(6, 10))];
            row.extend(address(&mut rng));
            row.extend([
                rate(rng.uniform(0, 2000)),
                cents(3_000_000),
                Value::Int(customers + 1),
            ]);
            out("district", row)?;
            for c in 1..=customers {
                let last = if c <= 1000 {
                    last_name(c - 1)
                } else {
                    last_name(rng.nurand(name_a, Constants::LOAD.c_last, 0, 999))
                };
                let mut row = vec![
                    Value::Int(w),
                    Value::Int(d),
                    Value::Int(c),
                    s(rng.astring(8, 16)),
                    s("OE"),
                    s(last),
                ];
                row.extend(address(&mut rng)[..5].iter().cloned());
                row.extend([
                    s(rng.nstring(16)),
                    date.clone(),
                    s(if rng.percent(10) { "BC" } else { "GC" }),
                    cents(5_000_000),
                    rate(rng.uniform(0, 5000)),
                    cents(-1000),
                    cents(1000),
                    Value::Int(1),
                    Value::Int(0),
                    s(rng.astring(300, 500)),
                ]);
                out("customer", row)?;
                out(
                    "history",
                    vec![
                        Value::Int(c),
                        Value::Int(d),
                        Value::Int(w),
                        Value::Int(d),
                        Value::Int(w),
                        date.clone(),
                        cents(1000),
                        s(rng.astring(12, 24)),
                    ],
                )?;
            }
            // Orders: customers in a random permutation (spec 4.3.3.1).
            let mut order_customer: Vec<i64> = (1..=customers).collect();
            for i in (1..order_customer.len()).rev() {
                let j = rng.uniform(0, i as i64) as usize;
                order_customer.swap(i, j);
            }
            let first_undelivered = customers - self.scale.undelivered() + 1;
            for o in 1..=customers {
                let delivered = o < first_undelivered;
                let lines = rng.uniform(5, 15);
                out(
                    "orders",
                    vec![
                        Value::Int(w),
                        Value::Int(d),
                        Value::Int(o),
                        Value::Int(order_customer[o as usize - 1]),
                        date.clone(),
                        if delivered {
                            Value::Int(rng.uniform(1, 10))
                        } else {
                            Value::Null
                        },
                        Value::Int(lines),
                        Value::Int(1),
                    ],
                )?;
                for n in 1..=lines {
                    out(
                        "order_line",
                        vec![
                            Value::Int(w),
                            Value::Int(d),
                            Value::Int(o),
                            Value::Int(n),
                            Value::Int(rng.uniform(1, self.scale.items)),
                            Value::Int(w),
                            if delivered { date.clone() } else { Value::Null },
                            Value::Int(5),
                            if delivered {
                                cents(0)
                            } else {
                                cents(rng.uniform(1, 999_999))
                            },
                            s(rng.astring(24, 24)),
                        ],
                    )?;
                }
                if !delivered {
                    out(
                        "new_order",
                        vec![Value::Int(w), Value::Int(d), Value::Int(o)],
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// street_1, street_2, city, state, zip.
fn address(rng: &mut Rng) -> [Value; 5] {
    [
        s(rng.astring(10, 20)),
        s(rng.astring(10, 20)),
        s(rng.astring(10, 20)),
        s(rng.astring(2, 2).to_ascii_uppercase()),
        s(rng.zip()),
    ]
}

/// Rows a load of `scale` writes, about (order lines are 5 to 15 an order: 10 counted).
pub fn expected_rows(scale: &Scale) -> u64 {
    let per_district = scale.customers * 2 + scale.customers * 11 + scale.undelivered() + 1;
    (scale.items + scale.warehouses * (1 + scale.items + DISTRICTS * per_district)) as u64
}
