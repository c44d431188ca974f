// Command cpuhog keeps every core busy until it is killed or its time is
// up: the load under which make test-stress runs the tests.
//
//	go run ./scripts/cpuhog [-for DURATION]
package main

import (
	"flag"
	"runtime"
	"time"
)

func main() {
	limit := flag.Duration("for", time.Hour, "stop after this long")
	flag.Parse()
	for range runtime.NumCPU() {
		go func() {
			x := uint64(1)
			for {
				x = x*6364136223846793005 + 1442695040888963407 // never optimised away: it loops forever
			}
		}()
	}
	time.Sleep(*limit)
}
