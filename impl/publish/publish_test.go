package publish

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/snapshot"
)

func ptr(batch uint64) Pointer {
	id := snapshot.NewID(batch, 0x10)
	return Pointer{PointerSchemaVersion: PointerSchemaVersion, SnapshotID: id.String(), LastIncludedBatchID: batch, LastIncludedSeq: batch * 3,
		ProducerViewVersion: 2, DescriptorKey: batchsnap.Artifacts("p/c", id.String()).Descriptor(), DescriptorSize: 300,
		DescriptorCRC32C: uint32(batch), CreatedAtMS: 1}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func publishOnce(t *testing.T, srv *etcdtest.Server, ks keyspace.Keyspace, l *Lease, p Pointer) (Result, error) {
	t.Helper()
	o, err := Observe(ctxT(t), srv.Client, ks)
	require.NoError(t, err)
	plan, err := PlanFor(o, p)
	if err != nil {
		return Result{}, err
	}
	return Publish(ctxT(t), srv.Client, ks, l.Token, o, plan)
}

func slots(t *testing.T, srv *etcdtest.Server, ks keyspace.Keyspace) Observed {
	o, err := Observe(ctxT(t), srv.Client, ks)
	require.NoError(t, err)
	return o
}

func TestFirstPublishRotationAndNonRegression(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("pub")
	l, err := AcquireLease(ctxT(t), srv.Client, ks, "node-a", 10)
	require.NoError(t, err)
	defer l.Release(context.Background())

	r, err := publishOnce(t, srv, ks, l, ptr(10))
	require.NoError(t, err)
	require.Equal(t, "first", r.Plan.Kind)
	o := slots(t, srv, ks)
	require.Equal(t, uint64(10), o.Latest.Pointer.LastIncludedBatchID)
	require.False(t, o.Fallback.Present(), "first snapshot: fallback stays absent")

	r, err = publishOnce(t, srv, ks, l, ptr(20))
	require.NoError(t, err)
	require.Equal(t, "rotate", r.Plan.Kind)
	o = slots(t, srv, ks)
	require.Equal(t, uint64(20), o.Latest.Pointer.LastIncludedBatchID)
	require.Equal(t, uint64(10), o.Fallback.Pointer.LastIncludedBatchID, "fallback = old latest")

	for _, b := range []uint64{20, 15, 5} {
		_, err = publishOnce(t, srv, ks, l, ptr(b))
		require.ErrorIs(t, err, ErrNotNewer, "batch %d", b)
	}
	o2 := slots(t, srv, ks)
	require.Equal(t, o.Latest.Raw, o2.Latest.Raw, "pointers never regress")
}

// TestMalformedLatestIsRepairedKeepingFallback: a latest value that does
// not decode — garbage, or an empty value, which etcd returns as no value
// bytes at all — is present, refused as a pointer, and repaired by the next
// newer publication, the valid fallback kept.
func TestMalformedLatestIsRepairedKeepingFallback(t *testing.T) {
	for name, garbage := range map[string]string{"truncated": `{"pointer_schema_version":1,"snapshot_id":"garbage"`, "empty": ""} {
		t.Run(name, func(t *testing.T) {
			srv := etcdtest.Start(t)
			ks := keyspace.Must("repair")
			l, err := AcquireLease(ctxT(t), srv.Client, ks, "node-a", 10)
			require.NoError(t, err)
			defer l.Release(context.Background())
			_, err = publishOnce(t, srv, ks, l, ptr(10))
			require.NoError(t, err)
			_, err = publishOnce(t, srv, ks, l, ptr(20))
			require.NoError(t, err)
			_, err = srv.Client.Put(ctxT(t), ks.SnapshotLatest(), garbage)
			require.NoError(t, err)

			o := slots(t, srv, ks)
			require.True(t, o.Latest.Present(), "the key exists, whatever its value")
			require.False(t, o.Latest.Valid())
			require.ErrorIs(t, o.Latest.Err, ErrMalformedPointer)
			require.True(t, o.Fallback.Valid(), "fallback is independently readable")
			_, err = publishOnce(t, srv, ks, l, ptr(5))
			require.ErrorIs(t, err, ErrNotNewer, "a repair must still be newer than the valid fallback")
			r, err := publishOnce(t, srv, ks, l, ptr(30))
			require.NoError(t, err)
			require.Equal(t, "repair", r.Plan.Kind)
			o = slots(t, srv, ks)
			require.Equal(t, uint64(30), o.Latest.Pointer.LastIncludedBatchID)
			require.Equal(t, uint64(10), o.Fallback.Pointer.LastIncludedBatchID, "the valid fallback is preserved, not replaced by garbage")
		})
	}
}

func TestMalformedFallbackIsNeverCopied(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("badfb")
	l, err := AcquireLease(ctxT(t), srv.Client, ks, "node-a", 10)
	require.NoError(t, err)
	defer l.Release(context.Background())
	_, err = srv.Client.Put(ctxT(t), ks.SnapshotLatest(), "not json")
	require.NoError(t, err)
	_, err = srv.Client.Put(ctxT(t), ks.SnapshotFallback(), "also not json")
	require.NoError(t, err)
	r, err := publishOnce(t, srv, ks, l, ptr(7))
	require.NoError(t, err)
	require.Equal(t, "repair", r.Plan.Kind)
	o := slots(t, srv, ks)
	require.True(t, o.Latest.Valid())
	require.Equal(t, "also not json", string(o.Fallback.Raw), "malformed fallback data is left alone, never copied into a valid slot")
	// The next publication rotates the valid latest into fallback.
	_, err = publishOnce(t, srv, ks, l, ptr(8))
	require.NoError(t, err)
	o = slots(t, srv, ks)
	require.Equal(t, uint64(7), o.Fallback.Pointer.LastIncludedBatchID)
}

func TestTwoWritersRaceExactlyOneWins(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("race")
	la, err := AcquireLease(ctxT(t), srv.Client, ks, "node-a", 10)
	require.NoError(t, err)
	_, err = AcquireLease(ctxT(t), srv.Client, ks, "node-b", 10)
	require.ErrorIs(t, err, ErrLeaseHeld, "only one node owns the maintenance lease")

	// Both observe the same pointers; a and b both try to publish with a's
	// token (b stole nothing: it stands for a stale or duplicate worker).
	o := slots(t, srv, ks)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range []uint64{11, 12} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			plan, err := PlanFor(o, ptr(b))
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = Publish(ctxT(t), srv.Client, ks, la.Token, o, plan)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			require.ErrorIs(t, err, ErrCASConflict, "the loser fails cleanly and does not overwrite")
		}
	}
	require.Equal(t, 1, wins)
	require.NoError(t, la.Release(ctxT(t)))
}

