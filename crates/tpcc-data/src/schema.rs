//! The nine TPC-C tables (spec 1.3), written once and turned into both the engine's
//! [`TableSchema`]s (native backend) and `CREATE TABLE` text (SQL backends), so every backend
//! runs on the same columns, types, keys and indexes.
//!
//! Column types are the spec's: ids INT, money DECIMAL(12,2), rates DECIMAL(4,4), names
//! VARCHAR, codes CHAR, dates DATETIME. HISTORY has no primary key (the engine gives it hidden
//! row ids, as InnoDB does). Two secondary indexes serve the by-name and last-order lookups:
//! `idx_customer (c_w_id, c_d_id, c_last, c_first)` and `idx_orders (o_w_id, o_d_id, o_c_id,
//! o_id)`, as BenchmarkSQL creates them.

use waterline_types::{Column, ColumnType, SchemaError, TableSchema};

/// How many rows the database has (spec 1.2 and 4.3.3.1; the spec's values by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Warehouses (W, the TPC-C scale factor).
    pub warehouses: i64,
    /// Items (100,000 in the spec; fewer for a "lite" run, stated in every report).
    pub items: i64,
    /// Customers per district, and orders loaded per district (3,000 in the spec).
    pub customers: i64,
}

/// Districts per warehouse (fixed by the spec).
pub const DISTRICTS: i64 = 10;

impl Scale {
    /// The spec's cardinalities for `warehouses`.
    pub fn standard(warehouses: i64) -> Scale {
        Scale {
            warehouses,
            items: 100_000,
            customers: 3000,
        }
    }

    /// Whether this is the spec's scale (else the report says "lite").
    pub fn is_standard(&self) -> bool {
        self.items == 100_000 && self.customers == 3000
    }

    /// Orders loaded per district that are not delivered yet (the last 900 of 3,000: 30%).
    pub fn undelivered(&self) -> i64 {
        self.customers * 3 / 10
    }

    /// Checks the numbers that can be wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.warehouses < 1 || self.items < 15 || self.customers < 10 {
            return Err(format!(
                "scale needs at least 1 warehouse, 15 items and 10 customers per district, got {self:?}"
            ));
        }
        Ok(())
    }
}

/// One table: name, columns, primary key, secondary indexes.
#[derive(Clone, Copy, Debug)]
pub struct TableDef {
    /// The table's name.
    pub name: &'static str,
    /// Columns: name, type, nullable.
    pub columns: &'static [(&'static str, ColumnType, bool)],
    /// Primary key columns (empty: none).
    pub primary_key: &'static [&'static str],
    /// Secondary indexes: name and columns.
    pub indexes: &'static [(&'static str, &'static [&'static str])],
}

const INT: ColumnType = ColumnType::Int;
const MONEY: ColumnType = ColumnType::Decimal {
    precision: 12,
    scale: 2,
};
const RATE: ColumnType = ColumnType::Decimal {
    precision: 4,
    scale: 4,
};
const AMOUNT: ColumnType = ColumnType::Decimal {
    precision: 6,
    scale: 2,
};
const DATE: ColumnType = ColumnType::DateTime(0);
const fn vc(n: u32) -> ColumnType {
    ColumnType::Varchar(n)
}
const fn ch(n: u32) -> ColumnType {
    ColumnType::Char(n)
}

