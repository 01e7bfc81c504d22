package nccl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gocuda/gocuda/backend"
	"github.com/gocuda/gocuda/internal/devstream"
	"github.com/gocuda/gocuda/rendezvous"
)

// JoinFromEnv forms the communicator of a job that a launcher started,
// one process a rank: gocuda launch, torchrun, Slurm's srun or Open MPI's
// mpirun (package rendezvous reads what each sets). It meets the other
// ranks at the rendezvous the launcher names, takes rank 0's NCCL id from
// there (rank 0 makes it) and joins as this process's rank on device
// LocalRank of b (device 0 when b has one device: the launcher gave each
// rank its own GPU, as srun --gpus-per-task does).
//
// ctx bounds the communicator's life as NewComm's does. The rendezvous
// stays open until Destroy or Abort: a rank that fails, or whose process
// dies, is reported to the others, whose communicators are then aborted
// with an error naming it, so that none waits in a collective for a rank
// that is gone. Joining waits at most GOCUDA_RENDEZVOUS_TIMEOUT (2
// minutes by default) for every rank to arrive.
//
// On the host backend the ranks of a communicator are goroutines of one
// process: a launched job of more than one rank needs GPUs there, and
// JoinFromEnv says so.
func JoinFromEnv(ctx context.Context, b backend.Backend) (*Comm, error) {
	if ctx == nil {
		return nil, fmt.Errorf("nccl: JoinFromEnv: nil context: %w", errInvalid)
	}
	if b == nil {
		return nil, fmt.Errorf("nccl: JoinFromEnv: nil backend: %w", errInvalid)
	}
	l, ok, err := rendezvous.FromEnv(os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("nccl: JoinFromEnv: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("nccl: JoinFromEnv: no launcher's variables are set: start the program with gocuda launch, torchrun, srun or mpirun (docs/nccl.md), or form the communicator with NewComms: %w", errInvalid)
	}
	if on, err := devstream.Backend(b); (err != nil || on.GPU == nil) && l.Size > 1 {
		return nil, fmt.Errorf("nccl: JoinFromEnv: %s started rank %d of %d, and the %s backend's ranks must be goroutines of one process: run on GPUs, or run the ranks in one process with NewComms: %w",
			l.Launcher, l.Rank, l.Size, b.Name(), backend.ErrNotSupported)
	}
	ordinal, err := rendezvous.LocalDevice(l.LocalRank, b.DeviceCount())
	if err != nil {
		return nil, fmt.Errorf("nccl: JoinFromEnv: %s started rank %d of %d: %w: %w", l.Launcher, l.Rank, l.Size, err, errInvalid)
	}
	dev, err := b.Device(ordinal)
	if err != nil {
		return nil, fmt.Errorf("nccl: JoinFromEnv: rank %d's device %d: %w", l.Rank, ordinal, err)
	}
	m, err := rendezvous.Join(ctx, l, rendezvous.Options{})
	if err != nil {
		return nil, fmt.Errorf("nccl: JoinFromEnv: rank %d of %d: %w", l.Rank, l.Size, err)
	}
	raw, err := m.Share(ctx, "nccl-id", func() ([]byte, error) {
		id, err := NewUniqueID(b)
		return id[:], err
	})
	if err != nil {
		m.Fail(err)
		return nil, errors.Join(fmt.Errorf("nccl: JoinFromEnv: rank %d of %d: the NCCL id: %w", l.Rank, l.Size, err), m.Close())
	}
	var id UniqueID
	if len(raw) != len(id) {
		err := fmt.Errorf("nccl: JoinFromEnv: rank %d of %d: rank 0's NCCL id has %d bytes, not %d: %w", l.Rank, l.Size, len(raw), len(id), errInvalid)
		m.Fail(err)
		return nil, errors.Join(err, m.Close())
	}
	copy(id[:], raw)

	// The communicator's context also ends when the rendezvous reports a
	// failed rank: its abort then names that rank.
	life, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-m.Failed():
			cancel(m.Err())
		case <-life.Done():
		}
	}()
	c, err := NewComm(life, dev, id, l.Rank, l.Size)
	if err != nil {
		m.Fail(err)
		cancel(err)
		return nil, errors.Join(err, m.Close())
	}
	c.member, c.cancel = m, cancel
	if g, ok := c.impl.(*gpuComm); ok {
		g.mu.Lock()
		// This rank's own abort reaches the other processes' ranks
		// through the rendezvous.
		g.onAbort = m.Fail
		g.mu.Unlock()
	}
	return c, nil
}

// leave closes the rendezvous of a JoinFromEnv communicator after
// Destroy or Abort (cause nil for a clean Destroy).
func (c *Comm) leave(cause error) error {
	if c.member == nil {
		return nil
	}
	m := c.member
	c.member = nil
	if cause != nil {
		m.Fail(cause)
	}
	err := m.Close()
	c.cancel(cause)
	return err
}

// explainWait bounds how long a failed operation of a JoinFromEnv
// communicator waits for the rendezvous to say which rank failed: a
// peer's death reaches NCCL (a refused connection) and the rendezvous (a
// closed socket) at about the same moment.
const explainWait = time.Second

// explain adds the rendezvous's word on a failed rank to err, an error of
// c's, so that it names the rank: NCCL's own error says only that a peer
// went away.
func (c *Comm) explain(err error) error {
	m := c.member
	if err == nil || m == nil {
		return err
	}
	t := time.NewTimer(explainWait)
	defer t.Stop()
	select {
	case <-m.Failed():
	case <-t.C:
		return err
	}
	merr := m.Err()
	if merr == nil || strings.Contains(err.Error(), merr.Error()) {
		return err
	}
	return fmt.Errorf("%w (the rendezvous: %v)", err, merr)
}
