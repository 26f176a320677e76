// A Go program (statically linked, its own runtime, no libc): goroutines
// deadlock on two sync.Mutexes (parked goroutines: no thread waits for
// them), and one goroutine locked to its thread blocks on a channel, so
// that thread (an M) sleeps in the runtime's futexsleep. Prints the truth
// (target_truth.h) for that thread and sleeps until killed.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

func asleepInFutex(tid int) bool {
	line, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
	return strings.HasPrefix(string(line), "202 ")
}

func main() {
	var a, b sync.Mutex
	var both sync.WaitGroup
	both.Add(2)
	go func() { a.Lock(); both.Done(); both.Wait(); b.Lock() }()
	go func() { b.Lock(); both.Done(); both.Wait(); a.Lock() }()

	tids := make(chan int)
	never := make(chan int)
	go func() {
		runtime.LockOSThread()
		tids <- syscall.Gettid()
		<-never
	}()
	tid := <-tids
	for !asleepInFutex(tid) {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("truth %d go-runtime 0 0 0\nready\n", tid)
	for {
		time.Sleep(time.Hour)
	}
}
