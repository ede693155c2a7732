package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
)

// keyEnv is an in-memory namespace and a directory of objects: just what
// the garbage kind reaches. Other Env methods are not called (nil embed).
type keyEnv struct {
	Env
	ks    keyspace.Keyspace
	kv    map[string][]byte
	order []string // creation order, for EtcdOldest
	rev   int64
	dir   string
	rnd   *rand.Rand
	// beforeWrite, when set, runs before each conditional write: a master
	// writing between the fault's read and its write.
	beforeWrite func()
}

func newKeyEnv(t *testing.T, seed uint64) *keyEnv {
	return &keyEnv{ks: keyspace.Must("chaos"), kv: map[string][]byte{}, dir: t.TempDir(), rnd: rand.New(rand.NewPCG(seed, seed))}
}

func (e *keyEnv) Rand() *rand.Rand { return e.rnd }

func (e *keyEnv) Keyspace() keyspace.Keyspace { return e.ks }

// at is the key of a namespace suffix ("durable_prefix", "batches/…").
func (e *keyEnv) at(suffix string) string { return e.ks.Root() + "/" + suffix }

func (e *keyEnv) EtcdGet(_ context.Context, key string) ([]byte, error) {
	return bytes.Clone(e.kv[key]), nil
}

func (e *keyEnv) EtcdPut(_ context.Context, key string, v []byte) (int64, error) {
	if _, ok := e.kv[key]; !ok {
		e.order = append(e.order, key)
	}
	e.kv[key] = bytes.Clone(v)
	e.rev++
	return e.rev, nil
}

func (e *keyEnv) EtcdSwap(ctx context.Context, key string, old, v []byte) (int64, bool, error) {
	if e.beforeWrite != nil {
		e.beforeWrite()
	}
	cur, ok := e.kv[key]
	if (old == nil && ok) || (old != nil && (!ok || !bytes.Equal(cur, old))) {
		return e.rev, false, nil
	}
	rev, err := e.EtcdPut(ctx, key, v)
	return rev, err == nil, err
}

func (e *keyEnv) EtcdDeleteIf(ctx context.Context, key string, old []byte) (int64, bool, error) {
	if e.beforeWrite != nil {
		e.beforeWrite()
	}
	if cur, ok := e.kv[key]; !ok || !bytes.Equal(cur, old) {
		return e.rev, false, nil
	}
	rev, err := e.EtcdDelete(ctx, key)
	return rev, err == nil, err
}

func (e *keyEnv) EtcdDelete(_ context.Context, key string) (int64, error) {
	delete(e.kv, key)
	e.rev++
	return e.rev, nil
}

func (e *keyEnv) EtcdRevision(context.Context) (int64, error) { return e.rev, nil }

func (e *keyEnv) EtcdDeleteAll(_ context.Context, keys, prefixes []string) (int64, int64, error) {
	var n int64
	for k := range e.kv {
		gone := slices.Contains(keys, k)
		for _, p := range prefixes {
			gone = gone || strings.HasPrefix(k, p)
		}
		if gone {
			delete(e.kv, k)
			n++
		}
	}
	e.rev++
	return e.rev, n, nil
}

func (e *keyEnv) EtcdOldest(_ context.Context, prefix string) (string, []byte, error) {
	for _, k := range e.order {
		if v, ok := e.kv[k]; ok && strings.HasPrefix(k, prefix) {
			return k, v, nil
		}
	}
	return "", nil, nil
}

func (e *keyEnv) StorePut(_ context.Context, key string, data []byte) error {
	f, err := e.StoreFile(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return err
	}
	return os.WriteFile(f, data, 0o644)
}

func (e *keyEnv) StoreFile(key string) (string, error) {
	return filepath.Join(e.dir, filepath.FromSlash(key)), nil
}

var _ KeyEnv = (*keyEnv)(nil)

