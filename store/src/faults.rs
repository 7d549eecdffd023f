//! Faults injected into a `memory://` store, for tests of what the roles do when the store
//! fails: a store that goes away (every request fails), one that fails after a number of
//! further writes (goes away in the middle of an upload of several objects), a full one
//! (writes fail as on a full disk, reads still work), and one whose listings work but
//! whose reads fail.
//!
//! Only `memory://` stores have them ([`crate::RunStore::faults`]); the stores of one
//! name share them, like their objects.

use std::sync::Mutex;

/// What a memory store does with the requests that reach it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    /// Every request is answered.
    #[default]
    None,
    /// Every request fails (a server that is down or unreachable).
    Down,
    /// `n` more writes succeed, then the store is [`Fault::Down`].
    DownAfterWrites(u64),
    /// Writes fail with "no space left on device"; reads and listings work.
    Full,
    /// Listings are answered, reading an object fails (a connection that drops during
    /// transfers, or a folder moved away between a listing and a read).
    ReadsFail,
}

/// The fault switch of one memory store.
#[derive(Debug, Default)]
pub struct Faults {
    now: Mutex<Fault>,
}

/// What a request is, for [`Faults::admit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    List,
    Read,
    Write,
}

impl Faults {
    /// Sets the fault from now on.
    pub fn set(&self, fault: Fault) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = fault;
    }

    pub fn get(&self) -> Fault {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a request of this kind is answered; counts the writes of
    /// [`Fault::DownAfterWrites`].
    pub(crate) fn admit(&self, access: Access) -> Result<(), std::io::Error> {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let down = || std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "injected fault: the store is down");
        match (*now, access) {
            (Fault::None, _) | (Fault::Full, Access::Read | Access::List) => Ok(()),
            (Fault::Down, _) | (Fault::DownAfterWrites(0), _) => Err(down()),
            (Fault::DownAfterWrites(_), Access::Read | Access::List) => Ok(()),
            (Fault::ReadsFail, Access::List) => Ok(()),
            (Fault::ReadsFail, _) => Err(down()),
            (Fault::DownAfterWrites(n), Access::Write) => {
                *now = Fault::DownAfterWrites(n - 1);
                Ok(())
            }
            (Fault::Full, Access::Write) => Err(std::io::Error::from_raw_os_error(libc::ENOSPC)),
        }
    }
}
