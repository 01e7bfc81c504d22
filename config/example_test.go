package config_test

import (
	"errors"
	"fmt"

	"github.com/gocuda/gocuda/config"
)

// lookup reads knobs from a map, as os.LookupEnv reads them from the
// environment.
func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// Parse reads every knob at once; a program passes os.LookupEnv (FromEnv
// does), a test a map. Limits stay unresolved until a device's size is
// known: a share becomes bytes with Resolve.
func ExampleParse() {
	c, err := config.Parse(lookup(map[string]string{
		"GOCUDA_MEMORY_POOL":       "binned",
		"GOCUDA_SOFT_MEMORY_LIMIT": "80%",
		"GOCUDA_HARD_MEMORY_LIMIT": "12GiB",
		"GOCUDA_GC_EARLY":          "off",
		"GOCUDA_DEBUG":             "leaks,log",
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("backend:", c.Backend)
	fmt.Println("pool:", c.Pool)
	fmt.Println("soft limit:", c.SoftLimit, "of 80 GiB is", c.SoftLimit.Resolve(80<<30), "bytes")
	fmt.Println("hard limit:", c.HardLimit, "=", c.HardLimit.Resolve(80<<30), "bytes")
	fmt.Println("early GC:", c.GCEarly, "leak tracing:", c.Debug["leaks"])
	// Output:
	// backend: auto
	// pool: binned
	// soft limit: 80% of 80 GiB is 68719476736 bytes
	// hard limit: 12 GiB = 12884901888 bytes
	// early GC: false leak tracing: true
}

// A value that does not parse is an error naming the variable, the value,
// what is accepted and, where one is close, the value meant. Every bad
// knob is in the one error, one line each; Config.Invalid names them, and
// errors.As finds the first.
func ExampleParse_invalid() {
	c, err := config.Parse(lookup(map[string]string{
		"GOCUDA_HARD_MEMORY_LIMIT": "-4GiB",
		"GOCUDA_MEMORY_POOL":       "splti",
		"GOCUDA_GC_EARLY":          "off",
	}))
	fmt.Println(err)
	var e *config.Error
	fmt.Println(errors.As(err, &e), e.Var, c.Invalid)
	fmt.Println("parsed anyway: early GC", c.GCEarly)
	// Output:
	// GOCUDA_HARD_MEMORY_LIMIT="-4GiB" is not valid: accepted values are a byte count ("4294967296"), a size with a unit ("4GiB", "12.5GB", "512 MiB"), a share of device memory ("80%"), or "none" or "off" for no limit (a size must be a positive number of bytes)
	// GOCUDA_MEMORY_POOL="splti" is not valid: accepted values are cuda, binned, split, simple, none (off is none); did you mean "split"?
	// true GOCUDA_HARD_MEMORY_LIMIT [GOCUDA_HARD_MEMORY_LIMIT GOCUDA_MEMORY_POOL]
	// parsed anyway: early GC false
}

// ParseLimit takes each form the limit knobs accept: bytes with or
// without a unit (binary or decimal), or a share of the device's memory;
// none or off for no limit. 0 is refused rather than read as either.
func ExampleParseLimit() {
	for _, s := range []string{"4294967296", "4GiB", "12.5GB", "512 MiB", "80%", "none", "off", "0", "150%"} {
		l, err := config.ParseLimit(s)
		if err != nil {
			fmt.Printf("%s: %v\n", s, err)
			continue
		}
		fmt.Printf("%s: %v, set %v, %d bytes of a 16 GiB device\n", s, l, l.Set(), l.Resolve(16<<30))
	}
	// Output:
	// 4294967296: 4.0 GiB, set true, 4294967296 bytes of a 16 GiB device
	// 4GiB: 4.0 GiB, set true, 4294967296 bytes of a 16 GiB device
	// 12.5GB: 12 GiB, set true, 12500000000 bytes of a 16 GiB device
	// 512 MiB: 512 MiB, set true, 536870912 bytes of a 16 GiB device
	// 80%: 80%, set true, 13743895347 bytes of a 16 GiB device
	// none: none, set false, 0 bytes of a 16 GiB device
	// off: none, set false, 0 bytes of a 16 GiB device
	// 0: a limit of 0 bytes would refuse every allocation: for no limit write "none" or "off"
	// 150%: a share must be a number above 0 and at most 100, followed by %
}