func validPointer(t *testing.T, batch uint64, root string) []byte {
	id := snapshot.NewID(batch, 0x1234).String()
	p := publish.Pointer{PointerSchemaVersion: publish.PointerSchemaVersion, SnapshotID: id, LastIncludedSeq: batch * 3, LastIncludedBatchID: batch,
		ProducerViewVersion: 2, DescriptorKey: batchsnap.Artifacts(root, id).Descriptor(), DescriptorSize: 300, CreatedAtMS: 1700000000000}
	raw, err := p.Encode()
	require.NoError(t, err)
	return raw
}

// seedKeys puts one valid record in every key of the contract.
func seedKeys(t *testing.T, e *keyEnv) {
	ctx := context.Background()
	put := func(k string, v []byte) {
		_, err := e.EtcdPut(ctx, k, v)
		require.NoError(t, err)
	}
	for id := uint64(1); id <= 4; id++ {
		rec, err := batchlog.EncodeBatch(batchlog.Batch{ID: id, FirstSeq: id*3 - 2, LastSeq: id * 3, Entries: []batchlog.Entry{
			{Op: batchlog.OpRemove, Tenant: "tenant", Key: fmt.Sprintf("k%d-a", id)},
			{Op: batchlog.OpRemove, Tenant: "tenant", Key: fmt.Sprintf("k%d-b", id)},
			{Op: batchlog.OpPutRevoke, Tenant: "tenant", Key: fmt.Sprintf("k%d-c", id)},
		}})
		require.NoError(t, err)
		put(e.at(fmt.Sprintf("batches/%020d", id)), rec)
	}
	view, err := batchlog.EncodeProducerView(7)
	require.NoError(t, err)
	put(e.at("durable_prefix"), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 4, LastSeq: 12}))
	put(e.at("producer_view"), view)
	put(e.at("leader/694d9a1b2c3d4e5f"), []byte("http://127.0.0.1:4101"))
	put(e.at("leader/694d9a1b2c3d4e77"), []byte("http://127.0.0.1:4102"))
	put(e.at("snapshot/maintenance"), []byte("master-1/694d9a1b2c3d4e5f/0123456789abcdef01234567"))
	put(e.at("snapshot/latest"), validPointer(t, 3, "snapshots/chaos"))
	put(e.at("snapshot/fallback"), validPointer(t, 2, "snapshots/chaos"))
	put(e.at("snapshot/compaction_floor"), batchsnap.Floor{BatchID: 2}.Encode())
}

// decoderFor is the contract's decoder for a key, the one the
// implementation reads it with: every form of garbage must be refused by it.
func decoderFor(target string) func([]byte) error {
	switch {
	case target == "durable_prefix":
		return func(b []byte) error { _, err := batchlog.DecodeDurablePrefix(b); return err }
	case target == "producer_view":
		return func(b []byte) error { _, err := batchlog.DecodeProducerView(b); return err }
	case target == "snapshot/compaction_floor":
		return func(b []byte) error { _, err := batchsnap.DecodeFloor(b); return err }
	case target == "snapshot/latest" || target == "snapshot/fallback":
		return func(b []byte) error { _, err := publish.DecodePointer(b); return err }
	case strings.HasPrefix(target, "batches/"):
		return func(b []byte) error { _, err := batchlog.DecodeBatch(b); return err }
	}
	return nil
}

func TestGarbageTargetsAndFormsAreValidatedAtLoad(t *testing.T) {
	for _, target := range append(append([]string{}, GarbageKeys...), "batches/first", "batches/last", "batches/suffix", "batches/17",
		"latest/chunk", "latest/segments.bin", "fallback/manifest.json", "fallback/descriptor.json") {
		require.NoError(t, Spec{Kind: "garbage", Target: target}.Validate(), target)
		for _, f := range GarbageForms {
			require.NoError(t, Spec{Kind: "garbage", Target: target, Attrs: map[string]any{"form": f}}.Validate(), target)
		}
	}
	for _, target := range []string{"", "durable-prefix", "snapshot/legacy", "batches/0", "batches/next",
		"latest/payload", "both/chunk", "snapshot/latest/chunk"} {
		err := Spec{Kind: "garbage", Target: target}.Validate()
		require.ErrorContains(t, err, fmt.Sprintf("garbage: target %q: want", target))
		require.ErrorContains(t, err, "snapshot/compaction_floor")
		require.ErrorContains(t, err, "descriptor.json")
	}
	require.ErrorContains(t, Spec{Kind: "garbage", Target: "durable_prefix", Attrs: map[string]any{"form": "noise"}}.Validate(), "attrs.form noise")
	require.ErrorContains(t, Spec{Kind: "garbage", Target: "durable_prefix", Attrs: map[string]any{"latency": 5}}.Validate(), "attrs.latency")
}

