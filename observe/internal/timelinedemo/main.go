package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/observe"
	"github.com/gocuda/gocuda/observe/expvarmetrics"
	"github.com/gocuda/gocuda/observe/timelinesvg"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: timelinedemo FILE.svg")
	}
	// Serves the pools' figures at /debug/vars on http.DefaultServeMux.
	if err := expvarmetrics.Publish(); err != nil {
		log.Fatal(err)
	}
	tl, err := gocuda.StartTimeline(observe.TimelineOptions{Interval: 5 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	var window []*cuarray.Array[float32]
	for step := range 400 {
		a, err := cuarray.Zeros[float32](1 << 20)
		if err != nil {
			log.Fatal(err)
		}
		window = append(window, a)
		if len(window) > 4+step%8 {
			// A new slice: the old backing array would keep every
			// dropped array reachable.
			window = append([]*cuarray.Array[float32](nil), window[len(window)-2:]...)
		}
		time.Sleep(500 * time.Microsecond)
	}
	window = nil
	time.Sleep(20 * time.Millisecond)
	tl.Stop()

	f, err := os.Create(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	if err := timelinesvg.WriteTimeline(f, tl, "timelinedemo"); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = http.Serve(ln, nil) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/debug/vars")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
		log.Fatal(err)
	}
	fmt.Println()
}
