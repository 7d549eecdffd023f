//! The lease: one holder at a time, a clear refusal naming the holder, free leases
//! (released, expired, of a process that is gone, damaged) taken over, and a holder whose
//! lease was taken over told so.

use std::time::Duration;

use store::lease::{host_name, KeptLease, Lease, LeaseError, LeaseRecord, LEASE_FORMAT_VERSION};
use store::RunStore;

const KEY: &str = "learner.lease";
const TTL: Duration = Duration::from_secs(60);

fn stores(name: &str) -> (RunStore, tempfile::TempDir, RunStore) {
    let dir = tempfile::tempdir().unwrap();
    let local = RunStore::open(dir.path().to_str().unwrap()).unwrap();
    (RunStore::open(&format!("memory://lease-{name}")).unwrap(), dir, local)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A lease record of someone else.
fn other(host: &str, pid: u32, expires_unix_ms: u64) -> LeaseRecord {
    LeaseRecord {
        format_version: LEASE_FORMAT_VERSION,
        owner: format!("{host}-{pid}-cafe"),
        host: host.into(),
        pid,
        acquired_unix_ms: 1,
        renewed_unix_ms: 1,
        expires_unix_ms,
        released: false,
    }
}

#[test]
fn a_second_holder_is_refused_with_the_holder_named() {
    let (memory, _dir, local) = stores("second");
    for s in [&memory, &local] {
        let mut first = Lease::acquire(s, KEY, TTL).unwrap();
        assert!(first.taken_over.is_none());
        let e = Lease::acquire(s, KEY, TTL).unwrap_err();
        let LeaseError::Held { holder, .. } = &e else { panic!("{e}") };
        assert_eq!(&**holder, first.record());
        let text = e.to_string();
        assert!(text.contains(&first.record().owner) && text.contains("expires in 60 s"), "{text}");
        assert!(text.contains(&format!("pid {}", std::process::id())), "{text}");
        // Renewed, still held; given back, the next one takes it at once.
        first.renew().unwrap();
        assert!(Lease::acquire(s, KEY, TTL).is_err());
        first.release().unwrap();
        let next = Lease::acquire(s, KEY, TTL).unwrap();
        assert!(next.taken_over.is_none(), "a released lease is not a takeover");
    }
}

#[test]
fn free_leases_are_taken_over() {
    let (memory, _dir, local) = stores("free");
    // A child that has ended: its pid is gone from this host.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    let far = now_ms() + 3_600_000;
    for s in [&memory, &local] {
        for (what, bytes) in [
            ("expired", other("elsewhere", 7, now_ms() - 1).to_json()),
            ("of a process gone", other(&host_name(), gone, far).to_json()),
            ("damaged", b"{\"owner\": tru".to_vec()),
        ] {
            s.put(KEY, bytes).unwrap();
            let lease = Lease::acquire(s, KEY, TTL).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(lease.taken_over.is_some(), what != "damaged", "{what}");
            assert!(lease.record().expires_unix_ms > far - 3_600_000, "{what}");
            s.delete(KEY).unwrap();
        }
        // A live lease of another host, or of a live process here, is not free.
        for holder in [other("elsewhere", 7, far), other(&host_name(), std::process::id(), far)] {
            s.put(KEY, holder.to_json()).unwrap();
            assert!(matches!(Lease::acquire(s, KEY, TTL), Err(LeaseError::Held { .. })));
        }
        s.delete(KEY).unwrap();
    }
}

#[test]
fn a_holder_whose_lease_was_taken_over_is_told_and_writes_nothing() {
    let (memory, _dir, local) = stores("lost");
    for s in [&memory, &local] {
        // The first holder's lease expired (paused for longer than its TTL) ...
        let mut first = Lease::acquire(s, KEY, Duration::from_millis(1)).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let second = Lease::acquire(s, KEY, TTL).unwrap();
        assert_eq!(second.taken_over.as_ref(), Some(first.record()));
        // ... and its next renewal finds the new holder.
        let e = first.renew().unwrap_err();
        assert!(matches!(&e, LeaseError::Lost { by, .. } if by.contains(&second.record().owner)), "{e}");
        assert!(e.to_string().contains("stopping without writing"), "{e}");
        assert!(first.release().is_err());
        assert_eq!(LeaseRecord::parse(&s.get(KEY).unwrap().unwrap()).as_ref(), Some(second.record()));
        s.delete(KEY).unwrap();
    }
}

#[test]
fn a_kept_lease_renews_itself_notices_a_takeover_and_is_given_back_when_dropped() {
    let (memory, _dir, _local) = stores("kept");
    let s = &memory;
    let kept = KeptLease::keep(Lease::acquire(s, KEY, Duration::from_millis(400)).unwrap(), Duration::from_millis(50));
    let first = kept.record();
    std::thread::sleep(Duration::from_millis(600));
    // Renewed past its first expiry: still held.
    assert!(kept.record().expires_unix_ms > first.expires_unix_ms);
    assert!(matches!(Lease::acquire(s, KEY, TTL), Err(LeaseError::Held { .. })));
    kept.check().unwrap();
    kept.renew_now().unwrap();
    drop(kept);
    assert!(LeaseRecord::parse(&s.get(KEY).unwrap().unwrap()).unwrap().released);
    // A takeover behind the holder's back (its lease object replaced): the next renewal
    // marks it lost, and dropping it gives nothing back.
    let kept = KeptLease::keep(Lease::acquire(s, KEY, TTL).unwrap(), Duration::from_millis(20));
    let intruder = other("elsewhere", 9, now_ms() + 60_000);
    s.put(KEY, intruder.to_json()).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(matches!(kept.check(), Err(LeaseError::Lost { .. })));
    assert!(matches!(kept.renew_now(), Err(LeaseError::Lost { .. })));
    drop(kept);
    assert_eq!(LeaseRecord::parse(&s.get(KEY).unwrap().unwrap()), Some(intruder));
}
