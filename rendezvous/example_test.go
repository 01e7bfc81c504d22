package rendezvous_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gocuda/gocuda/rendezvous"
)

// Two ranks (goroutines here, processes in a job) meet at a rendezvous
// served as gocuda launch serves it, share a value that rank 0 makes,
// pass a barrier and leave.
func Example() {
	srv, err := rendezvous.Listen("127.0.0.1:0", "example-job", 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	got := make([]string, 2)
	for rank := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := rendezvous.Launch{Launcher: "gocuda", Rank: rank, Size: 2, LocalRank: rank,
				Addr: srv.Addr(), Job: "example-job", Hosting: rendezvous.HostedByLauncher}
			m, err := rendezvous.Join(ctx, l, rendezvous.Options{Timeout: 30 * time.Second})
			if err != nil {
				got[rank] = err.Error()
				return
			}
			defer m.Close()
			v, err := m.Share(ctx, "greeting", func() ([]byte, error) {
				return []byte("hello from rank 0"), nil
			})
			if err == nil {
				err = m.Barrier(ctx, "done")
			}
			got[rank] = fmt.Sprintf("rank %d got %q (err %v)", m.Rank(), v, err)
		}()
	}
	wg.Wait()
	fmt.Println(got[0])
	fmt.Println(got[1])
	// Output:
	// rank 0 got "hello from rank 0" (err <nil>)
	// rank 1 got "hello from rank 0" (err <nil>)
}

// What each launcher sets becomes one Launch: here Open MPI's mpirun,
// with the address the job script exported.
func ExampleFromEnv() {
	env := map[string]string{
		"OMPI_COMM_WORLD_RANK": "9", "OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
		"MASTER_ADDR": "host0", "MASTER_PORT": "29500",
		"SLURM_PROCID": "0", // mpirun inside a Slurm allocation: mpirun's rank wins
	}
	l, ok, err := rendezvous.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(ok, err)
	fmt.Printf("%s: rank %d of %d, device %d, rendezvous at %s hosted by %v\n", l.Launcher, l.Rank, l.Size, l.LocalRank, l.Addr, l.Hosting)
	// Output:
	// true <nil>
	// openmpi: rank 9 of 16, device 1, rendezvous at host0:29500 hosted by rank 0
}
