package gcpressure_test

import (
	"fmt"

	"github.com/gocuda/gocuda/backend/auto"
	"github.com/gocuda/gocuda/cuarray"
	"github.com/gocuda/gocuda/gcpressure"
	"github.com/gocuda/gocuda/pool"
)

// A loop that makes 64 MiB of garbage arrays under a 16 MiB limit and
// never frees one: the pressure layer collects them in time.
func ExampleWrap() {
	b, err := auto.Default()
	if err != nil {
		panic(err)
	}
	dev, err := b.Device(0)
	if err != nil {
		panic(err)
	}
	inner, err := pool.New("split", dev, pool.Limits{Hard: 16 << 20})
	if err != nil {
		panic(err)
	}
	w, err := gcpressure.Wrap(inner, gcpressure.Options{Early: true})
	if err != nil {
		panic(err)
	}
	s, err := cuarray.NewStreamPool(w)
	if err != nil {
		panic(err)
	}
	ops := cuarray.On[float32](s)
	for range 64 {
		if _, err := ops.Zeros(256 << 10); err != nil { // 1 MiB, dropped at once
			panic(err)
		}
	}
	st := w.PressureStats()
	fmt.Println("failures:", st.OOMFailures, "collected:", st.Collections() > 0)
	// Output: failures: 0 collected: true
}