// Every form on every key: the value changes to something the
// implementation's decoder refuses, the revision is recorded, and the heal
// puts the record back (or deletes a stray lease-held key).
func TestGarbageKeysAreRefusedByTheDecodersAndHeal(t *testing.T) {
	ctx := context.Background()
	targets := append(append([]string{}, GarbageKeys...), "batches/first", "batches/last", "batches/suffix", "batches/2")
	wantKey := map[string]string{"batches/first": "batches/00000000000000000001", "batches/last": "batches/00000000000000000004",
		"batches/suffix": "batches/00000000000000000004", "batches/2": "batches/00000000000000000002", "leader": "leader/694d9a1b2c3d4e5f"}
	for _, target := range targets {
		for i, form := range GarbageForms {
			t.Run(target+"/"+form, func(t *testing.T) {
				e := newKeyEnv(t, uint64(i+1))
				seedKeys(t, e)
				rel := target
				if k, ok := wantKey[target]; ok {
					rel = k
				}
				key := e.at(rel)
				before := bytes.Clone(e.kv[key])
				in, err := Inject(ctx, e, Spec{Kind: "garbage", Target: target, Attrs: map[string]any{"form": form}})
				require.NoError(t, err)
				after := e.kv[key]
				require.NotEqual(t, before, after)
				require.Len(t, in.Revisions, 1)
				require.Len(t, in.Targets, 1)
				require.Contains(t, in.Targets[0], rel+" "+form)
				if dec := decoderFor(target); dec != nil {
					require.Error(t, dec(after), "%s %s: %q is accepted", target, form, after)
				}
				if form == FormWrongFields {
					switch target {
					case "durable_prefix", "snapshot/compaction_floor", "snapshot/latest", "snapshot/fallback", "producer_view", "leader":
						require.True(t, json.Valid(after), "%q", after)
					case "batches/first", "batches/last", "batches/suffix", "batches/2":
						require.True(t, json.Valid(after), "%q", after)
						require.ErrorIs(t, decoderFor(target)(after), contract.ErrChecksum, "only the checksum tells: %q", after)
					}
				}
				switch target {
				case "snapshot/latest", "snapshot/fallback":
					require.NoError(t, in.Heal(ctx)) // none: a publication repairs
					require.Equal(t, after, e.kv[key])
					require.Empty(t, in.HealRevisions)
				case "snapshot/maintenance", "leader":
					require.NoError(t, in.Heal(ctx))
					_, present := e.kv[key]
					require.False(t, present, "the stray key is deleted")
					require.Len(t, in.HealRevisions, 1)
				default:
					require.NoError(t, in.Heal(ctx))
					require.Equal(t, before, e.kv[key])
					require.Len(t, in.HealRevisions, 1)
				}
			})
		}
	}
}

func TestGarbageHealRefusesWhenTheKeyMovedOn(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t, 3)
	seedKeys(t, e)
	in, err := Inject(ctx, e, Spec{Kind: "garbage", Target: "durable_prefix"})
	require.NoError(t, err)
	moved := batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 5, LastSeq: 15})
	e.kv[e.at("durable_prefix")] = moved
	require.ErrorContains(t, in.Heal(ctx), "no longer holds the garbage")
	require.Equal(t, moved, e.kv[e.at("durable_prefix")])
}

