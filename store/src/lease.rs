//! A lease: one holder of a run at a time (the learner), through one object of the store
//! that names the holder and until when it holds it.
//!
//! [`Lease::acquire`] creates the object, or replaces one that is free: given back
//! (`released`), expired (not renewed for [`LEASE_TTL`]), damaged, or held by a process of
//! this host that no longer runs (a learner killed with `kill -9`, restarted at once). A
//! lease held by anyone else is refused with [`LeaseError::Held`], which names the holder
//! and when its lease expires. Every write is conditional ([`crate::RunStore::put_if`]),
//! so of two learners that race for a free lease one wins and the other is refused.
//!
//! [`KeptLease`] renews the lease from a thread every [`RENEW_EVERY`] and gives it back
//! when dropped. A renewal that finds another holder marks the lease lost
//! ([`LeaseError::Lost`]): the learner checks [`KeptLease::check`] in its loop and renews
//! with [`KeptLease::renew_now`] right before every write of its state, so a learner whose
//! lease was taken over (it was paused or cut off from the store for longer than the TTL)
//! stops without writing anything.
//!
//! Expiry compares the holder's clock (`expires_unix_ms`) with the taker's: the clocks of
//! the machines must agree to well within the TTL (NTP does). Timing: a learner that stops
//! cleanly frees the run at once; one that dies frees it after at most [`LEASE_TTL`] (at
//! once on the same host); a store that cannot be reached for longer than that lets
//! another learner take the run over, and the first one stops at its next renewal.
//! Hosts are told apart by name: two containers that share a host name but not a process
//! table could see each other's live lease as the lease of a process gone; the holder then
//! finds it taken over at its next renewal and stops before writing.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::{RunStore, StoreError, Versioned};

/// Version of the lease object's JSON.
pub const LEASE_FORMAT_VERSION: u32 = 1;

/// How long a lease holds without a renewal.
pub const LEASE_TTL: Duration = Duration::from_secs(60);

/// How often [`KeptLease`] renews: a quarter of the TTL, so that three renewals in a row
/// may fail (a store slow or away for 45 s) before the lease can be taken over.
pub const RENEW_EVERY: Duration = Duration::from_secs(15);

/// The lease object (JSON; unknown fields refused).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRecord {
    pub format_version: u32,
    /// The holder: `<host>-<pid>-<nonce>`, unique per process and acquisition.
    pub owner: String,
    pub host: String,
    pub pid: u32,
    pub acquired_unix_ms: u64,
    pub renewed_unix_ms: u64,
    /// The holder's clock: free after this unless renewed.
    pub expires_unix_ms: u64,
    /// Given back by a holder that stopped: free at once.
    pub released: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Someone else holds the lease.
    #[error(
        "{url}: another learner holds this run: {} (pid {} on {}), lease `{key}` renewed {} s ago, \
         expires in {} s unless renewed. One learner per run: stop the other one first \
         (one that stops cleanly frees the run at once; one that died frees it within {} s)",
        holder.owner, holder.pid, holder.host, ago_s(holder.renewed_unix_ms), in_s(holder.expires_unix_ms),
        LEASE_TTL.as_secs()
    )]
    Held { url: String, key: String, holder: Box<LeaseRecord> },
    /// Our lease was taken over (or removed) after it had expired.
    #[error("{url}: this learner's lease `{key}` was taken over by {by}; stopping without writing to the run")]
    Lost { url: String, key: String, by: String },
    /// Other processes kept changing the lease object while it was being taken.
    #[error("{url}: lease `{key}` changed under every attempt to take it; try again")]
    Contended { url: String, key: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn ago_s(unix_ms: u64) -> u64 {
    now_ms().saturating_sub(unix_ms) / 1000
}

fn in_s(unix_ms: u64) -> u64 {
    unix_ms.saturating_sub(now_ms()).div_ceil(1000)
}

/// This machine's name (as `koma worker` names its default id).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.')).collect())
        .filter(|h: &String| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether process `pid` of this host has ended (gone or a zombie). Where this cannot
/// be told (no `/proc`), it is taken to run.
fn process_gone(pid: u32) -> bool {
    if !std::path::Path::new("/proc/self").exists() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => {
            stat.rsplit_once(')').is_some_and(|(_, rest)| matches!(rest.trim_start().chars().next(), Some('Z' | 'X')))
        }
        Err(_) => true,
    }
}

impl LeaseRecord {
    pub fn parse(bytes: &[u8]) -> Option<LeaseRecord> {
        serde_json::from_slice::<LeaseRecord>(bytes).ok().filter(|r| r.format_version == LEASE_FORMAT_VERSION)
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("a lease serialises");
        v.push(b'\n');
        v
    }

    /// Whether another process may take it now.
    pub fn is_free(&self) -> bool {
        self.released || self.expires_unix_ms <= now_ms() || (self.host == host_name() && process_gone(self.pid))
    }

    /// A new record of this process, valid for `ttl` from now.
    fn new_holder(ttl: Duration) -> LeaseRecord {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let (host, pid, now) = (host_name(), std::process::id(), now_ms());
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos() as u64);
        let nonce = (nanos ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15)) as u32;
        LeaseRecord {
            format_version: LEASE_FORMAT_VERSION,
            owner: format!("{host}-{pid}-{nonce:08x}"),
            host,
            pid,
            acquired_unix_ms: now,
            renewed_unix_ms: now,
            expires_unix_ms: now + ttl.as_millis() as u64,
            released: false,
        }
    }
}

