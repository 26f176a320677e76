// rust_locks: Rust std::thread workers taking turns on a static
// std::sync::Mutex. Rust's std builds its Mutex on a bare futex (no pthread
// call), so threadmon finds it by sampling as a hidden lock: it must name
// it by its static (crate::SHARED_TOTAL) and its call site by std's
// Mutex::lock_contended, demangled from Rust's legacy or v0 mangling (built
// both ways). Prints its truth as one JSON line at exit.
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

const WORKERS: usize = 4;
const ITERATIONS: u64 = 120;

static SHARED_TOTAL: Mutex<u64> = Mutex::new(0);

fn work(index: usize) -> u64 {
    let mut taken = 0;
    for _ in 0..ITERATIONS {
        let mut total = SHARED_TOTAL.lock().unwrap();
        // Held while asleep: the others wait in the kernel on its futex word.
        thread::sleep(Duration::from_micros(700));
        *total += index as u64 + 1;
        taken += 1;
    }
    taken
}

fn main() {
    let start = Instant::now();
    let workers: Vec<_> = (0..WORKERS)
        .map(|i| {
            thread::Builder::new()
                .name(format!("rust-worker-{}", i))
                .spawn(move || work(i))
                .expect("spawn")
        })
        .collect();
    let acquisitions: u64 = workers.into_iter().map(|h| h.join().expect("join")).sum();
    println!(
        "{{\"workload\":\"rust_locks\",\"wall_s\":{:.6},\"threads_created\":{},\"acquisitions\":{},\
         \"lock_symbol\":\"{}::SHARED_TOTAL\",\"total\":{}}}",
        start.elapsed().as_secs_f64(),
        WORKERS,
        acquisitions,
        module_path!(),
        *SHARED_TOTAL.lock().unwrap()
    );
}
