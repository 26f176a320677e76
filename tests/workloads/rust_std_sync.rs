// rust_std_sync: Rust's std::sync Mutex, RwLock and Condvar wait in futexes no
// pthread wrapper sees. Three threads fight over a Mutex, two over an
// RwLock's write side, one waits on a Condvar until main wakes it. Built by
// the e2e test when rustc is installed; prints each role's thread name.
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

fn busy_for(d: Duration) -> u64 {
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed() < d {
        n = n.wrapping_add(1);
    }
    n
}

fn main() {
    let run = Duration::from_millis(400);
    let counter = Arc::new(Mutex::new(0u64));
    let table = Arc::new(RwLock::new(0u64));
    let ready = Arc::new((Mutex::new(false), Condvar::new()));
    let mut workers = vec![];
    for _ in 0..3 {
        let counter = counter.clone();
        workers.push(thread::Builder::new().name("mutexer".into()).spawn(move || {
            let end = Instant::now() + run;
            while Instant::now() < end {
                let mut g = counter.lock().unwrap();
                *g += busy_for(Duration::from_micros(200));
            }
        }).unwrap());
    }
    for _ in 0..2 {
        let table = table.clone();
        workers.push(thread::Builder::new().name("writer".into()).spawn(move || {
            let end = Instant::now() + run;
            while Instant::now() < end {
                let mut g = table.write().unwrap();
                *g += busy_for(Duration::from_micros(300));
            }
        }).unwrap());
    }
    let pair = ready.clone();
    let waiter = thread::Builder::new().name("condwaiter".into()).spawn(move || {
        let (lock, cond) = &*pair;
        let mut go = lock.lock().unwrap();
        while !*go {
            go = cond.wait(go).unwrap();
        }
    }).unwrap();
    thread::sleep(run + Duration::from_millis(50));
    {
        let (lock, cond) = &*ready;
        *lock.lock().unwrap() = true;
        cond.notify_all();
    }
    waiter.join().unwrap();
    for w in workers {
        w.join().unwrap();
    }
    println!("{{\"workload\":\"rust_std_sync\",\"mutex\":\"mutexer\",\"rwlock\":\"writer\",\"cond\":\"condwaiter\"}}");
}
