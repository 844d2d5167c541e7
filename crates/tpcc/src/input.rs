//! The five transactions' inputs, drawn as the spec says (2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1),
//! and the mix they are drawn in: 45% NewOrder, 43% Payment, 4% each of OrderStatus,
//! Delivery and StockLevel. There is no keying or think time: every client sends its next
//! transaction as soon as the last one ends.

use std::time::{SystemTime, UNIX_EPOCH};

use waterline_txn::DateTime;

use crate::random::{Constants, Rng, TpccRng, last_name, nurand_a};
use crate::schema::{DISTRICTS, Scale};

/// A transaction type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Enter an order of 5 to 15 lines (1% roll back on an unused item id).
    NewOrder,
    /// Record a customer's payment.
    Payment,
    /// Read a customer's last order.
    OrderStatus,
    /// Deliver the oldest undelivered order of each of a warehouse's 10 districts.
    Delivery,
    /// Count recently sold items whose stock is below a threshold.
    StockLevel,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    /// The snake_case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new_order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order_status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock_level",
        }
    }

    /// Position in [`Kind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How a customer is chosen: by id, or by last name (60%: the middle one of those with that
/// name, ordered by first name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CustomerRef {
    /// C_ID.
    Id(i64),
    /// C_LAST.
    Last(String),
}

/// One order line's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    /// The item (one past the last item id in a NewOrder that must roll back).
    pub i_id: i64,
    /// The supplying warehouse (1% remote when there is more than one).
    pub supply_w_id: i64,
    /// 1 to 10.
    pub quantity: i64,
}

/// NewOrder's input (2.4.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOrder {
    /// Home warehouse.
    pub w_id: i64,
    /// District.
    pub d_id: i64,
    /// Customer.
    pub c_id: i64,
    /// The lines, sorted by (supply warehouse, item) as BenchmarkSQL sorts them, so two
    /// NewOrders lock stock rows in one order and do not deadlock each other.
    pub lines: Vec<Line>,
    /// O_ENTRY_D.
    pub entry_d: DateTime,
}

/// Payment's input (2.5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    /// Home warehouse.
    pub w_id: i64,
    /// District.
    pub d_id: i64,
    /// The customer's warehouse (15% remote when there is more than one).
    pub c_w_id: i64,
    /// The customer's district.
    pub c_d_id: i64,
    /// The customer.
    pub customer: CustomerRef,
    /// H_AMOUNT in cents, 1.00 to 5,000.00.
    pub amount_cents: i64,
    /// H_DATE.
    pub date: DateTime,
}

/// OrderStatus's input (2.6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderStatus {
    /// Warehouse.
    pub w_id: i64,
    /// District.
    pub d_id: i64,
    /// The customer.
    pub customer: CustomerRef,
}

/// Delivery's input (2.7.1). Delivery runs as one transaction over the 10 districts (as
/// BenchmarkSQL does; the spec allows it to be queued, which no one here needs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Warehouse.
    pub w_id: i64,
    /// O_CARRIER_ID, 1 to 10.
    pub carrier_id: i64,
    /// OL_DELIVERY_D.
    pub date: DateTime,
}

/// StockLevel's input (2.8.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StockLevel {
    /// Warehouse.
    pub w_id: i64,
    /// District.
    pub d_id: i64,
    /// 10 to 20.
    pub threshold: i64,
}

/// One transaction's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// NewOrder (2.4).
    NewOrder(NewOrder),
    /// Payment (2.5).
    Payment(Payment),
    /// OrderStatus (2.6).
    OrderStatus(OrderStatus),
    /// Delivery (2.7).
    Delivery(Delivery),
    /// StockLevel (2.8).
    StockLevel(StockLevel),
}

impl Input {
    /// The transaction type.
    pub fn kind(&self) -> Kind {
        match self {
            Input::NewOrder(_) => Kind::NewOrder,
            Input::Payment(_) => Kind::Payment,
            Input::OrderStatus(_) => Kind::OrderStatus,
            Input::Delivery(_) => Kind::Delivery,
            Input::StockLevel(_) => Kind::StockLevel,
        }
    }

    /// Whether this is a NewOrder that must roll back (an unused item id, spec 2.4.1.4).
    pub fn must_roll_back(&self, scale: &Scale) -> bool {
        match self {
            Input::NewOrder(i) => i.lines.iter().any(|l| l.i_id > scale.items),
            _ => false,
        }
    }
}

/// The current time, as DATETIME (whole seconds).
pub fn now() -> DateTime {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    DateTime(secs as i64 * 1_000_000)
}

/// One client's input stream: its home warehouse and its random numbers.
#[derive(Clone, Debug)]
pub struct InputGen {
    scale: Scale,
    home: i64,
    rng: Rng,
    item_a: i64,
    customer_a: i64,
    name_a: i64,
}

