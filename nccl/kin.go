package nccl

import (
	"errors"
	"sync"
)

// kin are the communicators of one communicator that this process holds:
// the ranks NewComms made together, or the ranks that NewComm joined with
// one id in this process (a goroutine each). NCCL does not tell a rank
// that another aborted: its collectives wait for the peer until their own
// communicator is aborted. The host implementation fails every rank when
// one aborts, and so does this, for the ranks it can reach: an abort of
// one kin aborts the others with the same cause. Ranks in other processes
// hear of it through the rendezvous (JoinFromEnv).
type kin struct {
	mu      sync.Mutex
	members []*gpuComm
}

// kinByID finds the kin of NewComm's ranks by their id.
var kinByID sync.Map // UniqueID -> *kin

// kinOf returns the kin of id, made on first use.
func kinOf(id UniqueID) *kin {
	v, _ := kinByID.LoadOrStore(id, &kin{})
	return v.(*kin)
}

func (k *kin) add(g *gpuComm) {
	k.mu.Lock()
	k.members = append(k.members, g)
	k.mu.Unlock()
}

// leave removes g once it is destroyed, so that a later abort of another
// rank does not touch a freed communicator, and an id used again later
// starts a kin of its own.
func (k *kin) leave(g *gpuComm) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, m := range k.members {
		if m == g {
			k.members = append(k.members[:i], k.members[i+1:]...)
			break
		}
	}
	if len(k.members) == 0 && g.id != nil {
		kinByID.CompareAndDelete(*g.id, k)
	}
}

// peerAbort is the cause given to the kin of a rank that aborted: it is
// not passed on again.
type peerAbort struct{ cause error }

func (p peerAbort) Error() string { return p.cause.Error() }
func (p peerAbort) Unwrap() error { return p.cause }

// fromPeer says whether cause came from another rank's abort.
func fromPeer(cause error) bool {
	var pa peerAbort
	return errors.As(cause, &pa)
}

// abortOthers aborts every member but g with g's cause, without waiting
// for it: g's abort holds g's lock, and two ranks aborting at once must
// not wait for each other's.
func (k *kin) abortOthers(g *gpuComm, cause error) {
	if fromPeer(cause) {
		return // heard from a peer: the peer told the others
	}
	k.mu.Lock()
	others := make([]*gpuComm, 0, len(k.members))
	for _, m := range k.members {
		if m != g {
			others = append(others, m)
		}
	}
	k.mu.Unlock()
	if len(others) == 0 {
		return
	}
	// Ending a member's life, not calling its abort: a member may hold
	// its lock in a wait for NCCL (a collective's first call waits for
	// its peers to connect), which watches its life and then aborts it;
	// an idle member is aborted by its life's AfterFunc.
	for _, m := range others {
		m.endLife(peerAbort{cause})
	}
}
