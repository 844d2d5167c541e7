//! The session's variables: the database in use (`USE`), the variables `SET` changes (their
//! rules are `vars.rs`'s, their values `settings.rs`'s), user variables and
//! `LAST_INSERT_ID()`.

use std::collections::HashMap;
use std::sync::Arc;

use waterline_txn::Value;

use crate::settings::Settings;
use crate::shared::Shared;

/// A session's variables.
#[derive(Debug)]
pub(super) struct Variables {
    /// The database in use (`USE`), shared with each statement that reads it.
    pub(super) database: Option<Arc<str>>,
    /// The session's variables (`SET`; `vars.rs` owns them).
    pub(super) settings: Settings,
    /// User variables (`SET @v = ...`), by lowercase name.
    pub(super) user: HashMap<String, Value>,
    /// `LAST_INSERT_ID()`.
    pub(super) last_insert_id: u64,
}

impl Variables {
    /// A new session's: the server's defaults, in `database` if given.
    pub(super) fn new(shared: &Arc<Shared>, database: Option<&str>) -> Variables {
        Variables {
            database: database.map(Arc::from),
            settings: Settings::new(shared),
            user: HashMap::new(),
            last_insert_id: 0,
        }
    }
}