/// The tables, in load order.
pub const TABLES: [TableDef; 9] = [
    TableDef {
        name: "warehouse",
        columns: &[
            ("w_id", INT, false),
            ("w_name", vc(10), false),
            ("w_street_1", vc(20), false),
            ("w_street_2", vc(20), false),
            ("w_city", vc(20), false),
            ("w_state", ch(2), false),
            ("w_zip", ch(9), false),
            ("w_tax", RATE, false),
            ("w_ytd", MONEY, false),
        ],
        primary_key: &["w_id"],
        indexes: &[],
    },
    TableDef {
        name: "district",
        columns: &[
            ("d_w_id", INT, false),
            ("d_id", INT, false),
            ("d_name", vc(10), false),
            ("d_street_1", vc(20), false),
            ("d_street_2", vc(20), false),
            ("d_city", vc(20), false),
            ("d_state", ch(2), false),
            ("d_zip", ch(9), false),
            ("d_tax", RATE, false),
            ("d_ytd", MONEY, false),
            ("d_next_o_id", INT, false),
        ],
        primary_key: &["d_w_id", "d_id"],
        indexes: &[],
    },
    TableDef {
        name: "customer",
        columns: &[
            ("c_w_id", INT, false),
            ("c_d_id", INT, false),
            ("c_id", INT, false),
            ("c_first", vc(16), false),
            ("c_middle", ch(2), false),
            ("c_last", vc(16), false),
            ("c_street_1", vc(20), false),
            ("c_street_2", vc(20), false),
            ("c_city", vc(20), false),
            ("c_state", ch(2), false),
            ("c_zip", ch(9), false),
            ("c_phone", ch(16), false),
            ("c_since", DATE, false),
            ("c_credit", ch(2), false),
            ("c_credit_lim", MONEY, false),
            ("c_discount", RATE, false),
            ("c_balance", MONEY, false),
            ("c_ytd_payment", MONEY, false),
            ("c_payment_cnt", INT, false),
            ("c_delivery_cnt", INT, false),
            ("c_data", vc(500), false),
        ],
        primary_key: &["c_w_id", "c_d_id", "c_id"],
        indexes: &[("idx_customer", &["c_w_id", "c_d_id", "c_last", "c_first"])],
    },
    TableDef {
        name: "history",
        columns: &[
            ("h_c_id", INT, false),
            ("h_c_d_id", INT, false),
            ("h_c_w_id", INT, false),
            ("h_d_id", INT, false),
            ("h_w_id", INT, false),
            ("h_date", DATE, false),
            ("h_amount", AMOUNT, false),
            ("h_data", vc(24), false),
        ],
        primary_key: &[],
        indexes: &[],
    },
    TableDef {
        name: "new_order",
        columns: &[
            ("no_w_id", INT, false),
            ("no_d_id", INT, false),
            ("no_o_id", INT, false),
        ],
        primary_key: &["no_w_id", "no_d_id", "no_o_id"],
        indexes: &[],
    },
    TableDef {
        name: "orders",
        columns: &[
            ("o_w_id", INT, false),
            ("o_d_id", INT, false),
            ("o_id", INT, false),
            ("o_c_id", INT, false),
            ("o_entry_d", DATE, false),
            ("o_carrier_id", INT, true),
            ("o_ol_cnt", INT, false),
            ("o_all_local", INT, false),
        ],
        primary_key: &["o_w_id", "o_d_id", "o_id"],
        indexes: &[("idx_orders", &["o_w_id", "o_d_id", "o_c_id", "o_id"])],
    },
    TableDef {
        name: "order_line",
        columns: &[
            ("ol_w_id", INT, false),
            ("ol_d_id", INT, false),
            ("ol_o_id", INT, false),
            ("ol_number", INT, false),
            ("ol_i_id", INT, false),
            ("ol_supply_w_id", INT, false),
            ("ol_delivery_d", DATE, true),
            ("ol_quantity", INT, false),
            ("ol_amount", AMOUNT, false),
            ("ol_dist_info", ch(24), false),
        ],
        primary_key: &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
        indexes: &[],
    },
    TableDef {
        name: "item",
        columns: &[
            ("i_id", INT, false),
            ("i_im_id", INT, false),
            ("i_name", vc(24), false),
            (
                "i_price",
                ColumnType::Decimal {
                    precision: 5,
                    scale: 2,
                },
                false,
            ),
            ("i_data", vc(50), false),
        ],
        primary_key: &["i_id"],
        indexes: &[],
    },
    TableDef {
        name: "stock",
        columns: &[
            ("s_w_id", INT, false),
            ("s_i_id", INT, false),
            ("s_quantity", INT, false),
            ("s_dist_01", ch(24), false),
            ("s_dist_02", ch(24), false),
            ("s_dist_03", ch(24), false),
            ("s_dist_04", ch(24), false),
            ("s_dist_05", ch(24), false),
            ("s_dist_06", ch(24), false),
            ("s_dist_07", ch(24), false),
            ("s_dist_08", ch(24), false),
            ("s_dist_09", ch(24), false),
            ("s_dist_10", ch(24), false),
            ("s_ytd", INT, false),
            ("s_order_cnt", INT, false),
            ("s_remote_cnt", INT, false),
            ("s_data", vc(50), false),
        ],
        primary_key: &["s_w_id", "s_i_id"],
        indexes: &[],
    },
];

