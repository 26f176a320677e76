// go_static: a Go program (statically linked, its own runtime: LD_PRELOAD
// cannot reach it, so the launcher watches it from outside). For -seconds,
// a goroutine locked to its thread computes while the main goroutine
// sleeps; then it exits with -exit. Prints "started" first and its truth
// (the computing thread's tid) as JSON last.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

func main() {
	seconds := flag.Float64("seconds", 1, "how long to run")
	code := flag.Int("exit", 0, "exit status")
	flag.Parse()
	fmt.Println("started")
	tids := make(chan int)
	var stop int32
	go func() {
		runtime.LockOSThread()
		tids <- syscall.Gettid()
		x := 0
		for stop == 0 {
			x++
		}
		_ = x
	}()
	tid := <-tids
	start := time.Now()
	time.Sleep(time.Duration(*seconds * float64(time.Second)))
	stop = 1
	fmt.Printf("{\"spinner_tid\": %d, \"seconds\": %.3f, \"exit\": %d}\n", tid,
		time.Since(start).Seconds(), *code)
	os.Exit(*code)
}
