// A Go program with cgo: goroutines call a C function that updates a table
// under one pthread mutex, holding it while it computes and sleeps 1 ms (the
// contention threadmon must name), then take a sync.Mutex (goroutines park;
// no thread blocks). It first idles a second: every M of the runtime parks
// in futexsleep, the scheduler's waiting, not a lock. Prints its truth.
package main

/*
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

static pthread_mutex_t c_table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t c_table[64];

static uint64_t c_update(uint64_t x, int rounds) {
	pthread_mutex_lock(&c_table_lock);
	for (int i = 0; i < rounds; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		c_table[x & 63] += x;
	}
	usleep(1000);
	pthread_mutex_unlock(&c_table_lock);
	return x;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	workers, _ := strconv.Atoi(os.Args[1])
	ms, _ := strconv.Atoi(os.Args[2])
	time.Sleep(time.Second)
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	var mu sync.Mutex
	var calls int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			x := seed
			for time.Now().Before(deadline) {
				x = uint64(C.c_update(C.uint64_t(x), 20000))
				mu.Lock()
				calls++
				mu.Unlock()
			}
		}(uint64(w + 1))
	}
	wg.Wait()
	fmt.Printf("{\"workers\": %d, \"c_calls\": %d}\n", workers, calls)
}
