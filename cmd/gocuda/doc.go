// Command gocuda inspects and exercises gocuda on this machine.
//
//	gocuda doctor            driver, devices, features, backend and knobs
//	gocuda status            PoolStatus, after an optional warm-up
//	gocuda replay TRACE...   run recorded allocation traces through the pools
//	gocuda bench             time allocate+free pairs through each pool
//
// Run "gocuda COMMAND --help" for a command's flags. A mistyped command or
// flag is answered with the nearest one and the help to run.
package main
