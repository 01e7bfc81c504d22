package backend

import "sync"

// Stream IDs are small and reused so that pools can index per-stream state
// by ID in a slice that stays as short as the number of live streams.
var ids struct {
	sync.Mutex
	next uint32
	free []uint32
}

// NewStreamID returns an ID no live stream has. Backends call it when they
// create a stream and ReleaseStreamID when they destroy it.
func NewStreamID() uint32 {
	ids.Lock()
	defer ids.Unlock()
	if n := len(ids.free); n > 0 {
		id := ids.free[n-1]
		ids.free = ids.free[:n-1]
		return id
	}
	ids.next++
	return ids.next
}

// ReleaseStreamID makes id available to a later stream.
func ReleaseStreamID(id uint32) {
	if id == 0 {
		return
	}
	ids.Lock()
	ids.free = append(ids.free, id)
	ids.Unlock()
}