/// How a lease object that is not ours reads in messages.
fn describe(current: Option<&Versioned>) -> String {
    match current.map(|v| LeaseRecord::parse(&v.bytes)) {
        None => "nobody (the lease object was removed)".into(),
        Some(None) => "a damaged lease object".into(),
        Some(Some(r)) => format!("{} (pid {} on {})", r.owner, r.pid, r.host),
    }
}

/// A lease this process holds.
#[derive(Debug)]
pub struct Lease {
    store: RunStore,
    key: String,
    ttl: Duration,
    record: LeaseRecord,
    /// The object as this process last wrote it.
    version: Versioned,
    /// The free lease that was taken over, if any (for a message).
    pub taken_over: Option<LeaseRecord>,
}

/// Attempts at a conditional write before giving up on a lease that keeps changing.
const ATTEMPTS: usize = 5;

impl Lease {
    /// Takes the lease `key` of `store` for `ttl`: creates it, or replaces a free one.
    pub fn acquire(store: &RunStore, key: &str, ttl: Duration) -> Result<Lease, LeaseError> {
        for _ in 0..ATTEMPTS {
            let current = store.get_versioned(key)?;
            let previous = current.as_ref().and_then(|v| LeaseRecord::parse(&v.bytes));
            if let Some(holder) = previous.as_ref().filter(|r| !r.is_free()) {
                return Err(LeaseError::Held {
                    url: store.url().into(),
                    key: key.into(),
                    holder: Box::new(holder.clone()),
                });
            }
            let record = LeaseRecord::new_holder(ttl);
            if let Some(version) = store.put_if(key, record.to_json(), current.as_ref())? {
                let taken_over = previous.filter(|r| !r.released);
                return Ok(Lease { store: store.clone(), key: key.into(), ttl, record, version, taken_over });
            }
        }
        Err(LeaseError::Contended { url: store.url().into(), key: key.into() })
    }

    pub fn record(&self) -> &LeaseRecord {
        &self.record
    }

    fn lost(&self, current: Option<&Versioned>) -> LeaseError {
        LeaseError::Lost { url: self.store.url().into(), key: self.key.clone(), by: describe(current) }
    }

