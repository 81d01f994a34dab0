//! One-shot answers between threads: a helper thread's result, a dialog's answer, a session
//! handed back by the thread that ran it. [`reply`] gives a typed pair over one channel type
//! shared by all of them: every distinct element type of a crossbeam channel adds 3-13 KB of
//! channel code to the binary, while an answer, sent once per exchange, affords one allocation.
//!
//! A dropped [`ReplyTx`] disconnects the receiver, as a dropped `Sender` does: "no answer".

use std::any::Any;
use std::marker::PhantomData;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvError, RecvTimeoutError, Sender, TryRecvError};

/// An answer in transit (what [`ReplyRx::raw`] yields; [`open`] unpacks it).
pub type Boxed = Box<dyn Any + Send>;

/// Sends the one answer.
pub struct ReplyTx<T> {
    tx: Sender<Boxed>,
    kind: PhantomData<fn(T)>,
}

/// Waits for the one answer. Clones wait for the same answer (the first to look gets it).
pub struct ReplyRx<T> {
    rx: Receiver<Boxed>,
    kind: PhantomData<fn() -> T>,
}

/// A new sender and receiver for one answer of type `T`.
pub fn reply<T: Send + 'static>() -> (ReplyTx<T>, ReplyRx<T>) {
    let (tx, rx) = crossbeam_channel::bounded(1);
    (
        ReplyTx {
            tx,
            kind: PhantomData,
        },
        ReplyRx {
            rx,
            kind: PhantomData,
        },
    )
}

/// Unpacks what [`ReplyRx::raw`] yielded in a `select!`.
pub fn open<T: 'static>(boxed: Boxed) -> T {
    match boxed.downcast::<T>() {
        Ok(value) => *value,
        // Only a `ReplyTx<T>` sends on a `ReplyRx<T>`'s channel.
        Err(_) => unreachable!("a reply of another type"),
    }
}

impl<T: Send + 'static> ReplyTx<T> {
    /// Sends the answer; gives it back when nobody waits any more.
    pub fn send(self, value: T) -> Result<(), T> {
        self.tx
            .send(Box::new(value))
            .map_err(|e| open(e.into_inner()))
    }
}

impl<T: 'static> ReplyRx<T> {
    /// A receiver that never gets an answer (for an idle `select!` arm).
    pub fn never() -> Self {
        ReplyRx {
            rx: crossbeam_channel::never(),
            kind: PhantomData,
        }
    }

    pub fn recv(&self) -> Result<T, RecvError> {
        self.rx.recv().map(open)
    }

    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.rx.recv_timeout(timeout).map(open)
    }

    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.rx.try_recv().map(open)
    }

    /// The channel itself, for `recv(rx.raw()) -> r` in a `select!`; [`open`] unpacks `r`.
    pub fn raw(&self) -> &Receiver<Boxed> {
        &self.rx
    }
}

impl<T> Clone for ReplyRx<T> {
    fn clone(&self) -> Self {
        ReplyRx {
            rx: self.rx.clone(),
            kind: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_arrives_typed_and_a_dropped_sender_means_none() {
        let (tx, rx) = reply::<String>();
        let waiting = rx.clone();
        let sender = std::thread::spawn(move || tx.send("done".to_string()).unwrap());
        assert_eq!(waiting.recv(), Ok("done".to_string()));
        // The sender is dropped when its thread ends, not when the answer arrives.
        sender.join().unwrap();
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));

        let (tx, rx) = reply::<u32>();
        drop(rx);
        assert_eq!(tx.send(7), Err(7), "an unwanted answer comes back");

        let (tx, rx) = reply::<u32>();
        drop(tx);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)),
            Err(RecvTimeoutError::Disconnected)
        );
        assert!(ReplyRx::<u32>::never().try_recv().is_err());
    }

    #[test]
    fn select_gets_the_answer_through_raw_and_open() {
        let (tx, rx) = reply::<Vec<u8>>();
        tx.send(vec![1, 2]).unwrap();
        crossbeam_channel::select! {
            recv(rx.raw()) -> got => assert_eq!(got.map(open::<Vec<u8>>), Ok(vec![1, 2])),
        }
    }
}
