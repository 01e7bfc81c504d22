package cuarray

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/gocuda/gocuda"
	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/curand"
)

// Random numbers, as CUDA.jl's rand, randn, rand! and randn!: each device
// has a default generator (package curand: cuRAND on a GPU, a Go generator
// on the host backend), seeded at random when first used, or with Seed
// for numbers that are the same every run. Only float32 and float64.

// generators holds each device's default generator, by device.
var generators sync.Map // backend.Device → *curand.Generator

// generatorMu serializes making and replacing default generators.
var generatorMu sync.Mutex

// generatorFor returns dev's default generator, making it on first use.
func generatorFor(dev backend.Device) (*curand.Generator, error) {
	if g, ok := generators.Load(dev); ok {
		return g.(*curand.Generator), nil
	}
	generatorMu.Lock()
	defer generatorMu.Unlock()
	if g, ok := generators.Load(dev); ok {
		return g.(*curand.Generator), nil
	}
	g, err := curand.New(dev, rand.Uint64())
	if err != nil {
		return nil, err
	}
	generators.Store(dev, g)
	return g, nil
}

// Seed gives device a new default generator seeded with seed: the random
// arrays made after it are the same in every run with the same calls in
// the same order (on one backend: the CUDA and host backends make
// different numbers). Work already queued keeps the numbers it was given.
func Seed(device int, seed uint64) error {
	dev, err := gocuda.Device(device)
	if err != nil {
		return fmt.Errorf("cuarray: Seed(device %d): %w", device, err)
	}
	g, err := curand.New(dev, seed)
	if err != nil {
		return fmt.Errorf("cuarray: Seed(device %d): %w", device, err)
	}
	generatorMu.Lock()
	// The old generator is not closed here: a FillRand of another
	// goroutine may hold it still. Once unreachable, its cleanup closes it.
	generators.Store(dev, g)
	generatorMu.Unlock()
	return nil
}

// Rand makes an array of shape on device 0's default stream with numbers
// uniform in (0, 1].
func Rand[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.Rand(shape...) }

// Randn makes an array of shape on device 0's default stream with
// normally distributed numbers, mean 0 and standard deviation 1.
func Randn[T Elem](shape ...int) (*Array[T], error) { return Ops[T]{}.Randn(shape...) }

// FillRand fills dst with numbers uniform in (0, 1], from its device's
// default generator.
func FillRand[T Elem](dst *Array[T]) error { return Ops[T]{}.FillRand(dst) }

// FillRandn fills dst with normally distributed numbers of the given mean
// and standard deviation (finite, the deviation at least 0).
func FillRandn[T Elem](dst *Array[T], mean, stddev T) error {
	return Ops[T]{}.FillRandn(dst, mean, stddev)
}

// Rand is the package-level Rand on o's stream.
func (o Ops[T]) Rand(shape ...int) (*Array[T], error) {
	return o.newRandom("Rand", shape, func(f Ops[T], a *Array[T]) error { return f.FillRand(a) })
}

// Randn is the package-level Randn on o's stream.
func (o Ops[T]) Randn(shape ...int) (*Array[T], error) {
	return o.newRandom("Randn", shape, func(f Ops[T], a *Array[T]) error { return f.FillRandn(a, zero[T](), one[T]()) })
}

// FillRand is the package-level FillRand on o's stream.
func (o Ops[T]) FillRand(dst *Array[T]) error {
	return o.fillRandom("FillRand", dst, false, zero[T](), one[T]())
}

// FillRandn is the package-level FillRandn on o's stream.
func (o Ops[T]) FillRandn(dst *Array[T], mean, stddev T) error {
	return o.fillRandom("FillRandn", dst, true, mean, stddev)
}

func (o Ops[T]) newRandom(op string, shape []int, fill func(Ops[T], *Array[T]) error) (*Array[T], error) {
	if isHalf[T]() {
		return o.newThen(op, shape, fill)
	}
	if err := floatDType[T](op); err != nil {
		return nil, err
	}
	return o.newThen(op, shape, fill)
}

func (o Ops[T]) fillRandom(op string, dst *Array[T], normal bool, mean, stddev T) error {
	if isHalf[T]() {
		return fillRandomHalf(o, op, dst, normal, mean, stddev)
	}
	if err := floatDType[T](op); err != nil {
		return err
	}
	return o.do(op, "dst", true, func(dev backend.Device, s backend.Stream, p [maxOperands]backend.Ptr) error {
		n := dst.Len() // dst is checked: not nil, not freed
		g, err := generatorFor(dev)
		if err != nil {
			return err
		}
		if f32, ok := asF32(mean, stddev); ok {
			if normal {
				return curand.Normal(g, s, p[0], n, f32[0], f32[1])
			}
			return curand.Uniform[float32](g, s, p[0], n)
		}
		f64 := asF64(mean, stddev)
		if normal {
			return curand.Normal(g, s, p[0], n, f64[0], f64[1])
		}
		return curand.Uniform[float64](g, s, p[0], n)
	}, dst)
}