    /// Writes `next` over our last version; on a conflict, adopts the object if it still is
    /// ours (a write whose answer was lost), else reports the lease lost.
    fn write(&mut self, next: LeaseRecord) -> Result<(), LeaseError> {
        for _ in 0..ATTEMPTS {
            if let Some(v) = self.store.put_if(&self.key, next.to_json(), Some(&self.version))? {
                (self.record, self.version) = (next, v);
                return Ok(());
            }
            let current = self.store.get_versioned(&self.key)?;
            match current.as_ref().and_then(|v| LeaseRecord::parse(&v.bytes)) {
                Some(r) if r.owner == self.record.owner && !r.released => self.version = current.expect("read"),
                _ => return Err(self.lost(current.as_ref())),
            }
        }
        Err(LeaseError::Contended { url: self.store.url().into(), key: self.key.clone() })
    }

    /// Extends the lease by the TTL from now.
    pub fn renew(&mut self) -> Result<(), LeaseError> {
        let now = now_ms();
        let next = LeaseRecord {
            renewed_unix_ms: now,
            expires_unix_ms: now + self.ttl.as_millis() as u64,
            ..self.record.clone()
        };
        self.write(next)
    }

    /// Gives the lease back: the next learner takes it at once.
    pub fn release(&mut self) -> Result<(), LeaseError> {
        let next = LeaseRecord { released: true, expires_unix_ms: now_ms(), ..self.record.clone() };
        self.write(next)
    }
}

/// What the renewal thread and the holder share.
#[derive(Debug)]
struct Shared {
    /// The store's URL and the lease's key, for messages (without waiting for a renewal
    /// in flight, which holds `lease`).
    url: String,
    key: String,
    lease: Mutex<Lease>,
    /// Set when a renewal found another holder: the message of [`LeaseError::Lost`].
    lost: Mutex<Option<String>>,
    stop: Mutex<bool>,
    wake: Condvar,
}

/// A lease renewed in the background and given back when dropped.
#[derive(Debug)]
pub struct KeptLease {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl KeptLease {
    /// Keeps `lease`, renewing it every `every` from a thread of its own.
    pub fn keep(lease: Lease, every: Duration) -> KeptLease {
        let shared = Arc::new(Shared {
            url: lease.store.url().into(),
            key: lease.key.clone(),
            lease: Mutex::new(lease),
            lost: Mutex::new(None),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("koma-lease".into())
            .spawn(move || renew_until_stopped(&s, every))
            .expect("spawn the lease thread");
        KeptLease { shared, thread: Some(thread) }
    }

    pub fn record(&self) -> LeaseRecord {
        self.shared.lease.lock().unwrap_or_else(|e| e.into_inner()).record.clone()
    }

    /// Fails once a renewal has found that another process holds the lease. Never waits
    /// for the store.
    pub fn check(&self) -> Result<(), LeaseError> {
        let lost = self.shared.lost.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match lost {
            Some(by) => Err(LeaseError::Lost { url: self.shared.url.clone(), key: self.shared.key.clone(), by }),
            None => Ok(()),
        }
    }

    /// Renews the lease now: that the run is still ours, right before a write to it.
    pub fn renew_now(&self) -> Result<(), LeaseError> {
        self.check()?;
        renew(&self.shared)
    }
}

/// One renewal; a lost lease is remembered for [`KeptLease::check`].
fn renew(shared: &Shared) -> Result<(), LeaseError> {
    let result = shared.lease.lock().unwrap_or_else(|e| e.into_inner()).renew();
    if let Err(LeaseError::Lost { by, .. }) = &result {
        *shared.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(by.clone());
    }
    result
}

fn renew_until_stopped(shared: &Shared, every: Duration) {
    let mut stop = shared.stop.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        stop = shared.wake.wait_timeout(stop, every).unwrap_or_else(|e| e.into_inner()).0;
        if *stop {
            return;
        }
        drop(stop);
        // A store that is away: try again at the next round (the lease holds for the TTL).
        if let Err(LeaseError::Lost { .. }) = renew(shared) {
            return;
        }
        stop = shared.stop.lock().unwrap_or_else(|e| e.into_inner());
    }
}

impl Drop for KeptLease {
    fn drop(&mut self) {
        *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if self.check().is_ok() {
            // Best effort: a lease that cannot be given back expires by itself.
            let _ = self.shared.lease.lock().unwrap_or_else(|e| e.into_inner()).release();
        }
    }
}