// A retention cycle moves the floor up between the fault's read of the
// record and its write over it: the fault garbles the floor as it is now,
// and its heal puts back that floor, never the lower one it read first (a
// floor lowered under deleted batches reads as a lost OpLog).
func TestGarbageNeverLowersAFloorMovedWhileItWasWritten(t *testing.T) {
	ctx := context.Background()
	for _, form := range []string{FormWrongFields, FormAbsent} {
		t.Run(form, func(t *testing.T) {
			e := newKeyEnv(t, 5)
			seedKeys(t, e)
			floor := e.at("snapshot/compaction_floor")
			moved := batchsnap.Floor{BatchID: 3}.Encode()
			e.beforeWrite = func() { e.kv[floor], e.beforeWrite = moved, nil }
			in, err := Inject(ctx, e, Spec{Kind: "garbage", Target: "snapshot/compaction_floor", Attrs: map[string]any{"form": form}})
			require.NoError(t, err)
			require.Contains(t, in.Targets[0], `:3}`, "the fault names the floor it replaced, batch 3")
			require.NoError(t, in.Heal(ctx))
			require.Equal(t, moved, e.kv[floor])
		})
	}
	t.Run("moving without end", func(t *testing.T) {
		e := newKeyEnv(t, 6)
		seedKeys(t, e)
		floor := e.at("snapshot/compaction_floor")
		n := uint64(2)
		var move func()
		move = func() { n++; e.kv[floor], e.beforeWrite = batchsnap.Floor{BatchID: n}.Encode(), move }
		e.beforeWrite = move
		_, err := Inject(ctx, e, Spec{Kind: "garbage", Target: "snapshot/compaction_floor", Attrs: map[string]any{"form": FormWrongFields}})
		require.ErrorIs(t, err, errMovedMeanwhile)
		require.Equal(t, batchsnap.Floor{BatchID: n}.Encode(), e.kv[floor], "nothing written over the moving floor")
	})
}

// A batch the retention cycle deleted while it was being corrupted is not
// brought back as garbage.
func TestCorruptBatchNeverResurrectsADeletedBatch(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t, 7)
	seedKeys(t, e)
	key := e.at("batches/00000000000000000001")
	e.beforeWrite = func() { delete(e.kv, key) }
	_, _, err := corruptBatch(ctx, e, "first", false)
	require.ErrorIs(t, err, ErrUnavailable)
	require.NotContains(t, e.kv, key)
}

// The etcd-key fault's heal puts the old value back only over what the
// fault wrote.
func TestEtcdKeyHealKeepsAValueWrittenSince(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t, 8)
	seedKeys(t, e)
	floor := e.at("snapshot/compaction_floor")
	in, err := Inject(ctx, e, Spec{Kind: "etcd-key", Target: "snapshot/compaction_floor", Attrs: map[string]any{"value": "x"}})
	require.NoError(t, err)
	moved := batchsnap.Floor{BatchID: 3}.Encode()
	e.kv[floor] = moved
	require.ErrorContains(t, in.Heal(ctx), "no longer holds what the fault wrote")
	require.Equal(t, moved, e.kv[floor])

	in, err = Inject(ctx, e, Spec{Kind: "etcd-key", Target: "snapshot/compaction_floor", Attrs: map[string]any{"value": "y"}})
	require.NoError(t, err)
	require.NoError(t, in.Heal(ctx))
	require.Equal(t, moved, e.kv[floor])
}

func TestGarbageUnavailableTargets(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t, 4)
	for _, target := range []string{"durable_prefix", "snapshot/compaction_floor", "batches/last", "batches/suffix", "leader", "latest/chunk"} {
		_, err := Inject(ctx, e, Spec{Kind: "garbage", Target: target})
		require.ErrorIs(t, err, ErrUnavailable, target)
	}
	seedKeys(t, e)
	// The latest pointer covers the durable prefix: no suffix batch to spoil.
	e.kv[e.at("snapshot/latest")] = validPointer(t, 4, "snapshots/chaos")
	_, err := Inject(ctx, e, Spec{Kind: "garbage", Target: "batches/suffix"})
	require.ErrorIs(t, err, ErrUnavailable)
}

