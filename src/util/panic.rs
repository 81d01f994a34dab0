//! The few places a panic is turned into an error instead of ending pi: a tool call, a provider
//! stream and the agent loop each run their work through [`catch`].
//!
//! While a [`catch`] is running on a thread, [`caught_here`] says so, so a process-wide panic
//! hook can tell a panic that will become an error (leave the terminal alone, print nothing over
//! the screen) from one that ends the process (put the terminal back, print the message).

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// How many [`catch`] calls are running on this thread (they may nest).
    static CATCHING: Cell<u32> = const { Cell::new(0) };
}

/// Runs `work`; a panic inside it comes back as `Err` with the panic's message.
pub fn catch<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    CATCHING.with(|n| n.set(n.get() + 1));
    let outcome = catch_unwind(AssertUnwindSafe(work));
    CATCHING.with(|n| n.set(n.get() - 1));
    outcome.map_err(|payload| message(payload.as_ref()))
}

/// True while a panic on this thread would be caught by [`catch`].
pub fn caught_here() -> bool {
    CATCHING.with(|n| n.get() > 0)
}

/// The text a panic was raised with (`panic!("…")` gives a `&str` or a `String`).
pub fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message() {
        assert_eq!(catch(|| panic!("boom")), Err::<(), _>("boom".to_string()));
        let n = 3;
        assert_eq!(catch(|| panic!("n={n}")), Err::<(), _>("n=3".to_string()));
        assert_eq!(
            catch(|| std::panic::panic_any(7u8)),
            Err::<(), _>("unknown panic".into())
        );
        assert_eq!(catch(|| 5), Ok(5));
    }

    #[test]
    fn caught_here_only_inside_catch_even_after_a_panic() {
        assert!(!caught_here());
        assert_eq!(catch(caught_here), Ok(true));
        assert_eq!(catch(|| catch(caught_here)), Ok(Ok(true)));
        let _ = catch(|| panic!("boom"));
        assert!(!caught_here());
        // Another thread's catch says nothing about this one.
        std::thread::scope(|s| {
            s.spawn(|| assert!(!caught_here()));
        });
    }
}
