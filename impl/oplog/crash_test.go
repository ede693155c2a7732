package oplog

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/state"
)

// A loop that dies in the window after a batch is durable (a panic from the
// primaryAfterAppend failpoint or a bug; runtime.Goexit here, which unwinds
// the same way without killing the test) must answer none of its waiters:
// "never staged" would be a lie about a durable write. Found by chaos swarm
// (seed 2026, run 3): the loop's deferred close of its stopped channel ran
// while the panic unwound, and the HTTP handler answered not_serving (a
// definite failure) for a remove that was in the OpLog. Waiters that give
// up get ErrUnknownOutcome.
func TestCrashAfterAppendAnswersNoWaiter(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("crash")
	w := newWriter(t, srv.Client, ks)
	s, mu := state.New(), &sync.Mutex{}
	durable := make(chan state.Batch, 1)
	g := NewGroupCommitter(w, func() Tx {
		mu.Lock()
		defer mu.Unlock()
		return stateTx{mu: mu, s: s, tx: s.Begin()}
	}, Limits{MaxEntries: 64}, Hooks{AfterAppend: func(b state.Batch) {
		durable <- b
		runtime.Goexit()
	}})
	ctx, cancel := context.WithCancel(ctxT(t))
	answers := make(chan error, 1)
	go func() {
		_, err := g.Submit(ctx, removeEntry(1))
		answers <- err
	}()
	b := <-durable
	head, err := (&Reader{KV: srv.Client, Keyspace: ks}).ReadHead(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, b.ID, head.Prefix.BatchID, "the batch is durable")
	select {
	case err := <-answers:
		t.Fatalf("a crashed writer answered a waiter of a durable batch: %v", err)
	case <-g.Done():
		t.Fatal("a crashed loop reported itself stopped")
	case <-time.After(500 * time.Millisecond):
	}
	cancel()
	require.ErrorIs(t, <-answers, ErrUnknownOutcome, "a waiter that gives up does not know")
}
