//! rs_rayon: a rayon pool of N named workers maps chunks of work in
//! parallel; each item ends by adding its result to one shared
//! std::sync::Mutex, held across a 0.5 ms sleep (a table that must stay
//! consistent), so the workers take turns at it. Between rounds the pool's
//! workers sleep in rayon's own idle wait. Prints one truth line: rounds,
//! items, and how long the Mutex was held in all.
//!
//! Usage: rs_rayon [WORKERS] [MILLIS]
use rayon::prelude::*;
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn work(i: u64) -> u64 {
    // About 0.2 ms of arithmetic outside the lock.
    (0..20_000u64).fold(i, |a, x| a.wrapping_mul(6364136223846793005).wrapping_add(x))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let millis: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1500);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("rayon-{}", i))
        .build()
        .expect("thread pool");
    let table = Mutex::new((0u64, Duration::ZERO));
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut items = 0u64;
    while start.elapsed() < Duration::from_millis(millis) {
        let n = 16u64;
        pool.install(|| {
            (0..n).into_par_iter().for_each(|i| {
                let v = work(i);
                let mut t = table.lock().unwrap();
                let held = Instant::now();
                std::thread::sleep(Duration::from_micros(500));
                t.0 = t.0.wrapping_add(v);
                t.1 += held.elapsed();
            })
        });
        rounds += 1;
        items += n;
        // The pool idles between rounds: its workers go to sleep.
        std::thread::sleep(Duration::from_millis(5));
    }
    let held = table.lock().unwrap().1;
    println!(
        "{{\"workload\":\"rs_rayon\",\"workers\":{},\"rounds\":{},\"items\":{},\"held_s\":{:.6},\"wall_s\":{:.6}}}",
        workers,
        rounds,
        items,
        held.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
}
