// A Java program with the two kinds of lock contention a JVM has: three
// threads taking turns at a `synchronized` block, three at a ReentrantLock
// (java.util.concurrent). Each holds its lock while it computes a little and
// sleeps 1 ms (a lock held across I/O), so the others wait whatever the
// machine's load. Prints its truth as one JSON line.
import java.util.concurrent.locks.ReentrantLock;

public class Contention {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static long syncTurns, lockTurns;

    static long work(long x, int n) {
        for (int i = 0; i < n; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static void pause() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long millis = Long.parseLong(args[1]);
        long end = System.currentTimeMillis() + millis;
        Thread[] ts = new Thread[2 * threads];
        long[] tids = new long[2 * threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                long x = 1;
                while (System.currentTimeMillis() < end) {
                    synchronized (monitor) {
                        syncTurns++;
                        x = work(x, 200000);
                        pause();
                    }
                    x = work(x, 20000);
                }
                if (x == 42) System.out.println();
            }, "sync-worker-" + i);
            ts[threads + i] = new Thread(() -> {
                long x = 1;
                while (System.currentTimeMillis() < end) {
                    lock.lock();
                    try {
                        lockTurns++;
                        x = work(x, 200000);
                        pause();
                    } finally {
                        lock.unlock();
                    }
                    x = work(x, 20000);
                }
                if (x == 42) System.out.println();
            }, "lock-worker-" + i);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println("{\"threads\": " + threads + ", \"sync_turns\": " + syncTurns
                + ", \"lock_turns\": " + lockTurns + "}");
    }
}
