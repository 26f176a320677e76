// An executor whose four threads wait for work: the main thread submits a
// small task, waits for its Future, sleeps 5 ms, 300 times. Every thread
// parks (java.util.concurrent) most of its life, and none of it is a lock.
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

public class Pool {
    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        long sum = 0;
        for (int i = 0; i < 300; i++) {
            final int k = i;
            sum += pool.submit(() -> {
                long y = k;
                for (int j = 0; j < 10000; j++) y = y * 31 + j;
                return y;
            }).get();
            Thread.sleep(5);
        }
        pool.shutdown();
        pool.awaitTermination(5, TimeUnit.SECONDS);
        System.out.println("{\"tasks\": 300, \"sum\": " + sum + "}");
    }
}
