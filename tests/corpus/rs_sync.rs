// A Rust program on std's futex-based sync: workers take turns at a Mutex
// (held across a 1 ms sleep), share a mostly-read RwLock, and feed a
// consumer that waits on a Condvar (waiting for work, not a lock). Prints
// its truth as one JSON line.
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

fn spin(mut x: u64, n: u32) -> u64 {
    for _ in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    }
    x
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers: usize = args.get(1).map_or(3, |a| a.parse().unwrap());
    let ms: u64 = args.get(2).map_or(1500, |a| a.parse().unwrap());
    let end = Instant::now() + Duration::from_millis(ms);
    let table = Arc::new(Mutex::new(0u64));
    let config = Arc::new(RwLock::new(vec![1u64; 16]));
    let queue = Arc::new((Mutex::new(Vec::<u64>::new()), Condvar::new()));
    let mut handles = Vec::new();
    for w in 0..workers {
        let (table, config, queue) = (table.clone(), config.clone(), queue.clone());
        let h = thread::Builder::new().name(format!("rs-worker-{w}")).spawn(move || {
            let mut x = w as u64 + 1;
            let mut n = 0u64;
            while Instant::now() < end {
                {
                    let mut t = table.lock().unwrap();
                    x = spin(x, 20000);
                    *t += x & 1;
                    thread::sleep(Duration::from_millis(1));
                }
                if n % 16 == 0 {
                    config.write().unwrap()[(x % 16) as usize] = x;
                } else {
                    let c = config.read().unwrap();
                    x = spin(x ^ c[(x % 16) as usize], 2000);
                }
                let (q, cv) = &*queue;
                q.lock().unwrap().push(x);
                cv.notify_one();
                n += 1;
            }
            n
        });
        handles.push(h.unwrap());
    }
    let consumer = {
        let queue = queue.clone();
        thread::Builder::new().name("rs-consumer".into()).spawn(move || {
            let (q, cv) = &*queue;
            let mut got = 0u64;
            loop {
                let mut g = cv.wait_timeout(q.lock().unwrap(), Duration::from_millis(50)).unwrap().0;
                got += g.drain(..).count() as u64;
                if Instant::now() >= end {
                    break;
                }
            }
            got
        }).unwrap()
    };
    let turns: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let consumed = consumer.join().unwrap();
    println!("{{\"workers\": {workers}, \"turns\": {turns}, \"consumed\": {consumed}}}");
}
