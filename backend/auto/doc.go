// Package auto picks the process's backend from GOCUDA_BACKEND: "cuda"
// (the GPU, or an error saying why not), "host" (the host backend), or
// "auto", the default, which takes the GPU when a driver and a device are
// there and the host backend otherwise.
//
//	b, err := auto.Default()
//	if err != nil {
//		log.Fatal(err) // e.g. GOCUDA_BACKEND="gpu" is not valid: accepted values are auto, cuda, host
//	}
//	fmt.Println(b.Name())
package auto
