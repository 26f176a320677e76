// A Rust producer/consumer over std::sync::mpsc, as users write it: the
// producer sends a message every 5 ms, the consumer blocks in recv() for the
// next. Prints its truth: the consumer's tid and its time inside recv() by
// its own clock.
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

fn main() {
    let messages: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let (tx, rx) = mpsc::channel::<u64>();
    let consumer = thread::Builder::new()
        .name("rs-receiver".into())
        .spawn(move || {
            let tid = unsafe { libc_gettid() };
            let start = Instant::now();
            let (mut waited, mut sum) = (Duration::ZERO, 0u64);
            loop {
                let asked = Instant::now();
                match rx.recv() {
                    Ok(v) => {
                        waited += asked.elapsed();
                        sum += v;
                    }
                    Err(_) => break,
                }
            }
            (tid, waited.as_secs_f64(), start.elapsed().as_secs_f64(), sum)
        })
        .unwrap();
    for i in 0..messages {
        thread::sleep(Duration::from_millis(5));
        tx.send(i).unwrap();
    }
    drop(tx);
    let (tid, recv_s, life_s, sum) = consumer.join().unwrap();
    println!("{{\"tid\": {}, \"recv_s\": {:.6}, \"life_s\": {:.6}, \"sum\": {}}}", tid, recv_s, life_s, sum);
}

extern "C" {
    fn gettid() -> i32;
}

unsafe fn libc_gettid() -> i32 {
    gettid()
}
