package cuarray_test

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/cuarray"
)

// A step captured once and replayed with new inputs: the graph reads x
// where it was at the capture, so new values are copied into x; y, made
// inside the capture, comes from the graph's pool and is written by each
// replay. A read by the host inside a capture is refused.
func ExampleCapture() {
	s, err := cuarray.NewStream(0)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	f := cuarray.On[float32](s)
	x := cuarray.Must(f.New(4))
	w := cuarray.Must(f.Full(0.5, 4))

	var y *cuarray.Array[float32]
	g, err := cuarray.Capture(s, func() error {
		t, err := f.Mul(nil, x, w) // from the graph's pool
		if err != nil {
			return err
		}
		defer t.UnsafeFree() // back into it
		y, err = f.AddScalar(nil, t, 1)
		return err
	})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	fmt.Println("operations recorded:", g.Stats().Nodes)
	fmt.Println("graph pool:", g.Pool().Stats().Live, "bytes live")

	for _, in := range [][]float32{{1, 2, 3, 4}, {10, 20, 30, 40}} {
		if err := f.Copy(x, cuarray.Must(f.FromSlice(in))); err != nil { // new inputs
			panic(err)
		}
		if err := g.Launch(); err != nil {
			panic(err)
		}
		fmt.Println(cuarray.Must(y.ToSlice()))
	}

	_, err = cuarray.Capture(s, func() error {
		_, err := y.ToSlice()
		return err
	})
	fmt.Println("ToSlice inside a capture:", errors.Is(err, cuarray.ErrCapturing))
	// Output:
	// operations recorded: 2
	// graph pool: 512 bytes live
	// [1.5 2 2.5 3]
	// [6 11 16 21]
	// ToSlice inside a capture: true
}
