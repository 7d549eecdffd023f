//! Conditional writes on `memory://` and on a local folder, and the faults a memory store
//! can be given.

use std::sync::Arc;

use store::faults::Fault;
use store::RunStore;

fn compare_and_swap(s: &RunStore) {
    let key = "models/latest.json";
    assert!(s.get_versioned(key).unwrap().is_none());
    let first = s.put_if(key, b"one".to_vec(), None).unwrap().expect("created");
    // A second create, and a write over a version that is no longer there, both fail.
    assert!(s.put_if(key, b"other".to_vec(), None).unwrap().is_none());
    let read = s.get_versioned(key).unwrap().unwrap();
    assert_eq!(read.bytes, b"one");
    let second = s.put_if(key, b"two".to_vec(), Some(&read)).unwrap().expect("replaced");
    assert!(s.put_if(key, b"stale".to_vec(), Some(&first)).unwrap().is_none());
    assert_eq!(s.get(key).unwrap().unwrap(), b"two");
    // The version a write returns is good for the next one.
    s.put_if(key, b"three".to_vec(), Some(&second)).unwrap().expect("replaced again");
    assert_eq!(s.get(key).unwrap().unwrap(), b"three");
}

#[test]
fn a_conditional_write_replaces_only_the_version_read() {
    compare_and_swap(&RunStore::open("memory://cas").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let local = RunStore::open(dir.path().to_str().unwrap()).unwrap();
    compare_and_swap(&local);
    // The lock file of a local object is hidden from listings.
    assert!(dir.path().join("models/.latest.json.lock").exists());
    assert_eq!(local.list("models").unwrap().len(), 1);
}

/// Threads that each add one to a counter with read, compare and swap lose no increment:
/// the local folder's lock makes the comparison and the write one step.
#[test]
fn racing_conditional_writes_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(RunStore::open(dir.path().to_str().unwrap()).unwrap());
    s.put("counter", b"0".to_vec()).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    loop {
                        let v = s.get_versioned("counter").unwrap().unwrap();
                        let n: u64 = std::str::from_utf8(&v.bytes).unwrap().parse().unwrap();
                        if s.put_if("counter", (n + 1).to_string().into_bytes(), Some(&v)).unwrap().is_some() {
                            break;
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.get("counter").unwrap().unwrap(), b"100");
}

#[test]
fn a_memory_store_goes_down_fills_up_and_comes_back_on_request() {
    let s = RunStore::open("memory://faults").unwrap();
    let faults = s.faults().expect("memory stores have a fault switch");
    s.put("a", b"1".to_vec()).unwrap();
    faults.set(Fault::Down);
    let e = s.get("a").unwrap_err();
    assert!(e.to_string().contains("injected fault: the store is down"), "{e}");
    assert!(s.list("samples").is_err() && s.put("b", vec![1]).is_err());
    faults.set(Fault::Full);
    assert_eq!(s.get("a").unwrap().unwrap(), b"1");
    let e = s.put("b", vec![1]).unwrap_err();
    assert!(e.to_string().contains("No space left on device"), "{e}");
    assert!(s.put_if("b", vec![1], None).is_err() && s.copy("a", "c").is_err());
    // Two more writes, then the store is away (in the middle of an upload of several).
    faults.set(Fault::DownAfterWrites(2));
    s.put("x/1", vec![1]).unwrap();
    s.put("x/2", vec![2]).unwrap();
    assert!(s.put("x/3", vec![3]).is_err());
    assert!(s.get("x/1").is_err());
    faults.set(Fault::None);
    assert_eq!(s.list("x").unwrap().len(), 2);
    // Stores of the same name share the switch; other stores have none.
    RunStore::open("memory://faults").unwrap().faults().unwrap().set(Fault::Down);
    assert!(s.get("a").is_err());
    faults.set(Fault::None);
    assert!(RunStore::open(tempfile::tempdir().unwrap().path().to_str().unwrap()).unwrap().faults().is_none());
}
