// A Go program whose threads' roles in the runtime are known, for
// test_goruntime: two goroutines locked to their threads (LockOSThread,
// which also starts the runtime's template thread), one blocked in a read
// system call (its G stays on its M: curg), one parked on a channel (its
// M sleeps with no G, the G locked to it). Prints, then sleeps until killed:
//
//	main PID                the main thread: M0
//	insyscall TID GOID      running GOID, locked to it
//	parked TID GOID         no G running, GOID locked to it
//	ready
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type thread struct {
	tid  int
	goid uint64
}

// The goroutine's id, from the first line of its stack: "goroutine 7 [running]:".
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _ := strconv.ParseUint(strings.Fields(string(buf))[1], 10, 64)
	return id
}

// The thread's system call, as /proc shows it ("0 ..." read, "202 ..." futex).
func inCall(tid int, nr string) bool {
	line, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
	return strings.HasPrefix(string(line), nr+" ")
}

func main() {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		panic(err)
	}
	reading := make(chan thread)
	go func() {
		runtime.LockOSThread()
		reading <- thread{syscall.Gettid(), goid()}
		buf := make([]byte, 1)
		syscall.Read(fds[0], buf) // nothing is ever written
	}()
	parked := make(chan thread)
	never := make(chan int)
	go func() {
		runtime.LockOSThread()
		parked <- thread{syscall.Gettid(), goid()}
		<-never
	}()
	r, p := <-reading, <-parked
	for !inCall(r.tid, "0") || !inCall(p.tid, "202") {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("main %d\ninsyscall %d %d\nparked %d %d\nready\n", os.Getpid(), r.tid, r.goid,
		p.tid, p.goid)
	for {
		time.Sleep(time.Hour)
	}
}
