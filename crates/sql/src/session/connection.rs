//! What a connection needs of its session beyond statements: who logged in, the socket to
//! close on `KILL CONNECTION`, the idle timeouts, and the commands that act on the server
//! (`COM_PROCESS_KILL`, `COM_SHUTDOWN`, `COM_STATISTICS`). The protocol layer calls these;
//! nothing outside this crate touches a session's fields.

use std::sync::Arc;

use super::Session;
use crate::control::Peer;
use crate::error::SqlError;
use crate::shared::{Shared, Timeouts};

/// Who a session is: its connection's id, its user, and what `KILL` reaches it through
/// (registered with the server's controls).
#[derive(Debug)]
pub(super) struct Connection {
    pub(super) id: u32,
    pub(super) user: String,
    pub(super) control: Arc<crate::control::Control>,
}

impl Session {
    /// What the session's server shares with its other sessions.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The user the session runs as ("" until a connection logs in).
    pub fn user(&self) -> &str {
        &self.connection.user
    }

    /// The connection authenticated `user`: the session runs as it from now on, and KILL
    /// knows whose it is.
    pub fn log_in(&mut self, user: &str) {
        self.connection.user = user.to_owned();
        self.connection.control.set_user(user);
    }

    /// The client's end of the connection, which `KILL CONNECTION` closes and a running
    /// statement looks at to stop when its client has gone.
    pub fn attach_peer(&self, peer: Arc<dyn Peer>) {
        self.connection.control.attach(peer);
    }

    /// The session's idle and network timeouts.
    pub fn timeouts(&self) -> Timeouts {
        self.vars.settings.timeouts
    }

    /// The client said it is interactive: it waits `interactive_timeout` for a command, as
    /// MySQL's `wait_timeout` then starts.
    pub fn make_interactive(&mut self) {
        self.vars.settings.timeouts.wait = self.vars.settings.timeouts.interactive;
    }

    /// `mysql_kill()` (`COM_PROCESS_KILL`): `KILL CONNECTION id` from this session's user.
    pub fn kill_connection(&self, id: u32) -> Result<(), SqlError> {
        self.shared
            .controls
            .kill(id.into(), true, &self.connection.user)
    }

    /// `COM_SHUTDOWN`: asks the server to stop, if this session's user may.
    pub fn request_shutdown(&self) -> Result<(), SqlError> {
        self.shared.request_shutdown(&self.connection.user)
    }
}