/// Column positions the native transactions use (checked against [`TABLES`] by a test).
pub mod col {
    #![allow(missing_docs)]
    pub const W_NAME: usize = 1;
    pub const W_TAX: usize = 7;
    pub const W_YTD: usize = 8;
    pub const D_TAX: usize = 8;
    pub const D_YTD: usize = 9;
    pub const D_NEXT_O_ID: usize = 10;
    pub const C_ID: usize = 2;
    pub const C_FIRST: usize = 3;
    pub const C_LAST: usize = 5;
    pub const C_CREDIT: usize = 13;
    pub const C_DISCOUNT: usize = 15;
    pub const C_BALANCE: usize = 16;
    pub const C_YTD_PAYMENT: usize = 17;
    pub const C_PAYMENT_CNT: usize = 18;
    pub const C_DELIVERY_CNT: usize = 19;
    pub const C_DATA: usize = 20;
    pub const NO_O_ID: usize = 2;
    pub const O_ID: usize = 2;
    pub const O_C_ID: usize = 3;
    pub const O_ENTRY_D: usize = 4;
    pub const O_CARRIER_ID: usize = 5;
    pub const O_OL_CNT: usize = 6;
    pub const OL_I_ID: usize = 4;
    pub const OL_DELIVERY_D: usize = 6;
    pub const OL_AMOUNT: usize = 8;
    pub const I_NAME: usize = 2;
    pub const I_PRICE: usize = 3;
    pub const I_DATA: usize = 4;
    pub const S_QUANTITY: usize = 2;
    pub const S_DIST_01: usize = 3;
    pub const S_YTD: usize = 13;
    pub const S_ORDER_CNT: usize = 14;
    pub const S_REMOTE_CNT: usize = 15;
    pub const S_DATA: usize = 16;
}

impl TableDef {
    /// The engine's schema for this table.
    pub fn schema(&self) -> Result<TableSchema, SchemaError> {
        let columns = self
            .columns
            .iter()
            .map(|&(name, ty, nullable)| match nullable {
                true => Column::nullable(name, ty),
                false => Column::new(name, ty),
            })
            .collect();
        let mut schema = TableSchema::new(self.name, columns);
        if !self.primary_key.is_empty() {
            schema = schema.primary_key(self.primary_key)?;
        }
        for (name, columns) in self.indexes {
            schema = schema.index(name, columns, false)?;
        }
        Ok(schema)
    }

    /// `CREATE TABLE` for this table, in the SQL both waterline and MySQL/MariaDB accept.
    pub fn create_sql(&self) -> String {
        let mut parts: Vec<String> = self
            .columns
            .iter()
            .map(|(name, ty, nullable)| {
                let null = if *nullable { "NULL" } else { "NOT NULL" };
                format!("{name} {} {null}", sql_type(*ty))
            })
            .collect();
        if !self.primary_key.is_empty() {
            parts.push(format!("PRIMARY KEY ({})", self.primary_key.join(", ")));
        }
        for (name, columns) in self.indexes {
            parts.push(format!("KEY {name} ({})", columns.join(", ")));
        }
        format!("CREATE TABLE {} (\n  {}\n)", self.name, parts.join(",\n  "))
    }
}

fn int_name(bytes: u8) -> &'static str {
    match bytes {
        1 => "TINYINT",
        2 => "SMALLINT",
        3 => "MEDIUMINT",
        4 => "INT",
        _ => "BIGINT",
    }
}

