//! A bug met on one connection ends that connection alone: its thread (or the pool worker
//! running it) catches the panic, and reports it in one line instead of the default hook's
//! message and backtrace.

/// The name of every connection's thread.
pub(crate) const CONNECTION_THREAD: &str = "waterline-conn";

/// The name of every thread pool worker.
pub(crate) const POOL_THREAD: &str = "waterline-pool";

thread_local! {
    /// Where the last panic on this thread happened, for the one line that reports it.
    static PANIC_AT: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Installs (once) a panic hook that keeps a connection thread's panic to the one line its
/// thread prints when it catches it (no message and backtrace from the default hook); other
/// threads' panics go to the hook that was there before.
pub(crate) fn quiet_connection_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().map(str::to_owned);
            if matches!(name.as_deref(), Some(CONNECTION_THREAD | POOL_THREAD)) {
                let at = info.location().map(ToString::to_string);
                PANIC_AT.with(|a| a.set(at));
            } else {
                before(info);
            }
        }));
    });
}

/// Reports a panic caught on connection `id`'s thread (or pool worker), in one line.
pub(crate) fn report_panic(id: u32, panic: &(dyn std::any::Any + Send)) {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    let at = PANIC_AT.with(|a| a.take()).unwrap_or_default();
    eprintln!("waterline: connection {id} closed by an internal error at {at}: {what}");
}
