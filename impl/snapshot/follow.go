package snapshot

import (
	"io"
	"os"
	"sync"
)

// follower reads a work file from an offset up to what the encoder has
// written so far, waiting for more until the encoder ends: the decode-check
// reads the file while it is written.
type follower struct {
	f   *os.File
	off int64

	mu      sync.Mutex
	cond    *sync.Cond
	written int64 // the file holds final bytes up to here
	ended   bool
	err     error // the encoder's, when it failed
}

func newFollower(f *os.File, off int64) *follower {
	r := &follower{f: f, off: off, written: off}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// wrote records that the file's final bytes now reach end.
func (r *follower) wrote(end int64) {
	r.mu.Lock()
	r.written = max(r.written, end)
	r.mu.Unlock()
	r.cond.Broadcast()
}

// end says the encoder is done (err == nil) or failed.
func (r *follower) end(err error) {
	r.mu.Lock()
	r.ended, r.err = true, err
	r.mu.Unlock()
	r.cond.Broadcast()
}

func (r *follower) Read(p []byte) (int, error) {
	r.mu.Lock()
	for r.off >= r.written && !r.ended {
		r.cond.Wait()
	}
	avail, err := r.written-r.off, r.err
	r.mu.Unlock()
	if avail <= 0 {
		if err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	n, rerr := r.f.ReadAt(p[:min(int64(len(p)), avail)], r.off)
	r.off += int64(n)
	if rerr == io.EOF && n > 0 {
		rerr = nil
	}
	return n, rerr
}