fn sql_type(ty: ColumnType) -> String {
    match ty {
        ColumnType::TinyInt => "TINYINT".into(),
        ColumnType::SmallInt => "SMALLINT".into(),
        ColumnType::MediumInt => "MEDIUMINT".into(),
        ColumnType::Int => "INT".into(),
        ColumnType::BigInt => "BIGINT".into(),
        ColumnType::Unsigned(bytes) => format!("{} UNSIGNED", int_name(bytes)),
        ColumnType::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
        ColumnType::Char(n) => format!("CHAR({n})"),
        ColumnType::Varchar(n) => format!("VARCHAR({n})"),
        ColumnType::DateTime(0) => "DATETIME".into(),
        ColumnType::DateTime(fsp) => format!("DATETIME({fsp})"),
        ColumnType::Double => "DOUBLE".into(),
        ColumnType::Date => "DATE".into(),
    }
}

/// The definition of table `name`.
pub fn table(name: &str) -> &'static TableDef {
    TABLES
        .iter()
        .find(|t| t.name == name)
        .expect("a TPC-C table name")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(table_name: &str, column: &str) -> usize {
        table(table_name).schema().unwrap().column(column).unwrap()
    }

    #[test]
    fn column_constants_match_the_tables() {
        let cases = [
            ("warehouse", "w_name", col::W_NAME),
            ("warehouse", "w_tax", col::W_TAX),
            ("warehouse", "w_ytd", col::W_YTD),
            ("district", "d_tax", col::D_TAX),
            ("district", "d_ytd", col::D_YTD),
            ("district", "d_next_o_id", col::D_NEXT_O_ID),
            ("customer", "c_id", col::C_ID),
            ("customer", "c_first", col::C_FIRST),
            ("customer", "c_last", col::C_LAST),
            ("customer", "c_credit", col::C_CREDIT),
            ("customer", "c_discount", col::C_DISCOUNT),
            ("customer", "c_balance", col::C_BALANCE),
            ("customer", "c_ytd_payment", col::C_YTD_PAYMENT),
            ("customer", "c_payment_cnt", col::C_PAYMENT_CNT),
            ("customer", "c_delivery_cnt", col::C_DELIVERY_CNT),
            ("customer", "c_data", col::C_DATA),
            ("new_order", "no_o_id", col::NO_O_ID),
            ("orders", "o_id", col::O_ID),
            ("orders", "o_c_id", col::O_C_ID),
            ("orders", "o_entry_d", col::O_ENTRY_D),
            ("orders", "o_carrier_id", col::O_CARRIER_ID),
            ("orders", "o_ol_cnt", col::O_OL_CNT),
            ("order_line", "ol_i_id", col::OL_I_ID),
            ("order_line", "ol_delivery_d", col::OL_DELIVERY_D),
            ("order_line", "ol_amount", col::OL_AMOUNT),
            ("item", "i_name", col::I_NAME),
            ("item", "i_price", col::I_PRICE),
            ("item", "i_data", col::I_DATA),
            ("stock", "s_quantity", col::S_QUANTITY),
            ("stock", "s_dist_01", col::S_DIST_01),
            ("stock", "s_ytd", col::S_YTD),
            ("stock", "s_order_cnt", col::S_ORDER_CNT),
            ("stock", "s_remote_cnt", col::S_REMOTE_CNT),
            ("stock", "s_data", col::S_DATA),
        ];
        for (t, c, expected) in cases {
            assert_eq!(position(t, c), expected, "{t}.{c}");
        }
    }

    #[test]
    fn ddl_names_every_column_and_key() {
        let sql = table("customer").create_sql();
        assert!(sql.starts_with("CREATE TABLE customer ("));
        assert!(sql.contains("c_discount DECIMAL(4,4) NOT NULL"));
        assert!(sql.contains("PRIMARY KEY (c_w_id, c_d_id, c_id)"));
        assert!(sql.contains("KEY idx_customer (c_w_id, c_d_id, c_last, c_first)"));
        assert!(table("history").create_sql().contains("h_data VARCHAR(24)"));
    }
}