func writeObjects(t *testing.T, e *keyEnv, slot string, batch uint64, chunkFill byte) string {
	p, err := batchsnap.DecodePointer(e.kv[e.at("snapshot/"+slot)])
	require.NoError(t, err)
	prefix := path.Dir(p.DescriptorKey)
	d := batchsnap.Descriptor{Identity: batchsnap.NewIdentity(p.ID(), p.Cursor(), p.ProducerViewVersion),
		ManifestKey: prefix + "/manifest.json", ManifestSize: 300, ManifestCRC32C: 7, CreatedAtMS: p.CreatedAtMS}
	desc, err := d.Encode()
	require.NoError(t, err)
	files := map[string][]byte{
		"descriptor.json": desc,
		"manifest.json": fmt.Appendf(nil, `{"last_included_batch_id":%d,"object_chunks":[],"snapshot_id":%q,"segments":{"key":%q}}`,
			batch, d.SnapshotID, prefix+"/segments.bin"),
		"segments.bin":  bytes.Repeat([]byte{byte(batch)}, 80),
		"objects/0.bin": bytes.Repeat([]byte{chunkFill}, 64),
		"objects/1.bin": bytes.Repeat([]byte{chunkFill + 1}, 64),
	}
	for name, b := range files {
		f, _ := e.StoreFile(prefix + "/" + name)
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, b, 0o644))
	}
	return prefix
}

func TestGarbageObjects(t *testing.T) {
	ctx := context.Background()
	for _, obj := range GarbageObjects {
		for i, form := range GarbageForms {
			t.Run(obj+"/"+form, func(t *testing.T) {
				e := newKeyEnv(t, uint64(10+i))
				seedKeys(t, e)
				latest := writeObjects(t, e, "latest", 3, 0xa0)
				fallback := writeObjects(t, e, "fallback", 2, 0xb0)
				in, err := Inject(ctx, e, Spec{Kind: "garbage", Target: "latest/" + obj, Attrs: map[string]any{"form": form}})
				require.NoError(t, err)
				require.Empty(t, in.Revisions)
				require.Contains(t, in.Targets[0], "latest "+filepath.Base(latest)+"/")
				var rel string
				if obj == "chunk" {
					_, rest, _ := strings.Cut(in.Targets[0], filepath.Base(latest)+"/")
					rel, _, _ = strings.Cut(rest, " ")
					require.Regexp(t, `^objects/[01]\.bin$`, rel)
				} else {
					rel = obj
				}
				f, _ := e.StoreFile(latest + "/" + rel)
				got, err := os.ReadFile(f)
				require.NoError(t, err)
				of, _ := e.StoreFile(fallback + "/" + rel)
				other, err := os.ReadFile(of)
				require.NoError(t, err)
				switch form {
				case FormRandom:
					require.NotEqual(t, other, got)
					if obj != "descriptor.json" && obj != "manifest.json" {
						require.Len(t, got, len(other), "same length: only the checksum can tell")
					}
				case FormTruncated:
					require.Less(t, len(got), len(other))
				case FormWrongFields:
					require.Equal(t, other, got, "the other pointer's snapshot's %s", rel)
				}
				if obj == "descriptor.json" {
					d, err := batchsnap.DecodeDescriptor(got)
					if err == nil {
						require.NotEqual(t, filepath.Base(latest), d.SnapshotID, "a descriptor that decodes names another snapshot")
					}
				}
			})
		}
	}
}

