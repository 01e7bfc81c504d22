// Package config reads gocuda's environment knobs (GOCUDA_*), once, with
// clear errors: a value that does not parse is reported with the variable,
// the value and the forms that are accepted, and never ignored.
//
//	cfg, err := config.FromEnv()
//	if err != nil {
//		log.Fatal(err) // e.g. GOCUDA_MEMORY_POOL="bined": accepted values are cuda, binned, split, simple, none
//	}
//	hard, _ := cfg.HardLimit.Resolve(totalDeviceBytes)
package config