func TestLeaseLossFencesTheCAS(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("lost")
	l, err := AcquireLease(ctxT(t), srv.Client, ks, "node-a", 10)
	require.NoError(t, err)
	o := slots(t, srv, ks)
	plan, err := PlanFor(o, ptr(3))
	require.NoError(t, err)
	// The lease expires (revoked here) between upload and CAS.
	_, err = srv.Client.Revoke(ctxT(t), l.ID)
	require.NoError(t, err)
	select {
	case <-l.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("lease loss not noticed")
	}
	_, err = Publish(ctxT(t), srv.Client, ks, l.Token, o, plan)
	require.ErrorIs(t, err, ErrLeaseLost)
	require.False(t, slots(t, srv, ks).Latest.Present(), "nothing was published")

	// Someone else takes the lease; the old token still cannot publish.
	l2, err := AcquireLease(ctxT(t), srv.Client, ks, "node-b", 10)
	require.NoError(t, err)
	defer l2.Release(context.Background())
	require.NotEqual(t, l.Token, l2.Token, "tokens are never reused")
	_, err = Publish(ctxT(t), srv.Client, ks, l.Token, o, plan)
	require.ErrorIs(t, err, ErrLeaseLost)
	_, err = Publish(ctxT(t), srv.Client, ks, l2.Token, o, plan)
	require.NoError(t, err)
}

func TestPointerCodec(t *testing.T) {
	p := ptr(42)
	enc, err := p.Encode()
	require.NoError(t, err)
	back, err := DecodePointer(enc)
	require.NoError(t, err)
	require.Equal(t, p, back)
	for name, mutate := range map[string]func(*Pointer){
		"schema":          func(p *Pointer) { p.PointerSchemaVersion = 1 },
		"id mismatch":     func(p *Pointer) { p.LastIncludedBatchID = 41; p.LastIncludedSeq = 100 },
		"cursor":          func(p *Pointer) { p.LastIncludedSeq = 0 },
		"other snapshot":  func(p *Pointer) { p.DescriptorKey = batchsnap.Artifacts("p/c", "41-16").Descriptor() },
		"no descriptor":   func(p *Pointer) { p.DescriptorKey = "" },
		"descriptor size": func(p *Pointer) { p.DescriptorSize = 0 },
	} {
		q := ptr(42)
		mutate(&q)
		_, err := q.Encode()
		require.ErrorIs(t, err, ErrMalformedPointer, name)
	}
	for _, raw := range []string{"", "{}", string(enc) + " ", `{"pointer_schema_version":1,"x":1}`} {
		_, err := DecodePointer([]byte(raw))
		require.True(t, errors.Is(err, ErrMalformedPointer), fmt.Sprintf("%q: %v", raw, err))
	}
}

func FuzzDecodePointer(f *testing.F) {
	enc, _ := ptr(9).Encode()
	f.Add(enc)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePointer(data)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid pointer: %v", err)
		}
	})
}