// Without a differing object in the other snapshot, wrong-fields renames a
// JSON field (the result is JSON the strict decoders refuse) or flips a byte.
func TestGarbageObjectWrongFieldsWithoutAnOther(t *testing.T) {
	ctx := context.Background()
	e := newKeyEnv(t, 21)
	seedKeys(t, e)
	delete(e.kv, e.at("snapshot/fallback"))
	latest := writeObjects(t, e, "latest", 3, 0xa0)
	f, _ := e.StoreFile(latest + "/descriptor.json")
	orig, _ := os.ReadFile(f)
	in, err := Inject(ctx, e, Spec{Kind: "garbage", Target: "latest/descriptor.json", Attrs: map[string]any{"form": FormWrongFields}})
	require.NoError(t, err)
	require.Contains(t, in.Targets[0], "a field renamed")
	got, _ := os.ReadFile(f)
	require.True(t, json.Valid(got))
	require.Equal(t, len(orig)+len("_garbage"), len(got))
	_, err = batchsnap.DecodeDescriptor(got)
	require.Error(t, err)

	in, err = Inject(ctx, e, Spec{Kind: "garbage", Target: "latest/segments.bin", Attrs: map[string]any{"form": FormWrongFields}})
	require.NoError(t, err)
	require.Contains(t, in.Targets[0], "flipped")
}

func TestRenameFieldTouchesOneTopLevelKeyOnly(t *testing.T) {
	src := []byte("{\n  \"a\": 1,\n  \"segments\": {\"key\": \"s\", \"size\": 2},\n  \"chunks\": [{\"key\": \"c\"}, {\"key\": \"d\"}],\n  \"z\": \"key\"\n}")
	seen := map[string]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		out, err := renameField(rand.New(rand.NewPCG(seed, 0)), src)
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out, &m), "%s", out)
		require.Len(t, m, 4)
		var renamed string
		for k := range m {
			if strings.HasSuffix(k, "_garbage") {
				renamed = strings.TrimSuffix(k, "_garbage")
			}
		}
		require.Contains(t, []string{"a", "segments", "chunks", "z"}, renamed, "%s", out)
		seen[renamed] = true
		require.Equal(t, strings.Count(string(src), `"key"`), strings.Count(string(out), `"key"`), "nested keys untouched")
	}
	require.Len(t, seen, 4, "every top-level field can be drawn")
	_, err := renameField(rand.New(rand.NewPCG(1, 1)), []byte(`[1,2]`))
	require.Error(t, err)
}

// lose-history deletes the prefix and every batch in one revision and
// leaves the rest: the residue a master must refuse to read as empty.
func TestLoseHistoryKeepsTheResidue(t *testing.T) {
	e := newKeyEnv(t, 1)
	seedKeys(t, e)
	in, err := Inject(context.Background(), e, Spec{Kind: "lose-history"})
	require.NoError(t, err)
	require.Equal(t, []int64{e.rev}, in.Revisions)
	for k := range e.kv {
		require.False(t, strings.HasPrefix(k, e.at("batches/")) || k == e.at("durable_prefix"), "%s survived", k)
	}
	for _, k := range []string{"producer_view", "snapshot/latest", "snapshot/fallback", "snapshot/compaction_floor"} {
		require.Contains(t, e.kv, e.at(k))
	}
	_, err = Inject(context.Background(), e, Spec{Kind: "lose-history"})
	require.ErrorIs(t, err, ErrUnavailable, "nothing left to lose")
}

// A batch altered under its old checksum parses as a record of the right
// shape and is refused by the checksum alone.
func TestKeyChangedUnderOldChecksumFailsOnlyTheChecksum(t *testing.T) {
	rec, err := batchlog.EncodeBatch(batchlog.Batch{ID: 4, FirstSeq: 10, LastSeq: 11, Entries: []batchlog.Entry{
		{Op: batchlog.OpRemove, Tenant: "t", Key: "alpha"}, {Op: batchlog.OpPutRevoke, Tenant: "t", Key: "beta"}}})
	require.NoError(t, err)
	bad, err := keyChangedUnderOldChecksum(rec)
	require.NoError(t, err)
	require.NotEqual(t, rec, bad)
	require.Equal(t, len(rec), len(bad))
	_, err = batchlog.DecodeBatch(bad)
	require.ErrorIs(t, err, contract.ErrChecksum)
}