impl InputGen {
    /// Client `client`'s stream under `seed`; its home warehouse is `client % W + 1`.
    pub fn new(scale: Scale, seed: u64, client: usize) -> InputGen {
        InputGen {
            scale,
            home: client as i64 % scale.warehouses + 1,
            // Streams 1..=W are the loader's warehouses: clients start past them.
            rng: Rng::new(seed ^ 0x5EED_C11E, client as u64),
            item_a: nurand_a(scale.items, 13),
            customer_a: nurand_a(scale.customers, 3),
            name_a: nurand_a(1000, 4),
        }
    }

    /// The next transaction, drawn from the standard mix.
    pub fn next_input(&mut self) -> Input {
        match self.rng.uniform(1, 100) {
            1..=45 => self.new_order(),
            46..=88 => self.payment(),
            89..=92 => self.order_status(),
            93..=96 => self.delivery(),
            _ => self.stock_level(),
        }
    }

    /// An input of the given kind.
    pub fn input(&mut self, kind: Kind) -> Input {
        match kind {
            Kind::NewOrder => self.new_order(),
            Kind::Payment => self.payment(),
            Kind::OrderStatus => self.order_status(),
            Kind::Delivery => self.delivery(),
            Kind::StockLevel => self.stock_level(),
        }
    }

    fn district(&mut self) -> i64 {
        self.rng.uniform(1, DISTRICTS)
    }

    fn customer_id(&mut self) -> i64 {
        let c = Constants::RUN.c_id % self.scale.customers;
        self.rng.nurand(self.customer_a, c, 1, self.scale.customers)
    }

    fn customer(&mut self) -> CustomerRef {
        if self.rng.percent(60) {
            // Names exist for 0..min(1000, customers): the first 1,000 customers have them all.
            let n = self.rng.nurand(self.name_a, Constants::RUN.c_last, 0, 999);
            CustomerRef::Last(last_name(n % self.scale.customers.min(1000)))
        } else {
            CustomerRef::Id(self.customer_id())
        }
    }

    fn other_warehouse(&mut self) -> i64 {
        let w = self.rng.uniform(1, self.scale.warehouses - 1);
        if w >= self.home { w + 1 } else { w }
    }

    fn new_order(&mut self) -> Input {
        let d_id = self.district();
        let c_id = self.customer_id();
        let count = self.rng.uniform(5, 15);
        let roll_back = self.rng.percent(1);
        let mut lines: Vec<Line> = (0..count)
            .map(|_| {
                let c = Constants::RUN.ol_i_id % self.scale.items;
                let i_id = self.rng.nurand(self.item_a, c, 1, self.scale.items);
                let remote = self.scale.warehouses > 1 && self.rng.percent(1);
                Line {
                    i_id,
                    supply_w_id: if remote {
                        self.other_warehouse()
                    } else {
                        self.home
                    },
                    quantity: self.rng.uniform(1, 10),
                }
            })
            .collect();
        if roll_back {
            lines.last_mut().expect("5 or more lines").i_id = self.scale.items + 1;
        }
        lines.sort_by_key(|l| (l.supply_w_id, l.i_id));
        Input::NewOrder(NewOrder {
            w_id: self.home,
            d_id,
            c_id,
            lines,
            entry_d: now(),
        })
    }

    fn payment(&mut self) -> Input {
        let d_id = self.district();
        let (c_w_id, c_d_id) = if self.scale.warehouses > 1 && self.rng.percent(15) {
            (self.other_warehouse(), self.district())
        } else {
            (self.home, d_id)
        };
        Input::Payment(Payment {
            w_id: self.home,
            d_id,
            c_w_id,
            c_d_id,
            customer: self.customer(),
            amount_cents: self.rng.uniform(100, 500_000),
            date: now(),
        })
    }

    fn order_status(&mut self) -> Input {
        Input::OrderStatus(OrderStatus {
            w_id: self.home,
            d_id: self.district(),
            customer: self.customer(),
        })
    }

    fn delivery(&mut self) -> Input {
        Input::Delivery(Delivery {
            w_id: self.home,
            carrier_id: self.rng.uniform(1, 10),
            date: now(),
        })
    }

    fn stock_level(&mut self) -> Input {
        Input::StockLevel(StockLevel {
            w_id: self.home,
            d_id: self.district(),
            threshold: self.rng.uniform(10, 20),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_the_standard_one() {
        let mut generator = InputGen::new(Scale::standard(2), 1, 0);
        let mut counts = [0u32; 5];
        let mut rollbacks = 0;
        for _ in 0..100_000 {
            let input = generator.next_input();
            counts[input.kind().index()] += 1;
            rollbacks += u32::from(input.must_roll_back(&Scale::standard(2)));
        }
        let pct = |i: usize| f64::from(counts[i]) / 1000.0;
        assert!((pct(0) - 45.0).abs() < 1.0, "{counts:?}");
        assert!((pct(1) - 43.0).abs() < 1.0, "{counts:?}");
        for i in 2..5 {
            assert!((pct(i) - 4.0).abs() < 0.5, "{counts:?}");
        }
        let rollback_pct = f64::from(rollbacks) / f64::from(counts[0]) * 100.0;
        assert!((rollback_pct - 1.0).abs() < 0.3, "{rollback_pct}");
    }
}
