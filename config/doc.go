// Package config reads gocuda's environment knobs (GOCUDA_*), once, with
// clear errors: a value that does not parse is reported with the variable,
// the value, the forms that are accepted and the value probably meant, and
// never ignored. Every bad knob is reported at once, one line each.
//
//	cfg, err := config.FromEnv()
//	if err != nil {
//		// GOCUDA_MEMORY_POOL="bined" is not valid: accepted values are cuda,
//		// binned, split, simple, none (off is none); did you mean "binned"?
//		log.Fatal(err)
//	}
//	hard := cfg.HardLimit.Resolve(totalDeviceBytes)
package config
