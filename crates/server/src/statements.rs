//! A connection's prepared statements as its packet filter sees them: how many parameters
//! each takes and the types the client bound last. opensrv's backend (`protocol.rs`) adds
//! and removes them; the filter (`wire.rs`) reads them to run executions itself.

use std::collections::HashMap;

use parking_lot::Mutex;

/// What the filter knows of a prepared statement.
#[derive(Clone, Debug, Default)]
pub(crate) struct Statement {
    pub(crate) params: usize,
    /// The parameter types the client bound last (2 bytes each).
    pub(crate) types: Option<Vec<u8>>,
    /// COM_STMT_SEND_LONG_DATA came since the last execution: opensrv holds that data, so
    /// the next execution goes to opensrv.
    pub(crate) long_data: bool,
}

/// The prepared statements of one connection, as the filter sees them (the backend adds and
/// removes; the filter reads and remembers parameter types).
#[derive(Debug, Default)]
pub struct Statements(pub(crate) Mutex<HashMap<u32, Statement>>);

impl Statements {
    /// Statement `id` was prepared with `params` parameters.
    pub fn prepared(&self, id: u32, params: usize) {
        self.0.lock().insert(
            id,
            Statement {
                params,
                types: None,
                long_data: false,
            },
        );
    }

    /// Statement `id` was closed.
    pub fn closed(&self, id: u32) {
        self.0.lock().remove(&id);
    }
}
