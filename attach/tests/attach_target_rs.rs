// A Rust program whose threads wait in std::sync on futexes: two deadlock
// on two Mutexes, one waits on a Condvar, one reads a RwLock main writes.
// Prints the truth (as target_truth.h says; Rust's locks keep no owner, so
// none to check) and sleeps until killed.
use std::sync::{Arc, Barrier, Condvar, Mutex, RwLock};
use std::thread;
use std::time::Duration;

fn tid() -> i32 {
    let link = std::fs::read_link("/proc/thread-self").unwrap();
    link.file_name().unwrap().to_str().unwrap().parse().unwrap()
}

fn asleep_in_futex(tid: i32) -> bool {
    let line = std::fs::read_to_string(format!("/proc/self/task/{}/syscall", tid)).unwrap_or_default();
    line.starts_with("202 ")
}

fn main() {
    let a = Arc::new(Mutex::new(0u64));
    let b = Arc::new(Mutex::new(0u64));
    let both = Arc::new(Barrier::new(2));
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
        let tx = tx.clone();
        thread::Builder::new().name(name.into()).spawn(move || {
            tx.send(tid()).unwrap();
            f();
        }).unwrap()
    };
    let (a1, b1, w1) = (a.clone(), b.clone(), both.clone());
    let first = spawn("rs-first", Box::new(move || {
        let _x = a1.lock().unwrap();
        w1.wait();
        let _y = b1.lock().unwrap();
    }));
    let first_tid = rx.recv().unwrap();
    let (a2, b2, w2) = (a.clone(), b.clone(), both.clone());
    spawn("rs-second", Box::new(move || {
        let _y = b2.lock().unwrap();
        w2.wait();
        let _x = a2.lock().unwrap();
    }));
    let second_tid = rx.recv().unwrap();
    let p = pair.clone();
    spawn("rs-condvar", Box::new(move || {
        let (m, c) = &*p;
        let mut done = m.lock().unwrap();
        while !*done {
            done = c.wait(done).unwrap();
        }
    }));
    let cond_tid = rx.recv().unwrap();
    let rw = Arc::new(RwLock::new(0u64));
    let _held = rw.write().unwrap();
    let r = rw.clone();
    spawn("rs-reader", Box::new(move || {
        let _r = r.read().unwrap();
    }));
    let reader_tid = rx.recv().unwrap();
    for t in [first_tid, second_tid, cond_tid, reader_tid] {
        while !asleep_in_futex(t) {
            thread::sleep(Duration::from_millis(1));
        }
    }
    let addr = |m: &Mutex<u64>| m as *const _ as usize;
    let size = std::mem::size_of::<Mutex<u64>>();
    println!("truth {} rust-mutex {:#x} {} 0", first_tid, addr(&b), size);
    println!("truth {} rust-mutex {:#x} {} 0", second_tid, addr(&a), size);
    println!("truth {} rust-condvar {:#x} {} 0", cond_tid, &pair.1 as *const _ as usize,
             std::mem::size_of::<Condvar>());
    println!("truth {} rust-rwlock {:#x} {} 0", reader_tid, &*rw as *const _ as usize,
             std::mem::size_of::<RwLock<u64>>());
    println!("ready");
    drop(first.join());
}
